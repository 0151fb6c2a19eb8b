"""The ``llm_judge`` scorer: a judge rates the output against the task's rubric, from 0 to 1.

The rubric is ``expectedOutput.rubric`` (tasks written for the original tool name it ``judgePrompt`` or
``criteria``: read as ``rubric``; a task without one is rated against the original's default, "Evaluate
the quality of the output."); ``expectedOutput.value``, when given, is sent as the reference answer, the
task's ``prompt`` as what the tool was asked to do, and ``inputData`` as the input. The task passes when
the score is at least the evaluator's ``passThreshold`` (default 0.5). A judge error (no valid verdict after
the judge was asked twice) is the task's error, never a failed task.

Scoring does not know the judge backends: whoever runs the evaluation puts a :class:`RubricJudge` in the
scoring context as ``ctx.services["judge"]`` (the ``eval`` command builds it from ``--judge``,
``--judge-model``, ``--judge-cmd`` or the config's ``llm`` settings, and checks it before any task runs). The
scorer waits on it on the event loop; its deadline is the judge's own (``deadline_s``: a judge may be asked
twice), never shorter than the scoring deadline.
"""

from __future__ import annotations

from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from ..errors import ScorerError
from ..formats.benchmark import Task
from ..results import Score
from .registry import ScoringContext, scorer

__all__ = ["DEFAULT_RUBRIC", "LlmJudgeOptions", "RubricJudge", "llm_judge", "rubric_of"]


class RubricJudge(Protocol):
    deadline_s: float  # the longest a score may take (every attempt of the judge)

    async def score(self, rubric: str, input: Any, output: Any, expected: Any, *,
                    task: str | None = None) -> tuple[float, str]:
        """The score (0 to 1) and the judge's reason; ScorerError when the judge gave no valid verdict."""
        ...


class LlmJudgeOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    passThreshold: float = Field(default=0.5, ge=0, le=1)


# what the original eval-skills asks its judge when a task gives no judgePrompt
DEFAULT_RUBRIC = "Evaluate the quality of the output."


def rubric_of(task: Task) -> str:
    rubric = task.expectedOutput.rubric
    return rubric if isinstance(rubric, str) and rubric.strip() else DEFAULT_RUBRIC


def _deadline(ctx: ScoringContext) -> float:
    judge = ctx.services.get("judge")
    return max(ctx.timeout_s, float(getattr(judge, "deadline_s", 0.0)))


@scorer("llm_judge", options=LlmJudgeOptions, deadline=_deadline)
async def llm_judge(output: Any, task: Task, options: LlmJudgeOptions, ctx: ScoringContext) -> Score:
    judge: RubricJudge | None = ctx.services.get("judge")
    if judge is None:
        raise ScorerError("no judge to ask: give --judge-cmd, or --judge and --judge-model (or llm in the config)")
    value, reason = await judge.score(rubric_of(task), task.inputData, output, task.expectedOutput.value,
                                      task=task.prompt)
    return Score(value, value >= options.passThreshold, reason)
