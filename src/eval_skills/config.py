"""Configuration files: ``eval-skills.config.yaml`` (project) and ``~/.eval-skills/config.yaml`` (user).

Priority, highest first: command-line flags, the file named by ``-c``/``--config`` (or the project file in
the current folder: ``eval-skills.config.yaml``, else ``.yml``, else ``.json``), the user file, built-in
defaults. Unknown keys are refused, so a setting never silently fails to take effect. ``defaultFormats``
(what the original eval-skills' ``init`` writes) is read as ``format``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from .errors import InputError
from .formats._load import read_json, validate

PROJECT_CONFIG = "eval-skills.config.yaml"
PROJECT_CONFIGS = (PROJECT_CONFIG, "eval-skills.config.yml", "eval-skills.config.json")
REPORT_FORMATS = ("json", "markdown", "md", "html", "csv")


def user_config_path() -> Path:
    home = os.environ.get("EVAL_SKILLS_HOME")
    return Path(home) / "config.yaml" if home else Path.home() / ".eval-skills" / "config.yaml"


class Config(BaseModel):
    model_config = ConfigDict(extra="forbid")

    concurrency: int = Field(default=4, ge=1)
    timeoutMs: int = Field(default=30_000, gt=0)
    retries: int = Field(default=0, ge=0)
    runs: int = Field(default=1, ge=1)
    evaluator: str = "exact"
    format: list[str] = Field(default_factory=lambda: ["json", "markdown"])
    outputDir: str = "./reports"
    store: str = "./eval-skills.db"
    benchmark: str = "coding-easy"
    benchmarksDir: str = "./benchmarks"
    minCompletion: float = Field(default=0.7, ge=0, le=1)
    llm: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _formats_from_original(cls, data: Any) -> Any:
        if isinstance(data, dict) and "defaultFormats" in data:
            if "format" in data:
                raise ValueError("format and defaultFormats both set the report formats; keep one")
            data = {("format" if k == "defaultFormats" else k): v for k, v in data.items()}
        return data

    @field_validator("format", mode="before")
    @classmethod
    def _split(cls, value: Any) -> Any:
        return value.replace(",", " ").split() if isinstance(value, str) else value

    @field_validator("format")
    @classmethod
    def _known_formats(cls, value: list[str]) -> list[str]:
        unknown = [f for f in value if f not in REPORT_FORMATS]
        if unknown:
            raise ValueError(f"unknown report format {unknown[0]!r}; use json, markdown, html or csv")
        return value


def _read_yaml(path: Path) -> dict[str, Any]:
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise InputError(f"invalid YAML{where}", file=str(path)) from None
    except OSError as exc:
        raise InputError(f"cannot be read ({exc.strerror})", file=str(path)) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise InputError("expected a mapping of settings", file=str(path), field="$")
    return data


def _read_settings(path: Path) -> dict[str, Any]:
    if path.suffix == ".json":
        data = read_json(path)
        if not isinstance(data, dict):
            raise InputError("expected an object of settings", file=str(path), field="$")
        return data
    return _read_yaml(path)


def load_config(explicit: Path | None = None, cwd: Path | None = None) -> Config:
    """Merge the user file and the project (or explicit) file over the defaults, validating each."""
    merged: dict[str, Any] = {}
    sources: list[Path] = []
    user = user_config_path()
    if user.is_file():
        sources.append(user)
    if explicit is not None:
        if not explicit.is_file():
            raise InputError("config file not found", file=str(explicit), hint="check -c/--config")
        sources.append(explicit)
    else:
        folder = cwd or Path.cwd()
        project = next((folder / name for name in PROJECT_CONFIGS if (folder / name).is_file()), None)
        if project is not None:
            sources.append(project)
    for path in sources:
        data = _read_settings(path)
        # each file is checked on its own, so errors name the right file
        merged.update(validate(Config, data, str(path)).model_dump(include=_set_keys(data)))
    return Config.model_validate(merged)


def _set_keys(data: dict[str, Any]) -> set[str]:
    return {"format" if key == "defaultFormats" else key for key in data}
