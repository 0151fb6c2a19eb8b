"""``claude``: Claude Code, non-interactive, with stream-json output.

Command line (the prompt on stdin; the program is ``claude`` from ``PATH`` unless ``bin`` says otherwise)::

    claude -p --output-format stream-json --verbose [--max-turns N] [--model M] --permission-mode acceptEdits

``acceptEdits`` lets the agent write files in its workspace; other tools that ask for permission (Bash) are
denied in a non-interactive run, and the run's warnings list the denials. Give ``--permission-mode ...`` or
``--dangerously-skip-permissions`` among the extra arguments to choose otherwise. The ``CLAUDECODE``
variable is removed from the environment, so a run started from inside Claude Code works.

Claude Code retries a failing model (429, 529, 5xx, a cut stream) as ``CLAUDE_CODE_MAX_RETRIES`` says, with
back-off; its own default (10) can outlast any ``--timeout``, so a dead endpoint ended as a timeout rather than
as the model's error. Each run gets ``CLAUDE_CODE_MAX_RETRIES=`` :data:`MAX_RETRIES` unless you set it (in your
environment, or the agent's ``env``): then yours is kept.

Skills are installed as project skills at ``<workspace>/.claude/skills/<name>/``. Claude Code also loads
personal skills from ``~/.claude/skills`` (``$CLAUDE_CONFIG_DIR/skills`` when that is set), plugins and
managed settings, which a workspace cannot hide; a sandbox (``--sandbox bwrap``) does: its private home holds
only ``.claude/.credentials.json`` (copied from yours, when you log in rather than use a key), and the run gets
the ``ANTHROPIC_*`` and ``CLAUDE_CODE_*`` settings of :attr:`ClaudeAgent.key_variables`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from .base import AgentRequest
from .preset import CliAgent, read_user_file
from .process import Launch

__all__ = ["MAX_RETRIES", "ClaudeAgent"]

MAX_RETRIES = 3  # Claude Code's retries of a failing model request, per run, unless the user sets their own


class ClaudeAgent(CliAgent):
    name = "claude"
    skills_subdir = ".claude/skills"
    key_variables = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "ANTHROPIC_MODEL",
                     "ANTHROPIC_SMALL_FAST_MODEL", "ANTHROPIC_CUSTOM_HEADERS", "CLAUDE_CODE_OAUTH_TOKEN",
                     "CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
                     "DISABLE_AUTOUPDATER", "DISABLE_TELEMETRY", "API_TIMEOUT_MS", "CLAUDE_CODE_MAX_RETRIES")

    def arguments(self, model: str | None, max_turns: int | None, workspace: Path) -> list[str]:
        args = [*([] if self.given("-p", "--print") else ["-p"]),
                *([] if self.given("--output-format") else ["--output-format", "stream-json"]),
                *([] if self.given("--verbose") else ["--verbose"])]
        if max_turns is not None and not self.given("--max-turns"):
            args += ["--max-turns", str(max_turns)]
        if model and not self.given("--model"):
            args += ["--model", model]
        if not self.given("--permission-mode", "--dangerously-skip-permissions"):
            args += ["--permission-mode", "acceptEdits"]
        return args

    def launch(self, request: AgentRequest, workspace: Path, prompt_file: Path) -> Launch:
        launch = super().launch(request, workspace, prompt_file)
        if "CLAUDE_CODE_MAX_RETRIES" in {**os.environ, **self.env}:
            return launch
        return Launch(launch.argv, launch.stdin, {**launch.env, "CLAUDE_CODE_MAX_RETRIES": str(MAX_RETRIES)})

    def child_env(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        env = super().child_env(extra)
        env.pop("CLAUDECODE", None)  # Claude Code refuses to start nested inside another session otherwise
        return env

    def user_skill_dirs(self, env: Mapping[str, str] | None = None) -> list[Path]:
        config = (os.environ if env is None else env).get("CLAUDE_CONFIG_DIR")
        return [Path(config) / "skills" if config else Path.home() / ".claude" / "skills"]

    def read_home_files(self) -> dict[str, bytes]:
        config = os.environ.get("CLAUDE_CONFIG_DIR")
        found = read_user_file(Path(config) / ".credentials.json" if config else
                               Path.home() / ".claude" / ".credentials.json")
        return {".claude/.credentials.json": found} if found is not None else {}
