"""One candidate description of ``routing --optimize`` run as a routing test, in ``routing-<n>/candidate-<k>/``.

The candidate is installed as the skill's frontmatter description in every run's copy of the skill (the bundle's
``SKILL.md`` bytes with only the description replaced: :mod:`.rewrite_description`); the skill's own folder is
never changed. The runs are those of a routing test (:func:`~.execute.execute_runs`): each run's files as it
finishes, one row of the store per run, the candidate a ``routing`` test of the store.

Resuming, the runs already finished are read back from their ``result.json`` and only the others run.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._atomic import write_atomic
from ..agents import Agent
from ..agents.bundle import SkillBundle, bundle_digest
from ..formats.agentskills import SKILL_MD
from ..formats.optimize_results import CandidateQuery
from ..formats.routing_results import RoutingMetrics, RoutingQueryResult, RoutingResults, routing_run_dir
from .aggregate import build_results, routing_metrics
from .execute import RunOutcome, RunSettings, execute_runs, read_skills
from .plan import RoutingPlan, RunItem
from .report import render_markdown
from .rewrite_description import replace_description

__all__ = ["CandidateRun", "finished_outcomes", "run_candidate", "set_figures", "skills_with"]

RESULTS_FILE, REPORT_FILE = "routing_results.json", "routing.md"


@dataclass
class CandidateRun:
    results: RoutingResults
    interrupted: bool
    tokens: int  # the tokens of the runs finished by this call


def skills_with(plan: RoutingPlan, description: str | None) -> list[SkillBundle]:
    """The bundles every run installs, the skill's ``SKILL.md`` carrying ``description`` (None: as it is)."""
    bundles = read_skills(plan)
    if description is None:
        return bundles
    skill = bundles[0]
    text = skill.files[SKILL_MD].decode("utf-8")
    files = {**skill.files, SKILL_MD: replace_description(text, description, file=str(plan.skill.path))
             .encode("utf-8")}
    return [SkillBundle(skill.name, files, bundle_digest(files), skill.source), *bundles[1:]]


def finished_outcomes(plan: RoutingPlan, folder: Path) -> list[RunOutcome]:
    """The runs a candidate's folder already holds (their ``result.json`` readable and of this plan)."""
    outcomes = []
    for item in plan.items():
        path = routing_run_dir(folder, item.query_index, item.run_number) / "result.json"
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if not isinstance(data, dict) or data.get("query") != item.query.query or \
                data.get("status") not in ("ok", "error", "timeout"):
            continue
        triggered = data.get("triggered")
        outcomes.append(RunOutcome(
            item, data["status"], triggered if isinstance(triggered, bool) else None,
            [str(s) for s in data.get("skills_invoked") or []], [str(s) for s in data.get("distractors_invoked") or []],
            data.get("error"), float(data.get("duration_s") or 0.0), data.get("usage") or None,
            (path.parent / "transcript.jsonl").relative_to(folder).as_posix()))
    return outcomes


def tokens_of(outcome: RunOutcome) -> int:
    usage = outcome.usage or {}
    value = usage.get("total_tokens") if isinstance(usage, dict) else None
    return int(value) if isinstance(value, int | float) else 0


def _write(folder: Path, results: RoutingResults) -> None:
    write_atomic(folder / RESULTS_FILE, json.dumps(results.model_dump(mode="json"), indent=2, ensure_ascii=False)
                 + "\n")
    write_atomic(folder / REPORT_FILE, render_markdown(results))


async def run_candidate(plan: RoutingPlan, agent: Agent, settings: RunSettings, folder: Path, *,
                        description: str | None, metadata: dict[str, Any], store: Any, store_id: str | None,
                        stop: asyncio.Event, on_run: Callable[[RunOutcome], None] | None = None,
                        executor: Any = None) -> CandidateRun:
    """Run the candidate's missing runs (all of them the first time) and write its results."""
    from ..store.routing import RoutingRunRow, add_routing_run, finish_routing

    folder.mkdir(parents=True, exist_ok=True)
    done = await asyncio.to_thread(finished_outcomes, plan, folder)
    seen = {(o.item.query_index, o.item.run_number) for o in done}
    todo: list[RunItem] = [i for i in plan.items() if (i.query_index, i.run_number) not in seen]
    skills = await asyncio.to_thread(skills_with, plan, description)
    spent = 0

    def finished(outcome: RunOutcome) -> None:
        nonlocal spent
        spent += tokens_of(outcome)
        if store is not None and store_id is not None:
            q = outcome.item.query
            add_routing_run(store, store_id, RoutingRunRow(
                outcome.item.query_index, q.query, q.should_trigger, q.invocation_type, outcome.item.run_number,
                outcome.status, outcome.triggered, outcome.skills_invoked, outcome.error, outcome.duration_s,
                outcome.usage))
        if on_run is not None:
            on_run(outcome)

    try:
        new, interrupted = await execute_runs(plan, agent, settings, folder, on_run=finished, stop=stop,
                                              skills=skills, items=todo, executor=executor)
    except BaseException:
        if store is not None and store_id is not None:
            finish_routing(store, store_id, status="failed", metrics=None, results_path=None)
        raise
    outcomes = [*done, *new]
    results = build_results(plan, outcomes, {**metadata, "interrupted": interrupted, "in_progress": False})
    await asyncio.to_thread(_write, folder, results)
    if store is not None and store_id is not None:
        finish_routing(store, store_id, status="interrupted" if interrupted else "finished",
                       metrics=results.metrics.model_dump(mode="json"), results_path=str(folder / RESULTS_FILE))
    return CandidateRun(results, interrupted or len(outcomes) < plan.total, spent)


def set_figures(queries: Sequence[RoutingQueryResult], train: Sequence[int], test: Sequence[int]
                ) -> tuple[RoutingMetrics, RoutingMetrics, list[CandidateQuery]]:
    """The metrics on the train and on the test queries, and each query's figures with its set."""
    by_index = {q.index: q for q in queries}
    sets = {i: "train" for i in train} | {i: "test" for i in test}
    rows = [CandidateQuery(index=q.index, set=sets[q.index], should_trigger=q.should_trigger, runs=q.runs,  # type: ignore[arg-type]
                           triggers=q.triggers, errors=q.errors, trigger_rate=q.trigger_rate, passed=q.passed)
            for q in queries if q.index in sets]

    def metrics(indices: Sequence[int]) -> RoutingMetrics:
        overall = routing_metrics([by_index[i] for i in indices if i in by_index])
        return RoutingMetrics(**overall.model_dump(exclude={"by_invocation_type"}))

    return metrics(train), metrics(test), rows
