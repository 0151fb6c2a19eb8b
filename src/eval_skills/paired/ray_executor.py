"""The executor that runs agents on a Ray cluster: one Ray task per run, as many at once as the cluster takes.

Each spec goes to a task by value (its prompt, fixture files and skills as bytes: nothing names a path of this
machine), and the task runs it on its node as the local executor would (:func:`~.ray_node.run_spec`). Outputs
come back in the order they finish; this process stays the only writer of files and store rows. The executor
keeps one task in flight per slot (the cluster's capacity for ``--ray-resources``, or fewer with
``--concurrency``) and pulls the next spec only when a slot is free and the caller has taken the output before,
so a token budget and Ctrl-C act as they do locally. Closing the output iterator cancels the tasks in flight
and waits for them to end (each kills its agent's process tree on its node before it ends).

A task whose node is lost is retried by Ray on another node (:attr:`RayExecutor.retries` times); its run is
yielded once, whichever attempt finished it. Only the task's own temporary folder sees the side effects of an
attempt.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import os
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

from ..agents import Agent, TokenUsage
from ..cluster import RayCluster
from ..errors import InputError
from .executor import RunOutput, RunSpec
from .local import MAX_OUTPUT_FILE, now
from .ray_node import check_agent, run_spec

__all__ = ["RETRIES", "RayExecutor", "node_agent"]

RETRIES = 3  # attempts after the first for a task whose worker or node was lost


def node_agent(agent: Agent, forward_env: Sequence[str] = ()) -> Agent:
    """The agent as it travels to the nodes: what it read from this machine's home (credentials for a sandbox)
    left behind, so each node reads its own; the variables named in ``forward_env`` copied from this
    environment into its own (``--ray-env``)."""
    moved = copy.copy(agent)
    for cached in ("_home", "_isolation"):
        moved.__dict__.pop(cached, None)
    missing = [name for name in forward_env if name not in os.environ]
    if missing:
        raise InputError(f"names {missing[0]}, which is not set here", field="--ray-env",
                         hint="set it, or drop --ray-env for it")
    moved.env = {**agent.env, **{name: os.environ[name] for name in forward_env}}
    return moved


class RayExecutor:
    """Runs specs with ``agent`` as tasks on ``cluster``. ``slots``: runs at once (default and most: what the
    cluster takes). Call :meth:`check` first: it finds the nodes that cannot run the agent."""

    def __init__(self, agent: Agent, cluster: RayCluster, *, slots: int | None = None,
                 max_file_bytes: int = MAX_OUTPUT_FILE, forward_env: Sequence[str] = (),
                 retries: int = RETRIES) -> None:
        if slots is not None and slots < 1:
            raise InputError("concurrency must be at least 1", field="--concurrency")
        self.agent = node_agent(agent, forward_env)
        self.cluster = cluster
        capacity = cluster.capacity()
        self.slots = min(slots, capacity) if slots is not None else capacity
        self.max_file_bytes = max_file_bytes
        self.retries = retries
        self.concurrency = self.slots

    def check(self) -> int:
        """Check the agent (its program, its sandbox) on every node that can take a run; InputError naming the
        first node that cannot. How many nodes were checked."""
        return self.cluster.check_nodes(check_agent, self.agent)

    async def run(self, specs: Iterator[RunSpec]) -> AsyncIterator[RunOutput]:
        ray = self.cluster.ray
        agent_ref = ray.put(self.agent)
        task = self.cluster.remote(run_spec, max_retries=self.retries, **self.cluster.shape.options())
        inflight: dict[asyncio.Future[Any], tuple[Any, RunSpec]] = {}
        source = iter(specs)
        seen: set[str] = set()

        def fill() -> None:
            while len(inflight) < self.slots:
                spec = next(source, None)
                if spec is None:
                    return
                ref = task.remote(agent_ref, spec, self.max_file_bytes)
                inflight[asyncio.wrap_future(ref.future())] = (ref, spec)

        try:
            fill()
            while inflight:
                done, _ = await asyncio.wait(list(inflight), return_when=asyncio.FIRST_COMPLETED)
                for future in done:
                    _, spec = inflight.pop(future)
                    output = self._output(future, spec)
                    if output.run_id in seen:  # never twice, whatever the cluster did
                        continue
                    seen.add(output.run_id)
                    yield output
                    fill()
                fill()
        finally:
            if inflight:
                refs = [ref for ref, _ in inflight.values()]
                await asyncio.shield(asyncio.to_thread(self.cluster.stop_tasks, refs))
                for future in inflight:
                    future.cancel()
                    with contextlib.suppress(BaseException):
                        await future

    def _output(self, future: asyncio.Future[Any], spec: RunSpec) -> RunOutput:
        """The task's output; a task that failed as a whole (its node lost more than :attr:`retries` times)
        is this run's error."""
        exceptions = self.cluster.ray.exceptions
        try:
            output = future.result()
        except (exceptions.WorkerCrashedError, exceptions.NodeDiedError, exceptions.ObjectLostError) as exc:
            why = f"its node or worker was lost {self.retries + 1} times ({_first_line(exc)})"
        except exceptions.RayError as exc:
            why = f"its Ray task failed: {_first_line(exc)}"
        else:
            if isinstance(output, RunOutput):
                return output
            why = f"its Ray task returned {type(output).__name__}, not a run output"
        stamp = now()
        return RunOutput(run_id=spec.run_id, status="error", response=None, error=f"the run did not finish: {why}",
                         transcript=[], files=[], duration_s=0.0, usage=TokenUsage.estimate(spec.prompt, None),
                         started_at=stamp, finished_at=stamp)


def _first_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return (text[:300] + "…") if len(text) > 300 else (text or type(exc).__name__)
