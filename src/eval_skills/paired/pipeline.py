"""One iteration of paired runs end to end: plan -> execute -> record -> grade and compare -> benchmark.

:func:`run_paired` is the library entry point (the CLI and ``bench/paired_scale.py`` call it); it prints
nothing. Everything that can be wrong with the workspace or a resume is found before anything is written. Then
the runs go to the executor in the plan's interleaved order; each finished run is recorded at once (its files,
then a store row, which the store's writer thread commits with the others waiting), graded by the judge and the
assertion engine while other runs go on, and compared blind with its pair once both arms' runs are in. A case's
own files (its metadata, its inputs) are written with its first recorded run, the rest before the reports. A token
budget or Ctrl-C stops starting runs; what finished is kept, and the reports say which runs are missing.
``resume=True`` finishes such an iteration: finished runs are read back from their folders, graded runs and
compared pairs are not asked again.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._gc import gc_frozen
from .._version import __version__
from ..errors import HarnessError, InputError
from ..formats.grading import GRADING_VERSIONS_FILE
from ..formats.workspace import Benchmark
from ..judges import Judge
from .executor import Executor, RunOutput, RunSpec
from .iteration import (
    CONFIG_FILE,
    Iteration,
    PairedSettings,
    Progress,
    claim_iteration,
    hold_iteration,
    now,
    resolve_iteration,
)
from .plan import PairedPlan
from .record import write_json
from .report import build_benchmark, write_feedback, write_reports
from .resume import check_resume, iteration_config
from .sequential import Sequential
from .summary import pending_pairs, plural

__all__ = ["CONFIG_FILE", "PairedOutcome", "PairedSettings", "Progress", "resolve_iteration", "run_paired"]

ROWS_LINGER_S = 0.02  # how long the store's writer waits for more rows once woken


@dataclass(repr=False)
class PairedOutcome:
    benchmark: Benchmark
    iteration: Path
    number: int
    files: list[Path]
    interrupted: bool
    cut_short: str | None  # "budget" or "interrupted"
    missing: list[str]
    store_id: str | None = None

    def __repr__(self) -> str:
        return f"<PairedOutcome iteration-{self.number} missing={len(self.missing)} cut_short={self.cut_short}>"

    @property
    def unmeasured(self) -> str | None:
        """Why an iteration that ran to its end measured nothing (every agent run failed, or no case has a
        graded run in both arms although cases have assertions), or None. An empty benchmark is no success."""
        if self.cut_short is not None:
            return None
        runs = self.benchmark.runs
        errors = [r for r in runs if r.result.errors]
        if runs and len(errors) == len(runs):
            first = " ".join(str((errors[0].result.model_extra or {}).get("error") or "no reason given").split())
            first = first if len(first) <= 200 else first[:199] + "…"
            return f"every agent run failed ({len(runs)} error runs; the first: {first})"
        delta = self.benchmark.statistics.pass_rate_delta if self.benchmark.statistics else None
        if delta is not None and not delta.cases and any(r.expectations for r in runs):
            judged = sum(1 for r in runs if (r.result.model_extra or {}).get("ungraded"))
            return f"no case has a graded run in both arms ({len(errors)} error runs, {judged} runs with judge errors)"
        return None


async def _until(awaitable: Any, *events: asyncio.Event) -> bool:
    """Await ``awaitable`` unless one of ``events`` is set first (then cancel it). True when it finished."""
    task = asyncio.ensure_future(awaitable)
    waiters = [asyncio.ensure_future(e.wait()) for e in events]
    try:
        await asyncio.wait([task, *waiters], return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiter in waiters:
            waiter.cancel()
    if task.done():
        task.result()
        return True
    task.cancel()
    with contextlib.suppress(BaseException):
        await task
    return False


def check_iteration(plan: PairedPlan, settings: PairedSettings,
                    judge: Judge | None) -> tuple[int, Path, dict[str, Any]]:
    """Every check an iteration makes before it writes anything (a judge where one is needed, fixture names, the
    workspace, the iteration free or resumable with the same settings): its number, folder and config, or the
    first problem as an InputError. Nothing is written."""
    if judge is None and (plan.needs_judge or settings.compare):
        raise InputError("plain-language assertions and the blind A/B need a judge", field="--judge",
                         hint="give --judge-cmd or --judge, or --no-compare with only selftune_assertions")
    if settings.agent.get("skills_subdir"):
        plan.check_fixture_names(str(settings.agent["skills_subdir"]))
    for skill_folder in filter(None, (plan.skill_path, plan.baseline_path)):
        if settings.workspace.resolve().is_relative_to(skill_folder.resolve()):
            raise InputError("is inside the skill folder (its runs would become part of the skill)",
                             file=str(settings.workspace), field="--workspace",
                             hint="put the workspace beside the skill, as the default does")
    number, folder = resolve_iteration(settings.workspace, settings.iteration, settings.resume)
    config = iteration_config(plan, settings, judge)
    if settings.resume:
        if (folder / GRADING_VERSIONS_FILE).is_file():  # new runs would be graded by another rule than the rest
            raise InputError("cannot resume: the iteration was graded again by eval-skills regrade",
                             file=str(folder / GRADING_VERSIONS_FILE), field="--resume",
                             hint="start a new iteration")
        saved = check_resume(folder, config)
        config["started_at"] = saved.get("started_at", config["started_at"])
        config["judge"] = config["judge"] or saved.get("judge")  # the judge of the verdicts so far
    return number, folder, config


@gc_frozen
async def run_paired(plan: PairedPlan, settings: PairedSettings, *, executor: Executor, judge: Judge | None,
                     store_path: Path | None = None, on_progress: Callable[[Progress], None] | None = None,
                     stop: asyncio.Event | None = None) -> PairedOutcome:
    """Run (or, with ``settings.resume``, finish) one iteration; see the module doc."""
    from ..store import Store
    from ..store.paired import PairedStore, Row
    from ..store.writer import GroupWriter

    number, folder, config = check_iteration(plan, settings, judge)
    stop = stop or asyncio.Event()
    held = contextlib.ExitStack()  # the iteration's lock: one process runs an iteration at a time
    if settings.resume:
        held.enter_context(hold_iteration(folder))
    writer: GroupWriter[Row] | None = None
    try:
        store = Store.open(store_path) if store_path is not None else None  # a broken store fails before any run
    except BaseException:
        held.close()
        raise
    try:
        if not settings.resume:  # two runs started at once get two iterations
            number, folder = claim_iteration(settings.workspace, settings.iteration)
            held.enter_context(hold_iteration(folder))
        state = Iteration(plan, settings, folder, judge, PairedStore(store) if store else None, on_progress)
        write_json(folder / CONFIG_FILE, config)
        if state.rows is not None and store is not None:
            state.rows_id = state.rows.begin_iteration(workspace=str(settings.workspace.resolve()), iteration=number,
                                                       skill_name=plan.skill.name, config=config,
                                                       tool_version=__version__)
            # rows come a few per run, and runs take seconds: a longer linger makes each commit hold several runs
            # (a commit of 2-3 rows cost this process 0.45 ms, the same rows in commits of 10 half of that)
            writer = state.writer = GroupWriter(store, functools.partial(state.rows.add_rows, state.rows_id),
                                                what="saving paired runs", on_error=_stopper(state),
                                                linger=ROWS_LINGER_S)
        if settings.resume:
            state.load_finished()
        state.progress()
        cut: list[str] = []

        def specs(number: int | None) -> Iterator[RunSpec]:
            for planned in plan.order():
                if planned.run_id in state.records or (number is not None and planned.number != number):
                    continue
                if stop.is_set() or state.abort.is_set():
                    return
                if settings.budget_tokens is not None and state.spent >= settings.budget_tokens:
                    cut.append("budget")
                    return
                yield RunSpec(planned.run_id, planned.case.case.prompt, planned.case.placed,
                              plan.bundles[planned.arm], settings.timeout, settings.max_turns, settings.model)

        async def consume(number: int | None) -> None:
            outputs: AsyncIterator[RunOutput] = executor.run(specs(number))
            async with contextlib.aclosing(outputs):  # type: ignore[type-var]
                async for out in outputs:
                    state.take(out)

        sequential = Sequential(plan, settings.target_delta) if settings.adaptive else None
        try:
            finished = True
            for round_number in (range(1, plan.runs + 1) if sequential else [None]):
                finished = await _until(consume(round_number), stop, state.abort)
                while finished and state.tasks:  # the round's grades are in before it is looked at
                    finished = await _until(asyncio.wait(list(state.tasks)), stop, state.abort)
                if not finished or cut or state.failure is not None:
                    break
                if sequential is not None and round_number is not None and sequential.look(round_number,
                                                                                            state.records):
                    break
        finally:
            await asyncio.gather(*list(state.recorders), return_exceptions=True)  # finished runs are kept
            for task in list(state.tasks):
                task.cancel()
            await asyncio.gather(*list(state.tasks), return_exceptions=True)
        if writer is not None:
            writer.close()  # every row of what finished is in the store (or the writer's failure is raised)
        if state.failure is not None:
            raise state.failure
        await asyncio.to_thread(state.cases.rest)  # the cases no run reached have their files too
        interrupted = not finished
        not_run = set(sequential.saved(state.records)) if sequential is not None and sequential.stopped else set()
        missing = [rid for rid in state.planned if rid not in state.records and rid not in not_run]
        cut_short = "interrupted" if interrupted else ("budget" if cut and missing else None)
        bench = _benchmark(state, number, config, cut_short, missing, sequential)
        files = write_reports(folder, bench, plan)
        files.append(write_feedback(folder, [r for r in state.planned if r in state.records], settings.feedback))
        if state.rows is not None:
            status = "interrupted" if interrupted else "cut_short" if cut_short else "finished"
            state.rows.finish_iteration(state.rows_id, status=status,
                                        summary=bench.model_dump(mode="json", exclude={"runs"}))
    finally:
        held.close()
        if writer is not None:
            with contextlib.suppress(HarnessError):  # raised above when it matters; here the run failed already
                writer.close()
        if store is not None:
            store.close()
    return PairedOutcome(bench, folder, number, files, interrupted, cut_short, missing, state.rows_id or None)


def _stopper(state: Iteration) -> Callable[[BaseException], None]:
    """What the store's writer calls from its thread when it fails: the iteration stops with that failure."""
    loop = asyncio.get_running_loop()

    def stop(exc: BaseException) -> None:
        def fail() -> None:
            if state.failure is None:
                state.failure = exc
            state.abort.set()

        with contextlib.suppress(RuntimeError):  # the loop may be closed already
            loop.call_soon_threadsafe(fail)

    return stop


