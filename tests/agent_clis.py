"""The real agent CLIs (Claude Code, Codex, OpenCode) for end-to-end tests: where each is installed, why a test
must skip without it, and the private home and configuration that point it at a :class:`fakes.model_server.
ModelServer`.

    from agent_clis import cli_env, require_cli
    claude = require_cli("claude")                    # the program, or pytest.skip with the reason
    env = cli_env("claude", server, tmp_path / "home")  # HOME, keys, config files: the CLI talks to the server

The CLIs are the versions pinned in the repository's ``package.json`` (``npm ci`` at the repository root puts them
in ``node_modules/.bin``); ``EVAL_SKILLS_TEST_<NAME>_BIN`` (``..._CLAUDE_BIN``, ``..._CODEX_BIN``,
``..._OPENCODE_BIN``) names another program. OpenCode's ``skill`` tool needs ripgrep (``rg``) on ``PATH``.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from fakes.model_server import ModelServer

__all__ = ["CLIS", "MODELS", "cli_env", "cli_path", "missing", "require_cli"]

ROOT = Path(__file__).resolve().parents[1]
BIN = ROOT / "node_modules" / ".bin"
CLIS = ("claude", "codex", "opencode")
# the model each CLI is told to use: names the CLIs know (their prices, their metadata)
MODELS = {"claude": "claude-sonnet-4-5", "codex": "gpt-5.5", "opencode": "scripted/scripted-model"}
# OpenCode's price of the scripted model, in USD per million tokens (written into its configuration)
OPENCODE_COST = {"input": 3.0, "output": 15.0, "cache_read": 0.3, "cache_write": 3.75}


def cli_path(name: str) -> Path:
    override = os.environ.get(f"EVAL_SKILLS_TEST_{name.upper()}_BIN")
    return Path(override) if override else BIN / name


def missing(name: str) -> str | None:
    """Why the CLI ``name`` cannot run here (None: it can)."""
    path = cli_path(name)
    if shutil.which("node") is None and path.parent == BIN:
        return "Node.js is not installed (the agent CLIs install with `npm ci` at the repository root)"
    if not (path.is_file() and os.access(path, os.X_OK)):
        return f"{name} is not installed at {path}: run `npm ci` at the repository root"
    if name == "opencode" and shutil.which("rg") is None:
        return "OpenCode's skill tool needs ripgrep (`rg`), which is not installed (Debian: apt-get install ripgrep)"
    return None


def require_cli(name: str) -> Path:
    """The CLI's program, or skip the test saying what is missing."""
    reason = missing(name)
    if reason is not None:
        pytest.skip(reason)
    return cli_path(name)


def cli_env(name: str, server: ModelServer, home: Path) -> dict[str, str]:
    """Variables (added to the caller's) that run CLI ``name`` with its own ``home`` against ``server``: no user
    configuration, skills or sessions of the machine's user reach it. Writes the configuration files it needs."""
    home.mkdir(parents=True, exist_ok=True)
    tmp = home / "tmp"  # Codex refuses its helper binaries under the temporary folder: its home must be outside
    tmp.mkdir(exist_ok=True)
    env = {"HOME": str(home), "TMPDIR": str(tmp), "XDG_CONFIG_HOME": str(home / ".config"),
           "XDG_DATA_HOME": str(home / ".local" / "share"), "XDG_CACHE_HOME": str(home / ".cache"),
           "XDG_STATE_HOME": str(home / ".local" / "state"), **server.env(name)}
    if name == "codex":
        codex_home = home / ".codex"
        codex_home.mkdir(exist_ok=True)
        (codex_home / "config.toml").write_text(
            f'model = "{MODELS["codex"]}"\nmodel_provider = "scripted"\n\n[model_providers.scripted]\n'
            f'name = "scripted"\nbase_url = "{server.base}/v1"\nenv_key = "MODEL_SERVER_API_KEY"\n'
            'wire_api = "responses"\nrequest_max_retries = 2\nstream_max_retries = 2\n')
        env["CODEX_HOME"] = str(codex_home)
    elif name == "opencode":
        config = home / "opencode.json"
        config.write_text(json.dumps({
            "$schema": "https://opencode.ai/config.json", "model": MODELS["opencode"], "autoupdate": False,
            "share": "disabled",
            "provider": {"scripted": {"npm": "@ai-sdk/openai-compatible", "name": "Scripted",
                                      "options": {"baseURL": f"{server.base}/v1",
                                                  "apiKey": "{env:MODEL_SERVER_API_KEY}"},
                                      "models": {"scripted-model": {"name": "Scripted", "cost": OPENCODE_COST}}}}}))
        env.update(OPENCODE_CONFIG=str(config), OPENCODE_DISABLE_MODELS_FETCH="1", OPENCODE_DISABLE_AUTOUPDATE="1",
                   OPENCODE_DISABLE_LSP_DOWNLOAD="1", OPENCODE_DISABLE_DEFAULT_PLUGINS="1")
    return env
