"""One iteration of paired runs end to end: plan -> execute -> record -> grade and compare -> benchmark.

:func:`run_paired` is the library entry point (the CLI and ``bench/paired_scale.py`` call it); it prints
nothing. Everything that can be wrong with the workspace or a resume is found before anything is written. Then
the runs go to the executor in the plan's interleaved order; each finished run is recorded at once (its files,
then a store row), graded by the judge and the assertion engine while other runs go on, and compared blind
with its pair once both arms' runs are in. A token budget or Ctrl-C stops starting runs; what finished is kept,
and the reports say which runs are missing. ``resume=True`` finishes such an iteration: finished runs are read
back from their folders, graded runs and compared pairs are not asked again.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .._version import __version__
from ..errors import InputError
from ..formats._load import read_json
from ..formats.workspace import Benchmark, Comparison, Feedback, iteration_dir, next_number, run_dir, run_id
from ..judges import Judge
from .executor import Executor, RunOutput, RunSpec
from .grading import compare_runs, grade_run, judge_info
from .plan import Case, PairedPlan, PlannedRun
from .record import (
    RunRecord,
    load_comparisons,
    load_run,
    write_case,
    write_comparisons,
    write_grading,
    write_json,
    write_run,
)
from .report import build_benchmark, write_feedback, write_reports

__all__ = ["CONFIG_FILE", "PairedOutcome", "PairedSettings", "Progress", "resolve_iteration", "run_paired"]

CONFIG_FILE = "paired_config.json"  # what the iteration was started with; --resume must match it
_MUST_MATCH = ("skill_digest", "baseline_digest", "evals_digest", "arms", "runs", "seed", "agent", "model")


@dataclass(frozen=True)
class PairedSettings:
    workspace: Path
    iteration: int | None = None  # None: the next free number (with resume: the latest)
    resume: bool = False
    concurrency: int = 4
    timeout: float = 600.0
    max_turns: int | None = None
    model: str | None = None
    compare: bool = True
    budget_tokens: int | None = None
    feedback: Feedback | None = None
    agent: dict[str, Any] = field(default_factory=dict)  # how the agent is described in the reports
    notes: tuple[str, ...] = ()  # warnings found by the caller (a same-named skill at user level, ...)


@dataclass(frozen=True)
class Progress:
    done: int
    total: int
    errors: int
    tokens: int
    grading: int  # grades and comparisons still running


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


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def resolve_iteration(workspace: Path, iteration: int | None, resume: bool) -> tuple[int, Path]:
    """The iteration's number and folder; InputError when it is taken (without resume) or not resumable."""
    if workspace.exists() and not workspace.is_dir():
        raise InputError("is not a folder", file=str(workspace), field="--workspace")
    if resume:
        number = iteration if iteration is not None else next_number(workspace, "iteration") - 1
        folder = iteration_dir(workspace, number)
        if number < 1 or not (folder / CONFIG_FILE).is_file():
            raise InputError("no iteration to resume" if number < 1 else f"iteration-{number} was not started by "
                             "eval-skills paired", file=str(folder if number >= 1 else workspace),
                             field="--resume", hint="give the workspace and --iteration of an interrupted run")
        return number, folder
    number = iteration if iteration is not None else next_number(workspace, "iteration")
    folder = iteration_dir(workspace, number)
    if folder.exists() and any(folder.iterdir()):
        raise InputError("already holds runs", file=str(folder), field="--iteration",
                         hint="pass --resume to finish it, or choose another --iteration")
    return number, folder


def _digest(*parts: bytes) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(hashlib.sha256(part).digest())
    return digest.hexdigest()


def iteration_config(plan: PairedPlan, settings: PairedSettings) -> dict[str, Any]:
    evals = plan.evals_path.read_bytes()
    fixtures = [data for case in plan.cases for _, data in sorted(case.files.items())]
    baseline = plan.bundles[plan.baseline]
    return {"skill_name": plan.skill.name, "skill_path": str(plan.skill_path.resolve()),
            "skill_digest": plan.bundles[plan.arms[0]][0].digest,
            "baseline_skill_path": str(plan.baseline_path.resolve()) if plan.baseline_path else None,
            "baseline_digest": baseline[0].digest if baseline else None,
            "evals_path": str(plan.evals_path.resolve()), "evals_digest": _digest(evals, *fixtures),
            "arms": list(plan.arms), "runs": plan.runs, "seed": plan.seed, "cases": [c.key for c in plan.cases],
            "agent": settings.agent.get("agent"), "model": settings.model, "timeout": settings.timeout,
            "max_turns": settings.max_turns, "started_at": _now()}


