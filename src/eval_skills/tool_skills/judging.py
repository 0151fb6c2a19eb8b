"""A judge as the ``llm_judge`` scorer asks it: ``await score(rubric, input, output, expected, task=...) ->
(score, reason)``, made with a ``score`` request to any judge backend.

The reason names the judge, its model and prompt version, and whether the verdict came from the cache, so a
task's result says which judge decided it. A judge error raises ScorerError: the task's error.
"""

from __future__ import annotations

from typing import Any

from ..errors import ScorerError
from ..judges import ATTEMPTS, Judge, ScoreRequest, ScoreVerdict

__all__ = ["JudgeForScoring"]

DEADLINE_MARGIN_S = 5.0


class JudgeForScoring:
    def __init__(self, judge: Judge) -> None:
        self.judge = judge
        # every attempt may take the judge's whole timeout; the scorer is cancelled only past all of them
        self.deadline_s = ATTEMPTS * float(getattr(judge, "timeout", 120.0)) + DEADLINE_MARGIN_S

    async def score(self, rubric: str, input: Any, output: Any, expected: Any, *,
                    task: str | None = None) -> tuple[float, str]:
        request = ScoreRequest(rubric=rubric, task=task, input=input, output=output, expected=expected)
        judgement = await self.judge.judge(request)
        if not isinstance(judgement.verdict, ScoreVerdict):
            raise ScorerError(f"judge error: {judgement.error}")
        source = f"{judgement.backend}{'/' + judgement.model if judgement.model else ''}, prompt " \
                 f"{judgement.prompt_version}{', cached' if judgement.cached else ''}"
        return judgement.verdict.score, f"{judgement.verdict.reason} [judge {source}]".strip()
