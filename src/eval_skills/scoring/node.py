"""JavaScript custom scorers (what the original eval-skills runs), run by Node.js scorer workers.

A ``customScorerPath`` ending in ``.js``, ``.mjs`` or ``.cjs`` is run by ``_jsworker.mjs`` under ``node``,
through the same worker mechanism as Python scorers (:mod:`.workers`): the same deadline, the same
isolation (its own process group, its output kept off the harness's stdout), the same line protocol. One
persistent worker per scorer file, started when the plan is checked and kept for the run (a call that finds
it busy for over half a second starts a worker of its own, stopped when it is done); a worker past its
deadline is stopped and the next call starts a fresh one.

The scorer is an ES or CommonJS module whose default export (or export ``score``) is called as
``fn(output, expected, task)`` and may return a promise. The worker reads its verdict the original's way
(a number clamped to [0, 1]; ``{passed}`` without ``score`` scoring 1 or 0) before the harness judges it
like a Python scorer's. Without Node.js, a task that needs it is one line saying so, before anything runs.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from ..errors import ScorerError
from .workers import register_worker

__all__ = ["NODE_SUFFIXES", "node_command"]

NODE_SUFFIXES = (".js", ".mjs", ".cjs")
WORKER_SCRIPT = Path(__file__).with_name("_jsworker.mjs")


@register_worker(*NODE_SUFFIXES, max_workers=1)
def node_command(path: Path, reply_fd: int) -> list[str]:
    """The command line of a worker for the scorer file ``path``; ScorerError when Node.js is missing."""
    node = shutil.which("node")
    if node is None:
        raise ScorerError(f"{path.name} is a JavaScript scorer and needs Node.js, but node is not on PATH "
                          "(install Node.js 18 or newer, or write the scorer in Python)")
    return [node, str(WORKER_SCRIPT), str(reply_fd), str(path)]
