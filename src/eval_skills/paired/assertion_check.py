"""Checking the assertions before any agent runs (``paired --check-assertions``).

Each case is graded twice without an agent, by the same judge and assertion engine as its runs: once with its
``expected_output`` as the response, once with an empty response. An assertion the expected output fails
*contradicts* its case (the answer the author wants would be marked wrong); one an empty response passes
*checks nothing*. The checks on what the agent did (``tool_called``, ``tool_sequence``, ``file_created``, ...) are
graded only on the empty response, as a run in which the agent did nothing (no tool call, no file): one that
passes there checks nothing (a ``tool_count`` with ``min: 0`` and no ``max``). An expected output is text, so they
cannot contradict it; and the ones that only forbid something (``tool_not_called``, ``no_tool_errors``, a
``tool_count`` with only a ``max``) are left out, since doing nothing is what they allow. Each finding keeps the
grader's evidence.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace
from typing import Any

from ..judges import Judge
from ..scoring.assertions import TRANSCRIPT_KINDS, only_forbids
from .grading import grade_run
from .plan import Case, PairedPlan
from .record import RunRecord

__all__ = ["AssertionFinding", "check_assertions"]



@dataclass(frozen=True)
class AssertionFinding:
    eval_id: int | str
    assertion: str
    kind: str  # "contradicts" (the expected output fails it), "checks_nothing" (an empty response passes it),
    # "judge_error" (the judge gave no verdict on it)
    evidence: str

    def as_dict(self) -> dict[str, Any]:
        return {"eval_id": self.eval_id, "assertion": self.assertion, "kind": self.kind, "evidence": self.evidence}


def _record(case: Case, response: str) -> RunRecord:
    return RunRecord(run_id=f"check-{case.key}", case_key=case.key, arm="check", number=0, status="ok", error=None,
                     response=response, transcript=[], outputs={}, duration_s=0.0, tokens=None,
                     token_measurement="none", tool_calls=0, extra={"files": []})


def _keeping(case: Case, *, transcript: bool) -> Case:
    """The case with its checks on the answer, and (``transcript``) those on what the agent did that require
    something of it."""
    return replace(case, checks=tuple(c for c in case.checks if c.check.kind not in TRANSCRIPT_KINDS
                                      or transcript and not only_forbids(c.check)))


async def _findings(case: Case, judge: Judge | None) -> list[AssertionFinding]:
    on_answer, on_idle = _keeping(case, transcript=False), _keeping(case, transcript=True)
    if not on_idle.texts:
        return []
    found: list[AssertionFinding] = []
    expected = (case.case.expected_output or "").strip()
    graded = []
    if expected and on_answer.texts:
        graded.append(("contradicts", False, await grade_run(on_answer, _record(on_answer, expected), judge)))
    graded.append(("checks_nothing", True, await grade_run(on_idle, _record(on_idle, ""), judge)))
    for kind, flagged, (grading, _) in graded:
        for expectation in grading.expectations:
            if expectation.passed is None:
                found.append(AssertionFinding(case.case.id, expectation.text, "judge_error", expectation.evidence))
            elif expectation.passed is flagged:
                found.append(AssertionFinding(case.case.id, expectation.text, kind, expectation.evidence))
    return found


async def check_assertions(plan: PairedPlan, judge: Judge | None, *, concurrency: int = 4) -> list[AssertionFinding]:
    """Every finding over the plan's cases, in case order (see the module doc)."""
    gate = asyncio.Semaphore(concurrency)

    async def one(case: Case) -> list[AssertionFinding]:
        async with gate:
            return await _findings(case, judge)

    results = await asyncio.gather(*(one(case) for case in plan.cases))
    return [finding for found in results for finding in found]
