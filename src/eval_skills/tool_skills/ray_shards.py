"""A tool-skill evaluation on a Ray cluster: whole shards (one skill x a slice of the tasks, every run) per task.

One call of a tool skill takes about 0.1 ms of harness work, a Ray task about 0.5 ms: one task per call would
cost several times the call. So a shard runs today's asynchronous runner
(:func:`eval_skills.tool_skills.runner.execute`) on its node: the skill is written there from its bytes (read
once here, its folder frozen), its adapter started there (a persistent skill once per shard), the shard's tasks
run ``--concurrency`` at once and scored there. Its results stream back in batches as they finish (a Ray
streaming task), and this process, the only writer,
stores and reports them as the local runner's are.

A shard whose node is lost is sent again with the items it had not yet returned, :data:`RETRIES` times, then
they are errors naming the loss; an item is recorded once. Ctrl-C cancels the shards in flight (each stops its
skill's processes on its node) and keeps what came back. Tasks scored by a custom scorer or an LLM judge are
refused for now: their scorer files and the judge's verdict cache belong to this machine.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import platform
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .._version import __version__
from ..adapters import create_adapter
from ..agents.bundle import SkillBundle, install_bundle, read_bundle
from ..cluster import RayCluster, stream_async
from ..errors import HarnessError, InputError
from ..formats.benchmark import Benchmark
from ..formats.skill import Skill, load_skill
from ..results import TaskResult
from ..scoring.scorers import ScoringContext, get_scorer
from ..scratch import folder_prefix, scratch_folder
from .plan import Plan, PlannedTask, WorkItem
from .preflight import close_adapters
from .runner import AdapterFactory, RunOutcome, RunSettings, execute

__all__ = ["RETRIES", "RayShards", "Shard", "check_shard_skill", "run_shard"]

STOP_WAIT_S = 30.0  # how long cancelled shards get to stop their skills (what they return meanwhile is kept)
RETRIES = 3  # times a shard's remaining items are sent again after its node was lost
ON_NODE_ONLY = ("custom", "llm_judge")  # scorers that need files or services of this machine


@dataclass(frozen=True)
class Shard:
    """One Ray task's work: a skill (as bytes), the tasks with their scorer settings, which (task, run) items."""

    skill_id: str
    skill: SkillBundle
    skill_file: str  # the name of its skill.json in the folder
    benchmark: Benchmark
    tasks: tuple[tuple[Any, str, Any, int | None], ...]  # (task, scorer type, options, timeout ms)
    items: frozenset[tuple[str, int]]  # (task id, run)
    runs: int
    settings: RunSettings
    scorer_timeout_s: float
    strict_input: bool
    input_problems: dict[tuple[str, str], str] = field(default_factory=dict)


class _Slice(Plan):
    """A plan that yields only the shard's items."""

    keep: frozenset[tuple[str, int]] = frozenset()

    def items(self) -> Iterator[WorkItem]:
        return (item for item in super().items() if (item.planned.task.id, item.run_id) in self.keep)

    @property
    def total(self) -> int:
        return len(self.keep)


def _node_skill(bundle: SkillBundle, skill_file: str, where: Path) -> Skill:
    folder = where / bundle.name
    install_bundle(folder, bundle)
    return load_skill(folder / skill_file)


def check_shard_skill(bundle: SkillBundle, skill_file: str) -> tuple[str, str | None]:
    """On a node: this node's eval-skills version, and why the skill cannot run here (its adapter's preflight)."""
    with tempfile.TemporaryDirectory(prefix="eval-skills-check-") as tmp:
        try:
            skill = _node_skill(bundle, skill_file, Path(tmp))
            adapter = create_adapter(skill)

            async def check() -> None:
                try:
                    await adapter.preflight()
                finally:
                    await close_adapters([adapter])

            asyncio.run(check())
        except InputError as exc:
            return __version__, f"skill {bundle.name}: {exc.line()}"
        except Exception as exc:  # noqa: BLE001 - said, with the node's name
            return __version__, f"skill {bundle.name}: {type(exc).__name__}: {exc}"
    return __version__, None


def run_shard(shard: Shard) -> Iterator[tuple[list[TaskResult], str | None]]:
    """On a node (a Ray streaming task): run the shard's items; yields ``(results, None)`` batches as they
    finish, and ``([], failure)`` last when a fault of the harness stopped the shard."""

    async def body(emit: Callable[[tuple[list[TaskResult], str | None]], None]) -> None:
        # in the runs' scratch folder, named so that what a killed node left is swept by the next process
        with tempfile.TemporaryDirectory(prefix=folder_prefix("shard"), dir=scratch_folder(),
                                         ignore_cleanup_errors=True) as tmp:
            skill = await asyncio.to_thread(_node_skill, shard.skill, shard.skill_file, Path(tmp))
            scoring = ScoringContext(timeout_s=shard.scorer_timeout_s)
            planned = [PlannedTask(task, get_scorer(kind), kind, options, timeout) for task, kind, options, timeout
                       in shard.tasks]
            plan = _Slice(skills=[skill], benchmark=shard.benchmark, tasks=planned, runs=shard.runs,
                          scoring=scoring, input_problems=shard.input_problems, strict_input=shard.strict_input)
            plan.keep = shard.items
            try:
                outcome = await execute(plan, shard.settings, create_adapter,
                                        on_result=lambda result: emit(([result], None)))
            finally:
                scoring.close()
            if outcome.failure is not None:
                emit(([], f"on node {platform.node()}: {outcome.failure}"))

    for batch in stream_async(body):
        results = [r for part, _ in batch for r in part]
        failures = [f for _, f in batch if f]
        if results:
            yield results, None
        for failure in failures:
            yield [], failure


