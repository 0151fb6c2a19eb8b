"""What a store file must be: checked before a run writes anything, and how a run that died is recognised."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

from ..errors import HarnessError, InputError
from ..formats.original_store import ORIGINAL_TABLES, has_original_schema

__all__ = ["ORIGINAL_TABLES", "abandoned", "check_store", "one_line", "refuse_foreign"]


def one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def check_store(path: Path | str) -> None:
    """``path`` is an eval-skills store, or nothing yet and creatable: else HarnessError. Writes nothing."""
    path = Path(path)
    if path.is_dir():
        raise HarnessError(f"results store {path}: is a folder, expected a database file")
    if not path.exists():
        parent = path.parent
        while not parent.exists() and parent != parent.parent:
            parent = parent.parent
        if not parent.is_dir():
            raise HarnessError(f"results store {path}: cannot create its folder ({parent} is a file)")
        if why := _unwritable(parent):
            raise HarnessError(f"results store {path}: cannot create it ({why})")
        return
    if why := _unwritable(path.parent) or _unwritable(path):  # SQLite writes a journal beside the file
        raise HarnessError(f"results store {path}: cannot write to it ({why})")
    try:
        db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise HarnessError(f"results store {path}: cannot open ({one_line(exc)})") from exc
    try:
        refuse_foreign(db, path)
    except sqlite3.Error as exc:
        raise HarnessError(f"results store {path}: cannot open ({one_line(exc)})") from exc
    finally:
        db.close()


def _unwritable(path: Path) -> str:
    """Why we could not write ``path`` (a read-only file system, no permission), or "" when we can."""
    try:
        if os.statvfs(path).f_flag & os.ST_RDONLY:
            return f"{path} is on a read-only file system"
    except (OSError, AttributeError):  # pragma: no cover - no statvfs: the permission check below still runs
        pass
    return "" if os.access(path, os.W_OK) else f"{path} is not writable"



def refuse_foreign(db: sqlite3.Connection, path: Path) -> None:
    """Refuse a SQLite file of another program (tables, but none of our migrations). The original eval-skills
    (TypeScript) defaults to the same ``./eval-skills.db``; its store (tables ``skills``, ``evaluations`` with
    a ``skill_id`` column, ``task_results``) cannot be migrated into ours, and is named as such."""
    tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if not tables or "_migrations" in tables:
        return
    if has_original_schema(db):
        raise InputError("this results store was written by the original eval-skills (TypeScript) and has "
                         "another schema", file=str(path),
                         hint="pass --store with a new file (e.g. --store ./eval-skills-results.db), "
                              "or move this one away")
    raise HarnessError(f"results store {path}: is a SQLite database of another program, not an "
                       "eval-skills store (choose another --store)")


def abandoned(pid: Any, host: Any) -> bool:
    """True when an evaluation's process ran on this machine and is gone (it can never finish it)."""
    import socket

    if not isinstance(pid, int) or host != socket.gethostname():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    return False
