"""The file tools of the built-in agent loop, confined to the run's workspace.

``read_file(path)``, ``list_files(path=".")``, ``write_file(path, content)`` (parent folders are created) and,
when skills are installed, ``load_skill(name)`` (the skill's ``SKILL.md`` body). Paths are relative to the
workspace. A path that is absolute, or that leaves the workspace with ``..`` or through a symbolic link
(including a dangling one, or a link in a parent folder), is refused before anything is opened: the
model gets a tool error and the run goes on. Symbolic links that stay inside the workspace are allowed.
A tool call never raises: every failure is its result, marked as an error.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from .output import read_json

__all__ = ["READ_LIMIT", "ToolOutcome", "WorkspaceTools"]

READ_LIMIT = 200_000  # characters of a file returned to the model
LIST_LIMIT = 500  # entries listed
WRITE_LIMIT = 16 << 20  # characters the model may write in one call


@dataclass(frozen=True)
class ToolOutcome:
    text: str  # what the model is told
    is_error: bool = False
    arguments: Any = None  # the decoded arguments (the raw text when they were not a JSON object)
    skill: str | None = None  # the skill a successful load_skill loaded


class Refused(Exception):
    """A tool call that cannot be done; its message is the model's tool error."""


def _function(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "description": description, "parameters": {
        "type": "object", "properties": properties, "required": required, "additionalProperties": False}}}


_PATH = {"type": "string", "description": "A path relative to the workspace."}
FILE_TOOLS = [
    _function("read_file", "Read a text file of the workspace.", {"path": _PATH}, ["path"]),
    _function("list_files", "List the files under a folder of the workspace (default: all of it).",
              {"path": {**_PATH, "default": "."}}, []),
    _function("write_file", "Write a text file in the workspace (its folders are created; an existing file is "
              "replaced).", {"path": _PATH, "content": {"type": "string"}}, ["path", "content"]),
]
LOAD_SKILL = _function("load_skill", "Load a skill: returns its instructions (SKILL.md). Load a skill whose "
                       "description matches the task before you start on it.",
                       {"name": {"type": "string", "description": "The skill's name."}}, ["name"])


class WorkspaceTools:
    """The tools of one run. ``skills`` maps installed skill names to their SKILL.md bodies."""

    def __init__(self, workspace: Path, skills: dict[str, str], skills_subdir: str) -> None:
        self.root = Path(os.path.realpath(workspace))
        self.skills = skills
        self.skills_subdir = skills_subdir

    def specs(self) -> list[dict[str, Any]]:
        """The tool definitions for the chat-completions request (no load_skill without skills)."""
        return [*FILE_TOOLS, LOAD_SKILL] if self.skills else list(FILE_TOOLS)

    def call(self, name: str, arguments: str | None) -> ToolOutcome:
        try:
            args = read_json(arguments or "{}")
        except ValueError:
            return ToolOutcome("error: the arguments are not valid JSON", True, arguments)
        if not isinstance(args, dict):
            return ToolOutcome("error: the arguments must be a JSON object", True, args)
        tool = {"read_file": self.read_file, "list_files": self.list_files, "write_file": self.write_file,
                "load_skill": self.load_skill if self.skills else None}.get(name)
        if tool is None:
            return ToolOutcome(f"error: there is no tool {name!r}", True, args)
        try:
            text = tool(**args)
        except TypeError:
            return ToolOutcome(f"error: wrong arguments for {name}: {sorted(args)}", True, args)
        except Refused as exc:
            return ToolOutcome(f"error: {exc}", True, args)
        except OSError as exc:
            return ToolOutcome(f"error: {exc.strerror or exc}", True, args)
        return ToolOutcome(text, False, args, args.get("name") if name == "load_skill" else None)

    # ---- confinement -------------------------------------------------------------------------------

    def resolve(self, path: Any) -> Path:
        """The real path of ``path`` inside the workspace; Refused when it is not one."""
        if not isinstance(path, str) or not path.strip():
            raise Refused("path must be a non-empty string")
        if "\0" in path:
            raise Refused("path holds a NUL character")
        pure = PurePosixPath(path.replace("\\", "/"))
        if pure.is_absolute() or path.startswith("~") or (len(path) > 1 and path[1] == ":"):
            raise Refused(f"{path!r} is absolute: give a path relative to the workspace")
        joined = os.path.normpath(os.path.join(self.root, *pure.parts))
        if not _inside(joined, self.root):
            raise Refused(f"{path!r} leaves the workspace")
        real = os.path.realpath(joined)  # follows links only to see where they go
        if not _inside(real, self.root):
            raise Refused(f"{path!r} leads out of the workspace through a symbolic link")
        return Path(real)

    def _shown(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix() or "."

    # ---- tools -------------------------------------------------------------------------------------

    def read_file(self, path: str) -> str:
        target = self.resolve(path)
        info = os.stat(target)
        if not stat.S_ISREG(info.st_mode):
            raise Refused(f"{path!r} is not a file")
        with open(target, "rb") as handle:
            data = handle.read(READ_LIMIT * 4 + 1)
        text = data.decode("utf-8", "replace")
        if len(text) > READ_LIMIT or info.st_size > len(data):
            return text[:READ_LIMIT] + f"\n[... truncated: the file has {info.st_size} bytes]"
        return text

    def list_files(self, path: str = ".") -> str:
        top = self.resolve(path)
        if not top.is_dir():
            raise Refused(f"{path!r} is not a folder")
        entries: list[str] = []
        for folder, dirs, files in os.walk(top):  # links to folders are listed, never entered
            dirs[:] = sorted(d for d in dirs if d != ".git")
            base = Path(folder)
            for name in files + [d for d in dirs if (base / d).is_symlink()]:
                entries.append(self._shown(base / name))
                if len(entries) >= LIST_LIMIT:
                    return "\n".join(sorted(entries)) + f"\n[... more than {LIST_LIMIT} entries]"
        return "\n".join(sorted(entries)) if entries else "(no files)"

    def write_file(self, path: str, content: str) -> str:
        if not isinstance(content, str):
            raise Refused("content must be a string")
        if len(content) > WRITE_LIMIT:
            raise Refused(f"content is longer than {WRITE_LIMIT} characters")
        target = self.resolve(path)
        if target == self.root or target.is_dir() or path.endswith(("/", "\\")):
            raise Refused(f"{path!r} is a folder")
        target.parent.mkdir(parents=True, exist_ok=True)
        if not _inside(os.path.realpath(target.parent), self.root):  # a link created in between
            raise Refused(f"{path!r} leads out of the workspace through a symbolic link")
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
        with os.fdopen(os.open(target, flags, 0o644), "w", encoding="utf-8") as handle:
            handle.write(content)
        return f"wrote {len(content.encode())} bytes to {self._shown(target)}"

    def load_skill(self, name: str) -> str:
        if not isinstance(name, str) or name not in self.skills:
            raise Refused(f"no skill {name!r}; the skills are: {', '.join(sorted(self.skills))}")
        return (f"Skill folder: {self.skills_subdir}/{name}/ (read its other files with read_file)\n\n"
                + self.skills[name])


def _inside(path: str, root: Path) -> bool:
    return path == str(root) or path.startswith(str(root) + os.sep)
