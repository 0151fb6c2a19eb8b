"""ToolBench single-tool (G1) queries -> a benchmark.

A record (``G1_query.json``, an array, or JSON Lines) has ``query``, ``query_id``, ``api_list`` (each with
``tool_name``, ``api_name``, ``api_description``, ``required_parameters``, ``optional_parameters``) and
``relevant APIs`` (``[[tool_name, api_name], ...]``). The skill gets ``{"query", "apis"}``; ToolBench judges
answers with a model, which a local benchmark cannot do, so a task here passes when the answer names every
relevant API (``contains``, case-insensitive): it measures choosing the right tools.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import InputError
from ._jsonl import read_records

__all__ = ["TOOLBENCH_ID", "import_toolbench"]

TOOLBENCH_ID = "toolbench-lite"


def _api(entry: Any) -> dict[str, Any]:
    entry = entry if isinstance(entry, dict) else {}
    return {"tool": entry.get("tool_name"), "api": entry.get("api_name"), "category": entry.get("category_name"),
            "description": entry.get("api_description"), "method": entry.get("method"),
            "requiredParameters": entry.get("required_parameters") or [],
            "optionalParameters": entry.get("optional_parameters") or []}


def import_toolbench(path: Path, *, limit: int | None = None,
                     benchmark_id: str = TOOLBENCH_ID) -> tuple[dict[str, Any], int]:
    """``(benchmark dict, records skipped)``: records without relevant APIs are skipped."""
    path = Path(path)
    tasks: list[dict[str, Any]] = []
    skipped = 0
    seen: set[str] = set()
    for where, record in read_records(path):
        if not isinstance(record.get("query"), str) or "query_id" not in record:
            raise InputError("record needs 'query' (text) and 'query_id'", file=str(path), field=where,
                             hint="is this a ToolBench G1 query file?")
        relevant = record.get("relevant APIs") or []
        names = list(dict.fromkeys(str(pair[1]) for pair in relevant
                                   if isinstance(pair, list | tuple) and len(pair) >= 2))
        if not names:
            skipped += 1
            continue
        task_id = f"q{record['query_id']}"
        if task_id in seen:
            raise InputError(f"query_id {record['query_id']!r} appears twice", file=str(path), field=where)
        seen.add(task_id)
        apis = [_api(entry) for entry in record.get("api_list") or []]
        categories = sorted({str(a["category"]) for a in apis if a["category"]})
        query = " ".join(record["query"].split())
        tasks.append({"id": task_id, "description": query if len(query) <= 100 else query[:99] + "…",
                      "inputData": {"query": record["query"], "apis": apis},
                      "expectedOutput": {"type": "contains", "keywords": names},
                      "evaluator": {"type": "contains", "caseSensitive": False},
                      "tags": ["toolbench", "G1", *categories]})
        if limit is not None and len(tasks) >= limit:
            break
    if not tasks:
        raise InputError("no query with relevant APIs", file=str(path), hint="is this a ToolBench G1 query file?")
    benchmark = {"id": benchmark_id, "name": "ToolBench G1 (single-tool) queries", "version": "1.0.0",
                 "domain": "tool-use", "scoringMethod": "mean",
                 "metadata": {"source": path.name, "scoring": "the answer names every relevant API"},
                 "tasks": tasks}
    return benchmark, skipped
