"""``routing-<n>/routing_results.json`` and the layout of a routing test's folder (``eval-skills routing``)::

    routing-<n>/
      routing_results.json  routing.md
      query-<i>/run-<k>/transcript.jsonl      i the query's 1-based position, k the run
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["RoutingMetrics", "RoutingOverall", "RoutingQueryResult", "RoutingResults", "RoutingRunRecord",
           "routing_dir", "routing_run_dir"]


class RoutingRunRecord(BaseModel):
    """One agent run of one routing query. ``triggered`` is None for a run in error: a run whose agent
    failed or timed out says nothing about routing. ``skills_invoked`` lists every skill the transcript
    shows invoked (also before a failure); ``transcript`` is relative to the ``routing-<n>`` folder."""

    model_config = ConfigDict(extra="allow")

    run: int
    status: Literal["ok", "error", "timeout"]
    triggered: bool | None
    skills_invoked: list[str] = Field(default_factory=list)
    error: str | None = None
    duration_s: float = 0.0
    transcript: str | None = None


class RoutingQueryResult(BaseModel):
    """One query of ``routing_results.json``. ``runs`` counts the finished runs, errors included;
    ``trigger_rate`` = triggers / (runs - errors), None when no run finished without error (then ``passed``
    is None too); ``passed`` is ``trigger_rate >= 0.5`` for a query that should trigger, below otherwise.
    ``trigger_rate_ci`` is the 95% Wilson interval ``[lower, upper]`` of the rate (with 2 runs or more).
    ``distractors_invoked`` maps each distractor skill the agent invoked to the number of runs it did."""

    model_config = ConfigDict(extra="allow")

    index: int
    query: str
    should_trigger: bool
    invocation_type: str | None = None
    runs: int
    triggers: int
    errors: int
    trigger_rate: float | None
    trigger_rate_ci: tuple[float, float] | None = None
    passed: bool | None
    distractors_invoked: dict[str, int] = Field(default_factory=dict)
    run_results: list[RoutingRunRecord] = Field(default_factory=list)


class RoutingMetrics(BaseModel):
    """Precision, recall, F1 and accuracy over the queries with a trigger rate: the positive class is
    "should trigger", the prediction "trigger rate at least 0.5". A metric is None when undefined, and
    ``undefined`` says why; ``tp``/``fp``/``fn``/``tn`` are the counts; ``queries`` the queries counted and
    ``unscored`` those left out because every run of theirs was an error."""

    model_config = ConfigDict(extra="allow")

    precision: float | None
    recall: float | None
    f1: float | None
    accuracy: float | None
    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0
    queries: int = 0
    unscored: int = 0
    undefined: dict[str, str] = Field(default_factory=dict)


class RoutingOverall(RoutingMetrics):
    """The metrics over every query, and the same per ``invocation_type`` (queries without one are under
    ``unspecified``; empty when no query names a type)."""

    by_invocation_type: dict[str, RoutingMetrics] = Field(default_factory=dict)


class RoutingResults(BaseModel):
    """``routing_results.json``. ``metadata`` holds the skill, the agent, the settings, the run counts
    (``planned_runs``, ``finished_runs``, ``error_runs``), ``interrupted`` and the times."""

    model_config = ConfigDict(extra="allow")

    metadata: dict[str, Any]
    queries: list[RoutingQueryResult]
    metrics: RoutingOverall


def routing_dir(workspace: Path, n: int) -> Path:
    return workspace / f"routing-{n}"


def routing_run_dir(routing: Path, query_index: int, run_number: int) -> Path:
    """``query-<i>/run-<k>`` (both 1-based) inside a ``routing-<n>`` folder."""
    return routing / f"query-{query_index}" / f"run-{run_number}"
