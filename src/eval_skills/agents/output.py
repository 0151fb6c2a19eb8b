"""Reading an agent's stdout: the raw bytes kept beside the record, and output parsers chosen by name.

A parser is fed the stdout one line at a time as it arrives (``feed``, bytes without the newline) and
gives the transcript, final response and usage at the end (``finish``, which may also read the whole raw
output for formats that are not line based). Parsers are registered by name in :data:`PARSERS`
(a :class:`~eval_skills.registry.Registry`) so a backend and the ``command`` backend's output option
share them. Output is untrusted: a line a parser cannot read is a noted problem, never an exception. JSON in
it is read by :func:`read_json` (as every reply from outside is read: bytes that are not UTF-8 and lone
surrogates become U+FFFD; nesting deeper than :data:`EVENT_DEPTH` is refused), so every event can be written
to a transcript and the store.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import weakref
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from .._atomic import write_file
from ..formats.untrusted import UnusableJSON, loads_untrusted
from ..masking import longest_form, mask_bytes
from ..procs import excerpt
from ..registry import Registry

if TYPE_CHECKING:
    from ..formats.workspace import TranscriptEvent
    from .usage import TokenUsage

__all__ = ["EVENT_DEPTH", "PARSERS", "OutputParser", "ParseContext", "ParsedOutput", "RawOutput", "create_parser",
           "read_json"]

SPILL_BYTES = 1 << 20  # raw stdout beyond this goes to a temporary file
MAX_PROBLEMS = 20  # problems kept word for word; the rest are counted
EVENT_DEPTH = 128  # the deepest JSON read from an agent: its events sit inside records that must serialise


def read_json(data: bytes | str) -> Any:
    """JSON from an agent's output, read like every reply from outside; NotJSON (a ValueError) saying why not."""
    return loads_untrusted(data, max_depth=EVENT_DEPTH)


class RawOutput:
    """An agent's stdout, byte for byte: in memory up to ``spill_at`` bytes, then in a temporary file
    (removed when this object is collected, unless :meth:`save` moved it)."""

    def __init__(self, spill_at: int = SPILL_BYTES) -> None:
        self.spill_at = spill_at
        self.size = 0
        self._memory = bytearray()
        self._file: IO[bytes] | None = None
        self.path: Path | None = None  # the spill file, once spilled
        self._cleanup: weakref.finalize | None = None
        self.secrets: tuple[str, ...] = ()  # masked as *** when saved (the agent's keys, should it print them)

    def write(self, chunk: bytes) -> None:
        self.size += len(chunk)
        if self._file is None and len(self._memory) + len(chunk) <= self.spill_at:
            self._memory += chunk
            return
        if self._file is None:
            handle, name = tempfile.mkstemp(prefix="eval-skills-stdout-", suffix=".log")
            self._file = os.fdopen(handle, "wb")
            self.path = Path(name)
            self._cleanup = weakref.finalize(self, _remove, self.path)
            self._file.write(self._memory)
            self._memory = bytearray()
        self._file.write(chunk)

    def close(self) -> None:
        if self._file is not None and not self._file.closed:
            self._file.close()

    @property
    def spilled(self) -> bool:
        return self.path is not None

    def read_bytes(self) -> bytes:
        """All of it (read from the spill file when spilled: mind the size)."""
        if self.path is None:
            return bytes(self._memory)
        self.close()
        return self.path.read_bytes()

    def text(self) -> str:
        return self.read_bytes().decode("utf-8", "replace")

    def save(self, dest: Path | str) -> None:
        """Write it to ``dest``, :attr:`secrets` masked (a spill file holding none is moved there, not copied)."""
        dest = Path(dest)
        if self.path is None:
            write_file(dest, mask_bytes(bytes(self._memory), self.secrets))
            return
        self.close()
        if self.secrets:
            with open(self.path, "rb") as src, open(dest, "wb") as out:
                _mask_stream(src, out, self.secrets)
            return
        shutil.move(self.path, dest)
        if self._cleanup is not None:
            self._cleanup.detach()
        self.path = dest


