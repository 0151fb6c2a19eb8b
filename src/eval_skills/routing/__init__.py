"""Routing tests: does the agent pick the skill up when it should, and only then?

Read top-down, as the data flows:

- :mod:`.plan`: load and check the skill, its ``evals/routing.json`` queries and the distractor skills; the
  runs (every query x ``runs``);
- :mod:`.execute`: each run in a fresh workspace holding the skill and the distractors, ``concurrency`` at a
  time; the trigger decided from the transcript's skill invocations; a failed run is an error, never a miss;
- :mod:`.aggregate`: per query (trigger rate, Wilson interval, pass) and overall and per ``invocation_type``
  (precision, recall, F1, accuracy: :mod:`eval_skills.stats.classification`);
- :mod:`.report`: ``routing.md``;
- :mod:`.run`: the whole test, writing ``routing-<n>/`` and the store's rows;
- :mod:`.static`: the description check that runs no agent;
- :mod:`.optimize` (``routing --optimize``): improve the description from the queries, over :mod:`.split` (the
  train/test split), :mod:`.candidate_runs` (each candidate a routing test), :mod:`.improver` (the model that
  proposes, and the checks of its replies), :mod:`.optimize_choice` (the winner and how sure),
  :mod:`.optimize_report` (``optimize.md``) and :mod:`.rewrite_description` (``--write``).

    plan = load_plan(Path("skills/pdf"), runs=3)
    outcome = asyncio.run(run_routing(plan, agent, RunSettings(concurrency=4), workspace=Path("pdf-workspace")))
    outcome.results.metrics.f1
"""

from __future__ import annotations

from .aggregate import THRESHOLD, build_results, query_results, routing_metrics
from .execute import RunOutcome, RunSettings, decide, execute_runs
from .plan import (
    RoutingPlan,
    RunItem,
    check_agent_reports_skills,
    check_min_f1,
    check_workspace,
    find_distractors,
    load_plan,
    load_queries,
    routing_file_of,
)
from .report import render_markdown
from .run import REPORT_FILE, RESULTS_FILE, RoutingOutcome, default_workspace, run_routing
from .static import StaticReport, key_terms, static_check

__all__ = [
    "REPORT_FILE",
    "RESULTS_FILE",
    "THRESHOLD",
    "RoutingOutcome",
    "RoutingPlan",
    "RunItem",
    "RunOutcome",
    "RunSettings",
    "StaticReport",
    "build_results",
    "check_agent_reports_skills",
    "check_min_f1",
    "check_workspace",
    "decide",
    "default_workspace",
    "execute_runs",
    "find_distractors",
    "key_terms",
    "load_plan",
    "load_queries",
    "query_results",
    "render_markdown",
    "routing_file_of",
    "routing_metrics",
    "run_routing",
    "static_check",
]
