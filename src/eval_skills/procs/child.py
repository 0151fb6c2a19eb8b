"""A started program: its own process group, its stderr tail, its exit seen whoever holds its pipes.

Every program is started in its own session, so its whole process group (the program and everything it
started) can be signalled at once; :meth:`Child.kill` also stops what left the group (see :mod:`.tree`) and
closes our ends of its pipes, so nothing a program leaves behind can keep the harness waiting.
Used by the adapters (tool skills), the agents and the judges alike.
"""

from __future__ import annotations

import asyncio
import os
import re
import select
import shlex
import shutil
import signal
import sys
from collections.abc import Coroutine, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from ..errors import HarnessResourceError, SkillCrashed, SkillProtocolError
from .limits import resource_failure
from .tree import forget, kill_group, kill_tree, reap_orphans, spawning
from .watcher import install_child_watcher

__all__ = [
    "LEFTOVER_GRACE",
    "MAX_LINE_BYTES",
    "STDERR_BYTES",
    "STREAM_LIMIT",
    "Child",
    "Ring",
    "describe_exit",
    "excerpt",
    "feed_stdin",
    "read_line",
    "read_until_exit",
    "resolve_argv",
    "split_command",
]

STREAM_LIMIT = 1 << 20  # asyncio StreamReader limit: its buffer pauses the pipe at twice this
MAX_LINE_BYTES = 16 << 20  # the longest stdout line we accept
STDERR_BYTES = 64 << 10  # the tail of stderr kept for error messages
LEFTOVER_GRACE = 0.2  # seconds stdout may stay open after the program exited, held by what it started
T = TypeVar("T")
_PYTHON = re.compile(r"python(?:3(?:\.\d+)?)?")


def split_command(command: str | Sequence[str]) -> list[str]:
    """A command given as one string (split like a shell would, without running one) or as a list."""
    return shlex.split(command) if isinstance(command, str) else list(command)


def resolve_argv(argv: Sequence[str], *, cwd: Path, env: Mapping[str, str]) -> list[str]:
    """The command line with its program resolved, so no shell or shim runs on each call.

    ``python``, ``python3`` and ``python3.X`` become the interpreter running eval-skills; a program
    with a slash is taken relative to ``cwd``; any other is looked up on the child's ``PATH``.
    A program that cannot be found is a :class:`SkillCrashed` naming it.
    """
    if not argv:
        raise SkillCrashed("cannot start the skill: its command is empty")
    program, rest = argv[0], list(argv[1:])
    if _PYTHON.fullmatch(program) and sys.executable:
        return [sys.executable, *rest]
    if os.sep in program or (os.altsep and os.altsep in program):
        path = Path(program) if os.path.isabs(program) else cwd / program
        if path.is_file() and os.access(path, os.X_OK):
            return [str(path), *rest]
        raise SkillCrashed(f"cannot start {program!r}: {path} is not an executable file")
    found = _which(program, env.get("PATH", os.defpath))
    if found is None:
        raise SkillCrashed(f"cannot start {program!r}: program not found on PATH")
    return [found, *rest]


def _which(program: str, path: str) -> str | None:
    """``shutil.which``, its answer kept: the search stats every folder of ``PATH`` (a judge or an agent may be
    started thousands of times); a kept answer costs one check that the program is still there and runnable.
    Relative folders of ``PATH`` are searched from this process's current folder, so that is part of the key."""
    relative = any(folder and not os.path.isabs(folder) for folder in path.split(os.pathsep))
    key = (program, path, os.getcwd() if relative else "")
    found = _found.get(key)
    if found is not None and os.access(found, os.X_OK):
        return found
    found = shutil.which(program, path=path)
    if found is None:
        _found.pop(key, None)
    elif len(_found) < 256:
        _found[key] = found
    return found


_found: dict[tuple[str, str, str], str] = {}


def describe_exit(returncode: int) -> str:
    if returncode < 0:
        try:
            return f"was killed by signal {signal.Signals(-returncode).name}"
        except ValueError:
            return f"was killed by signal {-returncode}"
    return f"exited with code {returncode}"


def excerpt(data: bytes | str, limit: int = 200) -> str:
    """A short one-line quotation of some output, for an error message."""
    text = data.decode("utf-8", "replace") if isinstance(data, bytes | bytearray) else data
    text = " ".join(text.split())
    return repr(text if len(text) <= limit else text[:limit] + "...")


class Ring:
    """The last ``size`` bytes written to a stream."""

    __slots__ = ("size", "data", "total")

    def __init__(self, size: int = STDERR_BYTES) -> None:
        self.size = size
        self.data = bytearray()
        self.total = 0  # bytes ever written: a mark for :meth:`since`

    def feed(self, chunk: bytes) -> None:
        self.data += chunk
        self.total += len(chunk)
        if len(self.data) > self.size:
            del self.data[: len(self.data) - self.size]

    def since(self, mark: int) -> str:
        """What was written after ``total`` was ``mark`` (as much of it as is still kept)."""
        kept = min(self.total - mark, len(self.data))
        return self.data[len(self.data) - kept:].decode("utf-8", "replace") if kept > 0 else ""

    def tail(self, chars: int = 1000) -> str:
        """The end of what was written, on one line (its lines joined by `` | ``)."""
        lines = self.data.decode("utf-8", "replace").splitlines()
        text = " | ".join(line.strip() for line in lines if line.strip())
        return text if len(text) <= chars else "..." + text[-chars:]


