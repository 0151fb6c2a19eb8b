"""The state of one iteration while it runs: where it lives, what it was started with, what has finished.

- :func:`resolve_iteration` picks the iteration's number and folder (the next free one, or the one to resume)
  and refuses a folder that already holds runs; :func:`claim_iteration` creates a new one, claimed atomically;
- :func:`hold_iteration` holds its lock while it runs (what ``paired_config.json`` records at the start, and
  what a resume must match, is in :mod:`.resume`);
- :class:`Iteration` holds the finished runs and comparisons and the background tasks that record, grade and
  compare each run as it comes in, writing each file and store row as soon as it has it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..formats.workspace import Comparison, Feedback, iteration_dir, next_number, run_dir, run_id
from ..judges import Judge
from .executor import RunOutput
from .grading import compare_runs, grade_run, judge_info
from .plan import Case, PairedPlan, PlannedRun
from .record import RunRecord, load_comparisons, load_run, write_case, write_comparisons, write_grading, write_run

if TYPE_CHECKING:
    from ..store.paired import Row
    from ..store.writer import GroupWriter

__all__ = ["CONFIG_FILE", "CaseFolders", "Iteration", "PairedSettings", "Progress", "claim_iteration",
           "hold_iteration", "now", "resolve_iteration"]

CONFIG_FILE = "paired_config.json"  # what the iteration was started with; --resume must match it
LOCK_FILE = ".paired.lock"  # held (flock) by the process running the iteration


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
    adaptive: bool = False  # run in rounds and stop once the verdict cannot change (eval_skills.stats.sequential)
    target_delta: float | None = None  # the lift the design is judged against (and, adaptive, stops within)
    assertion_check: list[dict[str, Any]] | None = None  # findings of --check-assertions, when it ran


@dataclass(frozen=True)
class Progress:
    done: int
    total: int
    errors: int
    tokens: int
    grading: int  # grades and comparisons still running


def now() -> str:
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
    if iteration is None:  # the next free one: a guess, as another run may claim it first (claim_iteration
        number = next_number(workspace, "iteration")  # then takes the next), never a reason to refuse
        return number, iteration_dir(workspace, number)
    number = iteration
    folder = iteration_dir(workspace, number)
    if folder.exists() and any(folder.iterdir()):
        raise InputError("already holds runs", file=str(folder), field="--iteration",
                         hint="pass --resume to finish it, or choose another --iteration")
    return number, folder


def claim_iteration(workspace: Path, iteration: int | None) -> tuple[int, Path]:
    """Create the iteration's folder and claim it by creating its ``paired_config.json`` exclusively, so two runs
    started at once into one workspace never share an iteration: without ``iteration`` the second takes the next
    number; with it, the second is refused as :func:`resolve_iteration` refuses a taken one."""
    while True:
        number = iteration if iteration is not None else next_number(workspace, "iteration")
        folder = iteration_dir(workspace, number)
        try:
            folder.mkdir(parents=True, exist_ok=True)
            os.close(os.open(folder / CONFIG_FILE, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            if iteration is None:
                continue
            raise InputError("already holds runs", file=str(folder), field="--iteration",
                             hint="pass --resume to finish it, or choose another --iteration") from None
        except OSError as exc:
            raise InputError(f"cannot create the iteration's folder ({exc.strerror or exc})", file=str(folder),
                             field="--workspace") from None
        return number, folder


@contextlib.contextmanager
def hold_iteration(folder: Path) -> Iterator[None]:
    """Hold the iteration's lock while it runs: a second run of it at once (``--resume`` while it still runs) is an
    InputError. The lock is the system's (``flock`` on ``.paired.lock`` in the folder), so a run killed outright
    leaves no stale lock behind."""
    import fcntl

    try:
        fd = os.open(folder / LOCK_FILE, os.O_CREAT | os.O_RDWR, 0o644)
    except OSError as exc:
        raise InputError(f"cannot create the iteration's lock file ({exc.strerror or exc})", file=str(folder),
                         field="--workspace") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise InputError("another eval-skills paired is running this iteration", file=str(folder),
                             field="--resume", hint="wait for it to finish, or stop it first") from None
        yield
    finally:
        os.close(fd)


class CaseFolders:
    """Each case's own files (:func:`~.record.write_case`: its ``eval_metadata.json`` files and ``inputs/``),
    written once: by the first of its runs to be recorded, in that run's trip to a thread (so the first agents
    start at once, not after every case's files are on the disk), and at the end for the cases no run reached."""

    def __init__(self, folder: Path, plan: PairedPlan) -> None:
        self.folder, self.arms, self.cases = folder, plan.arms, plan.cases
        self._locks = {case.key: threading.Lock() for case in plan.cases}
        self._written: set[str] = set()

    def ensure(self, case: Case) -> None:
        """Write ``case``'s files unless they are written (safe from any thread)."""
        if case.key in self._written:
            return
        with self._locks[case.key]:
            if case.key not in self._written:
                write_case(self.folder / f"eval-{case.key}", case, self.arms)
                self._written.add(case.key)

    def rest(self) -> None:
        """Write the files of the cases no recorded run has written."""
        for case in self.cases:
            self.ensure(case)


