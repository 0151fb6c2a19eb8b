"""Metrics of a skill's results: pure functions, in the original tool's definitions.

- completion rate = passed / total
- partial score = mean of task scores
- error rate = (errors + timeouts) / total
- consistency = 1 - population stddev of the per-run completion rates (only with runs >= 2)
- P50/P95/P99 = nearest-rank percentiles of the task latencies
- composite = 0.5 * CR + 0.2 * (1 - latP95_norm) + 0.3 * (1 - ER), latP95_norm = P95 / maxLatencyMs (else the
  timeout), clamped to [0, 1]

Headline metrics are rounded to 4 decimals.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import Any

from ..results import TaskResult

__all__ = ["nearest_rank", "composite_score", "skill_summary"]


def nearest_rank(sorted_values: Sequence[float], percentile: float) -> float:
    """The nearest-rank percentile of already sorted values (0 for no values)."""
    if not sorted_values:
        return 0.0
    rank = max(1, math.ceil(percentile / 100 * len(sorted_values)))
    return sorted_values[min(rank, len(sorted_values)) - 1]


def composite_score(completion_rate: float, error_rate: float, p95_ms: float, latency_budget_ms: float) -> float:
    norm = min(1.0, max(0.0, p95_ms / latency_budget_ms)) if latency_budget_ms > 0 else 1.0
    return 0.5 * completion_rate + 0.2 * (1 - norm) + 0.3 * (1 - error_rate)


def _r(value: float) -> float:
    return round(value, 4)


def skill_summary(results: Sequence[TaskResult], *, runs: int, latency_budget_ms: float) -> dict[str, Any]:
    """The ``summary``, ``latency`` and ``tokenCost`` parts of a SkillCompletionReport.

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
        rates = [sum(v) / len(v) for v in per_run.values()]
        consistency = _r(1 - statistics.pstdev(rates)) if len(rates) >= 2 else 1.0

    latencies = sorted(r.latency_ms for r in results)
    p50, p95, p99 = (nearest_rank(latencies, p) for p in (50, 95, 99))

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
        "latency": {"p50Ms": _r(p50), "p95Ms": _r(p95), "p99Ms": _r(p99)},
        "tokenCost": token_cost,
    }
