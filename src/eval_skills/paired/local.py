"""The executor that runs agents on this machine, ``concurrency`` at once.

Each run gets a fresh private folder (``0700``, a random name in a folder whose entries cannot be listed:
:class:`~eval_skills.agents.workdir.RunFolders`; outside the skill and the workspace, so an agent that looks
in parent folders for project settings or skills finds none of ours): the spec's files are written to its
root, the skills written from the bundles' bytes (their digest checked), the agent runs there, the files it
created or changed are read back into the output, and the folder is removed. No run reads what another wrote:
there is no shared copy of a skill for a run to change.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

from ..agents import Agent, AgentRequest, AgentResult, Prepared
from ..agents.workdir import RunFolders
from ..errors import InputError
from ..procs import reap_orphans
from .executor import OutputFile, RunOutput, RunSpec

__all__ = ["MAX_OUTPUT_FILE", "LocalExecutor", "now", "thread_pool"]

MAX_OUTPUT_FILE = 10 << 20  # bytes of one file brought back from a run; larger ones are listed, not copied


def now() -> str:
    """This moment in UTC, to the millisecond, as the run records write it."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


_now = now


def thread_pool(concurrency: int) -> ThreadPoolExecutor:
    """A thread pool sized for ``concurrency`` local runs: each run's file work (preparing its folder,
    installing skills, snapshots, copying outputs, writing its records) goes through ``asyncio.to_thread``, so
    set this as the event loop's default executor (the CLI does) or runs wait for threads."""
    return ThreadPoolExecutor(max_workers=2 * concurrency + 4, thread_name_prefix="eval-skills")


class LocalExecutor:
    """Runs specs with ``agent`` on this machine. ``scratch`` is where the temporary folders go (default: the
    system's temporary folder)."""

    def __init__(self, agent: Agent, *, concurrency: int = 4, scratch: Path | None = None,
                 max_file_bytes: int = MAX_OUTPUT_FILE) -> None:
        if concurrency < 1:
            raise InputError("concurrency must be at least 1", field="--concurrency")
        self.agent = agent
        self.concurrency = concurrency
        self.scratch = scratch
        self.max_file_bytes = max_file_bytes

    async def run(self, specs: Iterator[RunSpec]) -> AsyncIterator[RunOutput]:
        root = RunFolders("paired", self.scratch)
        queue: asyncio.Queue[tuple[RunOutput, asyncio.Event] | None] = asyncio.Queue()
        source = iter(specs)

        async def worker() -> None:
            for spec in source:  # shared: each spec is taken by one worker, when it is free
                taken = asyncio.Event()
                await queue.put((await self._one(spec, root), taken))
                await taken.wait()  # the caller has seen this output before the next spec is pulled

        async def workers_then_done() -> None:
            try:
                await asyncio.gather(*(worker() for _ in range(self.concurrency)))
            finally:
                queue.put_nowait(None)

        pool = asyncio.create_task(workers_then_done())
        try:
            while (item := await queue.get()) is not None:
                output, taken = item
                try:
                    yield output
                finally:
                    taken.set()
            await pool  # raises a harness fault of a worker
        finally:
            if not pool.done():
                pool.cancel()
            with contextlib.suppress(BaseException):
                await pool
            reap_orphans()  # what the agents left running (adopted, when this process is a subreaper)
            await asyncio.to_thread(root.close)

    def _collect(self, workdir: Path, result: AgentResult) -> list[OutputFile]:
        files = []
        for change in result.files:
            if change.kind == "deleted":
                files.append(OutputFile(change.name, change.kind, None))
                continue
            path = workdir / change.path
            if path.is_symlink() or not path.is_file():
                files.append(OutputFile(change.name, change.kind, change.size, note="not a regular file"))
            elif (change.size or 0) > self.max_file_bytes:
                files.append(OutputFile(change.name, change.kind, change.size,
                                        note=f"larger than {self.max_file_bytes >> 20} MiB: not copied"))
            else:
                try:
                    files.append(OutputFile(change.name, change.kind, change.size, path.read_bytes()))
                except OSError as exc:
                    files.append(OutputFile(change.name, change.kind, change.size,
                                            note=f"could not be read: {exc.strerror or exc}"))
        return files

    async def run_one(self, spec: RunSpec, root: RunFolders) -> RunOutput:
        """Run one spec in a new folder of ``root`` (what each slot does; a Ray task does it on its node)."""
        return await self._one(spec, root)

    async def _one(self, spec: RunSpec, root: RunFolders) -> RunOutput:
        # the file work in two trips to a thread (a trip costs about as much as a small run's files do):
        # the folder made, the fixtures and skills written, the first snapshot; then the second snapshot, the
        # changed files read back, the folder removed
        agent = self.agent

        def begin() -> Prepared:
            workdir = root.new()
            request = AgentRequest(spec.prompt, workdir, spec.skills, timeout=spec.timeout, max_turns=spec.max_turns,
                                   model=spec.model, files=spec.files)
            try:
                return agent.prepare(request)
            except BaseException:
                shutil.rmtree(workdir, True)
                raise

        prepared = await asyncio.to_thread(begin)
        workdir = prepared.workspace
        try:
            started = _now()
            execution, duration = await agent.perform(prepared)
            finished = _now()
        except BaseException:
            await asyncio.to_thread(shutil.rmtree, workdir, True)
            raise

        def end() -> tuple[AgentResult, list[OutputFile]]:
            try:
                result = agent.conclude(prepared, execution, duration)
                return result, self._collect(workdir, result)
            finally:
                shutil.rmtree(workdir, True)

        result, files = await asyncio.to_thread(end)
        return RunOutput(run_id=spec.run_id, status=result.status, response=result.response, error=result.error,
                         transcript=result.transcript, files=files, duration_s=result.duration_s,
                         usage=result.usage, started_at=started, finished_at=finished, agent=result.agent,
                         model=result.model, skills_invoked=result.skills_invoked, warnings=result.warnings,
                         exit_code=result.exit_code, raw_stdout=result.raw_stdout, isolation=result.isolation,
                         stderr_tail=result.stderr_tail, installed_skills=result.installed_skills)