class Iteration:
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
        self.spent = 0  # tokens of the runs this invocation started (the budget's count)
        self.errors = self.tokens = 0  # error runs and tokens of every finished run
        self.rows_id = ""
        self.writer: GroupWriter[Row] | None = None  # the store's rows, committed in groups (pipeline makes it)
        self.recorders: set[asyncio.Task[None]] = set()
        self.to_grade: set[str] = set()  # runs whose grade is on its way (their transcripts are still needed)
        self.cases = CaseFolders(folder, plan)

    # ---- bookkeeping ------------------------------------------------------------------------------

    def progress(self) -> None:
        if self.on_progress is not None:
            self.on_progress(Progress(len(self.records), self.plan.total, self.errors, self.tokens, len(self.tasks)))

    def add(self, record: RunRecord) -> None:
        self.records[record.run_id] = record
        self.errors += not record.ok
        self.tokens += record.tokens or 0

    def spawn(self, coro: Any, *, recording: bool = False) -> None:
        task: asyncio.Task[None] = asyncio.create_task(coro)
        self.tasks.add(task)
        if recording:
            self.recorders.add(task)
            task.add_done_callback(self.recorders.discard)

        def done(t: asyncio.Task[None]) -> None:
            self.tasks.discard(t)
            if not t.cancelled() and t.exception() is not None and self.failure is None:
                self.failure = t.exception()
                self.abort.set()
            self.progress()

        task.add_done_callback(done)

    def folder_of(self, planned: PlannedRun) -> Path:
        return run_dir(self.folder, planned.case.key, planned.arm, planned.number)

    def row(self, method: str, *args: Any, **kwargs: Any) -> None:
        """A store write (no store: nothing): ``method`` of :class:`~eval_skills.store.paired.PairedStore`,
        handed to the writer thread, which commits what is waiting in one transaction."""
        if self.writer is not None:
            self.writer.put((method, args, kwargs))

    @staticmethod
    def run_row(planned: PlannedRun, record: RunRecord) -> dict[str, Any]:
        return {"run_id": record.run_id, "eval_id": planned.case.key, "arm": planned.arm,
                "run_number": planned.number, "status": record.status, "error": record.error,
                "response": record.response, "duration_s": record.duration_s, "usage": record.extra.get("usage"),
                "tool_calls": record.tool_calls, "skills_invoked": record.extra.get("skills_invoked"),
                "started_at": record.extra.get("executor_start")}

    # ---- the steps ----------------------------------------------------------------------------------

    def load_finished(self) -> None:
        """Resume: read back every finished run and comparison, and schedule what is left to judge."""
        for planned in self.planned.values():
            record = load_run(self.folder_of(planned), run_id=planned.run_id, case_key=planned.case.key,
                              arm=planned.arm, number=planned.number)
            if record is None:
                continue
            self.add(record)
            self.row("add_run", self.run_row(planned, record))
            if record.grading is not None:
                self.row("add_grade", record.run_id, record.grading.summary.model_dump())
            if record.grading is None or any(e.passed is None for e in record.grading.expectations):
                self.start_grading(planned.case, record)
        for case in self.plan.cases:
            found = load_comparisons(self.folder / f"eval-{case.key}")
            self.comparisons[case.key] = {n: c for n, c in found.items() if c.winner is not None
                                          or "not_compared" in (c.model_extra or {})}
            for number in range(1, self.plan.runs + 1):
                self.maybe_compare(case, number)
                self.release(case.key, number)

    def take(self, out: RunOutput) -> None:
        """A finished run: its tokens count at once (the budget sees them before the next run starts); its
        files, store row, grade and comparison follow in the background."""
        self.spent += out.usage.total_tokens
        self.spawn(self.record(out), recording=True)

    async def record(self, out: RunOutput) -> None:
        planned = self.planned[out.run_id]

        def write() -> RunRecord:
            self.cases.ensure(planned.case)
            record = write_run(self.folder_of(planned), out, case_key=planned.case.key, arm=planned.arm,
                               number=planned.number, agent_version=self.settings.agent.get("agent_version"))
            self.row("add_run", self.run_row(planned, record))
            return record

        record = await asyncio.to_thread(write)
        self.add(record)
        self.start_grading(planned.case, record)
        self.maybe_compare(planned.case, planned.number)
        self.progress()

    def start_grading(self, case: Case, record: RunRecord) -> None:
        self.to_grade.add(record.run_id)
        self.spawn(self.grade(case, record))

    async def grade(self, case: Case, record: RunRecord) -> None:
        try:
            async with self.judging:
                grading, judgement = await grade_run(case, record, self.judge)
        finally:
            self.to_grade.discard(record.run_id)
        planned = self.planned[record.run_id]
        by_judge = [(e.model_extra or {}).get("graded_by") == "judge" for e in grading.expectations]
        verdicts: list[tuple[str, Any, dict[str, Any] | None]] = []
        if judgement is not None:
            verdicts.append(("grade", [e.model_dump() for e, j in zip(grading.expectations, by_judge, strict=True)
                                       if j], judge_info(judgement)))
        checked = [e.model_dump() for e, j in zip(grading.expectations, by_judge, strict=True) if not j]
        if checked:
            verdicts.append(("checks", checked, {"backend": "engine"}))

        def save() -> None:
            write_grading(self.folder_of(planned), grading)
            self.row("add_grade", record.run_id, grading.summary.model_dump(), verdicts)

        await asyncio.to_thread(save)
        record.grading = grading
        self.release(case.key, planned.number)

    def release(self, case_key: str, number: int) -> None:
        """Drop the transcripts and output texts of a run pair once it is graded and compared: the statistics
        need neither, so memory stays flat however many runs an iteration has."""
        if self.settings.compare and number not in self.comparisons.get(case_key, {}):
            return
        for arm in self.plan.arms:
            record = self.records.get(run_id(case_key, arm, number))
            if record is not None and record.grading is not None and record.run_id not in self.to_grade:
                record.transcript, record.outputs = [], {}

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
        every = dict(self.comparisons[case.key])

        def save() -> None:
            write_comparisons(self.folder / f"eval-{case.key}", every)
            self.row("add_verdict", f"eval-{case.key}-run-{number}", "compare", comparison.model_dump(mode="json"),
                     judge=judge_info(judgement) if judgement is not None else None)

        await asyncio.to_thread(save)
        self.release(case.key, number)
