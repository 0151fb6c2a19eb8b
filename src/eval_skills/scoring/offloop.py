"""Running scorers off the event loop, each call with a deadline.

Scoring is user code (custom scorers) or slow pure work on untrusted data (matching, schemas): on the event
loop it would delay every other task's reads and timers, and so count in other skills' latencies. Here each
call runs in a daemon thread and the loop only waits for its answer, at most ``timeout`` seconds. A call that
overruns is abandoned (scorers stop themselves at the deadline where they can: regex matching, custom
scorer workers) and a fresh thread takes its place, so one stuck scorer never holds up the others.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
from collections.abc import Callable
from typing import Any

from ..errors import ScorerError

__all__ = ["ScorerThreads", "run_off_loop"]

Job = tuple[Callable[[], Any], "asyncio.Future[Any]", asyncio.AbstractEventLoop]


def _deliver(future: asyncio.Future[Any], ok: bool, value: Any) -> None:
    if future.done():
        return
    if ok:
        future.set_result(value)
    else:
        future.set_exception(value)


class ScorerThreads:
    """A pool of daemon threads that grows when all are busy (up to ``max_threads``)."""

    def __init__(self, max_threads: int = 64) -> None:
        self.max_threads = max_threads
        self._jobs: queue.SimpleQueue[Job] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0
        self._threads = 0

    async def run(self, fn: Callable[[], Any], timeout: float) -> Any:
        """``fn()`` in a thread; TimeoutError after ``timeout`` seconds. Anything it raises is re-raised here
        (a BaseException such as SystemExit becomes a ScorerError)."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        with self._lock:  # reserve an idle thread, or start one: never queue behind a busy (maybe stuck) call
            if self._idle > 0:
                self._idle -= 1
            elif self._threads < self.max_threads:
                self._threads += 1
                threading.Thread(target=self._work, name="eval-skills-scorer", daemon=True).start()
        self._jobs.put((fn, future, loop))
        return await asyncio.wait_for(future, timeout)

    def _work(self) -> None:
        while True:
            fn, future, loop = self._jobs.get()
            ok = True
            try:
                value = fn()
            except Exception as exc:  # noqa: BLE001 - delivered to the awaiting task as its error
                ok, value = False, exc
            except BaseException as exc:  # noqa: BLE001 - SystemExit and the like: never out of this thread
                ok, value = False, ScorerError(f"raised {type(exc).__name__}")
            with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits any more
                loop.call_soon_threadsafe(_deliver, future, ok, value)
            with self._lock:
                self._idle += 1


_DEFAULT = ScorerThreads()


async def run_off_loop(fn: Callable[[], Any], timeout: float) -> Any:
    """Run ``fn`` on the shared scorer threads with a deadline (see :class:`ScorerThreads`)."""
    return await _DEFAULT.run(fn, timeout)
