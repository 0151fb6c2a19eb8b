"""The agent interface: one prompt, one workspace, the skills installed in it; everything the agent did.

:class:`Agent` holds the machinery every backend shares (installing skills, snapshotting the workspace to
find the files the agent changed, timing, the final record); a backend says where it installs project
skills and how it executes: :class:`~eval_skills.agents.process.ProcessAgent` runs a program and reads its
output with an :class:`~eval_skills.agents.output.OutputParser`.

Agent output is untrusted: whatever an agent does, :meth:`Agent.run` returns an :class:`AgentResult` (a
crash, a non-zero exit, a timeout or no final response is a status with its reason, never an exception).
Only bad input (a skill folder that does not exist, a workspace that is not a folder) raises
:class:`~eval_skills.errors.InputError`, before anything runs.
"""

from __future__ import annotations

import asyncio
import math
import os
import time
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..errors import InputError
from ..formats.untrusted import clean_text, clean_value
from ..formats.workspace import SkillEvent, Timing, ToolCallEvent, TranscriptEvent, UsageEvent
from ..masking import cut, holds, mask, mask_value, secret_values
from ..procs import describe_exit
from .output import RawOutput
from .workdir import FileChange, SkillSource, changed_files, check_subdir, install_skills, snapshot

__all__ = [
    "Agent",
    "AgentRequest",
    "AgentResult",
    "AgentStatus",
    "Execution",
    "FileChange",
    "SkillSource",
    "TokenUsage",
]

AgentStatus = Literal["ok", "error", "timeout"]
STDERR_LIMIT = 1 << 16  # characters of a run's stderr tail kept (its stderr is read into a ring of this size)


@dataclass(frozen=True, init=False)
class AgentRequest:
    """One agent run.

    ``workspace`` is the run's current directory, prepared by the caller (fixtures copied in); ``skills``
    are skill folders (or :class:`SkillSource` to install one under another name), copied into the
    workspace before the run. ``timeout`` is in seconds; ``max_turns`` and ``model`` are passed to agents
    that take them (None: the agent's default).
    """

    prompt: str
    workspace: Path
    skills: tuple[SkillSource, ...] = ()
    timeout: float = 600.0
    max_turns: int | None = None
    model: str | None = None

    def __init__(self, prompt: str, workspace: Path | str, skills: Iterable[Path | str | SkillSource] = (), *,
                 timeout: float = 600.0, max_turns: int | None = None, model: str | None = None) -> None:
        object.__setattr__(self, "prompt", clean_text(prompt))  # a lone surrogate cannot be written to the agent
        object.__setattr__(self, "workspace", Path(workspace))
        object.__setattr__(self, "skills", tuple(SkillSource.of(s) for s in skills))
        if not (timeout > 0 and math.isfinite(timeout)):
            raise InputError(f"timeout must be a positive number of seconds, not {timeout!r}", field="timeout")
        if max_turns is not None and max_turns < 1:
            raise InputError(f"max turns must be at least 1, not {max_turns}", field="max_turns")
        object.__setattr__(self, "timeout", float(timeout))
        object.__setattr__(self, "max_turns", max_turns)
        object.__setattr__(self, "model", model)


