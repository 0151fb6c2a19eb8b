"""Reading a skill folder: regular files only, each and all of them within a size bound.

A skill folder is untrusted input, and every command that reads or copies one (``paired``, ``routing``,
``fixtures``, ``validate``, the static routing check, the agents API) goes through here:

- a file is opened without blocking and checked by ``fstat`` before a byte is read, so a FIFO never hangs a
  command and a device (``/dev/zero``) is never read;
- a symbolic link is followed only when it points at a regular file inside the skill folder (it is read, and
  installed, as that file); a link out of the folder, to a folder, or to nothing is skipped;
- FIFOs, sockets and devices are skipped;
- a file larger than :data:`MAX_FILE_BYTES` (16 MiB) is skipped; a folder holding more than
  :data:`MAX_SKILL_BYTES` (64 MiB) in all is refused (it is held in memory and copied into every run).

Whatever is skipped is named in a warning, one line each: ``<path>: is a FIFO, not a regular file: skipped``.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InputError

__all__ = ["MAX_FILE_BYTES", "MAX_SKILL_BYTES", "SkillFiles", "Skipped", "list_skill_files", "read_regular",
           "read_skill_files", "read_text_file"]

MAX_FILE_BYTES = 16 << 20  # one file of a skill
MAX_SKILL_BYTES = 64 << 20  # a whole skill folder
_SKIP = frozenset({".git", "__pycache__"})


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISDIR, "a folder"), (stat.S_ISLNK, "a symbolic link")):
        if test(mode):
            return name
    return "not a regular file"


def _mib(size: int) -> str:
    return f"{size / (1 << 20):.0f} MiB" if size >= 1 << 20 else f"{size} bytes"


def read_regular(path: Path | str, *, limit: int = MAX_FILE_BYTES, follow: bool = True) -> bytes:
    """The bytes of the regular file ``path``. InputError naming it when it is not one (a FIFO, a device, a
    folder), is larger than ``limit``, is a symbolic link (with ``follow`` False) or cannot be read. Never
    blocks: a FIFO is opened without waiting for a writer, and refused."""
    shown = str(path)
    try:
        before = os.stat(path, follow_symlinks=follow)  # a device is refused before it is even opened
        if not stat.S_ISREG(before.st_mode):
            raise InputError(f"is {_kind(before.st_mode)}, not a regular file", file=shown)
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW))
    except FileNotFoundError:
        raise InputError("file not found", file=shown) from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise InputError("is a symbolic link (changed while it was read)", file=shown) from None
        raise InputError(f"cannot be read ({exc.strerror or exc})", file=shown) from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):  # swapped since the check
            raise InputError(f"is {_kind(info.st_mode)}, not a regular file", file=shown)
        if info.st_size > limit:
            raise InputError(f"is larger than {_mib(limit)} ({_mib(info.st_size)})", file=shown)
        try:
            data = handle.read(limit + 1)
        except OSError as exc:
            raise InputError(f"cannot be read ({exc.strerror or exc})", file=shown) from None
    if len(data) > limit:  # it grew while it was read
        raise InputError(f"is larger than {_mib(limit)}", file=shown)
    return data


def read_text_file(path: Path | str, *, limit: int = MAX_FILE_BYTES, encoding: str = "utf-8") -> str:
    """:func:`read_regular`, decoded (InputError naming the file when it is not valid UTF-8)."""
    try:
        return read_regular(path, limit=limit).decode(encoding)
    except UnicodeDecodeError as exc:
        raise InputError(f"is not valid UTF-8 (byte {exc.start})", file=str(path)) from None


@dataclass(frozen=True, slots=True)
class Skipped:
    """An entry of a skill folder that is not read, and why."""

    path: str
    reason: str

    def line(self) -> str:
        return f"{self.path}: {self.reason}: skipped"


@dataclass
class SkillFiles:
    """A skill folder's regular files by relative ``/`` path (each the path to read: a link's target), and
    what was skipped."""

    files: dict[str, Path] = field(default_factory=dict)
    skipped: list[Skipped] = field(default_factory=list)

    def skip(self, path: str, reason: str) -> None:
        self.skipped.append(Skipped(path, reason))


def _entries(folder: str) -> Iterator[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as found:
            yield from sorted(found, key=lambda e: e.name)
    except OSError:
        return


def list_skill_files(root: Path, *, skip_top: Collection[str] = ("evals",), skip: Collection[str] = _SKIP,
                     hidden: bool = True, inside: Path | None = None) -> SkillFiles:
    """The regular files below ``root`` (see the module doc), without the top-level folders ``skip_top``, the
    folders ``skip`` anywhere, and (``hidden`` False) names starting with a dot. A link is followed to a file
    inside ``inside`` (default: ``root``; give the skill's folder when ``root`` is a folder of it)."""
    top = os.path.realpath(inside if inside is not None else root)
    found = SkillFiles()
    queue = [(str(root), "")]  # a folder's files, then its folders in order (as os.walk lists them)
    while queue:
        folder, prefix = queue.pop(0)
        below: list[tuple[str, str]] = []
        for entry in _entries(folder):
            rel = prefix + entry.name
            if not hidden and entry.name.startswith("."):
                continue
            try:
                if entry.is_symlink():
                    _link(entry, rel, top, found)
                elif entry.is_dir(follow_symlinks=False):
                    if entry.name not in skip and not (prefix == "" and entry.name in skip_top):
                        below.append((entry.path, rel + "/"))
                elif entry.is_file(follow_symlinks=False):
                    size = entry.stat(follow_symlinks=False).st_size
                    if size > MAX_FILE_BYTES:
                        found.skip(entry.path, f"is larger than {_mib(MAX_FILE_BYTES)} "
                                             f"({_mib(size)})")
                    else:
                        found.files[rel] = Path(entry.path)
                else:
                    mode = entry.stat(follow_symlinks=False).st_mode
                    found.skip(entry.path, f"is {_kind(mode)}, not a regular file")
            except OSError as exc:  # vanished or unreadable while we looked
                found.skip(entry.path, f"cannot be read ({exc.strerror or exc})")
        queue[:0] = below
    return found


def _link(entry: os.DirEntry[str], rel: str, top: str, found: SkillFiles) -> None:
    target = os.path.realpath(entry.path)
    if os.path.commonpath([top, target]) != top:
        found.skip(entry.path, f"is a symbolic link out of the skill folder (to {target})")
        return
    try:
        info = os.stat(target)
    except OSError:
        found.skip(entry.path, "is a symbolic link to nothing")
        return
    if stat.S_ISDIR(info.st_mode):
        found.skip(entry.path, "is a symbolic link to a folder (not followed)")
    elif not stat.S_ISREG(info.st_mode):
        found.skip(entry.path, f"links to {_kind(info.st_mode)}, not a regular file")
    elif info.st_size > MAX_FILE_BYTES:
        found.skip(entry.path, f"is larger than {_mib(MAX_FILE_BYTES)} ({_mib(info.st_size)})")
    else:
        found.files[rel] = Path(target)


def read_skill_files(root: Path, *, skip_top: Collection[str] = ("evals",), skip: Collection[str] = _SKIP,
                     hidden: bool = True, total: int = MAX_SKILL_BYTES) -> tuple[dict[str, bytes], list[str]]:
    """The bytes of every file :func:`list_skill_files` finds, and the warnings; InputError when they come to
    more than ``total`` bytes."""
    listed = list_skill_files(root, skip_top=skip_top, skip=skip, hidden=hidden)
    data: dict[str, bytes] = {}
    size = 0
    for rel, path in listed.files.items():
        try:
            data[rel] = read_regular(path, follow=False)
        except InputError as exc:  # changed since it was listed
            listed.skip(str(root / rel), exc.problem)
            continue
        size += len(data[rel])
        if size > total:
            raise InputError(f"the skill folder holds more than {_mib(total)}", file=str(root),
                             hint="keep large data out of the skill folder")
    return data, [skipped.line() for skipped in listed.skipped]
