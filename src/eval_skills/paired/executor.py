"""The executor interface: a run spec goes in, a run output comes out.

A :class:`RunSpec` is self-contained data: the run's id, the prompt, the fixture files and the skills to
install (their bytes, not paths), and its limits. An :class:`Executor` takes an iterator of specs and yields
one :class:`RunOutput` per spec, **in the order they finish**; it records nothing. The caller (the paired
pipeline) writes the files, the store rows and the grades. Because nothing in a spec points at this machine,
a backend that runs agents elsewhere needs no change to grading, statistics or the store.

The executor pulls the next spec only when it can start it, and a slot that just finished a run pulls again
only after the caller has taken that run's output, so the caller decides at each start, knowing every finished
run, whether to go on (a token budget, Ctrl-C): it simply stops yielding specs. Closing the output iterator
(``aclose``) cancels the runs in flight.

The backends: :class:`~eval_skills.paired.local.LocalExecutor` (this machine, ``--concurrency`` at once) and
:class:`~eval_skills.paired.ray_executor.RayExecutor` (tasks on a Ray cluster, as many at once as it takes).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from ..agents import RawOutput, TokenUsage
from ..agents.bundle import MAX_BUNDLE_BYTES, SkillBundle, read_bundle
from ..formats.workspace import TranscriptEvent

__all__ = ["MAX_BUNDLE_BYTES", "Executor", "OutputFile", "RunOutput", "RunSpec", "SkillBundle", "read_bundle"]


@dataclass(frozen=True, slots=True)
class RunSpec:
    """One agent run: ``files`` are written to the root of a fresh working folder by name, ``skills`` are
    installed in it, then the agent gets ``prompt``; ``timeout`` (seconds), ``max_turns`` and ``model`` are
    its limits and settings."""

    run_id: str
    prompt: str
    files: Mapping[str, bytes] = field(default_factory=dict)
    skills: tuple[SkillBundle, ...] = ()
    timeout: float = 600.0
    max_turns: int | None = None
    model: str | None = None


@dataclass(frozen=True, slots=True)
class OutputFile:
    """A file the agent created, modified or deleted (``path`` relative to its working folder, ``/``).
    ``data`` is None for a deleted file and for one too large to bring back (``note`` says so)."""

    path: str
    kind: Literal["created", "modified", "deleted"]
    size: int | None
    data: bytes | None = None
    note: str = ""


@dataclass(slots=True)
class RunOutput:
    """What one run produced. ``status`` is ``ok``, ``error`` (the agent failed; ``error`` says why) or
    ``timeout``; ``response`` is None when there is none."""

    run_id: str
    status: Literal["ok", "error", "timeout"]
    response: str | None
    error: str | None
    transcript: list[TranscriptEvent]
    files: list[OutputFile]
    duration_s: float
    usage: TokenUsage
    started_at: str
    finished_at: str
    agent: str = ""
    model: str | None = None
    skills_invoked: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    exit_code: int | None = None
    raw_stdout: RawOutput | None = None  # the agent's stdout byte for byte, kept as the run's stdout.txt
    isolation: dict[str, Any] = field(default_factory=dict)  # what the run could see (the agent's sandbox)
    stderr_tail: str = ""  # the end of the agent's stderr
    installed_skills: list[str] = field(default_factory=list)  # the skills installed in the run's folder


class Executor(Protocol):
    """Runs specs and yields their outputs as they finish. It pulls a spec only when it can start it."""

    def run(self, specs: Iterator[RunSpec]) -> AsyncIterator[RunOutput]: ...
