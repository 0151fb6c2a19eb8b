"""The node's side of a Ray task: an asynchronous body run so that ``ray.cancel`` stops it at once.

``ray.cancel`` raises KeyboardInterrupt in the task's thread, and only while Python code runs there: a task that
sleeps in an event loop waiting for an agent, or blocks in ``subprocess.run``, sees it only when it wakes. So
:func:`run_async` runs the body in an event loop on a thread of its own while the task's thread wakes every
:data:`POLL_S`; on the interrupt it cancels the body (the agent's own clean-up stops its process group) and waits
for it, and in every case, before the task ends, kills every process left below the worker (also those that left
their group, or were orphaned and adopted by the worker as a child subreaper).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import queue
import signal
import threading
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, TypeVar

from ..procs import become_subreaper, descendants, reap_orphans
from ..procs.tree import children

__all__ = ["POLL_S", "kill_everything_below", "run_async", "stream_async"]

T = TypeVar("T")
POLL_S = 0.05  # how often the task's thread wakes to see a cancel
STOP_WAIT_S = 20.0  # how long a cancelled body gets to stop what it started


def kill_everything_below(pid: int | None = None) -> int:
    """SIGKILL every living process below ``pid`` (default: this one) by parent links, whatever its group or
    session, then the orphans this process adopted. How many were found."""
    if pid is None and children() == set():  # nothing below this process
        return 0
    found = descendants(os.getpid() if pid is None else pid)
    for child in found:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(child, signal.SIGKILL)
    return len(found) + reap_orphans()


class _Body:
    """An asynchronous body running in an event loop on a thread of its own."""

    def __init__(self, body: Callable[[], Awaitable[Any]]) -> None:
        become_subreaper()  # an agent's orphans come to this worker, not to init
        self.loop = asyncio.new_event_loop()
        self.finished = threading.Event()
        self.box: dict[str, Any] = {}

        async def main() -> None:
            self.box["task"] = asyncio.current_task()
            try:
                self.box["value"] = await body()
            except BaseException as exc:  # noqa: BLE001 - handed to the task's thread
                self.box["error"] = exc

        def serve() -> None:
            asyncio.set_event_loop(self.loop)
            try:
                self.loop.run_until_complete(main())
                self.loop.run_until_complete(self.loop.shutdown_asyncgens())
                self.loop.run_until_complete(self.loop.shutdown_default_executor())
            finally:
                self.finished.set()

        self.thread = threading.Thread(target=serve, name="eval-skills-task", daemon=True)
        self.thread.start()

    def call(self, fn: Callable[[], Any]) -> None:
        with contextlib.suppress(RuntimeError):  # the loop is closed: the body ended
            self.loop.call_soon_threadsafe(fn)

    def cancel_and_wait(self) -> None:
        def cancel() -> None:
            task = self.box.get("task")
            if task is not None:
                task.cancel()

        self.call(cancel)
        _wait(self.finished, STOP_WAIT_S)

    def end(self) -> None:
        kill_everything_below()
        if self.finished.is_set():
            self.thread.join()
            self.loop.close()

    def result(self) -> Any:
        if "error" in self.box:
            raise self.box["error"]
        return self.box["value"]


def run_async(body: Callable[[], Awaitable[T]]) -> T:
    """Run ``body()`` to its end in a fresh event loop on another thread and return its result (or raise its
    exception). A KeyboardInterrupt arriving meanwhile (``ray.cancel``) cancels the body, waits for it to stop
    (at most :data:`STOP_WAIT_S`) and is raised again. Whatever the body left running is killed."""
    running = _Body(body)
    try:
        while not running.finished.wait(POLL_S):
            pass
    except BaseException:  # the cancel (KeyboardInterrupt), or the worker stopping
        running.cancel_and_wait()
        raise
    finally:
        running.end()
    value: T = running.result()
    return value


def stream_async(body: Callable[[Callable[[T], None]], Awaitable[None]]) -> Iterator[list[T]]:
    """As :func:`run_async`, for a body that hands out items as it goes (``emit(item)``): yields them in
    batches, every :data:`POLL_S` at most, while it runs (the body of a Ray streaming task). Closing the
    generator or a cancel stops the body."""
    items: queue.SimpleQueue[T] = queue.SimpleQueue()
    running = _Body(lambda: body(items.put))

    def drain() -> list[T]:
        batch = []
        while True:
            try:
                batch.append(items.get_nowait())
            except queue.Empty:
                return batch

    try:
        while not running.finished.wait(POLL_S):
            batch = drain()
            if batch:
                yield batch
        batch = drain()
        if batch:
            yield batch
    except BaseException:
        running.cancel_and_wait()
        raise
    finally:
        running.end()
    running.result()


def _wait(event: threading.Event, timeout: float) -> None:
    """Wait for ``event`` at most ``timeout`` seconds, waking every POLL_S (a second interrupt is ignored)."""
    end = timeout
    while end > 0:
        try:
            if event.wait(POLL_S):
                return
        except KeyboardInterrupt:
            continue
        end -= POLL_S
