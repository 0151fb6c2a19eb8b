"""The judges' verdict cache in the results store (table ``judge_cache``).

A :class:`VerdictStore` is what a judge takes as its ``cache`` (``get(key)``, ``put(key, verdict)``): keys are
``Judge.cache_key(request)``, values the verdict as a JSON object. A value that cannot be read counts as
missing (the judge then asks again and replaces it). Given a path instead of an open :class:`Store`, it opens
the store on first use (so a command that stops before asking a judge writes nothing) and :meth:`close`
closes it.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from .encoding import now as _now
from .sqlite import Store

__all__ = ["VerdictStore"]


class VerdictStore:
    def __init__(self, store: Store | Path | str) -> None:
        self._store = store if isinstance(store, Store) else None
        self._path = None if isinstance(store, Store) else Path(store)
        self._lock = threading.Lock()

    @property
    def store(self) -> Store:
        with self._lock:
            if self._store is None:
                assert self._path is not None
                self._store = Store.open(self._path)
            return self._store

    def close(self) -> None:
        """Close the store this cache opened (one it was given stays open)."""
        with self._lock:
            if self._path is not None and self._store is not None:
                self._store.close()
                self._store = None

    def get(self, key: str) -> dict[str, Any] | None:
        with self.store._read("reading a cached verdict") as db:
            row = db.execute("SELECT verdict_json FROM judge_cache WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        try:
            value = json.loads(row[0])
        except ValueError:
            return None
        return value if isinstance(value, dict) else None

    def put(self, key: str, verdict: dict[str, Any]) -> None:
        with self.store._write("caching a verdict") as db:
            db.execute("INSERT OR REPLACE INTO judge_cache (key, verdict_json, created_at) VALUES (?, ?, ?)",
                       (key, json.dumps(verdict, ensure_ascii=False), _now()))

    def __len__(self) -> int:
        with self.store._read("counting cached verdicts") as db:
            count: int = db.execute("SELECT COUNT(*) FROM judge_cache").fetchone()[0]
        return count
