"""``opencode``: OpenCode, ``opencode run`` with JSON output.

Command line (the prompt on stdin)::

    opencode run --format json [--model provider/model]

OpenCode's permissions come from its own configuration (``opencode.json``); a non-interactive run rejects
requests that would ask, unless ``--auto`` is among the extra arguments. It has no turn limit on the
command line: a requested one is not applied.

Skills are installed at ``<workspace>/.opencode/skills/<name>/``. OpenCode also loads skills from
``~/.config/opencode/skills`` (``$XDG_CONFIG_HOME/opencode/skills``), ``~/.claude/skills``,
``~/.agents/skills``, and ``.claude/skills`` and ``.agents/skills`` in the workspace and its parent folders
up to the git worktree.
"""

from __future__ import annotations

import os
from pathlib import Path

from .preset import CliAgent

__all__ = ["OpenCodeAgent"]


class OpenCodeAgent(CliAgent):
    name = "opencode"
    skills_subdir = ".opencode/skills"

    def arguments(self, model: str | None, max_turns: int | None, workspace: Path) -> list[str]:
        args = ["run", *([] if self.given("--format") else ["--format", "json"])]
        return args + (["--model", model] if model and not self.given("--model", "-m") else [])

    def user_skill_dirs(self) -> list[Path]:
        config = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
        home = Path.home()
        return [config / "opencode" / "skills", home / ".claude" / "skills", home / ".agents" / "skills"]