async def _pump(reader: asyncio.StreamReader, ring: Ring) -> None:
    while chunk := await reader.read(65536):
        ring.feed(chunk)


async def read_line(reader: asyncio.StreamReader, max_bytes: int = MAX_LINE_BYTES) -> bytes:
    """The next line with its newline; the last line may lack one; ``b""`` at end of stream.

    A line longer than ``max_bytes`` raises :class:`SkillProtocolError` as soon as it is that long:
    the caller then kills the program, so nothing more of it is read or kept.
    """
    try:
        return await reader.readuntil(b"\n")
    except asyncio.IncompleteReadError as exc:
        return exc.partial
    except asyncio.LimitOverrunError as exc:
        consumed = exc.consumed
    # slow path: a line longer than the reader's buffer, assembled piece by piece
    parts: list[bytes] = []
    size = 0
    while True:
        part = await reader.readexactly(consumed)
        size += len(part)
        if size > max_bytes:
            raise SkillProtocolError(f"reply line larger than {max_bytes} bytes "
                                     f"(stdout lines are limited to {max_bytes >> 20} MiB)")
        parts.append(part)
        try:
            parts.append(await reader.readuntil(b"\n"))
        except asyncio.IncompleteReadError as exc:
            parts.append(exc.partial)
        except asyncio.LimitOverrunError as exc:
            consumed = exc.consumed
            continue
        if size + len(parts[-1]) > max_bytes:
            raise SkillProtocolError(f"reply line larger than {max_bytes} bytes")
        return b"".join(parts)


async def feed_stdin(stdin: asyncio.StreamWriter | None, data: bytes) -> None:
    """Write ``data`` to a child's stdin and close it. A child that does not read it is no error here:
    what it printed (or how it exited) says what happened."""
    if stdin is None:
        return
    try:
        stdin.write(data)
        await stdin.drain()
        stdin.close()
        await stdin.wait_closed()
    except (BrokenPipeError, ConnectionResetError):
        pass


