"""Aggregation: a plan and its results become one SkillCompletionReport per skill (plain dicts)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..reports import tag_breakdown
from ..results import TaskResult
from ..stats import CI_MIN_RESULTS, bootstrap_ci, pass_at_k, skill_summary, weighted_mean
from ..stats.estimators import CI_ITERATIONS
from .plan import Plan

__all__ = ["build_reports", "partial_score"]


def partial_score(plan: Plan, results: Sequence[TaskResult]) -> float | None:
    """The partial score by the benchmark's ``scoringMethod``: ``mean`` of the task scores, ``weighted_mean``
    by each task's ``weight`` (1 unless set), or ``pass_at_k`` averaged over tasks (None when not computable)."""
    if not results:
        return None
    method = plan.benchmark.scoringMethod
    if method == "weighted_mean":
        weights = {p.task.id: p.task.weight for p in plan.tasks}
        return weighted_mean([r.score for r in results], [weights.get(r.task_id, 1.0) for r in results])
    if method == "pass_at_k":
        passes: dict[str, list[bool]] = {}
        for r in results:
            passes.setdefault(r.task_id, []).append(r.status == "pass")
        return pass_at_k(passes, plan.benchmark.k)
    return sum(r.score for r in results) / len(results)


def _evaluator_metadata(plan: Plan) -> dict[str, Any]:
    """How the numbers were made: where the benchmark came from (``built-in`` or a ``file``: built-in ids
    are also the ids of other tools' benchmarks), the scoring method, the scorers the tasks used, the
    interval's method."""
    benchmark = plan.benchmark
    meta: dict[str, Any] = {"benchmarkSource": "file" if benchmark.source is not None else "built-in",
                            "scoringMethod": benchmark.scoringMethod}
    if benchmark.scoringMethod == "pass_at_k":
        meta["k"] = benchmark.k
    meta["scorers"] = sorted({p.scorer_type for p in plan.tasks})
    meta["confidenceInterval"] = {"method": "bootstrap", "iterations": CI_ITERATIONS, "seed": 0,
                                  "minResults": CI_MIN_RESULTS}
    return meta


def build_reports(plan: Plan, results: Sequence[TaskResult], *, timestamp: str, default_timeout_ms: int,
                  timeout_override_ms: int | None = None, interrupted: bool = False) -> list[dict[str, Any]]:
    """One report per skill, in plan order, task results sorted by (run, task order), each with its task's
    ``tags``; ``tagBreakdown`` holds the completion rate and partial score per tag.

    The latency budget of the composite score is the benchmark's ``maxLatencyMs``, else the timeout the
    skill's tasks ran with (the user's, else the skill's own, else the default)."""
    order = {p.task.id: i for i, p in enumerate(plan.tasks)}
    weights = {p.task.id: p.task.weight for p in plan.tasks}
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
        report.update(skill_summary(mine, runs=plan.runs, latency_budget_ms=budget, tasks_per_run=len(plan.tasks)))
        summary = report["summary"]
        if benchmark.scoringMethod != "mean":
            score = partial_score(plan, mine)
            summary["partialScore"] = None if score is None else round(score, 4)
        summary["confidenceInterval"] = (bootstrap_ci([r.score for r in mine])
                                         if len(mine) >= CI_MIN_RESULTS else None)
        summary["inputWarnings"] = sum(1 for r in mine if r.extra.get("warnings"))
        report["evaluatorMetadata"] = _evaluator_metadata(plan)
        report["taskResults"] = [{**r.to_json(), "tags": tags.get(r.task_id, []),
                                  "weight": weights.get(r.task_id, 1.0)} for r in mine]
        report["tagBreakdown"] = tag_breakdown(report["taskResults"])
        reports.append(report)
    return reports
