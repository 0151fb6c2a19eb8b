"""One tool-skill evaluation end to end: plan -> execute -> score -> aggregate -> store -> reports.

This is the library entry point the CLI (and the benchmarks under ``bench/``) call; it prints nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .._gc import gc_frozen
from .._version import __version__
from ..adapters import create_adapter
from ..errors import HarnessError
from ..results import TaskResult
from .aggregate import build_reports
from .plan import Plan
from .preflight import close_adapters, run_preflight
from .runner import AdapterFactory, RunOutcome, RunSettings, execute

__all__ = ["EvaluationOutcome", "RunFailed", "evaluate", "timestamp_now"]

def timestamp_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(repr=False)  # asyncio may repr the main task's result; thousands of results make that slow
class EvaluationOutcome:
    reports: list[dict[str, Any]]
    results: list[TaskResult]
    interrupted: bool
    evaluation_id: str | None = None
    report_files: list[Path] = field(default_factory=list)

    def __repr__(self) -> str:
        return f"<EvaluationOutcome {len(self.results)} results interrupted={self.interrupted}>"


def settings_record(settings: RunSettings, plan: Plan, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """What is stored about how the run was made (never secrets: only numbers, names and ids)."""
    record: dict[str, Any] = {
        "concurrency": settings.concurrency, "timeoutMs": settings.timeout_override_ms or settings.timeout_ms,
        "retries": settings.retries,
        "runs": plan.runs, "skills": [s.id for s in plan.skills], "tasks": len(plan.tasks),
    }
    record.update(extra or {})
    return record


class RunFailed(HarnessError):
    """The harness failed during the run (its store, its resources). What finished is in the report files
    (``outcome.report_files``) and the evaluation is marked failed with the reason, where the store allows."""

    def __init__(self, message: str, outcome: EvaluationOutcome) -> None:
        super().__init__(message)
        self.outcome = outcome


@gc_frozen
async def evaluate(plan: Plan, settings: RunSettings, *, store_path: Path | None = None,
                   output_dir: Path | None = None, formats: Sequence[str] = (),
                   on_result: Callable[[TaskResult], None] | None = None, stop: asyncio.Event | None = None,
                   factory: AdapterFactory = create_adapter, run_info: dict[str, Any] | None = None,
                   busy_timeout_ms: int | None = None,
                   keep: Callable[[list[dict[str, Any]]], list[dict[str, Any]]] | None = None,
                   scheduler: Callable[..., Awaitable[RunOutcome]] = execute,
                   ) -> EvaluationOutcome:
    """Run the plan. Each result is stored as it finishes; reports are written at the end, also when the
    run was interrupted or the harness failed (they then hold what finished): all of them, or those ``keep``
    returns. ``scheduler`` runs the items (default :func:`~eval_skills.tool_skills.runner.execute`, here; or
    :class:`~eval_skills.tool_skills.ray_shards.RayShards`, on a Ray cluster).

    Before anything is written: every adapter's ``preflight``, the store and the report folder are checked.
    A harness failure during the run (the store failing or locked by another process for too long; running
    out of descriptors) stops it cleanly: reports are written, the evaluation is marked failed with the
    reason, and :class:`RunFailed` is raised.
    """
    from ..reports import prepare_output_dir
    from ..store import Store
    from ..store.writer import ResultWriter

    started = timestamp_now()
    # Check everything that can be wrong before anything runs or is written.
    adapters = {skill.id: factory(skill) for skill in plan.skills}
    if await run_preflight(plan, adapters, stop) is None:  # interrupted while skills were checked
        return EvaluationOutcome([], [], True)
    writing_reports = output_dir is not None and bool(formats)
    store = None
    try:
        if writing_reports:
            prepare_output_dir(output_dir, formats, create=False)  # type: ignore[arg-type]
        if store_path is not None:
            Store.check(store_path)
            store = (Store.open(store_path) if busy_timeout_ms is None
                     else Store.open(store_path, busy_timeout_ms=busy_timeout_ms))
    except BaseException:
        await close_adapters(adapters.values())
        raise
    evaluation_id = ""
    writer: ResultWriter | None = None
    failure: HarnessError | None = None
    loop = asyncio.get_running_loop()
    halt = asyncio.Event()  # the user's stop, or the writer failing

    def writer_failed(exc: HarnessError) -> None:
        with contextlib.suppress(RuntimeError):  # the loop may be closed already
            loop.call_soon_threadsafe(halt.set)

    async def forward_stop() -> None:
        if stop is not None:
            await stop.wait()
            halt.set()

    try:
        if writing_reports:
            prepare_output_dir(output_dir, formats)  # type: ignore[arg-type]
        if store is not None:
            # in a thread: while another process holds the store, the loop still sees Ctrl-C and SIGTERM
            begin = asyncio.ensure_future(asyncio.to_thread(
                store.begin_evaluation, benchmark_id=plan.benchmark.id, benchmark_version=plan.benchmark.version,
                config=settings_record(settings, plan, run_info), tool_version=__version__))
            if stop is not None:
                stopped = asyncio.ensure_future(stop.wait())
                await asyncio.wait((begin, stopped), return_when=asyncio.FIRST_COMPLETED)
                stopped.cancel()
                if not begin.done():  # interrupted while waiting for the store: nothing ran, nothing recorded
                    store.stop_waiting()
                    with contextlib.suppress(HarnessError):
                        await begin
                    await close_adapters(adapters.values())
                    return EvaluationOutcome([], [], True)
            evaluation_id = await begin
            writer = ResultWriter(store, evaluation_id, on_error=writer_failed)

        def finished(result: TaskResult) -> None:
            if writer is not None:
                writer.put(result)
            if on_result is not None:
                on_result(result)

        forwarding = asyncio.ensure_future(forward_stop())
        try:
            outcome = await scheduler(plan, settings, lambda skill: adapters[skill.id], on_result=finished,
                                      stop=halt)
        except BaseException as exc:
            if store is not None and writer is not None:
                with contextlib.suppress(HarnessError):
                    writer.close()
                with contextlib.suppress(HarnessError):
                    store.finish_evaluation(evaluation_id, status="failed", reports=[],
                                            error=f"{type(exc).__name__}: {exc}")
            raise
        finally:
            forwarding.cancel()
        if writer is not None:
            try:
                writer.close()
            except HarnessError as exc:
                failure = exc
        failure = failure or outcome.failure
        interrupted = outcome.interrupted and failure is None
        reports = build_reports(plan, outcome.results, timestamp=started, default_timeout_ms=settings.timeout_ms,
                                timeout_override_ms=settings.timeout_override_ms, interrupted=interrupted)
        if store is not None:
            status = "failed" if failure else "interrupted" if interrupted else "finished"
            try:
                store.finish_evaluation(evaluation_id, status=status, reports=reports,
                                        error=str(failure) if failure else None)
            except HarnessError as exc:
                failure = failure or exc
    finally:
        if store is not None:
            store.close()
    files: list[Path] = []
    if writing_reports:
        from ..reports import write_reports

        kept = reports if keep is None else keep(reports)
        files = write_reports(kept, formats, output_dir) if kept else []  # type: ignore[arg-type]
    result = EvaluationOutcome(reports, outcome.results, interrupted, evaluation_id or None, files)
    if failure is not None:
        where = f"the {len(outcome.results)} finished tasks are in {files[0]}" if files else \
            f"{len(outcome.results)} tasks had finished"
        raise RunFailed(f"{failure}; the run stopped: {where}", result)
    return result
