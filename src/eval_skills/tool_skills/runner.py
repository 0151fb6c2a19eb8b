"""The async scheduler: runs a plan's items with bounded concurrency, timeouts, retries and cancellation.

It knows nothing of reports or storage: each finished item is handed to ``on_result`` as it finishes.

The boundary with the skill and with scorers is here: whatever an adapter or a scorer raises is that task's
result with its reason, never a crash. Scoring runs off the event loop with its own deadline, so it never
counts in a skill's latency or timeout. Only a fault of the harness stops a run (a :class:`HarnessError`:
the results store failing, or running out of descriptors or processes after retries): the run stops as if
interrupted and ``RunOutcome.failure`` says why.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..adapters.base import Adapter
from ..errors import HarnessError, HarnessResourceError, InputError, ScorerError, SkillError
from ..formats.skill import Skill
from ..procs import reap_orphans, resource_failure
from ..results import TaskResult
from ..scoring.offloop import run_off_loop
from .plan import Plan, WorkItem

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


RESOURCE_RETRIES = 5  # a task that hits a harness resource limit waits and tries again this many times
RESOURCE_WAIT_S = 0.25  # times the attempt number
SCORER_GRACE_S = 1.0  # scorers stop themselves at their deadline (roughly); we stop waiting at 2 x it + this


@dataclass(repr=False)
class RunOutcome:
    results: list[TaskResult] = field(default_factory=list)
    interrupted: bool = False
    failure: HarnessError | None = None  # the harness fault that stopped the run

    def __repr__(self) -> str:
        return f"<RunOutcome {len(self.results)} results interrupted={self.interrupted} failure={self.failure}>"


async def _start_adapters(plan: Plan, factory: AdapterFactory) -> tuple[dict[str, Adapter], dict[str, str]]:
    """Create every adapter first (config errors stop the run before any task), then start them.

    A skill whose adapter cannot start is not a crash: its tasks become errors with that reason.
    """
    adapters = {skill.id: factory(skill) for skill in plan.skills}
    failures: dict[str, str] = {}

    async def start(skill_id: str, adapter: Adapter) -> None:
        try:
            await adapter.start()
        except (InputError, HarnessError):
            raise
        except SkillError as exc:
            failures[skill_id] = f"skill did not start: {exc}"
        except Exception as exc:  # noqa: BLE001 - whatever starting a skill does, its tasks say so
            if resource_failure(exc):
                raise HarnessResourceError(f"cannot start skill {skill_id}: {exc}") from exc
            failures[skill_id] = f"skill did not start: {type(exc).__name__}: {exc}"

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


async def _invoke(item: WorkItem, adapter: Adapter, settings: RunSettings, base: TaskResult) -> Any:
    """Call the skill, with retries; returns the Invocation, or None when ``base`` now holds the failure."""
    task = item.planned.task
    timeout_s = settings.timeout_for(item.planned.timeout_ms, item.skill.adapter.timeoutMs) / 1000
    retries = settings.retries_for(item.skill.adapter.retries)
    attempt = resource_attempt = 0
    while True:
        attempt += 1
        started = time.perf_counter()
        try:
            invocation = await adapter.invoke(task.inputData, timeout_s)
        except InputError:
            raise
        except Exception as exc:  # noqa: BLE001 - the boundary with the skill: all of it is this task's result
            if isinstance(exc, HarnessError) and not isinstance(exc, HarnessResourceError):
                raise
            if isinstance(exc, HarnessResourceError) or (not isinstance(exc, SkillError) and resource_failure(exc)):
                resource_attempt += 1  # never the skill's fault: wait for descriptors to free up, then stop
                if resource_attempt > RESOURCE_RETRIES:
                    if isinstance(exc, HarnessError):
                        raise
                    raise HarnessResourceError(f"out of resources: {exc}") from exc
                attempt -= 1
                await asyncio.sleep(RESOURCE_WAIT_S * resource_attempt)
                continue
            # an adapter that queues calls knows how long the skill itself had the call
            measured = getattr(exc, "latency_ms", None)
            base.latency_ms = measured if measured is not None else (time.perf_counter() - started) * 1000
            if isinstance(exc, SkillError):
                base.status = exc.status  # type: ignore[assignment]
                base.error = str(exc) or type(exc).__name__
                base.output = exc.output
                retryable = exc.retryable
            else:  # not a SkillError: an adapter's own fault, still only this task's result
                base.status = "error"
                base.error = f"{type(exc).__name__}: {exc}"
                retryable = True
            base.attempts = attempt
            if retryable and attempt <= retries:
                await asyncio.sleep(settings.backoff_ms * attempt / 1000)
                continue
            return None
        base.latency_ms = invocation.latency_ms if invocation.latency_ms is not None else (
            (time.perf_counter() - started) * 1000)
        base.attempts = attempt
        base.status = "error"  # an earlier attempt's status (a timeout) is not this result's: scoring sets it
        base.error = None  # nor is its error
        base.output = None
        return invocation


async def _run_item(item: WorkItem, adapter: Adapter, plan: Plan, settings: RunSettings) -> TaskResult:
    planned = item.planned
    task = planned.task
    base = TaskResult(task.id, item.skill.id, item.run_id, "error", 0.0, None, scorer_type=planned.scorer_type)
    if item.input_problem:  # sent anyway, as the original does, unless the plan is strict about inputs
        if plan.strict_input:
            base.error = item.input_problem
            return base
        base.extra["warnings"] = [item.input_problem]
    invocation = await _invoke(item, adapter, settings, base)
    if invocation is None:
        return base
    base.output = invocation.output
    base.usage = invocation.usage
    ctx = plan.scoring
    scorer = planned.scorer
    try:
        if scorer.is_async:  # waits on I/O (a judge): on the loop, cancelled at the deadline
            score = await asyncio.wait_for(scorer.score(invocation.output, task, planned.options, ctx),
                                           scorer.timeout_s(ctx))
        elif scorer.inline is not None and scorer.inline(invocation.output):  # linear work on a short answer
            score = scorer(invocation.output, task, planned.options, ctx)
        else:
            score = await run_off_loop(lambda: scorer(invocation.output, task, planned.options, ctx),
                                       2 * ctx.timeout_s + SCORER_GRACE_S)
    except TimeoutError:  # our deadline, or the scorer's own (regex matching stops itself)
        base.error = f"scorer {planned.scorer_type} did not finish within {scorer.timeout_s(ctx):g}s"
        return base
    except Exception as exc:  # noqa: BLE001 - a scorer's fault is this task's error, never the run's
        if isinstance(exc, HarnessError):
            raise
        text = str(exc) if isinstance(exc, ScorerError | InputError) else f"{type(exc).__name__}: {exc}"
        # a message naming its scorer already ("custom scorer x.py did not return ...") is kept as it is
        base.error = text if text.startswith(planned.scorer_type) else f"scorer {planned.scorer_type} failed: {text}"
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

    halt = asyncio.Event()  # set when the harness itself failed: stop as if interrupted

    def record(result: TaskResult) -> None:
        outcome.results.append(result)
        if on_result is not None:
            on_result(result)

    async def worker() -> None:
        try:
            for item in items:  # a shared iterator: each item is taken by exactly one worker
                failure = failures.get(item.skill.id)
                if failure is not None:
                    planned = item.planned
                    record(TaskResult(planned.task.id, item.skill.id, item.run_id, "error", 0.0, None,
                                      error=failure, scorer_type=planned.scorer_type))
                    continue
                record(await _run_item(item, adapters[item.skill.id], plan, settings))
        except HarnessError as exc:
            if outcome.failure is None:
                outcome.failure = exc
            halt.set()

    workers = [asyncio.create_task(worker()) for _ in range(min(settings.concurrency, max(plan.total, 1)))]
    waits: list[asyncio.Future[Any]] = [asyncio.ensure_future(halt.wait())]
    if stop is not None:
        waits.append(asyncio.ensure_future(stop.wait()))
    try:
        done_all: asyncio.Future[Any] = asyncio.gather(*workers)
        await asyncio.wait([*waits, done_all], return_when=asyncio.FIRST_COMPLETED)
        if not done_all.done():
            outcome.interrupted = outcome.failure is None
            for w in workers:
                w.cancel()
            await asyncio.gather(done_all, return_exceptions=True)
        else:
            done_all.result()
    except asyncio.CancelledError:
        outcome.interrupted = True
        for w in workers:
            w.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
    finally:
        for waiting in waits:
            waiting.cancel()
        await asyncio.gather(*(a.close() for a in adapters.values()), return_exceptions=True)
        reap_orphans()
    return outcome
