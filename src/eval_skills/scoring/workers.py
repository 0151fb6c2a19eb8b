"""Custom scorers run in worker processes: user code can print, exit, hang or crash without touching a run.

A worker is a program started per scorer file (a few at once when tasks are scored in parallel) that
speaks a small protocol of JSON lines, whatever its language:

- it is started as ``WORKERS[suffix](scorer_path, reply_fd)`` (a command line), in its own session, with
  the harness's working directory and environment; ``reply_fd`` is a pipe descriptor it inherits;
- it loads the scorer, then writes one line to ``reply_fd``: ``{"ready": true}``, or
  ``{"loadError": "<why>"}`` and exits;
- for each request line on its stdin, ``{"id": N, "output": ..., "expected": {...}, "task": {...}}``, it
  writes one line to ``reply_fd``: ``{"id": N, "result": <the scorer's verdict>}`` or
  ``{"id": N, "error": "<why>"}`` (the verdict is judged by the harness: a bool, a number from 0 to 1, or
  ``{score, passed, reason}``);
- what the scorer prints goes to the worker's stdout and stderr: kept (the last few KiB) for error
  messages, never shown on the harness's stdout;
- stdin reaching its end means: exit.

A worker that does not load within the deadline, does not answer within it, exits, or writes something
that is not the protocol is stopped (its whole process tree) and the task gets the reason; the next call
starts a fresh worker. A call waits for a busy worker only briefly, then starts another, so one stuck
call never makes the others late; its deadline starts when it has its worker. Adding a language is one
entry in :data:`WORKERS`: ``register_worker(".py")`` on a function ``(scorer_path, reply_fd) -> argv``, with
``max_workers`` when a language's workers are heavy enough to keep only one per scorer file (Node.js,
:mod:`.node`).
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import select
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import HarnessResourceError, ScorerError
from ..formats.untrusted import NotJSON, loads_untrusted
from ..procs import describe_exit, forget, kill_tree, resource_failure, spawning

__all__ = ["WORKERS", "ScorerWorkers", "WorkerKind", "register_worker"]

WorkerCommand = Callable[[Path, int], list[str]]
MAX_REPLY_BYTES = 1 << 20
PATIENCE = 0.5  # seconds a call waits for a busy worker before it starts one of its own
OUTPUT_TAIL = 4096


@dataclass(frozen=True)
class WorkerKind:
    """How workers of one language start (``command(scorer_path, reply_fd)``, which may raise ScorerError
    saying what is missing) and how many one scorer file runs at once and keeps (None: as many as asked; more
start only for calls that could not wait for a busy one)."""

    command: WorkerCommand
    max_workers: int | None = None


WORKERS: dict[str, WorkerKind] = {}


def register_worker(*suffixes: str, max_workers: int | None = None) -> Callable[[WorkerCommand], WorkerCommand]:
    """Register the command that starts workers for scorer files ending in one of ``suffixes`` (``".py"``)."""

    def register(command: WorkerCommand) -> WorkerCommand:
        for suffix in suffixes:
            WORKERS[suffix] = WorkerKind(command, max_workers)
        return command

    return register


@register_worker(".py")
def python_worker(path: Path, reply_fd: int) -> list[str]:
    return [sys.executable, str(Path(__file__).with_name("_pyworker.py")), str(reply_fd), str(path)]


class _Expired(Exception):  # noqa: N818 - internal signal
    pass


class _Worker:
    """One worker process (see the module doc); used by one thread at a time."""

    def __init__(self, command: WorkerCommand, path: Path, name: str, deadline: float, timeout: float) -> None:
        self.name = name
        self.timeout = timeout  # the scoring deadline, for messages
        self._buffer = bytearray()
        self._tail = bytearray()
        try:
            read_end, write_end = os.pipe()
        except OSError as exc:
            raise HarnessResourceError(f"cannot start a worker for {name}: {exc.strerror or exc}") from exc
        try:
            with spawning() as started:
                self.proc = subprocess.Popen(command(path, write_end), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                             stderr=subprocess.STDOUT, pass_fds=(write_end,),
                                             start_new_session=True)
                started.add(self.proc.pid)
        except OSError as exc:
            os.close(read_end)
            if resource_failure(exc):
                raise HarnessResourceError(f"cannot start a worker for {name}: {exc.strerror or exc}") from exc
            raise ScorerError(f"cannot start a worker for {name}: {exc.strerror or exc}") from None
        finally:
            os.close(write_end)
        self._replies = read_end
        _LIVE.add(self)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        os.set_blocking(self.proc.stdin.fileno(), False)
        self._drainer = threading.Thread(target=self._drain, args=(self.proc.stdout,), daemon=True)
        self._drainer.start()
        try:
            first = self._read(deadline, "while loading")
        except _Expired:
            self.kill()
            raise ScorerError(f"{name} did not load within {timeout:g}s") from None
        except BaseException:
            self.kill()
            raise
        if first.get("ready") is not True:
            self.kill()
            why = first.get("loadError")
            raise ScorerError(f"{name} {why}" if isinstance(why, str) else f"{name} did not load: {first!r}")

    def _drain(self, stream: Any) -> None:
        with contextlib.suppress(OSError, ValueError):
            while chunk := stream.read1(65536):
                self._tail += chunk
                if len(self._tail) > OUTPUT_TAIL:
                    del self._tail[: len(self._tail) - OUTPUT_TAIL]

    def output(self) -> str:
        text = " | ".join(line.strip() for line in self._tail.decode("utf-8", "replace").splitlines()
                          if line.strip())
        return f"; its output: {text[-1000:]}" if text else ""

    def _ended(self, doing: str) -> ScorerError:
        try:
            code = self.proc.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            code = None
        self._drainer.join(0.5)  # what it printed last
        self.kill()
        how = "closed its reply pipe" if code is None else describe_exit(code)
        return ScorerError(f"{self.name} {how} {doing}{self.output()}")

    def _read(self, deadline: float, doing: str) -> dict[str, Any]:
        while True:
            newline = self._buffer.find(b"\n")
            if newline >= 0:
                line = bytes(self._buffer[:newline])
                del self._buffer[: newline + 1]
                try:
                    message = loads_untrusted(line, allow_nan=True)
                except NotJSON as exc:
                    self.kill()
                    raise ScorerError(f"{self.name}: its worker broke the protocol ({exc})") from None
                if not isinstance(message, dict):
                    self.kill()
                    raise ScorerError(f"{self.name}: its worker broke the protocol (not an object)")
                return message
            if len(self._buffer) > MAX_REPLY_BYTES:
                self.kill()
                raise ScorerError(f"{self.name}: a reply longer than {MAX_REPLY_BYTES >> 20} MiB")
            if not _wait(self._replies, select.POLLIN, deadline):
                raise _Expired
            chunk = os.read(self._replies, 65536)
            if not chunk:
                raise self._ended(doing)
            self._buffer += chunk

    def request(self, message: dict[str, Any], deadline: float) -> dict[str, Any]:
        del self._tail[:]  # an error quotes what the scorer printed while scoring this output
        data = memoryview(json.dumps(message, separators=(",", ":"), default=str).encode() + b"\n")
        assert self.proc.stdin is not None
        fd = self.proc.stdin.fileno()
        try:
            while data:
                if not _wait(fd, select.POLLOUT, deadline):
                    raise _Expired
                try:
                    data = data[os.write(fd, data):]
                except BlockingIOError:
                    continue
                except (BrokenPipeError, ConnectionError):
                    raise self._ended("while scoring") from None
            reply = self._read(deadline, "while scoring")
        except _Expired:
            self.kill()
            raise ScorerError(f"{self.name} did not return within {self.timeout:g}s "
                              "(its process was stopped)") from None
        if reply.get("id") != message["id"]:
            self.kill()
            raise ScorerError(f"{self.name}: its worker broke the protocol (a reply to another request)")
        return reply

    def kill(self) -> None:
        if self.proc.returncode is None:
            kill_tree(self.proc.pid)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=5.0)
        forget(self.proc.pid)
        for closing in (lambda: os.close(self._replies), self.proc.stdin.close if self.proc.stdin else None):
            if closing is not None:
                with contextlib.suppress(OSError):
                    closing()
        self._replies = -1
        _LIVE.discard(self)


def _wait(fd: int, event: int, deadline: float) -> bool:
    """Wait until ``fd`` is ready for ``event`` or the deadline passes (poll: no FD_SETSIZE limit)."""
    poller = select.poll()
    poller.register(fd, event | select.POLLERR | select.POLLHUP)
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return False
        if poller.poll(max(1, int(remaining * 1000))):
            return True


_LIVE: weakref.WeakSet[_Worker] = weakref.WeakSet()


@atexit.register
def _kill_all() -> None:
    for worker in list(_LIVE):
        with contextlib.suppress(Exception):
            worker.kill()


class ScorerWorkers:
    """The workers of one scorer file, started as calls need them.

    Up to ``max_workers`` run at once and are kept between calls. A call takes an idle worker, or waits for one
    at most :data:`PATIENCE` seconds, then starts one of its own (stopped when it is done): a call never waits
    behind another that may be stuck until its deadline. The deadline (``timeout``) starts when the call has
    its worker, so it measures the call's own scoring (with loading, for a worker it started).
    Thread-safe; :meth:`close` stops them all.
    """

    def __init__(self, path: Path, *, name: str, timeout: float, max_workers: int = 4) -> None:
        kind = WORKERS.get(path.suffix)
        if kind is None:
            known = ", ".join(sorted(WORKERS))
            raise ScorerError(f"{name}: no worker runs {path.suffix or 'extensionless'} files (supported: {known})")
        self.path = path
        self.name = name
        self.timeout = timeout
        self.max_workers = max(1, min(max_workers, kind.max_workers or max_workers))
        self._command = kind.command
        self._idle: list[_Worker] = []
        self._count = 0  # workers alive, idle or busy
        self._closed = False
        self._sequence = 0
        self._cond = threading.Condition()

    def check(self) -> None:
        """Load one worker now (kept for the run): ScorerError saying why the file cannot be used."""
        self._give_back(self._take()[0])

    def call(self, output: Any, expected: Any, task: Any) -> Any:
        """The scorer's verdict for one output: ScorerError for anything the scorer or its worker did."""
        worker, deadline = self._take()
        self._sequence += 1
        try:
            reply = worker.request({"id": self._sequence, "output": output, "expected": expected, "task": task},
                                   deadline)
        except BaseException:
            worker.kill()
            self._lost()
            raise
        self._give_back(worker)
        if "error" in reply:
            raise ScorerError(f"{self.name} {reply['error']}")
        return reply.get("result")

    def _take(self) -> tuple[_Worker, float]:
        """A worker for one call, and the call's deadline (from now: waiting is not the scorer's time)."""
        patience = time.monotonic() + PATIENCE
        with self._cond:
            while True:
                if self._closed:
                    raise ScorerError(f"{self.name}: scoring was stopped")
                if self._idle:
                    return self._idle.pop(), time.monotonic() + self.timeout
                waited = time.monotonic() >= patience
                if self._count < self.max_workers or waited:
                    self._count += 1
                    break
                self._cond.wait(max(0.0, patience - time.monotonic()))
        deadline = time.monotonic() + self.timeout
        try:  # a worker started for a call loads within that call's time
            return _Worker(self._command, self.path, self.name, deadline, self.timeout), deadline
        except BaseException:
            self._lost()
            raise

    def _give_back(self, worker: _Worker) -> None:
        with self._cond:
            keep = not self._closed and len(self._idle) < self.max_workers and self._count <= self.max_workers
            if keep:
                self._idle.append(worker)
            else:
                self._count -= 1
            self._cond.notify()
        if not keep:
            worker.kill()

    def _lost(self) -> None:
        with self._cond:
            self._count -= 1
            self._cond.notify()

    def close(self) -> None:
        with self._cond:
            self._closed = True
            idle, self._idle = self._idle, []
            self._cond.notify_all()
        for worker in idle:
            worker.kill()
