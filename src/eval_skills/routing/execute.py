"""Running the agent on every (query, run): a fresh workspace each time, the trigger decided from the transcript.

Each run gets an empty private folder outside any project (so the agent finds no other project skill by
walking up; ``0700``, a random name no other run can list or guess), with the skill under test and the
distractor skills written from the bytes read when the test started (their digest checked) and nothing else;
it is removed after the run. What stays is written to ``query-<i>/run-<k>/`` of the routing folder: ``transcript.jsonl``
(one event per line), ``result.json`` (status, error, response, skills invoked, usage, timing) and, for a
run in error, the agent's raw stdout as ``stdout.txt``.

A run whose agent failed or timed out is an error: its ``triggered`` is None, never False.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..agents import Agent, AgentRequest, AgentResult, AgentStatus, FileChange, RawOutput
from ..agents.bundle import SkillBundle, read_bundle
from ..agents.workdir import RunFolders
from ..formats.routing_results import routing_run_dir
from ..procs import reap_orphans
from .plan import RoutingPlan, RunItem

__all__ = ["RunOutcome", "RunSettings", "decide", "execute_runs", "remove_workspace", "result_of", "run_one"]

REMOVE_ATTEMPTS = 40  # tries at removing a run's workspace, 50 ms apart


@dataclass(frozen=True)
class RunSettings:
    concurrency: int = 4
    timeout_s: float = 300.0
    max_turns: int | None = None
    model: str | None = None


@dataclass
class RunOutcome:
    """One finished run. ``triggered`` is None when the run is an error (``status`` error or timeout)."""

    item: RunItem
    status: AgentStatus
    triggered: bool | None
    skills_invoked: list[str] = field(default_factory=list)
    distractors_invoked: list[str] = field(default_factory=list)
    error: str | None = None
    duration_s: float = 0.0
    usage: dict[str, Any] | None = None
    transcript: str | None = None  # relative to the routing folder


def decide(result: AgentResult, skill: str, distractors: Iterable[str]) -> tuple[bool | None, list[str]]:
    """``(triggered, distractors invoked)`` of one run, from the skill invocations in its transcript
    (``result.skills_invoked``: the backends' skill events). ``triggered`` is None for a run in error."""
    invoked = result.skills_invoked
    names = set(distractors)
    return (skill in invoked if result.ok else None), [name for name in invoked if name in names]


def _write_run(folder: Path, result: AgentResult, extra: dict[str, Any]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "transcript.jsonl", "w", encoding="utf-8") as out:
        for event in result.transcript:
            out.write(event.model_dump_json() + "\n")
    record = {key: value for key, value in result.to_json().items() if key != "transcript"}
    (folder / "result.json").write_text(json.dumps({**extra, **record}, indent=2, ensure_ascii=False, default=str)
                                        + "\n", encoding="utf-8")
    if not result.ok:
        result.raw_stdout.save(folder / "stdout.txt")


def remove_workspace(tmp: str) -> None:
    """Remove a run's temporary workspace. A run cancelled while its skills were being copied in leaves the
    copy going on in a worker thread, which may add files while they are removed: try again until the
    folder is gone (the copy of a skill takes milliseconds)."""
    for _ in range(REMOVE_ATTEMPTS):
        shutil.rmtree(tmp, ignore_errors=True)
        if not os.path.lexists(tmp):
            return
        time.sleep(0.05)


def read_skills(plan: RoutingPlan) -> list[SkillBundle]:
    """The skill and the distractors as the runs get them, read once (installed under their folders' names)."""
    return plan.bundles or [read_bundle(folder, folder.resolve().name) for folder in plan.skill_folders]


async def run_one(plan: RoutingPlan, agent: Agent, item: RunItem, settings: RunSettings, routing: Path, *,
                  folders: RunFolders, skills: list[SkillBundle]) -> RunOutcome:
    """Run one query once and record it. Whatever the agent (or its machinery) does becomes an outcome."""
    folder = routing_run_dir(routing, item.query_index, item.run_number)
    relative = (folder / "transcript.jsonl").relative_to(routing).as_posix()
    # one mkdir, on the loop: in a worker thread, a cancellation could leave the folder made and forgotten
    tmp = str(folders.new())
    try:
        request = AgentRequest(item.query.query, tmp, skills, timeout=settings.timeout_s,
                               max_turns=settings.max_turns, model=settings.model)
        result = await agent.run(request)
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # noqa: BLE001 - a failure of this run, never of the whole test
        await asyncio.to_thread(folder.mkdir, parents=True, exist_ok=True)
        return RunOutcome(item, "error", None, error=f"the run failed: {type(exc).__name__}: {exc}")
    finally:  # off the event loop; shielded so an interrupted run's folder goes too
        await asyncio.shield(asyncio.to_thread(remove_workspace, tmp))
    return await _finish(plan, item, result, folder, relative)


async def _finish(plan: RoutingPlan, item: RunItem, result: AgentResult, folder: Path, relative: str) -> RunOutcome:
    """Decide and record a finished run (its files in ``folder``)."""
    triggered, distractors = decide(result, plan.skill.name, (d.name for d in plan.distractors))
    extra = {"query": item.query.query, "query_index": item.query_index, "run": item.run_number,
             "should_trigger": item.query.should_trigger, "triggered": triggered,
             "distractors_invoked": distractors, "skills_invoked": result.skills_invoked}
    await asyncio.to_thread(_write_run, folder, result, extra)
    return RunOutcome(item, result.status, triggered, result.skills_invoked, distractors if result.ok else [],
                      result.error, round(result.duration_s, 3), result.usage.to_json(), relative)


@dataclass(frozen=True, slots=True)
class RoutingSpec:
    """One run as an executor takes it (the fields of :class:`eval_skills.paired.executor.RunSpec`, which the
    executors read): no fixture files, the skill and the distractors as bytes."""

    run_id: str
    prompt: str
    files: dict[str, bytes]
    skills: tuple[SkillBundle, ...]
    timeout: float
    max_turns: int | None
    model: str | None


def result_of(out: Any) -> AgentResult:
    """An executor's output (a :class:`~eval_skills.paired.executor.RunOutput`) as the agent's result it was made
    from (what a run's files are written from)."""
    return AgentResult(agent=out.agent, model=out.model, status=out.status, response=out.response, error=out.error,
                       transcript=out.transcript, files=[FileChange(f.path, f.kind, f.size) for f in out.files],
                       duration_s=out.duration_s, usage=out.usage, exit_code=out.exit_code,
                       stderr_tail=out.stderr_tail, raw_stdout=out.raw_stdout or RawOutput(),
                       installed_skills=out.installed_skills, warnings=out.warnings, isolation=out.isolation)


async def _through(executor: Any, plan: RoutingPlan, settings: RunSettings, routing: Path,
                   skills: list[SkillBundle], on_run: Callable[[RunOutcome], None] | None,
                   stop: asyncio.Event | None, todo: list[RunItem]) -> tuple[list[RunOutcome], bool]:
    """The runs through ``executor`` (the agent's runs elsewhere: a Ray cluster), recorded here as they finish."""
    outcomes: list[RunOutcome] = []
    items = {f"query-{item.query_index}-run-{item.run_number}": item for item in todo}
    stop = stop or asyncio.Event()

    def specs() -> Iterator[RoutingSpec]:
        for run_id, item in items.items():
            if stop.is_set():
                return
            yield RoutingSpec(run_id, item.query.query, {}, tuple(skills), settings.timeout_s, settings.max_turns,
                          settings.model)

    async def consume() -> None:
        outputs = executor.run(specs())
        async with contextlib.aclosing(outputs):
            async for out in outputs:
                item = items[out.run_id]
                folder = routing_run_dir(routing, item.query_index, item.run_number)
                relative = (folder / "transcript.jsonl").relative_to(routing).as_posix()
                outcome = await _finish(plan, item, result_of(out), folder, relative)
                outcomes.append(outcome)
                if on_run is not None:
                    on_run(outcome)

    running = asyncio.ensure_future(consume())
    stopper = asyncio.ensure_future(stop.wait())
    with contextlib.suppress(asyncio.CancelledError):  # cancelled from outside: stop like an interrupt
        await asyncio.wait([running, stopper], return_when=asyncio.FIRST_COMPLETED)
    stopper.cancel()
    interrupted = not running.done()
    if interrupted:
        running.cancel()
    await asyncio.gather(running, return_exceptions=True)
    if not interrupted:
        running.result()  # a fault of the harness itself stops the test
    return outcomes, interrupted


async def execute_runs(plan: RoutingPlan, agent: Agent, settings: RunSettings, routing: Path, *,
                       on_run: Callable[[RunOutcome], None] | None = None,
                       stop: asyncio.Event | None = None, skills: list[SkillBundle] | None = None,
                       items: Iterable[RunItem] | None = None,
                       executor: Any = None) -> tuple[list[RunOutcome], bool]:
    """Run every item of the plan (or only ``items``), ``settings.concurrency`` at a time (or through
    ``executor``, an :class:`~eval_skills.paired.executor.Executor` running them elsewhere, as many at once as it
    takes); ``(outcomes, interrupted)``.

    ``on_run`` gets each outcome as it finishes. Setting ``stop`` stops scheduling and cancels the runs in
    flight (their agents are killed); what finished is returned with ``interrupted`` True. ``skills`` replaces
    the bundles read from the plan's folders (a skill with another description, say)."""
    outcomes: list[RunOutcome] = []
    todo = list(plan.items() if items is None else items)
    if not todo:
        return outcomes, False
    if skills is None:
        skills = await asyncio.to_thread(read_skills, plan)
    if executor is not None:
        return await _through(executor, plan, settings, routing, skills, on_run, stop, todo)
    work = iter(todo)
    bundles = skills
    folders = RunFolders("routing")

    async def worker() -> None:
        for item in work:  # a shared iterator: each item is taken by exactly one worker
            outcome = await run_one(plan, agent, item, settings, routing, folders=folders, skills=bundles)
            outcomes.append(outcome)
            if on_run is not None:
                on_run(outcome)

    workers = [asyncio.create_task(worker()) for _ in range(max(1, min(settings.concurrency, len(todo))))]
    everything: asyncio.Future[Any] = asyncio.gather(*workers)
    waiting = [everything] if stop is None else [everything, asyncio.ensure_future(stop.wait())]
    with contextlib.suppress(asyncio.CancelledError):  # cancelled from outside: stop like an interrupt
        await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
    for extra in waiting[1:]:
        extra.cancel()
    interrupted = not everything.done()
    failed = everything.done() and not everything.cancelled() and everything.exception() is not None
    if interrupted or failed:
        for task in workers:
            task.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
    reap_orphans()  # what the agents left running (adopted, when this process is a subreaper)
    await asyncio.shield(asyncio.to_thread(folders.close))
    if failed:
        everything.result()  # a fault of the harness itself (the store, a full disk) stops the test
    if everything.done() and not everything.cancelled():
        everything.exception()  # retrieved, so asyncio does not print "exception was never retrieved"
    return outcomes, interrupted