@dataclass(slots=True)
class TokenUsage:
    """Tokens and cost of one run. ``input_tokens`` excludes cache reads and writes; ``total_tokens`` is
    what the agent reported as its total, else the sum of the four counts. ``measurement`` is
    ``measured`` (the agent reported it) or ``estimated`` (the agent reported nothing: about 4 characters
    per token of the prompt and the response, no cost)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    total_tokens: int = 0
    cost_usd: float | None = None
    measurement: Literal["measured", "estimated"] = "measured"

    @classmethod
    def from_events(cls, events: Iterable[UsageEvent]) -> TokenUsage | None:
        """The sum of the usage events that report a number (None when there is none)."""
        usage: TokenUsage | None = None
        for event in events:
            if not event.reported:
                continue
            usage = usage or cls()
            parts = (event.input_tokens, event.output_tokens, event.cache_read_tokens, event.cache_write_tokens)
            usage.input_tokens += parts[0]
            usage.output_tokens += parts[1]
            usage.cache_read_tokens += parts[2]
            usage.cache_write_tokens += parts[3]
            usage.total_tokens += event.total_tokens if event.total_tokens is not None else sum(parts)
            if event.cost_usd is not None:
                usage.cost_usd = (usage.cost_usd or 0.0) + event.cost_usd
        return usage

    @classmethod
    def estimate(cls, prompt: str, response: str | None) -> TokenUsage:
        tokens_in, tokens_out = math.ceil(len(prompt) / 4), math.ceil(len(response or "") / 4)
        return cls(input_tokens=tokens_in, output_tokens=tokens_out, total_tokens=tokens_in + tokens_out,
                   measurement="estimated")

    def to_json(self) -> dict[str, Any]:
        return {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
                "cache_read_tokens": self.cache_read_tokens, "cache_write_tokens": self.cache_write_tokens,
                "total_tokens": self.total_tokens, "cost_usd": self.cost_usd, "measurement": self.measurement}


@dataclass
class Execution:
    """What a backend's :meth:`Agent.execute` hands back to the shared machinery."""

    transcript: list[TranscriptEvent] = field(default_factory=list)
    response: str | None = None
    usage: TokenUsage | None = None  # measured, when the agent reported any
    timed_out: bool = False
    error: str | None = None  # why the run failed (could not start, the agent reported an error, ...)
    exit_code: int | None = None
    stderr_tail: str = ""
    raw_stdout: RawOutput | None = None
    warnings: list[str] = field(default_factory=list)


