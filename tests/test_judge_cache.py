"""The verdict cache in the SQLite store: the same request twice asks the judge once, across store sessions;
errors are never cached; a damaged entry is asked again."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import sys
from pathlib import Path

from fakes import fake_judge
from fakes.openai_server import FakeOpenAI, completion

from eval_skills.judges import GradeRequest, ScoreRequest, create_judge
from eval_skills.store import Store, VerdictStore

GRADE = GradeRequest(prompt="Summarise", response='The total is "42 EUR".', assertions=['It says "42 EUR"'])


def ask(judge, request):
    return asyncio.run(judge.judge(request))


def calls(log: Path) -> int:
    return len(log.read_text().splitlines()) if log.exists() else 0


def test_grading_the_same_output_twice_asks_once(tmp_path: Path) -> None:
    log = tmp_path / "judge.jsonl"
    with Store.open(tmp_path / "s.db") as store:
        judge = fake_judge(log=log, cache=VerdictStore(store))
        first, second = ask(judge, GRADE), ask(judge, GRADE)
        other = ask(judge, GRADE.model_copy(update={"response": "no total"}))
        assert len(VerdictStore(store)) == 2
    assert (first.cached, second.cached, other.cached) == (False, True, False)
    assert first.verdict == second.verdict and second.expectations(GRADE.assertions)[0].passed is True
    assert not other.verdict.expectations[0].passed
    assert calls(log) == 2
    with Store.open(tmp_path / "s.db") as store:  # a later session finds it too
        again = ask(fake_judge(log=log, cache=VerdictStore(store)), GRADE)
    assert again.cached and calls(log) == 2


def test_errors_are_not_cached_and_damaged_entries_are_replaced(tmp_path: Path) -> None:
    log = tmp_path / "judge.jsonl"
    with Store.open(tmp_path / "s.db") as store:
        cache = VerdictStore(store)
        failed = ask(fake_judge(mode="malformed", log=log, cache=cache), GRADE)
        assert not failed.ok and len(cache) == 0
        judge = fake_judge(log=log, cache=cache)
        key = judge.cache_key(GRADE)
        cache.put(key, {"expectations": "not a list"})  # a stale shape
        fixed = ask(judge, GRADE)
        assert fixed.ok and not fixed.cached and cache.get(key) == fixed.verdict.model_dump(mode="json")
    db = sqlite3.connect(tmp_path / "s.db")
    db.execute("UPDATE judge_cache SET verdict_json = 'garbage'")
    db.commit()
    db.close()
    with Store.open(tmp_path / "s.db") as store:
        assert VerdictStore(store).get(key) is None
        assert ask(fake_judge(log=log, cache=VerdictStore(store)), GRADE).ok
    assert calls(log) == 2 + 1 + 1


def test_a_model_judge_hit_sends_nothing(tmp_path: Path) -> None:
    with FakeOpenAI() as api, Store.open(tmp_path / "s.db") as store:
        api.script(completion(json.dumps({"score": 0.9, "reason": "good"})))
        request = ScoreRequest(rubric="r", output="o")
        judge = create_judge("openai", model="m", base_url=api.url, cache=VerdictStore(store))
        first, second = ask(judge, request), ask(judge, request)
        other_model = create_judge("openai", model="m2", base_url=api.url, cache=VerdictStore(store))
        api.script(completion(json.dumps({"score": 0.1, "reason": "bad"})))
        third = ask(other_model, request)
    assert (first.verdict.score, second.verdict.score, third.verdict.score) == (0.9, 0.9, 0.1)
    assert second.cached and second.prompt_version == "score-2" and len(api.chat_requests()) == 2


def test_paired_runs_use_the_cache_unless_refused(tmp_path: Path) -> None:
    """`eval-skills paired` twice on the same deterministic agent: the second iteration's grades come from the
    store; with --no-judge-cache the judge is asked again."""
    from paired_data import agent_args, judge_args, paired
    from test_paired_cli import small_skill

    skill, _, script = small_skill(tmp_path, 2, judged=True)
    judge_log = tmp_path / "judge-log.jsonl"
    common = ["--skill-path", skill, *agent_args(script), *judge_args(), "--no-compare", "--store", tmp_path / "s.db"]

    def grades() -> int:
        return sum(1 for line in judge_log.read_text().splitlines() if json.loads(line)["kind"] == "grade")

    first = paired(*common, cwd=tmp_path, script_file=script, judge_log=judge_log)
    assert first.returncode == 0, first.stderr
    asked = grades()
    with sqlite3.connect(tmp_path / "s.db") as db:
        cached = db.execute("SELECT COUNT(*) FROM judge_cache").fetchone()[0]
    assert asked >= 1 and 1 <= cached <= asked
    second = paired(*common, cwd=tmp_path, script_file=script, judge_log=judge_log)
    assert second.returncode == 0, second.stderr
    assert grades() == asked  # nobody asked
    third = paired(*common, "--no-judge-cache", cwd=tmp_path, script_file=script, judge_log=judge_log)
    assert third.returncode == 0, third.stderr
    assert grades() - asked >= asked  # every run graded anew (at least the distinct ones of the first time)


def test_a_verdict_is_reused_only_when_everything_it_depends_on_is_the_same(tmp_path: Path,
                                                                            monkeypatch) -> None:
    """The rubric, the output, the input, the reference, the model, the judge's script: change any one and the
    judge is asked again; the same request to the same judge is answered from the store."""
    monkeypatch.chdir(tmp_path)
    script = tmp_path / "judge.py"
    script.write_text('import json, sys\njson.load(sys.stdin)\nprint(json.dumps({"score": 0.2, "reason": "v1"}))\n')
    base = ScoreRequest(rubric='says "42"', input={"q": 1}, output="42", expected="42")
    with Store.open(tmp_path / "s.db") as store:
        def ask_with(request: ScoreRequest, model: str | None = None):
            judge = create_judge("command", command=f"{sys.executable} judge.py", model=model,
                                 cache=VerdictStore(store))
            outcome = ask(judge, request)
            return outcome.cached, outcome.verdict.score

        assert ask_with(base) == (False, 0.2)
        assert ask_with(base) == (True, 0.2)
        for change in ({"rubric": 'says "43"'}, {"output": "43"}, {"input": {"q": 2}}, {"expected": "43"}):
            assert ask_with(base.model_copy(update=change)) == (False, 0.2), change
        assert ask_with(base, model="other") == (False, 0.2)
        script.write_text(script.read_text().replace("0.2", "0.7"))  # the user fixes their judge
        assert ask_with(base) == (False, 0.7)
        assert ask_with(base) == (True, 0.7)


def test_model_judge_settings_are_part_of_the_key(monkeypatch) -> None:
    request = ScoreRequest(rubric="r", output="o")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    keys = {create_judge(name, model=model, base_url=url, temperature=temperature).cache_key(request)
            for name in ("openai", "anthropic") for model in ("m1", "m2")
            for url in (None, "http://127.0.0.1:9/v1") for temperature in (None, 0, 0.7)}
    assert len(keys) == 2 * 2 * 2 * 3
    judge = create_judge("openai", model="m1")
    assert judge.cache_key(request) == create_judge("openai", model="m1").cache_key(request.model_copy())
    assert judge.cache_key(request) != judge.cache_key(request.model_copy(update={"task": "t"}))


def test_the_endpoint_the_sdk_reads_from_the_environment_is_part_of_the_key(monkeypatch) -> None:
    request = ScoreRequest(rubric="r", output="o")
    for provider in ("openai", "anthropic"):
        variable = f"{provider.upper()}_BASE_URL"
        monkeypatch.delenv(variable, raising=False)
        own = create_judge(provider, model="m").cache_key(request)
        monkeypatch.setenv(variable, "http://127.0.0.1:8080/v1")
        local = create_judge(provider, model="m").cache_key(request)
        assert local != own
        assert local == create_judge(provider, model="m", base_url="http://127.0.0.1:8080/v1").cache_key(request)
