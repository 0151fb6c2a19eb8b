"""Writing results from a thread of their own, so the event loop never waits on SQLite.

Each result is handed over as it finishes; the writer thread commits whatever is waiting as soon as it can
(group commit). After the first result of a batch it lingers at most ``LINGER_S`` for more, so a fast run
commits in batches instead of paying a commit per result; a result is on disk within a few milliseconds
of finishing, and ``close`` (also on Ctrl-C) commits everything that finished.
"""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Callable

from ..errors import HarnessError
from ..results import TaskResult
from .sqlite import Store

__all__ = ["ResultWriter"]

_STOP = object()
_MAX_BATCH = 500
LINGER_S = 0.002


class ResultWriter:
    """``put`` results from the event loop; ``close`` waits until every one is committed.

    Any failure while writing (a store error, a lock held too long by another process, a value SQLite
    refuses, a bug) stops the writer: ``on_error`` is called with it at once (from the writer's thread), and
    the next ``put`` or ``close`` raises it as a HarnessError. Results are never lost silently.
    """

    def __init__(self, store: Store, evaluation_id: str,
                 on_error: Callable[[HarnessError], None] | None = None) -> None:
        self._store = store
        self._evaluation_id = evaluation_id
        self._on_error = on_error
        self._queue: queue.SimpleQueue[object] = queue.SimpleQueue()
        self._error: HarnessError | None = None
        self.written = 0
        self._thread = threading.Thread(target=self._run, name="eval-skills-store", daemon=True)
        self._thread.start()

    def put(self, result: TaskResult) -> None:
        if self._error is not None:
            raise self._error
        self._queue.put(result)

    def close(self) -> None:
        """Flush and stop. Safe to call twice."""
        if self._thread.is_alive():
            self._queue.put(_STOP)
            self._thread.join()
        if self._error is not None:
            raise self._error

    @property
    def error(self) -> HarnessError | None:
        return self._error

    def _fail(self, exc: BaseException) -> None:
        if self._error is not None:
            return
        self._error = exc if isinstance(exc, HarnessError) else HarnessError(
            f"results store {self._store.path}: saving task results failed: {type(exc).__name__}: {exc}")
        if self._on_error is not None:
            with contextlib.suppress(Exception):  # the error is kept and raised by put/close anyway
                self._on_error(self._error)

    def _run(self) -> None:
        try:
            self._loop()
        except BaseException as exc:  # noqa: BLE001 - the thread must never die silently
            self._fail(exc)

    def _loop(self) -> None:
        stopping = False
        while not stopping:
            batch: list[TaskResult] = []
            item = self._queue.get()
            while True:
                if item is _STOP:
                    stopping = True
                    break
                batch.append(item)  # type: ignore[arg-type]
                if len(batch) >= _MAX_BATCH:
                    break
                try:
                    item = self._queue.get(timeout=LINGER_S)
                except queue.Empty:
                    break
            if batch and self._error is None:
                try:
                    self._store.add_results(self._evaluation_id, batch)
                    self.written += len(batch)
                except Exception as exc:  # noqa: BLE001 - any failure stops the run with its reason
                    self._fail(exc)
