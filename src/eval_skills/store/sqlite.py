"""The results store: one SQLite file with evaluations, per-skill reports and every task result.

The file is in WAL mode with ``synchronous=NORMAL``. Each :meth:`Store.add_result` is one statement in
autocommit mode, so it is committed when the call returns: a result survives the process being killed
right after (an OS crash or power cut may lose the last commits, which WAL with ``synchronous=NORMAL``
does not fsync). Several processes may write to one file at once; they queue on SQLite's write lock
for up to ``busy_timeout``. One :class:`Store` may be shared by threads (its calls are serialised).

Every sqlite3 error surfaces as a one-line :class:`HarnessError` naming the file.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any

from ..errors import HarnessError, InputError
from ..results import TaskResult
from .checks import abandoned, check_store, one_line, refuse_foreign
from .encoding import (
    OUTPUT_LIMIT,
    TEXT_LIMIT,
    TRUNCATED_KEY,
    as_float,
    clip,
    dumps,
    encode_output,
    loads,
    now,
    redact,
)
from .migrations import applied_migrations, migrate
from .result_rows import INSERT_RESULT, insert_rows, result_row

__all__ = ["EVALUATION_STATUSES", "OUTPUT_LIMIT", "TEXT_LIMIT", "TRUNCATED_KEY", "Store", "encode_output"]

BUSY_TIMEOUT_MS = 10_000
LOCK_POLL_MS = 200  # one SQLite-level wait for a lock; longer waits are a loop of these
EVALUATION_STATUSES = ("running", "finished", "interrupted", "failed")

_SELECT_RESULTS = (
    "SELECT skill_id, task_id, run_id, status, score, latency_ms, error, scorer_type, reason, output_json,"
    " usage_json, attempts, finished_at FROM task_results WHERE evaluation_id = ?")


def _enable_wal(db: sqlite3.Connection) -> None:
    """Switch a file to WAL (it stays so; where WAL is unsupported the mode silently stays as it was).

    Switching needs an exclusive lock and SQLite answers "database is locked" at once, without waiting
    for busy_timeout, when another process is switching the same new file: so wait and retry here.
    """
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            db.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.001 + time.perf_counter_ns() % 20_000 / 1e6)  # 1-21 ms, jittered


class Store:
    """The SQLite results store. Use :meth:`open`; close it, or use it as a context manager."""

    def __init__(self, db: sqlite3.Connection, path: Path) -> None:
        self._db = db
        self.path = path
        self.busy_timeout_ms = BUSY_TIMEOUT_MS
        self._lock = threading.Lock()
        self._give_up = threading.Event()  # set by stop_waiting(): a wait for another process's lock ends

    # ---- lifetime -------------------------------------------------------------------------------

    @staticmethod
    def check(path: Path | str) -> None:
        """Check, writing nothing, that ``path`` is a store or can become one: HarnessError if not."""
        check_store(path)

    @classmethod
    def open(cls, path: Path | str, *, busy_timeout_ms: int = BUSY_TIMEOUT_MS) -> Store:
        """Open (creating it and its folder if needed) and migrate the store at ``path``. Another program's
        SQLite file is refused, not changed. ``busy_timeout_ms``: how long to wait for another process's lock."""
        path = Path(path)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise HarnessError(f"results store {path}: cannot create its folder {path.parent} "
                               f"({exc.strerror or exc})") from exc
        if path.is_dir():
            raise HarnessError(f"results store {path}: is a folder, expected a database file")
        try:
            db = sqlite3.connect(path, timeout=busy_timeout_ms / 1000, isolation_level=None,
                                 check_same_thread=False)
        except sqlite3.Error as exc:
            raise HarnessError(f"results store {path}: cannot open ({one_line(exc)})") from exc
        try:
            db.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
            refuse_foreign(db, path)
            _enable_wal(db)
            db.execute("PRAGMA synchronous = NORMAL")
            db.execute("PRAGMA foreign_keys = ON")
            migrate(db)
        except sqlite3.Error as exc:
            db.close()
            raise HarnessError(f"results store {path}: cannot open ({one_line(exc)})") from exc
        except BaseException:
            db.close()
            raise
        store = cls(db, path)
        store.busy_timeout_ms = busy_timeout_ms
        return store

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Store({str(self.path)!r})"

    # ---- plumbing -------------------------------------------------------------------------------

    def _error(self, exc: sqlite3.Error, doing: str) -> HarnessError:
        text = one_line(exc)
        if "locked" in text or "busy" in text:
            text += f" (another process held the store for over {self.busy_timeout_ms / 1000:g} s)"
        return HarnessError(f"results store {self.path}: {doing} failed: {text}")

    @contextmanager
    def _read(self, doing: str) -> Iterator[sqlite3.Connection]:
        with self._lock:
            try:
                yield self._db
            except sqlite3.Error as exc:
                raise self._error(exc, doing) from exc

    def _begin(self) -> None:
        """BEGIN IMMEDIATE, waiting up to ``busy_timeout_ms`` for another process's lock in steps of
        ``LOCK_POLL_MS``, so that :meth:`stop_waiting` (Ctrl-C, from another thread) ends the wait at once
        rather than after SQLite's whole busy timeout."""
        deadline = time.monotonic() + self.busy_timeout_ms / 1000
        self._db.execute(f"PRAGMA busy_timeout = {min(int(self.busy_timeout_ms), LOCK_POLL_MS)}")
        try:
            while True:
                try:
                    self._db.execute("BEGIN IMMEDIATE")
                    return
                except sqlite3.OperationalError as exc:
                    text = str(exc)
                    if ("locked" not in text and "busy" not in text) or time.monotonic() >= deadline:
                        raise
                    if self._give_up.is_set():
                        raise sqlite3.OperationalError("stopped waiting for another process's lock") from None
        finally:
            self._db.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout_ms)}")

    def stop_waiting(self) -> None:
        """From any thread: a call waiting for another process's lock gives up (within ``LOCK_POLL_MS``) with
        a HarnessError; later calls do not wait."""
        self._give_up.set()

    @contextmanager
    def _write(self, doing: str) -> Iterator[sqlite3.Connection]:
        """One transaction, holding the write lock from its start (no upgrade deadlocks)."""
        with self._lock:
            try:
                self._begin()
                try:
                    yield self._db
                except BaseException:
                    if self._db.in_transaction:
                        self._db.execute("ROLLBACK")
                    raise
                self._db.execute("COMMIT")
            except sqlite3.Error as exc:
                raise self._error(exc, doing) from exc

    # ---- writing --------------------------------------------------------------------------------

    def schema_version(self) -> int:
        """The number of the newest applied migration (``m001_initial`` -> 1)."""
        with self._read("reading the schema version") as db:
            names = applied_migrations(db)
        return max((int(name[1:4]) for name in names), default=0)

    def begin_evaluation(self, *, benchmark_id: str | None, benchmark_version: str | None,
                         config: Mapping[str, Any], tool_version: str | None) -> str:
        """Record a new running evaluation; returns its id (32 hex digits).

        ``config`` holds the run settings; values under secret-looking keys are stored as ``[redacted]``.
        """
        import socket
        import uuid  # lazily: it is slow to import and needed once per run

        evaluation_id = uuid.uuid4().hex
        with self._write("starting an evaluation") as db:
            db.execute(
                "INSERT INTO evaluations (id, started_at, status, benchmark_id, benchmark_version,"
                " config_json, tool_version, pid, host) VALUES (?, ?, 'running', ?, ?, ?, ?, ?, ?)",
                (evaluation_id, now(), benchmark_id, benchmark_version, dumps(redact(config)),
                 tool_version, os.getpid(), socket.gethostname()))
        return evaluation_id

    def add_result(self, evaluation_id: str, result: TaskResult) -> None:
        """Write and commit one finished task result: it is in the file when this returns."""
        row = result_row(evaluation_id, result, now())
        try:
            with self._lock:
                self._db.execute(INSERT_RESULT, row)  # autocommit: one statement, one transaction
        except sqlite3.IntegrityError as exc:
            raise HarnessError(f"results store {self.path}: no evaluation {evaluation_id!r} "
                               f"to add a result to") from exc
        except sqlite3.Error as exc:
            raise self._error(exc, "saving a task result") from exc

    def add_results(self, evaluation_id: str, results: Iterable[TaskResult]) -> None:
        """Write and commit several results in one transaction (all or none): for callers that batch. They share
        one ``finished_at``: the time they were written."""
        written = now()
        rows = [result_row(evaluation_id, result, written) for result in results]
        try:
            with self._write("saving task results") as db:
                insert_rows(db, rows)
        except HarnessError as exc:
            if isinstance(exc.__cause__, sqlite3.IntegrityError):
                raise HarnessError(f"results store {self.path}: no evaluation {evaluation_id!r} "
                                   f"to add results to") from exc.__cause__
            raise

    def finish_evaluation(self, evaluation_id: str, *, status: str,
                          reports: list[dict[str, Any]], error: str | None = None) -> None:
        """Mark the evaluation ``finished``/``interrupted``/``failed`` (with ``error``, why) and save one report
        per skill.

        The reports are SkillCompletionReport dicts; they are stored without ``taskResults`` (the
        results are rows already; :meth:`get_reports` puts them back).
        """
        if status not in EVALUATION_STATUSES[1:]:
            raise ValueError(f"status must be one of {EVALUATION_STATUSES[1:]}, not {status!r}")
        with self._write("finishing an evaluation") as db:
            cur = db.execute("UPDATE evaluations SET status = ?, finished_at = ?, error = ? WHERE id = ?",
                             (status, now(), clip(error), evaluation_id))
            if cur.rowcount == 0:
                raise HarnessError(f"results store {self.path}: no evaluation {evaluation_id!r} to finish")
            for report in reports:
                summary = report.get("summary") or {}
                stored = {key: value for key, value in report.items() if key != "taskResults"}
                db.execute(
                    "INSERT OR REPLACE INTO skill_reports (evaluation_id, skill_id, skill_version,"
                    " report_json, completion_rate, composite_score) VALUES (?, ?, ?, ?, ?, ?)",
                    (evaluation_id, str(report.get("skillId")), report.get("skillVersion"), dumps(stored),
                     as_float(summary.get("completionRate")), as_float(summary.get("compositeScore"))))

    # ---- reading --------------------------------------------------------------------------------

    def _evaluations(self, where: str, params: tuple[Any, ...], limit: int) -> list[dict[str, Any]]:
        with self._read("listing evaluations") as db:
            rows = db.execute(
                "SELECT id, started_at, finished_at, status, benchmark_id, benchmark_version, config_json,"
                f" tool_version, error, pid, host FROM evaluations {where}"
                " ORDER BY started_at DESC, rowid DESC LIMIT ?", (*params, limit)).fetchall()
            out = [{"id": r[0], "started_at": r[1], "finished_at": r[2], "status": r[3],
                    "benchmark_id": r[4], "benchmark_version": r[5], "config": loads(r[6]),
                    "tool_version": r[7], "error": r[8], "result_count": 0, "passed": 0, "skills": []}
                   for r in rows]
            for item, row in zip(out, rows, strict=True):
                if item["status"] == "running" and abandoned(row[9], row[10]):
                    item["status"] = "failed"
                    item["error"] = "the process running it ended before finishing it"
            by_id = {item["id"]: item for item in out}
            if by_id:
                marks = ", ".join("?" * len(by_id))
                counts = db.execute(
                    "SELECT evaluation_id, skill_id, COUNT(*), SUM(status = 'pass') FROM task_results"
                    f" WHERE evaluation_id IN ({marks}) GROUP BY evaluation_id, skill_id ORDER BY MIN(id)",
                    tuple(by_id)).fetchall()
                for evaluation_id, skill_id, count, passed in counts:
                    item = by_id[evaluation_id]
                    item["result_count"] += count
                    item["passed"] += passed
                    item["skills"].append(skill_id)
        return out

    def list_evaluations(self, limit: int = 20) -> list[dict[str, Any]]:
        """The newest evaluations first: id, started_at, finished_at, status, benchmark_id,
        benchmark_version, config, tool_version, error, result_count, passed, skills.

        An evaluation still marked running whose process is gone (on this machine) is shown as failed."""
        return self._evaluations("", (), limit)

    def get_evaluation(self, evaluation_id: str) -> dict[str, Any] | None:
        """One evaluation in the shape of :meth:`list_evaluations`, or None."""
        found = self._evaluations("WHERE id = ?", (evaluation_id,), 1)
        return found[0] if found else None

    def resolve_evaluation(self, ref: str) -> str:
        """A full evaluation id from a user's reference: a full id, a unique prefix, or ``latest``."""
        ref = ref.strip().lower()
        with self._read("looking up an evaluation") as db:
            if ref == "latest":
                rows = db.execute("SELECT id FROM evaluations ORDER BY started_at DESC, rowid DESC LIMIT 1"
                                  ).fetchall()
                if not rows:
                    raise InputError("the results store holds no evaluations yet", file=str(self.path))
                return str(rows[0][0])
            if not re.fullmatch(r"[0-9a-f]{1,32}", ref):
                raise InputError(f"{ref!r} is not an evaluation id", file=str(self.path),
                                 hint="give an id, a prefix of one, or 'latest'")
            rows = db.execute("SELECT id FROM evaluations WHERE id LIKE ? LIMIT 2", (ref + "%",)).fetchall()
        if not rows:
            raise InputError(f"no evaluation with id {ref!r}", file=str(self.path))
        if len(rows) > 1:
            raise InputError(f"more than one evaluation id starts with {ref!r}", file=str(self.path),
                             hint="give more characters of the id")
        return str(rows[0][0])

    def get_results(self, evaluation_id: str, skill_id: str | None = None) -> list[dict[str, Any]]:
        """The evaluation's task results in the order they finished, as ``TaskResult.to_json()`` dicts
        plus ``finishedAt``. Truncated outputs come back as their ``$truncated`` marker."""
        sql, params = _SELECT_RESULTS, [evaluation_id]
        if skill_id is not None:
            sql, params = sql + " AND skill_id = ?", [evaluation_id, skill_id]
        with self._read("reading task results") as db:
            rows = db.execute(sql + " ORDER BY id", params).fetchall()
        return [{"taskId": r[1], "skillId": r[0], "runId": r[2], "status": r[3], "score": r[4],
                 "latencyMs": r[5], "output": loads(r[9]), "error": r[6], "scorerType": r[7],
                 "reason": r[8], "usage": loads(r[10]), "attempts": r[11], "finishedAt": r[12]}
                for r in rows]

    def get_reports(self, evaluation_id: str, *, with_results: bool = True) -> list[dict[str, Any]]:
        """The saved SkillCompletionReports of a finished evaluation, ``taskResults`` put back."""
        with self._read("reading skill reports") as db:
            rows = db.execute("SELECT skill_id, report_json FROM skill_reports WHERE evaluation_id = ?"
                              " ORDER BY rowid", (evaluation_id,)).fetchall()
        reports = []
        for skill_id, text in rows:
            report = json.loads(text)
            if with_results:
                report["taskResults"] = [
                    {k: v for k, v in result.items() if k != "finishedAt"}
                    for result in self.get_results(evaluation_id, skill_id)]
            reports.append(report)
        return reports

    def skill_ids(self) -> list[str]:
        """Every skill id some evaluation reported, sorted."""
        with self._read("reading skill ids") as db:
            return [row[0] for row in db.execute("SELECT DISTINCT skill_id FROM skill_reports ORDER BY skill_id")]

    def skill_history(self, skill_id: str, *, benchmark_id: str | None = None,
                      limit: int | None = None) -> list[dict[str, Any]]:
        """The skill's completion rate and composite score per evaluation that reported it, newest first:
        evaluation_id, started_at, finished_at, status, benchmark_id, benchmark_version, skill_version,
        completion_rate, composite_score."""
        sql = ("SELECT e.id, e.started_at, e.finished_at, e.status, e.benchmark_id, e.benchmark_version,"
               " s.skill_version, s.completion_rate, s.composite_score FROM skill_reports s"
               " JOIN evaluations e ON e.id = s.evaluation_id WHERE s.skill_id = ?")
        params: tuple[Any, ...] = (skill_id,)
        if benchmark_id is not None:
            sql, params = sql + " AND e.benchmark_id = ?", (*params, benchmark_id)
        sql += " ORDER BY e.started_at DESC, e.rowid DESC LIMIT ?"
        with self._read("reading skill history") as db:
            rows = db.execute(sql, (*params, -1 if limit is None else limit)).fetchall()
        keys = ("evaluation_id", "started_at", "finished_at", "status", "benchmark_id", "benchmark_version",
                "skill_version", "completion_rate", "composite_score")
        return [dict(zip(keys, row, strict=True)) for row in rows]
