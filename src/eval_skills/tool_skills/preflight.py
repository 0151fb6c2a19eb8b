"""Checks made with the skills themselves, before anything runs or is written: every adapter's ``preflight``
(an MCP server started and its tools listed, a Python module imported), and whether the tasks' ``inputData``
fit the input schema an adapter learned there (an MCP tool's, a LangChain tool's)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping
from typing import Any

from ..adapters.base import Adapter
from ..errors import ScorerError
from ..scoring.scorers import schema_problem, schema_validator
from .plan import Plan

__all__ = ["close_adapters", "dry_run_notes", "input_fit_notes", "run_preflight"]

SHOWN_MISFITS = 10


def input_fit_notes(schema: dict[str, object], plan: Plan) -> list[str]:
    """Whether each task's ``inputData`` fits ``schema``: one line when all do, else one line per misfit."""
    try:
        validator = schema_validator(dict(schema))
    except ScorerError as exc:
        return [f"its input schema cannot be checked: {exc}"]
    tasks = [planned.task for planned in plan.tasks if planned.task.inputData is not None]
    misfits = [(task.id, problem) for task in tasks
               if (problem := schema_problem(validator, task.inputData)) is not None]
    if not misfits:
        return [f"the inputData of all {len(tasks)} tasks fit its input schema"]
    lines = [f"the inputData of {len(misfits)} of {len(tasks)} tasks do not fit its input schema:"]
    lines += [f"  task {task_id}: {problem}" for task_id, problem in misfits[:SHOWN_MISFITS]]
    if len(misfits) > SHOWN_MISFITS:
        lines.append(f"  and {len(misfits) - SHOWN_MISFITS} more")
    return lines


async def close_adapters(adapters: Iterable[Adapter]) -> None:
    await asyncio.shield(asyncio.gather(*(adapter.close() for adapter in adapters), return_exceptions=True))


async def run_preflight(plan: Plan, adapters: Mapping[str, Adapter],
                        stop: asyncio.Event | None = None) -> dict[str, list[str]] | None:
    """Every adapter's preflight at once; notes per skill id. The first InputError (or any other failure) closes
    every adapter and is raised. None when ``stop`` was set first (the adapters are then closed too). On success
    the adapters keep what they started, for the run."""
    checks: dict[str, asyncio.Future[Any]] = {skill_id: asyncio.ensure_future(adapter.preflight())
                                              for skill_id, adapter in adapters.items()}
    waiting = set(checks.values())
    stopper: asyncio.Future[Any] | None = asyncio.ensure_future(stop.wait()) if stop is not None else None
    try:
        while waiting:
            done, _ = await asyncio.wait(waiting | ({stopper} if stopper else set()),
                                         return_when=asyncio.FIRST_COMPLETED)
            if stopper is not None and stopper in done:
                raise asyncio.CancelledError
            for finished in done:
                waiting.discard(finished)
                finished.result()  # raises the check's InputError
    except BaseException as exc:
        for future in checks.values():
            future.cancel()
        await asyncio.gather(*checks.values(), return_exceptions=True)
        await close_adapters(adapters.values())
        if isinstance(exc, asyncio.CancelledError) and stopper is not None and stopper.done():
            return None
        raise
    finally:
        if stopper is not None:
            stopper.cancel()
    notes: dict[str, list[str]] = {}
    for skill_id, future in checks.items():
        lines = list(future.result())
        schema = adapters[skill_id].input_schema
        if schema is not None:
            lines += input_fit_notes(schema, plan)
        notes[skill_id] = lines
    return notes


async def dry_run_notes(plan: Plan, adapters: Mapping[str, Adapter]) -> dict[str, list[str]]:
    """The preflight of a dry run: checks and notes, then everything it started is stopped."""
    notes = await run_preflight(plan, adapters)
    await close_adapters(adapters.values())
    return notes or {}
