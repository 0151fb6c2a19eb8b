"""The summary of a tool-skill evaluation on a terminal (rich): the per-skill table, sized so numbers never
wrap or get cut, and the tasks that did not pass under it. ``_plain_summary`` writes the same text without
rich when the output is no terminal."""

from __future__ import annotations

from typing import Any

__all__ = ["print_failures", "print_summary", "summary_table"]


def summary_table(reports: list[dict[str, Any]], width: int = 80) -> Any:
    """The per-skill summary for a ``width``-column console. Numbers never wrap or get cut: the skill and
    version fold into the room the numbers leave (3 : 1, at least 5 and 7 columns). The table's own width
    is ``table.width``: more than ``width`` only when even that much room is not there (print it on a
    console that wide; see :func:`print_summary`)."""
    from rich.table import Table
    from rich.text import Text

    from ._plain_summary import SUMMARY_NAMES, summary_cells, summary_widths

    rows = summary_cells(reports)
    widths = summary_widths(rows, width)
    table = Table(title="eval-skills results", title_justify="left", box=None, padding=(0, 1), pad_edge=False,
                  header_style="bold underline")
    table.add_column("skill", overflow="fold", width=widths[0])
    table.add_column("version", overflow="fold", width=widths[1])
    for name, size in zip(SUMMARY_NAMES[2:], widths[2:], strict=True):
        table.add_column(name, justify="right", no_wrap=True, width=size)
    for row in rows:  # a version such as "1.0[/]" is text, not rich markup
        table.add_row(Text(row[0]), Text(row[1]), *row[2:])
    table.width = sum(widths) + 2 * (len(SUMMARY_NAMES) - 1)
    return table


def print_summary(console: Any, reports: list[dict[str, Any]]) -> Any:
    """Print the summary table on ``console``; returns the console to print the lines after it on: one at
    least as wide as the table, so a narrower terminal (or ``COLUMNS=0``) wraps lines rather than cutting
    numbers or dropping columns and report paths."""
    from rich.console import Console

    table = summary_table(reports, max(console.width, 0))
    if console.width < table.width:
        console = Console(width=table.width, highlight=False)
    console.print(table)
    return console


def print_failures(console: Any, outcome: Any) -> None:
    """The tasks that did not pass, under the table (at most 10, and where the full list is)."""
    from ._eval_notes import failure_lines

    for line in failure_lines(outcome.results, outcome.report_files):
        console.print(line, highlight=False, soft_wrap=True, markup=False)
