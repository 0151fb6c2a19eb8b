"""``routing --optimize``: improve a skill's description from its routing tests. Prints nothing.

The routing file's queries are split once (:mod:`.split`, stratified and seeded) into train and test. Candidate
1 is the skill's own description; each candidate is run as a routing test with its description installed
(:mod:`.candidate_runs`), and its precision, recall, F1 and per-query trigger rates are recorded on train and on
test separately. After each candidate, the improver (:mod:`.improver`) proposes the next from the train
failures of the one just run and the train figures of every earlier one. It stops when:

- ``iterations`` candidates have run (the original counts as the first);
- a candidate gets every train query right (``train_perfect``);
- the agent runs of this invocation have used ``budget_tokens`` tokens (no run starts after that: the candidate
  then running is ``incomplete``, and ``--resume`` finishes it);
- the improver gives no usable description (``improver``), every run of a candidate failed (``errors``), or on
  Ctrl-C (``interrupted``).

The winner and how sure it is come from :mod:`.optimize_choice`. Everything goes to ``routing-<n>/``
(:mod:`eval_skills.formats.optimize_results`); ``optimize.json`` is rewritten after every step, and
:func:`run_optimize` with ``resume`` continues from it, refusing when the skill, the queries or the settings
that decide the split and the runs have changed.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .._atomic import write_atomic
from .._version import __version__
from ..agents import Agent
from ..errors import InputError
from ..formats.optimize_results import (
    OPTIMIZE_FILE,
    OPTIMIZE_REPORT,
    OptimizeCandidate,
    OptimizeQuery,
    OptimizeResults,
    OptimizeSplit,
    candidate_dir,
)
from ..formats.workspace import next_number
from ..judges import ImproveCandidate, ImproveQuery, ImproveRequest, Judge
from .candidate_runs import run_candidate, set_figures
from .execute import RunOutcome, RunSettings
from .improver import Proposal, propose
from .optimize_choice import choose_winner, test_f1_interval
from .optimize_report import render_optimize_markdown
from .plan import RoutingPlan, check_workspace
from .run import _metadata as routing_metadata
from .run import claim_routing_dir
from .split import Split, split_queries

__all__ = ["OptimizeOutcome", "OptimizeSettings", "find_resumable", "fingerprint", "fingerprint_of_skill",
           "run_optimize"]

FINGERPRINT = ("skill_name", "skill_md_sha256", "queries_sha256", "runs", "agent", "seed", "holdout", "distractors")


@dataclass(frozen=True)
class OptimizeSettings:
    iterations: int = 5
    holdout: float = 0.4
    seed: int = 0
    budget_tokens: int | None = None


@dataclass
class OptimizeOutcome:
    results: OptimizeResults
    folder: Path
    interrupted: bool


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def fingerprint_of_skill(plan: RoutingPlan) -> str:
    """The SHA-256 of the skill's ``SKILL.md`` as it is now."""
    return _sha256(plan.skill.path.read_bytes())


def fingerprint(plan: RoutingPlan, agent: Agent, settings: OptimizeSettings) -> dict[str, Any]:
    """What must not change between an optimisation and its resumption."""
    queries = json.dumps([q.model_dump(mode="json") for q in plan.queries], sort_keys=True).encode()
    return {"skill_name": plan.skill.name, "skill_md_sha256": fingerprint_of_skill(plan),
            "queries_sha256": _sha256(queries), "runs": plan.runs, "agent": agent.name, "seed": settings.seed,
            "holdout": settings.holdout, "distractors": sorted(d.name for d in plan.distractors)}


def find_resumable(workspace: Path) -> Path:
    """The latest ``routing-<n>`` of ``workspace`` holding an optimisation that did not finish (InputError when
    there is none)."""
    latest = next_number(workspace, "routing") - 1 if workspace.is_dir() else 0
    for n in range(latest, 0, -1):
        path = workspace / f"routing-{n}" / OPTIMIZE_FILE
        if path.is_file():
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
                state = data.get("metadata", {}).get("state") if isinstance(data, dict) else None
            except (OSError, ValueError, AttributeError):
                raise InputError("cannot be read as an optimisation to resume", file=str(path),
                                 field="--resume") from None
            if state == "finished":
                raise InputError(f"the latest optimisation ({path.parent.name}) finished: nothing to resume",
                                 file=str(path), field="--resume", hint="drop --resume to start a new one")
            return path.parent
    raise InputError("holds no optimisation to resume", file=str(workspace), field="--resume",
                     hint="drop --resume to start one")


