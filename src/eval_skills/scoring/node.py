"""JavaScript custom scorers (what the original eval-skills runs), run by Node.js in a worker process.

A ``customScorerPath`` ending in ``.js``, ``.mjs`` or ``.cjs`` is run by ``_jsworker.mjs`` under ``node``:
one persistent process per scorer file, started when the plan is checked, in its own process group (in
the current folder, as the original runs its scorers), with
a deadline on every call (a worker that overruns it is stopped and the next call starts a fresh one). The
worker speaks the scorer-worker protocol of JSON lines:

- started as :func:`node_command` ``(scorer_path, reply_fd)``; it writes ``{"ready": true}`` (or
  ``{"loadError": "<why>"}``) to the inherited descriptor ``reply_fd``;
- for each request line on its stdin, ``{"id": N, "output", "expected", "task"}``, it writes
  ``{"id": N, "result": <verdict>}`` or ``{"id": N, "error": "<why>"}`` to ``reply_fd``;
- what the scorer prints goes to its stdout and stderr (the end of stderr is quoted when it dies);
- the end of stdin means exit.

The verdict is normalised the original's way by the worker (numbers clamped to [0, 1], ``{passed}``
without ``score`` scoring 1 or 0) and then read like a Python scorer's: a bool, a number or
``{score, passed, reason}``. Without Node.js, a task that needs it is an input error saying so.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import select
import shutil
import signal
import subprocess
import threading
import time
import weakref
from pathlib import Path
from typing import Any

from ..errors import ScorerError

__all__ = ["NODE_SUFFIXES", "NodeScorer", "node_command"]

NODE_SUFFIXES = (".js", ".mjs", ".cjs")
WORKER_SCRIPT = Path(__file__).with_name("_jsworker.mjs")
TIMEOUT_S = 5.0  # each call, and loading: the original's limit for a custom scorer
MAX_REPLY_BYTES = 1 << 20
STDERR_TAIL = 2000


def node_command(path: Path, reply_fd: int) -> list[str]:
    """The command line of a worker for the scorer file ``path``; ScorerError when Node.js is missing."""
    node = shutil.which("node")
    if node is None:
        raise ScorerError(f"{path.name} is a JavaScript scorer and needs Node.js, but node is not on PATH "
                          "(install Node.js 18 or newer, or write the scorer in Python)")
    return [node, str(WORKER_SCRIPT), str(reply_fd), str(path)]


class NodeScorer:
    """The worker of one JavaScript scorer file: calls are serialised, each within ``timeout`` seconds."""

    def __init__(self, path: Path, timeout: float = TIMEOUT_S) -> None:
        self.path = path
        self.timeout = timeout
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._replies = -1
        self._buffer = bytearray()
        self._stderr = bytearray()
        self._next_id = 0
        _LIVE.add(self)

    def load(self) -> None:
        """Start the worker now (it stays for the run): ScorerError saying why the file cannot be used."""
        with self._lock:
            if self._proc is None:
                self._start(time.monotonic() + self.timeout)

    def __call__(self, output: Any, expected: Any, task: Any) -> Any:
        """The scorer's verdict for one output; ScorerError for anything the scorer or its worker did."""
        with self._lock:
            deadline = time.monotonic() + self.timeout
            if self._proc is None:
                self._start(deadline)
            self._next_id += 1
            request = json.dumps({"id": self._next_id, "output": output, "expected": expected, "task": task},
                                 separators=(",", ":"), default=str).encode() + b"\n"
            proc = self._proc
            assert proc is not None and proc.stdin is not None
            try:
                proc.stdin.write(request)
                proc.stdin.flush()
            except OSError:
                raise self._died("while scoring") from None
            reply = self._read(deadline, "while scoring")
        if reply.get("id") != self._next_id:
            self.close()
            raise ScorerError(f"{self.path.name}: its worker broke the protocol (a reply to another request)")
        if "error" in reply:
            raise ScorerError(f"{self.path.name} {reply['error']}")
        return reply.get("result")

    def close(self) -> None:
        """Stop the worker (its process group). Never raises."""
        proc, self._proc = self._proc, None
        if proc is not None:
            with contextlib.suppress(OSError):
                os.killpg(proc.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=5.0)
            if proc.stdin is not None:
                with contextlib.suppress(OSError):
                    proc.stdin.close()
        if self._replies >= 0:
            with contextlib.suppress(OSError):
                os.close(self._replies)
            self._replies = -1
        self._buffer.clear()

    # -- internals -----------------------------------------------------------------------------------

    def _start(self, deadline: float) -> None:
        read_end, write_end = os.pipe()
        try:
            self._proc = subprocess.Popen(node_command(self.path, write_end), stdin=subprocess.PIPE,
                                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                          pass_fds=(write_end,), start_new_session=True)
        except OSError as exc:
            os.close(read_end)
            raise ScorerError(f"cannot start Node.js for {self.path.name}: {exc.strerror or exc}") from None
        finally:
            os.close(write_end)
        self._replies = read_end
        self._stderr.clear()
        threading.Thread(target=self._drain, args=(self._proc.stderr,), daemon=True).start()
        first = self._read(deadline, "while loading")
        if first.get("ready") is not True:
            self.close()
            why = first.get("loadError")
            raise ScorerError(f"{self.path.name} {why}" if isinstance(why, str) else
                              f"{self.path.name} did not load: {first!r}")

    def _drain(self, stream: Any) -> None:
        with contextlib.suppress(OSError, ValueError):
            while chunk := stream.read1(65536):
                self._stderr += chunk
                del self._stderr[:-STDERR_TAIL]

    def _died(self, doing: str) -> ScorerError:
        proc = self._proc
        code = None
        if proc is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                code = proc.wait(timeout=1.0)
        self.close()
        how = "closed its reply pipe" if code is None else (
            f"was killed by signal {-code}" if code < 0 else f"exited with code {code}")
        tail = " | ".join(line.strip() for line in self._stderr.decode("utf-8", "replace").splitlines()
                          if line.strip())
        return ScorerError(f"{self.path.name}: its Node.js worker {how} {doing}"
                           + (f"; its output: {tail[-1000:]}" if tail else ""))

    def _read(self, deadline: float, doing: str) -> dict[str, Any]:
        poller = select.poll()
        poller.register(self._replies, select.POLLIN | select.POLLERR | select.POLLHUP)
        while (newline := self._buffer.find(b"\n")) < 0:
            if len(self._buffer) > MAX_REPLY_BYTES:
                self.close()
                raise ScorerError(f"{self.path.name}: a reply longer than {MAX_REPLY_BYTES >> 20} MiB")
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not poller.poll(max(1, int(remaining * 1000))):
                self.close()
                raise ScorerError(f"{self.path.name} did not {'load' if 'load' in doing else 'return'} within "
                                  f"{self.timeout:g}s (its process was stopped)")
            chunk = os.read(self._replies, 65536)
            if not chunk:
                raise self._died(doing)
            self._buffer += chunk
        line = bytes(self._buffer[:newline])
        del self._buffer[: newline + 1]
        try:
            message = json.loads(line)
        except ValueError:
            message = None
        if not isinstance(message, dict):
            self.close()
            raise ScorerError(f"{self.path.name}: its Node.js worker broke the protocol")
        return message


_LIVE: weakref.WeakSet[NodeScorer] = weakref.WeakSet()


@atexit.register
def _stop_all() -> None:
    for scorer in list(_LIVE):
        scorer.close()
