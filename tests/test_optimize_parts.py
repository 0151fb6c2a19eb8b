"""The pure parts of `routing --optimize`: the F1 intervals (against values worked out by hand), the split, the
checks of an improver's reply, and the rewrite of a SKILL.md description."""

from __future__ import annotations

import os
import stat

import pytest

from eval_skills.errors import InputError
from eval_skills.formats.agentskills import RoutingQuery
from eval_skills.routing.improver import check_description, normalize, quotes_query
from eval_skills.routing.rewrite_description import replace_description, write_description
from eval_skills.routing.split import split_queries
from eval_skills.stats.f1_bootstrap import f1_difference_interval, f1_interval

T, F = True, False


# ---- F1 intervals: stratified bootstrap, exact enumeration -------------------------------------------------------

def test_f1_difference_interval_by_hand() -> None:
    # positives q1 (first T, second F) and q2 (both T), one negative (both F). Resampling the 2 positives:
    # (q1,q1) p 1/4: F1 1 - 0 = 1; (q1,q2) p 1/2: 1 - 2/3 = 0.3333; (q2,q2) p 1/4: 0. The negative adds nothing.
    args = ([T, T, F], [T, T, F], [F, T, F])
    assert f1_difference_interval(*args, level=0.95) == (0.0, 1.0)
    assert f1_difference_interval(*args, level=0.5) == (0.0, 0.3333)  # cumulative 0.25 at 0, 0.75 at 1/3


def test_f1_difference_interval_three_positives_by_hand() -> None:
    # 3 positives: the first predicts all, the second only one (k draws of it among 3, k ~ Binomial(3, 1/3)).
    # second's F1 = 2k / (k + 3): k=0 p 8/27 -> diff 1; k=1 p 12/27 -> 0.5; k=2 p 6/27 -> 0.2; k=3 p 1/27 -> 0.
    # cumulative: 0 -> 1/27 = .037, 0.2 -> 7/27 = .259, 0.5 -> 19/27 = .704, 1 -> 1
    args = ([T, T, T, F, F], [T, T, T, F, F], [F, T, F, F, F])
    assert f1_difference_interval(*args) == (0.0, 1.0)
    assert f1_difference_interval(*args, level=0.8) == (0.2, 1.0)  # 0.1 first reached at 0.2, 0.9 at 1


def test_f1_interval_by_hand() -> None:
    # positives: one predicted, one not; negatives: one predicted, one not. tp ~ Bin(2, 1/2), fp ~ Bin(2, 1/2),
    # F1 = 2 tp / (tp + fp + 2): 0 (p .25), .4 (.125), .5 (.25), 2/3 (.125 + .0625), .8 (.125), 1 (.0625)
    assert f1_interval([T, T, F, F], [T, F, T, F], level=0.5) == (0.0, 0.6667)  # 0.75 first reached at 2/3
    assert f1_interval([T, T, F, F], [T, F, T, F], level=0.8) == (0.0, 0.8)  # 0.9 first reached at .8 (.9375)
    assert f1_interval([T, T], [T, T]) == (1.0, 1.0)
    assert f1_interval([F, F], [T, F]) is None  # no positive: F1 has nothing to measure


def test_monte_carlo_above_the_exact_limit_is_seeded_and_close() -> None:
    actual = [T] * 6 + [F] * 6
    first = [T, T, T, T, F, F, F, F, F, F, T, F]
    second = [T, T, F, F, F, F, F, F, F, F, F, F]
    exact = f1_difference_interval(actual, first, second)
    sampled = f1_difference_interval(actual, first, second, exact_max=0, seed=3)
    assert sampled == f1_difference_interval(actual, first, second, exact_max=0, seed=3)
    assert exact is not None and sampled is not None
    assert abs(exact[0] - sampled[0]) < 0.1 and abs(exact[1] - sampled[1]) < 0.1
    with pytest.raises(ValueError, match="3 labels but 2 predictions"):
        f1_interval([T, F, T], [T, F])


def test_the_difference_interval_covers_zero_as_often_as_it_says_when_nothing_differs() -> None:
    """Simulation: two classifiers with the same true F1 (each query's predictions drawn independently with the
    same chances); the 95% interval of the difference should miss 0 in about 5% of test sets, not far more."""
    import random

    rng = random.Random(7)
    misses, trials = 0, 200
    for _ in range(trials):
        actual = [T] * 8 + [F] * 8
        first = [rng.random() < (0.7 if a else 0.2) for a in actual]
        second = [rng.random() < (0.7 if a else 0.2) for a in actual]
        low, high = f1_difference_interval(actual, first, second, exact_max=0, resamples=400) or (0, 0)
        misses += not low <= 0 <= high
    assert misses / trials < 0.12


