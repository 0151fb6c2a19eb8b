"""The rows of paired runs in the results store (the tables of migration ``m004_paired_runs``).

``paired_iterations`` has one row per iteration (workspace folder and iteration number; a resumed iteration
keeps its row), ``paired_runs`` one row per finished agent run (its grade filled in once graded), and
``paired_verdicts`` one row per verdict: ``grade`` (the judge on a run), ``checks`` (the assertion engine on a
run) or ``compare`` (the blind A/B of a run pair). Each call is one committed transaction (``add_rows``: several
in one). Config values under secret-looking keys are never stored, and long texts are clipped like every other text
in the store.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .encoding import clip as _clip
from .encoding import dumps as _dumps
from .encoding import encode_output
from .encoding import now as _now
from .encoding import redact as _redact
from .sqlite import Store

__all__ = ["PairedStore", "Row"]

_RUN_COLUMNS = ("run_id", "eval_id", "arm", "run_number", "status", "error", "response", "duration_s",
                "total_tokens", "token_measurement", "usage_json", "tool_calls", "skills_invoked_json",
                "started_at", "finished_at")
_VERDICT_COLUMNS = ("subject", "kind", "backend", "model", "prompt_version", "verdict_json", "error", "attempts",
                    "cached", "duration_s", "finished_at")


_INSERT_RUN = (f"INSERT OR REPLACE INTO paired_runs (iteration_id, {', '.join(_RUN_COLUMNS)})"
               f" VALUES ({', '.join('?' * (len(_RUN_COLUMNS) + 1))})")
_INSERT_VERDICT = (f"INSERT OR REPLACE INTO paired_verdicts (iteration_id, {', '.join(_VERDICT_COLUMNS)})"
                   f" VALUES ({', '.join('?' * (len(_VERDICT_COLUMNS) + 1))})")


def _verdict_values(subject: str, kind: str, verdict: Any, judge: Mapping[str, Any] | None) -> tuple[Any, ...]:
    judge = judge or {}
    return (subject, kind, judge.get("backend"), judge.get("model"), judge.get("prompt_version"),
            None if verdict is None else encode_output(verdict), _clip(judge.get("error")), judge.get("attempts"),
            None if "cached" not in judge else int(bool(judge["cached"])), judge.get("duration_s"), _now())


def _add_run(db: Any, iteration_id: str, run: Mapping[str, Any]) -> None:
    usage = run.get("usage") or {}
    values = (run["run_id"], str(run["eval_id"]), run["arm"], run["run_number"], run["status"],
              _clip(run.get("error")), _clip(run.get("response")), run.get("duration_s"),
              usage.get("total_tokens"), usage.get("measurement"), _dumps(usage) if usage else None,
              run.get("tool_calls"), _dumps(run.get("skills_invoked") or []), run.get("started_at"), _now())
    db.execute(_INSERT_RUN, (iteration_id, *values))


def _add_grade(db: Any, iteration_id: str, run_id: str, summary: Mapping[str, Any],
               verdicts: Iterable[tuple[str, Any, Mapping[str, Any] | None]] = ()) -> None:
    db.execute("UPDATE paired_runs SET passed = ?, failed = ?, total = ?, ungraded = ?, pass_rate = ?"
               " WHERE iteration_id = ? AND run_id = ?",
               (summary.get("passed"), summary.get("failed"), summary.get("total"),
                summary.get("ungraded"), summary.get("pass_rate"), iteration_id, run_id))
    for kind, verdict, judge in verdicts:
        db.execute(_INSERT_VERDICT, (iteration_id, *_verdict_values(run_id, kind, verdict, judge)))


def _add_verdict(db: Any, iteration_id: str, subject: str, kind: str, verdict: Any, *,
                 judge: Mapping[str, Any] | None = None) -> None:
    db.execute(_INSERT_VERDICT, (iteration_id, *_verdict_values(subject, kind, verdict, judge)))


Row = tuple[str, tuple[Any, ...], dict[str, Any]]  # a write: "add_run", "add_grade" or "add_verdict", its arguments
_WRITES: dict[str, Callable[..., None]] = {"add_run": _add_run, "add_grade": _add_grade, "add_verdict": _add_verdict}


class PairedStore:
    """Paired-run rows in ``store`` (which stays owned, and closed, by the caller)."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def begin_iteration(self, *, workspace: str, iteration: int, skill_name: str, config: Mapping[str, Any],
                        tool_version: str | None) -> str:
        """The id of the iteration's row, created or (when resuming) marked running again."""
        with self.store._write("starting a paired iteration") as db:
            row = db.execute("SELECT id FROM paired_iterations WHERE workspace = ? AND iteration = ?",
                             (workspace, iteration)).fetchone()
            if row is not None:
                db.execute("UPDATE paired_iterations SET status = 'running', finished_at = NULL, config_json = ?"
                           " WHERE id = ?", (_dumps(_redact(config)), row[0]))
                return str(row[0])
            iteration_id = uuid.uuid4().hex
            db.execute("INSERT INTO paired_iterations (id, workspace, iteration, skill_name, started_at, status,"
                       " config_json, tool_version) VALUES (?, ?, ?, ?, ?, 'running', ?, ?)",
                       (iteration_id, workspace, iteration, skill_name, _now(), _dumps(_redact(config)),
                        tool_version))
        return iteration_id

    def add_run(self, iteration_id: str, run: Mapping[str, Any]) -> None:
        """A finished run: ``run_id``, ``eval_id``, ``arm``, ``run_number``, ``status``, ``error``, ``response``,
        ``duration_s``, ``usage`` (a dict), ``tool_calls``, ``skills_invoked``, ``started_at``."""
        self._apply(iteration_id, [("add_run", (run,), {})], "saving a paired run")

    def add_grade(self, iteration_id: str, run_id: str, summary: Mapping[str, Any],
                  verdicts: Iterable[tuple[str, Any, Mapping[str, Any] | None]] = ()) -> None:
        """The run's grading summary (``passed``, ``failed``, ``total``, ``ungraded``, ``pass_rate``) and the
        verdicts it came from, as ``(kind, verdict, judge)``, in one transaction."""
        self._apply(iteration_id, [("add_grade", (run_id, summary, verdicts), {})], "saving a paired run's grade")

    def add_verdict(self, iteration_id: str, subject: str, kind: str, verdict: Any, *,
                    judge: Mapping[str, Any] | None = None) -> None:
        """A verdict (``grade``, ``checks`` or ``compare``) on ``subject`` (a run id, or a run pair); ``judge``
        holds backend, model, prompt_version, attempts, cached, duration_s and error when a judge gave it."""
        self._apply(iteration_id, [("add_verdict", (subject, kind, verdict), {"judge": judge})], "saving a verdict")

    def add_rows(self, iteration_id: str, rows: Iterable[Row]) -> None:
        """Several of :meth:`add_run`, :meth:`add_grade` and :meth:`add_verdict` in one transaction, in order:
        each row is ``(method name, args, kwargs)`` (what :class:`~eval_skills.store.writer.GroupWriter`
        batches)."""
        self._apply(iteration_id, rows, "saving paired runs")

    def _apply(self, iteration_id: str, rows: Iterable[Row], what: str) -> None:
        with self.store._write(what) as db:
            for method, args, kwargs in rows:
                _WRITES[method](db, iteration_id, *args, **kwargs)

    def finish_iteration(self, iteration_id: str, *, status: str, summary: Mapping[str, Any]) -> None:
        """``finished``, ``interrupted`` or ``cut_short``, with the benchmark's summary (no runs)."""
        with self.store._write("finishing a paired iteration") as db:
            db.execute("UPDATE paired_iterations SET status = ?, finished_at = ?, summary_json = ? WHERE id = ?",
                       (status, _now(), _dumps(summary), iteration_id))

    # ---- reading ------------------------------------------------------------------------------------

    def iteration(self, workspace: str, iteration: int) -> dict[str, Any] | None:
        with self.store._read("reading a paired iteration") as db:
            row = db.execute("SELECT id, skill_name, started_at, finished_at, status, config_json, summary_json"
                             " FROM paired_iterations WHERE workspace = ? AND iteration = ?",
                             (workspace, iteration)).fetchone()
        if row is None:
            return None
        return {"id": row[0], "skill_name": row[1], "started_at": row[2], "finished_at": row[3], "status": row[4],
                "config": json.loads(row[5]), "summary": json.loads(row[6]) if row[6] else None}

    def latest_workspace(self) -> str | None:
        """The workspace folder of the newest paired iteration (None when there is none)."""
        with self.store._read("reading paired iterations") as db:
            row = db.execute("SELECT workspace FROM paired_iterations ORDER BY started_at DESC, rowid DESC LIMIT 1"
                             ).fetchone()
        return None if row is None else str(row[0])

    def runs(self, iteration_id: str) -> list[dict[str, Any]]:
        columns = (*_RUN_COLUMNS, "passed", "failed", "total", "ungraded", "pass_rate")
        with self.store._read("reading paired runs") as db:
            rows = db.execute(f"SELECT {', '.join(columns)} FROM paired_runs WHERE iteration_id = ?"
                              " ORDER BY finished_at, run_id", (iteration_id,)).fetchall()
        return [dict(zip(columns, row, strict=True)) for row in rows]

    def verdicts(self, iteration_id: str) -> list[dict[str, Any]]:
        with self.store._read("reading verdicts") as db:
            rows = db.execute(f"SELECT {', '.join(_VERDICT_COLUMNS)} FROM paired_verdicts WHERE iteration_id = ?"
                              " ORDER BY id", (iteration_id,)).fetchall()
        out = []
        for row in rows:
            item = dict(zip(_VERDICT_COLUMNS, row, strict=True))
            text = item.pop("verdict_json")
            item["verdict"] = json.loads(text) if text else None
            out.append(item)
        return out
