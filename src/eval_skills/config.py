"""Configuration files: ``eval-skills.config.yaml`` (project) and ``~/.eval-skills/config.yaml`` (user).

Priority, highest first: command-line flags, the file named by ``-c``/``--config`` (or the project file in
the current folder: ``eval-skills.config.yaml``, else ``.yml``, else ``.json``), the user file, built-in
defaults. Unknown keys are refused, so a setting never silently fails to take effect. ``defaultFormats``
(what the original eval-skills' ``init`` writes) is read as ``format``.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator, model_validator

from ._atomic import write_atomic
from .errors import InputError
from .formats._load import read_json, validate
from .formats.original_store import is_original_store

PROJECT_CONFIG = "eval-skills.config.yaml"
PROJECT_CONFIGS = (PROJECT_CONFIG, "eval-skills.config.yml", "eval-skills.config.json")
DEFAULT_STORE = "./eval-skills.db"
# where results go when DEFAULT_STORE is the original eval-skills' store (same default name, another schema)
BESIDE_ORIGINAL_STORE = "./eval-skills-results.db"
REPORT_FORMATS = ("json", "markdown", "md", "html", "csv", "junit", "xml")
LLM_KEYS = ("provider", "model", "temperature", "baseUrl")  # the settings under ``llm``


def check_llm(llm: dict[str, Any]) -> tuple[str, str] | None:
    """``(key, problem)`` for the first ``llm`` setting that is unknown or of the wrong type, else None."""
    for raw_key, value in llm.items():
        key = str(raw_key).encode("utf-8", "backslashreplace").decode("utf-8")  # printable: no lone surrogate
        if key not in LLM_KEYS:
            return key, f"unknown setting llm.{key} (known: {', '.join(LLM_KEYS)})"
        if key == "temperature" and value is not None and (
                isinstance(value, bool) or not isinstance(value, int | float)):
            return key, f"must be a number, not {value!r}"
        if key != "temperature" and value is not None and not isinstance(value, str):
            return key, f"must be a string, not {value!r}"
    return None


def user_config_path() -> Path:
    home = os.environ.get("EVAL_SKILLS_HOME")
    return Path(home) / "config.yaml" if home else Path.home() / ".eval-skills" / "config.yaml"


class Config(BaseModel):
    # strict: a value of the wrong type is refused, never converted (``concurrency: true`` is not 1)
    model_config = ConfigDict(extra="forbid", strict=True)

    concurrency: int = Field(default=4, ge=1)
    timeoutMs: int = Field(default=30_000, gt=0)
    retries: int = Field(default=0, ge=0)
    runs: int = Field(default=1, ge=1)
    evaluator: str = "exact"
    # ``defaultFormats`` is the original's name: errors name the key the file uses
    format: list[str] = Field(default_factory=lambda: ["json", "markdown"],
                              validation_alias=AliasChoices("format", "defaultFormats"))
    outputDir: str = "./reports"
    store: str = DEFAULT_STORE
    benchmark: str = "coding-easy"
    benchmarksDir: str = "./benchmarks"
    minCompletion: float = Field(default=0.7, ge=0, le=1)
    scorerTimeoutMs: int = Field(default=5000, gt=0)
    llm: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _one_name_for_formats(cls, data: Any) -> Any:
        if isinstance(data, dict) and "defaultFormats" in data and "format" in data:
            raise ValueError("format and defaultFormats both set the report formats; keep one")
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
            raise ValueError(f"unknown report format {unknown[0]!r}; use json, markdown, html, csv or junit")
        return value

    @field_validator("llm")
    @classmethod
    def _known_llm(cls, value: dict[str, Any]) -> dict[str, Any]:
        wrong = check_llm(value)
        if wrong is not None:
            key, problem = wrong
            raise ValueError(problem if problem.startswith("unknown") else f"llm.{key} {problem}")
        return llm_settings(value)


def llm_settings(llm: dict[str, Any]) -> dict[str, Any]:
    """The ``llm`` settings without the empty ones (an empty key is as if absent)."""
    return {key: value for key, value in llm.items() if value is not None and value != ""}


def _read_yaml(path: Path) -> dict[str, Any]:
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8-sig"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise InputError(f"invalid YAML{where}", file=str(path)) from None
    except UnicodeDecodeError:
        raise InputError("is not valid UTF-8", file=str(path)) from None
    except OSError as exc:
        raise InputError(f"cannot be read ({exc.strerror})", file=str(path)) from None
    except Exception as exc:  # noqa: BLE001 - nested too deeply, and the like: still the file's problem
        raise InputError(f"cannot be read as YAML ({type(exc).__name__})", file=str(path)) from None
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
        project = project_config(cwd)
        if project is not None:
            sources.append(project)
    for path in sources:
        data = _read_settings(path)
        validate(Config, data, str(path))  # each file is checked on its own, so errors name the right file
        merged.update(_as_ours(data))
    config = Config.model_validate(merged)
    if "store" not in config.model_fields_set and is_original_store(Path(DEFAULT_STORE)):
        # the original eval-skills wrote ./eval-skills.db: a store nobody chose must not stop every run here
        config = config.model_copy(update={"store": BESIDE_ORIGINAL_STORE})
        config.model_fields_set.discard("store")
    return config


_noted: set[str] = set()


def default_store(config: Config) -> Path:
    """The store a command uses when no ``--store`` is given: the config's, saying so (once) when it is the one
    beside the original eval-skills' store."""
    if config.store == BESIDE_ORIGINAL_STORE and "store" not in config.model_fields_set and not _noted:
        _noted.add(config.store)
        logging.getLogger(__name__).warning(
            f"note: {DEFAULT_STORE} is the original eval-skills' store (another schema); results are recorded "
            f"in {BESIDE_ORIGINAL_STORE} (set store in the config file or pass --store to choose)")
    return Path(config.store)


