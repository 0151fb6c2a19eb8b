"""Run the review page's server for tests: in a thread of this process, or as ``eval-skills view``."""

from __future__ import annotations

import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

TOKEN = "test-token"


@contextmanager
def served(source: object) -> Iterator[str]:
    """The page of ``source`` on a free port of 127.0.0.1 (uvicorn in a thread); yields its address."""
    import uvicorn

    from eval_skills.viewer.server import bind, create_app

    sock = bind(0)
    server = uvicorn.Server(uvicorn.Config(create_app(source, token=TOKEN), log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


@contextmanager
def view_process(*args: str | Path) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """``eval-skills view ARGS`` in a child process; yields the address it printed and the process."""
    proc = subprocess.Popen([sys.executable, "-m", "eval_skills", "view", *map(str, args)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        found = re.search(r"http://127\.0\.0\.1:\d+/", line)
        if not found:
            proc.kill()
            raise AssertionError(f"no address printed: {line!r} {proc.stderr.read() if proc.stderr else ''}")
        yield found.group(0), proc
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
