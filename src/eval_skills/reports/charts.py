"""Inline SVG bar charts for the HTML report: no library, no script, no external asset.

Every label is escaped here (it may be a skill's id from someone else's file); the result is markup that the
HTML template inserts as it is.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Bar", "bar_chart", "grouped_bar_chart"]

LABEL_W, BAR_W, VALUE_W, ROW_H, BAR_H, TOP = 180, 420, 90, 26, 16, 8
LABEL_CHARS = 26
PALETTE = ("#1a7f37", "#bf8700", "#cf222e")  # the three series of the latency chart


@dataclass(frozen=True)
class Bar:
    label: str
    value: float | None  # None: no bar, "n/a"
    shown: str  # the value as text beside the bar


def _label(text: str) -> str:
    return html.escape(text if len(text) <= LABEL_CHARS else text[: LABEL_CHARS - 1] + "…")


def _svg(title: str, height: int, body: list[str]) -> str:
    width = LABEL_W + BAR_W + VALUE_W
    return (f'<svg class="chart" role="img" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}"><title>{html.escape(title)}</title>' + "".join(body) + "</svg>")


def _bar(x: float, y: float, value: float | None, scale: float, color: str, tip: str) -> str:
    if value is None or scale <= 0:
        return ""
    length = max(0.0, min(1.0, value / scale)) * BAR_W
    return (f'<rect class="bar" x="{x}" y="{y}" width="{length:.1f}" height="{BAR_H}" fill="{color}">'
            f"<title>{html.escape(tip)}</title></rect>")


def bar_chart(title: str, bars: Sequence[Bar], scale: float, color: str = "#0969da") -> str:
    """Horizontal bars, one per row, ``value / scale`` of the full width (values are clamped to it)."""
    body = []
    for index, bar in enumerate(bars):
        y = TOP + index * ROW_H
        body.append(f'<text x="{LABEL_W - 8}" y="{y + BAR_H - 3}" text-anchor="end">{_label(bar.label)}</text>')
        body.append(f'<rect x="{LABEL_W}" y="{y}" width="{BAR_W}" height="{BAR_H}" fill="#eaeef2"/>')
        body.append(_bar(LABEL_W, y, bar.value, scale, color, f"{bar.label}: {bar.shown}"))
        body.append(f'<text x="{LABEL_W + BAR_W + 6}" y="{y + BAR_H - 3}">{html.escape(bar.shown)}</text>')
    return _svg(title, TOP * 2 + ROW_H * max(1, len(bars)), body)


def grouped_bar_chart(title: str, groups: Sequence[tuple[str, Sequence[Bar]]], series: Sequence[str],
                      scale: float) -> str:
    """One group of bars per label (for example P50, P95 and P99 of each skill), with a legend on top."""
    body = []
    for index, name in enumerate(series):
        x = LABEL_W + index * 110
        body.append(f'<rect x="{x}" y="{TOP}" width="12" height="12" fill="{PALETTE[index % len(PALETTE)]}"/>')
        body.append(f'<text x="{x + 16}" y="{TOP + 11}">{html.escape(name)}</text>')
    y = TOP + 24
    for label, bars in groups:
        body.append(f'<text x="{LABEL_W - 8}" y="{y + BAR_H - 3}" text-anchor="end">{_label(label)}</text>')
        for index, bar in enumerate(bars):
            color = PALETTE[index % len(PALETTE)]
            body.append(_bar(LABEL_W, y, bar.value, scale, color, f"{label} {bar.label}: {bar.shown}"))
            body.append(f'<text x="{LABEL_W + BAR_W + 6}" y="{y + BAR_H - 3}">{html.escape(bar.shown)}</text>')
            y += BAR_H + 2
        y += ROW_H - BAR_H
    return _svg(title, y + TOP, body)
