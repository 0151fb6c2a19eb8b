"""What the in-process adapters (``custom``, ``langchain``) share: calls on worker threads, timeouts that never
stall the harness, output that never reaches ours, and outputs checked to be JSON.

- Every call runs on a worker thread of the skill's own pool, never on the harness's event loop, so a function
  that blocks stalls nothing else. A worker that gets a coroutine runs it on its own event loop (one per worker),
  so an async function that blocks stalls only its own call. The pool grows to the number of calls in flight.
- A call that does not return in time is a ``timeout``: its coroutine is cancelled, an exception is raised in its
  thread at its next Python instruction (CPython's ``PyThreadState_SetAsyncExc``), and the worker is abandoned
  and replaced. A call stuck inside C code (a long ``time.sleep``, a blocking read) keeps its thread until it
  returns; worker threads are daemons, so the run still ends and the process still exits.
- While in-process skills run, ``sys.stdout`` and ``sys.stderr`` are routers: what a call writes (``print``,
  logging to a stream) is kept per call, its tail quoted in that call's error, and never reaches our output;
  stdout written by any other thread but the main one is dropped too, so ``--json`` stays pure JSON. Writes
  straight to file descriptor 1 (C code, ``os.write``) are not caught.
- A return value must be JSON (``NaN`` and infinities are not); it is copied through ``json`` and read back like
  any skill's reply (lone surrogates become U+FFFD, nesting deeper than 256 levels is refused), so the results
  hold plain data that every report and the store can keep. An exception (``SystemExit`` too) is the task's
  error with its type, message and location.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import ctypes
import inspect
import json
import queue
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from ..errors import SkillCrashed, SkillError, SkillProtocolError, SkillTimeout
from ..formats.untrusted import NotJSON, loads_untrusted
from ..procs import Ring

__all__ = ["WorkerPool", "capture_output", "release_output", "run_in_thread", "to_json"]

OUTPUT_BYTES = 8 << 10  # what a call printed, kept for its error message

# -- output capture ------------------------------------------------------------------------------------

_CAPTURE: contextvars.ContextVar[Ring | None] = contextvars.ContextVar("eval_skills_capture", default=None)
_DROPPED = Ring(OUTPUT_BYTES)  # stdout of threads a skill started itself


class _Router:
    """Stands in for ``sys.stdout``/``sys.stderr``: a call's writes go to its ring, the rest to the real stream."""

    def __init__(self, original: Any, drop_foreign: bool) -> None:
        self._original = original
        self._drop_foreign = drop_foreign

    def _ring(self) -> Ring | None:
        ring = _CAPTURE.get()
        if ring is None and self._drop_foreign and threading.current_thread() is not threading.main_thread():
            return _DROPPED
        return ring

    def write(self, text: str) -> int:
        ring = self._ring()
        if ring is None:
            return int(self._original.write(text))
        ring.feed(str(text).encode("utf-8", "replace"))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if self._ring() is None:
            self._original.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._original, name)


_ROUTING_LOCK = threading.Lock()
_routing_users = 0


def capture_output() -> None:
    """Install the stream routers (counted: each call is matched by :func:`release_output`)."""
    global _routing_users
    with _ROUTING_LOCK:
        _routing_users += 1
        if _routing_users == 1:
            sys.stdout = _Router(sys.stdout, drop_foreign=True)
            sys.stderr = _Router(sys.stderr, drop_foreign=False)


def release_output() -> None:
    """Put the real streams back once the last in-process skill is closed."""
    global _routing_users
    with _ROUTING_LOCK:
        if _routing_users == 0:
            return
        _routing_users -= 1
        if _routing_users == 0:
            for name in ("stdout", "stderr"):
                current = getattr(sys, name)
                if isinstance(current, _Router):  # someone else replaced it meanwhile: leave theirs
                    setattr(sys, name, current._original)


def printed(ring: Ring) -> str:
    tail = ring.tail(300)
    return f"; printed: {tail}" if tail else ""


# -- JSON outputs ------------------------------------------------------------------------------------

