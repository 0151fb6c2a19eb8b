"""Report files from SkillCompletionReport dicts: JSON, Markdown, HTML and CSV.

The input is a list of report dicts, one per skill, in the original tool's shape (``skillId``,
``skillVersion``, ``summary{...}``, ``latency{...}``, ``tokenCost``, ``taskResults[...]``). Missing or
odd values render as ``n/a``; unknown keys are ignored (and kept as they are in the JSON file).

Everything in a report may come from the skill under test, so it is treated as untrusted text: HTML
is rendered by jinja2 with autoescaping (plus a Content-Security-Policy that allows no scripts),
Markdown cells escape ``|``, ``<``, ``>`` and newlines, and CSV text cells that a spreadsheet would
run as a formula (starting with ``= + - @``, tab or CR) get a leading ``'``.

Files are named ``eval-result-<timestamp>.<ext>`` with one timestamp per call. Each is written to a
temporary file then linked into place, so no partial file is ever visible and no file is replaced.
"""

from __future__ import annotations

import csv
import html
import io
import json
import math
import os
import re
from collections.abc import Callable, Sequence
from contextlib import suppress
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..errors import HarnessError, InputError

__all__ = ["CSV_COLUMNS", "EXTENSIONS", "FORMATS", "load_report_file", "make_timestamp", "normalize_formats",
           "prepare_output_dir", "render_csv",
           "render_html", "render_json", "render_markdown", "write_reports"]

FORMATS = ("json", "markdown", "html", "csv")
EXTENSIONS = {"json": "json", "markdown": "md", "html": "html", "csv": "csv"}
_ALIASES = {"md": "markdown", "htm": "html"}
CSV_COLUMNS = ("skillId", "skillVersion", "benchmarkId", "taskId", "runId", "status", "score", "latencyMs",
               "scorerType", "attempts", "error", "reason", "output")
OUTPUT_PREVIEW = 300  # characters of a task's output JSON shown in HTML
CELL_LIMIT = 300  # characters of a reason or error shown in a Markdown cell
HTML_TEXT_LIMIT = 2000  # characters of a reason or error shown in HTML
MARKDOWN_MAX_TASKS = 200  # failing tasks listed per skill in Markdown; the rest are counted


# ---- formatting helpers -------------------------------------------------------------------------


