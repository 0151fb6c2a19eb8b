"""One routing test end to end: plan -> execute -> aggregate -> store -> files. Prints nothing.

Files go to ``<workspace>/routing-<n>/`` (the next free ``n``): each run's transcript as it finishes, and
``routing_results.json`` and ``routing.md`` over the runs finished so far, rewritten (atomically) at most every
``PROGRESS_EVERY`` seconds with ``metadata.in_progress`` true, then once more at the end, also when the test is
interrupted (they then hold what finished). A test killed outright still leaves the figures of the runs that
had finished a moment before. Each run is a row of the store as it finishes.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .._atomic import write_atomic
from .._version import __version__
from ..agents import Agent
from ..errors import InputError
from ..formats.routing_results import RoutingResults, routing_dir
from ..formats.workspace import next_number
from .aggregate import build_results
from .execute import RunOutcome, RunSettings, execute_runs
from .plan import RoutingPlan, check_workspace
from .report import render_markdown

__all__ = ["RoutingOutcome", "claim_routing_dir", "default_workspace", "run_routing"]

RESULTS_FILE, REPORT_FILE = "routing_results.json", "routing.md"
PROGRESS_EVERY = 1.0  # seconds between two writes of the results while the test runs


@dataclass
class RoutingOutcome:
    results: RoutingResults
    folder: Path
    interrupted: bool
    routing_id: str | None = None


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def default_workspace(plan: RoutingPlan) -> Path:
    """``<skill>-workspace`` beside the skill's folder."""
    folder = plan.skill.folder.resolve()
    return folder.parent / f"{folder.name}-workspace"


def claim_routing_dir(workspace: Path) -> Path:
    """Create and return the next free ``routing-<n>`` folder (two tests started at once get two folders)."""
    try:
        workspace.mkdir(parents=True, exist_ok=True)
        while True:
            folder = routing_dir(workspace, next_number(workspace, "routing"))
            try:
                folder.mkdir()
                return folder
            except FileExistsError:
                continue
    except OSError as exc:
        raise InputError(f"cannot create the results folder ({exc.strerror or exc})", file=str(workspace),
                         field="--workspace") from None


def _metadata(plan: RoutingPlan, agent: Agent, settings: RunSettings) -> dict[str, Any]:
    return {"skill_name": plan.skill.name, "skill_path": str(plan.skill.folder.resolve()),
            "description": plan.skill.description, "routing_file": str(plan.routing_file.resolve()),
            "agent": agent.name, "model": settings.model, "runs": plan.runs, "concurrency": settings.concurrency,
            "timeout_s": settings.timeout_s, "max_turns": settings.max_turns,
            "distractors": [{"name": d.name, "path": str(d.folder.resolve())} for d in plan.distractors],
            "threshold": 0.5, "tool_version": __version__, "isolation": agent.isolation(),
            "user_level_skills": [str(p) for p in agent.user_level_skills(
                [plan.skill.name, *(d.name for d in plan.distractors)])]}


def _write(folder: Path, results: RoutingResults) -> None:
    text = json.dumps(results.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n"
    write_atomic(folder / RESULTS_FILE, text)
    write_atomic(folder / REPORT_FILE, render_markdown(results))


async def run_routing(plan: RoutingPlan, agent: Agent, settings: RunSettings, *, workspace: Path,
                      store_path: Path | None = None, on_run: Callable[[RunOutcome], None] | None = None,
                      stop: asyncio.Event | None = None, executor: Any = None) -> RoutingOutcome:
    """Run the test. Call it once the plan and the agent are checked: from here on, things are written.
    ``executor``: where the agent's runs happen (an :class:`~eval_skills.paired.executor.Executor`; default:
    here, ``settings.concurrency`` at once)."""
    from ..store import Store
    from ..store.routing import RoutingRunRow, add_routing_run, begin_routing, finish_routing

    check_workspace(workspace, plan)
    store = Store.open(store_path) if store_path is not None else None
    folder = claim_routing_dir(workspace)
    metadata = {**_metadata(plan, agent, settings), "started_at": _now(), "finished_at": None,
                "interrupted": None, "in_progress": True}
    routing_id = None
    done: list[RunOutcome] = []
    written = time.monotonic()
    try:
        if store is not None:
            config = {k: metadata[k] for k in ("skill_path", "routing_file", "runs", "concurrency", "timeout_s",
                                               "max_turns", "distractors")}
            routing_id = begin_routing(store, skill_name=plan.skill.name, agent=agent.name, model=settings.model,
                                       config={**config, "results": str(folder)}, tool_version=__version__)
            metadata["store_id"] = routing_id

        def finished(outcome: RunOutcome) -> None:
            nonlocal written
            done.append(outcome)
            if time.monotonic() - written >= PROGRESS_EVERY:
                _write(folder, build_results(plan, done, metadata))
                written = time.monotonic()
            if store is not None and routing_id is not None:
                q = outcome.item.query
                add_routing_run(store, routing_id, RoutingRunRow(
                    outcome.item.query_index, q.query, q.should_trigger, q.invocation_type,
                    outcome.item.run_number, outcome.status, outcome.triggered, outcome.skills_invoked,
                    outcome.error, outcome.duration_s, outcome.usage))
            if on_run is not None:
                on_run(outcome)

        try:
            outcomes, interrupted = await execute_runs(plan, agent, settings, folder, on_run=finished, stop=stop,
                                                       executor=executor)
        except BaseException:
            if store is not None and routing_id is not None:
                finish_routing(store, routing_id, status="failed", metrics=None, results_path=None)
            raise
        metadata.update(finished_at=_now(), interrupted=interrupted, in_progress=False)
        results = build_results(plan, outcomes, metadata)
        await asyncio.to_thread(_write, folder, results)
        if store is not None and routing_id is not None:
            finish_routing(store, routing_id, status="interrupted" if interrupted else "finished",
                           metrics=results.metrics.model_dump(mode="json"), results_path=str(folder / RESULTS_FILE))
    finally:
        if store is not None:
            store.close()
    return RoutingOutcome(results, folder, interrupted, routing_id)