def _check_resume(folder: Path, config: dict[str, Any]) -> dict[str, Any]:
    saved = read_json(folder / CONFIG_FILE)
    if not isinstance(saved, dict):
        raise InputError("is not an object", file=str(folder / CONFIG_FILE))
    for key in _MUST_MATCH:
        if saved.get(key) != config.get(key):
            what = {"skill_digest": "the skill changed", "baseline_digest": "the baseline skill changed",
                    "evals_digest": "the evals or their fixture files changed"}.get(
                key, f"{key} was {saved.get(key)!r}, now {config.get(key)!r}")
            raise InputError(f"cannot resume: {what} since the iteration started", file=str(folder / CONFIG_FILE),
                             field=key, hint="resume with the same skill, evals and settings, or start a new "
                                             "iteration")
    return saved


class _Iteration:
    """The state of one iteration while it runs: records, comparisons, the tasks grading and comparing."""

    def __init__(self, plan: PairedPlan, settings: PairedSettings, folder: Path, judge: Judge | None,
                 rows: Any, on_progress: Callable[[Progress], None] | None) -> None:
        self.plan, self.settings, self.folder, self.judge, self.rows = plan, settings, folder, judge, rows
        self.on_progress = on_progress
        self.planned = {p.run_id: p for p in plan.order()}
        self.records: dict[str, RunRecord] = {}
        self.comparisons: dict[str, dict[int, Comparison]] = {}
        self.tasks: set[asyncio.Task[None]] = set()
        self.failure: BaseException | None = None
        self.abort = asyncio.Event()
        self.comparing: set[tuple[str, int]] = set()
        self.judging = asyncio.Semaphore(settings.concurrency)
        self.spent = 0
        self.rows_id = ""

    # ---- bookkeeping ------------------------------------------------------------------------------

    def progress(self) -> None:
        if self.on_progress is not None:
            errors = sum(not r.ok for r in self.records.values())
            tokens = sum(r.tokens or 0 for r in self.records.values())
            self.on_progress(Progress(len(self.records), self.plan.total, errors, tokens, len(self.tasks)))

    def spawn(self, coro: Any) -> None:
        task: asyncio.Task[None] = asyncio.create_task(coro)
        self.tasks.add(task)

        def done(t: asyncio.Task[None]) -> None:
            self.tasks.discard(t)
            if not t.cancelled() and t.exception() is not None and self.failure is None:
                self.failure = t.exception()
                self.abort.set()
            self.progress()

        task.add_done_callback(done)

    def folder_of(self, planned: PlannedRun) -> Path:
        return run_dir(self.folder, planned.case.key, planned.arm, planned.number)

    def _store_run(self, planned: PlannedRun, record: RunRecord) -> None:
        if self.rows is not None:
            self.rows.add_run(self.rows_id, {
                "run_id": record.run_id, "eval_id": planned.case.key, "arm": planned.arm,
                "run_number": planned.number, "status": record.status, "error": record.error,
                "response": record.response, "duration_s": record.duration_s, "usage": record.extra.get("usage"),
                "tool_calls": record.tool_calls, "skills_invoked": record.extra.get("skills_invoked"),
                "started_at": record.extra.get("executor_start")})

    # ---- the steps ----------------------------------------------------------------------------------

    def load_finished(self) -> None:
        """Resume: read back every finished run and comparison, and schedule what is left to judge."""
        for planned in self.planned.values():
            record = load_run(self.folder_of(planned), run_id=planned.run_id, case_key=planned.case.key,
                              arm=planned.arm, number=planned.number)
            if record is None:
                continue
            self.records[planned.run_id] = record
            self._store_run(planned, record)
            if record.grading is not None and self.rows is not None:
                self.rows.set_grade(self.rows_id, record.run_id, record.grading.summary.model_dump())
            if record.grading is None or any(e.passed is None for e in record.grading.expectations):
                self.spawn(self.grade(planned.case, record))
        for case in self.plan.cases:
            found = load_comparisons(self.folder / f"eval-{case.key}")
            self.comparisons[case.key] = {n: c for n, c in found.items() if c.winner is not None
                                          or "not_compared" in (c.model_extra or {})}
            for number in range(1, self.plan.runs + 1):
                self.maybe_compare(case, number)

    async def take(self, out: RunOutput) -> None:
        """A finished run: its files, its store row, then grading and comparing in the background."""
        self.spent += out.usage.total_tokens
        planned = self.planned[out.run_id]
        record = await asyncio.to_thread(write_run, self.folder_of(planned), out, case_key=planned.case.key,
                                         arm=planned.arm, number=planned.number)
        self.records[out.run_id] = record
        self._store_run(planned, record)
        self.spawn(self.grade(planned.case, record))
        self.maybe_compare(planned.case, planned.number)
        self.progress()

    async def grade(self, case: Case, record: RunRecord) -> None:
        async with self.judging:
            grading, judgement = await grade_run(case, record, self.judge)
        planned = self.planned[record.run_id]
        await asyncio.to_thread(write_grading, self.folder_of(planned), grading)
        record.grading = grading
        if self.rows is not None:
            self.rows.set_grade(self.rows_id, record.run_id, grading.summary.model_dump())
            by_judge = [(e.model_extra or {}).get("graded_by") == "judge" for e in grading.expectations]
            judged = [e.model_dump() for e, j in zip(grading.expectations, by_judge, strict=True) if j]
            checked = [e.model_dump() for e, j in zip(grading.expectations, by_judge, strict=True) if not j]
            if judgement is not None:
                self.rows.add_verdict(self.rows_id, record.run_id, "grade", judged, judge=judge_info(judgement))
            if checked:
                self.rows.add_verdict(self.rows_id, record.run_id, "checks", checked, judge={"backend": "engine"})

    def maybe_compare(self, case: Case, number: int) -> None:
        """Compare run ``number`` of both arms once both are in (and not compared or being compared)."""
        done = self.comparisons.setdefault(case.key, {})
        if not self.settings.compare or number in done or (case.key, number) in self.comparing:
            return
        runs = {arm: self.records.get(run_id(case.key, arm, number)) for arm in self.plan.arms}
        if all(runs.values()):
            self.comparing.add((case.key, number))
            self.spawn(self.compare(case, number, {arm: r for arm, r in runs.items() if r is not None}))

    async def compare(self, case: Case, number: int, runs: dict[str, RunRecord]) -> None:
        assert self.judge is not None
        try:
            async with self.judging:
                comparison, judgement = await compare_runs(case, number, runs, self.plan.arms, self.plan.seed,
                                                           self.judge)
        finally:
            self.comparing.discard((case.key, number))
        self.comparisons[case.key][number] = comparison
        await asyncio.to_thread(write_comparisons, self.folder / f"eval-{case.key}", self.comparisons[case.key])
        if self.rows is not None:
            self.rows.add_verdict(self.rows_id, f"eval-{case.key}-run-{number}", "compare",
                                  comparison.model_dump(mode="json"),
                                  judge=judge_info(judgement) if judgement is not None else None)


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