def _new_state(plan: RoutingPlan, agent: Agent, run_settings: RunSettings, settings: OptimizeSettings,
               split: Split, improver: Judge) -> OptimizeResults:
    sets = {i: "train" for i in split.train} | {i: "test" for i in split.test}
    meta = {**routing_metadata(plan, agent, run_settings), "iterations": settings.iterations,
            "budget_tokens": settings.budget_tokens, "seed": settings.seed, "holdout": settings.holdout,
            "improver": {"backend": improver.backend, "model": improver.model},
            "fingerprint": fingerprint(plan, agent, settings), "started_at": _now(), "finished_at": None,
            "state": "running", "stop_reason": None, "stop_detail": None, "tokens_used": 0}
    return OptimizeResults(
        metadata=meta, split=OptimizeSplit(**split.to_json(plan.queries)),
        queries=[OptimizeQuery(index=i, query=q.query, should_trigger=q.should_trigger,
                               invocation_type=q.invocation_type, set=sets[i])  # type: ignore[arg-type]
                 for i, q in enumerate(plan.queries, start=1)],
        candidates=[OptimizeCandidate(number=1, origin="original", description=plan.skill.description,
                                      folder="candidate-1")])


def _load_state(folder: Path, plan: RoutingPlan, agent: Agent, settings: OptimizeSettings) -> OptimizeResults:
    path = folder / OPTIMIZE_FILE
    try:
        state = OptimizeResults.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot be resumed: {type(exc).__name__}", file=str(path), field="--resume") from None
    was, now = state.metadata.get("fingerprint") or {}, fingerprint(plan, agent, settings)
    for key in FINGERPRINT:
        if was.get(key) != now[key]:
            what = {"skill_md_sha256": "the skill's SKILL.md", "queries_sha256": "the routing queries"}.get(key, key)
            raise InputError(f"{what} changed since this optimisation started: it cannot be resumed",
                             file=str(path), field="--resume", hint="start a new one without --resume, or give "
                             "the same settings (--seed, --holdout, --runs, --agent, --distractors)")
    state.metadata.update(iterations=settings.iterations, budget_tokens=settings.budget_tokens, state="running",
                          stop_reason=None, stop_detail=None, finished_at=None)
    return state


def save(folder: Path, state: OptimizeResults) -> None:
    write_atomic(folder / OPTIMIZE_FILE, json.dumps(state.model_dump(mode="json"), indent=2, ensure_ascii=False)
                 + "\n")
    write_atomic(folder / OPTIMIZE_REPORT, render_optimize_markdown(state))


def _request(plan: RoutingPlan, state: OptimizeResults, current: OptimizeCandidate) -> ImproveRequest:
    texts = {q.index: q.query for q in state.queries}
    failed = [q for q in current.queries if q.set == "train" and q.passed is False]

    def entry(q: Any) -> ImproveQuery:
        return ImproveQuery(query=texts[q.index], trigger_rate=q.trigger_rate, triggers=q.triggers,
                            runs=q.runs - q.errors)

    tried = [ImproveCandidate(description=c.description, precision=c.train.precision, recall=c.train.recall,
                              f1=c.train.f1, passed=sum(1 for q in c.queries if q.set == "train" and q.passed),
                              total=sum(1 for q in c.queries if q.set == "train"))
             for c in state.candidates if c.train is not None]
    return ImproveRequest(skill_name=plan.skill.name, skill_body=plan.skill.body,
                          current_description=current.description,
                          missed=[entry(q) for q in failed if q.should_trigger],
                          false_triggers=[entry(q) for q in failed if not q.should_trigger], candidates=tried)


def _stop_reason(state: OptimizeResults, settings: OptimizeSettings, spent: int) -> tuple[str, str] | None:
    last = state.candidates[-1]
    if last.train is not None and last.train.fp == 0 and last.train.fn == 0 and last.train.unscored == 0:
        return "train_perfect", f"candidate {last.number} got every train query right"
    if len(state.candidates) >= settings.iterations:
        return "iterations", f"{settings.iterations} candidates were run (--iterations)"
    if settings.budget_tokens is not None and spent >= settings.budget_tokens:
        return "budget", f"the agent runs used {spent} tokens (--budget-tokens {settings.budget_tokens})"
    return None


async def _cancellable(work: Any, halt: asyncio.Event) -> Any:
    """``await work`` unless ``halt`` is set first (then the work is cancelled and None returned)."""
    task, waiter = asyncio.ensure_future(work), asyncio.ensure_future(halt.wait())
    try:
        done, _ = await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        waiter.cancel()
    if task in done:
        return task.result()
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    return None


