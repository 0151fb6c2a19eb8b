"""Judges: verdict parsing, one retry then a judge error, the cache seam, and the command backend with the
fake judge program (tests/fakes/fake_judge.py) as a real process."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest
from fakes import fake_judge
from pydantic import ValidationError

from eval_skills.errors import InputError, JudgeError
from eval_skills.judges import (
    ArmOutput,
    CompareRequest,
    CompareVerdict,
    GradeRequest,
    GradeVerdict,
    ScoreRequest,
    ScoreVerdict,
    create_judge,
    parse_verdict,
)

GRADE = GradeRequest(prompt="Summarise", expected_output="a summary", response="The total is 42 EUR.",
                     outputs={"out/summary.md": "Refund exception applies"},
                     assertions=['It states "42 EUR"', 'It names the "refund exception"', 'It mentions "VAT"',
                                 "It is polite"])


def judge_once(judge, request):
    return asyncio.run(judge.judge(request))


def calls(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def test_grade_verdict_one_entry_per_assertion_in_order(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    judgement = judge_once(fake_judge(log=log, model="judge-model-1"), GRADE)
    assert judgement.ok and judgement.error is None and judgement.attempts == 1
    assert (judgement.backend, judgement.model, judgement.prompt_version) == ("command", "judge-model-1", "external")
    verdict = judgement.verdict
    assert isinstance(verdict, GradeVerdict)
    assert [(e.text, e.passed) for e in verdict.expectations] == [
        ('It states "42 EUR"', True), ('It names the "refund exception"', True), ('It mentions "VAT"', False),
        ("It is polite", False)]
    assert verdict.expectations[2].evidence == "missing 'VAT'"
    assert [e.passed for e in judgement.expectations(GRADE.assertions)] == [True, True, False, False]
    assert calls(log) == [{"kind": "grade", "attempt": 1, "model": "judge-model-1"}]


def test_compare_and_score() -> None:
    judge = fake_judge()
    compare = CompareRequest(prompt="p", expected_output="escalate the refund with evidence",
                             A=ArmOutput(response="I will escalate."),
                             B=ArmOutput(response="Escalate the refund.", outputs={"x.md": "evidence attached"}))
    verdict = judge_once(judge, compare).verdict
    assert isinstance(verdict, CompareVerdict) and verdict.winner == "B"
    assert verdict.reasoning == "A matched 1 words, B matched 3"  # escalate, refund, evidence (not "with")
    tie = CompareRequest(prompt="p", expected_output="", A=ArmOutput(response="a"), B=ArmOutput(response="b"))
    assert judge_once(judge, tie).verdict.winner == "TIE"
    score = judge_once(judge, ScoreRequest(rubric='mentions "Paris" and "France"', input={"q": "capital"},
                                          output={"answer": "Paris"}))
    assert isinstance(score.verdict, ScoreVerdict) and score.verdict.score == 0.5
    assert score.kind == "score"


def test_a_malformed_reply_is_asked_once_more(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    judgement = judge_once(fake_judge("malformed-once", log=log), GRADE)
    assert judgement.ok and judgement.attempts == 2
    assert [c["attempt"] for c in calls(log)] == [1, 2]


@pytest.mark.parametrize(("mode", "error"), [
    ("malformed", "the reply is not a JSON object: 'I think the response is quite good overall.'"),
    ("missing", "the reply grades 3 assertions, the request has 4"),
    ("wrong", "the reply does not fit a grade verdict: expectations: Field required"),
    ("crash", "the judge command exited with code 1; stderr: the fake judge crashed on purpose"),
])
def test_twice_wrong_is_a_judge_error_never_a_failed_assertion(tmp_path: Path, mode: str, error: str) -> None:
    log = tmp_path / "calls.jsonl"
    judgement = judge_once(fake_judge(mode, log=log), GRADE)
    assert not judgement.ok and judgement.verdict is None and judgement.attempts == 2
    assert judgement.error == error
    assert len(calls(log)) == 2
    graded = judgement.expectations(GRADE.assertions)
    assert [e.passed for e in graded] == [None] * 4 and graded[0].evidence == f"judge error: {error}"


def test_a_fenced_reply_is_read() -> None:
    assert judge_once(fake_judge("fenced"), GRADE).ok


def test_a_hanging_judge_times_out(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    started = time.monotonic()
    judgement = judge_once(fake_judge("hang", log=log, timeout=0.5), GRADE)
    assert time.monotonic() - started < 5
    assert judgement.error == "the judge command timed out after 0.5 s" and len(calls(log)) == 2


class DictCache:
    def __init__(self) -> None:
        self.data: dict[str, dict[str, Any]] = {}

    def get(self, key: str) -> dict[str, Any] | None:
        return self.data.get(key)

    def put(self, key: str, verdict: dict[str, Any]) -> None:
        self.data[key] = verdict


def test_the_cache_seam_stores_verdicts_not_errors(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    cache = DictCache()
    judge = fake_judge(log=log, cache=cache)
    first, second = judge_once(judge, GRADE), judge_once(judge, GRADE)
    assert (first.cached, second.cached) == (False, True) and second.verdict == first.verdict
    assert len(calls(log)) == 1 and len(cache.data) == 1
    other_model = fake_judge(log=log, cache=cache, model="m2")
    assert other_model.cache_key(GRADE) != judge.cache_key(GRADE)
    assert judge.cache_key(GRADE.model_copy(update={"response": "other"})) != judge.cache_key(GRADE)
    failing = fake_judge("malformed", log=log, cache=DictCache())
    assert not judge_once(failing, GRADE).ok and failing.cache.data == {}  # type: ignore[attr-defined]


def test_parse_verdict_rules() -> None:
    compare = CompareRequest(prompt="p", A=ArmOutput(response="a"), B=ArmOutput(response="b"))
    assert parse_verdict(compare, '{"winner": " tie ", "reasoning": "same"}').winner == "TIE"
    assert parse_verdict(compare, 'Verdict: {"winner": "a"} done').winner == "A"
    score = ScoreRequest(rubric="r")
    for reply in ('{"score": 1.5}', '{"score": "0.5"}', '{"score": true}', '{"score": NaN}', "[0.5]"):
        with pytest.raises(JudgeError):
            parse_verdict(score, reply)
    grade = GradeRequest(prompt="p", response="r", assertions=["one"])
    with pytest.raises(JudgeError, match="passed"):
        parse_verdict(grade, '{"expectations": [{"text": "one", "passed": "yes"}]}')
    verdict = parse_verdict(grade, '{"expectations": [{"text": "paraphrased", "passed": false}]}')
    assert verdict.expectations[0].text == "one" and verdict.expectations[0].evidence == ""
    verdict = parse_verdict(grade, '{"expectations": [{"passed": true, "evidence": "seen"}]}')  # no text: in order
    assert (verdict.expectations[0].text, verdict.expectations[0].passed) == ("one", True)


@pytest.mark.parametrize(("reply", "score"), [
    ('Looking at {the rubric}, it fits. {"score": 0.9, "reason": "good"}', 0.9),  # braces in the prose
    ('{"score": 0.9, "reason": "good"}\nNote: a {"score"} key is what you asked for.', 0.9),
    ('```json\n{"score": 0.2, "reason": "r", "details": {"score": 1}}\n```', 0.2),  # nested objects are fields
    ('The verdict {"score": 0.4} and again {"score": 0.4}', 0.4),  # the same verdict twice
    ('{"note": "thinking"} then {"score": 0.7}', 0.7),  # only one object fits
])
def test_verdicts_among_prose(reply: str, score: float) -> None:
    verdict = parse_verdict(ScoreRequest(rubric="r"), reply)
    assert isinstance(verdict, ScoreVerdict) and verdict.score == score


@pytest.mark.parametrize(("reply", "error"), [
    ('Example: {"score": 0, "reason": "example"}\nMine: {"score": 0.9, "reason": "good"}',
     "the reply holds 2 different verdicts"),
    ('{"score": 2} and {"reason": "no score"}', "the reply does not fit a score verdict: score"),
    ("{ never closed", "the reply is not a JSON object"),
    ("{" * 100_000, "the reply is not a JSON object"),
])
def test_replies_that_do_not_give_one_verdict(reply: str, error: str) -> None:
    started = time.monotonic()
    with pytest.raises(JudgeError, match=error):
        parse_verdict(ScoreRequest(rubric="r"), reply)
    assert time.monotonic() - started < 2


def test_requests_are_checked() -> None:
    with pytest.raises(ValidationError):
        GradeRequest(prompt="p", response="r", assertions=[])
    with pytest.raises(ValidationError):
        ScoreRequest(rubric="r", surprise=1)  # type: ignore[call-arg]
    assert json.loads(GRADE.model_dump_json())["kind"] == "grade"


def test_bad_judge_settings_are_input_errors() -> None:
    with pytest.raises(InputError, match="unknown judge 'oracle'.*one of: anthropic, command, openai"):
        create_judge("oracle")
    with pytest.raises(InputError, match="empty"):
        create_judge("command", command="")
    judge = create_judge("command", command="no-such-judge-program")
    with pytest.raises(InputError, match="no-such-judge-program.*not found on PATH"):
        judge.check()
    judgement = judge_once(judge, GRADE)
    assert not judgement.ok and "not found on PATH" in (judgement.error or "")
