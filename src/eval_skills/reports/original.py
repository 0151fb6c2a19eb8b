"""Reports written by the original eval-skills (TypeScript), read as ours.

Its SkillCompletionReport has ``skillId``, ``skillVersion``, ``benchmarkId``, ``timestamp``, ``summary``
{``completionRate``, ``partialScore``, ``errorRate``, ``consistencyScore``, ``compositeScore``,
``confidenceInterval``?}, ``latency``, ``tokenCost``?, ``taskResults`` and ``evaluatorMetadata``. It lacks
the counts our renderers show (``summary.totalTasks``, ``passed``, ``failed``, ``errors``, ``timeouts``, the
report's ``runs``) and a task result may lack ``runId``: :func:`normalize_report` derives them from the task
results, so such a report renders with its numbers rather than "n/a". Values a report has are never changed.
"""

from __future__ import annotations

from typing import Any

__all__ = ["normalize_report"]

_COUNTS = {"passed": ("pass",), "errors": ("error",), "timeouts": ("timeout",)}


def normalize_report(report: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``report`` with what can be derived from its ``taskResults`` filled in where missing."""
    results = report.get("taskResults")
    if not isinstance(results, list):
        return report
    tasks = [dict(r) for r in results if isinstance(r, dict)]
    for task in tasks:
        if task.get("runId") is None:
            task["runId"] = 1  # the original counts a result without a run id as run 1
    out = {**report, "taskResults": tasks if len(tasks) == len(results) else results}
    summary = report.get("summary")
    if isinstance(summary, dict):
        statuses = [t.get("status") for t in tasks]
        derived: dict[str, Any] = {"totalTasks": len(tasks)}
        derived.update({key: sum(1 for s in statuses if s in wanted) for key, wanted in _COUNTS.items()})
        derived["failed"] = sum(1 for s in statuses if s == "fail")
        merged = dict(summary)
        for key, value in derived.items():
            if merged.get(key) is None:
                merged[key] = value
        out["summary"] = merged
    if "runs" not in report:
        out["runs"] = len({t["runId"] for t in tasks}) or 1
    return out
