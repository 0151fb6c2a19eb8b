from pathlib import Path

import pytest

from eval_skills.errors import ScorerError, UnknownScorerError
from eval_skills.formats.benchmark import Task
from eval_skills.scoring.scorers import SCORERS, ScoringContext, SearchedTexts, answer_of, get_scorer, searched_texts


def task(**expected) -> Task:
    return Task.model_validate({"id": "t1", "expectedOutput": expected})


def run(kind, output, t, **options):
    return get_scorer(kind)(output, t, options, ScoringContext())


def test_answer_is_looked_up_in_result_then_output_then_answer():
    assert answer_of({"result": 1, "output": 2, "answer": 3}) == 1
    assert answer_of({"output": 2, "answer": 3}) == 2
    assert answer_of({"answer": 3}) == 3
    assert answer_of({"other": 4}) == {"other": 4}
    assert answer_of("plain") == "plain"


def test_exact_trims_and_compares_as_strings():
    t = task(value="25.0")
    assert run("exact", {"result": " 25.0\n"}, t).passed
    assert not run("exact", {"result": "25"}, t).passed
    assert run("exact", {"result": 14}, task(value="14")).passed
    assert run("exact_match", {"result": "x"}, task(value="x")).value == 1.0


def test_exact_case_sensitivity_option():
    t = task(value="Paris")
    assert not run("exact", {"result": "paris"}, t).passed
    assert run("exact", {"result": "paris"}, t, caseSensitive=False).passed


def test_exact_failure_says_what_was_expected():
    score = run("exact", {"result": "13"}, task(value="14"))
    assert score.value == 0 and "'14'" in score.reason and "'13'" in score.reason


def test_contains_gives_partial_credit_and_names_missing_keywords():
    t = task(keywords=["JavaScript", "Microsoft", "Google"])
    score = run("contains", {"result": "TypeScript is JavaScript by microsoft"}, t)
    assert score.value == pytest.approx(2 / 3)
    assert not score.passed
    assert "Google" in score.reason and "JavaScript" not in score.reason


def test_contains_is_case_insensitive_by_default_and_sensitive_on_request():
    t = task(keywords=["Paris"])
    assert run("contains", "paris is the capital", t).passed
    assert not run("contains", "paris is the capital", t, caseSensitive=True).passed


def test_contains_pass_threshold_option():
    t = task(keywords=["a1", "b2"])
    assert run("contains", "a1 only", t, passThreshold=0.5).passed


def test_contains_searches_structured_output_as_json():
    assert run("contains", {"items": [{"city": "Tokyo"}]}, task(keywords=["tokyo"])).passed


def test_searched_texts_are_the_answer_then_the_whole_output_once():
    assert searched_texts({"result": "Tokyo", "n": 1}) == ["Tokyo", '{"result":"Tokyo","n":1}']
    assert searched_texts({"city": "Tokyo"}) == ['{"city":"Tokyo"}']  # no answer key: the answer is the whole
    assert searched_texts("plain") == ["plain"]
    assert searched_texts({"result": 2.0}) == ["2", '{"result":2}']  # numbers as JavaScript writes them
    texts = SearchedTexts({"result": "Tokyo", "Extra": "KYOTO"}, str.casefold)
    assert next(iter(texts)) == "tokyo"
    assert len(texts) == 2 and texts[1] == '{"result":"tokyo","extra":"kyoto"}' and list(texts) == [*texts[:2]]


def test_contains_and_regex_find_in_the_whole_output_what_the_answer_lacks():
    output = {"result": "Paris", "country": "France"}
    score = run("contains", output, task(keywords=["paris", "FRANCE", "result", "Lyon"]))
    assert score.value == pytest.approx(3 / 4) and score.reason == "missing: 'Lyon'"
    assert not run("contains", output, task(keywords=["france"]), caseSensitive=True).passed
    assert run("contains", output, task(keywords=["France", "Paris"]), caseSensitive=True).passed
    assert run("regex", output, task(patterns=["^Paris$", '"country":"Fr'])).passed
    assert run("regex", output, task(pattern="^Paris$")).reason == "matched 'Paris' at offset 0"
    assert not run("regex", output, task(pattern="Lyon")).passed