def _num(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def _pct(value: Any) -> str:
    num = _num(value)
    return "n/a" if num is None else f"{num * 100:.1f}%"


def _dec(value: Any, places: int = 4) -> str:
    num = _num(value)
    return "n/a" if num is None else f"{num:.{places}f}"


def _ms(value: Any) -> str:
    num = _num(value)
    return "n/a" if num is None else f"{num:.1f}"


def _int(value: Any) -> str:
    num = _num(value)
    return "n/a" if num is None else f"{int(num):,}"


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"… ({len(text) - limit} more characters)"


def _compact_json(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    except (TypeError, ValueError):
        return json.dumps(repr(value), ensure_ascii=False)


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _tasks(report: dict[str, Any]) -> list[dict[str, Any]]:
    results = report.get("taskResults")
    return [r for r in results if isinstance(r, dict)] if isinstance(results, list) else []


def _summary_row(report: dict[str, Any]) -> dict[str, str]:
    """The display strings of one skill's headline numbers (shared by Markdown and HTML)."""
    summary, latency = _dict(report.get("summary")), _dict(report.get("latency"))
    tokens = report.get("tokenCost") or summary.get("tokenCost")  # older files kept it in summary
    consistency = summary.get("consistencyScore")
    return {
        "skill": _text(report.get("skillId")), "version": _text(report.get("skillVersion")),
        "name": _text(report.get("skillName")),
        "completion": _pct(summary.get("completionRate")), "partial": _pct(summary.get("partialScore")),
        "error_rate": _pct(summary.get("errorRate")),
        "consistency": "n/a" if consistency is None else _pct(consistency),
        "p50": _ms(latency.get("p50Ms")), "p95": _ms(latency.get("p95Ms")), "p99": _ms(latency.get("p99Ms")),
        "composite": _dec(summary.get("compositeScore")),
        "tokens": _int(tokens.get("totalTokens")) if isinstance(tokens, dict) else "n/a",
        "total": _int(summary.get("totalTasks")), "passed": _int(summary.get("passed")),
        "failed": _int(summary.get("failed")), "errors": _int(summary.get("errors")),
        "timeouts": _int(summary.get("timeouts")), "runs": _int(report.get("runs")),
    }


def _header(reports: Sequence[dict[str, Any]]) -> dict[str, str]:
    benchmarks = dict.fromkeys(
        " ".join(p for p in (_text(r.get("benchmarkId")), _text(r.get("benchmarkVersion"))) if p)
        for r in reports)
    stamps = [_text(r.get("timestamp")) for r in reports if r.get("timestamp")]
    return {"benchmark": ", ".join(b for b in benchmarks if b) or "n/a",
            "generated": max(stamps) if stamps else "n/a", "skills": str(len(reports))}


# ---- renderers ----------------------------------------------------------------------------------


def render_json(reports: Sequence[dict[str, Any]]) -> str:
    """The reports as a JSON array (indent 2, UTF-8 text as is), ending in a newline."""
    return json.dumps(list(reports), indent=2, ensure_ascii=False, default=str) + "\n"


def _md(value: Any, limit: int | None = None) -> str:
    text = _text(value).strip()
    if limit is not None:
        text = _cut(text, limit)
    text = html.escape(text, quote=False).replace("\\", "\\\\").replace("|", "\\|")
    return re.sub(r"\r\n|\r|\n", "<br>", text)


def _md_table(header: Sequence[str], align: str, rows: list[list[str]]) -> list[str]:
    marks = ["---:" if a == "r" else "---" for a in align]
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(marks) + " |"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def render_markdown(reports: Sequence[dict[str, Any]]) -> str:
    """A summary table of all skills, then per skill the tasks that did not pass, with why."""
    head = _header(reports)
    lines = ["# eval-skills Report", "",
             f"- Benchmark: {_md(head['benchmark'])}", f"- Generated: {_md(head['generated'])}",
             f"- Skills: {head['skills']}", "", "## Summary", ""]
    if not reports:
        return "\n".join([*lines, "No skills were evaluated.", ""])
    rows = []
    for report in reports:
        s = _summary_row(report)
        rows.append([_md(s["skill"]), _md(s["version"]), s["completion"], s["partial"], s["error_rate"],
                     s["consistency"], s["p50"], s["p95"], s["p99"], s["composite"], s["tokens"]])
    lines += _md_table(["Skill", "Version", "Completion", "Partial", "Error rate", "Consistency", "P50 ms",
                        "P95 ms", "P99 ms", "Composite", "Tokens"], "llrrrrrrrrr", rows)
    for report in reports:
        s = _summary_row(report)
        lines += ["", f"## {_md(s['skill'])} {_md(s['version'])}".rstrip(), "",
                  f"{s['total']} tasks, {s['runs']} run(s): {s['passed']} passed, {s['failed']} failed, "
                  f"{s['errors']} errors, {s['timeouts']} timeouts.", ""]
        lines += _markdown_notes(_dict(report.get("summary")))
        bad = [t for t in _tasks(report) if t.get("status") != "pass"]
        if not bad:
            lines.append("All tasks passed." if _tasks(report) else "No task results in this report.")
            continue
        rows = [[_md(t.get("taskId")), _md(t.get("runId")), _md(t.get("status")), _dec(t.get("score")),
                 _md(t.get("reason"), CELL_LIMIT), _md(t.get("error"), CELL_LIMIT)]
                for t in bad[:MARKDOWN_MAX_TASKS]]
        lines += _md_table(["Task", "Run", "Status", "Score", "Reason", "Error"], "lrlrll", rows)
        if len(bad) > MARKDOWN_MAX_TASKS:
            more = len(bad) - MARKDOWN_MAX_TASKS
            lines += ["", f"… and {more} more that did not pass (see the JSON report)."]
    return "\n".join(lines) + "\n"


def _markdown_notes(summary: dict[str, Any]) -> list[str]:
    """The score's confidence interval and the count of input warnings, when a report has them."""
    notes = []
    ci = _dict(summary.get("confidenceInterval"))
    level, lower, upper = _num(ci.get("level")), _num(ci.get("lower")), _num(ci.get("upper"))
    if level is not None and lower is not None and upper is not None:
        notes.append(f"Mean score {level * 100:g}% confidence interval (bootstrap): {lower:.4f} to {upper:.4f}.")
    warned = _num(summary.get("inputWarnings"))
    if warned:
        notes.append(f"{int(warned)} task input(s) did not match the skill's inputSchema and were sent anyway "
                     "(see `warnings` in the JSON report).")
    return [*notes, ""] if notes else []


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _csv_text(value: Any) -> str:
    text = _text(value)
    return "'" + text if text.startswith(_FORMULA_START) else text


def _csv_num(value: Any) -> str:
    return "" if value is None or isinstance(value, bool) else _text(value)


def render_csv(reports: Sequence[dict[str, Any]]) -> str:
    """One row per task result (columns: CSV_COLUMNS); ``output`` is compact JSON text."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)  # RFC 4180: quotes as needed, \r\n line ends
    writer.writerow(CSV_COLUMNS)
    for report in reports:
        for t in _tasks(report):
            writer.writerow([
                _csv_text(t.get("skillId", report.get("skillId"))), _csv_text(report.get("skillVersion")),
                _csv_text(report.get("benchmarkId")), _csv_text(t.get("taskId")), _csv_num(t.get("runId")),
                _csv_text(t.get("status")), _csv_num(t.get("score")), _csv_num(t.get("latencyMs")),
                _csv_text(t.get("scorerType")), _csv_num(t.get("attempts")), _csv_text(t.get("error")),
                _csv_text(t.get("reason")), _compact_json(t.get("output"))])
    return buffer.getvalue()


@lru_cache(maxsize=1)
def _html_template() -> Any:
    import jinja2  # lazily: only HTML needs it, and start-up time matters

    source = Path(__file__).with_name("templates").joinpath("report.html.j2").read_text(encoding="utf-8")
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True,
                             lstrip_blocks=True)
    return env.from_string(source)


_STATUS_CLASSES = {"pass", "fail", "error", "timeout"}


def _html_task(t: dict[str, Any]) -> dict[str, str]:
    status, output = t.get("status"), t.get("output")
    return {"task": _text(t.get("taskId")), "run": _text(t.get("runId")), "status": _text(status),
            "css": status if isinstance(status, str) and status in _STATUS_CLASSES else "other",
            "score": _dec(t.get("score")), "latency": _ms(t.get("latencyMs")),
            "output": "" if output is None else _cut(_compact_json(output), OUTPUT_PREVIEW),
            "reason": _cut(_text(t.get("reason")), HTML_TEXT_LIMIT),
            "error": _cut(_text(t.get("error")), HTML_TEXT_LIMIT)}


def render_html(reports: Sequence[dict[str, Any]]) -> str:
    """One self-contained page (inline CSS, no scripts, no external assets); all text escaped."""
    skills = [{**_summary_row(r), "tasks": [_html_task(t) for t in _tasks(r)]} for r in reports]
    return str(_html_template().render(head=_header(reports), skills=skills))


RENDERERS: dict[str, Callable[[Sequence[dict[str, Any]]], str]] = {
    "json": render_json, "markdown": render_markdown, "html": render_html, "csv": render_csv}


# ---- files --------------------------------------------------------------------------------------


def make_timestamp(now: datetime | None = None) -> str:
    """``2026-11-29T19-46-15-123Z``: UTC, millisecond, sortable, safe in file names on every OS."""
    moment = (now or datetime.now(UTC)).astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H-%M-%S-") + f"{moment.microsecond // 1000:03d}Z"


def normalize_formats(formats: Sequence[str]) -> list[str]:
    """Format names with aliases resolved (``md``, ``htm``) and duplicates dropped; InputError if unknown."""
    chosen: list[str] = []
    for raw in formats:
        name = _ALIASES.get(raw.strip().lower(), raw.strip().lower())
        if name not in EXTENSIONS:
            raise InputError(f"unknown report format {raw!r}", field="--format",
                             hint=f"use one or more of: {', '.join(FORMATS)}")
        if name not in chosen:
            chosen.append(name)
    return chosen


def _publish(text: str, target: Path) -> None:
    """Write ``text`` to a hidden temporary file, then link it to ``target``, never replacing a file.

    Raises FileExistsError when ``target`` exists (another run took the name first).
    """
    tmp = target.with_name(f".{target.name}.{os.urandom(4).hex()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # the umask applies, as for any file
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        try:
            os.link(tmp, target)  # atomic and exclusive
        except FileExistsError:
            raise
        except OSError:  # a file system without hard links: check, then rename
            if target.exists():
                raise FileExistsError(str(target)) from None
            os.replace(tmp, target)
    finally:
        with suppress(FileNotFoundError):
            os.unlink(tmp)


def prepare_output_dir(output_dir: Path, formats: Sequence[str] = FORMATS, *, create: bool = True) -> Path:
    """Check the formats and create the report folder: called before a run, so a bad ``--format`` or
    ``--output-dir`` stops it before any task runs. With ``create=False`` only check (for a dry run)."""
    normalize_formats(formats)
    output_dir = Path(output_dir)
    if not create:
        if output_dir.exists() and not output_dir.is_dir():
            raise InputError("cannot create the report folder (a file is in the way)", file=str(output_dir),
                             hint="choose another --output-dir")
        return output_dir
    try:
        output_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot create the report folder ({exc.strerror or exc})", file=str(output_dir),
                         hint="choose another --output-dir") from None
    return output_dir


def write_reports(reports: Sequence[dict[str, Any]], formats: Sequence[str], output_dir: Path,
                  timestamp: str | None = None) -> list[Path]:
    """Write ``eval-result-<timestamp>.<ext>`` for each format into ``output_dir`` (created if needed).

    All files of one call share the stem; if any of its names is taken (two runs in one millisecond),
    the stem gets a suffix ``_1``, ``_2``... (after ``.`` in sort order, so files still sort by time).
    Returns the paths written, in the order of ``formats``. Unknown format: InputError, nothing written.
    """
    chosen = normalize_formats(formats)
    if not chosen:
        return []
    stamp = make_timestamp() if timestamp is None else re.sub(r"[^0-9A-Za-z_-]", "-", timestamp.strip())
    if not stamp:
        raise InputError("the report timestamp is empty", hint="leave it out to use the current time")
    contents = [(EXTENSIONS[name], RENDERERS[name](reports)) for name in chosen]
    output_dir = Path(output_dir)
    try:
        output_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise HarnessError(f"report folder {output_dir}: cannot create it ({exc.strerror or exc})") from exc
    for attempt in range(1000):
        stem = f"eval-result-{stamp}" + (f"_{attempt}" if attempt else "")
        targets = [output_dir / f"{stem}.{ext}" for ext, _ in contents]
        if any(target.exists() for target in targets):
            continue
        written: list[Path] = []
        try:
            for target, (_, text) in zip(targets, contents, strict=True):
                _publish(text, target)
                written.append(target)
            return written
        except FileExistsError:  # lost a race for this stem: take back what we wrote, try the next one
            for path in written:
                path.unlink(missing_ok=True)
        except OSError as exc:
            for path in written:
                path.unlink(missing_ok=True)
            raise HarnessError(f"report folder {output_dir}: cannot write {stem} files "
                               f"({exc.strerror or exc})") from exc
    raise HarnessError(f"report folder {output_dir}: no free file name for eval-result-{stamp}")


def load_report_file(path: Path) -> list[dict[str, Any]]:
    """Read a JSON report file: an array of skill reports, or one report object (wrapped in a list).
    Reports written by the original eval-skills get the counts they lack (see :mod:`.original`)."""
    from ..formats._load import read_json  # lazily: pydantic is not needed to write reports

    data = read_json(Path(path))
    single = isinstance(data, dict)
    items = [data] if single else data
    if not isinstance(items, list):
        raise InputError("expected a JSON array of skill reports (or one report object)", file=str(path),
                         field="$", hint="is this an eval-skills report file?")
    for index, item in enumerate(items):
        where = "$" if single else f"$[{index}]"
        if not isinstance(item, dict):
            raise InputError("expected a skill report object", file=str(path), field=where)
        if not isinstance(item.get("skillId"), str):
            raise InputError("required field is missing" if "skillId" not in item else "must be a string",
                             file=str(path), field=f"{where}.skillId",
                             hint="is this an eval-skills report file?")
    from .original import normalize_report

    return [normalize_report(item) for item in items]
