"""The limits the harness runs under, and telling its own resource failures from a skill's.

A harness resource failure is not the skill's fault. :func:`resource_failure` recognises running out of file
descriptors, processes or memory (``EMFILE``, ``ENFILE``, ``EAGAIN``, ``ENOMEM``) in an exception or its
causes; :func:`raise_fd_limit` and :func:`fd_capacity` keep that rare.
"""

from __future__ import annotations

import contextlib
import errno
import os

__all__ = ["FDS_PER_TASK", "fd_capacity", "open_fd_count", "raise_fd_limit", "resource_failure"]

_RESOURCE_ERRNOS = {errno.EMFILE, errno.ENFILE, errno.EAGAIN, errno.ENOMEM}
FDS_PER_TASK = 8  # descriptors one task in flight may hold: three pipes of a program, a socket, spares
FD_RESERVE = 64  # descriptors kept for the store, report files, scorer workers and the harness itself


def raise_fd_limit() -> tuple[int, int] | None:
    """Raise the soft limit of open files as far as the hard limit allows. Returns (soft, hard) after."""
    try:
        import resource
    except ImportError:  # pragma: no cover - Windows
        return None
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return soft, hard
    for candidate in (hard, 1 << 20, 10240):  # an unlimited hard limit, or macOS's OPEN_MAX
        if candidate == resource.RLIM_INFINITY or candidate <= soft or \
                (hard != resource.RLIM_INFINITY and candidate > hard):
            continue
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (candidate, hard))
            return candidate, hard
        except (ValueError, OSError):
            continue
    return soft, hard


def open_fd_count() -> int:
    """Descriptors this process has open now (an estimate where it cannot be counted)."""
    for folder in ("/proc/self/fd", "/dev/fd"):
        with contextlib.suppress(OSError):
            return len(os.listdir(folder))
    return 32


def fd_capacity() -> int | None:
    """How many tasks can be in flight at once within the open-file limit, or None when unlimited."""
    try:
        import resource
    except ImportError:  # pragma: no cover
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return None
    return max(1, (soft - open_fd_count() - FD_RESERVE) // FDS_PER_TASK)


def resource_failure(exc: BaseException | None) -> OSError | None:
    """The OSError in ``exc`` or its causes that says the harness ran out of a resource, else None."""
    seen = 0
    while exc is not None and seen < 10:
        if isinstance(exc, OSError) and exc.errno in _RESOURCE_ERRNOS:
            return exc
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return None