@dataclass
class AgentResult:
    """Everything one run produced. ``response`` is None (never "") when the agent gave none;
    ``error`` says why a run is ``error`` or ``timeout``, with the tail of stderr."""

    agent: str
    model: str | None
    status: AgentStatus
    response: str | None
    error: str | None
    transcript: list[TranscriptEvent]
    files: list[FileChange]
    duration_s: float
    usage: TokenUsage
    exit_code: int | None
    stderr_tail: str
    raw_stdout: RawOutput
    installed_skills: list[str]
    warnings: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def skill_events(self) -> list[SkillEvent]:
        return [e for e in self.transcript if isinstance(e, SkillEvent)]

    @property
    def skills_invoked(self) -> list[str]:
        """The names of the skills the agent invoked, in first-use order, each once."""
        return list(dict.fromkeys(e.skill for e in self.skill_events))

    @property
    def tool_calls(self) -> list[ToolCallEvent]:
        return [e for e in self.transcript if isinstance(e, ToolCallEvent)]

    def timing(self) -> Timing:
        """``timing.json`` of the run."""
        return Timing(total_tokens=self.usage.total_tokens, duration_ms=round(self.duration_s * 1000),
                      total_duration_seconds=round(self.duration_s, 3), token_measurement=self.usage.measurement)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready summary (the transcript as event objects; the raw stdout by size and file)."""
        return {
            "agent": self.agent, "model": self.model, "status": self.status, "response": self.response,
            "error": self.error, "transcript": [e.model_dump(mode="json") for e in self.transcript],
            "files": [{"path": f.name, "kind": f.kind, "size": f.size} for f in self.files],
            "duration_s": self.duration_s, "usage": self.usage.to_json(), "exit_code": self.exit_code,
            "stderr_tail": self.stderr_tail, "stdout_bytes": self.raw_stdout.size,
            "installed_skills": self.installed_skills, "warnings": self.warnings,
        }


class Agent(ABC):
    """An agent backend. Subclasses set :attr:`name` and :attr:`skills_subdir` and implement :meth:`execute`;
    callers use :meth:`run` (safe to call concurrently, one workspace per call)."""

    name: str = "agent"
    has_stderr = True  # a program whose stderr tail ends an error; False for agents that run no program
    skills_subdir: str = ".agents/skills"  # where project skills go, relative to the workspace
    model: str | None = None  # the model used when a request names none (None: the agent's own default)
    env: dict[str, str]  # variables added to the caller's environment

    def __init__(self, *, skills_subdir: str | None = None, env: Mapping[str, str] | None = None) -> None:
        if skills_subdir is not None:
            self.skills_subdir = check_subdir(skills_subdir)
        self.env = dict(env or {})

    def check(self) -> None:  # noqa: B027 - optional hook
        """Raise InputError when the agent cannot run here (its program is missing, a key is unset)."""

    def user_skill_dirs(self) -> list[Path]:
        """Folders the agent also loads skills from whatever the workspace holds (user level)."""
        return [Path.home() / self.skills_subdir]

    def user_level_skills(self, names: Iterable[str]) -> list[Path]:
        """Skills of these names installed at user level: the agent may load them in every run, so a
        baseline without the skill is not clean."""
        return [folder / name for folder in self.user_skill_dirs() for name in names
                if (folder / name / "SKILL.md").is_file()]

    def child_env(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        """The caller's environment (agents need their keys), plus :attr:`env`, plus ``extra``."""
        return {**os.environ, **self.env, **(extra or {})}

    def secrets(self) -> tuple[str, ...]:
        """The secret values an agent run may have seen (those of its environment and of this process's),
        masked as ``***`` in everything kept of a run: see :mod:`eval_skills.masking`."""
        return secret_values({**os.environ, **self.env, **self.child_env()})

    @abstractmethod
    async def execute(self, request: AgentRequest, workspace: Path, installed: list[str]) -> Execution:
        """Run the agent in ``workspace`` (absolute; the skills ``installed`` by name are in place)."""

    async def run(self, request: AgentRequest) -> AgentResult:
        workspace = request.workspace.resolve()
        if not workspace.is_dir():
            raise InputError("the workspace is not a folder", file=str(request.workspace))
        try:
            installed = await asyncio.to_thread(install_skills, workspace, self.skills_subdir, request.skills)
        except OSError as exc:  # the workspace is in the way (a file where the skills folder goes, no space left)
            failed = Execution(error=f"could not install the skills in the workspace: {exc}")
            return self._result(request, failed, 0.0, [], [])
        excluded = {f"{self.skills_subdir}/{name}" for name in installed} | {".git"}
        before = await asyncio.to_thread(snapshot, workspace, excluded)
        started = time.monotonic()
        execution = await self.execute(request, workspace, installed)
        duration = time.monotonic() - started
        after = await asyncio.to_thread(snapshot, workspace, excluded)
        return self._result(request, execution, duration, changed_files(before, after), installed)

    def _result(self, request: AgentRequest, ex: Execution, duration: float, files: list[FileChange],
                installed: list[str]) -> AgentResult:
        response = ex.response if ex.response and ex.response.strip() else None
        status: AgentStatus = "ok"
        error = ex.error
        if ex.timed_out:
            status, error = "timeout", f"timed out after {request.timeout:g} s"
        elif error is None and ex.exit_code not in (0, None):
            error = f"the agent {describe_exit(ex.exit_code)}"
        elif error is None and response is None:
            error = "the agent gave no final response"
        # what an agent hands over may hold lone surrogates (an SDK's parse of "\ud800"): kept as U+FFFD, so the
        # run's files, transcript and store row can be written; and the secrets of its environment (an agent that
        # prints its environment) as ***, so they never reach a transcript, a report or the store. Texts are
        # masked whole before they are cut, so no part of a key survives a cut.
        secrets = self.secrets()

        def text(value: str) -> str:
            return mask(clean_text(value), secrets)

        if error is not None:
            status = "timeout" if ex.timed_out else "error"
            lines = " | ".join(line.strip() for line in ex.stderr_tail.splitlines() if line.strip())
            tail = cut(clean_text(lines), 500, secrets, keep="tail", cut_before=True)
            if self.has_stderr and ex.raw_stdout is not None:  # a program was started (or tried)
                error = text(error) + (f"; stderr: {tail}" if tail else "; stderr was empty")
        usage = ex.usage or TokenUsage.estimate(request.prompt, response)
        raw = ex.raw_stdout or RawOutput()
        raw.secrets = secrets

        return AgentResult(agent=self.name, model=request.model or self.model, status=status,
                           response=None if response is None else text(response),
                           error=None if error is None else text(error),
                           transcript=[_writable(e, secrets) for e in ex.transcript], files=files,
                           duration_s=duration, usage=usage, exit_code=ex.exit_code,
                           stderr_tail=cut(clean_text(ex.stderr_tail), STDERR_LIMIT, secrets, keep="tail",
                                           cut_before=True),
                           raw_stdout=raw, installed_skills=installed,
                           warnings=[text(w) for w in ex.warnings])


def _writable(event: TranscriptEvent, secrets: tuple[str, ...]) -> TranscriptEvent:
    """The event as it can be written: lone surrogates replaced, secrets masked (only when it holds any)."""
    try:
        dumped = event.model_dump_json()
    except ValueError:
        dumped = None
    if dumped is not None and not holds(dumped, secrets):
        return event
    data = clean_value(event.model_dump())
    return type(event).model_validate(mask_value(data, secrets))

