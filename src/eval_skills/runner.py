"""The async scheduler: runs a plan's items with bounded concurrency, timeouts, retries and cancellation.

It knows nothing of reports or storage: each finished item is handed to ``on_result`` as it finishes.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .adapters.base import Adapter
from .errors import EvalSkillsError, InputError, SkillError
from .formats.skill import Skill
from .plan import Plan, WorkItem
from .results import TaskResult

__all__ = ["RunSettings", "RunOutcome", "execute"]

AdapterFactory = Callable[[Skill], Adapter]
ResultCallback = Callable[[TaskResult], None]


@dataclass(frozen=True)
class RunSettings:
    """How to run. A task's timeout is its own ``timeoutMs``, else ``timeout_override_ms`` (the user's
    ``--timeout`` or config file), else the skill's ``adapter.config.json`` ``timeoutMs``, else
    ``timeout_ms``."""

    concurrency: int = 4
    timeout_ms: int = 30_000
    retries: int = 0
    backoff_ms: int = 500  # wait backoff_ms * attempt before retry number `attempt`
    timeout_override_ms: int | None = None
    retries_override: int | None = None  # the user's --retries (or config file): wins over the skill's own

    def timeout_for(self, task_timeout_ms: int | None, skill_timeout_ms: int | None) -> int:
        return task_timeout_ms or self.timeout_override_ms or skill_timeout_ms or self.timeout_ms

    def retries_for(self, skill_retries: int | None) -> int:
        """``retries_override``, else the skill's ``adapter.config.json`` ``retries``, else ``retries``."""
        if self.retries_override is not None:
            return self.retries_override
        return skill_retries if skill_retries is not None else self.retries


@dataclass(repr=False)
class RunOutcome:
    results: list[TaskResult] = field(default_factory=list)
    interrupted: bool = False

    def __repr__(self) -> str:
        return f"<RunOutcome {len(self.results)} results interrupted={self.interrupted}>"


async def _start_adapters(plan: Plan, factory: AdapterFactory) -> tuple[dict[str, Adapter], dict[str, str]]:
    """Create every adapter first (config errors stop the run before any task), then start them.

    A skill whose adapter cannot start is not a crash: its tasks become errors with that reason.
    """
    adapters = {skill.id: factory(skill) for skill in plan.skills}
    failures: dict[str, str] = {}

    async def start(skill_id: str, adapter: Adapter) -> None:
        try:
            await adapter.start()
        except SkillError as exc:
            failures[skill_id] = f"skill did not start: {exc}"

    tasks = [asyncio.ensure_future(start(k, a)) for k, a in adapters.items()]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
        for task in tasks:
            if task.done() and task.exception() is not None:
                raise task.exception()  # type: ignore[misc]
    except BaseException:  # an input error found at start, or the run was interrupted: stop what started
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await asyncio.shield(asyncio.gather(*(a.close() for a in adapters.values()), return_exceptions=True))
        raise
    return adapters, failures


async def _run_item(item: WorkItem, adapter: Adapter, plan: Plan, settings: RunSettings) -> TaskResult:
    planned = item.planned
    task = planned.task
    base = TaskResult(task.id, item.skill.id, item.run_id, "error", 0.0, 0.0, scorer_type=planned.scorer_type)
    if item.input_problem:  # sent anyway, as the original does, unless the plan is strict about inputs
        if plan.strict_input:
            base.error = item.input_problem
            return base
        base.extra["warnings"] = [item.input_problem]
    timeout_s = settings.timeout_for(planned.timeout_ms, item.skill.adapter.timeoutMs) / 1000
    retries = settings.retries_for(item.skill.adapter.retries)
    attempt = 0
    while True:
        attempt += 1
        started = time.perf_counter()
        try:
            invocation = await adapter.invoke(task.inputData, timeout_s)
        except SkillError as exc:
            # an adapter that queues calls knows how long the skill itself had the call
            base.latency_ms = exc.latency_ms if exc.latency_ms is not None else (
                (time.perf_counter() - started) * 1000)
            base.status = exc.status  # type: ignore[assignment]
            base.error = str(exc) or type(exc).__name__
            base.attempts = attempt
            if exc.retryable and attempt <= retries:
                await asyncio.sleep(settings.backoff_ms * attempt / 1000)
                continue
            return base
        base.latency_ms = invocation.latency_ms if invocation.latency_ms is not None else (
            (time.perf_counter() - started) * 1000)
        base.attempts = attempt
        base.error = None  # an earlier attempt's error is not this result's
        break
    # Let the next item's call go out before scoring this one, so a serial skill is never idle while we score.
    await asyncio.sleep(0)
    base.output = invocation.output
    base.usage = invocation.usage
    try:
        score = planned.scorer(invocation.output, task, planned.options, plan.scoring)
    except EvalSkillsError as exc:
        base.status = "error"
        base.error = f"scorer {planned.scorer_type} failed: {exc}"
        return base
    base.status = "pass" if score.passed else "fail"
    base.score = score.value
    base.reason = score.reason
    return base


async def execute(plan: Plan, settings: RunSettings, factory: AdapterFactory, *,
                  on_result: ResultCallback | None = None, stop: asyncio.Event | None = None) -> RunOutcome:
    """Run every item of the plan. Setting ``stop`` stops scheduling, cancels what is in flight and returns
    what finished with ``interrupted=True``. Adapters are always closed."""
    if settings.concurrency < 1:
        raise InputError("concurrency must be at least 1", field="--concurrency")
    outcome = RunOutcome()
    starting = asyncio.ensure_future(_start_adapters(plan, factory))
    if stop is not None:
        stopper = asyncio.ensure_future(stop.wait())
        await asyncio.wait([starting, stopper], return_when=asyncio.FIRST_COMPLETED)
        stopper.cancel()
        if not starting.done():  # interrupted while skills were starting: nothing ran, nothing to record
            starting.cancel()
            await asyncio.gather(starting, return_exceptions=True)
            outcome.interrupted = True
            return outcome
    adapters, failures = await starting
    items = plan.items()

    def record(result: TaskResult) -> None:
        outcome.results.append(result)
        if on_result is not None:
            on_result(result)

    async def worker() -> None:
        for item in items:  # a shared iterator: each item is taken by exactly one worker
            failure = failures.get(item.skill.id)
            if failure is not None:
                planned = item.planned
                record(TaskResult(planned.task.id, item.skill.id, item.run_id, "error", 0.0, 0.0,
                                  error=failure, scorer_type=planned.scorer_type))
                continue
            record(await _run_item(item, adapters[item.skill.id], plan, settings))

    workers = [asyncio.create_task(worker()) for _ in range(min(settings.concurrency, max(plan.total, 1)))]
    try:
        if stop is None:
            await asyncio.gather(*workers)
        else:
            stopper = asyncio.ensure_future(stop.wait())
            done_all: asyncio.Future[Any] = asyncio.gather(*workers)
            await asyncio.wait([stopper, done_all], return_when=asyncio.FIRST_COMPLETED)
            if not done_all.done():
                outcome.interrupted = True
                for w in workers:
                    w.cancel()
                await asyncio.gather(done_all, return_exceptions=True)
            else:
                stopper.cancel()
                done_all.result()
    except asyncio.CancelledError:
        outcome.interrupted = True
        for w in workers:
            w.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
    finally:
        await asyncio.gather(*(a.close() for a in adapters.values()), return_exceptions=True)
    return outcome