# ---- the split ----------------------------------------------------------------------------------------------------

def queries(positives: int, negatives: int, types: list[str | None] | None = None) -> list[RoutingQuery]:
    out = [RoutingQuery(query=f"yes {i}", should_trigger=True, invocation_type=types[i] if types else None)
           for i in range(positives)]
    return out + [RoutingQuery(query=f"no {i}", should_trigger=False) for i in range(negatives)]


def test_split_is_stratified_seeded_and_fixed() -> None:
    qs = queries(7, 6)
    split = split_queries(qs, 0.4, seed=0)
    assert split.counts(qs) == {"train": {"should_trigger": 4, "should_not_trigger": 4},  # 7 x .4 = 2.8 -> 3 held
                                "test": {"should_trigger": 3, "should_not_trigger": 2}}  # 6 x .4 = 2.4 -> 2 held
    assert sorted(split.train + split.test) == list(range(1, 14)) and not set(split.train) & set(split.test)
    assert split == split_queries(qs, 0.4, seed=0)
    assert {split_queries(qs, 0.4, seed=s).test for s in range(5)} != {split.test}
    # a tiny holdout still holds one of each class out, a large one keeps one of each in train
    assert split_queries(qs, 0.01, seed=0).counts(qs)["test"] == {"should_trigger": 1, "should_not_trigger": 1}
    assert split_queries(qs, 0.99, seed=0).counts(qs)["train"] == {"should_trigger": 1, "should_not_trigger": 1}


def test_split_shares_test_places_among_invocation_types() -> None:
    qs = queries(8, 4, types=["explicit"] * 4 + ["implicit"] * 4)
    for seed in range(6):
        test = split_queries(qs, 0.5, seed=seed).test
        assert sum(qs[i - 1].invocation_type == "explicit" for i in test) == 2
        assert sum(qs[i - 1].invocation_type == "implicit" for i in test) == 2


def test_a_degenerate_split_is_refused_with_the_counts() -> None:
    with pytest.raises(InputError) as caught:
        split_queries(queries(3, 1), 0.4, seed=0, file="routing.json")
    assert caught.value.line() == (
        "routing.json: should_trigger: the train/test split leaves the queries with should_trigger false out of the "
        "test set: 3 should trigger (2 train, 1 test); 1 should not trigger (1 train, 0 test) (--optimize needs at "
        "least 2 queries that should trigger and 2 that should not)")
    with pytest.raises(InputError, match="should_trigger false out of the train and the test sets: 4 should "
                                         r"trigger \(2 train, 2 test\); 0 should not trigger"):
        split_queries(queries(4, 0), 0.5, seed=0)
    with pytest.raises(InputError, match="--holdout must be between 0 and 1"):
        split_queries(queries(4, 4), 1.0, seed=0)


# ---- the improver's reply -----------------------------------------------------------------------------------------

TEST_QUERIES = ["audit the vendor statement", "what is the weather tomorrow", "hi there",
                "please look at the attached quarterly supplier statement and tell me whether it balances"]


def test_reply_checks() -> None:
    ok = "Use this skill to check invoices, billing statements and supplier payments."
    assert check_description(f'  "{ok}"\n', [], TEST_QUERIES) == (ok, None)
    assert normalize("a\n\n  b\tc") == "a b c"
    assert check_description("x" * 1025, [], [])[1] == "the description is 1025 characters long, at most 1024"
    assert check_description("x" * 1024, [], [])[1] is None
    assert check_description("  ", [], [])[1] == "the description is empty"
    assert "angle brackets" in (check_description("Use for <invoices>", [], [])[1] or "")
    assert check_description("USE this  skill to check invoices, billing statements and supplier payments.",
                             ["old", ok], [])[1] == "the description repeats candidate 2, tried before"
    leak = check_description("Checks invoices. Use it to Audit the vendor-statement!", [], TEST_QUERIES)[1]
    assert leak is not None and "quotes, word for word, a request kept aside" in leak
    assert "vendor" not in leak  # the refusal never tells which test query it was


