"""Report files (JSON, Markdown, HTML, CSV) from SkillCompletionReport dicts.

Layer rule: this package imports only ``errors``, ``results`` and ``formats``; never a runner or the CLI.
jinja2 is imported only when HTML is rendered.
"""

from __future__ import annotations

from .writers import (
    CSV_COLUMNS,
    EXTENSIONS,
    FORMATS,
    load_report_file,
    make_timestamp,
    normalize_formats,
    prepare_output_dir,
    render_csv,
    render_html,
    render_json,
    render_markdown,
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
    "render_csv",
    "render_html",
    "render_json",
    "render_markdown",
    "write_reports",
]
