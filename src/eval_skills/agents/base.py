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
from typing import TYPE_CHECKING, Any, Literal

from ..errors import InputError
from ..formats.untrusted import clean_text, clean_value
from ..formats.workspace import SkillEvent, Timing, ToolCallEvent, TranscriptEvent
from ..masking import cut, holds, mask, mask_value, secret_values
from ..procs import describe_exit
from ..sandbox import Sandbox, allowed_environment, create_sandbox
from .bundle import SkillBundle
from .output import RawOutput
from .usage import TokenUsage
from .workdir import Entry, FileChange, SkillSource, changed_files, check_subdir, install_skills, snapshot, write_files

if TYPE_CHECKING:
    from .workdir import Budget

__all__ = [
    "Agent",
    "AgentRequest",
    "AgentResult",
    "AgentStatus",
    "Execution",
    "FileChange",
    "SkillBundle",
    "SkillSource",
    "TokenUsage",
]

AgentStatus = Literal["ok", "error", "timeout"]
STDERR_LIMIT = 1 << 16  # characters of a run's stderr tail kept (its stderr is read into a ring of this size)


@dataclass(frozen=True, init=False)
class AgentRequest:
    """One agent run.

    ``workspace`` is the run's current directory, prepared by the caller (fixtures copied in); ``skills``
    are skill folders (or :class:`SkillSource` to install one under another name, or :class:`SkillBundle`:
    a skill read once, written from its bytes), installed in the workspace before the run; ``files`` are
    written into it first (relative ``/`` paths to their bytes: fixtures).
    ``timeout`` is in seconds; ``max_turns`` and ``model`` are passed to agents that take them (None: the
    agent's default).
    """

    prompt: str
    workspace: Path
    skills: tuple[SkillSource | SkillBundle, ...] = ()
    timeout: float = 600.0
    max_turns: int | None = None
    model: str | None = None
    files: Mapping[str, bytes] = field(default_factory=dict)

    def __init__(self, prompt: str, workspace: Path | str,
                 skills: Iterable[Path | str | SkillSource | SkillBundle] = (), *,
                 timeout: float = 600.0, max_turns: int | None = None, model: str | None = None,
                 files: Mapping[str, bytes] | None = None) -> None:
        object.__setattr__(self, "prompt", clean_text(prompt))  # a lone surrogate cannot be written to the agent
        object.__setattr__(self, "workspace", Path(workspace))
        object.__setattr__(self, "skills", tuple(s if isinstance(s, SkillBundle) else SkillSource.of(s)
                                                 for s in skills))
        if not (timeout > 0 and math.isfinite(timeout)):
            raise InputError(f"timeout must be a positive number of seconds, not {timeout!r}", field="timeout")
        if max_turns is not None and max_turns < 1:
            raise InputError(f"max turns must be at least 1, not {max_turns}", field="max_turns")
        object.__setattr__(self, "timeout", float(timeout))
        object.__setattr__(self, "max_turns", max_turns)
        object.__setattr__(self, "model", model)
        object.__setattr__(self, "files", files or {})




@dataclass
class Execution:
    """What a backend's :meth:`Agent.execute` hands back to the shared machinery."""

    transcript: list[TranscriptEvent] = field(default_factory=list)
    response: str | None = None
    usage: TokenUsage | None = None  # measured, when the agent reported any
    timed_out: bool = False
    unfinished: str | None = None  # the agent's output ended before its own end event (what was missing)
    error: str | None = None  # why the run failed (could not start, the agent reported an error, ...)
    exit_code: int | None = None
    stderr_tail: str = ""
    raw_stdout: RawOutput | None = None
    warnings: list[str] = field(default_factory=list)


@dataclass
class Prepared:
    """A workspace made ready for one run by :meth:`Agent.prepare`: the skills installed (by name), the
    folders a snapshot leaves out, the first snapshot, the skill files not installed and why; ``failed`` when
    it could not be made ready."""

    request: AgentRequest
    workspace: Path
    installed: list[str] = field(default_factory=list)
    excluded: set[str] = field(default_factory=set)
    before: dict[str, Entry] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)
    failed: Execution | None = None


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
    isolation: dict[str, Any] = field(default_factory=dict)  # what the run could see: Agent.isolation()

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
            "installed_skills": self.installed_skills, "warnings": self.warnings, "isolation": self.isolation,
        }


