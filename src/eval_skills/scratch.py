"""Where the runs' private folders go: a folder in memory when the temporary folder is on disk.

An agent run writes and removes dozens of small files (its fixtures, the skills installed, its private home,
what the agent writes), and on a disk each costs a trip through the file system's journal: on a small cloud
disk, 0.1 to 1 ms a file, several milliseconds a run. In memory they cost microseconds. So, in this order:

1. ``$EVAL_SKILLS_SCRATCH``, when set: the folder given (it must exist);
2. the system's temporary folder, when ``TMPDIR`` is set (the user chose it) or when it is already in memory
   (``/tmp`` is a ``tmpfs`` on many systems);
3. ``/dev/shm``, on Linux, when it is a ``tmpfs`` that allows running programs (not ``noexec``: a skill's
   scripts must run), that this process can write to, with at least 1 GiB free;
4. else the system's temporary folder.

A run's files then take memory while it runs (they are removed when it ends). For runs that write gigabytes,
point ``EVAL_SKILLS_SCRATCH`` at a folder on disk.

The folders are named ``eval-skills-<kind>-<pid namespace>-<pid>-<random>``, so what a process killed outright
left behind (SIGKILL, out of memory: nothing could remove it) is found and removed by the next process
started in the same folder (:func:`sweep`), instead of taking memory until the next reboot.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
from collections.abc import Mapping
from functools import cache
from pathlib import Path

from .errors import InputError

__all__ = ["MEMORY_FOLDER", "MIN_FREE_BYTES", "SCRATCH_VARIABLE", "folder_prefix", "in_memory", "memory_backed",
           "scratch_folder", "scratch_root", "sweep"]

SCRATCH_VARIABLE = "EVAL_SKILLS_SCRATCH"
MEMORY_FOLDER = "/dev/shm"
MIN_FREE_BYTES = 1 << 30


def _unescape(field: str) -> str:
    """A path as ``/proc/self/mountinfo`` writes it (space, tab, newline and backslash as octal escapes)."""
    for code, char in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
        field = field.replace(code, char)
    return field


def in_memory(mountinfo: str, path: str) -> bool:
    """Whether ``path`` (absolute, resolved) is on a memory file system (``tmpfs`` or ``ramfs``) that allows
    running programs, by the mount table ``mountinfo`` (the text of ``/proc/self/mountinfo``): the mount whose
    point is the longest prefix of ``path``, the last listed of those at one point (it hides the others)."""
    best: tuple[int, bool] | None = None
    for line in mountinfo.splitlines():
        fields = line.split()
        if " - " not in line or len(fields) < 6:
            continue
        point = _unescape(fields[4])
        inside = path == point or point == "/" or path.startswith(point.rstrip("/") + "/")
        if not inside or (best is not None and len(point) < best[0]):
            continue
        after = line.split(" - ", 1)[1].split()
        memory = bool(after) and after[0] in ("tmpfs", "ramfs")
        best = (len(point), memory and "noexec" not in fields[5].split(","))
    return best is not None and best[1]


@cache
def memory_backed(path: str) -> bool:
    """Whether the folder ``path`` is in memory (:func:`in_memory` by this process's mount table; False when that
    cannot be read, or off Linux): its file calls then cost microseconds and never wait for a disk. Asked once per
    path."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as handle:
            return in_memory(handle.read(), os.path.realpath(path))
    except OSError:
        return False


_chosen: dict[tuple[str | None, str | None], Path | None] = {}


def scratch_root(env: Mapping[str, str] | None = None) -> Path | None:
    """The folder to make the runs' private folders in, as the module doc says (chosen once per process for
    each value of the two variables); None for the system's temporary folder."""
    env = os.environ if env is None else env
    key = (env.get(SCRATCH_VARIABLE), env.get("TMPDIR"))
    if key not in _chosen:
        _chosen[key] = _choose(env)
    return _chosen[key]


def _choose(env: Mapping[str, str]) -> Path | None:
    chosen = env.get(SCRATCH_VARIABLE)
    if chosen:
        path = Path(chosen).expanduser()
        if not path.is_dir():
            raise InputError(f"{SCRATCH_VARIABLE}={chosen} is not a folder", field=SCRATCH_VARIABLE,
                             hint="create it, or unset the variable to let eval-skills choose")
        return path
    if env.get("TMPDIR") or not sys.platform.startswith("linux"):
        return None
    if memory_backed(tempfile.gettempdir()):
        return None
    if not memory_backed(MEMORY_FOLDER) or not os.access(MEMORY_FOLDER, os.W_OK | os.X_OK):
        return None
    try:
        info = os.statvfs(MEMORY_FOLDER)
    except OSError:
        return None
    return Path(MEMORY_FOLDER) if info.f_bavail * info.f_frsize >= MIN_FREE_BYTES else None


@cache
def _namespace() -> int:
    """This process's pid namespace (its inode; 0 when it cannot be read): asked once."""
    try:
        return os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return 0


_NAMED = re.compile(r"eval-skills-[a-z]+-(\d+)-(\d+)-")
_swept: set[str] = set()


def folder_prefix(kind: str) -> str:
    """The start of the name of a folder of runs of ``kind`` made by this process (see the module doc)."""
    return f"eval-skills-{kind}-{_namespace()}-{os.getpid()}-"


def scratch_folder() -> str:
    """The folder run folders are made in: :func:`scratch_root`'s, else the system's temporary folder; swept
    (:func:`sweep`) the first time this process asks."""
    folder = str(scratch_root() or tempfile.gettempdir())
    if folder not in _swept:
        _swept.add(folder)
        sweep(Path(folder))
    return folder


def sweep(folder: Path) -> list[str]:
    """Remove the run folders in ``folder`` that eval-skills processes of this user in this pid namespace
    left when they were killed (their process is gone); the names removed."""
    namespace, removed = _namespace(), list[str]()
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        named = _NAMED.match(entry.name)
        if named is None or not namespace or int(named.group(1)) != namespace:
            continue
        pid = int(named.group(2))
        try:
            if pid == os.getpid() or not entry.is_dir(follow_symlinks=False) or \
                    entry.stat(follow_symlinks=False).st_uid != os.getuid():
                continue
            os.kill(pid, 0)
            continue  # its process lives
        except ProcessLookupError:
            pass
        except OSError:
            continue
        try:
            os.chmod(entry.path, 0o700)  # a folder of runs cannot be listed
        except OSError:
            continue
        shutil.rmtree(entry.path, ignore_errors=True)
        removed.append(entry.name)
    return removed
