"""A judge as the ``llm_judge`` scorer asks it: ``score(rubric, input, output, expected) -> (score, reason)``,
a blocking call (scorers are plain functions), made with a ``score`` request to any judge backend.

The reason names the judge, its model and prompt version, and whether the verdict came from the cache, so a
task's result says which judge decided it. A judge error raises ScorerError: the task's error.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from .errors import ScorerError
from .judges import Judge, ScoreRequest, ScoreVerdict

__all__ = ["JudgeForScoring"]


class JudgeForScoring:
    def __init__(self, judge: Judge) -> None:
        self.judge = judge

    def score(self, rubric: str, input: Any, output: Any, expected: Any) -> tuple[float, str]:
        request = ScoreRequest(rubric=rubric, input=input, output=output, expected=expected)
        judgement = _blocking(self.judge.judge(request))
        if not isinstance(judgement.verdict, ScoreVerdict):
            raise ScorerError(f"judge error: {judgement.error}")
        source = f"{judgement.backend}{'/' + judgement.model if judgement.model else ''}, prompt " \
                 f"{judgement.prompt_version}{', cached' if judgement.cached else ''}"
        return judgement.verdict.score, f"{judgement.verdict.reason} [judge {source}]".strip()


def _blocking(coroutine: Any) -> Any:
    """Run a coroutine to its end from synchronous code: here when no loop runs in this thread (scorers off
    the loop), else in a thread of its own."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with ThreadPoolExecutor(1, thread_name_prefix="eval-skills-judge") as pool:
        return pool.submit(asyncio.run, coroutine).result()
