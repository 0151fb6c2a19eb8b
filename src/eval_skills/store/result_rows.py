"""A task result as a row of ``task_results``, and the INSERTs that write rows one at a time or in batches."""

from __future__ import annotations

import functools
import itertools
import sqlite3
from collections.abc import Sequence
from typing import Any

from ..results import TaskResult
from .encoding import clip, dumps, encode_output

__all__ = ["INSERT_RESULT", "insert_rows", "result_row"]

INSERT_RESULT = (
    "INSERT INTO task_results (evaluation_id, skill_id, task_id, run_id, status, score, latency_ms, error,"
    " scorer_type, reason, output_json, usage_json, attempts, extra_json, finished_at)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
# a batch is written as INSERTs of these many rows (each its own cached statement): SQLite lets go of the
# interpreter once a statement, not once a row as executemany does, so the event loop's thread is not made to
# hand it back and forth with the writer's for every result; 64 rows of 15 is under the 999 parameters old
# SQLite builds allow
_CHUNKS = (64, 16, 4, 1)


@functools.cache
def _insert_many(rows: int) -> str:
    return INSERT_RESULT + (", " + INSERT_RESULT.rsplit(" VALUES ", 1)[1]) * (rows - 1)


def result_row(evaluation_id: str, result: TaskResult, finished_at: str) -> tuple[Any, ...]:
    """The row of ``result``: long texts clipped, the output as bounded JSON text."""
    usage = result.usage
    return (evaluation_id, result.skill_id, result.task_id, result.run_id, result.status, result.score,
            result.latency_ms, clip(result.error), result.scorer_type, clip(result.reason),
            encode_output(result.output), None if usage is None else dumps(usage.to_json()),
            result.attempts, dumps(result.extra) if result.extra else None, finished_at)


def insert_rows(db: sqlite3.Connection, rows: Sequence[tuple[Any, ...]]) -> None:
    """Write ``rows`` (made by :func:`result_row`) in as few statements as the chunk sizes allow; the caller
    holds the transaction."""
    start = 0
    for size in _CHUNKS:
        while len(rows) - start >= size:
            db.execute(_insert_many(size), list(itertools.chain.from_iterable(rows[start:start + size])))
            start += size