def _as_ours(data: dict[str, Any]) -> dict[str, Any]:
    """A checked settings file with the original's ``defaultFormats`` named ``format``."""
    return {("format" if key == "defaultFormats" else key): value for key, value in data.items()}


def project_config(cwd: Path | None = None) -> Path | None:
    """The project config file in ``cwd``: ``eval-skills.config.yaml``, else ``.yml``, else ``.json``."""
    folder = cwd or Path.cwd()
    return next((folder / name for name in PROJECT_CONFIGS if (folder / name).is_file()), None)


# ---- reading and writing single keys (``eval-skills config``) -----------------------------------------

FREE_FORM_KEYS = ("llm",)  # mappings whose sub-keys are free (``llm.model``, ``llm.temperature``)


def config_layers(explicit: Path | None = None, cwd: Path | None = None) -> list[tuple[str, dict[str, Any]]]:
    """``[(source, settings), ...]`` from lowest to highest priority: the defaults, the user file, then the
    project (or explicit) file. Each file is validated on its own."""
    layers: list[tuple[str, dict[str, Any]]] = [("default", Config().model_dump())]
    user = user_config_path()
    files = [user] if user.is_file() else []
    if explicit is not None:
        if not explicit.is_file():
            raise InputError("config file not found", file=str(explicit), hint="check -c/--config")
        files.append(explicit)
    elif (project := project_config(cwd)) is not None:
        files.append(project)
    for path in files:
        data = _read_settings(path)
        validate(Config, data, str(path))
        layers.append((str(path), _as_ours(data)))
    return layers


def check_key(dotted: str) -> list[str]:
    """The parts of a dotted key, or InputError when no setting has that name. ``defaultFormats`` (the
    original eval-skills' name) is ``format``."""
    parts = dotted.split(".")
    if parts[0] == "defaultFormats":
        parts[0] = "format"
    known = ", ".join(Config.model_fields)
    if not all(parts) or parts[0] not in Config.model_fields:
        raise InputError(f"unknown config key {dotted!r}", field=dotted, hint=f"known keys: {known}")
    if len(parts) > 1 and parts[0] not in FREE_FORM_KEYS:
        raise InputError(f"unknown config key {dotted!r}: {parts[0]} has no sub-keys", field=dotted,
                         hint=f"known keys: {known}; sub-keys only under {', '.join(FREE_FORM_KEYS)}")
    if parts[0] == "llm" and (len(parts) > 2 or (len(parts) == 2 and parts[1] not in LLM_KEYS)):
        raise InputError(f"unknown config key {dotted!r}", field=dotted,
                         hint="known keys under llm: " + ", ".join(f"llm.{k}" for k in LLM_KEYS))
    return parts


def lookup(data: dict[str, Any], parts: list[str]) -> tuple[bool, Any]:
    """``(found, value)`` of a dotted key in nested mappings."""
    value: Any = data
    for part in parts:
        if not isinstance(value, dict) or part not in value:
            return False, None
        value = value[part]
    return True, value


def effective_settings(explicit: Path | None = None, cwd: Path | None = None) -> dict[str, tuple[Any, str]]:
    """Every setting (``llm`` sub-keys flattened) with its effective value and the source it came from."""
    out: dict[str, tuple[Any, str]] = {}
    for source, data in config_layers(explicit, cwd):
        for key, value in data.items():
            if key in FREE_FORM_KEYS:  # a file's mapping replaces the one below it, as in load_config
                for old in [k for k in out if k == key or k.startswith(key + ".")]:
                    del out[old]
                items = value.items() if isinstance(value, dict) else ()
                out.update({f"{key}.{sub}": (item, source) for sub, item in items} or {key: (value, source)})
            else:
                out[key] = (value, source)
    return out


def parse_value(raw: str) -> Any:
    """A value typed on the command line, read as YAML: ``8`` is a number, ``[json, html]`` a list, ``true``
    a boolean; text that is not valid YAML stays text."""
    import yaml

    try:
        return yaml.safe_load(raw)
    except yaml.YAMLError:
        return raw


def set_user_value(dotted: str, raw: str) -> tuple[Path, Any]:
    """Set one key in the user config file (created if needed) after checking the result is a valid config.
    Returns the file written and the value stored. Comments in that file are not kept."""
    import yaml

    parts = check_key(dotted)
    path = user_config_path()
    data = _as_ours(_read_yaml(path)) if path.is_file() else {}
    node = data
    for part in parts[:-1]:
        child = node.get(part)
        node[part] = child = child if isinstance(child, dict) else {}
        node = child
    value = parse_value(raw)
    if len(parts) == 1 and Config.model_fields[parts[0]].annotation is str and not isinstance(value, str):
        value = raw  # a text setting keeps what was typed: ``config set benchmark 2024`` is the id "2024"
    node[parts[-1]] = value
    try:
        validate(Config, data, str(path))
    except InputError as exc:  # a wrong type: name the key and the value; nothing is written
        raise InputError(f"{exc.problem} (got {raw!r})", field=dotted, hint="nothing was written") from None
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, yaml.safe_dump(data, sort_keys=False, allow_unicode=True))
    return path, value