async def run_paired(plan: PairedPlan, settings: PairedSettings, *, executor: Executor, judge: Judge | None,
                     store_path: Path | None = None, on_progress: Callable[[Progress], None] | None = None,
                     stop: asyncio.Event | None = None) -> PairedOutcome:
    """Run (or, with ``settings.resume``, finish) one iteration; see the module doc."""
    from ..store import Store
    from ..store.paired import PairedStore

    if judge is None and (plan.needs_judge or settings.compare):
        raise InputError("plain-language assertions and the blind A/B need a judge", field="--judge",
                         hint="give --judge-cmd or --judge, or --no-compare with only selftune_assertions")
    number, folder = resolve_iteration(settings.workspace, settings.iteration, settings.resume)
    config = iteration_config(plan, settings)
    if settings.resume:
        config["started_at"] = _check_resume(folder, config).get("started_at", config["started_at"])
    stop = stop or asyncio.Event()
    store = Store.open(store_path) if store_path is not None else None  # a broken store fails before any run
    try:
        state = _Iteration(plan, settings, folder, judge, PairedStore(store) if store else None, on_progress)
        folder.mkdir(parents=True, exist_ok=True)
        write_json(folder / CONFIG_FILE, config)
        for case in plan.cases:
            write_case(folder / f"eval-{case.key}", case)
        if state.rows is not None:
            state.rows_id = state.rows.begin_iteration(workspace=str(settings.workspace.resolve()), iteration=number,
                                                       skill_name=plan.skill.name, config=config,
                                                       tool_version=__version__)
        if settings.resume:
            state.load_finished()
        state.progress()
        cut: list[str] = []

        def specs() -> Iterator[RunSpec]:
            for planned in plan.order():
                if planned.run_id in state.records:
                    continue
                if stop.is_set() or state.abort.is_set():
                    return
                if settings.budget_tokens is not None and state.spent >= settings.budget_tokens:
                    cut.append("budget")
                    return
                yield RunSpec(planned.run_id, planned.case.case.prompt, planned.case.files,
                              plan.bundles[planned.arm], settings.timeout, settings.max_turns, settings.model)

        async def consume() -> None:
            outputs: AsyncIterator[RunOutput] = executor.run(specs())
            async with contextlib.aclosing(outputs):  # type: ignore[type-var]
                async for out in outputs:
                    await state.take(out)

        try:
            finished = await _until(consume(), stop, state.abort)
            while finished and state.tasks:
                finished = await _until(asyncio.wait(list(state.tasks)), stop, state.abort)
        finally:
            for task in list(state.tasks):
                task.cancel()
            await asyncio.gather(*list(state.tasks), return_exceptions=True)
        if state.failure is not None:
            raise state.failure
        interrupted = not finished
        missing = [rid for rid in state.planned if rid not in state.records]
        cut_short = "interrupted" if interrupted else ("budget" if cut and missing else None)
        bench = _benchmark(state, number, config, cut_short, missing)
        files = write_reports(folder, bench, plan)
        files.append(write_feedback(folder, [r for r in state.planned if r in state.records], settings.feedback))
        if state.rows is not None:
            status = "interrupted" if interrupted else "cut_short" if cut_short else "finished"
            state.rows.finish_iteration(state.rows_id, status=status,
                                        summary=bench.model_dump(mode="json", exclude={"runs"}))
    finally:
        if store is not None:
            store.close()
    return PairedOutcome(bench, folder, number, files, interrupted, cut_short, missing, state.rows_id or None)


