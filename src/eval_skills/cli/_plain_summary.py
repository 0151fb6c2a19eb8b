"""The eval summary as plain text, for output that is not a terminal, without loading rich.

It writes exactly what rich writes for the table of :func:`~eval_skills.cli._eval_summary.summary_table` (the cells
and widths of both come from here) on a console that is not a terminal (no styles): the title and every line
padded to the table's width, columns two spaces apart, numbers right-aligned, the skill and version folded into
their columns' widths. It takes only the plain case: every cell printable ASCII without spaces, every line after
the table printable and without two colons (rich would look for ``:emoji:`` codes in it), no forced terminal
(``FORCE_COLOR``, ``TTY_COMPATIBLE=1``). Anything else returns None, and the caller prints with rich. A test
holds the two to the same text.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Sequence
from typing import Any

__all__ = ["SUMMARY_NAMES", "console_width", "plain_output", "plain_summary", "summary_cells", "summary_widths"]

TITLE = "eval-skills results"
SUMMARY_NAMES = ("skill", "version", "pass", "partial", "errors", "consist", "p50 ms", "p95 ms", "composite")
_PLAIN_CELL = re.compile(r"[!-~]*")  # printable ASCII, no spaces: rich folds it by characters, as here


def console_width() -> int:
    """The width rich gives a console on this process's output: ``COLUMNS`` when it is a number, else the
    terminal's width (of stdin, stdout or stderr), else 80."""
    columns = os.environ.get("COLUMNS")
    if columns is not None and columns.isdigit():
        return int(columns)
    for descriptor in (0, 1, 2):
        try:
            width = os.get_terminal_size(descriptor).columns
        except (AttributeError, ValueError, OSError):
            continue
        return width or 80
    return 80


def summary_cells(reports: Sequence[dict[str, Any]]) -> list[list[str]]:
    """The summary's cells, one row per skill: skill, version, then the numbers as shown."""
    def fmt(value: float | None, spec: str) -> str:
        return "n/a" if value is None else format(value, spec)

    return [[str(r["skillId"]), str(r["skillVersion"]), fmt(r["summary"]["completionRate"], ".2%"),
             fmt(r["summary"]["partialScore"], ".4f"), fmt(r["summary"]["errorRate"], ".2%"),
             fmt(r["summary"]["consistencyScore"], ".4f"), fmt(r["latency"]["p50Ms"], ".1f"),
             fmt(r["latency"]["p95Ms"], ".1f"), fmt(r["summary"]["compositeScore"], ".4f")] for r in reports]


def summary_widths(rows: list[list[str]], width: int) -> list[int]:
    """The columns' widths for a ``width``-column console: the numbers' own, and the skill and version folded
    into the room the numbers leave (3 : 1, at least 5 and 7 columns)."""
    natural = [max([len(name), *(len(row[index]) for row in rows)]) for index, name in enumerate(SUMMARY_NAMES)]
    room = width - sum(natural[2:]) - 2 * (len(SUMMARY_NAMES) - 1)  # two spaces between columns
    skill, version = natural[:2]
    if skill + version > room:
        version = min(version, max(7, room // 4))
        skill = min(skill, max(5, room - version))
    return [skill, version, *natural[2:]]


def plain_summary(reports: Sequence[dict[str, Any]], width: int) -> str | None:
    """The summary table's text for a ``width``-column console (see the module doc), or None when a cell is not
    plain."""
    rows = summary_cells(reports)
    if not all(_PLAIN_CELL.fullmatch(cell) for row in rows for cell in row):
        return None
    widths = summary_widths(rows, width)
    total = sum(widths) + 2 * (len(widths) - 1)

    def line(cells: Sequence[str]) -> str:
        return "  ".join(cell.ljust(size) if index < 2 else cell.rjust(size)
                         for index, (cell, size) in enumerate(zip(cells, widths, strict=True)))

    out = [TITLE.ljust(total), line(SUMMARY_NAMES)]
    for row in rows:
        folded = [[row[i][at:at + widths[i]] for at in range(0, len(row[i]), widths[i])] or [""] for i in (0, 1)]
        for index in range(max(len(folded[0]), len(folded[1]))):
            first = [part[index] if index < len(part) else "" for part in folded]
            out.append(line([*first, *(row[2:] if index == 0 else [""] * (len(row) - 2))]))
    return "".join(text + "\n" for text in out)


def plain_output(reports: Sequence[dict[str, Any]], lines: Sequence[str]) -> str | None:
    """The summary and the ``lines`` after it as rich would print them on this process's output, when that is not
    a terminal and everything is plain; else None."""
    environ = os.environ
    if "FORCE_COLOR" in environ or environ.get("TTY_COMPATIBLE", "") == "1" or sys.stdout.isatty():
        return None
    if not all(text.isprintable() and text.count(":") < 2 for text in lines):
        return None
    table = plain_summary(reports, max(console_width(), 0))
    return None if table is None else table + "".join(text + "\n" for text in lines)
