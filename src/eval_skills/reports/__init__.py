"""Report files (JSON, Markdown, HTML, CSV, JUnit XML) from SkillCompletionReport dicts, and report diffs.

Layer rule: this package imports only ``errors``, ``results`` and ``formats``; never a runner or the CLI.
Each format's renderer is imported when it is used (jinja2 only for HTML).

The input is a list of report dicts, one per skill, in the original tool's shape (``skillId``,
``skillVersion``, ``summary{...}``, ``latency{...}``, ``tokenCost``, ``tagBreakdown``, ``taskResults[...]``).
Missing or odd values render as ``n/a``; unknown keys are ignored (and kept as they are in the JSON file).
Everything in a report may come from the skill under test, so it is treated as untrusted text in every format.
"""

from __future__ import annotations

from typing import Any

from .files import (
    EXTENSIONS,
    FORMATS,
    load_report_file,
    make_timestamp,
    normalize_formats,
    prepare_output_dir,
    render,
    render_json,
    write_reports,
)

__all__ = [
    "CSV_COLUMNS",
    "EXTENSIONS",
    "FORMATS",
    "load_report_file",
    "make_timestamp",
    "normalize_formats",
    "prepare_output_dir",
    "render",
    "render_csv",
    "render_html",
    "render_json",
    "render_junit",
    "render_markdown",
    "tag_breakdown",
    "write_reports",
]

_LAZY = {"CSV_COLUMNS": "csv_report", "render_csv": "csv_report", "render_html": "html",
         "render_junit": "junit", "render_markdown": "markdown", "tag_breakdown": "_format"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