def _benchmark(state: Iteration, number: int, config: dict[str, Any], cut_short: str | None,
               missing: list[str], sequential: Sequential | None = None) -> Benchmark:
    plan, settings, judge = state.plan, state.settings, state.judge
    comparisons = state.comparisons if settings.compare else {}
    ungraded = [r.run_id for r in state.records.values() if r.ok and r.grading is None]
    pending = pending_pairs(plan, state.records, comparisons) if settings.compare else []
    metadata = {
        "skill_name": plan.skill.name, "skill_path": config["skill_path"],
        "baseline_skill_path": config["baseline_skill_path"], "evals_path": config["evals_path"],
        "workspace": str(settings.workspace.resolve()), "iteration": number, "timestamp": config["started_at"],
        "finished_at": now(), **settings.agent, "model": settings.model, "executor_model": settings.model,
        "judge": judge.backend if judge else None, "judge_model": judge.model if judge else None,
        "analyzer_model": judge.model if judge else None,
        "judge_prompt_version": judge.prompt_version("grade") if judge else None,
        "seed": plan.seed, "evals_run": [c.case.id for c in plan.cases], "runs_per_configuration": plan.runs,
        "configurations": list(plan.arms), "baseline": plan.baseline, "timeout_seconds": settings.timeout,
        "max_turns": settings.max_turns, "concurrency": settings.concurrency, "compare": settings.compare,
        "budget_tokens": settings.budget_tokens, "tokens_used": sum(r.tokens or 0 for r in state.records.values()),
        "complete": not (missing or ungraded or pending), "cut_short": cut_short, "missing_runs": missing,
        "ungraded_runs": ungraded, "pending_comparisons": pending, "resumed": settings.resume,
        "tool_version": __version__, "conditions": config.get("conditions"),
    }
    notes = list(plan.warnings) + list(settings.notes)
    left = [plural(len(missing), "run") + " missing"]
    left += [plural(len(ungraded), "finished run") + " not graded"] if ungraded else []
    left += [plural(len(pending), "run pair") + " not compared"] if pending else []
    if cut_short == "budget":
        notes.append(f"Cut short by --budget-tokens {settings.budget_tokens}: no run was started after "
                     f"{state.spent} tokens; {', '.join(left)} (finish with --resume).")
    elif cut_short == "interrupted":
        notes.append(f"Interrupted: {', '.join(left)} (finish with --resume).")
    elif ungraded or pending:
        notes.append(f"{', '.join(left[1:])} yet (--resume finishes them).")
    finished = [r for r in state.records.values() if r.ok and r.tokens is not None]
    estimated = sum(r.token_measurement == "estimated" for r in finished)
    if estimated:
        notes.append(f"The tokens of {estimated} of {plural(len(finished), 'finished run')} are estimates (the agent "
                     "reported no usage: about 4 characters a token), not measurements: compare them with care.")
    partial = sum(r.token_measurement == "partial" for r in finished)
    if partial:
        notes.append(f"The tokens of {partial} of {plural(len(finished), 'finished run')} are partial (the agent "
                     "reported no final count, only figures along the way: a lower bound), not measurements.")
    judge_errors = [r.run_id for r in state.records.values()
                    if r.ok and r.grading is not None and any(e.passed is None for e in r.grading.expectations)]
    if judge_errors:
        notes.append(f"{plural(len(judge_errors), 'run')} with judge errors: those assertions count neither as "
                     "passes nor as failures (--resume asks the judge again).")
    reported = _reported_models(state)
    metadata["reported_models"] = sorted({m for models in reported for m in models})
    if len(reported) > 1:
        metadata["conditions_within"] = {", ".join(models) or "none reported": runs
                                         for models, runs in reported.items()}
        notes.append("The runs of this iteration report different models (a model alias moved, or the agent "
                     "changed mid-run): " + "; ".join(f"{', '.join(m) or 'none reported'} in "
                                                      f"{plural(len(r), 'run')}" for m, r in reported.items())
                     + ". Runs under different conditions are not a fair comparison.")
    versions = _agent_versions(state)
    if len(versions) > 1:
        metadata["agent_versions_within"] = versions
        notes.append("The runs of this iteration ran under different versions of the agent's CLI (it was upgraded "
                     "between a run and its --resume): " + "; ".join(f"{v} in {plural(len(r), 'run')}"
                                                                     for v, r in versions.items())
                     + ". Runs under different conditions are not a fair comparison.")
    if settings.assertion_check is not None:
        metadata["assertion_check"] = settings.assertion_check
    if sequential is not None:
        metadata["adaptive"] = True
        if sequential.stopped:
            notes.append(sequential.sentence())
        return build_benchmark(plan, state.records, comparisons, metadata, notes, pending=len(pending),
                               target_delta=settings.target_delta, level=sequential.level,
                               sequential=sequential.record(state.records), runs_done=sequential.rounds)
    return build_benchmark(plan, state.records, comparisons, metadata, notes, pending=len(pending),
                           target_delta=settings.target_delta)


def _agent_versions(state: Iteration) -> dict[str, list[str]]:
    """The finished runs by the version of the agent's CLI they ran under (runs recorded before versions were,
    left out)."""
    groups: dict[str, list[str]] = {}
    for record in state.records.values():
        if record.ok and "agent_version" in record.extra:
            groups.setdefault(str(record.extra["agent_version"] or "unknown"), []).append(record.run_id)
    return {version: sorted(runs) for version, runs in sorted(groups.items())}


def _reported_models(state: Iteration) -> dict[tuple[str, ...], list[str]]:
    """The runs that finished, grouped by the models their agent reported using (``usage.models``)."""
    groups: dict[tuple[str, ...], list[str]] = {}
    for record in state.records.values():
        if not record.ok:
            continue
        usage = record.extra.get("usage")
        models = usage.get("models") if isinstance(usage, dict) else None
        key = tuple(sorted(str(m) for m in models)) if isinstance(models, dict) else ()
        groups.setdefault(key, []).append(record.run_id)
    return groups
