"""Recognising a store the original eval-skills (TypeScript) wrote.

Both tools default to ``./eval-skills.db``, but the original's file has other tables (``skills``,
``evaluations`` with a ``skill_id`` column, ``task_results`` keyed by ``eval_id``) and no migration record,
so it cannot be migrated into ours. :func:`refuse_original_store` says so in one line before anything runs.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from ..errors import InputError

__all__ = ["is_original_store", "refuse_original_store"]


def is_original_store(path: Path) -> bool:
    """True when ``path`` is a SQLite file with the original eval-skills' tables and none of ours."""
    if not path.is_file():
        return False
    try:
        db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error:
        return False
    try:
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if "_migrations" in tables or not {"skills", "evaluations", "task_results"} <= tables:
            return False
        columns = {row[1] for row in db.execute("PRAGMA table_info(evaluations)")}
        return "skill_id" in columns
    except sqlite3.Error:  # not a database, or locked: opening it for real will say what is wrong
        return False
    finally:
        db.close()


def refuse_original_store(path: Path) -> None:
    """InputError when ``path`` holds the original eval-skills' store, which this tool cannot write to."""
    if is_original_store(path):
        raise InputError("this results store was written by the original eval-skills (TypeScript) and has "
                         "another schema", file=str(path),
                         hint="pass --store with a new file (e.g. --store ./eval-skills-results.db), "
                              "or move this one away")
