"""Routing tests in the results store (tables of migration ``m005_routing_runs``).

``routing_tests`` holds one row per ``eval-skills routing`` invocation (its settings without secrets, its
status and, once finished, its overall metrics); ``routing_runs`` one row per finished agent run, written and
committed as it finishes, so an interrupted test keeps every run that finished.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import HarnessError
from .encoding import clip as _clip
from .encoding import dumps as _dumps
from .encoding import now as _now
from .encoding import redact as _redact
from .sqlite import EVALUATION_STATUSES, Store

__all__ = ["RoutingRunRow", "add_routing_run", "begin_routing", "finish_routing", "get_routing_runs",
           "list_routing_tests"]


@dataclass(frozen=True)
class RoutingRunRow:
    """One finished run of one query."""

    query_index: int
    query: str
    should_trigger: bool
    invocation_type: str | None
    run_number: int
    status: str
    triggered: bool | None
    skills_invoked: Sequence[str] = ()
    error: str | None = None
    duration_s: float | None = None
    usage: Mapping[str, Any] | None = field(default=None)


def begin_routing(store: Store, *, skill_name: str, agent: str | None, model: str | None,
                  config: Mapping[str, Any], tool_version: str | None) -> str:
    """Record a new running routing test; returns its id (32 hex digits). Secret-looking config keys are
    stored as ``[redacted]``."""
    import uuid

    routing_id = uuid.uuid4().hex
    with store._write("starting a routing test") as db:
        db.execute("INSERT INTO routing_tests (id, started_at, status, skill_name, agent, model, config_json,"
                   " tool_version) VALUES (?, ?, 'running', ?, ?, ?, ?, ?)",
                   (routing_id, _now(), skill_name, agent, model, _dumps(_redact(config)), tool_version))
    return routing_id


def add_routing_run(store: Store, routing_id: str, row: RoutingRunRow) -> None:
    """Write and commit one finished run."""
    with store._write("saving a routing run") as db:
        db.execute(
            "INSERT INTO routing_runs (routing_id, query_index, query, should_trigger, invocation_type,"
            " run_number, status, triggered, skills_invoked_json, error, duration_s, usage_json, finished_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (routing_id, row.query_index, row.query, int(row.should_trigger), row.invocation_type, row.run_number,
             row.status, None if row.triggered is None else int(row.triggered), _dumps(list(row.skills_invoked)),
             _clip(row.error), row.duration_s, None if row.usage is None else _dumps(dict(row.usage)), _now()))


def finish_routing(store: Store, routing_id: str, *, status: str, metrics: Mapping[str, Any] | None,
                   results_path: str | None) -> None:
    """Mark the test ``finished``/``interrupted``/``failed`` with its overall metrics."""
    if status not in EVALUATION_STATUSES[1:]:
        raise ValueError(f"status must be one of {EVALUATION_STATUSES[1:]}, not {status!r}")
    metrics = metrics or {}
    with store._write("finishing a routing test") as db:
        cur = db.execute("UPDATE routing_tests SET status = ?, finished_at = ?, metrics_json = ?, f1 = ?,"
                         " accuracy = ?, results_path = ? WHERE id = ?",
                         (status, _now(), _dumps(dict(metrics)) if metrics else None, metrics.get("f1"),
                          metrics.get("accuracy"), results_path, routing_id))
        if cur.rowcount == 0:
            raise HarnessError(f"results store {store.path}: no routing test {routing_id!r} to finish")


def list_routing_tests(store: Store, skill_name: str | None = None, limit: int = 20) -> list[dict[str, Any]]:
    """The newest routing tests first: id, started_at, finished_at, status, skill_name, agent, model, config,
    metrics, f1, accuracy, results_path, tool_version."""
    sql = ("SELECT id, started_at, finished_at, status, skill_name, agent, model, config_json, metrics_json, f1,"
           " accuracy, results_path, tool_version FROM routing_tests")
    params: tuple[Any, ...] = ()
    if skill_name is not None:
        sql, params = sql + " WHERE skill_name = ?", (skill_name,)
    with store._read("listing routing tests") as db:
        rows = db.execute(sql + " ORDER BY started_at DESC, rowid DESC LIMIT ?", (*params, limit)).fetchall()
    keys = ("id", "started_at", "finished_at", "status", "skill_name", "agent", "model", "config", "metrics",
            "f1", "accuracy", "results_path", "tool_version")
    out = [dict(zip(keys, row, strict=True)) for row in rows]
    for item in out:
        item["config"] = json.loads(item["config"])
        item["metrics"] = None if item["metrics"] is None else json.loads(item["metrics"])
    return out


def get_routing_runs(store: Store, routing_id: str) -> list[dict[str, Any]]:
    """The test's runs in the order they finished."""
    with store._read("reading routing runs") as db:
        rows = db.execute(
            "SELECT query_index, query, should_trigger, invocation_type, run_number, status, triggered,"
            " skills_invoked_json, error, duration_s, usage_json, finished_at FROM routing_runs"
            " WHERE routing_id = ? ORDER BY id", (routing_id,)).fetchall()
    return [{"query_index": r[0], "query": r[1], "should_trigger": bool(r[2]), "invocation_type": r[3],
             "run_number": r[4], "status": r[5], "triggered": None if r[6] is None else bool(r[6]),
             "skills_invoked": json.loads(r[7]), "error": r[8], "duration_s": r[9],
             "usage": None if r[10] is None else json.loads(r[10]), "finished_at": r[11]} for r in rows]
