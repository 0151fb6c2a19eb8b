"""Writing a file so no reader ever sees half of it: a temporary file beside it, then a rename; and writing one
with the bare system calls (:func:`write_file`).

The temporary file is created exclusively (``O_CREAT | O_EXCL | O_NOFOLLOW``) under a name nobody can guess,
so a link planted in the folder (to a file elsewhere) is never written through: a name that exists is skipped
for another, never opened.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

__all__ = ["create_exclusive", "write_atomic", "write_atomic_bytes", "write_file"]

_TRIES = 16


def create_exclusive(path: Path, mode: int = 0o666) -> tuple[int, Path]:
    """A new temporary file beside ``path`` (``.<name>.<random>.tmp``), opened for writing: its descriptor and
    path. The umask applies, as for any file."""
    path = Path(path)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    for _ in range(_TRIES):
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(8)}.tmp")
        try:
            return os.open(tmp, flags, mode), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name beside {path}")


def write_file(path: Path, data: bytes, *, exclusive: bool = False) -> None:
    """Write ``data`` to ``path`` (``exclusive``: a new file, never through a name already there) with the bare
    system calls: a run writes dozens of small files, and Python's file objects add three calls to each."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC | (os.O_EXCL | os.O_NOFOLLOW if exclusive else os.O_TRUNC)
    _write_all(os.open(path, flags, 0o666), data)


def _write_all(fd: int, data: bytes) -> None:
    """Write ``data`` to ``fd`` and close it."""
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


def write_atomic_bytes(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data``; the temporary file is removed whatever happens."""
    path = Path(path)
    fd, tmp = create_exclusive(path)
    try:
        _write_all(fd, data)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_atomic(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` (UTF-8; characters UTF-8 cannot hold, such as lone surrogates from a
    skill's output, become ``?``). The temporary file is removed whatever happens."""
    write_atomic_bytes(path, text.encode("utf-8", errors="replace"))
