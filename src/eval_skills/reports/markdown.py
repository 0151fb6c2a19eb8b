"""The Markdown report: a summary table, per-tag results, then per skill the tasks that did not pass.

Cells escape ``|``, ``<``, ``>``, backslashes and newlines, so text from a skill cannot break the table or
inject HTML where Markdown is rendered.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from typing import Any

from ._format import CELL_LIMIT, cut, dec, header, mapping, num, pct, summary_row, tag_rows, tasks, text

__all__ = ["MARKDOWN_MAX_TASKS", "md_cell", "md_table", "render_markdown"]

MARKDOWN_MAX_TASKS = 200  # failing tasks listed per skill in Markdown; the rest are counted


def md_cell(value: Any, limit: int | None = None) -> str:
    """A value as the text of one Markdown table cell (escaped, one line)."""
    body = text(value).strip()
    if limit is not None:
        body = cut(body, limit)
    body = html.escape(body, quote=False).replace("\\", "\\\\").replace("|", "\\|")
    return re.sub(r"\r\n|\r|\n", "<br>", body)


def md_table(head: Sequence[str], align: str, rows: list[list[str]]) -> list[str]:
    marks = ["---:" if a == "r" else "---" for a in align]
    lines = ["| " + " | ".join(head) + " |", "| " + " | ".join(marks) + " |"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def _tag_section(reports: Sequence[dict[str, Any]]) -> list[str]:
    rows = [[md_cell(r.get("skillId")), md_cell(t.get("tag")), str(t.get("total", "n/a")),
             str(t.get("passed", "n/a")), pct(t.get("completionRate")), pct(t.get("partialScore"))]
            for r in reports for t in tag_rows(r)]
    if not rows:
        return []
    return ["", "## Results by tag", "",
            *md_table(["Skill", "Tag", "Tasks", "Passed", "Completion", "Partial"], "llrrrr", rows)]


def _notes(summary: dict[str, Any], input_note: str) -> list[str]:
    """The score's confidence interval and the tasks with input warnings, when a report has them."""
    notes = [input_note] if input_note else []
    ci = mapping(summary.get("confidenceInterval"))
    level, lower, upper = num(ci.get("level")), num(ci.get("lower")), num(ci.get("upper"))
    if level is not None and lower is not None and upper is not None:
        notes.insert(0, f"Mean score {level * 100:g}% confidence interval (bootstrap): {lower:.4f} to {upper:.4f}.")
    return [*notes, ""] if notes else []


def render_markdown(reports: Sequence[dict[str, Any]]) -> str:
    """A summary table of all skills, results by tag, then per skill the tasks that did not pass, with why."""
    head = header(reports)
    lines = ["# eval-skills Report", "",
             f"- Benchmark: {md_cell(head['benchmark'])}", f"- Generated: {md_cell(head['generated'])}",
             f"- Skills: {head['skills']}", "", "## Summary", ""]
    if not reports:
        return "\n".join([*lines, "No skills were evaluated.", ""])
    rows = []
    for report in reports:
        s = summary_row(report)
        rows.append([md_cell(s["skill"]), md_cell(s["version"]), s["completion"], s["partial"], s["error_rate"],
                     s["consistency"], s["p50"], s["p95"], s["p99"], s["composite"], s["tokens"]])
    lines += md_table(["Skill", "Version", "Completion", "Partial", "Error rate", "Consistency", "P50 ms",
                       "P95 ms", "P99 ms", "Composite", "Tokens"], "llrrrrrrrrr", rows)
    lines += _tag_section(reports)
    for report in reports:
        s = summary_row(report)
        lines += ["", f"## {md_cell(s['skill'])} {md_cell(s['version'])}".rstrip(), "",
                  f"{s['total']} tasks, {s['runs']} run(s): {s['passed']} passed, {s['failed']} failed, "
                  f"{s['errors']} errors, {s['timeouts']} timeouts.", ""]
        lines += _notes(mapping(report.get("summary")), md_cell(s["input_note"]))
        bad = [t for t in tasks(report) if t.get("status") != "pass"]
        if not bad:
            lines.append("All tasks passed." if tasks(report) else "No task results in this report.")
            continue
        rows = [[md_cell(t.get("taskId")), md_cell(t.get("runId")), md_cell(t.get("status")), dec(t.get("score")),
                 md_cell(t.get("reason"), CELL_LIMIT), md_cell(t.get("error"), CELL_LIMIT)]
                for t in bad[:MARKDOWN_MAX_TASKS]]
        lines += md_table(["Task", "Run", "Status", "Score", "Reason", "Error"], "lrlrll", rows)
        if len(bad) > MARKDOWN_MAX_TASKS:
            more = len(bad) - MARKDOWN_MAX_TASKS
            lines += ["", f"… and {more} more that did not pass (see the JSON report)."]
    return "\n".join(lines) + "\n"