def test_regex_with_flags():
    t = task(pattern=r"^hello\s+world$")
    assert not run("regex", {"result": "HELLO world"}, t).passed
    assert run("regex", {"result": "HELLO world"}, t, flags="i").passed
    assert run("regex", {"result": "x\nhello world"}, t, flags=["IGNORECASE", "MULTILINE"]).passed


def test_regex_invalid_pattern_is_a_scorer_error():
    with pytest.raises(ScorerError):
        run("regex", "x", task(pattern="("))


def test_json_schema_validates_output_and_points_at_the_field():
    schema = {"type": "object", "required": ["results"],
              "properties": {"results": {"type": "array", "items": {"type": "string"}}}}
    t = task(schema=schema)
    assert run("json_schema", {"results": ["a"]}, t).passed
    bad = run("json_schema", {"results": [1]}, t)
    assert not bad.passed and "$.results[0]" in bad.reason
    assert run("schema", '{"results": []}', t).passed
    assert not run("json_schema", "not json", t).passed


def test_custom_scorer_forms(tmp_path: Path):
    (tmp_path / "s.py").write_text(
        "def score(output, expected, task):\n"
        "    v = output['result']\n"
        "    if v == 'bool': return True\n"
        "    if v == 'num': return 0.5\n"
        "    if v == 'dict': return {'score': 0.9, 'passed': True, 'reason': 'close enough'}\n"
        "    raise ValueError('boom')\n")
    t = task(customScorerPath="s.py")
    ctx = ScoringContext(base_dir=tmp_path)
    s = get_scorer("custom")
    assert s({"result": "bool"}, t, {}, ctx).passed
    half = s({"result": "num"}, t, {}, ctx)
    assert half.value == 0.5 and not half.passed
    d = s({"result": "dict"}, t, {}, ctx)
    assert d.passed and d.reason == "close enough"
    with pytest.raises(ScorerError, match="ValueError: boom"):
        s({"result": "other"}, t, {}, ctx)


def test_unknown_scorer_names_the_known_ones():
    with pytest.raises(UnknownScorerError) as info:
        get_scorer("fuzzy")
    assert "exact" in info.value.line() and "fuzzy" in info.value.line()


def test_registry_has_the_seed_types_and_aliases():
    for name in ("exact", "exact_match", "contains", "regex", "json_schema", "schema", "custom"):
        assert name in SCORERS


def test_a_stuck_scorer_never_holds_up_the_next_one():
    import asyncio
    import threading
    import time

    from eval_skills.scoring.offloop import ScorerThreads

    release = threading.Event()
    threads = ScorerThreads()

    async def main():
        stuck = asyncio.ensure_future(threads.run(lambda: release.wait(10), timeout=5))
        started = time.monotonic()
        quick = await threads.run(lambda: "quick", timeout=5)  # submitted at once, before the first is taken
        took = time.monotonic() - started
        release.set()
        await stuck
        return quick, took

    quick, took = asyncio.run(main())
    assert quick == "quick" and took < 1


def test_contains_scores_inline_only_outputs_whose_whole_json_text_is_small():
    from eval_skills.scoring.registry import INLINE_MAX_CHARS, small_output

    contains = get_scorer("contains")
    assert contains.inline is small_output
    assert small_output({"result": "x" * 100, "n": [1, 2, 3]})
    assert small_output("x" * (INLINE_MAX_CHARS - 2)) and not small_output("x" * (INLINE_MAX_CHARS - 1))
    # a short answer beside a large rest of the output: contains searches the whole JSON text, so not inline
    assert not small_output({"result": "ok", "log": "y" * INLINE_MAX_CHARS})
    assert not small_output({"result": "ok", "rows": list(range(INLINE_MAX_CHARS))})  # stops at the length
    assert not small_output({f"k{i}": None for i in range(INLINE_MAX_CHARS // 8)})
