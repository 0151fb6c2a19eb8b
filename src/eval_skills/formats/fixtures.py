"""Instruction skills' fixtures: the skills folder, ``evals/tasks.json``, and the text files checks read.

Layout (``skills/`` is the ``--skills-dir``)::

    skills/<skill>/SKILL.md                 a folder with SKILL.md is a skill
    skills/<skill>/evals/tasks.json         [{"id", "prompt", "must_include": [], "must_not_include": []}]
                                            or {"tasks": [...]}
    skills/<skill>/evals/examples/<id>.md   the worked example of each task
    skills/<skill>/rules/**                 grounding sources, with references/** and SKILL.md
    skills/<skill>/references/**
    rules/<skill>.md, rules/<skill>.mdc     at the skills folder's parent: grounding sources too
    <answers>/<skill>/<id>.md               answers to score
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from ..errors import InputError
from ._load import json_path, read_json, validate
from .skill_files import list_skill_files, read_regular

__all__ = [
    "EXAMPLES_DIR",
    "SKILL_FILE",
    "TASKS_FILE",
    "FixtureTask",
    "InstructionSkill",
    "TextSource",
    "discover_skills",
    "grounding_sources",
    "load_tasks",
    "read_answer",
    "select_skills",
    "unsafe_id_reason",
]

SKILL_FILE = "SKILL.md"
TASKS_FILE = "evals/tasks.json"
EXAMPLES_DIR = "evals/examples"

CheckString = Annotated[str, Field(min_length=1)]


class FixtureTask(BaseModel):
    """One task of ``evals/tasks.json``: a prompt and the substrings its answer must (not) contain."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    prompt: str
    must_include: list[CheckString] = Field(default_factory=list)
    must_not_include: list[CheckString] = Field(default_factory=list)

    @property
    def check_count(self) -> int:
        return len(self.must_include) + len(self.must_not_include)


@dataclass(frozen=True)
class InstructionSkill:
    """A folder holding ``SKILL.md``; its name is the folder's name."""

    name: str
    root: Path

    @property
    def tasks_file(self) -> Path:
        return self.root / TASKS_FILE

    def example_file(self, task_id: str) -> Path:
        return self.root / EXAMPLES_DIR / f"{task_id}.md"


@dataclass(frozen=True)
class TextSource:
    path: Path
    text: str


# -- the skills folder ---------------------------------------------------------------------------------


def discover_skills(skills_dir: Path) -> list[InstructionSkill]:
    """Every folder of ``skills_dir`` that holds a ``SKILL.md``, sorted by name."""
    if not skills_dir.is_dir():
        what = "is not a folder" if skills_dir.exists() else "skills folder not found"
        raise InputError(what, file=str(skills_dir), hint="pass --skills-dir with one folder per skill")
    found = [InstructionSkill(entry.name, Path(entry.path)) for entry in os.scandir(skills_dir)
             if entry.is_dir() and not entry.name.startswith(".")
             and os.path.isfile(os.path.join(entry.path, SKILL_FILE))]
    if not found:
        hint = "pass --skills-dir with one folder per skill, each with SKILL.md"
        if (skills_dir / SKILL_FILE).is_file():  # the folder of one skill: its parent is the skills folder
            parent = skills_dir.resolve().parent
            hint = (f"this folder is one skill; pass its parent, --skills-dir {parent}, "
                    f"and --skill {skills_dir.resolve().name} to check only it")
        raise InputError(f"no skills found (no folder with a {SKILL_FILE})", file=str(skills_dir), hint=hint)
    return sorted(found, key=lambda skill: skill.name)


def select_skills(skills: Sequence[InstructionSkill], names: Sequence[str],
                  skills_dir: Path | None = None) -> list[InstructionSkill]:
    """The skills named (in the order given, once each), or all of them when ``names`` is empty."""
    if not names:
        return list(skills)
    by_name = {skill.name: skill for skill in skills}
    unknown = [name for name in names if name not in by_name]
    if unknown:
        known = sorted(by_name)
        listing = ", ".join(known[:12]) + (f" (+{len(known) - 12} more)" if len(known) > 12 else "")
        raise InputError(f"unknown skill {', '.join(repr(n) for n in unknown)}",
                         file=str(skills_dir) if skills_dir else None, hint=f"known skills: {listing}")
    return [by_name[name] for name in dict.fromkeys(names)]


# -- tasks.json ----------------------------------------------------------------------------------------

_UNSAFE_CHARS = re.compile(r'[/\\:*?"<>|\x00-\x1f\x7f]')


