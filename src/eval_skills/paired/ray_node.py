"""What a Ray task does on its node for one agent run (the body of :class:`~.ray_executor.RayExecutor`'s tasks).

The run goes exactly as on the local executor (:meth:`LocalExecutor.run_one`: a fresh private folder on the node,
in the worker's own private folder; the fixture files and skills written from the spec's bytes; the agent; the
changed files read back; the folder removed), inside :func:`~eval_skills.cluster.run_async`: a ``ray.cancel``
stops it at once and whatever the agent left running is killed. The run's timeout is enforced here too (the agent
stops itself at it; a run that still has not ended :data:`TIMEOUT_GRACE_S` later is cancelled and recorded as a
timeout). The output travels back by value: the agent's stdout comes back in memory, its secrets masked on the
node.
"""

from __future__ import annotations

import asyncio
import atexit
import platform
import time
from dataclasses import replace

from .._version import __version__
from ..agents import Agent, RawOutput, TokenUsage
from ..agents.workdir import RunFolders
from ..cluster import run_async
from ..errors import EvalSkillsError, InputError
from ..masking import mask_bytes
from .executor import RunOutput, RunSpec
from .local import LocalExecutor, now

__all__ = ["TIMEOUT_GRACE_S", "check_agent", "run_spec"]

TIMEOUT_GRACE_S = 30.0  # beyond the run's timeout, the task cancels an agent that has not stopped itself


_folders: RunFolders | None = None


def _run_folders() -> RunFolders:
    """The private folder of this worker's runs (made once, removed when the worker exits)."""
    global _folders
    if _folders is None:
        _folders = RunFolders("paired")
        atexit.register(_folders.close)
    return _folders


def check_agent(agent: Agent) -> tuple[str, str | None]:
    """This node's eval-skills version, and why the agent (its program, its sandbox) cannot run here, or None."""
    try:
        agent.check()
    except InputError as exc:
        return __version__, exc.line()
    except EvalSkillsError as exc:
        return __version__, str(exc)
    return __version__, None


def _portable(out: RunOutput) -> RunOutput:
    """The output as it can travel: the stdout in memory (not in a spill file of this node), secrets masked."""
    raw = out.raw_stdout
    if raw is None:
        return out
    moved = RawOutput(spill_at=1 << 62)
    moved.write(mask_bytes(raw.read_bytes(), raw.secrets))
    moved.close()
    return replace(out, raw_stdout=moved)


def _failed(spec: RunSpec, started: str, began: float, status: str, error: str) -> RunOutput:
    return RunOutput(run_id=spec.run_id, status=status, response=None, error=error,  # type: ignore[arg-type]
                     transcript=[], files=[], duration_s=time.monotonic() - began,
                     usage=TokenUsage.estimate(spec.prompt, None), started_at=started, finished_at=now())


def run_spec(agent: Agent, spec: RunSpec, max_file_bytes: int) -> RunOutput:
    """Run one spec on this node (a Ray task's body). Failures of the run are its output, never an exception."""
    executor = LocalExecutor(agent, concurrency=1, max_file_bytes=max_file_bytes)
    where = platform.node()

    async def body() -> RunOutput:
        root = _run_folders()
        started, began = now(), time.monotonic()
        try:
            async with asyncio.timeout(spec.timeout + TIMEOUT_GRACE_S):
                return _portable(await executor.run_one(spec, root))
        except TimeoutError:
            return _failed(spec, started, began, "timeout",
                           f"timed out after {spec.timeout:g} s (the agent did not stop; stopped on node {where})")
        except Exception as exc:  # noqa: BLE001 - a failure of this run on this node is its result
            return _failed(spec, started, began, "error", f"the run failed on node {where}: "
                                                          f"{type(exc).__name__}: {exc}")

    return run_async(body)
