"""The Routing tab: precision, recall, F1 and accuracy overall and per invocation type, with the counts they
come from and why a metric is undefined; per query its trigger rate against the expectation (with the Wilson
interval when there were several runs), triggers over the runs without error, and each run: triggered or
not, an error and its reason, the skills it invoked, and its transcript, loaded when unfolded.

Runs are those ``routing_results.json`` records (``run_results``); a file without them (written by hand, or
by an older version) has its runs found as ``query-<i>/run-<k>/`` folders. Transcript paths from the file
are untrusted: one that leaves the ``routing-<n>`` folder is not read.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..formats.routing_results import RoutingQueryResult, RoutingResults, RoutingRunRecord, routing_run_dir
from .iteration import IterationData
from .render import templates

__all__ = ["DETAIL_PREFIX", "routing_context", "routing_detail", "routing_detail_refs", "routing_results"]

ROUTING_FILE = "routing_results.json"
TRANSCRIPT_EVENTS = 200  # events shown per routing run
BAR_W = 160
DETAIL_PREFIX = "routing-run/"  # a run's transcript: routing-run/<query index>/<run number>
_RUN = re.compile(r"run-(\d+)")
_DETAIL = re.compile(r"(\d{1,9})/(\d{1,9})")
FACTS = (("skill_name", "skill"), ("agent", "agent"), ("model", "model"), ("runs", "runs per query"),
         ("distractors", "distractor skills"), ("concurrency", "concurrency"), ("timeout_s", "timeout (s)"),
         ("max_turns", "max turns"), ("started_at", "started"), ("finished_at", "finished"),
         ("planned_runs", "runs planned"), ("finished_runs", "runs finished"), ("error_runs", "runs in error"),
         ("skill_path", "skill path"), ("routing_file", "routing file"), ("store_id", "store id"),
         ("tool_version", "eval-skills"))


def routing_results(src: IterationData) -> tuple[RoutingResults | None, str | None]:
    folder = src.ws.routing_path
    if folder is None:
        return None, None
    results, problem = src.cached(folder / ROUTING_FILE, RoutingResults)
    return results, problem


def _show(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def _facts(metadata: dict[str, Any]) -> list[tuple[str, str]]:
    facts = []
    for key, label in FACTS:
        if key not in metadata:
            continue
        value = metadata[key]
        if key == "distractors":
            names = [str(d.get("name", "?")) if isinstance(d, dict) else str(d)
                     for d in (value if isinstance(value, list) else [])]
            value = ", ".join(names) or "none"
        elif isinstance(value, dict | list):
            continue
        facts.append((label, _show(value)))
    shown = {key for key, _ in FACTS} | {"description", "threshold", "interrupted", "in_progress"}
    facts += [(key, _show(value)) for key, value in metadata.items()
              if key not in shown and (isinstance(value, str | int | float | bool) or value is None)]
    return facts


def _transcript_path(folder: Path, query: int, run: RoutingRunRecord | None, number: int) -> Path | None:
    """The run's transcript: the path the results file records (when it stays in the folder), else the
    layout's ``query-<i>/run-<k>/transcript.jsonl``. None when it leaves the folder or is not there."""
    path = routing_run_dir(folder, query, number) / "transcript.jsonl"
    if run is not None and run.transcript:
        given = folder / run.transcript
        if "\\" in run.transcript or not given.resolve().is_relative_to(folder.resolve()):
            return None
        path = given
    return path if path.is_file() else None


def _runs(folder: Path, query: RoutingQueryResult) -> list[dict[str, Any]]:
    if query.run_results:
        records: list[tuple[int, RoutingRunRecord | None]] = [(r.run, r) for r in query.run_results]
    else:
        found = []
        base = folder / f"query-{query.index}"
        if base.is_dir() and not base.is_symlink():
            found = sorted(int(m.group(1)) for p in base.iterdir()
                           if p.is_dir() and not p.is_symlink() and (m := _RUN.fullmatch(p.name)))
        records = [(k, None) for k in found]
    runs = []
    for number, record in sorted(records, key=lambda r: r[0]):
        if record is None:
            state, label = "unknown", "transcript only"
        elif record.triggered is None:
            state, label = "error", "timed out" if record.status == "timeout" else "error"
        else:
            state, label = ("triggered", "triggered") if record.triggered else ("not", "not triggered")
        runs.append({"number": number, "record": record, "state": state, "label": label,
                     "transcript": _transcript_path(folder, query.index, record, number) is not None,
                     "ref": f"{DETAIL_PREFIX}{query.index}/{number}"})
    return runs


def routing_context(src: IterationData) -> dict[str, Any]:
    folder = src.ws.routing_path
    assert folder is not None
    results, problem = routing_results(src)
    problems = [problem] if problem else []
    if results is None and problem is None:
        problems.append(f"{src.read.shown(folder / ROUTING_FILE)}: not found (the routing test wrote no results "
                        "yet: it started less than a second ago, or stopped before its first run finished)")
    queries = []
    for query in results.queries if results else []:
        rate = query.trigger_rate
        ci = query.trigger_rate_ci if query.trigger_rate_ci and len(query.trigger_rate_ci) == 2 else None
        queries.append({
            "q": query, "index": query.index, "runs": _runs(folder, query), "scored": query.runs - query.errors,
            "bar": None if rate is None else round(max(0.0, min(1.0, rate)) * BAR_W, 1),
            "ci": None if ci is None else [round(max(0.0, min(1.0, v)) * BAR_W, 1) for v in ci],
            "ci_values": ci,
        })
    metrics = results.metrics if results else None
    by_type = sorted((metrics.by_invocation_type or {}).items()) if metrics else []
    meta = results.metadata if results else {}
    return {"results": results, "problems": problems, "queries": queries, "metrics": metrics, "by_type": by_type,
            "bar_w": BAR_W, "folder": src.read.shown(folder), "facts": _facts(meta),
            "description": meta.get("description") if isinstance(meta.get("description"), str) else None,
            "in_progress": meta.get("in_progress") is True, "interrupted": meta.get("interrupted") is True,
            "planned": meta.get("planned_runs"), "finished": meta.get("finished_runs")}


def routing_detail_refs(src: IterationData) -> list[str]:
    """Every run's detail reference (for a static page, which holds them all)."""
    folder = src.ws.routing_path
    results, _ = routing_results(src)
    if folder is None or results is None:
        return []
    return [run["ref"] for query in results.queries for run in _runs(folder, query) if run["transcript"]]


def routing_detail(src: IterationData, ref: str) -> str | None:
    """One run's transcript as HTML (``ref``: ``<query index>/<run number>``), None when there is no such run."""
    folder = src.ws.routing_path
    match = _DETAIL.fullmatch(ref)
    results, _ = routing_results(src)
    if folder is None or match is None or results is None:
        return None
    index, number = int(match.group(1)), int(match.group(2))
    query = next((q for q in results.queries if q.index == index), None)
    if query is None:
        return None
    record = next((r for r in query.run_results if r.run == number), None)
    if query.run_results and record is None:
        return None
    path = _transcript_path(folder, index, record, number)
    if path is None:
        return None
    events, problems = src.read.transcript(path, TRANSCRIPT_EVENTS)
    return str(templates().get_template("routing_run.html.j2").render(events=events, problems=problems))
