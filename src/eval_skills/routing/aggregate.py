"""From finished runs to ``routing_results.json``: per query, then overall and per ``invocation_type``.

- Per query: ``runs`` finished (errors included), ``triggers`` (runs that invoked the skill), ``errors``;
  ``trigger_rate`` = triggers / (runs - errors), None when every run was an error; with 2 runs or more planned,
  the 95% Wilson interval of that rate. ``passed``: rate >= 0.5 for a query that should trigger, below 0.5 for
  one that should not; None without a rate.
- Metrics (:mod:`eval_skills.stats.classification`): the positive class is "should trigger", the prediction
  "trigger rate at least 0.5", over the queries that have a rate (the others are counted as ``unscored``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from ..formats.routing_results import (
    RoutingMetrics,
    RoutingOverall,
    RoutingQueryResult,
    RoutingResults,
    RoutingRunRecord,
)
from ..stats.classification import classification_metrics, confusion
from ..stats.estimators import wilson_interval
from .execute import RunOutcome
from .plan import RoutingPlan

__all__ = ["THRESHOLD", "UNSPECIFIED", "build_results", "query_results", "routing_metrics"]

THRESHOLD = 0.5  # a query "triggers" when its trigger rate is at least this
UNSPECIFIED = "unspecified"  # the invocation_type group of queries that name none


def query_results(plan: RoutingPlan, outcomes: Sequence[RunOutcome]) -> list[RoutingQueryResult]:
    """One result per query of the plan, in the routing file's order (a query with no finished run has
    ``runs`` 0 and no rate)."""
    by_query: dict[int, list[RunOutcome]] = {}
    for outcome in outcomes:
        by_query.setdefault(outcome.item.query_index, []).append(outcome)
    results = []
    for index, query in enumerate(plan.queries, start=1):
        runs = sorted(by_query.get(index, []), key=lambda o: o.item.run_number)
        errors = sum(1 for o in runs if o.triggered is None)
        triggers = sum(1 for o in runs if o.triggered)
        scored = len(runs) - errors
        rate = round(triggers / scored, 4) if scored else None
        interval = wilson_interval(triggers, scored) if plan.runs > 1 and scored else None
        passed = None if rate is None else (rate >= THRESHOLD) == query.should_trigger
        distractors = Counter(name for o in runs for name in o.distractors_invoked)
        results.append(RoutingQueryResult(
            index=index, query=query.query, should_trigger=query.should_trigger,
            invocation_type=query.invocation_type, runs=len(runs), triggers=triggers, errors=errors,
            trigger_rate=rate, trigger_rate_ci=interval, passed=passed, distractors_invoked=dict(distractors),
            run_results=[RoutingRunRecord(run=o.item.run_number, status=o.status,
                                          triggered=o.triggered, skills_invoked=o.skills_invoked, error=o.error,
                                          duration_s=o.duration_s, transcript=o.transcript) for o in runs]))
    return results


def _metrics(queries: Sequence[RoutingQueryResult]) -> dict[str, Any]:
    scored = [q for q in queries if q.trigger_rate is not None]
    matrix = confusion((q.should_trigger, (q.trigger_rate or 0.0) >= THRESHOLD) for q in scored)
    values = classification_metrics(matrix, positive="should_trigger true",
                                    predicted="triggered (trigger rate at least 0.5)", unit=("query", "queries"))
    if len(scored) < len(queries) and values["undefined"]:
        values["undefined"] = {k: f"{v} ({len(queries) - len(scored)} queries without a finished run left out)"
                               for k, v in values["undefined"].items()}
    return {**values, "queries": len(scored), "unscored": len(queries) - len(scored)}


def routing_metrics(queries: Sequence[RoutingQueryResult]) -> RoutingOverall:
    """Precision, recall, F1 and accuracy overall and per invocation type (see the module doc)."""
    groups: dict[str, list[RoutingQueryResult]] = {}
    if any(q.invocation_type for q in queries):
        for q in queries:
            groups.setdefault(q.invocation_type or UNSPECIFIED, []).append(q)
    return RoutingOverall(**_metrics(queries),
                          by_invocation_type={name: RoutingMetrics(**_metrics(group))
                                              for name, group in sorted(groups.items())})


def build_results(plan: RoutingPlan, outcomes: Sequence[RunOutcome], metadata: dict[str, Any]
                  ) -> RoutingResults:
    queries = query_results(plan, outcomes)
    counts = {"planned_runs": plan.total, "finished_runs": len(outcomes),
              "error_runs": sum(1 for o in outcomes if o.triggered is None)}
    return RoutingResults(metadata={**metadata, **counts}, queries=queries, metrics=routing_metrics(queries))
