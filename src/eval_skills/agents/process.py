"""Agents that are programs: start one per run, read its stdout as it comes, stop it at the timeout.

The program runs in the workspace (``PWD`` says so too), in its own process group, with the caller's
environment; or, under a sandbox (:mod:`eval_skills.sandbox`), confined by it: with a private home folder
holding only the agent's
:meth:`~eval_skills.agents.base.Agent.home_files`, a private ``/tmp``, its installed skills and its prompt file
read-only, and an allow-listed environment. The prompt file and the private home live in a folder private to the
run (``0700``, a random name), removed when the run ends; it is made only for a run that needs it (under a sandbox,
or for a command line that names the prompt file). Its stdout is kept byte for byte
(:class:`~eval_skills.agents.output.RawOutput`) and fed line by line to the backend's parser; the last 16 KiB of
stderr are kept. At the timeout the whole group gets SIGTERM, then SIGKILL a second later, and so do the program's
descendants that left the group (``setsid cmd &``: found by parent links while the program still runs); when the
program exits on its own, whatever it left running in its group is killed too, and what it left outside the group
once the harness adopts orphans (:func:`~eval_skills.procs.become_subreaper`, as the commands that run agents do),
so nothing changes the workspace after the run.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import tempfile
from abc import abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError, SkillError
from ..procs import Child, descendants, feed_stdin, kill_group, reap_orphans, resolve_argv
from ..sandbox import RunPaths
from ..scratch import folder_prefix, scratch_folder
from .base import Agent, AgentRequest, Execution, mask, secret_values
from .output import OutputParser, ParseContext, RawOutput

__all__ = ["Launch", "LineSplitter", "ProcessAgent"]

RUN_FOLDER, PROMPT_FILE = "<run folder>", "<prompt file>"  # how a preview shows them
STDERR_TAIL = 16 << 10
MAX_LINE = 64 << 20  # longer stdout lines are kept in the raw output but not parsed
STOP_GRACE = 1.0  # seconds between SIGTERM and SIGKILL at the timeout
DRAIN_GRACE = 1.0  # seconds we wait for stdout to close after the program exits


@dataclass(frozen=True)
class Launch:
    """How to start the program: its command line, what to write on its stdin (None: nothing, stdin is
    /dev/null), and variables added to its environment."""

    argv: Sequence[str]
    stdin: bytes | None = None
    env: Mapping[str, str] = field(default_factory=dict)


class LineSplitter:
    """Cuts a byte stream into lines for a parser; lines over ``max_line`` bytes are skipped and counted."""

    def __init__(self, parser: OutputParser, max_line: int = MAX_LINE) -> None:
        self.parser = parser
        self.max_line = max_line
        self.pending = bytearray()
        self.skipping = False
        self.skipped = 0

    def feed(self, chunk: bytes) -> None:
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            if self.skipping:
                self.skipping = False
            elif self.pending:
                self.pending += chunk[start:end]
                self._line(bytes(self.pending))
                self.pending.clear()
            else:
                self._line(chunk[start:end])
            start = end + 1
        if start < len(chunk) and not self.skipping:
            self.pending += chunk[start:]
            if len(self.pending) > self.max_line:
                self.pending.clear()
                self.skipping = True
                self.skipped += 1

    def close(self) -> None:
        if self.pending and not self.skipping:
            self._line(bytes(self.pending))
        self.pending.clear()

    def _line(self, line: bytes) -> None:
        try:
            self.parser.feed(line)
        except Exception as exc:  # untrusted output must never crash the harness
            self.parser.note(f"line {self.parser.lines} could not be read: {type(exc).__name__}: {exc}")


class ProcessAgent(Agent):
    """An agent run as a program. Subclasses build the command line and choose the output parser.

    With :attr:`first_start_alone`, the first run of an agent starts alone: the others wait until it has printed
    something (or ended), for programs whose first start sets up their home (a database) and fails when
    several do at once."""

    first_start_alone = False
    own_home = False  # each run gets a private folder of its own (home_variables) even without a sandbox
    _warm = False  # a run of this agent has started (printed something or ended)
    _first_start: asyncio.Lock | None = None

    sandboxable = True

    def check_sandbox(self, program: str) -> None:
        """Check the sandbox, and that it lets the runs see ``program`` (a resolved path)."""
        self.sandbox.check()
        if not self.sandbox.private_home:
            return
        hidden = [(Path.home(), "your home folder"), (Path("/tmp"), "the temporary folder"),
                  (Path(tempfile.gettempdir()).resolve(), "the temporary folder")]
        path = Path(program)
        for candidate in (path, path.resolve()):
            for folder, what in hidden:
                if folder != Path("/") and candidate.is_absolute() and candidate.is_relative_to(folder) \
                        and not self.sandbox.exposes(candidate):
                    raise InputError(f"the agent program {program} is in {what}, which the sandbox hides",
                                     field="--sandbox-bind", hint=f"give --sandbox-bind {candidate.parent}:ro")

    @abstractmethod
    def launch(self, request: AgentRequest, workspace: Path, prompt_file: Path) -> Launch:
        """The command line for this run. ``prompt_file`` holds the prompt (outside the workspace), when
        :meth:`uses_prompt_file` says the launch needs one."""

    def uses_prompt_file(self) -> bool:
        """Whether :meth:`launch` hands the program the prompt file. A backend that never does (it writes the
        prompt on stdin) says so, and its runs outside a sandbox make no private folder at all."""
        return True

    @abstractmethod
    def output_parser(self, context: ParseContext) -> OutputParser:
        """A fresh parser for this run's stdout."""

    def preview(self, request: AgentRequest) -> dict[str, Any]:
        """As :meth:`Agent.preview`, with ``command`` (the full command line, the program resolved on ``PATH``),
        ``stdin`` (what is written to it) and ``env`` (the variables the backend adds), secrets masked. The run's
        folder and prompt file are shown as ``<run folder>`` and ``<prompt file>``."""
        launch = self.launch(request, Path(RUN_FOLDER), Path(PROMPT_FILE))
        env = self.child_env(launch.env)
        secrets = secret_values(env)
        try:
            argv = resolve_argv(launch.argv, cwd=Path.cwd(), env=env)
        except (SkillError, ValueError):  # check() has said why; show the command as written
            argv = list(launch.argv)
        return {**super().preview(request), "command": [mask(arg, secrets) for arg in argv],
                "stdin": None if launch.stdin is None else "the prompt",
                "env": {name: mask(value, secrets) for name, value in launch.env.items()}}

    async def execute(self, request: AgentRequest, workspace: Path, installed: list[str]) -> Execution:
        parser = self.output_parser(ParseContext(tuple(installed), self.skills_subdir, workspace))
        raw = RawOutput()
        sandbox = self.sandbox
        needs_folder = sandbox.kind != "none" or self.uses_prompt_file() or self.own_home
        with (tempfile.TemporaryDirectory(prefix=folder_prefix("agent"), dir=scratch_folder(),
                                         ignore_cleanup_errors=True)
              if needs_folder else contextlib.nullcontext(os.devnull)) as tmp:
            private = Path(tmp)
            prompt_file = private / "prompt.md" if needs_folder else Path(os.devnull)
            if needs_folder:
                prompt_file.write_text(request.prompt, encoding="utf-8")
            launch = self.launch(request, workspace, prompt_file)
            # PWD names the workspace too: programs that take their folder from it (OpenCode does, not from the
            # folder it is started in) would otherwise read and write the caller's folder
            env = {**self.child_env(launch.env), "PWD": str(workspace)}
            run: RunPaths | None = None
            alone = await self._wait_first_start()
            try:
                try:
                    argv = resolve_argv(launch.argv, cwd=Path.cwd(), env=env) if sandbox.host_programs \
                        else list(launch.argv)
                    if sandbox.kind != "none":
                        run = self._private_places(private, workspace, installed, prompt_file)
                        inside = sandbox.environment(env, [*self.sandbox_variables(), *launch.env, "PWD"], run)
                        inside.update(self.home_variables(sandbox.home_inside(run)))
                        argv, env = sandbox.command(argv, run, inside), sandbox.process_environment(env, inside)
                    elif self.own_home:
                        env.update(self.home_variables(self._write_home(private, self.own_home_files())))
                    child = await Child.start(argv, cwd=workspace, env=env, stderr_bytes=STDERR_TAIL,
                                              stdin=None if launch.stdin is not None else asyncio.subprocess.DEVNULL)
                except SkillError as exc:
                    return Execution(error=str(exc), raw_stdout=raw)
                except ValueError as exc:  # a NUL in an argument (a prompt holding one, given as {prompt})
                    return Execution(error=f"cannot start the agent: {exc} in its command line (a prompt holding a "
                                           "NUL character can only be passed as {prompt_file} or on stdin)",
                                     raw_stdout=raw)
                splitter = LineSplitter(parser)
                printed = asyncio.Event()
                supervise = asyncio.create_task(self._supervise(child, launch.stdin, raw, splitter, request.timeout,
                                                                printed))
                if alone:
                    waiter = asyncio.create_task(printed.wait())
                    await asyncio.wait((supervise, waiter), return_when=asyncio.FIRST_COMPLETED)
                    waiter.cancel()
                    self._end_first_start()
                    alone = False
                try:
                    timed_out = await supervise
                finally:
                    if run is not None:
                        await sandbox.stop(run)
            finally:
                if alone:
                    self._end_first_start()
        raw.close()
        splitter.close()
        execution = Execution(timed_out=timed_out, exit_code=child.proc.returncode, raw_stdout=raw,
                              stderr_tail=child.stderr.data.decode("utf-8", "replace"))
        try:
            parsed = parser.finish(raw)
        except Exception as exc:  # untrusted output: a parser failure is this run's error
            execution.error = f"could not read the agent's output: {type(exc).__name__}: {exc}"
            return execution
        execution.transcript, execution.response, execution.usage = parsed.transcript, parsed.response, parsed.usage
        execution.error, execution.unfinished = parsed.error, parsed.unfinished
        execution.warnings = parser.warnings()
        if splitter.skipped:
            execution.warnings.append(f"{splitter.skipped} stdout lines longer than {MAX_LINE >> 20} MiB "
                                      "were not parsed (they are in the raw output)")
        return execution

    def own_home_files(self) -> dict[str, bytes]:
        """With :attr:`own_home` and no sandbox: what the run's private folder holds (default: the home files)."""
        return self.home_files()

    def home_variables(self, home: Path) -> dict[str, str]:
        """Variables pointing the program at its private folder ``home`` (as the program sees it), set after the
        sandbox's own (``HOME``, ``TMPDIR``); default none."""
        return {}

    def _write_home(self, private: Path, files: Mapping[str, bytes]) -> Path:
        """``private/home`` holding ``files`` (created exclusively, ``0600``)."""
        home = private / "home"
        home.mkdir()
        for rel, data in files.items():
            path = home / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as out:
                out.write(data)
        return home

    def _private_places(self, private: Path, workspace: Path, installed: list[str], prompt_file: Path) -> RunPaths:
        """The run's private home (holding the agent's home files), in its private folder."""
        home = self._write_home(private, self.home_files())
        read_only = (*(workspace / self.skills_subdir / name for name in installed), prompt_file)
        binds = []
        for rel, source in self.home_binds().items():
            (home / rel).mkdir(parents=True, exist_ok=True)  # where the host folder is seen
            binds.append((source, home / rel))
        return RunPaths(workspace, home, read_only, name=f"eval-skills-{private.name.rsplit('-', 1)[-1]}",
                        home_binds=tuple(binds), hidden=(private.parent,))  # where the other runs live

    async def _wait_first_start(self) -> bool:
        """With :attr:`first_start_alone`: wait while the first run starts; True when this run is the first."""
        if not self.first_start_alone or self._warm:
            return False
        if self._first_start is None:
            self._first_start = asyncio.Lock()
        await self._first_start.acquire()
        if self._warm:  # another run went first
            self._first_start.release()
            return False
        return True

    def _end_first_start(self) -> None:
        self._warm = True
        if self._first_start is not None and self._first_start.locked():
            self._first_start.release()

    async def _supervise(self, child: Child, stdin: bytes | None, raw: RawOutput, splitter: LineSplitter,
                         timeout: float, printed: asyncio.Event) -> bool:
        """Feed stdin, read stdout until the program exits or the timeout; True when it timed out. ``printed``
        is set once the program has printed something."""
        proc = child.proc
        pump = asyncio.create_task(_pump(proc.stdout, raw, splitter, printed))
        feeder = asyncio.create_task(feed_stdin(proc.stdin, stdin)) if stdin is not None else None
        exit_watch = asyncio.create_task(child.exited())
        timed_out = False
        try:
            try:
                async with asyncio.timeout(timeout):
                    await asyncio.wait((pump, exit_watch), return_when=asyncio.FIRST_COMPLETED)
                    if not exit_watch.done():  # stdout closed: the program should be ending
                        waiter = asyncio.create_task(proc.wait())  # the quick way, once its pipes close
                        await asyncio.wait((waiter, exit_watch), return_when=asyncio.FIRST_COMPLETED)
                        waiter.cancel()
                    elif not pump.done():  # exited while something it started holds stdout open
                        await asyncio.wait((pump,), timeout=DRAIN_GRACE)
            except TimeoutError:
                if proc.returncode is None:
                    timed_out = True
                    strays = descendants(proc.pid)  # found by parent links only while their parents live
                    kill_group(proc.pid, signal.SIGTERM)
                    _signal(strays, signal.SIGTERM)
                    await child.wait_exit(STOP_GRACE)
                    _signal(strays, signal.SIGKILL)
        finally:
            await child.kill()  # stragglers (also those that left the group), or everything on timeout
            reap_orphans()  # what it left outside its group, once adopted (a no-op unless the harness adopts)
            exit_watch.cancel()
            for task in (pump, feeder):
                if task is None:
                    continue
                if not task.done():
                    await asyncio.wait((task,), timeout=DRAIN_GRACE)
                    task.cancel()
                    await asyncio.wait((task,))
                if not task.cancelled() and task.exception() is not None:
                    splitter.parser.note(f"stdout could not be read to the end: {task.exception()}")
            await child.settle()
        return timed_out


def _signal(pids: list[int], sig: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


async def _pump(stdout: asyncio.StreamReader | None, raw: RawOutput, splitter: LineSplitter,
                printed: asyncio.Event) -> None:
    if stdout is None:
        return
    while chunk := await stdout.read(1 << 16):
        printed.set()
        raw.write(chunk)
        splitter.feed(chunk)

