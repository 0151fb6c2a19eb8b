"""Agent Skills files: ``SKILL.md`` frontmatter, ``evals/evals.json`` and ``evals/routing.json``.

The rules are those of the Agent Skills specification (agentskills.io) as its reference validator
(``skills-ref``) applies them, read with PyYAML instead of strictyaml so valid YAML such as flow lists is
accepted:

- ``name``: 1-64 characters, lowercase letters (Unicode letters count) and digits with single hyphens, not at
  either end, equal to the skill's folder name (both NFKC-normalised);
- ``description``: 1-1024 characters; ``compatibility``: at most 500; ``metadata``: a mapping;
- other keys (``license``, ``allowed-tools``) are optional. Keys outside the specification (Claude Code adds
  ``disable-model-invocation``, ``argument-hint``, ...) are *warnings*, never errors.

``evals.json`` is Anthropic's skill-creator contract: ``{"skill_name", "evals": [{"id", "prompt",
"expected_output", "files", "assertions" | "expectations", "selftune_assertions"}]}``. ``routing.json`` is
``[{"query", "should_trigger", "invocation_type"?}]``.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, field_validator, model_validator

from ..errors import InputError
from ._load import read_json, validate
from .skill_files import read_text_file

__all__ = [
    "EVALS_FILE",
    "ROUTING_FILE",
    "SKILL_MD",
    "SPEC_FIELDS",
    "EvalCase",
    "EvalsFile",
    "RoutingQuery",
    "SkillDoc",
    "frontmatter_problems",
    "load_evals",
    "load_routing",
    "load_skill_md",
    "parse_frontmatter",
    "skill_prompt_block",
]

SKILL_MD = "SKILL.md"
EVALS_FILE = "evals/evals.json"
ROUTING_FILE = "evals/routing.json"
SPEC_FIELDS = ("name", "description", "license", "compatibility", "metadata", "allowed-tools")
MAX_NAME, MAX_DESCRIPTION, MAX_COMPATIBILITY = 64, 1024, 500


@dataclass(frozen=True)
class SkillDoc:
    """A parsed ``SKILL.md``: its folder, frontmatter, body, and the non-fatal warnings found."""

    folder: Path
    name: str
    description: str
    frontmatter: dict[str, Any]
    body: str
    warnings: list[str] = field(default_factory=list)

    @property
    def path(self) -> Path:
        return self.folder / SKILL_MD


def parse_frontmatter(text: str, *, file: str) -> tuple[dict[str, Any], str]:
    """Split ``SKILL.md`` text into its YAML frontmatter (a mapping) and body. InputError if malformed."""
    import yaml

    text = text.removeprefix("\ufeff")
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        raise InputError("must start with YAML frontmatter between '---' lines", file=file,
                         hint="begin the file with ---, name: ..., description: ..., ---")
    for end in range(1, len(lines)):
        if lines[end].strip() == "---":
            break
    else:
        raise InputError("the frontmatter is not closed with a '---' line", file=file)
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when present: 10x faster, same result
    try:
        data = yaml.load("".join(lines[1:end]), Loader=loader)  # noqa: S506 - a safe loader
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 2}" if mark is not None else ""
        raise InputError(f"invalid YAML in the frontmatter{where}", file=file) from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise InputError("the frontmatter must be a YAML mapping of fields", file=file, field="frontmatter")
    return {str(k): v for k, v in data.items()}, "".join(lines[end + 1:]).strip()


def frontmatter_problems(meta: dict[str, Any], folder: Path | None) -> tuple[list[str], list[str]]:
    """``(errors, warnings)`` of a parsed frontmatter against the specification (see the module doc)."""
    errors: list[str] = []
    warnings: list[str] = []
    name = meta.get("name")
    if not isinstance(name, str) or not name.strip():
        errors.append("name: required, a non-empty string")
    else:
        norm = unicodedata.normalize("NFKC", name.strip())
        if len(norm) > MAX_NAME:
            errors.append(f"name: {len(norm)} characters, at most {MAX_NAME} allowed")
        if norm != norm.lower():
            errors.append(f"name: {norm!r} must be lowercase")
        if norm.startswith("-") or norm.endswith("-") or "--" in norm:
            errors.append(f"name: {norm!r} must not start or end with a hyphen or hold two in a row")
        if not all(ch.isalnum() or ch == "-" for ch in norm):
            errors.append(f"name: {norm!r} may hold only letters, digits and hyphens")
        if folder is not None and unicodedata.normalize("NFKC", folder.name) != norm:
            errors.append(f"name: {norm!r} must equal the skill's folder name {folder.name!r}")
    description = meta.get("description")
    if not isinstance(description, str) or not description.strip():
        errors.append("description: required, a non-empty string")
    elif len(description) > MAX_DESCRIPTION:
        errors.append(f"description: {len(description)} characters, at most {MAX_DESCRIPTION} allowed")
    compatibility = meta.get("compatibility")
    if compatibility is not None and (not isinstance(compatibility, str) or len(compatibility) > MAX_COMPATIBILITY):
        errors.append(f"compatibility: must be a string of at most {MAX_COMPATIBILITY} characters")
    if "metadata" in meta and not isinstance(meta["metadata"], dict):
        errors.append("metadata: must be a mapping")
    extra = sorted(set(meta) - set(SPEC_FIELDS))
    if extra:
        warnings.append("fields outside the Agent Skills specification: " + ", ".join(extra))
    return errors, warnings


def load_skill_md(folder: Path) -> SkillDoc:
    """Read and validate ``<folder>/SKILL.md``; the first problem is an InputError naming the file and field."""
    folder = Path(folder)
    path = folder / SKILL_MD
    if not path.is_file():
        raise InputError(f"no {SKILL_MD} in this folder", file=str(folder),
                         hint="pass the folder of an Agent Skill (it holds SKILL.md)")
    text = read_text_file(path)  # a FIFO, a device, a huge file: refused, never read
    meta, body = parse_frontmatter(text, file=str(path))
    errors, warnings = frontmatter_problems(meta, folder.resolve())
    if errors:
        field_name, _, problem = errors[0].partition(": ")
        more = f" (+{len(errors) - 1} more problems)" if len(errors) > 1 else ""
        raise InputError(problem + more, file=str(path), field=f"frontmatter.{field_name}")
    return SkillDoc(folder=folder, name=str(meta["name"]).strip(), description=str(meta["description"]).strip(),
                    frontmatter=meta, body=body, warnings=warnings)


def skill_prompt_block(skills: list[SkillDoc]) -> str:
    """The ``<available_skills>`` block the Agent Skills specification recommends for a system prompt
    ("" when there are no skills, so a baseline prompt mentions none)."""
    import html

    if not skills:
        return ""
    lines = ["<available_skills>"]
    for skill in skills:
        lines += ["<skill>", f"<name>{html.escape(skill.name)}</name>",
                  f"<description>{html.escape(skill.description)}</description>", "</skill>"]
    lines.append("</available_skills>")
    return "\n".join(lines)


# ---- evals/evals.json --------------------------------------------------------------------------------


class EvalCase(BaseModel):
    """One case of ``evals.json``. ``assertions`` and ``expectations`` are the same list (either name)."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    id: int | str
    prompt: str = Field(min_length=1)
    expected_output: str = ""
    files: list[str] = Field(default_factory=list)
    assertions: list[str] = Field(default_factory=list)
    selftune_assertions: list[dict[str, Any]] = Field(default_factory=list)

    @field_validator("id", mode="before")
    @classmethod
    def _not_a_bool(cls, value: Any) -> Any:
        if isinstance(value, bool):  # JSON true would be read as the id 1
            raise ValueError("an id is a number or a text, not true or false")
        return value

    @model_validator(mode="before")
    @classmethod
    def _expectations(cls, data: Any) -> Any:
        if isinstance(data, dict) and "expectations" in data:
            data = dict(data)
            given = data.pop("expectations")
            if "assertions" in data and data["assertions"] != given:
                raise ValueError("give the assertions once, as 'assertions' or 'expectations', not both")
            data["assertions"] = given
        if isinstance(data, dict) and isinstance(data.get("assertions"), list):
            data = dict(data)
            data["assertions"] = [_assertion_text(item) for item in data["assertions"]]
        return data

    @property
    def key(self) -> str:
        """The id as text, safe in a folder name (``eval-<key>``)."""
        return str(self.id)


