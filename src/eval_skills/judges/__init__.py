"""Judges give a verdict as JSON on a grade, compare or score request: one module per backend behind :class:`Judge`.

    judge = create_judge("command", command="python my_judge.py", timeout=60)
    judge.check()                                    # InputError when it cannot be used
    judgement = await judge.judge(GradeRequest(prompt=..., response=..., assertions=["..."]))
    judgement.ok, judgement.verdict, judgement.error, judgement.expectations(assertions)

Callers never import a backend module: :func:`create_judge` finds it in :data:`JUDGES`.
"""

from __future__ import annotations

from typing import Any

from ..registry import Registry
from .base import ATTEMPTS, Judge, Judgement, VerdictCache
from .models import (
    ArmOutput,
    CompareRequest,
    CompareVerdict,
    GradeExpectation,
    GradeRequest,
    GradeVerdict,
    ImproveCandidate,
    ImproveQuery,
    ImproveRequest,
    ImproveVerdict,
    JudgeRequest,
    ScoreRequest,
    ScoreVerdict,
    Verdict,
    parse_verdict,
)

__all__ = [
    "ATTEMPTS",
    "JUDGES",
    "ArmOutput",
    "CompareRequest",
    "CompareVerdict",
    "GradeExpectation",
    "GradeRequest",
    "GradeVerdict",
    "ImproveCandidate",
    "ImproveQuery",
    "ImproveRequest",
    "ImproveVerdict",
    "Judge",
    "JudgeRequest",
    "Judgement",
    "ScoreRequest",
    "ScoreVerdict",
    "Verdict",
    "VerdictCache",
    "create_judge",
    "parse_verdict",
]

# backend name -> "module:Class" (relative to this package), imported only when used
JUDGES: Registry[Judge] = Registry(__name__, "judge", {
    "command": ".command:CommandJudge",
    "openai": ".openai_judge:OpenAIJudge",
    "anthropic": ".anthropic_judge:AnthropicJudge",
})


def create_judge(name: str, **options: Any) -> Judge:
    """The backend registered as ``name`` (``JUDGES.register(name, "module:Class")`` adds one), built with
    ``options``: its constructor's keyword arguments."""
    return JUDGES.create(name, **options)
