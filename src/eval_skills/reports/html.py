"""The HTML report: one self-contained page that fetches nothing.

A summary table per skill, bar charts of completion rate and composite score, a latency chart (P50, P95,
P99), results per tag, and a per-task table filtered by status, skill and text. Charts are inline SVG. The
only script is the table filter shipped in this package; the page's Content-Security-Policy allows exactly
that script (by its SHA-256) and nothing else, so text from a skill, escaped by jinja2's autoescaping,
could not run even if it were not escaped.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from ._format import (
    HTML_TEXT_LIMIT,
    OUTPUT_PREVIEW,
    compact_json,
    cut,
    dec,
    mapping,
    ms,
    num,
    pct,
    summary_row,
    tag_rows,
    tasks,
    text,
)
from .charts import Bar, bar_chart, grouped_bar_chart

__all__ = ["filter_script", "render_html"]

TEMPLATES = Path(__file__).with_name("templates")
_STATUS_CLASSES = ("pass", "fail", "error", "timeout")
# one row of the per-task table, written here rather than by a template loop (thousands of rows); every value is
# escaped by markupsafe, as the template's autoescaping would
_TASK_ROW = ('      <tr class="{css}" data-status="{status}" data-skill="{skill}"><td>{skill}</td>'
             '<td>{task}</td><td class="num">{run}</td><td>{tags}</td><td class="status">{status}</td>'
             '<td class="num">{score}</td><td class="num">{latency}</td>'
             '<td class="text"><code>{output}</code></td><td class="text">{reason}</td>'
             '<td class="text">{error}</td></tr>\n')


@lru_cache(maxsize=1)
def _template() -> Any:
    import jinja2  # lazily: only HTML needs it, and start-up time matters

    source = TEMPLATES.joinpath("report.html.j2").read_text(encoding="utf-8")
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True,
                             lstrip_blocks=True)
    return env.from_string(source)


@lru_cache(maxsize=1)
def filter_script() -> tuple[str, str]:
    """The table filter's source and its CSP source expression ``'sha256-...'``."""
    source = TEMPLATES.joinpath("filter.js").read_text(encoding="utf-8")
    digest = base64.b64encode(hashlib.sha256(source.encode("utf-8")).digest()).decode("ascii")
    return source, f"'sha256-{digest}'"


def _task_row(t: dict[str, Any], skill: str) -> dict[str, Any]:
    status, output = t.get("status"), t.get("output")
    tags = t.get("tags")
    return {"skill": text(t.get("skillId") or skill), "task": text(t.get("taskId")), "run": text(t.get("runId")),
            "status": text(status), "css": status if status in _STATUS_CLASSES else "other",
            "score": dec(t.get("score")), "latency": ms(t.get("latencyMs")),
            "tags": ", ".join(map(str, tags)) if isinstance(tags, list) else "",
            "output": "" if output is None else cut(compact_json(output), OUTPUT_PREVIEW),
            "reason": cut(text(t.get("reason")), HTML_TEXT_LIMIT), "error": cut(text(t.get("error")), HTML_TEXT_LIMIT)}


def _charts(reports: Sequence[dict[str, Any]]) -> list[dict[str, str]]:
    from markupsafe import Markup  # comes with jinja2; the SVG is escaped by charts.py

    if not reports:
        return []
    labels = [text(r.get("skillId")) for r in reports]
    summaries = [mapping(r.get("summary")) for r in reports]
    completion = [Bar(label, num(s.get("completionRate")), pct(s.get("completionRate")))
                  for label, s in zip(labels, summaries, strict=True)]
    composite = [Bar(label, num(s.get("compositeScore")), dec(s.get("compositeScore")))
                 for label, s in zip(labels, summaries, strict=True)]
    latency_groups = []
    highest = 0.0
    for label, report in zip(labels, reports, strict=True):
        latency = mapping(report.get("latency"))
        bars = []
        for key, name in (("p50Ms", "P50"), ("p95Ms", "P95"), ("p99Ms", "P99")):
            value = num(latency.get(key))
            highest = max(highest, value or 0.0)
            bars.append(Bar(name, value, "n/a" if value is None else f"{value:,.1f} ms"))
        latency_groups.append((label, bars))
    return [
        {"title": "Completion rate", "svg": Markup(bar_chart("Completion rate per skill", completion, 1.0))},
        {"title": "Composite score", "svg": Markup(bar_chart("Composite score per skill", composite, 1.0,
                                                             "#8250df"))},
        {"title": "Latency (P50, P95, P99)", "svg": Markup(grouped_bar_chart(
            "Latency percentiles per skill", latency_groups, ("P50", "P95", "P99"), highest))},
    ]


def render_html(reports: Sequence[dict[str, Any]]) -> str:
    """One self-contained page (inline CSS and SVG, one hashed script, no external assets); all text escaped."""
    from markupsafe import Markup, escape

    from ._format import header

    skills = []
    rows = []
    for report in reports:
        row: dict[str, Any] = dict(summary_row(report))
        row["tags"] = [{"tag": text(t.get("tag")), "total": text(t.get("total")), "passed": text(t.get("passed")),
                        "completion": pct(t.get("completionRate")), "partial": pct(t.get("partialScore"))}
                       for t in tag_rows(report)]
        skills.append(row)
        rows += [_task_row(t, row["skill"]) for t in tasks(report)]
    script, script_hash = filter_script()
    statuses = sorted({r["status"] for r in rows}, key=lambda s: (s not in _STATUS_CLASSES, s))
    task_rows = Markup("".join(_TASK_ROW.format_map({key: escape(value) for key, value in row.items()})
                               for row in rows))
    return str(_template().render(head=header(reports), skills=skills, rows=rows, task_rows=task_rows,
                                  charts=_charts(reports),
                                  statuses=statuses, skill_ids=list(dict.fromkeys(r["skill"] for r in rows)),
                                  script=script, script_hash=Markup(script_hash)))
