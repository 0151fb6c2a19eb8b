"""The files of a paired-run or routing workspace, in the shapes Anthropic's skill-creator reads and writes.

Layout (``<skill>-workspace/`` beside the skill unless ``--workspace`` says otherwise)::

    iteration-<n>/
      benchmark.json  benchmark.md  feedback.json
      eval-<id>/
        eval_metadata.json                    the case as run: prompt, expected output, files, assertions
        inputs/<file name>                    the case's fixture files
        comparison.json                       the blind A/B verdicts of this case
        <arm>/run-<k>/                        arm: with_skill | without_skill | old_skill
          outputs/response.md                 the agent's final response
          outputs/<path>                      copies of files the agent created or changed
          transcript.jsonl                    one TranscriptEvent per line
          timing.json  grading.json
    routing-<n>/                              (formats.routing_results)
      routing_results.json  routing.md
      query-<i>/run-<k>/transcript.jsonl

A run's id (``feedback.json`` ``run_id``) is its folder relative to the iteration with ``/`` as ``-``:
``eval-3-with_skill-run-1``.

``TranscriptEvent`` is also the JSON-lines event format a ``command`` agent may print (``--agent-output
events``): ``message``, ``tool_call``, ``skill``, ``usage`` and ``final`` lines.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from .grading import Expectation, Grading, GradingSummary
from .paired_benchmark import (
    ABSummary,
    ArmSummary,
    Benchmark,
    BenchmarkRun,
    BenchmarkStatistics,
    DeltaEstimate,
    NonDiscriminating,
    PassAtK,
    RunResult,
    Stat,
)

__all__ = [
    "ARMS",
    "BASELINE_ARMS",
    "EVAL_METADATA_FILE",
    "INPUTS_DIR",
    "ABSummary",
    "ArmSummary",
    "Benchmark",
    "BenchmarkRun",
    "BenchmarkStatistics",
    "Comparison",
    "DeltaEstimate",
    "EvalMetadata",
    "Expectation",
    "Feedback",
    "FinalEvent",
    "Grading",
    "GradingSummary",
    "MessageEvent",
    "NonDiscriminating",
    "PassAtK",
    "Review",
    "RunResult",
    "SkillEvent",
    "Stat",
    "Timing",
    "ToolCallEvent",
    "TranscriptEvent",
    "UsageEvent",
    "iteration_dir",
    "next_number",
    "review_time",
    "run_dir",
    "run_id",
]

Arm = Literal["with_skill", "without_skill", "old_skill"]
ARMS: tuple[str, ...] = ("with_skill", "without_skill", "old_skill")
BASELINE_ARMS: tuple[str, ...] = ("without_skill", "old_skill")

# ---- layout ------------------------------------------------------------------------------------------


def iteration_dir(workspace: Path, n: int) -> Path:
    return workspace / f"iteration-{n}"


def run_dir(iteration: Path, case_key: str, arm: str, run_number: int) -> Path:
    return iteration / f"eval-{case_key}" / arm / f"run-{run_number}"


def run_id(case_key: str, arm: str, run_number: int) -> str:
    """``eval-<id>-<arm>-run-<k>``: the run's folder relative to its iteration, ``/`` replaced by ``-``."""
    return f"eval-{case_key}-{arm}-run-{run_number}"


def next_number(workspace: Path, prefix: str) -> int:
    """One more than the highest ``<prefix>-<n>`` folder in ``workspace`` (1 when there is none)."""
    pattern = re.compile(rf"{re.escape(prefix)}-(\d+)")
    numbers = [int(m.group(1)) for p in workspace.glob(f"{prefix}-*")
               if p.is_dir() and (m := pattern.fullmatch(p.name))] if workspace.is_dir() else []
    return max(numbers, default=0) + 1


# ---- transcript events -------------------------------------------------------------------------------


class _Event(BaseModel):
    model_config = ConfigDict(extra="allow")


class MessageEvent(_Event):
    """Text the agent (or the user, or a system prompt) wrote along the way."""

    type: Literal["message"] = "message"
    role: str = "assistant"
    text: str


class ToolCallEvent(_Event):
    """One tool call, in the order made, with its result when the agent reported one."""

    type: Literal["tool_call"] = "tool_call"
    id: str | None = None
    name: str
    input: Any = None
    result: Any = None
    is_error: bool = False


class SkillEvent(_Event):
    """A skill was invoked. ``detected_by`` says how we know (``Skill tool call``, ``read of SKILL.md``,
    ``load_skill``, ``skill tool``, ``reported by the agent``); ``tool_call_id`` points at the call."""

    type: Literal["skill"] = "skill"
    skill: Annotated[str, Field(min_length=1, pattern=r"\S")]  # a name, never blank
    detected_by: str = "reported by the agent"
    tool_call_id: str | None = None


_REPORTED = frozenset({"input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens",
                       "total_tokens", "cost_usd"})