class Agent(ABC):
    """An agent backend. Subclasses set :attr:`name` and :attr:`skills_subdir` and implement :meth:`execute`;
    callers use :meth:`run` (safe to call concurrently, one workspace per call)."""

    name: str = "agent"
    has_stderr = True  # a program whose stderr tail ends an error; False for agents that run no program
    skills_subdir: str = ".agents/skills"  # where project skills go, relative to the workspace
    own_files: frozenset[str] = frozenset()  # files the program itself creates in every workspace: not the agent's
    model: str | None = None  # the model used when a request names none (None: the agent's own default)
    env: dict[str, str]  # variables added to the caller's environment
    sandboxable = False  # whether a sandbox can confine it (it runs a program)
    key_variables: tuple[str, ...] = ()  # what a sandboxed run of it gets from the caller's environment
    home_variable_names: tuple[str, ...] = ()  # variables it sets itself to its run's private folder
    sandbox: Sandbox = create_sandbox("none")

    def __init__(self, *, skills_subdir: str | None = None, env: Mapping[str, str] | None = None) -> None:
        if skills_subdir is not None:
            self.skills_subdir = check_subdir(skills_subdir)
        self.env = dict(env or {})

    def check(self) -> None:  # noqa: B027 - optional hook
        """Raise InputError when the agent cannot run here (its program is missing, a key is unset)."""

    def cli_version(self) -> str | None:
        """The version the agent's program reports (``claude --version``), asked once and kept; None when it
        runs no program of its own, or the version cannot be read."""
        return None

    def use_sandbox(self, sandbox: Sandbox) -> None:
        """Confine every later run with ``sandbox`` (checked by :meth:`check`)."""
        if sandbox.kind != "none" and not self.sandboxable:
            raise InputError(f"the {self.name} agent runs no program for a sandbox to confine (its tools stay in "
                             "the workspace)", field="--sandbox", hint="use --sandbox none with this agent")
        self.sandbox = sandbox
        self._isolation: dict[str, Any] | None = None
        self._home: dict[str, bytes] | None = None

    def home_files(self) -> dict[str, bytes]:
        """What a private home folder holds for this agent to authenticate and start, by path relative to it
        (read once, at the first run)."""
        if getattr(self, "_home", None) is None:
            self._home = self.read_home_files()
        return dict(self._home or {})

    def read_home_files(self) -> dict[str, bytes]:
        """The files of :meth:`home_files`, read from the user's home (backends name theirs)."""
        return {}

    def home_binds(self) -> dict[str, Path]:
        """Folders of the user's home a sandboxed run sees read-only in its private home, by path relative to
        it (an agent's cache of packages it would otherwise download in every run); default none."""
        return {}

    def sandbox_variables(self) -> list[str]:
        """The names of the variables a sandboxed run is given (the agent's own and those added)."""
        return [*self.key_variables, *self.env, *self.sandbox.settings.env]

    def isolation(self) -> dict[str, Any]:
        """What isolation this agent's runs have (names, never values), for their records."""
        if getattr(self, "_isolation", None) is None:
            names = list(allowed_environment(self.child_env(), self.sandbox_variables()))
            bound = [f"{rel}/ (read-only)" for rel in self.home_binds()] if self.sandbox.private_home else []
            self._isolation = self.sandbox.describe([*names, "HOME", "TMPDIR", *self.home_variable_names],
                                                   [*self.home_files(), *bound])
        return dict(self._isolation or {})

    def user_skill_dirs(self, env: Mapping[str, str] | None = None) -> list[Path]:
        """Folders the agent also loads skills from whatever the workspace holds (user level); ``env`` is the
        environment it runs with (default: ours)."""
        return [Path.home() / self.skills_subdir]

    def user_level_skills(self, names: Iterable[str]) -> list[Path]:
        """Skills of these names installed at user level that the runs can see: the agent may load them in
        every run, so a baseline without the skill is not clean. Under a sandbox with a private home, only
        those outside the home folder (such as ``/etc/codex/skills``) or bound into the runs count."""
        folders = self.user_skill_dirs()
        if self.sandbox.private_home:
            env = allowed_environment(self.child_env(), self.sandbox_variables())
            home = Path.home()
            folders = [f for f in self.user_skill_dirs(env) if not f.is_relative_to(home) or self.sandbox.exposes(f)]
        return [folder / name for folder in folders for name in names if (folder / name / "SKILL.md").is_file()]

    def child_env(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        """The caller's environment (agents need their keys), plus :attr:`env`, plus ``extra``."""
        return {**self._environment()[0], **(extra or {})}

    def _environment(self) -> tuple[dict[str, str], tuple[str, ...]]:
        """The caller's environment with :attr:`env` over it, and the secrets it holds: read at the first run
        and kept (while :attr:`env` stays the same), as copying and scanning it costs more than a small run's
        other work."""
        key = tuple(self.env.items())
        kept = getattr(self, "_environ", None)
        if kept is None or kept[0] != key:
            environ = {**os.environ, **self.env}
            kept = self._environ = (key, environ, secret_values(environ))
        return kept[1], kept[2]

    def preview(self, request: AgentRequest) -> dict[str, Any]:
        """How a run of ``request`` would go, without running it (nothing is started, nothing written): the
        agent, its model, where its skills go (``skills_dir``, relative to the run's folder), the user-level
        folders it also loads skills from. Backends add what they start (``command``, ``endpoint``); every
        secret of the agent's environment found in it is masked as ``***``."""
        return {"agent": self.name, "model": request.model or self.model, "max_turns": request.max_turns,
                "timeout_s": request.timeout, "skills_dir": self.skills_subdir,
                "user_skill_dirs": [str(folder) for folder in self.user_skill_dirs()]}

    def secrets(self) -> tuple[str, ...]:
        """The secret values an agent run may have seen (those of its environment and of this process's),
        masked as ``***`` in everything kept of a run: see :mod:`eval_skills.masking`."""
        return self._environment()[1]

    @abstractmethod
    async def execute(self, request: AgentRequest, workspace: Path, installed: list[str]) -> Execution:
        """Run the agent in ``workspace`` (absolute; the skills ``installed`` by name are in place)."""

    async def run(self, request: AgentRequest) -> AgentResult:
        """Run ``request``: :meth:`prepare` and :meth:`conclude` (the file work) each in one trip to a thread,
        :meth:`perform` on the event loop."""
        prepared = await asyncio.to_thread(self.prepare, request)
        execution, duration = await self.perform(prepared)
        return await asyncio.to_thread(self.conclude, prepared, execution, duration)

    def prepare(self, request: AgentRequest) -> Prepared:
        """Make the workspace ready (blocking: call it in a thread): the request's files written, the skills
        installed, the first snapshot taken. A workspace that is in the way (a file where the skills folder
        goes, no space left) gives a prepared run that fails with the reason."""
        workspace = request.workspace.resolve()
        if not workspace.is_dir():
            raise InputError("the workspace is not a folder", file=str(request.workspace))
        try:
            write_files(workspace, request.files)
            skipped: list[str] = []
            installed = install_skills(workspace, self.skills_subdir, request.skills, skipped)
            excluded = {f"{self.skills_subdir}/{name}" for name in installed} | {".git"}
            before = snapshot(workspace, excluded, request.files)  # the files just written: not read back
            return Prepared(request, workspace, installed, excluded, before, skipped)
        except OSError as exc:
            what = "install the skills in" if not request.files else "write the files and skills into"
            return Prepared(request, workspace, failed=Execution(error=f"could not {what} the workspace: {exc}"))

    async def perform(self, prepared: Prepared) -> tuple[Execution, float]:
        """Run the agent in the prepared workspace: what it did, and how long it took (seconds)."""
        if prepared.failed is not None:
            return prepared.failed, 0.0
        started = time.monotonic()
        execution = await self.execute(prepared.request, prepared.workspace, prepared.installed)
        return execution, time.monotonic() - started

    def conclude(self, prepared: Prepared, execution: Execution, duration: float, *,
                 budget: Budget | None = None, contents: bool = False) -> AgentResult:
        """The run's result (blocking: call it in a thread): the second snapshot (within ``budget``, else
        ``TreeTooLarge``), the files the agent changed (with ``contents``, their bytes), its output masked."""
        if prepared.failed is not None:
            return self._result(prepared.request, execution, 0.0, [], [])
        kept: dict[str, bytes] | None = {} if contents else None
        after = snapshot(prepared.workspace, prepared.excluded, budget=budget, since=prepared.before, kept=kept)
        files = [change for change in changed_files(prepared.before, after, kept)
                 if not (change.kind == "created" and change.path in self.own_files)]
        result = self._result(prepared.request, execution, duration, files, prepared.installed)
        result.warnings[:0] = prepared.skipped  # the skill files not installed, and why
        result.isolation = self.isolation()
        return result

    def _result(self, request: AgentRequest, ex: Execution, duration: float, files: list[FileChange],
                installed: list[str]) -> AgentResult:
        response = ex.response if ex.response and ex.response.strip() else None
        status: AgentStatus = "ok"
        error = ex.error
        if ex.timed_out:
            status, error = "timeout", f"timed out after {request.timeout:g} s"
        elif error is None and ex.exit_code not in (0, None):
            error = f"the agent {describe_exit(ex.exit_code)}" + (f"; {ex.unfinished}" if ex.unfinished else "")
        elif error is None and ex.unfinished:  # whatever the exit code says, the run did not finish
            error = f"{ex.unfinished}: the run did not finish"
        elif error is None and response is None:
            error = "the agent gave no final response"
        if ex.unfinished:  # a remark made along the way is no answer
            response = None
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

