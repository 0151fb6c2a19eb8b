"""The models of an iteration's ``benchmark.json`` (a paired run's), in the shape Anthropic's skill-creator reads
and writes (``metadata``, ``runs``, ``run_summary``), with what eval-skills adds (``statistics``,
``non_discriminating``, ``comparison``, ``grading_version``). :mod:`eval_skills.formats.workspace` re-exports
them."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from .grading import Expectation

__all__ = ["ABSummary", "ArmSummary", "Benchmark", "BenchmarkRun", "BenchmarkStatistics", "DeltaEstimate",
           "NonDiscriminating", "PassAtK", "RunResult", "Stat"]


class Stat(BaseModel):
    """``{mean, stddev, min, max}`` of a ``run_summary`` entry (stddev the sample one, 0 when n = 1)."""

    mean: float | None
    stddev: float | None
    min: float | None
    max: float | None



class RunResult(BaseModel):
    """``result`` of a ``benchmark.json`` run entry. ``pass_rate`` is None for an error run."""

    model_config = ConfigDict(extra="allow")

    pass_rate: float | None = None
    passed: int = 0
    failed: int = 0
    total: int = 0
    time_seconds: float | None = None
    tokens: int | None = None
    tool_calls: int | None = None
    errors: int = 0


class BenchmarkRun(BaseModel):
    """One entry of ``benchmark.json`` ``runs``, as skill-creator writes them."""

    model_config = ConfigDict(extra="allow")

    eval_id: int | str
    eval_name: str | None = None
    configuration: str
    run_number: int
    result: RunResult = Field(default_factory=RunResult)
    expectations: list[Expectation] = Field(default_factory=list)


class ArmSummary(BaseModel):
    """One arm of ``run_summary``: each figure ``{mean, stddev, min, max}`` over all runs of all cases."""

    model_config = ConfigDict(extra="allow")

    pass_rate: Stat | None = None
    time_seconds: Stat | None = None
    tokens: Stat | None = None


class DeltaEstimate(BaseModel):
    """``statistics.pass_rate_delta``: with_skill minus the baseline arm, estimated over cases (per case the
    mean over its runs), with the interval and the p-value of the paired sign-flip permutation test."""

    model_config = ConfigDict(extra="allow")

    estimate: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    confidence: float = 0.95
    p_value: float | None = None
    cases: int | None = None
    note: str = ""


class PassAtK(BaseModel):
    """``statistics.pass_at_k.<arm>``: a run counts as passed when all its expectations pass."""

    model_config = ConfigDict(extra="allow")

    k: int
    pass_at_k: float | None = None
    pass_hat_k: float | None = None


class BenchmarkStatistics(BaseModel):
    model_config = ConfigDict(extra="allow")

    pass_rate_delta: DeltaEstimate | None = None
    pass_at_k: dict[str, PassAtK] = Field(default_factory=dict)
    design: dict[str, Any] | None = None  # the power analysis (eval_skills.paired.power)


class NonDiscriminating(BaseModel):
    """One entry of ``benchmark.json`` ``non_discriminating``. ``counts``: per arm ``{passed, runs}``."""

    model_config = ConfigDict(extra="allow")

    eval_id: int | str
    assertion: str
    kind: str  # always_pass | always_fail | only_without_skill | flaky
    counts: dict[str, dict[str, int]] = Field(default_factory=dict)


class ABSummary(BaseModel):
    """``benchmark.json`` ``comparison``: the blind A/B verdicts, unblinded, as the skill's wins."""

    model_config = ConfigDict(extra="allow")

    wins: int = 0
    ties: int = 0
    losses: int = 0


class Benchmark(BaseModel):
    """``benchmark.json``. ``run_summary`` maps each arm to an :class:`ArmSummary` and ``delta`` to numbers
    (with_skill minus the baseline arm)."""

    model_config = ConfigDict(extra="allow")

    metadata: dict[str, Any] = Field(default_factory=dict)
    runs: list[BenchmarkRun] = Field(default_factory=list)
    run_summary: dict[str, Any] = Field(default_factory=dict)
    statistics: BenchmarkStatistics | None = None
    non_discriminating: list[NonDiscriminating] = Field(default_factory=list)
    comparison: ABSummary | None = None
    notes: list[str] = Field(default_factory=list)
