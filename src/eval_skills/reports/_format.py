"""Display helpers shared by the report formats: numbers, text cuts and the rows every format shows.

Everything in a report may come from the skill under test or from a file someone else wrote, so every
reader here is tolerant: a missing or odd value renders as ``n/a``, never an exception.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

OUTPUT_PREVIEW = 300  # characters of a task's output JSON shown in HTML
CELL_LIMIT = 300  # characters of a reason or error shown in a Markdown cell
HTML_TEXT_LIMIT = 2000  # characters of a reason or error shown in HTML


def num(value: Any) -> float | None:
    """A finite number as a float, else None (booleans, text, NaN, infinities, integers too big for a float)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def pct(value: Any) -> str:
    n = num(value)
    return "n/a" if n is None else f"{n * 100:.1f}%"


def dec(value: Any, places: int = 4) -> str:
    n = num(value)
    return "n/a" if n is None else f"{n:.{places}f}"


def ms(value: Any) -> str:
    n = num(value)
    return "n/a" if n is None else f"{n:.1f}"


def integer(value: Any) -> str:
    n = num(value)
    return "n/a" if n is None else f"{int(n):,}"


def text(value: Any) -> str:
    return "" if value is None else str(value)


def cut(value: str, limit: int) -> str:
    return value if len(value) <= limit else value[:limit] + f"… ({len(value) - limit} more characters)"


def compact_json(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    except (TypeError, ValueError):
        return json.dumps(repr(value), ensure_ascii=False)


def mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def tasks(report: dict[str, Any]) -> list[dict[str, Any]]:
    results = report.get("taskResults")
    return [r for r in results if isinstance(r, dict)] if isinstance(results, list) else []


def input_warning_note(report: dict[str, Any], limit: int = 10) -> str:
    """Which tasks' inputs did not match the skill's ``inputSchema`` and were sent anyway ("" when none)."""
    warned = [t for t in tasks(report) if t.get("warnings")]
    count = len(warned) or int(num(mapping(report.get("summary")).get("inputWarnings")) or 0)
    if not count:
        return ""
    ids = list(dict.fromkeys(text(t.get("taskId")) for t in warned))
    named = ", ".join(ids[:limit]) + (f" and {len(ids) - limit} more" if len(ids) > limit else "")
    return (f"{count} task input(s) did not match the skill's inputSchema and were sent anyway"
            + (f" (tasks {named})." if named else "."))


def summary_row(report: dict[str, Any]) -> dict[str, str]:
    """The display strings of one skill's headline numbers (shared by Markdown and HTML)."""
    summary, latency = mapping(report.get("summary")), mapping(report.get("latency"))
    tokens = report.get("tokenCost") or summary.get("tokenCost")  # older files kept it in summary
    consistency = summary.get("consistencyScore")
    return {
        "skill": text(report.get("skillId")), "version": text(report.get("skillVersion")),
        "name": text(report.get("skillName")),
        "completion": pct(summary.get("completionRate")), "partial": pct(summary.get("partialScore")),
        "error_rate": pct(summary.get("errorRate")),
        "consistency": "n/a" if consistency is None else pct(consistency),
        "p50": ms(latency.get("p50Ms")), "p95": ms(latency.get("p95Ms")), "p99": ms(latency.get("p99Ms")),
        "composite": dec(summary.get("compositeScore")),
        "tokens": integer(tokens.get("totalTokens")) if isinstance(tokens, dict) else "n/a",
        "total": integer(summary.get("totalTasks")), "passed": integer(summary.get("passed")),
        "failed": integer(summary.get("failed")), "errors": integer(summary.get("errors")),
        "timeouts": integer(summary.get("timeouts")), "runs": integer(report.get("runs")),
        "input_note": input_warning_note(report),
    }


def header(reports: Sequence[dict[str, Any]]) -> dict[str, str]:
    benchmarks = dict.fromkeys(
        " ".join(p for p in (text(r.get("benchmarkId")), text(r.get("benchmarkVersion"))) if p)
        for r in reports)
    stamps = [text(r.get("timestamp")) for r in reports if r.get("timestamp")]
    return {"benchmark": ", ".join(b for b in benchmarks if b) or "n/a",
            "generated": max(stamps) if stamps else "n/a", "skills": str(len(reports))}


def tag_breakdown(task_results: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per tag of the tasks (``tags`` of each task result): results, passed, completion rate and partial
    score (mean score), sorted by tag. A result with several tags counts under each; untagged ones under none.
    """
    groups: dict[str, list[dict[str, Any]]] = {}
    for result in task_results:
        tags = result.get("tags")
        names = [str(t) for t in tags if isinstance(t, str | int | float)] if isinstance(tags, list) else []
        for tag in dict.fromkeys(names):  # a tag that is not text (a list, an object) is left out
            groups.setdefault(tag, []).append(result)
    rows = []
    for tag in sorted(groups):
        items = groups[tag]
        passed = sum(1 for r in items if r.get("status") == "pass")
        scores = [num(r.get("score")) or 0.0 for r in items]
        rows.append({"tag": tag, "total": len(items), "passed": passed,
                     "completionRate": round(passed / len(items), 4),
                     "partialScore": round(sum(scores) / len(items), 4)})
    return rows


def tag_rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    """The report's ``tagBreakdown``, else the breakdown computed from its task results' ``tags``."""
    given = report.get("tagBreakdown")
    if isinstance(given, list):
        return [row for row in given if isinstance(row, dict) and "tag" in row]
    return tag_breakdown(tasks(report))
