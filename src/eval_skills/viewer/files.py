"""Reading a workspace's untrusted files without trusting them: sizes capped, paths confined to the
workspace, every failure turned into a one-line problem shown on the page instead of a crash, and the known
secrets of this process's environment masked in every text shown (before it is cut: see
:mod:`eval_skills.masking`), as an agent's files may quote a key it saw."""

from __future__ import annotations

import base64
import codecs
import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, TypeAdapter, ValidationError

from ..errors import InputError
from ..formats._load import read_json, validate
from ..formats.untrusted import loads_untrusted
from ..formats.workspace import TranscriptEvent
from ..masking import cut, longest_form, mask_bytes, secret_values

__all__ = ["IMAGE_TYPES", "FileEntry", "OpenFile", "Reader", "inside", "list_files", "open_below", "read_model",
           "read_text", "read_transcript", "shown_secrets"]

M = TypeVar("M", bound=BaseModel)

TEXT_LIMIT = 1_000_000  # bytes of one text file read for the page
FILE_LIMIT = 100  # files listed per outputs folder
EVENT_LIMIT = 2_000  # transcript events shown per run
EVENT_DEPTH = 64  # the deepest JSON of a transcript line shown (deeper lines are a problem, not an event)
IMAGE_EMBED_LIMIT = 2_000_000  # bytes of an image embedded in a static page
IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
               ".webp": "image/webp"}  # never SVG: it can hold script


def inside(root: Path, path: Path) -> bool:
    """True when ``path`` (symlinks resolved) is ``root`` or below it."""
    try:
        return path.resolve().is_relative_to(root.resolve())
    except (OSError, RuntimeError):
        return False


def shown_secrets() -> tuple[str, ...]:
    """The secrets masked on the page: those of this process's environment."""
    return secret_values(os.environ)


def _masked_head(data: bytes, limit: int, encoding: str = "utf-8") -> str:
    """The first ``limit`` bytes of ``data`` (which may hold more) as text, the secrets masked over the whole
    of ``data`` before the cut, so none survives in part at the cut."""
    secrets = shown_secrets()
    head = data[:limit].decode(encoding, errors="replace")
    if len(data) <= limit:
        return cut(head, len(head), secrets)
    return cut(data.decode(encoding, errors="replace"), len(head), secrets, more="")


def _read_head(path: Path, limit: int) -> bytes:
    """Up to ``limit`` bytes of ``path``, and past them as much as the longest secret, to mask it whole."""
    with path.open("rb") as handle:
        return handle.read(limit + 1 + longest_form(shown_secrets()))


def read_text(path: Path, limit: int = TEXT_LIMIT) -> tuple[str | None, str | None]:
    """``(text, problem)``: UTF-8 text (invalid bytes replaced, secrets masked), cut at ``limit`` bytes with
    a note. A missing file is ``(None, None)``."""
    try:
        data = _read_head(path, limit)
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        return None, f"{path.name}: cannot be read ({exc.strerror or exc})"
    text = _masked_head(data, limit)
    if len(data) > limit:
        return text, f"{path.name}: longer than {limit:,} bytes, only the start is shown"
    return text, None


def read_model(path: Path, model: type[M], shown_as: str) -> tuple[M | None, str | None]:
    """``(model, problem)`` for a JSON file; missing is ``(None, None)``, broken is ``(None, problem)``
    with the problem naming ``shown_as`` (the file relative to the workspace) and the field."""
    if not path.exists():
        return None, None
    try:
        return validate(model, read_json(path), shown_as), None
    except InputError as exc:
        return None, exc.line().replace(str(path), shown_as)


@lru_cache(maxsize=1)
def _event_adapter() -> TypeAdapter[Any]:
    return TypeAdapter(TranscriptEvent)


