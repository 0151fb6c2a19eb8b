"""Writing rows from a thread of their own, so the event loop never waits on SQLite.

Each item (a task result, a paired run's row) is handed over as it finishes; the writer thread commits
whatever is waiting in one transaction (group commit).
Handing over is a list append: the thread is woken once per batch, not once per result, and after waking it
lingers (``LINGER_S``, 2 ms, unless told otherwise) for the rest of the batch, so a fast run neither pays a
commit per result nor makes the event loop's thread give up the interpreter to the writer after every task. A
result is on disk within a few milliseconds of finishing, and ``close`` (also on Ctrl-C) commits everything
that finished.
:class:`GroupWriter` is the machinery, given the function that commits one batch; :class:`ResultWriter` commits
task results.
"""

from __future__ import annotations

import collections
import contextlib
import threading
import time
from collections.abc import Callable
from typing import Generic, TypeVar

from ..errors import HarnessError
from ..results import TaskResult
from .sqlite import Store

__all__ = ["GroupWriter", "ResultWriter"]

T = TypeVar("T")

_MAX_BATCH = 500
LINGER_S = 0.002


class GroupWriter(Generic[T]):
    """``put`` items from any thread; ``close`` waits until every one is committed by ``commit`` (called in the
    writer's thread with a batch, in the order the items were put: one transaction).

    Any failure while writing (a store error, a lock held too long by another process, a value SQLite
    refuses, a bug) stops the writer: ``on_error`` is called with it at once (from the writer's thread), and
    the next ``put`` or ``close`` raises it as a HarnessError (``what`` says what was being saved). Items are
    never lost silently.
    """

    def __init__(self, store: Store, commit: Callable[[list[T]], None], *, what: str = "saving rows",
                 on_error: Callable[[HarnessError], None] | None = None, linger: float = LINGER_S) -> None:
        self._store = store
        self._linger = linger
        self._commit = commit
        self._what = what
        self._on_error = on_error
        self._pending: collections.deque[T] = collections.deque()
        self._wake = threading.Event()  # set when results wait and the thread may be asleep
        self._stopping = False
        self._error: HarnessError | None = None
        self.written = 0
        self._thread = threading.Thread(target=self._run, name="eval-skills-store", daemon=True)
        self._thread.start()

    def put(self, item: T) -> None:
        if self._error is not None:
            raise self._error
        self._pending.append(item)
        if not self._wake.is_set():
            self._wake.set()

    def close(self) -> None:
        """Flush and stop. Safe to call twice."""
        if self._thread.is_alive():
            self._stopping = True
            self._wake.set()
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
            f"results store {self._store.path}: {self._what} failed: {type(exc).__name__}: {exc}")
        if self._on_error is not None:
            with contextlib.suppress(Exception):  # the error is kept and raised by put/close anyway
                self._on_error(self._error)

    def _run(self) -> None:
        try:
            self._loop()
        except BaseException as exc:  # noqa: BLE001 - the thread must never die silently
            self._fail(exc)

    def _loop(self) -> None:
        pending = self._pending
        while True:
            self._wake.wait()
            if not self._stopping:
                time.sleep(self._linger)  # the rest of the batch
            self._wake.clear()  # before taking the batch: a result put after this wakes the thread again
            stopping = self._stopping
            # what is waiting now, and no more: results put while this batch is written wait for the next wake and
            # its linger (a commit is long enough for a few to come, and taking them at once would make every batch
            # a few results long, with the interpreter handed back and forth for each)
            waiting = len(pending)
            while waiting:
                batch = [pending.popleft() for _ in range(min(waiting, _MAX_BATCH))]
                waiting -= len(batch)
                if self._error is None:
                    try:
                        self._commit(batch)
                        self.written += len(batch)
                    except Exception as exc:  # noqa: BLE001 - any failure stops the run with its reason
                        self._fail(exc)
            if stopping:
                return


class ResultWriter(GroupWriter[TaskResult]):
    """Task results of evaluation ``evaluation_id``, committed in groups."""

    def __init__(self, store: Store, evaluation_id: str,
                 on_error: Callable[[HarnessError], None] | None = None) -> None:
        super().__init__(store, lambda batch: store.add_results(evaluation_id, batch), what="saving task results",
                         on_error=on_error)