class UsageEvent(_Event):
    """Token usage and cost, as the agent reported them (summed by the reader when several appear). ``model``
    names the model they belong to when the agent said (they are also summed per model)."""

    type: Literal["usage"] = "usage"
    model: str | None = None
    input_tokens: Annotated[int, Field(ge=0)] = 0  # counts and cost are never negative: an agent saying so is
    output_tokens: Annotated[int, Field(ge=0)] = 0  # no usage line (a budget must not grow from it)
    cache_read_tokens: Annotated[int, Field(ge=0)] = 0
    cache_write_tokens: Annotated[int, Field(ge=0)] = 0
    total_tokens: Annotated[int, Field(ge=0)] | None = None
    cost_usd: Annotated[float, Field(ge=0, allow_inf_nan=False)] | None = None

    @property
    def reported(self) -> bool:
        """Whether the agent gave at least one number (a count or the cost): a usage line without any is no
        measurement, and a run with only such lines gets an estimate."""
        return any(getattr(self, name) is not None for name in self.model_fields_set & _REPORTED)


class FinalEvent(_Event):
    """The agent's final response."""

    type: Literal["final"] = "final"
    text: str


TranscriptEvent = Annotated[MessageEvent | ToolCallEvent | SkillEvent | UsageEvent | FinalEvent,
                            Field(discriminator="type")]

# ---- per run -----------------------------------------------------------------------------------------


class Timing(BaseModel):
    """``timing.json``. ``token_measurement`` is ``measured`` (the agent reported it), ``partial`` (the agent's
    output ended before its final count: the figures it gave, a lower bound), ``estimated`` (we estimated it
    because the agent reported nothing) or ``none``."""

    model_config = ConfigDict(extra="allow")

    total_tokens: int | None = None
    duration_ms: int | None = None
    total_duration_seconds: float
    token_measurement: Literal["measured", "partial", "estimated", "none"] = "none"

    @model_validator(mode="before")
    @classmethod
    def _as_skill_creator_writes_it(cls, data: Any) -> Any:
        """skill-creator's ``timing.json`` (written from the task notification) may lack ``duration_ms``,
        ``total_duration_seconds`` (either gives the other; else ``executor_duration_seconds``) and always
        lacks ``token_measurement``: its ``total_tokens`` is the count the agent reported, a measurement."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        seconds, ms = data.get("total_duration_seconds"), data.get("duration_ms")
        if seconds is None and isinstance(ms, int | float) and not isinstance(ms, bool):
            data["total_duration_seconds"] = ms / 1000
        elif seconds is None and data.get("executor_duration_seconds") is not None:
            data["total_duration_seconds"] = data["executor_duration_seconds"]
        if "token_measurement" not in data:
            data["token_measurement"] = "measured" if data.get("total_tokens") is not None else "none"
        return data


# ---- per iteration -----------------------------------------------------------------------------------


def review_time() -> str:
    """Now, as skill-creator's viewer stamps a review (JavaScript's ``toISOString``):
    ``2026-01-15T10:30:00.123Z``."""
    from datetime import UTC, datetime

    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Review(BaseModel):
    """One review of ``feedback.json``; ``timestamp`` is when it was written (an empty one: when it was
    added), as :func:`review_time` writes it."""

    model_config = ConfigDict(extra="allow")

    run_id: str
    feedback: str = ""
    timestamp: str | None = None


class Feedback(BaseModel):
    """``feedback.json``: one review per run and the review's status."""

    model_config = ConfigDict(extra="allow")

    reviews: list[Review] = Field(default_factory=list)
    status: Literal["in_progress", "complete"] = "in_progress"


class Comparison(BaseModel):
    """One blind A/B verdict of ``comparison.json`` (which holds ``{"comparisons": [...]}``)."""

    model_config = ConfigDict(extra="allow")

    run_number: int
    order: dict[str, str]  # {"A": "<arm>", "B": "<arm>"}
    winner: Literal["A", "B", "TIE"] | None
    winner_arm: str | None  # the unblinded winner ("TIE" or None when there is none)
    reasoning: str = ""


# ---- what the review page reads beyond the files above ------------------------------------------------

EVAL_METADATA_FILE = "eval_metadata.json"  # eval-<id>/eval_metadata.json
INPUTS_DIR = "inputs"  # eval-<id>/inputs/<file name>: the case's fixture files, as copied into each run


class EvalMetadata(BaseModel):
    """``eval-<id>/eval_metadata.json``: the case as it was run, so the workspace explains itself after the
    skill or its ``evals.json`` changed (skill-creator's viewer reads ``prompt`` from the same file)."""

    model_config = ConfigDict(extra="allow")

    eval_id: int | str
    eval_name: str | None = None
    prompt: str = ""
    expected_output: str = ""
    files: list[str] = Field(default_factory=list)
    assertions: list[str] = Field(default_factory=list)