class RayShards:
    """Runs an evaluation's items on ``cluster`` in shards: call it as :func:`eval_skills.tool_skills.runner.execute`
    (``evaluate(..., scheduler=RayShards(cluster))``). ``shard_tasks``: tasks per shard (default: enough shards
    for two per slot)."""

    def __init__(self, cluster: RayCluster, *, shard_tasks: int | None = None) -> None:
        self.cluster = cluster
        self.shard_tasks = shard_tasks
        self.bundles: dict[str, SkillBundle] = {}

    def check(self, plan: Plan) -> int:
        """Refuse what cannot run on the nodes, then check every skill on every node; InputError naming the
        first problem. How many nodes were checked."""
        for planned in plan.tasks:
            if planned.scorer_type in ON_NODE_ONLY:
                raise InputError(f"task {planned.task.id!r} is scored by {planned.scorer_type}, which does not run "
                                 "on Ray", field="--executor ray", hint="run this benchmark with --executor local")
        for skill in plan.skills:
            self.bundles[skill.id] = read_bundle(skill.root)
        nodes = 0
        for skill in plan.skills:
            nodes = self.cluster.check_nodes(check_shard_skill, self.bundles[skill.id], skill.path.name)
        return nodes

    def shards(self, plan: Plan, settings: RunSettings) -> list[Shard]:
        slots = self.cluster.capacity()
        size = self.shard_tasks or max(1, math.ceil(len(plan.tasks) * len(plan.skills) / (2 * slots)))
        shards = []
        for skill in plan.skills:
            bundle = self.bundles.get(skill.id) or read_bundle(skill.root)
            for start in range(0, len(plan.tasks), size):
                part = plan.tasks[start:start + size]
                items = frozenset((p.task.id, run) for p in part for run in range(1, plan.runs + 1))
                shards.append(Shard(skill.id, bundle, skill.path.name, plan.benchmark,
                                    tuple((p.task, p.scorer_type, p.options, p.timeout_ms) for p in part), items,
                                    plan.runs, settings, plan.scoring.timeout_s, plan.strict_input,
                                    {k: v for k, v in plan.input_problems.items() if k[0] == skill.id}))
        return shards

    async def __call__(self, plan: Plan, settings: RunSettings, factory: AdapterFactory, *,
                       on_result: Callable[[TaskResult], None] | None = None,
                       stop: asyncio.Event | None = None) -> RunOutcome:
        await close_adapters([factory(skill) for skill in plan.skills])  # the runs start their own on the nodes
        outcome = RunOutcome()
        shards = self.shards(plan, settings)
        got: set[tuple[str, str, int]] = set()
        slots = asyncio.Semaphore(self.cluster.capacity())
        task = self.cluster.remote(run_shard, num_returns="streaming", max_retries=0,
                                   **self.cluster.shape.options())
        ray = self.cluster.ray
        lost = (ray.exceptions.WorkerCrashedError, ray.exceptions.NodeDiedError, ray.exceptions.ObjectLostError)
        streams: set[Any] = set()
        halt = asyncio.Event()  # the user's stop, or a fault of the harness

        def take(result: TaskResult) -> None:
            key = (result.skill_id, result.task_id, result.run_id)
            if key in got:
                return
            got.add(key)
            outcome.results.append(result)
            if on_result is not None:
                on_result(result)

        def fail(text: str) -> None:
            if outcome.failure is None and not halt.is_set():
                outcome.failure = HarnessError(text)
            halt.set()

        async def one(shard: Shard) -> None:
            for attempt in range(RETRIES + 1):
                left = frozenset(i for i in shard.items if (shard.skill_id, *i) not in got)
                if not left or halt.is_set():
                    return
                async with slots:
                    if halt.is_set():
                        return
                    stream = task.remote(replace(shard, items=left))
                    streams.add(stream)
                    try:
                        async for ref in stream:
                            results, failure = await ref
                            for result in results:
                                take(result)
                            if failure is not None:
                                fail(failure)
                        return
                    except lost as exc:
                        why = " ".join(str(exc).split())[:300]
                        if attempt == RETRIES:
                            for task_id, run in sorted(left):
                                take(TaskResult(task_id, shard.skill_id, run, "error", 0.0, None,
                                                error=f"its shard's node was lost {RETRIES + 1} times ({why})"))
                    except ray.exceptions.RayError as exc:
                        fail(f"a shard of skill {shard.skill_id} failed: {' '.join(str(exc).split())[:300]}")
                        return
                    finally:
                        streams.discard(stream)

        running = [asyncio.ensure_future(one(shard)) for shard in shards]
        everything = asyncio.gather(*running, return_exceptions=True)
        waits: list[asyncio.Future[Any]] = [asyncio.ensure_future(halt.wait())]
        if stop is not None:
            waits.append(asyncio.ensure_future(stop.wait()))
        try:
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.wait([everything, *waits], return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiting in waits:
                waiting.cancel()
            if not everything.done():
                outcome.interrupted = outcome.failure is None
                halt.set()
                for stream in list(streams):  # each cancelled task stops its skill's processes on its node
                    with contextlib.suppress(Exception):
                        ray.cancel(stream)
                await asyncio.wait([everything], timeout=STOP_WAIT_S)  # what comes back meanwhile is kept
                for future in running:
                    future.cancel()
                await asyncio.gather(everything, return_exceptions=True)
        if everything.done() and not everything.cancelled():
            for result in everything.result():
                if isinstance(result, Exception) and outcome.failure is None:
                    outcome.failure = HarnessError(f"a shard failed: {type(result).__name__}: {result}")
        return outcome
