"""Report files: ``eval-result-<timestamp>.<ext>`` in every format, written so no partial file is visible,
and reading JSON report files back.

Each file is written to a temporary file then linked into place, so no partial file is ever visible and no
file is replaced. Renderers are imported only when their format is written (jinja2 only for HTML).
"""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Callable, Sequence
from contextlib import suppress
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..errors import HarnessError, InputError
from ..formats.indented_json import dumps_indented_utf8
from ..formats.untrusted import MAX_DEPTH

__all__ = ["EXTENSIONS", "FORMATS", "load_report_file", "make_timestamp", "normalize_formats",
           "prepare_output_dir", "publish_file", "render", "render_json", "renderer", "write_reports"]

FORMATS = ("json", "markdown", "html", "csv", "junit")
EXTENSIONS = {"json": "json", "markdown": "md", "html": "html", "csv": "csv", "junit": "xml"}
_ALIASES = {"md": "markdown", "htm": "html", "xml": "junit"}
# format -> "module:function" of its renderer, imported when used
_RENDERERS = {"json": "files:render_json", "markdown": "markdown:render_markdown", "html": "html:render_html",
              "csv": "csv_report:render_csv", "junit": "junit:render_junit"}


def render_json(reports: Sequence[dict[str, Any]]) -> str:
    """The reports as a JSON array (indent 2, UTF-8 text as is), ending in a newline."""
    return dumps_indented_utf8(list(reports), default=str) + "\n"


def renderer(name: str) -> Callable[[Sequence[dict[str, Any]]], str]:
    """The renderer of a format (``normalize_formats`` names)."""
    module_name, attr = _RENDERERS[name].split(":")
    fn: Callable[[Sequence[dict[str, Any]]], str] = getattr(
        importlib.import_module(f"{__package__}.{module_name}"), attr)
    return fn


def render(reports: Sequence[dict[str, Any]], name: str) -> str:
    """The reports in one format (a name or alias, see ``normalize_formats``)."""
    (chosen,) = normalize_formats([name])
    return renderer(chosen)(reports)



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


def publish_file(text: str, target: Path) -> None:
    """Write ``text`` to a hidden temporary file, then link it to ``target``, never replacing a file.

    Raises FileExistsError when ``target`` exists (another run took the name first).
    """
    tmp = target.with_name(f".{target.name}.{os.urandom(4).hex()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # the umask applies, as for any file
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors="replace", newline="") as fh:
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
    contents = [(EXTENSIONS[name], renderer(name)(reports)) for name in chosen]
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
                publish_file(text, target)
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


# a report holds each output four levels down ([{"taskResults": [{"output": ...}]}]): any output a skill may
# send (up to MAX_DEPTH levels) must read back
REPORT_DEPTH = MAX_DEPTH + 8


def load_report_file(path: Path) -> list[dict[str, Any]]:
    """Read a JSON report file: an array of skill reports, one report object (wrapped in a list), or what
    ``eval --json`` prints (its ``reports``).
    Reports written by the original eval-skills get the counts they lack (see :mod:`.original`)."""
    from ..formats._load import read_json  # lazily: pydantic is not needed to write reports

    data = read_json(Path(path), max_depth=REPORT_DEPTH)
    if isinstance(data, dict) and "skillId" not in data and isinstance(data.get("reports"), list):
        data = data["reports"]  # what eval --json and run --json print: {"passed", "reports": [...], ...}
    single = isinstance(data, dict)
    items = [data] if single else data
    if not isinstance(items, list):
        raise InputError("expected a JSON array of skill reports (or one report object)", file=str(path),
                         field="$", hint="is this an eval-skills report file?")
    if not items:
        raise InputError("holds no skill report (an empty array)", file=str(path), field="$",
                         hint="is this an eval-skills report file?")
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
