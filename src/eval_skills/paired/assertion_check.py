"""Checking the assertions before any agent runs (``paired --check-assertions``).

Each case is graded twice without an agent, by the same judge and assertion engine as its runs: once with its
``expected_output`` as the response, once with an empty response. An assertion the expected output fails
*contradicts* its case (the answer the author wants would be marked wrong); one an empty response passes
*checks nothing*. Checks on the transcript (``tool_called``, ``tool_not_called``) are left out: there is no
transcript to read without an agent. Each finding keeps the grader's evidence.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace
from typing import Any

from ..judges import Judge
from .grading import grade_run
from .plan import Case, PairedPlan
from .record import RunRecord

__all__ = ["AssertionFinding", "check_assertions"]

TRANSCRIPT_KINDS = {"tool_called", "tool_not_called"}


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
                     token_measurement="none", tool_calls=0)


def _without_transcript_checks(case: Case) -> Case:
    return replace(case, checks=tuple(c for c in case.checks if c.check.kind not in TRANSCRIPT_KINDS))


async def _findings(case: Case, judge: Judge | None) -> list[AssertionFinding]:
    checked = _without_transcript_checks(case)
    if not checked.texts:
        return []
    found: list[AssertionFinding] = []
    expected = (case.case.expected_output or "").strip()
    graded = []
    if expected:
        graded.append(("contradicts", False, await grade_run(checked, _record(checked, expected), judge)))
    graded.append(("checks_nothing", True, await grade_run(checked, _record(checked, ""), judge)))
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
