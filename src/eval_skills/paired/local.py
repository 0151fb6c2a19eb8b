"""The executor that runs agents on this machine, ``concurrency`` at once.

Each run gets a fresh private folder (``0700``, a random name in a folder whose entries cannot be listed:
:class:`~eval_skills.agents.workdir.RunFolders`; outside the skill and the workspace, so an agent that looks
in parent folders for project settings or skills finds none of ours): the spec's files are written to its
root, the skills written from the bundles' bytes (their digest checked), the agent runs there, the files it
created or changed are read back into the output, and the folder is removed. No run reads what another wrote:
there is no shared copy of a skill for a run to change.

That file work is done on the event loop when it is small and in memory: when the runs' folders are on a memory
file system (:func:`~eval_skills.scratch.memory_backed`, as they are by default on Linux), a run whose files and
skills hold at most :data:`INLINE_ENTRIES` files and :data:`INLINE_BYTES` bytes is prepared there, and its
folder is walked there with that budget (every entry counted, also in the folders a snapshot leaves out); a
folder the agent made larger than that is handed to a thread, as all of them are on a disk. A trip to a thread
costs more than such small work (the threads and the loop take turns holding the interpreter), and a large tree
(an agent that ran ``npm install``) never holds up the other runs.
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
from ..agents.workdir import Budget, FileChange, RunFolders, TreeTooLarge
from ..errors import InputError
from ..procs import reap_orphans
from ..scratch import memory_backed
from .executor import OutputFile, RunOutput, RunSpec

__all__ = ["INLINE_BYTES", "INLINE_ENTRIES", "MAX_OUTPUT_FILE", "LocalExecutor", "now", "thread_pool"]

MAX_OUTPUT_FILE = 10 << 20  # bytes of one file brought back from a run; larger ones are listed, not copied
INLINE_ENTRIES = 200  # a run folder in memory with at most this many entries has its file work done on the loop
INLINE_BYTES = 256 << 10  # ... and at most this many bytes to write, read or digest (about a millisecond's work)


def now() -> str:
    """This moment in UTC, to the millisecond, as the run records write it."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


_now = now


def thread_pool(concurrency: int) -> ThreadPoolExecutor:
    """A thread pool sized for ``concurrency`` local runs: each run's file work (preparing its folder,
    installing skills, snapshots, copying outputs, writing its records) goes through ``asyncio.to_thread``
    (except a small run's folder in memory: see the module doc), so set this as the event loop's default executor
    (the CLI does) or runs wait for threads."""
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
            if change.data is not None:  # read by the snapshot that found the change: a regular file
                files.append(OutputFile(change.name, change.kind, change.size, change.data)
                             if (change.size or 0) <= self.max_file_bytes else self._too_large(change))
                continue
            path = workdir / change.path
            if path.is_symlink() or not path.is_file():
                files.append(OutputFile(change.name, change.kind, change.size, note="not a regular file"))
            elif (change.size or 0) > self.max_file_bytes:
                files.append(self._too_large(change))
            else:
                try:
                    files.append(OutputFile(change.name, change.kind, change.size, path.read_bytes()))
                except OSError as exc:
                    files.append(OutputFile(change.name, change.kind, change.size,
                                            note=f"could not be read: {exc.strerror or exc}"))
        return files

    def _too_large(self, change: FileChange) -> OutputFile:
        return OutputFile(change.name, change.kind, change.size,
                          note=f"larger than {self.max_file_bytes >> 20} MiB: not copied")

    async def run_one(self, spec: RunSpec, root: RunFolders) -> RunOutput:
        """Run one spec in a new folder of ``root`` (what each slot does; a Ray task does it on its node)."""
        return await self._one(spec, root)

    async def _one(self, spec: RunSpec, root: RunFolders) -> RunOutput:
        # the file work in two parts, each on the loop when it is small and in memory (see the module doc), else in
        # a trip to a thread: the folder made, the fixtures and skills written, the first snapshot; then the second
        # snapshot, the changed files read back, the folder removed
        agent = self.agent
        inline = memory_backed(str(root.root.parent)) and _small(spec)  # else its file work goes to threads
        contents = self.max_file_bytes > 0  # the changed files' bytes kept by the snapshot that reads them

        def begin() -> Prepared:
            workdir = root.new()
            request = AgentRequest(spec.prompt, workdir, spec.skills, timeout=spec.timeout, max_turns=spec.max_turns,
                                   model=spec.model, files=spec.files)
            try:
                return agent.prepare(request)
            except BaseException:
                shutil.rmtree(workdir, True)
                raise

        prepared = begin() if inline else await asyncio.to_thread(begin)
        workdir = prepared.workspace
        try:
            started = _now()
            execution, duration = await agent.perform(prepared)
            finished = _now()
        except BaseException:
            await asyncio.to_thread(shutil.rmtree, workdir, True)
            raise

        def end(concluded: AgentResult | None) -> tuple[AgentResult, list[OutputFile]]:
            try:
                result = concluded if concluded is not None else agent.conclude(prepared, execution, duration,
                                                                                 contents=contents)
                return result, self._collect(workdir, result)
            finally:
                shutil.rmtree(workdir, True)

        concluded, small = None, False
        if inline:
            budget = Budget(INLINE_ENTRIES, INLINE_BYTES)
            try:
                concluded = agent.conclude(prepared, execution, duration, budget=budget, contents=contents)
                budget.take(size=sum(c.size or 0 for c in concluded.files if c.kind != "deleted" and c.data is None))
                small = True
            except TreeTooLarge:
                pass
            except BaseException:
                shutil.rmtree(workdir, True)
                raise
        result, files = end(concluded) if small else await asyncio.to_thread(end, concluded)
        return RunOutput(run_id=spec.run_id, status=result.status, response=result.response, error=result.error,
                         transcript=result.transcript, files=files, duration_s=result.duration_s,
                         usage=result.usage, started_at=started, finished_at=finished, agent=result.agent,
                         model=result.model, skills_invoked=result.skills_invoked, warnings=result.warnings,
                         exit_code=result.exit_code, raw_stdout=result.raw_stdout, isolation=result.isolation,
                         stderr_tail=result.stderr_tail, installed_skills=result.installed_skills)


def _small(spec: RunSpec) -> bool:
    """Whether the folder ``spec`` starts with is small enough to make on the event loop."""
    entries, size = len(spec.files), sum(map(len, spec.files.values()))
    for bundle in spec.skills:  # its bytes are digested once more before they are written
        entries += len(bundle.files)
        size += 2 * sum(map(len, bundle.files.values()))
    return entries <= INLINE_ENTRIES and size <= INLINE_BYTES