async def run_optimize(plan: RoutingPlan, agent: Agent, improver: Judge, settings: OptimizeSettings,
                       run_settings: RunSettings, *, workspace: Path, store_path: Path | None = None,
                       stop: asyncio.Event | None = None, resume: bool = False,
                       on_run: Callable[[RunOutcome], None] | None = None,
                       on_step: Callable[[str], None] | None = None, executor: Any = None) -> OptimizeOutcome:
    """Run (or with ``resume`` continue) the optimisation. Call it once everything is checked. ``executor``
    runs the agent's runs elsewhere (a Ray cluster), as :func:`~.execute.execute_runs` takes it."""
    from ..store import Store
    from ..store.routing import begin_routing

    split = split_queries(plan.queries, settings.holdout, settings.seed, file=str(plan.routing_file))
    check_workspace(workspace, plan)
    store = Store.open(store_path) if store_path is not None else None  # a bad store fails before any folder
    try:
        if resume:
            folder = find_resumable(workspace)
            state = _load_state(folder, plan, agent, settings)
        else:
            folder = claim_routing_dir(workspace)
            state = _new_state(plan, agent, run_settings, settings, split, improver)
    except BaseException:
        if store is not None:
            store.close()
        raise
    stop = stop or asyncio.Event()
    halt = asyncio.Event()
    relay = asyncio.ensure_future(stop.wait())
    relay.add_done_callback(lambda _: halt.set())
    spent, budget_hit, interrupted = 0, False, False
    step = on_step or (lambda _: None)
    reason: tuple[str, str] | None = None
    try:
        save(folder, state)
        while True:
            candidate = next((c for c in state.candidates if c.status != "finished"), None)
            if candidate is None:
                reason = _stop_reason(state, settings, spent)
                if reason is not None:
                    break
                current = state.candidates[-1]
                step(f"asking the improver for candidate {len(state.candidates) + 1}")
                proposal: Proposal | None = await _cancellable(propose(
                    improver, _request(plan, state, current), tried=[c.description for c in state.candidates],
                    test_queries=[q.query for q in state.queries if q.set == "test"]), halt)
                if proposal is None:
                    interrupted = True
                    break
                if proposal.description is None:
                    reason = ("improver", proposal.error or "no description")
                    state.metadata["improver_failures"] = [a.model_dump() for a in proposal.attempts]
                    break
                number = len(state.candidates) + 1
                candidate = OptimizeCandidate(number=number, origin="improver", description=proposal.description,
                                              folder=candidate_dir(Path(), number).as_posix(),
                                              improver=proposal.attempts)
                state.candidates.append(candidate)
                save(folder, state)
            step(f"running candidate {candidate.number}")
            meta = {**routing_metadata(plan, agent, run_settings), "description": candidate.description,
                    "optimize": {"folder": str(folder), "candidate": candidate.number}}
            if store is not None and candidate.store_id is None:
                config = {k: meta[k] for k in ("skill_path", "routing_file", "runs", "concurrency", "timeout_s",
                                               "max_turns", "distractors")}
                candidate.store_id = begin_routing(
                    store, skill_name=plan.skill.name, agent=agent.name, model=run_settings.model,
                    config={**config, "results": str(candidate_dir(folder, candidate.number)),
                            "optimize": meta["optimize"],
                            "description": candidate.description}, tool_version=__version__)
                meta["store_id"] = candidate.store_id

            def finished(outcome: RunOutcome) -> None:
                nonlocal spent, budget_hit
                usage = outcome.usage or {}
                spent += int(usage.get("total_tokens") or 0) if isinstance(usage, dict) else 0
                if settings.budget_tokens is not None and spent >= settings.budget_tokens and not halt.is_set():
                    budget_hit = True
                    halt.set()
                if on_run is not None:
                    on_run(outcome)

            before = spent
            run = await run_candidate(plan, agent, run_settings, candidate_dir(folder, candidate.number),
                                      description=None if candidate.origin == "original" else candidate.description,
                                      metadata=meta, store=store, store_id=candidate.store_id, stop=halt,
                                      on_run=finished, executor=executor)
            candidate.tokens += spent - before
            candidate.train, candidate.test, candidate.queries = set_figures(run.results.queries, split.train,
                                                                             split.test)
            candidate.status = "incomplete" if run.interrupted else "finished"
            candidate.test_f1_ci = test_f1_interval(candidate, settings.seed) if not run.interrupted else None
            state.metadata["tokens_used"] = int(state.metadata.get("tokens_used") or 0) + spent - before
            save(folder, state)
            counts = run.results.metadata
            if not run.interrupted and counts["finished_runs"] and counts["error_runs"] == counts["finished_runs"]:
                first = next((r.error for q in run.results.queries for r in q.run_results if r.error), None)
                first = " ".join(str(first or "no reason given").split())[:200]
                reason = ("errors", f"every agent run of candidate {candidate.number} failed (the first: {first}); "
                                    f"see {candidate_dir(folder, candidate.number) / 'routing.md'}")
                break
            if run.interrupted:
                if budget_hit and not stop.is_set():
                    reason = ("budget", f"the agent runs used {spent} tokens (--budget-tokens "
                                        f"{settings.budget_tokens}); candidate {candidate.number} is incomplete: "
                                        "finish it with --resume")
                else:
                    interrupted = True
                break
    finally:
        relay.cancel()
        if store is not None:
            store.close()
    state.winner = choose_winner(state.candidates, seed=settings.seed)
    finished_state = "interrupted" if interrupted else ("stopped" if reason and reason[0] == "budget" else "finished")
    state.metadata.update(state=finished_state, finished_at=_now(), interrupted=interrupted,
                          stop_reason="interrupted" if interrupted else reason[0] if reason else None,
                          stop_detail=None if interrupted or reason is None else reason[1])
    await asyncio.to_thread(save, folder, state)
    return OptimizeOutcome(state, folder, interrupted)
