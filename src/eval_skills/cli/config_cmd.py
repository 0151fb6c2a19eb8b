"""``eval-skills config list|get|set``: the configuration, read with dot notation, set in the user file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from ._github import echo_json
from ._globals import group


def _show(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _path(value: str | None) -> Path | None:
    return None if value is None else Path(value)


@group("config", "List, read or set configuration values (set writes ~/.eval-skills/config.yaml).")
def config_group() -> None:
    """Configuration values, highest priority first: command-line flags, ./eval-skills.config.yaml (or -c FILE),
    ~/.eval-skills/config.yaml (EVAL_SKILLS_HOME/config.yaml when set), built-in defaults."""


@config_group.command("list")
@click.option("-c", "--config", "config_path", help="Config file [default: ./eval-skills.config.yaml].")
@click.option("--json", "as_json", is_flag=True, help='Print {"passed", "settings": {key: {value, source}}} as JSON.')
def config_list(config_path: str | None, as_json: bool) -> None:
    """Every setting with its effective value and where it comes from."""
    from ..config import effective_settings

    settings = effective_settings(_path(config_path))
    if as_json:
        echo_json(True, {"settings": {k: {"value": v, "source": s} for k, (v, s) in settings.items()}})
        return
    width = max(len(key) for key in settings)
    for key, (value, source) in settings.items():
        click.echo(f"{key:<{width}}  {_show(value)}  ({source})")


@config_group.command("get")
@click.argument("key")
@click.option("-c", "--config", "config_path", help="Config file [default: ./eval-skills.config.yaml].")
@click.option("--json", "as_json", is_flag=True, help='Print {"passed", "key", "set", "value"} as JSON.')
def config_get(key: str, config_path: str | None, as_json: bool) -> None:
    """Print one value (dot notation: llm.model). A known key that is not set prints nothing (null with
    --json) and says so on stderr; an unknown key is exit 2."""
    from ..config import check_key, config_layers, lookup

    parts = check_key(key)
    found, value = False, None
    for _, data in config_layers(_path(config_path)):  # the highest layer that has it wins
        hit, item = lookup(data, parts)
        if hit:
            found, value = True, item
    if not found:
        click.echo(f"{key} is not set (set it with: eval-skills config set {key} VALUE)", err=True)
        if as_json:
            echo_json(True, {"key": key, "set": False, "value": None}, indent=None)
        return
    if as_json:
        echo_json(True, {"key": key, "set": True, "value": value}, indent=None)
    else:
        click.echo(_show(value))


@config_group.command("set", context_settings={"ignore_unknown_options": True})  # VALUE may be -1
@click.argument("key")
@click.argument("value")
@click.option("--json", "as_json", is_flag=True, help='Print {"passed", "key", "value", "file"} as JSON.')
def config_set(key: str, value: str, as_json: bool) -> None:
    """Set KEY to VALUE in ~/.eval-skills/config.yaml (VALUE is read as YAML: 8, true, [json, html], text).

    eval and run use it unless ./eval-skills.config.yaml, -c FILE or a flag sets the same key.
    """
    from ..config import set_user_value

    path, stored = set_user_value(key, value)
    if as_json:
        echo_json(True, {"key": key, "value": stored, "file": str(path)}, indent=None)
        return
    click.echo(f"{key} = {value} (written to {path})")


__all__ = ["config_group"]
