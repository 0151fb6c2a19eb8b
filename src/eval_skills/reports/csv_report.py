"""The CSV report: one row per task result (RFC 4180), safe to open in a spreadsheet.

Text cells that a spreadsheet would run as a formula (starting with ``= + - @``, tab or CR) get a leading
``'``. Control characters (ESC, NUL, CR, tab, bidirectional overrides...) are written as their escapes
(``\\x1b``), as on the terminal; line feeds stay (the cell is quoted). The ``tags`` column joins a task's
tags with ``;``. Per-tag results are in the other formats.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from typing import Any

from ..formats.untrusted import shown_text
from ._format import compact_json, tasks, text

__all__ = ["CSV_COLUMNS", "render_csv"]

CSV_COLUMNS = ("skillId", "skillVersion", "benchmarkId", "taskId", "runId", "status", "score", "latencyMs",
               "scorerType", "attempts", "error", "reason", "output", "tags")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _csv_text(value: Any) -> str:
    body = shown_text(text(value), keep_newlines=True)
    return "'" + body if body.startswith(_FORMULA_START) else body


def _csv_num(value: Any) -> str:
    return "" if value is None or isinstance(value, bool) else text(value)


def render_csv(reports: Sequence[dict[str, Any]]) -> str:
    """One row per task result (columns: CSV_COLUMNS); ``output`` is compact JSON text."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)  # RFC 4180: quotes as needed, \r\n line ends
    writer.writerow(CSV_COLUMNS)
    for report in reports:
        for t in tasks(report):
            tags = t.get("tags")
            writer.writerow([
                _csv_text(t.get("skillId", report.get("skillId"))), _csv_text(report.get("skillVersion")),
                _csv_text(report.get("benchmarkId")), _csv_text(t.get("taskId")), _csv_num(t.get("runId")),
                _csv_text(t.get("status")), _csv_num(t.get("score")), _csv_num(t.get("latencyMs")),
                _csv_text(t.get("scorerType")), _csv_num(t.get("attempts")), _csv_text(t.get("error")),
                _csv_text(t.get("reason")), shown_text(compact_json(t.get("output"))),
                _csv_text(";".join(map(str, tags)) if isinstance(tags, list) else "")])
    return buffer.getvalue()
