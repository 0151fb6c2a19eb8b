"""Running programs, for the adapters (tool skills), the agents and the judges alike.

- :mod:`.child`: :class:`Child`, a started program in its own process group with its stderr tail kept, its
  exit seen even while something it started holds its pipes, and a :meth:`Child.kill` that stops every
  descendant and closes our pipe ends; the command line (:func:`split_command`, :func:`resolve_argv`);
  bounded reading of its output (:func:`read_line`, :class:`Ring`); :func:`feed_stdin`.
- :mod:`.tree`: every process the harness starts is registered, so descendants that left their group are
  found by parent links and, on Linux, orphans adopted as a child subreaper are killed and reaped.
- :mod:`.limits`: the open-file limit raised and the concurrency it allows; a harness resource failure
  (out of descriptors, processes or memory) told apart from a skill's failure.
- :mod:`.watcher`: on Python 3.11 under Linux, each program's exit seen by the event loop through a pidfd
  (as 3.12 does), not by a thread started per program.
"""

from __future__ import annotations

from .child import (
    LEFTOVER_GRACE,
    MAX_LINE_BYTES,
    STDERR_BYTES,
    STREAM_LIMIT,
    Child,
    Ring,
    describe_exit,
    excerpt,
    feed_stdin,
    read_line,
    read_until_exit,
    resolve_argv,
    split_command,
)
from .limits import FDS_PER_TASK, fd_capacity, open_fd_count, raise_fd_limit, resource_failure
from .tree import become_subreaper, descendants, forget, kill_group, kill_tree, reap_orphans, spawning
from .watcher import install_child_watcher

__all__ = [
    "FDS_PER_TASK",
    "LEFTOVER_GRACE",
    "MAX_LINE_BYTES",
    "STDERR_BYTES",
    "STREAM_LIMIT",
    "Child",
    "Ring",
    "become_subreaper",
    "describe_exit",
    "descendants",
    "excerpt",
    "fd_capacity",
    "feed_stdin",
    "forget",
    "install_child_watcher",
    "kill_group",
    "kill_tree",
    "open_fd_count",
    "raise_fd_limit",
    "read_line",
    "read_until_exit",
    "reap_orphans",
    "resolve_argv",
    "resource_failure",
    "spawning",
    "split_command",
]