def _assertion_text(item: Any) -> Any:
    """An assertion as text: a string as it is, an object by its ``text`` (``{"id": ..., "text": ...}``, as
    skill-creator's graders and some skill repositories write them); anything else is left for the model to
    refuse."""
    if isinstance(item, dict) and isinstance(item.get("text"), str):
        return item["text"]
    if isinstance(item, dict):
        raise ValueError('an assertion object needs a "text" string ({"id": ..., "text": ...})')
    return item


class EvalsFile(BaseModel):
    model_config = ConfigDict(extra="allow")

    skill_name: str | None = None
    evals: list[EvalCase]


def _inside(root: Path, relative: str) -> Path | None:
    """``root/relative`` resolved, or None when it leaves ``root`` (``..``, absolute, or a symlink out)."""
    try:
        if not relative or Path(relative).is_absolute():
            return None
        target = (root / relative).resolve()
    except (ValueError, OSError):  # a NUL byte, a loop of symlinks: not a usable path
        return None
    return target if target.is_relative_to(root.resolve()) else None


def _assertions_key(data: Any, index: int) -> str:
    """The name case ``index`` gives its assertions in the file: ``expectations`` or ``assertions``."""
    cases = data.get("evals") if isinstance(data, dict) else None
    case = cases[index] if isinstance(cases, list) and index < len(cases) else None
    return "expectations" if isinstance(case, dict) and "expectations" in case else "assertions"