class _Protocol(asyncio.subprocess.SubprocessStreamProtocol):
    """asyncio's protocol, plus a future set when the program exits (whoever still holds its pipes)."""

    def __init__(self, limit: int, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(limit=limit, loop=loop)
        self.exited: asyncio.Future[None] = loop.create_future()

    def process_exited(self) -> None:
        super().process_exited()
        if not self.exited.done():
            self.exited.set_result(None)


class Child:
    """A started program in its own process group, with the tail of its stderr kept in a :class:`Ring`.

    :meth:`exited` returns as soon as the program has exited, even while something it started keeps its
    pipes open (``proc.wait()`` waits for the pipes too); ``exit_future`` is the same moment as a future, to
    pass to ``asyncio.wait`` (never ``await`` or cancel it: it is shared).
    :meth:`kill` stops the program and all it started, and closes our ends of its pipes, so nothing a
    skill leaves behind can keep the harness waiting.
    """

    __slots__ = ("proc", "stderr", "exit_future", "_pump", "_transport")

    def __init__(self, proc: asyncio.subprocess.Process, stderr: Ring, exit_future: asyncio.Future[None],
                 transport: asyncio.SubprocessTransport, pump: asyncio.Task[None] | None) -> None:
        self.proc = proc
        self.stderr = stderr
        self.exit_future = exit_future
        self._transport = transport
        self._pump = pump

    @classmethod
    async def start(cls, argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], stdin: int | None = None,
                    merge_output: bool = False, limit: int = STREAM_LIMIT,
                    stderr_bytes: int = STDERR_BYTES) -> Child:
        """Start ``argv``. With ``merge_output`` stdout and stderr both go to the ring (for servers);
        otherwise stdout is a pipe for the caller. A program that cannot be run is SkillCrashed; running
        out of descriptors, processes or memory is the harness's :class:`HarnessResourceError`."""
        install_child_watcher()  # on Python 3.11: each exit seen by the loop, not by a thread per program
        pipe = asyncio.subprocess.PIPE
        loop = asyncio.get_running_loop()
        protocol: _Protocol | None = None

        def factory() -> _Protocol:
            nonlocal protocol
            protocol = _Protocol(limit, loop)
            return protocol

        with spawning() as started:
            try:
                transport, _ = await loop.subprocess_exec(
                    factory, *argv, cwd=cwd, env=dict(env), start_new_session=True,
                    stdin=pipe if stdin is None else stdin, stdout=pipe,
                    stderr=asyncio.subprocess.STDOUT if merge_output else pipe)
            except OSError as exc:
                if resource_failure(exc):
                    raise HarnessResourceError(f"cannot start {argv[0]!r}: {exc.strerror or exc}") from exc
                raise SkillCrashed(f"cannot start {argv[0]!r}: {exc.strerror or exc}") from None
            started.add(transport.get_pid())
        assert protocol is not None
        proc = asyncio.subprocess.Process(transport, protocol, loop)
        ring = Ring(stderr_bytes)
        source = proc.stdout if merge_output else proc.stderr
        pump = asyncio.create_task(_pump(source, ring)) if source is not None else None
        return cls(proc, ring, protocol.exited, transport, pump)

    @property
    def running(self) -> bool:
        return self.proc.returncode is None

    def output_pending(self) -> bool:
        """True when stdout holds bytes the reader has not taken yet (in the pipe, or read but not consumed):
        a deadline that fires now may have its reply already here, delayed by a busy event loop."""
        stdout = self.proc.stdout
        buffer = getattr(stdout, "_buffer", b"")
        # a line without its newline is not a reply yet (unless the stream ended after it): waiting on it
        # would only delay a timeout
        if buffer and (b"\n" in buffer or getattr(stdout, "_eof", False)):
            return True
        pipe = self._transport.get_pipe_transport(1)
        if pipe is None or pipe.is_closing():
            return False
        handle = pipe.get_extra_info("pipe")
        if handle is None:
            return False
        try:
            poller = select.poll()
            poller.register(handle.fileno(), select.POLLIN)
            return bool(poller.poll(0))
        except (OSError, ValueError, AttributeError):  # pragma: no cover - no poll, or a closed pipe
            return False

    def unread_output(self, limit: int = 1000) -> bytes:
        """The start of what stdout holds that no reader has taken yet: a partial line, without its newline."""
        buffer = getattr(self.proc.stdout, "_buffer", None)
        return bytes(buffer[:limit]) if buffer else b""

    async def exited(self) -> int:
        """The program's exit code once it has exited, whoever still holds its pipes. Cancelling the caller
        leaves the program (and ``exit_future``) alone."""
        await asyncio.wait((self.exit_future,))
        code = self.proc.returncode
        assert code is not None
        return code

    async def wait_exit(self, timeout: float) -> bool:
        """True when the program has exited within ``timeout`` seconds (its pipes may still be open)."""
        if self.exit_future.done():
            return True
        if timeout <= 0:
            return False
        await asyncio.wait((self.exit_future,), timeout=timeout)
        return self.exit_future.done()

    async def settle(self, timeout: float = 0.5) -> None:
        """Let the stderr reader take what is left, briefly; then stop it."""
        pump, self._pump = self._pump, None
        if pump is None:
            return
        if not pump.done():
            await asyncio.wait((pump,), timeout=timeout)
        if not pump.done():
            pump.cancel()
            await asyncio.gather(pump, return_exceptions=True)
        elif not pump.cancelled():
            pump.exception()  # read it, so asyncio does not log it; a broken pipe here is no news

    async def kill(self) -> None:
        """SIGKILL the program and everything it started (also what left its group, and what it orphaned),
        reap it, and close our ends of its pipes. Never leaves a zombie; never waits on a pipe."""
        pid = self.proc.pid
        running = not self.exit_future.done()
        kill_tree(pid, search=running)  # a program that already ended has no children left to search
        if not await self.wait_exit(5.0):  # pragma: no cover - a process SIGKILL cannot end (D state)
            return
        await self.settle(0.1)  # the rest of stderr, unless something left behind holds the pipe
        self._transport.close()  # our pipe ends: a reader held up by a leftover's copy sees the end
        forget(pid)
        if running:
            reap_orphans()

    async def stop(self, grace: float = 3.0) -> None:
        """SIGTERM the group, SIGKILL it after ``grace`` seconds."""
        if self.proc.returncode is None:
            kill_group(self.proc.pid, signal.SIGTERM)
            await self.wait_exit(grace)
        await self.kill()

    def failure(self, what: str) -> SkillCrashed:
        """A SkillCrashed saying how the program ended, with the tail of its stderr."""
        code = self.proc.returncode
        how = describe_exit(code) if code is not None else "stopped"
        tail = self.stderr.tail()
        return SkillCrashed(f"{how} {what}" + (f"; stderr: {tail}" if tail else "; stderr was empty"))


async def read_until_exit(child: Child, reading: Coroutine[Any, Any, T], grace: float = LEFTOVER_GRACE) -> T:
    """Await ``reading``, which reads ``child``'s stdout to its end, and return what it returns.

    If the program exits while something it started keeps stdout open (also from another session), the
    leftovers get ``grace`` seconds to finish, then they are killed and our end of the pipe is closed, so the
    reading sees the end whatever they do."""
    task = asyncio.ensure_future(reading)
    try:
        waits: list[asyncio.Future[Any]] = [task, child.exit_future]
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        if not task.done():
            await asyncio.wait([task], timeout=grace)
            if not task.done():
                kill_group(child.proc.pid)
                reap_orphans()
                await asyncio.wait([task], timeout=0.05)
            if not task.done():
                await child.kill()  # closes our end of its stdout: the reading sees the end
        return await task
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
