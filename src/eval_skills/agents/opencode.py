"""``opencode``: OpenCode, ``opencode run`` with JSON output.

Command line (the prompt on stdin)::

    opencode run --format json [--model provider/model]

OpenCode's permissions come from its own configuration (``opencode.json``); a non-interactive run rejects
requests that would ask, unless ``--auto`` is among the extra arguments. It has no turn limit on the
command line: a requested one is not applied.

Skills are installed at ``<workspace>/.opencode/skills/<name>/``. OpenCode also loads skills from
``~/.config/opencode/skills`` (``$XDG_CONFIG_HOME/opencode/skills``), ``~/.claude/skills``,
``~/.agents/skills``, and ``.claude/skills`` and ``.agents/skills`` in the workspace and its parent folders
up to the git worktree. Under a sandbox the private home holds OpenCode's auth file
(``~/.local/share/opencode/auth.json``, from ``$XDG_DATA_HOME`` when set), and the run gets the provider keys and
OpenCode settings of :attr:`OpenCodeAgent.key_variables`.

What the real CLI does that the harness allows for: it takes its working folder from ``PWD`` (set to the
workspace), not from the folder it is started in; it writes ``.opencode/.gitignore`` into the workspace in every
run (not listed among the files the agent made); its first start with a fresh home sets up a database that
concurrent first starts fail to create (``Failed query: CREATE TABLE workspace``), so an agent's first run
starts alone; its ``skill`` tool needs ripgrep (``rg``) on ``PATH``, else every skill call fails (checked
before anything runs).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from pathlib import Path

from ..errors import InputError
from .preset import CliAgent, read_user_file

__all__ = ["OpenCodeAgent"]


class OpenCodeAgent(CliAgent):
    name = "opencode"
    skills_subdir = ".opencode/skills"
    key_variables = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY", "GEMINI_API_KEY", "GROQ_API_KEY",
                     "MISTRAL_API_KEY", "DEEPSEEK_API_KEY", "XAI_API_KEY", "OPENCODE_CONFIG_CONTENT",
                     "OPENCODE_PERMISSION", "OPENCODE_DISABLE_AUTOUPDATE")
    first_start_alone = True  # with a fresh home, concurrent first starts fail creating OpenCode's database
    own_files = frozenset({".opencode/.gitignore"})  # OpenCode writes it beside the skills it finds there

    def check(self) -> None:
        super().check()
        env = self.child_env()
        cache = Path(env.get("XDG_CACHE_HOME") or Path(env.get("HOME") or Path.home()) / ".cache")
        if shutil.which("rg", path=env.get("PATH")) is None and not (cache / "opencode" / "bin" / "rg").is_file():
            raise InputError("OpenCode's skill tool needs ripgrep (rg), which is not on PATH: every skill call would "
                             "fail", field="agent", hint="install ripgrep (Debian and Ubuntu: apt-get install ripgrep)")

    def arguments(self, model: str | None, max_turns: int | None, workspace: Path) -> list[str]:
        args = ["run", *([] if self.given("--format") else ["--format", "json"])]
        return args + (["--model", model] if model and not self.given("--model", "-m") else [])

    def user_skill_dirs(self, env: Mapping[str, str] | None = None) -> list[Path]:
        config = Path((os.environ if env is None else env).get("XDG_CONFIG_HOME") or Path.home() / ".config")
        home = Path.home()
        return [config / "opencode" / "skills", home / ".claude" / "skills", home / ".agents" / "skills"]

    def read_home_files(self) -> dict[str, bytes]:
        data = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
        auth = read_user_file(data / "opencode" / "auth.json")
        return {".local/share/opencode/auth.json": auth} if auth is not None else {}
