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
(``~/.local/share/opencode/auth.json``, from ``$XDG_DATA_HOME`` when set) and a generated
``~/.config/opencode/opencode.json``: of your configuration (``~/.config/opencode/opencode.json``, ``.jsonc`` or
``config.json``, then the file ``OPENCODE_CONFIG`` names, merged in that order) only how to reach the model and
what it may do (``model``, ``small_model``, ``provider``, ``enabled_providers``, ``disabled_providers``,
``permission``, ``autoupdate``, ``share``); and the run gets the provider keys and OpenCode settings of
:attr:`OpenCodeAgent.key_variables`, and every variable the kept configuration names as ``{env:NAME}``.

What the real CLI does that the harness allows for: it takes its working folder from ``PWD`` (set to the
workspace), not from the folder it is started in; it writes ``.opencode/.gitignore`` into the workspace in every
run (not listed among the files the agent made); its first start with a fresh home sets up a database that
concurrent first starts fail to create (``Failed query: CREATE TABLE workspace``), so an agent's first run
starts alone; its ``skill`` tool needs ripgrep (``rg``) on ``PATH``, else every skill call fails (checked
before anything runs).
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import InputError
from .preset import CliAgent, read_user_file

__all__ = ["OpenCodeAgent"]


class OpenCodeAgent(CliAgent):
    name = "opencode"
    skills_subdir = ".opencode/skills"
    key_variables = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY", "GEMINI_API_KEY", "GROQ_API_KEY",
                     "MISTRAL_API_KEY", "DEEPSEEK_API_KEY", "XAI_API_KEY", "OPENCODE_CONFIG_CONTENT",
                     "OPENCODE_PERMISSION", "OPENCODE_DISABLE_AUTOUPDATE", "OPENCODE_DISABLE_MODELS_FETCH",
                     "OPENCODE_DISABLE_LSP_DOWNLOAD", "OPENCODE_DISABLE_DEFAULT_PLUGINS")
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
        config = json.dumps(opencode_config(_user_configs()), indent=2, ensure_ascii=False) + "\n"
        cache = _cache()
        kept = {f".cache/opencode/{name}": held for name in ("package.json", "bun.lock")  # what node_modules holds
                if (cache / "node_modules").is_dir() and (held := read_user_file(cache / name)) is not None}
        return {CONFIG_FILE: config.encode(),
                **({".local/share/opencode/auth.json": auth} if auth is not None else {}), **kept}

    def home_binds(self) -> dict[str, Path]:
        """Under a sandbox: OpenCode's cache of provider packages and programs (``~/.cache/opencode``'s
        ``node_modules`` and ``bin``, where it keeps the ripgrep it downloads), read-only, when you have them, so
        no run downloads them again."""
        cache = _cache()
        return {f".cache/opencode/{name}": cache / name for name in ("node_modules", "bin") if (cache / name).is_dir()}

    def sandbox_variables(self) -> list[str]:
        """Also every variable the generated configuration names as ``{env:NAME}`` (a provider's key)."""
        text = self.home_files()[CONFIG_FILE].decode()
        return [*super().sandbox_variables(), *dict.fromkeys(_ENV_REF.findall(text))]


CONFIG_FILE = ".config/opencode/opencode.json"
_KEPT = ("$schema", "model", "small_model", "provider", "enabled_providers", "disabled_providers", "permission",
         "autoupdate", "share")
_ENV_REF = re.compile(r"\{env:([A-Za-z_][A-Za-z0-9_]*)\}")
_JSONC = re.compile(r'("(?:[^"\\]|\\.)*")|//[^\n]*|/\*.*?\*/|,(?=\s*[}\]])', re.S)


def _cache() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "opencode"


def _user_configs() -> list[bytes]:
    """The user's OpenCode configuration files, in the order OpenCode merges them."""
    folder = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config") / "opencode"
    paths = [folder / name for name in ("config.json", "opencode.json", "opencode.jsonc")]
    if os.environ.get("OPENCODE_CONFIG"):
        paths.append(Path(os.environ["OPENCODE_CONFIG"]))
    return [data for path in paths if (data := read_user_file(path)) is not None]


def _merge(base: dict[str, Any], more: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in more.items():
        old = merged.get(key)
        merged[key] = _merge(old, value) if isinstance(old, dict) and isinstance(value, dict) else value
    return merged


def opencode_config(files: list[bytes]) -> dict[str, Any]:
    """An ``opencode.json`` for a sandboxed run: of the user's (JSON with comments, merged in order), only how to
    reach the model and what the agent may do. A file that does not parse is left out."""
    merged: dict[str, Any] = {}
    for raw in files:
        try:
            text = raw.decode("utf-8-sig")
            data = json.loads(_JSONC.sub(lambda m: m.group(1) or "", text))
        except (UnicodeDecodeError, ValueError):
            continue
        if isinstance(data, dict):
            merged = _merge(merged, data)
    return {key: merged[key] for key in _KEPT if key in merged}
