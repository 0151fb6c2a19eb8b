"""The records that flow from the runner to scoring, stats, the store and the reports."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Status = Literal["pass", "fail", "error", "timeout"]


@dataclass(slots=True)
class Usage:
    """Token usage of one call, when the skill reported it."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0

    def to_json(self) -> dict[str, int]:
        return {"promptTokens": self.prompt_tokens, "completionTokens": self.completion_tokens,
                "totalTokens": self.total_tokens}


@dataclass(slots=True)
class Invocation:
    """What an adapter got back from one successful call."""

    output: Any
    usage: Usage | None = None
    latency_ms: float | None = None  # the adapter's own measure, when it knows better than the wall clock


@dataclass(slots=True)
class Score:
    """A scorer's verdict on one output."""

    value: float
    passed: bool
    reason: str = ""


@dataclass(slots=True)
class TaskResult:
    """One (skill, task, run) item, finished. Failures are results too: ``error`` says why a call or scorer
    failed; ``reason`` is the scorer's explanation of a pass or fail. ``latency_ms`` is None for a task
    that never reached the skill (it did not start; the input did not fit its inputSchema)."""

    task_id: str
    skill_id: str
    run_id: int  # 1-based
    status: Status
    score: float
    latency_ms: float | None
    output: Any = None
    error: str | None = None
    scorer_type: str = ""
    reason: str = ""
    usage: Usage | None = None
    attempts: int = 1
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The original tool's TaskResult shape (field names are a compatibility promise), plus
        ``warnings`` when there are any (an input that did not match the skill's inputSchema)."""
        data = {
            "taskId": self.task_id,
            "skillId": self.skill_id,
            "runId": self.run_id,
            "status": self.status,
            "score": self.score,
            "latencyMs": None if self.latency_ms is None else round(self.latency_ms, 3),
            "output": self.output,
            "error": self.error,
            "scorerType": self.scorer_type,
            "reason": self.reason,
            "usage": self.usage.to_json() if self.usage else None,
            "attempts": self.attempts,
        }
        warnings = self.extra.get("warnings")
        if warnings:
            data["warnings"] = list(warnings)
        return data
