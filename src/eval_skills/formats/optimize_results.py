"""``routing-<n>/optimize.json``: a description optimisation (``eval-skills routing --optimize``) and its folder::

    routing-<n>/
      optimize.json  optimize.md
      candidate-<k>/                      one per description tried, k from 1 (the original)
        routing_results.json  routing.md
        query-<i>/run-<r>/transcript.jsonl  result.json

The file is rewritten (atomically) after every step, so an interrupted optimisation can be resumed from it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .routing_results import RoutingMetrics

__all__ = ["OPTIMIZE_FILE", "OPTIMIZE_REPORT", "CandidateQuery", "ImproverAttempt", "OptimizeCandidate",
           "OptimizeQuery", "OptimizeResults", "OptimizeSplit", "OptimizeWinner", "candidate_dir"]

OPTIMIZE_FILE, OPTIMIZE_REPORT = "optimize.json", "optimize.md"


class OptimizeQuery(BaseModel):
    """A query of the routing file (``index`` 1-based) and the set the split put it in."""

    model_config = ConfigDict(extra="allow")

    index: int
    query: str
    should_trigger: bool
    invocation_type: str | None = None
    set: Literal["train", "test"]


class OptimizeSplit(BaseModel):
    model_config = ConfigDict(extra="allow")

    seed: int
    holdout: float
    train: list[int]
    test: list[int]
    counts: dict[str, dict[str, int]] = Field(default_factory=dict)
    stratified_by: list[str] = Field(default_factory=list)


class CandidateQuery(BaseModel):
    """One query's figures under one candidate description."""

    model_config = ConfigDict(extra="allow")

    index: int
    set: Literal["train", "test"]
    should_trigger: bool
    runs: int = 0
    triggers: int = 0
    errors: int = 0
    trigger_rate: float | None = None
    passed: bool | None = None


class ImproverAttempt(BaseModel):
    """One reply of the improver: the description it proposed (None when it gave none) and why it was refused."""

    model_config = ConfigDict(extra="allow")

    description: str | None = None
    refused: str | None = None
    error: str | None = None
    reasoning: str = ""


class OptimizeCandidate(BaseModel):
    """One description tried. ``status``: ``pending`` (not yet run), ``incomplete`` (some runs missing: the
    optimisation was interrupted or the token budget ran out), ``finished``. ``train`` and ``test`` are the
    metrics on each set; ``test_f1_ci`` the 95% stratified-bootstrap interval of the held-out F1."""

    model_config = ConfigDict(extra="allow")

    number: int
    origin: Literal["original", "improver"]
    description: str
    status: Literal["pending", "incomplete", "finished"] = "pending"
    folder: str
    store_id: str | None = None
    train: RoutingMetrics | None = None
    test: RoutingMetrics | None = None
    test_f1_ci: tuple[float, float] | None = None
    queries: list[CandidateQuery] = Field(default_factory=list)
    tokens: int = 0
    improver: list[ImproverAttempt] = Field(default_factory=list)  # the replies that led to it


class OptimizeWinner(BaseModel):
    """The chosen candidate, why, and how sure: its held-out F1 against the original's, with the 95% paired
    bootstrap interval of the difference."""

    model_config = ConfigDict(extra="allow")

    number: int
    why: str
    test_f1: float | None = None
    original_test_f1: float | None = None
    difference: float | None = None
    difference_ci: tuple[float, float] | None = None
    beats_original: bool = False
    sure: bool = False
    warning: str | None = None


class OptimizeResults(BaseModel):
    """``optimize.json``. ``metadata`` holds the skill, the agent, the settings, ``stop_reason``,
    ``tokens_used``, ``in_progress``, ``interrupted`` and the times."""

    model_config = ConfigDict(extra="allow")

    metadata: dict[str, Any]
    split: OptimizeSplit
    queries: list[OptimizeQuery]
    candidates: list[OptimizeCandidate] = Field(default_factory=list)
    winner: OptimizeWinner | None = None


def candidate_dir(routing: Path, number: int) -> Path:
    return routing / f"candidate-{number}"