def unsafe_id_reason(task_id: str) -> str | None:
    """Why ``task_id`` cannot be a file name, or None when it can."""
    if not task_id.strip():
        return "is empty"
    if task_id.startswith("."):
        return "starts with a dot"
    if ".." in task_id:
        return "contains '..'"
    bad = _UNSAFE_CHARS.search(task_id)
    if bad:
        return f"contains {bad.group(0)!r}"
    if task_id != task_id.strip():
        return "starts or ends with a space"
    return None


def load_tasks(path: Path) -> list[FixtureTask] | None:
    """The tasks of one ``tasks.json``; None when the file does not exist.

    Bad input (JSON, fields, an unsafe or duplicate id) is an InputError naming the file, field and task.
    """
    if not path.is_file():
        return None
    data: Any = read_json(path)
    file = str(path)
    prefix: tuple[int | str, ...] = ()
    if isinstance(data, dict):
        if "tasks" not in data:
            raise InputError('expected an array of tasks or an object with a "tasks" array', file=file,
                             field="$.tasks")
        data, prefix = data["tasks"], ("tasks",)
    if not isinstance(data, list):
        raise InputError("expected an array of tasks", file=file, field="$" + (".tasks" if prefix else ""))
    tasks: list[FixtureTask] = []
    seen: dict[str, int] = {}
    for index, raw in enumerate(data):
        where = (*prefix, index)
        named = f" (task {raw['id']!r})" if isinstance(raw, dict) and isinstance(raw.get("id"), str) else ""
        try:
            task = validate(FixtureTask, raw, file, where)
        except InputError as exc:
            raise InputError(exc.problem + named, file=exc.file, field=exc.field, hint=exc.hint) from None
        field = json_path((*where, "id"))
        reason = unsafe_id_reason(task.id)
        if reason:
            raise InputError(f"task id {task.id!r} {reason}, so it cannot name its answer file", file=file,
                             field=field, hint="use letters, digits, '-', '_' or single dots")
        if task.id in seen:
            raise InputError(f"task id {task.id!r} is used twice (tasks {seen[task.id]} and {index})",
                             file=file, field=field, hint="give each task its own id")
        seen[task.id] = index
        tasks.append(task)
    return tasks


# -- answers and grounding sources ---------------------------------------------------------------------


def read_answer(path: str | Path) -> str | None:
    """An answer or worked example as text; None when the file does not exist. Must be UTF-8."""
    if not os.path.exists(path):  # a dangling link too
        return None
    if os.path.isdir(path):
        raise InputError("is a folder, expected a Markdown file", file=str(path))
    raw = read_regular(path)  # a FIFO, a device, a huge file: refused, never read
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"is not valid UTF-8 (byte {exc.start})", file=str(path),
                         hint="save the file as UTF-8") from None


def _read_text_strict(path: Path) -> str:
    text = read_answer(path)
    if text is None:
        raise InputError("file not found", file=str(path))
    return text


def _text_files(folder: Path, skill_root: Path, skipped: list[str] | None) -> Iterator[TextSource]:
    """Every non-hidden regular file under ``folder`` that is UTF-8 text (binary files are skipped; FIFOs,
    devices, links out of the skill, files over 16 MiB too, each named in ``skipped``)."""
    if not folder.is_dir() or folder.is_symlink():
        return
    listed = list_skill_files(folder, skip_top=(), skip=(), hidden=False, inside=skill_root)
    if skipped is not None:
        skipped += [entry.line() for entry in listed.skipped]
    for path in listed.files.values():
        try:
            text = read_regular(path, follow=False).decode("utf-8-sig")
        except (InputError, UnicodeDecodeError):
            continue
        if "\x00" not in text:
            yield TextSource(path, text)


def grounding_sources(skill: InstructionSkill, skills_dir: Path, skipped: list[str] | None = None) -> list[TextSource]:
    """What counts as "the skill, its rule, or its references" for the grounding check.

    ``SKILL.md``; every text file under the skill's ``rules/``; ``rules/<skill>.md`` and
    ``rules/<skill>.mdc`` beside the skills folder; every text file under the skill's ``references/``.
    Hidden files and files that are not UTF-8 text are skipped under ``rules/`` and ``references/``, and so
    is what is not a regular file inside the skill (named in ``skipped``).
    """
    sources = [TextSource(skill.root / SKILL_FILE, _read_text_strict(skill.root / SKILL_FILE))]
    sources.extend(_text_files(skill.root / "rules", skill.root, skipped))
    parent_rules = skills_dir.resolve().parent / "rules"
    for suffix in (".md", ".mdc"):
        rule = parent_rules / f"{skill.name}{suffix}"
        if rule.is_file():
            sources.append(TextSource(rule, _read_text_strict(rule)))
    sources.extend(_text_files(skill.root / "references", skill.root, skipped))
    return sources
