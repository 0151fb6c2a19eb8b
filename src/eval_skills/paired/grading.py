"""Grading a run and comparing two runs blind.

- :func:`grade_run`: one expectation per assertion, in ``grading.json`` order. The plain-language assertions
  go to the judge in one request (the prompt, the expected output, the response, the transcript and the output
  files, each cut to a size a judge can read), with its evidence; the ``selftune_assertions`` run in the
  assertion engine on the whole response (``tool_called`` and ``tool_not_called`` against the transcript's
  tool-call events, never a text search). A run whose agent failed or timed out is an *error run*: no
  expectations, ``error`` set, never a failure. A judge error leaves its assertions ungraded
  (``passed: null``): counted apart, never a failure.
- :func:`compare_runs`: the judge sees the two arms' responses and files as A and B, in an order drawn from the
  seed; the verdict is unblinded into ``winner_arm``.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from ..formats.workspace import (
    Comparison,
    Expectation,
    FinalEvent,
    Grading,
    GradingSummary,
    MessageEvent,
    ToolCallEvent,
)
from ..judges import ArmOutput, CompareRequest, GradeRequest, Judge, Judgement
from ..scoring.assertions import CheckResult, run_check
from .plan import Case, ab_order
from .record import RunRecord
from .selftune import run_key_value
from .trace import FILE_KINDS, trace_of

__all__ = ["CHECK_DEADLINE", "RESPONSE_LIMIT", "compare_runs", "execution_metrics", "grade_run", "judge_info",
           "response_for_judge", "summarize"]

CHECK_DEADLINE = 10.0  # seconds the deterministic checks of one run may take (a regex on a huge response)
TRANSCRIPT_VALUE_LIMIT = 4000  # characters of one transcript field shown to the judge
TRANSCRIPT_EVENTS = 200  # transcript events shown to the judge: the first quarter and the rest from the end
RESPONSE_LIMIT = 100_000  # characters of a response shown to the judge: the first 3/4 and the last 1/4
ENGINE = "assertion engine"


def summarize(expectations: list[Expectation]) -> GradingSummary:
    """``passed``/``failed`` count graded expectations; ``total`` is their sum (ungraded ones, from a judge
    error, are counted apart as ``ungraded``), so ``pass_rate = passed / total``; None when nothing was
    graded."""
    passed = sum(e.passed is True for e in expectations)
    failed = sum(e.passed is False for e in expectations)
    total = passed + failed
    return GradingSummary.model_validate({"passed": passed, "failed": failed, "total": total,
                                          "pass_rate": round(passed / total, 4) if total else None,
                                          "ungraded": sum(e.passed is None for e in expectations)})


def execution_metrics(record: RunRecord) -> dict[str, Any]:
    """``execution_metrics`` of ``grading.json`` in skill-creator's shape, from the run's transcript: tool calls
    by name, their total, the agent's steps (its messages and its final response), the files it created or
    changed, and the tool calls that reported an error. ``output_chars`` is left out on purpose: skill-creator's
    aggregator would take it for the token count of a run whose tokens were not measured."""
    calls = [e for e in record.transcript if isinstance(e, ToolCallEvent)]
    by_name: dict[str, int] = {}
    for call in calls:
        by_name[call.name] = by_name.get(call.name, 0) + 1
    steps = sum(isinstance(e, MessageEvent) and e.role == "assistant" or isinstance(e, FinalEvent)
                for e in record.transcript)
    files = [str(f.get("path")) for f in record.extra.get("files") or []
             if isinstance(f, dict) and f.get("kind") != "deleted"]
    return {"tool_calls": by_name, "total_tool_calls": len(calls) if calls else record.tool_calls,
            "total_steps": steps, "files_created": files, "errors_encountered": sum(c.is_error for c in calls)}


def judge_info(judgement: Judgement) -> dict[str, Any]:
    return {"backend": judgement.backend, "model": judgement.model, "prompt_version": judgement.prompt_version,
            "attempts": judgement.attempts, "cached": judgement.cached, "error": judgement.error,
            "duration_s": round(judgement.duration_s, 3)}


def _clip(value: Any) -> Any:
    if isinstance(value, str) and len(value) > TRANSCRIPT_VALUE_LIMIT:
        return value[:TRANSCRIPT_VALUE_LIMIT] + f"... [{len(value) - TRANSCRIPT_VALUE_LIMIT} more characters]"
    if isinstance(value, dict):
        return {k: _clip(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clip(v) for v in value]
    return value


def _for_judge(transcript: list[Any]) -> list[Any]:
    """The transcript as the judge sees it: long tool inputs and results clipped, and of a very long one the
    first and last events with a note of how many are left out (the judge needs the steps, not every byte)."""
    events = list(transcript)
    if len(events) > TRANSCRIPT_EVENTS:
        head, tail = TRANSCRIPT_EVENTS // 4, TRANSCRIPT_EVENTS - TRANSCRIPT_EVENTS // 4
        skipped = MessageEvent(role="system", text=f"[{len(events) - head - tail} events not shown]")
        events = [*events[:head], skipped, *events[-tail:]]
    return [type(event).model_validate(_clip(event.model_dump(mode="json"))) for event in events]


def response_for_judge(text: str | None) -> str:
    """The response as the judge sees it: whole up to RESPONSE_LIMIT characters, else its beginning and its
    end with a note of what is left out (the checks always see all of it)."""
    text = text or ""
    if len(text) <= RESPONSE_LIMIT:
        return text
    head, tail = RESPONSE_LIMIT * 3 // 4, RESPONSE_LIMIT // 4
    return f"{text[:head]}\n\n... [{len(text) - head - tail} characters not shown] ...\n\n{text[-tail:]}"


async def _checks(case: Case, record: RunRecord) -> list[Expectation]:
    """The case's deterministic checks on the response, in a thread (a regex on untrusted text must not hold
    the event loop) with a deadline: a check that has not finished by then is not graded."""
    if not case.checks:
        return []
    text = record.response or ""
    calls = [e.model_dump(mode="json") for e in record.transcript if isinstance(e, ToolCallEvent)]
    results: list[tuple[bool | None, str]] = []

    def run_all() -> None:
        trace = trace_of(record, with_files=any(c.check.kind in FILE_KINDS for c in case.checks))
        for item in case.checks:
            try:
                if item.key_value is not None:
                    results.append(run_key_value(item.key_value, text))
                    continue
                result: CheckResult = run_check(item.check, text, calls, trace=trace)
                results.append((result.passed, result.evidence))
            except Exception as exc:  # an untrusted response must never crash grading
                results.append((None, f"the check failed: {type(exc).__name__}: {exc}"))

    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(CHECK_DEADLINE):
            await asyncio.to_thread(run_all)
    late = (None, f"the checks took longer than {CHECK_DEADLINE:g} s: not graded")
    done = list(results)  # a check still running goes on in its thread; its result is not taken
    outcomes = [done[i] if i < len(done) else late for i in range(len(case.checks))]
    return [Expectation.model_validate({"text": item.text, "passed": passed, "evidence": evidence,
                                        "graded_by": ENGINE})
            for item, (passed, evidence) in zip(case.checks, outcomes, strict=True)]


async def grade_run(case: Case, record: RunRecord, judge: Judge | None) -> tuple[Grading, Judgement | None]:
    """The run's ``grading.json``, and the judge's judgement when it was asked."""
    if not record.ok:
        empty = GradingSummary(passed=0, failed=0, total=0, pass_rate=None)
        return Grading(expectations=[], summary=empty, error=record.error or f"the run ended with {record.status}"
                       ), None
    expectations: list[Expectation] = []
    judgement: Judgement | None = None
    info: dict[str, Any] | None = None
    if case.assertions:
        if judge is None:
            raise ValueError("plain-language assertions need a judge")
        request = GradeRequest(prompt=case.case.prompt, expected_output=case.case.expected_output,
                               response=response_for_judge(record.response),
                               transcript=_for_judge(record.transcript),
                               outputs=record.outputs, assertions=case.assertions)
        judgement = await judge.judge(request)
        info = judge_info(judgement)
        expectations += [Expectation.model_validate({**e.model_dump(), "graded_by": "judge"})
                         for e in judgement.expectations(case.assertions)]
    expectations += await _checks(case, record)
    fields: dict[str, Any] = {"expectations": expectations, "summary": summarize(expectations),
                              "execution_metrics": execution_metrics(record)}
    if info is not None:
        fields["judge"] = info
    return Grading.model_validate(fields), judgement


async def compare_runs(case: Case, number: int, runs: dict[str, RunRecord], arms: tuple[str, str], seed: int,
                       judge: Judge) -> tuple[Comparison, Judgement | None]:
    """The blind A/B verdict of run ``number`` of both arms (``runs`` by arm). A pair with an error run is
    not compared (``winner`` None, ``not_compared`` says why)."""
    order = ab_order(seed, case.key, number, arms)
    failed = [arm for arm in arms if not runs[arm].ok]
    if failed:
        return Comparison.model_validate({"run_number": number, "order": order, "winner": None, "winner_arm": None,
                                          "not_compared": f"error run in {', '.join(failed)}"}), None
    request = CompareRequest(prompt=case.case.prompt, expected_output=case.case.expected_output,
                             A=ArmOutput(response=response_for_judge(runs[order["A"]].response),
                                         outputs=runs[order["A"]].outputs),
                             B=ArmOutput(response=response_for_judge(runs[order["B"]].response),
                                         outputs=runs[order["B"]].outputs))
    judgement = await judge.judge(request)
    verdict = judgement.verdict
    winner = getattr(verdict, "winner", None) if verdict is not None else None
    fields: dict[str, Any] = {
        "run_number": number, "order": order, "winner": winner,
        "winner_arm": order.get(winner) if winner in ("A", "B") else winner,
        "reasoning": getattr(verdict, "reasoning", "") if verdict is not None else "", "judge": judge_info(judgement)}
    if judgement.error:
        fields["error"] = f"judge error: {judgement.error}"
    return Comparison.model_validate(fields), judgement
