"""The ``llm_judge`` scorer: a judge rates the output against the task's rubric, from 0 to 1.

The rubric is ``expectedOutput.rubric``, or ``expectedOutput.judgePrompt`` (the name tasks written for the
original tool use); ``expectedOutput.value``, when given, is sent as the reference answer, and
``inputData`` as the input. The task passes when the score is at least the evaluator's ``passThreshold``
(default 0.5). A judge error (no valid verdict after the judge was asked twice) is the task's error, never a
failed task.

Scoring does not know the judge backends: whoever runs the evaluation puts a :class:`RubricJudge` in the
scoring context (``ScoringContext.judge``); the ``eval`` command builds it from ``--judge``,
``--judge-model``, ``--judge-cmd`` or the config's ``llm`` settings, and checks it before any task runs.
"""

from __future__ import annotations

import math
from typing import Any, Protocol

from ..errors import ScorerError
from ..formats.benchmark import Task
from ..results import Score
from .scorers import ScoringContext, scorer

__all__ = ["DEFAULT_PASS_THRESHOLD", "RubricJudge", "llm_judge", "rubric_of"]

DEFAULT_PASS_THRESHOLD = 0.5
OPTIONS = ("passThreshold",)


class RubricJudge(Protocol):
    def score(self, rubric: str, input: Any, output: Any, expected: Any) -> tuple[float, str]:
        """The score (0 to 1) and the judge's reason; ScorerError when the judge gave no valid verdict."""
        ...


def rubric_of(task: Task) -> str | None:
    expected = task.expectedOutput
    for text in (expected.rubric, expected.judgePrompt):
        if isinstance(text, str) and text.strip():
            return text
    return None


def _threshold(options: dict[str, Any]) -> float:
    value = options.get("passThreshold", DEFAULT_PASS_THRESHOLD)
    if isinstance(value, bool) or not isinstance(value, int | float) or not (0 <= value <= 1) or math.isnan(value):
        raise ScorerError(f"evaluator.passThreshold must be a number from 0 to 1, not {value!r}")
    return float(value)


def _check(task: Task, options: dict[str, Any], ctx: ScoringContext) -> None:
    if rubric_of(task) is None:
        raise ScorerError("llm_judge needs expectedOutput.rubric (or judgePrompt): what the judge rates against")
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise ScorerError(f"llm_judge has no option {unknown[0]!r} (it takes passThreshold)")
    _threshold(options)


@scorer("llm_judge", check=_check)
def llm_judge(output: Any, task: Task, options: dict[str, Any], ctx: ScoringContext) -> Score:
    judge: RubricJudge | None = ctx.judge
    rubric = rubric_of(task)
    if judge is None or rubric is None:
        raise ScorerError("no judge to ask: give --judge-cmd, or --judge and --judge-model (or llm in the config)")
    value, reason = judge.score(rubric, task.inputData, output, task.expectedOutput.value)
    threshold = _threshold(options)
    return Score(value, value >= threshold, reason)
