"""The processes the harness starts, and every descendant of theirs.

- **Every descendant can be stopped.** Programs are started in their own process group, but a descendant
  may leave it (``setsid sleep 780 &``). :func:`kill_tree` also kills what it finds below a program by
  parent links, and on Linux :func:`become_subreaper` makes the harness adopt orphaned descendants, so
  :func:`reap_orphans` can find, kill and reap them after their parent ended.
- **Only our own children are reaped.** Every process the harness starts is registered (:func:`spawning`,
  :func:`forget`); a child of ours that is not registered is an adopted orphan. Nothing here ever calls
  ``waitpid(-1)``, which would take an exit status from asyncio's child watcher.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator

__all__ = ["become_subreaper", "descendants", "forget", "kill_group", "kill_tree", "reap_orphans", "spawning"]

_SIGKILL = getattr(signal, "SIGKILL", signal.SIGTERM)

_lock = threading.Lock()
_known: set[int] = set()  # pids of processes the harness started and has not finished with
_spawning = 0  # starts in progress: their pid may not be registered yet
_subreaper = False


@contextlib.contextmanager
def spawning() -> Iterator[set[int]]:
    """Wrap the start of a process; add its pid to the yielded set before leaving, to register it."""
    global _spawning
    started: set[int] = set()
    with _lock:
        _spawning += 1
    try:
        yield started
    finally:
        with _lock:
            _known.update(started)
            _spawning -= 1


def forget(pid: int) -> None:
    """The process ``pid`` has been reaped by its owner."""
    with _lock:
        _known.discard(pid)


def become_subreaper() -> bool:
    """Make this process adopt its orphaned descendants (Linux ``PR_SET_CHILD_SUBREAPER``). True when it is."""
    global _subreaper
    if _subreaper or not sys.platform.startswith("linux"):
        return _subreaper
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        _subreaper = libc.prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        _subreaper = False
    return _subreaper


def _table() -> dict[int, tuple[bytes, int]]:
    """pid -> (state, parent pid) of every process we can see (empty where there is no /proc)."""
    table: dict[int, tuple[bytes, int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return table
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
            table[int(entry)] = (fields[0], int(fields[1]))
        except (OSError, IndexError, ValueError):
            continue
    return table


def children() -> set[int] | None:
    """The pids of this process's children (Linux ``/proc/self/task/*/children``: cheap, no scan of every
    process), or None where that cannot be read."""
    found: set[int] = set()
    try:
        for task in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{task}/children", "rb") as handle:
                found.update(int(pid) for pid in handle.read().split())
    except (OSError, ValueError):
        return None
    return found


def _parents(table: dict[int, tuple[bytes, int]] | None = None) -> dict[int, int]:
    """pid -> parent pid of every living process."""
    table = _table() if table is None else table
    return {pid: parent for pid, (state, parent) in table.items() if state not in (b"Z", b"X")}


def descendants(pid: int, parents: dict[int, int] | None = None) -> list[int]:
    """Every living process below ``pid`` by parent links, whatever its group or session."""
    parents = _parents() if parents is None else parents
    children: dict[int, list[int]] = {}
    for child, parent in parents.items():
        children.setdefault(parent, []).append(child)
    found: list[int] = []
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), ()):
            found.append(child)
            todo.append(child)
    return found


def _kill(pid: int, sig: int = _SIGKILL) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, sig)


def kill_group(pgid: int, sig: int = _SIGKILL) -> None:
    """Signal a whole process group (a program started in its own session and everything it started that
    stayed in its group). Gone already is fine."""
    try:
        if hasattr(os, "killpg"):
            os.killpg(pgid, sig)
        else:  # pragma: no cover - Windows
            os.kill(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def kill_tree(pid: int, *, search: bool = True) -> None:
    """SIGKILL the program ``pid``, its process group and (with ``search``) every descendant found by
    parent links, also those that left the group."""
    if search:
        for child in descendants(pid):
            _kill(child)
    kill_group(pid)
    _kill(pid)


def _reap(pid: int, timeout: float = 1.0) -> None:
    end = time.monotonic() + timeout
    while True:
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return
        if done or time.monotonic() > end:
            return
        time.sleep(0.002)


def reap_orphans() -> int:
    """Kill and reap the descendants this harness adopted (see :func:`become_subreaper`): processes whose
    parent is us but which we did not start. Returns how many. A no-op where the harness is no subreaper."""
    if not _subreaper:
        return 0
    me = os.getpid()
    count = 0
    for _ in range(8):  # a killed orphan's own children are adopted in turn
        with _lock:
            if _spawning:
                return count  # a start is in flight: its child may not be registered yet; sweep later
            known = set(_known)
        mine = children()
        if mine is not None and mine <= known:  # no orphan came to us: no need to look at every process
            return count
        table = _table()
        adopted = [pid for pid, (_, parent) in table.items() if parent == me and pid not in known]
        if not adopted:
            return count
        parents = _parents(table)
        for pid in adopted:
            if pid in parents:  # still running
                for child in descendants(pid, parents):
                    _kill(child)
                _kill(pid)
                count += 1
        for pid in adopted:
            _reap(pid)
    return count