def to_json(value: Any) -> Any:
    """``value`` as plain JSON data, read back like every reply of a skill (lone surrogates become U+FFFD;
    deeper than :data:`~eval_skills.formats.untrusted.MAX_DEPTH` is refused); SkillProtocolError saying why
    when it is not JSON we take."""
    try:
        text = json.dumps(value, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as exc:
        raise SkillProtocolError(f"returned a value that is not JSON ({type(value).__name__}): {exc}") from None
    try:
        return loads_untrusted(text)
    except NotJSON as exc:
        raise SkillProtocolError(f"returned a value that is not usable JSON: {exc}") from None


# -- threads -------------------------------------------------------------------------------------------

class _Abandoned(BaseException):
    """Raised inside a call that timed out, so a busy loop in it stops (not an Exception: user code rarely
    catches it)."""


def _interrupt(thread_id: int | None) -> None:
    if thread_id is None or sys.implementation.name != "cpython":
        return
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread_id), ctypes.py_object(_Abandoned))


class _DaemonExecutor(concurrent.futures.ThreadPoolExecutor):
    """A worker loop's default executor (``run_in_executor(None, ...)``): one daemon thread per job, so a job
    that never returns never holds up the exit of the process (the pool's own threads are joined at exit)."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> concurrent.futures.Future[Any]:
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()

        def run() -> None:
            if not future.set_running_or_notify_cancel():
                return
            try:
                future.set_result(fn(*args, **kwargs))
            except BaseException as exc:  # noqa: BLE001 - handed to whoever awaits it
                future.set_exception(exc)

        threading.Thread(target=run, name="eval-skills-executor", daemon=True).start()
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Nothing to join: each job's thread ends with its job."""


def run_in_thread(fn: Callable[[], Any]) -> asyncio.Future[Any]:
    """``fn()`` on a new daemon thread, with output captured; its result as a future of the running loop."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()
    ring = Ring(OUTPUT_BYTES)

    def run() -> None:
        _CAPTURE.set(ring)
        try:
            outcome: tuple[bool, Any] = (True, fn())
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            outcome = (False, exc)
        _deliver(loop, future, outcome)

    threading.Thread(target=run, name="eval-skills-load", daemon=True).start()
    return future


def _deliver(loop: asyncio.AbstractEventLoop, future: asyncio.Future[Any], outcome: tuple[bool, Any]) -> None:
    """Hand ``(ok, value or exception)`` to the harness's loop as the future's result (an exception of user code
    is never raised through the future: a CancelledError or TimeoutError of its own is not ours)."""

    def settle() -> None:
        if not future.done():
            future.set_result(outcome)

    with contextlib.suppress(RuntimeError):  # the harness's loop is gone: nobody waits any more
        loop.call_soon_threadsafe(settle)


class _Job:
    __slots__ = ("make", "convert", "future", "ring", "thread", "task", "worker_loop", "outcome", "done",
                 "abandoned")

    def __init__(self, make: Callable[[], Any], convert: Callable[[Any], Any], future: asyncio.Future[Any]) -> None:
        self.make = make
        self.convert = convert
        self.future = future
        self.ring = Ring(OUTPUT_BYTES)
        self.thread: int | None = None  # the worker running it
        self.task: asyncio.Task[Any] | None = None  # its coroutine, on the worker's loop
        self.worker_loop: asyncio.AbstractEventLoop | None = None
        self.outcome: tuple[bool, Any] = (False, None)
        self.done = False
        self.abandoned = False


class _WorkerLoop:
    """A worker's own event loop, made when it first gets a coroutine."""

    __slots__ = ("loop",)

    def __init__(self) -> None:
        self.loop: asyncio.AbstractEventLoop | None = None

    def get(self) -> asyncio.AbstractEventLoop:
        if self.loop is None:
            loop = asyncio.new_event_loop()
            loop.set_default_executor(_DaemonExecutor(max_workers=1))
            self.loop = loop
        return self.loop


async def _awaited(value: Any) -> Any:
    return await value


