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

import httpx

TOKEN = "test-token"
AUTH = {"Authorization": f"token {TOKEN}"}  # what a script sends (a browser keeps the token in a cookie)


def page_client(url: str, **options: object) -> httpx.Client:
    """An HTTP client of the page served at ``url`` (by :func:`served`), sending its token."""
    return httpx.Client(base_url=url, headers=AUTH, **options)  # type: ignore[arg-type]


def base(url: str) -> str:
    """The address without its ``?token=...``."""
    return url.partition("?")[0]


def token_of(url: str) -> str:
    """The token of an address ``eval-skills view`` printed."""
    found = re.search(r"[?&]token=([^&#]+)", url)
    assert found, url
    return found.group(1)


def with_token(url: str, token: str = TOKEN) -> str:
    """The address a browser opens: the page's own, with its token."""
    return f"{base(url)}?token={token}"


@contextmanager
def served(source: object) -> Iterator[str]:
    """The page of ``source`` on a free port of 127.0.0.1 (uvicorn in a thread), its token TOKEN; yields its
    address (without the token: clients send AUTH, browsers open :func:`with_token`)."""
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
    """``eval-skills view ARGS`` in a child process; yields the address it printed (with its token) and the
    process."""
    proc = subprocess.Popen([sys.executable, "-m", "eval_skills", "view", *map(str, args)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        found = re.search(r"http://127\.0\.0\.1:\d+/\?token=[A-Za-z0-9_-]+", line)
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
