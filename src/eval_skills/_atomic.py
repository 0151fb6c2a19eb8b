"""Writing a text file so no reader ever sees half of it: a temporary file beside it, then a rename."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["write_atomic"]


def write_atomic(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` (UTF-8; characters UTF-8 cannot hold, such as lone surrogates from a
    skill's output, become ``?``). The temporary file is removed whatever happens."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8", errors="replace", newline="")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
