"""The check of an Agent Skills folder: every problem of its files, one line each.

What is checked (the same rules ``paired``, ``routing`` and ``fixtures`` apply before they run anything):

- ``SKILL.md``: present, UTF-8, YAML frontmatter between ``---`` lines, and its fields by the Agent Skills
  specification (:func:`~eval_skills.formats.agentskills.frontmatter_problems`): ``name`` and ``description``
  required and well formed, ``name`` equal to the folder's name. Keys outside the specification's fields are a
  warning, or an error with ``strict`` (as the reference validator ``skills-ref`` has it);
- ``evals/evals.json``: its cases (ids, prompts, assertions as texts or ``{"id", "text"}`` objects), and every
  ``files`` entry an existing file or folder inside the skill;
- ``evals/routing.json``: its queries;
- ``evals/tasks.json`` and ``evals/examples/<id>.md``: the tasks, each example readable as UTF-8; a task
  without an example is a warning (``fixtures`` checks the examples), an example of no task too;
- the folder's entries: each one every command skips (a FIFO, a socket, a device, a symbolic link out of the
  folder or to a folder, a file over 16 MiB: see :mod:`.skill_files`) is a warning naming it.

A loader stops at the first problem of its file, so a file shows one problem at a time.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from ..errors import InputError
from .agentskills import EVALS_FILE, ROUTING_FILE, SKILL_MD, frontmatter_problems, load_evals, load_routing
from .agentskills import parse_frontmatter as _parse
from .fixtures import EXAMPLES_DIR, TASKS_FILE, load_tasks, read_answer
from .skill_files import list_skill_files, read_text_file

__all__ = ["FolderCheck", "Problem", "check_skill_folder", "find_skill_folders"]

Level = Literal["error", "warning"]
_NOT_SEARCHED = frozenset({".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".tox"})


@dataclass(frozen=True, slots=True)
class Problem:
    level: Level
    file: str
    field: str | None
    message: str

    def line(self) -> str:
        where = f"{self.file}: {self.field}" if self.field else self.file
        return f"{self.level}: {where}: {self.message}"

    def to_dict(self) -> dict[str, str | None]:
        return {"level": self.level, "file": self.file, "field": self.field, "message": self.message}


@dataclass(slots=True)
class FolderCheck:
    folder: str
    name: str | None = None
    problems: list[Problem] = field(default_factory=list)

    @property
    def valid(self) -> bool:
        return not any(p.level == "error" for p in self.problems)

    def to_dict(self) -> dict[str, object]:
        return {"folder": self.folder, "name": self.name, "valid": self.valid,
                "problems": [p.to_dict() for p in self.problems]}


def _from_error(exc: InputError, file: str) -> Problem:
    message = exc.problem + (f" ({exc.hint})" if exc.hint else "")
    return Problem("error", exc.file or file, exc.field, message)


def _skill_md(folder: Path, strict: bool, check: FolderCheck) -> None:
    path = folder / SKILL_MD
    file = str(path)
    if not os.path.lexists(path):
        check.problems.append(Problem("error", str(folder), None, f"no {SKILL_MD} in this folder"))
        return
    try:
        text = read_text_file(path)  # a FIFO, a device, a huge file: an error, never read
    except InputError as exc:
        check.problems.append(_from_error(exc, file))
        return
    try:
        meta, _ = _parse(text, file=file)
    except InputError as exc:
        check.problems.append(_from_error(exc, file))
        return
    name = meta.get("name")
    check.name = name.strip() if isinstance(name, str) else None
    errors, warnings = frontmatter_problems(meta, folder.resolve())
    for item in errors:
        key, _, message = item.partition(": ")
        check.problems.append(Problem("error", file, f"frontmatter.{key}", message))
    for item in warnings:
        check.problems.append(Problem("error" if strict else "warning", file, "frontmatter", item))


def _tasks(folder: Path, check: FolderCheck) -> None:
    tasks_path = folder / TASKS_FILE
    try:
        tasks = load_tasks(tasks_path)
    except InputError as exc:
        check.problems.append(_from_error(exc, str(tasks_path)))
        return
    examples = folder / EXAMPLES_DIR
    ids = {task.id for task in tasks or []}
    for task in tasks or []:
        path = examples / f"{task.id}.md"
        try:
            text = read_answer(path)
        except InputError as exc:
            check.problems.append(_from_error(exc, str(path)))
            continue
        if text is None:
            check.problems.append(Problem("warning", str(tasks_path), f"task {task.id!r}",
                                          f"has no worked example {EXAMPLES_DIR}/{task.id}.md"))
    if tasks is not None and examples.is_dir():
        for entry in sorted(os.scandir(examples), key=lambda e: e.name):
            stem, ext = os.path.splitext(entry.name)
            if ext == ".md" and entry.is_file() and stem not in ids:
                check.problems.append(Problem("warning", entry.path, None,
                                              f"is the example of no task in {TASKS_FILE}"))


def _contents(folder: Path, check: FolderCheck) -> None:
    """A warning for each entry every command skips (a FIFO, a device, a link out of the folder, a file too
    large): see :mod:`.skill_files`."""
    for skipped in list_skill_files(folder, skip_top=()).skipped:
        check.problems.append(Problem("warning", skipped.path, None, f"{skipped.reason}: every command skips it"))


def check_skill_folder(folder: Path, *, strict: bool = False) -> FolderCheck:
    """Every problem of one skill folder (see the module doc)."""
    folder = Path(folder)
    check = FolderCheck(folder=str(folder))
    _skill_md(folder, strict, check)
    _contents(folder, check)
    evals = folder / EVALS_FILE
    if evals.is_file():
        try:
            load_evals(evals, folder)
        except InputError as exc:
            check.problems.append(_from_error(exc, str(evals)))
    routing = folder / ROUTING_FILE
    if routing.is_file():
        try:
            load_routing(routing)
        except InputError as exc:
            check.problems.append(_from_error(exc, str(routing)))
    if (folder / TASKS_FILE).exists():
        _tasks(folder, check)
    return check


def find_skill_folders(path: Path) -> list[Path]:
    """The skill folders ``path`` names: itself when it holds ``SKILL.md`` (or is one), else every folder
    below it holding one (``.git``, ``node_modules``, ``__pycache__`` and virtual environments skipped; other
    hidden folders are searched: skills live in ``.claude/skills/``). InputError when there is none."""
    path = Path(path)
    if not path.exists():
        raise InputError("not found", file=str(path), hint="pass a skill folder or a folder of skills")
    if path.is_file():
        if path.name != SKILL_MD:
            raise InputError(f"is a file, not a skill folder or its {SKILL_MD}", file=str(path))
        return [path.parent]
    if (path / SKILL_MD).is_file():
        return [path]
    found = []
    for current, dirs, files in os.walk(path):
        dirs[:] = sorted(d for d in dirs if d not in _NOT_SEARCHED)
        if SKILL_MD in files:
            found.append(Path(current))
            dirs[:] = []  # a skill's own folders are not skills
    if not found:
        raise InputError(f"no {SKILL_MD} in this folder or below it", file=str(path),
                         hint="pass the folder of an Agent Skill, or a folder holding skills")
    return found