def test_what_counts_as_quoting_a_query() -> None:
    assert quotes_query("Use it to audit the vendor statement.", "audit the vendor statement")
    assert not quotes_query("Use it to audit a vendor statement.", "audit the vendor statement")
    assert not quotes_query("Say hi there.", "hi there")  # under 3 words: never a quote
    long = TEST_QUERIES[3]
    assert quotes_query("Use for the attached quarterly supplier statement and tell me whether.", long)  # 8 in a row
    assert not quotes_query("Use for the attached quarterly supplier statement and tell.", long)  # 7 in a row


# ---- rewriting the description ------------------------------------------------------------------------------------

REWRITES = [  # (SKILL.md, the same with description "New text")
    ("---\nname: x\ndescription: Old text here.\nlicense: MIT\n---\n# body\n",
     "---\nname: x\ndescription: New text\nlicense: MIT\n---\n# body\n"),
    ("---\r\nname: x\r\ndescription: \"Old: quoted\"  # kept\r\nmetadata:\r\n  description: nested\r\n---\r\nb\r\n",
     "---\r\nname: x\r\ndescription: New text  # kept\r\nmetadata:\r\n  description: nested\r\n---\r\nb\r\n"),
    ("---\nname: x\ndescription: >\n  folded old\n  text\n\nlicense: MIT\n---\nbody\n",
     "---\nname: x\ndescription: New text\n\nlicense: MIT\n---\nbody\n"),
    ("---\nname: x\ndescription: |-\n  literal\n  old\nlicense: MIT\n---\nbody\n",
     "---\nname: x\ndescription: New text\nlicense: MIT\n---\nbody\n"),
    ("---\nname: x\ndescription: plain\n  continued old\n---\nbody\n",
     "---\nname: x\ndescription: New text\n---\nbody\n"),
    ("\ufeff---\nname: x\ndescription: 'single'\n---\n", "\ufeff---\nname: x\ndescription: New text\n---\n"),
]


@pytest.mark.parametrize(("before", "after"), REWRITES)
def test_only_the_description_changes(before: str, after: str) -> None:
    assert replace_description(before, "New text") == after


def test_a_description_that_needs_quotes_is_double_quoted() -> None:
    text = replace_description(REWRITES[0][0], "Use it: for #tags and 'quotes' \"too\"")
    assert text == ("---\nname: x\ndescription: \"Use it: for #tags and 'quotes' \\\"too\\\"\"\nlicense: MIT\n"
                    "---\n# body\n")


def test_write_description_keeps_bytes_and_mode(tmp_path) -> None:
    folder = tmp_path / "x"
    folder.mkdir()
    path = folder / "SKILL.md"
    path.write_bytes(REWRITES[1][0].encode())
    os.chmod(path, 0o640)
    write_description(folder, "New text")
    assert path.read_bytes() == REWRITES[1][1].encode()
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    path.write_text("---\nname: x\n---\nbody\n")
    with pytest.raises(InputError, match="has no description in its frontmatter"):
        write_description(folder, "New text")


def test_the_improver_through_the_openai_backend_is_asked_again_after_a_refusal() -> None:
    import asyncio
    import json

    from fakes.openai_server import FakeOpenAI, completion

    from eval_skills.judges import ImproveQuery, ImproveRequest, create_judge
    from eval_skills.routing.improver import propose

    leak = {"description": "Use it to audit the vendor statement.", "reasoning": "r1"}
    good = {"description": "Use it for invoices, billing statements and ledgers.", "reasoning": "r2"}
    request = ImproveRequest(skill_name="invoice-check", skill_body="# Invoice check", current_description="Invoices.",
                             missed=[ImproveQuery(query="review the billing ledger", trigger_rate=0.0, runs=1)])
    with FakeOpenAI(key="sk-test") as api:
        api.script(completion(json.dumps(leak)), completion(json.dumps(good)))
        judge = create_judge("openai", model="m", base_url=api.url, env={"OPENAI_API_KEY": "sk-test"})
        proposal = asyncio.run(propose(judge, request, tried=["Invoices."], test_queries=TEST_QUERIES))
        bodies = api.chat_requests()
    assert proposal.description == good["description"] and proposal.reasoning == "r2"
    assert [a.refused is not None for a in proposal.attempts] == [True, False]
    assert len(bodies) == 2 and bodies[0]["response_format"]["json_schema"]["name"] == "improve_verdict"
    second = bodies[1]["messages"][1]["content"]
    assert "Descriptions you proposed for this round were refused:" in second
    assert "review the billing ledger (used in 0 of 1 runs)" in second
    assert not any(q in json.dumps(bodies) for q in TEST_QUERIES)  # the test set is never sent
