"""``skill.json`` and ``adapter.config.json``: the description of a tool skill and how to call it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ..errors import InputError
from ._load import load_model, read_json, validate

SKILL_FILE = "skill.json"
ADAPTER_CONFIG_FILE = "adapter.config.json"
AdapterType = Literal["http", "subprocess", "mcp", "langchain", "custom"]
HttpMethod = Literal["GET", "POST", "PUT", "PATCH", "DELETE"]


class SkillManifest(BaseModel):
    """The ``skill.json`` of a tool skill, as the original eval-skills defines it. Unknown keys are refused
    (a misspelt ``inputSchema`` would silently turn input checks off); free-form data goes in ``metadata``.

    What the original's files hold is accepted: capitals in ``id``, any ``version`` (``"1.0"``, or ``"v1"``
    as its ``create --from-openapi`` copies an API's version), no ``name`` (it is then the id), ``metadata``
    of any shape, and ``rootPath`` (ignored: a skill always runs in the folder of its ``skill.json``)."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^[A-Za-z0-9_-]+$", min_length=1)
    name: str = Field(min_length=1)
    version: str = Field(pattern=r"^[^\s\x00-\x1f\x7f]{1,64}$")  # one word: semver is best
    description: str = ""
    tags: list[str] = Field(default_factory=list)
    inputSchema: dict[str, Any] | None = None
    outputSchema: dict[str, Any] | None = None
    adapterType: AdapterType
    entrypoint: str = Field(min_length=1)
    metadata: Any = Field(default_factory=dict)
    rootPath: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _name_defaults_to_id(cls, data: Any) -> Any:
        if isinstance(data, dict) and "name" not in data and isinstance(data.get("id"), str):
            return {**data, "name": data["id"]}
        return data

    @field_validator("entrypoint")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value


class AdapterConfig(BaseModel):
    """``adapter.config.json`` beside ``skill.json``. Unknown keys are refused so no setting is silently ignored."""

    model_config = ConfigDict(extra="forbid")

    type: AdapterType | None = None  # written by the original's ``create``; must agree with ``adapterType``
    retries: int | None = Field(default=None, ge=0)  # the skill's own retries, below ``--retries``
    # subprocess
    command: str | None = None
    args: list[str] = Field(default_factory=list)
    persistent: bool = False
    # both
    timeoutMs: int | None = Field(default=None, gt=0)
    env: dict[str, str] = Field(default_factory=dict)
    passEnv: list[str] = Field(default_factory=list)
    # http
    baseUrl: str | None = None
    authType: Literal["none", "bearer", "api-key", "apiKey", "api_key"] = "none"
    authTokenEnvKey: str | None = None
    authHeader: str = "X-API-Key"
    headers: dict[str, str] = Field(default_factory=dict)
    method: HttpMethod = "POST"
    start: str | list[str] | None = None
    startTimeoutMs: int = Field(default=15000, gt=0)
    healthPath: str | None = None

    @field_validator("method", mode="before")
    @classmethod
    def _upper(cls, value: Any) -> Any:
        return value.upper() if isinstance(value, str) else value


@dataclass(frozen=True)
class Skill:
    """A loaded tool skill: its manifest, the folder it runs in and its adapter settings."""

    manifest: SkillManifest
    path: Path  # the skill.json file
    adapter: AdapterConfig

    @property
    def id(self) -> str:
        return self.manifest.id

    @property
    def root(self) -> Path:
        """The skill's folder: always its working directory."""
        return self.path.parent


def load_skill(path: Path) -> Skill:
    """Load a skill from a ``skill.json`` file or a folder holding one."""
    path = Path(path)
    if path.is_dir():
        path = path / SKILL_FILE
        if not path.is_file():
            raise InputError(f"no {SKILL_FILE} in this folder", file=str(path.parent),
                             hint=agent_skill_hint(path.parent) or "pass a skill.json file or a folder holding one")
    path = path.resolve()
    if path.name != SKILL_FILE:  # a file named otherwise must at least be a JSON object to be a skill.json
        try:
            data = read_json(path)
        except InputError as exc:
            raise InputError(f"is not a {SKILL_FILE} ({exc.problem})", file=str(path),
                             hint="pass a skill.json file or a folder holding one") from None
        if not isinstance(data, dict):
            raise InputError(f"is not a {SKILL_FILE} (its JSON is not an object)", file=str(path),
                             hint="pass a skill.json file or a folder holding one")
        manifest = validate(SkillManifest, data, str(path))
    else:
        manifest = load_model(SkillManifest, path)
    config_path = path.parent / ADAPTER_CONFIG_FILE
    adapter = (validate(AdapterConfig, read_json(config_path), str(config_path))
               if config_path.is_file() else AdapterConfig())
    if adapter.type is not None and adapter.type != manifest.adapterType:
        raise InputError(f"type {adapter.type!r} disagrees with adapterType {manifest.adapterType!r} in "
                         f"{SKILL_FILE}", file=str(config_path), field="$.type",
                         hint="make them the same, or remove type")
    return Skill(manifest=manifest, path=path, adapter=adapter)


def agent_skill_hint(folder: Path) -> str | None:
    """What to run instead when ``folder`` holds Agent Skills (a ``SKILL.md``, or folders of them) rather
    than tool skills; None otherwise."""
    if (folder / "SKILL.md").is_file():
        parent = folder.resolve().parent
        return (f"an Agent Skill (SKILL.md), not a tool skill: check its examples with 'eval-skills fixtures "
                f"--skills-dir {parent} --skill {folder.resolve().name}', measure it with 'eval-skills paired "
                f"--skill-path {folder}', test its routing with 'eval-skills routing --skill-path {folder}'")
    try:
        inside = any((entry / "SKILL.md").is_file() for entry in folder.iterdir() if entry.is_dir())
    except OSError:
        return None
    if inside:
        return ("a folder of Agent Skills (SKILL.md), not tool skills: check them with "
                f"'eval-skills fixtures --skills-dir {folder}', measure one with 'eval-skills paired --skill-path "
                f"{folder}/<skill>', test its routing with 'eval-skills routing --skill-path {folder}/<skill>'")
    return None


def find_skill_files(root: Path) -> list[Path]:
    """Every ``skill.json`` below ``root``, sorted; a folder that is itself a skill counts once."""
    if (root / SKILL_FILE).is_file():
        return [root / SKILL_FILE]
    return sorted(p for p in root.rglob(SKILL_FILE) if p.is_file())


def load_skills(paths: list[Path]) -> list[Skill]:
    """Load skills from files or folders; a folder is searched for ``skill.json``. Duplicate ids are refused."""
    skills: list[Skill] = []
    seen: dict[str, Path] = {}
    for given in paths:
        given = Path(given)
        if not given.exists():
            raise InputError("no such file or folder", file=str(given), hint="check the --skills path")
        files = find_skill_files(given) if given.is_dir() else [given]
        if not files:
            raise InputError(f"no {SKILL_FILE} found below this folder", file=str(given),
                             hint=agent_skill_hint(given) or "eval evaluates tool skills: pass folders holding "
                                                             "a skill.json")
        for file in files:
            skill = load_skill(file)
            if skill.id in seen and seen[skill.id] != skill.path:
                raise InputError(f"skill id {skill.id!r} is also used by {seen[skill.id]}", file=str(file),
                                 field="$.id", hint="give each skill a distinct id")
            if skill.id not in seen:
                seen[skill.id] = skill.path
                skills.append(skill)
    return skills