class WorkerPool:
    """Daemon worker threads for one skill's calls, sharing one queue of jobs (see the module doc).

    A new worker starts whenever a job comes and none is idle, so the pool grows to the number of calls in
    flight. Finished jobs are handed back to the event loop together: one wake-up of the loop for all the
    results that are ready.
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._idle = threading.Semaphore(0)
        self._workers = 0
        self._finished: list[_Job] = []
        self._wake_pending = False
        self._loop: asyncio.AbstractEventLoop | None = None

    async def call(self, make: Callable[[], Any], convert: Callable[[Any], Any], timeout: float,
                   describe: Callable[[BaseException], str]) -> tuple[Any, float]:
        """``convert(make())`` (awaited when it is a coroutine) on a worker: ``(value, seconds it took)``.
        SkillTimeout after ``timeout`` seconds; SkillCrashed for an exception, ``describe`` saying which."""
        loop = self._loop = asyncio.get_running_loop()
        job = _Job(make, convert, loop.create_future())
        self._jobs.put(job)
        if not self._idle.acquire(blocking=False):
            with self.lock:
                self._workers += 1
            threading.Thread(target=self._work, name="eval-skills-call", daemon=True).start()
        try:
            async with asyncio.timeout(timeout):
                ok, value = await job.future
        except TimeoutError:
            self._abandon(job)
            raise SkillTimeout(f"did not return within {timeout:g}s{printed(job.ring)}") from None
        except asyncio.CancelledError:
            self._abandon(job)
            raise
        if ok:
            return value
        if isinstance(value, SkillError):  # the output was not JSON
            raise type(value)(f"{value}{printed(job.ring)}")
        raise SkillCrashed(f"{describe(value)}{printed(job.ring)}")

    # -- on the workers --------------------------------------------------------------------------------

    def _work(self) -> None:
        own = _WorkerLoop()
        try:
            while (job := self._jobs.get()) is not None:
                if not self._run(job, own):
                    return
                self._idle.release()
        except _Abandoned:
            pass
        finally:
            with self.lock:
                self._workers -= 1
            if own.loop is not None:
                with contextlib.suppress(BaseException):  # an abandoned loop may be mid-step; dropped anyway
                    own.loop.close()

    def _run(self, job: _Job, own: _WorkerLoop) -> bool:
        """Run one job; False when it was abandoned while running and the worker must end."""
        with self.lock:
            if job.abandoned:  # timed out before it started
                return True
            job.thread = threading.get_ident()
        _CAPTURE.set(job.ring)
        started = time.perf_counter()
        try:
            value = job.make()
            if inspect.isawaitable(value):
                worker_loop = job.worker_loop = own.get()
                job.task = worker_loop.create_task(_awaited(value))
                value = worker_loop.run_until_complete(job.task)
            job.outcome = (True, (job.convert(value), time.perf_counter() - started))
        except _Abandoned:
            _cancel_abandoned(job)
            return False
        except BaseException as exc:  # noqa: BLE001 - user code: every failure is the task's
            job.outcome = (False, exc)
        finally:
            _CAPTURE.set(None)
        with self.lock:
            if job.abandoned:
                return False
            job.done = True
            self._finished.append(job)
            if self._wake_pending:
                return True
            self._wake_pending = True
        loop = self._loop
        if loop is not None:
            with contextlib.suppress(RuntimeError):  # the harness's loop is gone: nobody waits any more
                loop.call_soon_threadsafe(self._hand_back)
        return True

    # -- on the event loop -----------------------------------------------------------------------------

    def _hand_back(self) -> None:
        with self.lock:
            self._wake_pending = False
            finished, self._finished = self._finished, []
        for job in finished:
            if not job.future.done():
                job.future.set_result(job.outcome)

    def _abandon(self, job: _Job) -> None:
        with self.lock:
            if job.done:  # it returned just now: its worker is fine
                return
            job.abandoned = True
            if job.task is not None and job.worker_loop is not None:
                with contextlib.suppress(RuntimeError):
                    job.worker_loop.call_soon_threadsafe(job.task.cancel)
            if job.thread is not None:
                _interrupt(job.thread)

    def close(self) -> None:
        """Let the idle workers end; abandoned ones end when their call does (or with the process)."""
        with self.lock:
            count = self._workers
        for _ in range(count):
            self._jobs.put(None)


def _cancel_abandoned(job: _Job) -> None:
    """Let an abandoned coroutine see its cancellation, so it ends (and is not reported pending at exit)."""
    task, loop = job.task, job.worker_loop
    if task is None or loop is None or task.done():
        return
    task.cancel()
    with contextlib.suppress(BaseException):
        loop.run_until_complete(asyncio.wait([task], timeout=1.0))