def read_transcript(path: Path, shown_as: str, limit: int = EVENT_LIMIT) -> tuple[list[Any], list[str]]:
    """The events of a ``transcript.jsonl`` (at most ``limit``) and the problems met reading it."""
    text, problem = read_text(path, TEXT_LIMIT * 10)
    problems = [problem.replace(path.name, shown_as)] if problem else []
    events: list[Any] = []
    if text is None:
        return events, problems
    bad = 0
    lines = [line for line in text.splitlines() if line.strip()]
    for number, line in enumerate(lines, 1):
        if len(events) >= limit:
            problems.append(f"{shown_as}: {len(lines) - number + 1:,} more events not shown")
            break
        try:
            events.append(_event_adapter().validate_python(loads_untrusted(line, max_depth=EVENT_DEPTH)))
        except (ValueError, ValidationError, RecursionError):
            bad += 1
            if bad == 1:
                problems.append(f"{shown_as}: line {number} is not a transcript event")
    if bad > 1:
        problems.append(f"{shown_as}: {bad} lines in all are not transcript events")
    return events, problems


class Reader:
    """Reads the files below ``root`` only (a symlink out is a problem, not read), naming them relative to
    ``root`` in the problems it reports."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()

    def shown(self, path: Path) -> str:
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return path.name

    def _outside(self, path: Path) -> str | None:
        """Why ``path`` is not read: it leads outside the workspace, or is no regular file (None: read it)."""
        if path.exists() and not inside(self.root, path):
            return f"{self.shown(path)}: leads outside the workspace (a symlink?), not read"
        if path.exists() and not path.is_file():  # a folder, a FIFO (reading it would wait for ever), a device
            return f"{self.shown(path)}: is not a regular file, not read"
        return None

    def text(self, path: Path, limit: int = TEXT_LIMIT) -> tuple[str | None, str | None]:
        problem = self._outside(path)
        return (None, problem) if problem else read_text(path, limit)

    def model(self, path: Path, model: type[M]) -> tuple[M | None, str | None]:
        problem = self._outside(path)
        return (None, problem) if problem else read_model(path, model, self.shown(path))

    def transcript(self, path: Path, limit: int = EVENT_LIMIT) -> tuple[list[Any], list[str]]:
        problem = self._outside(path)
        return ([], [problem]) if problem else read_transcript(path, self.shown(path), limit)


@dataclass(frozen=True, slots=True)
class FileEntry:
    """A file shown on the page: ``rel`` is its path below the folder listed, ``ref`` below the workspace."""

    rel: str
    ref: str
    path: Path
    size: int

    @property
    def image_type(self) -> str | None:
        return IMAGE_TYPES.get(self.path.suffix.lower())

    def text(self) -> tuple[str | None, str | None]:
        """The file's text, or ``(None, None)`` when it looks binary. UTF-8 (invalid bytes replaced); with a
        byte-order mark, UTF-16 or UTF-32; text in a legacy 8-bit encoding as Windows-1252, saying so."""
        try:
            with self.path.open("rb") as handle:
                head = handle.read(8192)
        except OSError as exc:
            return None, f"{self.rel}: cannot be read ({exc.strerror or exc})"
        encoding = _bom_encoding(head)
        if encoding is not None:
            return _decode_file(self.path, encoding, f"{self.rel}: {encoding.upper()} text")
        if b"\0" in head:
            return None, None
        try:
            head.decode("utf-8")
        except UnicodeDecodeError as exc:
            if exc.start < len(head) - 4:  # not just a character cut at the end of the sample
                if not _LEGACY_TEXT.fullmatch(head):
                    return None, None
                return _decode_file(self.path, "cp1252", f"{self.rel}: not UTF-8, shown as Windows-1252")
        return read_text(self.path, 200_000)

    def data_uri(self) -> str | None:
        """An image as a ``data:`` URI for a static page (None when too large or unreadable)."""
        kind = self.image_type
        if kind is None or self.size > IMAGE_EMBED_LIMIT:
            return None
        try:
            return f"data:{kind};base64," + base64.b64encode(self.path.read_bytes()).decode("ascii")
        except OSError:
            return None


# bytes of a text in a legacy 8-bit encoding: no control characters but tab, line feed, form feed and return
_LEGACY_TEXT = re.compile(rb"[\t\n\f\r\x20-\x7e\x80-\xff]*")
_BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF8, "utf-8-sig"),
         (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))


def _bom_encoding(head: bytes) -> str | None:
    return next((encoding for bom, encoding in _BOMS if head.startswith(bom)), None)


def _decode_file(path: Path, encoding: str, note: str, limit: int = 200_000) -> tuple[str | None, str | None]:
    """The text of a file in ``encoding`` (characters it cannot hold replaced), cut at ``limit`` bytes."""
    try:
        data = _read_head(path, limit)
    except OSError as exc:
        return None, f"{path.name}: cannot be read ({exc.strerror or exc})"
    text = _masked_head(data, limit, encoding)
    if len(data) > limit:
        return text, f"{note}; longer than {limit:,} bytes, only the start is shown"
    return text, None if encoding == "utf-8-sig" else note


def list_files(folder: Path, root: Path, *, skip: frozenset[str] = frozenset(),
               limit: int = FILE_LIMIT) -> tuple[list[FileEntry], int]:
    """Regular files below ``folder`` (sorted, without symlinks, at most ``limit``) and how many more there
    were. Names in ``skip`` are left out at the top level."""
    found: list[FileEntry] = []
    more = 0
    if not folder.is_dir() or not inside(root, folder):
        return found, more
    for current, dirs, names in os.walk(folder):
        dirs.sort()
        base = Path(current)
        for name in sorted(names):
            path = base / name
            rel = path.relative_to(folder).as_posix()
            if base == folder and name in skip:
                continue
            try:
                info = path.lstat()
            except OSError:
                continue
            if not stat.S_ISREG(info.st_mode):  # a symlink, a FIFO (reading it would wait for ever), a device
                continue
            size = info.st_size
            if len(found) >= limit:
                more += 1
                continue
            found.append(FileEntry(rel=rel, ref=path.relative_to(root).as_posix(), path=path, size=size))
    return found, more


@dataclass(slots=True)
class OpenFile:
    """A regular file below a workspace, opened once: what is served is what was checked (no path is opened
    again, so a symlink swapped in after the check is never followed)."""

    fd: int
    name: str
    size: int

    def chunks(self, masked: bool, size: int = 1 << 16) -> Iterator[bytes]:
        """Its bytes (with ``masked``, the known secrets masked, also where one straddles two chunks); the file
        is closed once read, or when the reader stops."""
        secrets = shown_secrets() if masked else ()
        keep = max(0, longest_form(secrets) - 1)
        tail = b""
        try:
            while chunk := os.read(self.fd, size):
                if not secrets:
                    yield chunk
                    continue
                data = mask_bytes(tail + chunk, secrets)
                split = max(0, len(data) - keep)
                tail = data[split:]
                if split:
                    yield data[:split]
            if tail:
                yield tail
        finally:
            self.close()

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


_NOFOLLOW = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK  # O_NONBLOCK: a FIFO never waits


def open_below(root: Path, ref: str) -> OpenFile | None:
    """The regular file ``ref`` (a ``/`` path relative to ``root``) opened for reading, or None when it is not
    one: each component is opened relative to the folder before it without following a symlink, and the file is
    checked on the opened descriptor, so nothing outside ``root`` (and no FIFO or device) is ever read."""
    parts = ref.split("/")
    if not ref or any(part in ("", ".", "..") or "\0" in part for part in parts) or "\\" in ref:
        return None
    try:
        current = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        for part in parts[:-1]:
            folder = os.open(part, _NOFOLLOW | os.O_DIRECTORY, dir_fd=current)
            os.close(current)
            current = folder
        fd = os.open(parts[-1], _NOFOLLOW, dir_fd=current)
    except (OSError, ValueError):  # a symlink (ELOOP), not a folder, too long a name, not there
        os.close(current)
        return None
    os.close(current)
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        return None
    os.set_blocking(fd, True)
    return OpenFile(fd, parts[-1], info.st_size)
