"""Learning that a program exited without a thread per program: a pidfd read by the event loop (Linux).

asyncio learns that a child exited through its child watcher. On Python 3.11 the default one starts a thread
per child that blocks in ``waitpid``: a thread made, started and woken for every agent run, judge call and
one-shot skill call, each handing the exit back to the loop through its self-pipe. Python 3.12 and newer use a
pidfd instead where Linux offers one (``os.pidfd_open``, Linux 5.3): the loop watches a descriptor that becomes
readable when the child exits, and reaps it then. :func:`install_child_watcher` gives 3.11 the same, once per
process, before the first program is started; elsewhere (3.12 and newer, no pidfd, another event loop policy)
it leaves asyncio as it is.

The watcher asks for the running loop at each start, as 3.12's does, so programs started from loops in other
threads (each ``asyncio.run`` its own loop) are watched by their own loop. It reaps only the pid it was given,
never ``waitpid(-1)``, as :mod:`.tree` requires. A program whose pidfd cannot be had (no descriptor left) is
waited for by a thread, as before, so it is still reaped and its exit still seen.
"""

from __future__ import annotations

import asyncio
import os
import sys
import warnings
from collections.abc import Callable
from typing import Any, TypeVarTuple, Unpack

__all__ = ["install_child_watcher"]

_checked = False
_Ts = TypeVarTuple("_Ts")


if sys.version_info < (3, 12):  # 3.12 has its own (and 3.14 no child watchers at all)

    class _PidfdWatcher(asyncio.AbstractChildWatcher):
        """Python 3.12's ``PidfdChildWatcher``: each child's pidfd read by the loop that started the child."""

        def __init__(self) -> None:
            self._threads: asyncio.ThreadedChildWatcher | None = None

        def add_child_handler(self, pid: int, callback: Callable[[int, int, Unpack[_Ts]], object],
                              *args: *_Ts) -> None:
            loop = asyncio.get_running_loop()
            try:
                pidfd = os.pidfd_open(pid)
            except OSError:  # no descriptor to be had (the process is out of them): a thread waits for this one
                if self._threads is None:
                    self._threads = asyncio.ThreadedChildWatcher()
                self._threads.add_child_handler(pid, callback, *args)
                return
            loop.add_reader(pidfd, self._reap, loop, pid, pidfd, callback, args)

        @staticmethod
        def _reap(loop: asyncio.AbstractEventLoop, pid: int, pidfd: int, callback: Callable[..., Any],
                  args: tuple[Any, ...]) -> None:
            loop.remove_reader(pidfd)
            try:
                _, status = os.waitpid(pid, 0)
            except ChildProcessError:  # reaped by someone else: its exit code is lost, as asyncio reports it
                returncode = 255
            else:
                returncode = os.waitstatus_to_exitcode(status)
            os.close(pidfd)
            callback(pid, returncode, *args)

        def remove_child_handler(self, pid: int) -> bool:
            return True  # nothing kept by pid: the reader goes when the child exits

        def attach_loop(self, loop: asyncio.AbstractEventLoop | None) -> None:
            pass  # every child is watched by the loop running when it started

        def is_active(self) -> bool:
            return True

        def close(self) -> None:
            pass

        def __enter__(self) -> _PidfdWatcher:
            return self

        def __exit__(self, *exc: object) -> None:
            pass


def _pidfd_works() -> bool:
    try:
        os.close(os.pidfd_open(os.getpid()))
    except (AttributeError, OSError):
        return False
    return True


def install_child_watcher() -> None:
    """On Python 3.11 under Linux with the default event loop policy, watch children by pidfd (see above).
    Once per process; a no-op anywhere else. Children already started keep their watcher threads, which
    report their exits as before."""
    global _checked
    if _checked:
        return
    _checked = True
    if sys.version_info >= (3, 12) or not sys.platform.startswith("linux") or not _pidfd_works():
        return
    policy = asyncio.get_event_loop_policy()
    if type(policy) is not asyncio.DefaultEventLoopPolicy:
        return  # someone chose their own policy (uvloop's has its own way): theirs to keep
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        current = policy.get_child_watcher()
        if type(current) is asyncio.ThreadedChildWatcher:  # the default, never one chosen on purpose
            policy.set_child_watcher(_PidfdWatcher())