def _benchmark(state: _Iteration, number: int, config: dict[str, Any], cut_short: str | None,
               missing: list[str]) -> Benchmark:
    plan, settings, judge = state.plan, state.settings, state.judge
    metadata = {
        "skill_name": plan.skill.name, "skill_path": config["skill_path"],
        "baseline_skill_path": config["baseline_skill_path"], "evals_path": config["evals_path"],
        "workspace": str(settings.workspace.resolve()), "iteration": number, "timestamp": config["started_at"],
        "finished_at": _now(), **settings.agent, "model": settings.model, "executor_model": settings.model,
        "judge": judge.backend if judge else None, "judge_model": judge.model if judge else None,
        "analyzer_model": judge.model if judge else None,
        "judge_prompt_version": judge.prompt_version("grade") if judge else None,
        "seed": plan.seed, "evals_run": [c.case.id for c in plan.cases], "runs_per_configuration": plan.runs,
        "configurations": list(plan.arms), "baseline": plan.baseline, "timeout_seconds": settings.timeout,
        "max_turns": settings.max_turns, "concurrency": settings.concurrency, "compare": settings.compare,
        "budget_tokens": settings.budget_tokens, "tokens_used": sum(r.tokens or 0 for r in state.records.values()),
        "complete": not missing, "cut_short": cut_short, "missing_runs": missing, "resumed": settings.resume,
        "tool_version": __version__,
    }
    notes = list(plan.warnings) + list(settings.notes)
    if cut_short == "budget":
        notes.append(f"Cut short by --budget-tokens {settings.budget_tokens}: no run was started after "
                     f"{state.spent} tokens; {len(missing)} runs are missing (finish them with --resume).")
    elif cut_short == "interrupted":
        notes.append(f"Interrupted: {len(missing)} runs are missing (finish them with --resume).")
    ungraded = [r.run_id for r in state.records.values() if r.ok and r.grading is None]
    if ungraded:
        notes.append(f"{len(ungraded)} finished runs were not graded yet (--resume grades them).")
    judge_errors = [r.run_id for r in state.records.values()
                    if r.ok and r.grading is not None and any(e.passed is None for e in r.grading.expectations)]
    if judge_errors:
        notes.append(f"{len(judge_errors)} runs have judge errors: those assertions count neither as passes nor "
                     "as failures (--resume asks the judge again).")
    return build_benchmark(plan, state.records, state.comparisons if settings.compare else {}, metadata, notes)
