"""GitHub Actions output: a Markdown job summary and workflow annotations, from any command's result.

A command describes its result as a :class:`StepReport` (the verdict, a small table, the findings: failing
tasks, assertions or queries, each with its reason); :func:`render_summary` turns it into the Markdown appended
to ``$GITHUB_STEP_SUMMARY`` and :func:`annotation_lines` into ``::error`` lines.

- Every text is untrusted: secrets are masked first (:mod:`..masking`), Markdown is escaped so a task id or a
  reason cannot make a link, a heading or HTML, and annotation text is escaped by GitHub's rules for workflow
  commands (``%``, ``\\r``, ``\\n`` in the message; also ``:`` and ``,`` in properties).
- GitHub shows at most 10 annotations of each level per step, so at most :data:`ANNOTATION_CAP` findings are
  annotated; past that the last annotation says how many more there are and where they are listed.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from ..masking import mask

__all__ = ["ANNOTATION_CAP", "SUMMARY_FINDINGS", "Finding", "Level", "StepReport", "annotation", "annotation_lines",
           "escape_data", "escape_property", "md_code", "md_text", "render_summary"]

ANNOTATION_CAP = 10  # GitHub shows 10 annotations of a level per step
SUMMARY_FINDINGS = 20  # findings listed in a job summary; the rest are counted
TEXT_LIMIT = 300  # characters of one reason kept in a summary line or an annotation

Level = Literal["error", "warning", "notice"]
_MD_SPECIAL = re.compile(r"([\\`*\[\]#|~])")  # "_" inside a word is never emphasis on GitHub


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing that did not pass: a task, an assertion, a query, a fixture check, a skill folder problem."""

    title: str  # where: "calculator / add-1: fail"
    message: str  # why: the reason's text
    file: str | None = None  # the file to point at, relative to the repository root when it can be
    level: Level = "error"


@dataclass(frozen=True)
class StepReport:
    """What one command found, for a job summary and annotations."""

    command: str  # "eval", "fixtures", ...
    passed: bool
    verdict: str  # one or two sentences: the outcome and, on failure, why
    head: Sequence[str] = ()
    rows: Sequence[Sequence[str]] = ()
    findings: Sequence[Finding] = ()
    files: Sequence[str] = ()  # reports written, where the full results are
    notes: Sequence[str] = field(default_factory=tuple)


def _one_line(text: str, limit: int = TEXT_LIMIT) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[:limit - 1] + "…"


def md_text(text: str, secrets: Iterable[str] = (), limit: int = TEXT_LIMIT) -> str:
    """``text`` masked, on one line, cut, and escaped for Markdown (no HTML, no links, no emphasis)."""
    body = _one_line(mask(text, tuple(secrets)), limit)
    return _MD_SPECIAL.sub(r"\\\1", html.escape(body, quote=False))


def md_code(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` masked, on one line, as a Markdown code span (a path, a file name)."""
    return "`" + _one_line(mask(text, tuple(secrets)), 500).replace("`", "'") + "`"


def escape_data(text: str) -> str:
    """A workflow command's message, escaped as GitHub's runner unescapes it."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A workflow command's property value (``file=``, ``title=``), escaped as GitHub's runner unescapes it."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(level: Level, message: str, *, file: str | None = None, title: str | None = None,
               line: int | None = None) -> str:
    """One ``::error file=...,title=...::message`` line."""
    props = []
    if file:
        props.append(f"file={escape_property(file)}")
    if line is not None:
        props.append(f"line={line}")
    if title:
        props.append(f"title={escape_property(title)}")
    return f"::{level}{' ' + ','.join(props) if props else ''}::{escape_data(message)}"


def annotation_lines(report: StepReport, secrets: Iterable[str] = (), *, cap: int = ANNOTATION_CAP,
                     more_where: str = "the job summary") -> list[str]:
    """At most ``cap`` annotations of each level; when there are more, the last one of that level says how
    many more and where they are listed."""
    key = tuple(secrets)
    lines = []
    for level in ("error", "warning", "notice"):
        found = [f for f in report.findings if f.level == level]
        shown = found if len(found) <= cap else found[:cap - 1]
        for f in shown:
            title = f"eval-skills {report.command}: {_one_line(mask(f.title, key), 200)}"
            lines.append(annotation(f.level, _one_line(mask(f.message, key)), file=f.file, title=title))
        if len(found) > len(shown):
            rest = len(found) - len(shown)
            lines.append(annotation(level, f"{rest} more not annotated (GitHub shows {cap} per step): every one "
                                           f"is listed in {more_where}",
                                    title=f"eval-skills {report.command}: {rest} more"))
    return lines


def render_summary(report: StepReport, secrets: Iterable[str] = (), *, shown: int = SUMMARY_FINDINGS) -> str:
    """The job summary's Markdown: a heading with the outcome, the verdict, the table, the first ``shown``
    findings and the report files. It ends with a blank line, so summaries of several steps stay apart."""
    key = tuple(secrets)
    mark = "passed" if report.passed else "failed"
    icon = ":white_check_mark:" if report.passed else ":x:"
    lines = [f"### {icon} eval-skills {md_text(report.command)}: {mark}", "", md_text(report.verdict, key, 2000), ""]
    if report.head and report.rows:
        lines.append("| " + " | ".join(md_text(h) for h in report.head) + " |")
        lines.append("| " + " | ".join("---" for _ in report.head) + " |")
        lines += ["| " + " | ".join(md_text(cell, key, 120) for cell in row) + " |" for row in report.rows]
        lines.append("")
    for note in report.notes:
        lines += [md_text(note, key, 1000), ""]
    if report.findings:
        lines.append(f"**Did not pass ({len(report.findings)}):**")
        lines.append("")
        for f in report.findings[:shown]:
            where = f" ({md_code(f.file, key)})" if f.file else ""
            lines.append(f"- {md_text(f.title, key, 200)}: {md_text(f.message, key)}{where}")
        if len(report.findings) > shown:
            lines.append(f"- … and {len(report.findings) - shown} more"
                         + (" (all of them in the reports below)" if report.files else ""))
        lines.append("")
    if report.files:
        lines += ["Reports: " + ", ".join(md_code(f, key) for f in report.files), ""]
    return "\n".join(lines) + "\n"
