"""One tool-skill evaluation end to end: plan -> execute -> score -> aggregate -> store -> reports.

This is the library entry point the CLI (and the benchmarks under ``bench/``) call; it prints nothing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ._version import __version__
from .adapters import create_adapter
from .aggregate import build_reports
from .plan import Plan
from .preflight import close_adapters, run_preflight
from .results import TaskResult
from .runner import AdapterFactory, RunSettings, execute

__all__ = ["EvaluationOutcome", "evaluate", "timestamp_now"]


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


async def evaluate(plan: Plan, settings: RunSettings, *, store_path: Path | None = None,
                   output_dir: Path | None = None, formats: Sequence[str] = (),
                   on_result: Callable[[TaskResult], None] | None = None, stop: asyncio.Event | None = None,
                   factory: AdapterFactory = create_adapter, run_info: dict[str, Any] | None = None,
                   ) -> EvaluationOutcome:
    """Run the plan. Each result is stored as it finishes; reports are written at the end, also when the
    run was interrupted (they then hold what finished)."""
    from .store import Store
    from .store.writer import ResultWriter

    started = timestamp_now()
    # Check everything that can be wrong before anything runs or is written.
    adapters = {skill.id: factory(skill) for skill in plan.skills}
    if await run_preflight(plan, adapters, stop) is None:  # interrupted while skills were checked
        return EvaluationOutcome([], [], True)
    try:
        if output_dir is not None and formats:
            from .reports import prepare_output_dir

            prepare_output_dir(output_dir, formats)
        store = Store.open(store_path) if store_path is not None else None
    except BaseException:
        await close_adapters(adapters.values())
        raise
    evaluation_id = ""
    writer: ResultWriter | None = None
    try:
        if store is not None:
            evaluation_id = store.begin_evaluation(
                benchmark_id=plan.benchmark.id, benchmark_version=plan.benchmark.version,
                config=settings_record(settings, plan, run_info), tool_version=__version__)
            writer = ResultWriter(store, evaluation_id)

        def finished(result: TaskResult) -> None:
            if writer is not None:
                writer.put(result)
            if on_result is not None:
                on_result(result)

        try:
            outcome = await execute(plan, settings, lambda skill: adapters[skill.id], on_result=finished,
                                    stop=stop)
        except BaseException:
            if store is not None and writer is not None:
                writer.close()
                store.finish_evaluation(evaluation_id, status="failed", reports=[])
            raise
        if writer is not None:
            writer.close()
        reports = build_reports(plan, outcome.results, timestamp=started, default_timeout_ms=settings.timeout_ms,
                                timeout_override_ms=settings.timeout_override_ms, interrupted=outcome.interrupted)
        if store is not None:
            store.finish_evaluation(evaluation_id, status="interrupted" if outcome.interrupted else "finished",
                                    reports=reports)
    finally:
        if store is not None:
            store.close()
    files: list[Path] = []
    if output_dir is not None and formats:
        from .reports import write_reports

        files = write_reports(reports, formats, output_dir)
    return EvaluationOutcome(reports, outcome.results, outcome.interrupted, evaluation_id or None, files)
