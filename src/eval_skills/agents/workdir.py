"""The workspace of one agent run: skills copied in before it, and the files the agent changed.

Skills are written from the bytes of a :class:`~eval_skills.agents.bundle.SkillBundle` read at the start (their
digest checked), a folder being read into one first, into ``<workspace>/<skills_subdir>/<name>/``, without
their ``evals/`` folder (it holds the expected answers) and without ``.git`` and ``__pycache__``. Only regular
files are written: a symbolic link to a file inside the skill as the file it points to; links out of the skill,
FIFOs, devices and files over 16 MiB are skipped (see :mod:`eval_skills.formats.skill_files`).

The workspace is snapshotted before and after the run (the installed skills and ``.git`` left out): files up
to 1 MiB are compared by content, larger ones by size and modification time. Symbolic links are recorded,
never followed. A snapshot given a :class:`Budget` is a bounded one: it counts every entry of the tree (those in
the left-out folders too; a folder is listed only as far as the budget goes) and every byte it reads, and raises
:class:`TreeTooLarge` once either runs out, so a caller can do it where only a small tree may be walked (on the
event loop) and hand a larger one to a thread. The second snapshot can keep the bytes it read of the files that
changed (``kept``), so a run's outputs are read once.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import re
import secrets
import shutil
import stat
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Literal

from .._atomic import write_file
from ..errors import InputError
from ..formats.untrusted import clean_text
from ..scratch import folder_prefix, scratch_folder
from .bundle import SkillBundle, install_bundle, read_bundle

__all__ = ["Budget", "FileChange", "RunFolders", "SkillSource", "TreeTooLarge", "changed_files", "check_subdir",
           "install_skills", "snapshot", "write_files"]

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_HASH_LIMIT = 1 << 20


@dataclass(frozen=True, slots=True)
class SkillSource:
    """A skill folder to install, and the name of its folder in the workspace (default: the folder's name;
    give another to install, say, an old copy of a skill under the skill's own name)."""

    path: Path
    name: str = ""

    def __post_init__(self) -> None:  # SkillSource("skills/pdf", "pdf"): the path may be given as text
        object.__setattr__(self, "path", Path(self.path))
        if not self.name:
            object.__setattr__(self, "name", self.path.resolve().name)

    @classmethod
    def of(cls, value: Path | str | SkillSource) -> SkillSource:
        return value if isinstance(value, SkillSource) else cls(Path(value))


@dataclass(frozen=True, slots=True)
class FileChange:
    """A file the agent created, modified or deleted; ``path`` is relative to the workspace, with ``/``.
    ``size`` is the size after the run (None when deleted); ``data``, its bytes after the run when the snapshot
    that found the change read them (files up to 1 MiB, when asked for: see :func:`snapshot`)."""

    path: str
    kind: Literal["created", "modified", "deleted"]
    size: int | None = None
    data: bytes | None = field(default=None, repr=False, compare=False)

    @property
    def name(self) -> str:
        """``path`` as it can be written and shown: a name that is not UTF-8 (the agent chose it) has its
        undecodable bytes, which ``path`` holds as lone surrogates, as U+FFFD."""
        return clean_text(self.path)


class RunFolders:
    """Private folders for runs: one folder (``0300`` once made: its entries cannot be listed) holding one
    ``0700`` folder per run, named by 128 random bits, so no run can find or guess another's folder by its
    own (a program running as you that changes the permissions back still can: only a sandbox stops it).
    ``kind`` names them (``eval-skills-<kind>-...``); ``scratch`` is the folder they are made in (default:
    :func:`~eval_skills.scratch.scratch_folder`, in memory when it can be)."""

    def __init__(self, kind: str = "runs", scratch: Path | None = None) -> None:
        where = str(scratch) if scratch is not None else scratch_folder()
        self.root = Path(tempfile.mkdtemp(prefix=folder_prefix(kind), dir=where))
        os.chmod(self.root, 0o300)

    def new(self) -> Path:
        """A new empty folder for one run."""
        path = self.root / secrets.token_hex(16)
        path.mkdir(mode=0o700)
        return path

    def close(self) -> None:
        """Remove the root and whatever is left in it."""
        try:
            os.chmod(self.root, 0o700)
        except OSError:
            return
        shutil.rmtree(self.root, ignore_errors=True)


def check_subdir(subdir: str) -> str:
    """A skills subdirectory: relative, inside the workspace; returned with ``/`` separators."""
    parts = PurePosixPath(subdir.replace("\\", "/")).parts
    if not parts or subdir.startswith(("/", "\\")) or any(p in ("..", ".") for p in parts) or ":" in subdir:
        raise InputError(f"{subdir!r} must be a relative folder inside the workspace", field="skills subdir",
                         hint="for example .agents/skills")
    return "/".join(parts)


def _plain_name(name: str) -> str:
    """A file's path in the workspace: ``/``-separated plain components (no ``..``, not absolute)."""
    parts = name.split("/")
    if not name or "\\" in name or "\0" in name or any(p in ("", ".", "..") for p in parts):
        raise InputError(f"fixture file name {name!r} is not a plain relative path", field="files")
    return name


def write_files(workspace: Path, files: Mapping[str, bytes]) -> None:
    """Write ``files`` (relative ``/`` paths to their bytes) into ``workspace``, making their folders."""
    made = {workspace}
    for name, data in files.items():
        target = workspace / _plain_name(name)
        if target.parent not in made:
            target.parent.mkdir(parents=True, exist_ok=True)
            made.add(target.parent)
        write_file(target, data)


def install_skills(workspace: Path, subdir: str, skills: Iterable[SkillSource | SkillBundle],
                   warnings: list[str] | None = None) -> list[str]:
    """Write each skill into ``workspace/subdir/<name>/`` (replacing what is there), a folder read into a bundle
    first (regular files only: what is skipped goes to ``warnings``); the installed names."""
    names: list[str] = []
    for skill in skills:
        if not isinstance(skill, SkillBundle):
            source = skill.path.resolve()
            if not (source / "SKILL.md").is_file():
                raise InputError("is not a skill folder (no SKILL.md in it)", file=str(skill.path))
            if workspace.is_relative_to(source):
                raise InputError("the workspace is inside this skill folder", file=str(skill.path),
                                 hint="put the workspace outside the skill")
            skill = read_bundle(skill.path, skill.name)
            if warnings is not None:
                warnings += skill.skipped
        if "SKILL.md" not in skill.files:
            raise InputError("is not a skill folder (no SKILL.md in it)", file=skill.source or skill.name)
        if not _NAME.fullmatch(skill.name) or skill.name in names:
            problem = "appears twice" if skill.name in names else "cannot be a folder name"
            raise InputError(f"skill name {skill.name!r} {problem}", file=skill.source or skill.name)
        dest = workspace / subdir / skill.name
        _clear(dest)
        install_bundle(dest, skill)
        names.append(skill.name)
    return names


def _clear(dest: Path) -> None:
    try:
        info = os.lstat(dest)
    except FileNotFoundError:
        return  # the usual case: a fresh workspace
    if stat.S_ISDIR(info.st_mode):
        shutil.rmtree(dest)
    else:
        dest.unlink()


Entry = tuple[int, int, bytes | None, str | None]  # size, mtime_ns, digest of small files, link target


class TreeTooLarge(Exception):
    """A bounded walk found more than its :class:`Budget` allows."""


@dataclass(slots=True)
class Budget:
    """What a bounded walk may still take: entries seen and bytes read (:meth:`take` raises
    :class:`TreeTooLarge` once either is overdrawn)."""

    entries: int
    bytes: int

    def take(self, entries: int = 0, size: int = 0) -> None:
        self.entries -= entries
        self.bytes -= size
        if self.entries < 0 or self.bytes < 0:
            raise TreeTooLarge


def snapshot(root: Path, excluded: set[str], written: Mapping[str, bytes] | None = None, *,
             budget: Budget | None = None, since: Mapping[str, Entry] | None = None,
             kept: dict[str, bytes] | None = None) -> dict[str, Entry]:
    """Every file under ``root`` (relative ``/`` paths), except the ``excluded`` relative folders. ``written``:
    files just written with these bytes (by relative path), whose entries are made from the bytes instead of
    being read back. ``budget``: a bounded snapshot (see the module doc). ``kept`` (with ``since``, an earlier
    snapshot): gets the bytes of each file read for its digest that is new since then or whose digest changed,
    so the files a run changed need not be read again."""
    written = written or {}
    found: dict[str, Entry] = {}
    stack = [(root, "", True)]  # a folder, its relative path, and whether its files are recorded (or only counted)
    while stack:
        folder, prefix, recorded = stack.pop()
        try:
            with os.scandir(folder) as listing:  # a bounded walk lists no more of a folder than it may take
                entries = list(listing if budget is None else itertools.islice(listing, max(budget.entries, 0) + 1))
        except OSError:
            continue
        if budget is not None:
            budget.take(len(entries))
        for entry in entries:
            rel = prefix + entry.name
            try:
                if not recorded:
                    if entry.is_dir(follow_symlinks=False):
                        stack.append((Path(entry.path), "", False))
                elif entry.is_symlink():
                    found[rel] = (0, 0, None, os.readlink(entry.path))
                elif entry.is_dir(follow_symlinks=False):
                    if rel not in excluded:
                        stack.append((Path(entry.path), rel + "/", True))
                    elif budget is not None:  # left out, but removed with the rest: counted
                        stack.append((Path(entry.path), "", False))
                elif entry.is_file(follow_symlinks=False):
                    data = written.get(rel)
                    if data is not None and len(data) <= _HASH_LIMIT:  # compared by content: no time needed
                        found[rel] = (len(data), 0, hashlib.blake2b(data, digest_size=16).digest(), None)
                        continue
                    info = entry.stat(follow_symlinks=False)
                    small = info.st_size <= _HASH_LIMIT
                    if small and budget is not None:
                        budget.take(size=info.st_size)
                    digest, content = _read_small(entry.path, info.st_size) if small else (None, None)
                    found[rel] = (info.st_size, info.st_mtime_ns, digest, None)
                    if kept is not None and since is not None and content is not None and (
                            rel not in since or since[rel][2] != digest):
                        kept[rel] = content
            except OSError:  # vanished or unreadable while we looked: counts as absent
                continue
    return found


def _read_small(path: str, size: int) -> tuple[bytes | None, bytes | None]:
    """The digest of a file of about ``size`` bytes (read to its end, however long it has grown since) and its
    bytes (None when it grew past 1 MiB while it was read: those are hashed as they come, not kept); (None, None)
    when it cannot be read (or is a link now)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None, None
    try:
        chunks: list[bytes] = []
        length = 0
        while chunk := os.read(fd, max(size + 1, 1 << 16)):
            chunks.append(chunk)
            length += len(chunk)
            if length > _HASH_LIMIT:
                hasher = hashlib.blake2b(b"".join(chunks), digest_size=16)
                while chunk := os.read(fd, 1 << 16):
                    hasher.update(chunk)
                return hasher.digest(), None
        content = chunks[0] if len(chunks) == 1 else b"".join(chunks)
        return hashlib.blake2b(content, digest_size=16).digest(), content
    except OSError:
        return None, None
    finally:
        os.close(fd)


def changed_files(before: dict[str, Entry], after: dict[str, Entry],
                  kept: Mapping[str, bytes] | None = None) -> list[FileChange]:
    """Created, modified and deleted files between two snapshots, by path; ``kept``: the bytes the second one
    kept (see :func:`snapshot`), given to the changes as their ``data``."""
    kept = kept or {}
    changes = [FileChange(path, "created", after[path][0], kept.get(path)) for path in after.keys() - before.keys()]
    changes += [FileChange(path, "deleted") for path in before.keys() - after.keys()]
    for path in before.keys() & after.keys():
        old, new = before[path], after[path]
        same = old[3] == new[3] and old[0] == new[0] and (
            old[2] == new[2] if old[2] is not None and new[2] is not None else old[1] == new[1])
        if not same:
            changes.append(FileChange(path, "modified", new[0], kept.get(path)))
    return sorted(changes, key=lambda c: c.path)
