"""The results store of the original eval-skills (TypeScript), recognised so that it is never mistaken for ours.

It defaults to the same ``./eval-skills.db`` as we do; its tables are ``skills``, ``evaluations`` (with a
``skill_id`` column) and ``task_results``, and it has none of our ``_migrations``.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

__all__ = ["ORIGINAL_TABLES", "has_original_schema", "is_original_store"]

ORIGINAL_TABLES = {"skills", "evaluations", "task_results"}


def has_original_schema(db: sqlite3.Connection) -> bool:
    tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    return ("_migrations" not in tables and tables >= ORIGINAL_TABLES
            and "skill_id" in {row[1] for row in db.execute("PRAGMA table_info(evaluations)")})


def is_original_store(path: Path) -> bool:
    """True when ``path`` is a SQLite file the original eval-skills wrote. Reads only; any failure: False."""
    if not path.is_file():
        return False
    try:
        db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error:
        return False
    try:
        return has_original_schema(db)
    except sqlite3.Error:
        return False
    finally:
        db.close()
