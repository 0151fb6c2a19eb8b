"""``codex``: OpenAI Codex CLI, ``codex exec`` with JSON-lines output.

Command line (the prompt on stdin, read because of the final ``-``)::

    codex exec --json --skip-git-repo-check --sandbox workspace-write [--model M] -

``workspace-write`` lets the agent write in its workspace (and nowhere else) and run commands in Codex's
sandbox; give ``--sandbox ...``, ``--full-auto`` or ``--dangerously-bypass-approvals-and-sandbox`` among the
extra arguments to choose otherwise. Codex has no turn limit: a requested one is not applied.

Skills are installed at ``<workspace>/.agents/skills/<name>/``. Codex also loads skills from
``~/.agents/skills``, ``/etc/codex/skills``, its bundled system skills, and ``.agents/skills`` in every parent
folder of the workspace up to the repository root.

Every run has a ``CODEX_HOME`` of its own, sandbox or not: Codex processes sharing one race on its
``tmp/arg0-linux`` folder (about one run in 30 at concurrency 4 had every command fail). It is the ``.codex``
folder of the run's private home, holding ``auth.json`` (copied from ``$CODEX_HOME`` or ``~/.codex``) and a
``config.toml``: yours as it is without a sandbox; under one, generated, keeping of yours only how to reach the
model (``model``, ``model_provider``, ``model_providers``), and the run gets the variables of
:attr:`CodexAgent.key_variables` and the ``env_key`` of each provider. So ``$CODEX_HOME/skills``, its
``AGENTS.md`` and its sessions reach no run. ``TMPDIR`` is the home's ``.tmp`` folder: Codex refuses to create its
helper programs (its own sandbox's) in a ``CODEX_HOME`` inside the temporary folder, and then every command it
runs fails (``bwrap: execvp codex-linux-sandbox: No such file or directory``).
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .preset import CliAgent, read_user_file

__all__ = ["CodexAgent"]


class CodexAgent(CliAgent):
    name = "codex"
    skills_subdir = ".agents/skills"
    last_args = ("-",)  # read the prompt from stdin
    key_variables = ("OPENAI_API_KEY", "CODEX_API_KEY", "OPENAI_BASE_URL", "OPENAI_ORGANIZATION", "OPENAI_PROJECT")
    own_home = True  # a CODEX_HOME per run, sandbox or not
    home_variable_names = ("CODEX_HOME",)

    def arguments(self, model: str | None, max_turns: int | None, workspace: Path) -> list[str]:
        args = ["exec", *[flag for flag in ("--json", "--skip-git-repo-check") if not self.given(flag)]]
        if not self.given("--sandbox", "-s", "--full-auto", "--dangerously-bypass-approvals-and-sandbox", "--yolo"):
            args += ["--sandbox", "workspace-write"]
        if model and not self.given("--model", "-m"):
            args += ["--model", model]
        return args

    def user_skill_dirs(self, env: Mapping[str, str] | None = None) -> list[Path]:
        return [Path.home() / ".agents" / "skills", Path("/etc/codex/skills")]  # $CODEX_HOME is the run's own

    def read_home_files(self) -> dict[str, bytes]:
        config = read_user_file(_user_codex_home() / "config.toml")
        return {".codex/config.toml": codex_config(config).encode(), **self._auth()}

    def own_home_files(self) -> dict[str, bytes]:
        """Without a sandbox: your ``config.toml`` as it is, and your ``auth.json``."""
        config = read_user_file(_user_codex_home() / "config.toml")
        return {**({".codex/config.toml": config} if config is not None else {}), **self._auth()}

    def _auth(self) -> dict[str, bytes]:
        auth = read_user_file(_user_codex_home() / "auth.json")
        return {".codex/auth.json": auth} if auth is not None else {}

    def home_variables(self, home: Path) -> dict[str, str]:
        (home / ".codex").mkdir(exist_ok=True)
        (home / ".tmp").mkdir(exist_ok=True)
        return {"CODEX_HOME": str(home / ".codex"), "TMPDIR": str(home / ".tmp")}

    def sandbox_variables(self) -> list[str]:
        """Also the key variable each model provider of the configuration names (its ``env_key``)."""
        config = tomllib.loads(self.home_files()[".codex/config.toml"].decode())
        providers = config.get("model_providers") or {}
        keys = [p["env_key"] for p in providers.values() if isinstance(p, dict) and isinstance(p.get("env_key"), str)]
        return [*super().sandbox_variables(), *keys]


def _user_codex_home() -> Path:
    return Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")


_BARE = re.compile(r"[A-Za-z0-9_-]+")
_KEPT = ("model", "model_provider", "model_reasoning_effort", "model_providers")


def codex_config(user: bytes | None) -> str:
    """A ``config.toml`` for a sandboxed run: of the user's, only how to reach the model."""
    try:
        data = tomllib.loads(user.decode("utf-8")) if user else {}
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        data = {}
    kept = {key: data[key] for key in _KEPT if key in data}
    lines = ["# written by eval-skills for a sandboxed run"]
    tables: list[tuple[str, dict[str, Any]]] = []
    for key, value in kept.items():
        if isinstance(value, dict):
            tables += [(f"{key}.{_key(name)}", table) for name, table in value.items() if isinstance(table, dict)]
        elif (text := _value(value)) is not None:
            lines.append(f"{_key(key)} = {text}")
    while tables:
        header, table = tables.pop(0)
        lines.append(f"\n[{header}]")
        for key, value in table.items():
            if isinstance(value, dict):
                tables.append((f"{header}.{_key(key)}", value))
            elif (text := _value(value)) is not None:
                lines.append(f"{_key(key)} = {text}")
    return "\n".join(lines) + "\n"


def _key(name: str) -> str:
    return name if _BARE.fullmatch(name) else json.dumps(name, ensure_ascii=False)


def _value(value: Any) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # a JSON string is a TOML basic string
    if isinstance(value, list):
        items = [_value(item) for item in value]
        return "[" + ", ".join(i for i in items if i is not None) + "]"
    return None
