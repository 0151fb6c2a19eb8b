"""Metrics of a skill's results: pure functions, in the original tool's definitions.

- completion rate = passed / total
- partial score = mean of task scores
- error rate = (errors + timeouts) / total
- consistency = 1 - population stddev of the per-run completion rates, over the runs that finished (every
  task of the run has a result); null unless at least two runs finished
- P50/P95/P99 = nearest-rank percentiles of the task latencies; tasks that never reached the skill (latency
  None: it did not start, the input did not fit its inputSchema) are left out; null when no task has one
- composite = 0.5 * CR + 0.2 * (1 - latP95_norm) + 0.3 * (1 - ER), latP95_norm = P95 / maxLatencyMs (else the
  timeout), clamped to [0, 1]. Without any latency (no task reached the skill) the latency term is 0, as
  for the slowest skill: a skill is never rewarded for speed it did not show

Headline metrics are rounded to 4 decimals.

The benchmark's ``scoringMethod`` may replace the partial score (:func:`weighted_mean`, :func:`pass_at_k`);
the confidence interval of the mean task score is :func:`.estimators.bootstrap_ci`, from ``CI_MIN_RESULTS``.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from ..results import TaskResult
from .estimators import pass_at_k_task

__all__ = ["CI_MIN_RESULTS", "nearest_rank", "composite_score", "skill_summary", "weighted_mean", "pass_at_k"]


def nearest_rank(sorted_values: Sequence[float], percentile: float) -> float:
    """The nearest-rank percentile of already sorted values (0 for no values)."""
    if not sorted_values:
        return 0.0
    rank = max(1, math.ceil(percentile / 100 * len(sorted_values)))
    return sorted_values[min(rank, len(sorted_values)) - 1]


def composite_score(completion_rate: float, error_rate: float, p95_ms: float | None,
                    latency_budget_ms: float) -> float:
    """The composite; ``p95_ms`` None (no latency measured) makes the latency term 0."""
    norm = 1.0
    if p95_ms is not None and latency_budget_ms > 0:
        norm = min(1.0, max(0.0, p95_ms / latency_budget_ms))
    return 0.5 * completion_rate + 0.2 * (1 - norm) + 0.3 * (1 - error_rate)


def _r(value: float) -> float:
    return round(value, 4)


def _opt(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def skill_summary(results: Sequence[TaskResult], *, runs: int, latency_budget_ms: float,
                  tasks_per_run: int | None = None) -> dict[str, Any]:
    """The ``summary``, ``latency`` and ``tokenCost`` parts of a SkillCompletionReport.

    A run counts as finished for consistency when it has ``tasks_per_run`` results (any number when None).

    With no results (a run interrupted before this skill's first task finished) every metric is None:
    there is nothing to measure, and a 0 would read as a verdict.
    """
    total = len(results)
    if not total:
        none = dict.fromkeys(("completionRate", "partialScore", "errorRate", "consistencyScore", "compositeScore"))
        counts = dict.fromkeys(("totalTasks", "passed", "failed", "errors", "timeouts"), 0)
        return {"summary": {**none, **counts}, "latency": dict.fromkeys(("p50Ms", "p95Ms", "p99Ms")),
                "tokenCost": None}
    passed = sum(1 for r in results if r.status == "pass")
    errors = sum(1 for r in results if r.status == "error")
    timeouts = sum(1 for r in results if r.status == "timeout")
    completion = passed / total
    error_rate = (errors + timeouts) / total
    partial = sum(r.score for r in results) / total

    consistency: float | None = None
    if runs >= 2:
        per_run: dict[int, list[int]] = {}
        for r in results:
            per_run.setdefault(r.run_id, []).append(r.status == "pass")
        rates = [sum(v) / len(v) for v in per_run.values() if tasks_per_run is None or len(v) >= tasks_per_run]
        consistency = _r(1 - statistics.pstdev(rates)) if len(rates) >= 2 else None

    latencies = sorted(r.latency_ms for r in results if r.latency_ms is not None)
    p50, p95, p99 = (nearest_rank(latencies, p) if latencies else None for p in (50, 95, 99))

    usages = [r.usage for r in results if r.usage is not None]
    token_cost = None
    if usages:
        token_cost = {
            "promptTokens": sum(u.prompt_tokens for u in usages),
            "completionTokens": sum(u.completion_tokens for u in usages),
            "totalTokens": sum(u.total_tokens for u in usages),
        }
    return {
        "summary": {
            "completionRate": _r(completion),
            "partialScore": _r(partial),
            "errorRate": _r(error_rate),
            "consistencyScore": consistency,
            "compositeScore": _r(composite_score(completion, error_rate, p95, latency_budget_ms)),
            "totalTasks": total,
            "passed": passed,
            "failed": total - passed - errors - timeouts,
            "errors": errors,
            "timeouts": timeouts,
        },
        "latency": {"p50Ms": _opt(p50), "p95Ms": _opt(p95), "p99Ms": _opt(p99)},
        "tokenCost": token_cost,
    }


# ---- scoring methods ----------------------------------------------------------------------------


def weighted_mean(scores: Sequence[float], weights: Sequence[float]) -> float | None:
    """``sum(score x weight) / sum(weight)``; None when there is no weight at all (nothing to average).
    The weights are divided by the largest first, so weights near the ends of the float range still average."""
    top = max(weights, default=0.0)
    if top <= 0:
        return None
    scaled = [w / top for w in weights]
    return math.fsum(s * w for s, w in zip(scores, scaled, strict=True)) / math.fsum(scaled)


def pass_at_k(passes_by_task: Mapping[str, Sequence[bool]], k: int = 1) -> float | None:
    """The mean over tasks of the unbiased pass@k (:func:`.estimators.pass_at_k_task`) of each task's runs.
    None when there is no task, or a task has fewer than ``k`` runs (an interrupted run): the estimate cannot
    be computed, and a 0 would read as a verdict."""
    if not passes_by_task or any(len(runs) < k for runs in passes_by_task.values()):
        return None
    values = [pass_at_k_task(len(runs), sum(runs), k) for runs in passes_by_task.values()]
    return math.fsum(values) / len(values)


CI_MIN_RESULTS = 10  # a skill's summary.confidenceInterval needs this many results, as in the original
