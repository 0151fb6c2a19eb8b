"""Aggregation: a plan and its results become one SkillCompletionReport per skill (plain dicts)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .plan import Plan
from .reports import tag_breakdown
from .results import TaskResult
from .stats import skill_summary

__all__ = ["build_reports"]


def build_reports(plan: Plan, results: Sequence[TaskResult], *, timestamp: str, default_timeout_ms: int,
                  timeout_override_ms: int | None = None, interrupted: bool = False) -> list[dict[str, Any]]:
    """One report per skill, in plan order, task results sorted by (run, task order), each with its task's
    ``tags``; ``tagBreakdown`` holds the completion rate and partial score per tag.

    The latency budget of the composite score is the benchmark's ``maxLatencyMs``, else the timeout the
    skill's tasks ran with (the user's, else the skill's own, else the default)."""
    order = {p.task.id: i for i, p in enumerate(plan.tasks)}
    tags = {p.task.id: list(p.task.tags) for p in plan.tasks}
    by_skill: dict[str, list[TaskResult]] = {s.id: [] for s in plan.skills}
    for result in results:
        by_skill.setdefault(result.skill_id, []).append(result)
    benchmark = plan.benchmark
    reports = []
    for skill in plan.skills:
        mine = sorted(by_skill[skill.id], key=lambda r: (r.run_id, order.get(r.task_id, 0)))
        budget = (benchmark.maxLatencyMs or timeout_override_ms or skill.adapter.timeoutMs
                  or default_timeout_ms)
        report: dict[str, Any] = {
            "skillId": skill.id,
            "skillName": skill.manifest.name,
            "skillVersion": skill.manifest.version,
            "adapterType": skill.manifest.adapterType,
            "benchmarkId": benchmark.id,
            "benchmarkVersion": benchmark.version,
            "timestamp": timestamp,
            "runs": plan.runs,
            "plannedTasks": len(plan.tasks) * plan.runs,
            "interrupted": interrupted,
        }
        report.update(skill_summary(mine, runs=plan.runs, latency_budget_ms=budget))
        report["taskResults"] = [{**r.to_json(), "tags": tags.get(r.task_id, [])} for r in mine]
        report["tagBreakdown"] = tag_breakdown(report["taskResults"])
        reports.append(report)
    return reports