def _mask_stream(src: IO[bytes], out: IO[bytes], secrets: tuple[str, ...]) -> None:
    """Copy ``src`` to ``out`` with ``secrets`` masked (in every form, see :mod:`eval_skills.masking`), also where
    one straddles two chunks: the last bytes of a chunk, which may begin a secret, are held back and read again
    with the next."""
    keep = longest_form(secrets) - 1
    tail = b""
    while chunk := src.read(1 << 20):
        data = mask_bytes(tail + chunk, secrets)
        cut = max(0, len(data) - keep)
        out.write(data[:cut])
        tail = data[cut:]
    out.write(tail)


def _remove(path: Path) -> None:
    path.unlink(missing_ok=True)


@dataclass(frozen=True, slots=True)
class ParseContext:
    """What a parser may need to recognise skill use: the installed skills and where they are."""

    skills: tuple[str, ...] = ()
    skills_subdir: str = ".agents/skills"
    workspace: Path | None = None


@dataclass
class ParsedOutput:
    transcript: list[TranscriptEvent] = field(default_factory=list)
    response: str | None = None
    usage: TokenUsage | None = None  # None when the agent reported none
    error: str | None = None  # the agent itself reported a failure (an error event, an error result)
    # the output ended before the format's own end event (Claude Code's result line, Codex's turn.completed):
    # what is missing, as "the output ended before ..."; such a run is an error whatever the exit code
    unfinished: str | None = None


class OutputParser(ABC):
    """Reads one run's stdout. A new instance per run."""

    name = "parser"

    def __init__(self, context: ParseContext) -> None:
        self.context = context
        self.problems: list[str] = []
        self.problem_count = 0
        self.lines = 0

    def note(self, problem: str) -> None:
        """Record something in the output that could not be read (kept up to :data:`MAX_PROBLEMS`)."""
        self.problem_count += 1
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(problem)

    def json_line(self, line: bytes) -> tuple[bool, Any]:
        """One stdout line, counted and read as JSON: ``(True, value)``; ``(False, None)`` for a blank line or
        one that is not usable JSON (noted)."""
        self.lines += 1
        line = line.strip()
        if not line:
            return False, None
        try:
            return True, read_json(line)
        except ValueError as exc:
            what = f"is not usable JSON ({exc})" if isinstance(exc, UnusableJSON) else "is not JSON"
            self.note(f"line {self.lines} {what}: {excerpt(line, 80)}")
            return False, None

    @abstractmethod
    def feed(self, line: bytes) -> None:
        """One line of stdout, without its newline. Must not raise on bad input: :meth:`note` it."""

    @abstractmethod
    def finish(self, raw: RawOutput) -> ParsedOutput:
        """The transcript, final response and usage, once stdout is closed."""

    def warnings(self) -> list[str]:
        """The problems, for the run's record."""
        if not self.problem_count:
            return []
        more = self.problem_count - len(self.problems)
        return [f"{self.name} output: {p}" for p in self.problems] + (
            [f"{self.name} output: {more} more unreadable lines"] if more else [])


# name -> "module:Class" (relative to eval_skills.agents), imported when first used
PARSERS: Registry[OutputParser] = Registry("eval_skills.agents", "agent output format", {
    "text": ".parsers.text:TextParser",
    "events": ".parsers.events:EventsParser",
    "claude": ".parsers.claude:ClaudeParser",
    "codex": ".parsers.codex:CodexParser",
    "opencode": ".parsers.opencode:OpenCodeParser",
})


def create_parser(name: str, context: ParseContext) -> OutputParser:
    """A new parser of the format registered as ``name`` (``PARSERS.register(name, "module:Class")`` adds one)."""
    return PARSERS.get(name)(context)
