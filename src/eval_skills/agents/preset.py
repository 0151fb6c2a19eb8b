"""What the agent CLI presets (``claude``, ``codex``, ``opencode``) share: a program found on ``PATH`` (or
given as ``bin``), the prompt written to its stdin, a fixed command line plus the user's extra arguments,
and the output parser of the same name.

Extra arguments come last, and a preset leaves out its own value for a setting the user gives
(``--permission-mode`` for Claude Code, ``--sandbox`` for Codex, ``--format`` for OpenCode, ``--model`` and
``--max-turns``) and its own flag when the user repeats it (``--json``, ``--verbose``), so the user's choice wins
and no flag is given twice (Codex refuses a repeated flag).
"""

from __future__ import annotations

import shlex
import subprocess
from abc import abstractmethod
from collections.abc import Mapping, Sequence
from pathlib import Path

from ..errors import InputError, SkillCrashed
from ..formats.untrusted import clean_text
from ..procs import resolve_argv
from .base import AgentRequest
from .output import OutputParser, ParseContext, create_parser
from .process import Launch, ProcessAgent

__all__ = ["CliAgent", "read_user_file"]

MAX_HOME_FILE = 1 << 20  # a credentials file larger than this is not copied into a private home
VERSION_TIMEOUT = 30.0  # seconds `<program> --version` may take
VERSION_CHARS = 200  # characters of the version line kept


def read_user_file(path: Path) -> bytes | None:
    """A regular file of the user's home (a credentials file), or None when there is none."""
    try:
        if not path.is_file() or path.stat().st_size > MAX_HOME_FILE:
            return None
        return path.read_bytes()
    except OSError:
        return None


class CliAgent(ProcessAgent):
    """An agent CLI run non-interactively. Subclasses set :attr:`name` (also the parser's name and the
    default program), :attr:`skills_subdir`, and build the arguments."""

    program: str = ""  # the program looked up on PATH when no bin is given
    last_args: tuple[str, ...] = ()  # after the extra arguments

    def __init__(self, *, bin: str | None = None, model: str | None = None, max_turns: int | None = None,
                 extra_args: str | Sequence[str] | None = None, env: Mapping[str, str] | None = None) -> None:
        super().__init__(env=env)
        self.bin = bin or self.program or self.name
        self.model = model
        if max_turns is not None and max_turns < 1:
            raise InputError(f"max turns must be at least 1, not {max_turns}", field="max turns")
        self.max_turns = max_turns
        try:
            self.extra_args = shlex.split(extra_args) if isinstance(extra_args, str) else list(extra_args or ())
        except ValueError as exc:
            raise InputError(f"cannot split the extra agent arguments: {exc}", field="agent args") from None

    def check(self) -> None:
        if not self.sandbox.host_programs:  # the program is inside the sandbox's image
            self.sandbox.check()
            return
        try:
            argv = resolve_argv([self.bin], cwd=Path.cwd(), env=self.child_env())
        except SkillCrashed as exc:
            raise InputError(str(exc), field="agent", hint=f"install {self.program or self.name} or give its path "
                                                           "with --agent-bin") from None
        self.check_sandbox(argv[0])

    def cli_version(self) -> str | None:
        """The first line ``<program> --version`` prints (at most VERSION_CHARS characters), asked once per
        agent and kept. None when it cannot be read: the program fails, takes longer than VERSION_TIMEOUT,
        prints nothing, or runs inside a sandbox's image rather than on this machine."""
        if not hasattr(self, "_cli_version"):
            self._cli_version = self._ask_version()
        return self._cli_version

    def _ask_version(self) -> str | None:
        if not self.sandbox.host_programs:
            return None
        try:
            argv = resolve_argv([self.bin], cwd=Path.cwd(), env=self.child_env())
            done = subprocess.run([*argv, "--version"], env=self.child_env(), capture_output=True,
                                  stdin=subprocess.DEVNULL, timeout=VERSION_TIMEOUT, check=False)
        except (OSError, SkillCrashed, subprocess.SubprocessError):
            return None
        if done.returncode != 0:
            return None
        lines = [line.strip() for line in done.stdout.decode("utf-8", "replace").splitlines() if line.strip()]
        return clean_text(lines[0])[:VERSION_CHARS] if lines else None

    def given(self, *flags: str) -> bool:
        """Whether the extra arguments set one of ``flags`` (as ``--flag value`` or ``--flag=value``)."""
        return any(arg == flag or arg.startswith(flag + "=") for arg in self.extra_args for flag in flags)

    @abstractmethod
    def arguments(self, model: str | None, max_turns: int | None, workspace: Path) -> list[str]:
        """The arguments after the program, before the extra ones."""

    def uses_prompt_file(self) -> bool:
        return False  # the prompt goes on stdin

    def launch(self, request: AgentRequest, workspace: Path, prompt_file: Path) -> Launch:
        max_turns = request.max_turns if request.max_turns is not None else self.max_turns
        argv = [self.bin, *self.arguments(request.model or self.model, max_turns, workspace), *self.extra_args,
                *self.last_args]
        return Launch(argv, stdin=request.prompt.encode("utf-8"))

    def output_parser(self, context: ParseContext) -> OutputParser:
        return create_parser(self.name, context)
