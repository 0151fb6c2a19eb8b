"""Helpers for tests that watch processes end."""

from __future__ import annotations

import os
import time


def gone(pid: int) -> bool:
    """True when the process no longer runs (a zombie waiting for a parent that is not us counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True
    except OSError:  # pragma: no cover - no /proc
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        return False


def wait_gone(pid: int, seconds: float = 3.0) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if gone(pid):
            return True
        time.sleep(0.02)
    return gone(pid)


def running_with(*words: str) -> list[int]:
    """The processes (not zombies) whose command line holds every one of ``words``: how a test finds a process
    it did not start itself, whether or not that process got as far as saying its pid."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                argv = handle.read().split(b"\0")
        except OSError:
            continue
        if all(word.encode() in argv for word in words) and not gone(int(entry)):
            found.append(int(entry))
    return found
