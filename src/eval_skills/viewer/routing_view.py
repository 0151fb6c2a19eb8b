"""The Routing tab: per query its trigger rate against the expectation (with the Wilson interval when
there were several runs), precision, recall, F1 and accuracy overall and per invocation type, and each
run's transcript folded."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..formats.workspace import RoutingResults, routing_run_dir

if TYPE_CHECKING:
    from .paired_view import WorkspaceSource

__all__ = ["routing_context"]

ROUTING_FILE = "routing_results.json"
TRANSCRIPT_EVENTS = 200  # events shown per routing run
BAR_W = 160


def routing_context(src: WorkspaceSource) -> dict[str, Any]:
    folder = src.ws.routing_path
    assert folder is not None
    results, problem = src.read.model(folder / ROUTING_FILE, RoutingResults)
    problems = [problem] if problem else []
    if results is None and problem is None:
        problems.append(f"{src.read.shown(folder / ROUTING_FILE)}: not found (the routing run did not finish?)")
    queries = []
    for query in results.queries if results else []:
        index = query.index
        runs = []
        for k in range(1, max(query.runs, 0) + 1):
            path = routing_run_dir(folder, index, k) / "transcript.jsonl"
            if path.exists():
                events, found = src.read.transcript(path, TRANSCRIPT_EVENTS)
                runs.append({"number": k, "events": events, "problems": found})
        rate = query.trigger_rate
        ci = query.trigger_rate_ci if query.trigger_rate_ci and len(query.trigger_rate_ci) == 2 else None
        queries.append({
            "q": query, "index": index, "runs": runs,
            "bar": None if rate is None else round(max(0.0, min(1.0, rate)) * BAR_W, 1),
            "ci": None if ci is None else [round(max(0.0, min(1.0, v)) * BAR_W, 1) for v in ci],
            "ci_values": ci,
        })
    metrics = results.metrics if results else None
    by_type = sorted((metrics.by_invocation_type or {}).items()) if metrics else []
    return {"results": results, "problems": problems, "queries": queries, "metrics": metrics, "by_type": by_type,
            "bar_w": BAR_W, "folder": src.read.shown(folder),
            "facts": [(k, v) for k, v in (results.metadata.items() if results else [])
                      if isinstance(v, str | int | float | bool) or v is None]}