def _as_written(exc: InputError, data: Any) -> InputError:
    """``exc`` naming the field as the file writes it (``expectations`` is read as ``assertions``)."""
    found = re.match(r"\$\.evals\[(\d+)\]\.assertions\b", exc.field or "")
    if found is None or exc.field is None:
        return exc
    name = _assertions_key(data, int(found.group(1)))
    return InputError(exc.problem, file=exc.file, field=exc.field.replace(".assertions", f".{name}", 1),
                      hint=exc.hint)


MAX_ID_BYTES = 200  # a case's folder is eval-<id>, and a file name holds at most 255 bytes


def load_evals(path: Path, skill_root: Path) -> EvalsFile:
    """Load ``evals.json``: at least one case, unique ids safe as folder names, and every ``files`` entry an
    existing file or folder inside ``skill_root``. Every problem is an InputError naming the file and field."""
    data = read_json(path)
    if not isinstance(data, dict):  # pydantic would say "a valid dictionary or instance of EvalsFile"
        kind = {list: "an array", str: "a string", bool: "a boolean", int: "a number", float: "a number"}
        raise InputError(f"expected a JSON object, not {kind.get(type(data), 'null')}",
                         file=str(path), field="$", hint='write {"skill_name": ..., "evals": [{"id": ..., '
                                                         '"prompt": ...}, ...]}')
    try:
        evals = validate(EvalsFile, data, str(path))
    except InputError as exc:
        raise _as_written(exc, data) from None
    if not evals.evals:
        raise InputError("has no cases", file=str(path), field="$.evals", hint="add at least one eval case")
    seen: set[str] = set()
    for index, case in enumerate(evals.evals):
        at = f"$.evals[{index}]"
        if not case.prompt.strip():
            raise InputError("the prompt is blank", file=str(path), field=f"{at}.prompt",
                             hint="write the request the agent is given")
        for j, text in enumerate(case.assertions):
            if not text.strip():
                raise InputError("the assertion is blank", file=str(path),
                                 field=f"{at}.{_assertions_key(data, index)}[{j}]", hint="write it or remove it")
        key = case.key
        if key in seen:
            raise InputError(f"id {case.id!r} appears twice", file=str(path), field=f"{at}.id")
        seen.add(key)
        if not key or key in (".", "..") or any(ch in key for ch in '/\\:*?"<>|\0'):
            raise InputError(f"id {case.id!r} cannot be used as a folder name", file=str(path), field=f"{at}.id")
        if len(key.encode("utf-8", "surrogatepass")) > MAX_ID_BYTES:  # eval-<id> must fit a file name
            raise InputError(f"id {key[:40]!r}... is longer than {MAX_ID_BYTES} bytes", file=str(path),
                             field=f"{at}.id", hint="use a shorter id: it names the case's folder")
        for j, name in enumerate(case.files):
            target = _inside(skill_root, name)
            if target is None:
                raise InputError(f"{name!r} leaves the skill folder", file=str(path), field=f"{at}.files[{j}]",
                                 hint="fixture files must live inside the skill folder")
            if not (target.is_file() or target.is_dir()):
                raise InputError(f"fixture file {name!r} not found in {skill_root}", file=str(path),
                                 field=f"{at}.files[{j}]", hint="name a file or a folder of the skill, "
                                                                "relative to the folder holding SKILL.md")
    return evals


# ---- evals/routing.json ------------------------------------------------------------------------------


class RoutingQuery(BaseModel):
    model_config = ConfigDict(extra="allow")

    query: str = Field(min_length=1)
    should_trigger: StrictBool
    invocation_type: str | None = None

    @field_validator("invocation_type")
    @classmethod
    def _blank_type_is_none(cls, value: str | None) -> str | None:
        """A blank type names no type, like an absent one (one group, one value: null)."""
        return value.strip() or None if value is not None else None


def load_routing(path: Path) -> list[RoutingQuery]:
    """Load ``routing.json`` (a non-empty array of queries, each with ``should_trigger``)."""
    data = read_json(path)
    if isinstance(data, dict) and isinstance(data.get("queries"), list):
        data = data["queries"]
    if not isinstance(data, list):
        raise InputError("expected a JSON array of {query, should_trigger} objects", file=str(path), field="$")
    queries = validate(list[RoutingQuery], data, str(path))
    if not queries:
        raise InputError("has no queries", file=str(path), field="$", hint="add at least one query")
    return queries
