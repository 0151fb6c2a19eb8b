"""A skill as data: read once at the start, installed into each run from those bytes.

:func:`read_bundle` freezes a skill folder (without ``evals/``, ``.git`` and ``__pycache__``) into a
:class:`SkillBundle`: its files by relative path and a digest of them. :func:`install_bundle` writes a bundle
into a run's workspace after checking its bytes still have that digest, so every run of an evaluation gets the
very skill that was read, whatever any run (or anyone) did to a copy of it since.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ..errors import HarnessError, InputError

__all__ = ["MAX_BUNDLE_BYTES", "SkillBundle", "bundle_digest", "install_bundle", "read_bundle"]

_SKIP = frozenset({".git", "__pycache__"})
MAX_BUNDLE_BYTES = 256 << 20  # a skill folder larger than this is refused (it is held in memory)


@dataclass(frozen=True, slots=True)
class SkillBundle:
    """A skill as data: its files by relative ``/`` path (without ``evals/``, ``.git``, ``__pycache__``),
    installed under ``name``. ``digest`` identifies the content (a SHA-256 over paths and bytes)."""

    name: str
    files: Mapping[str, bytes]
    digest: str
    source: str = ""  # where it was read from, for the record


def bundle_digest(files: Mapping[str, bytes]) -> str:
    """The SHA-256 over the sorted paths and the digests of their bytes."""
    digest = hashlib.sha256()
    for key in sorted(files):
        digest.update(key.encode("utf-8", "surrogateescape") + b"\0" + hashlib.sha256(files[key]).digest())
    return digest.hexdigest()


def read_bundle(folder: Path, name: str | None = None) -> SkillBundle:
    """Read a skill folder into a bundle (symbolic links are followed, as an install copies them). The skill
    is frozen at this moment: edits made while the runs go on do not reach them."""
    root = Path(folder).resolve()
    files: dict[str, bytes] = {}
    seen: set[str] = set()
    size = 0
    for current, dirs, names in os.walk(root, followlinks=True):
        real = os.path.realpath(current)
        if real in seen:  # a link loop
            dirs[:] = []
            continue
        seen.add(real)
        rel = Path(current).relative_to(root).as_posix()
        dirs[:] = sorted(d for d in dirs if d not in _SKIP and not (rel == "." and d == "evals"))
        for file_name in sorted(names):
            path = Path(current) / file_name
            key = file_name if rel == "." else f"{rel}/{file_name}"
            try:
                files[key] = path.read_bytes()
            except FileNotFoundError:  # a dangling link
                continue
            except OSError as exc:
                raise InputError(f"cannot be read ({exc.strerror or exc})", file=str(path)) from None
            size += len(files[key])
            if size > MAX_BUNDLE_BYTES:
                raise InputError(f"the skill folder holds more than {MAX_BUNDLE_BYTES >> 20} MiB", file=str(folder),
                                 hint="keep large data out of the skill folder")
    return SkillBundle(name or root.name, files, bundle_digest(files), str(folder))


def install_bundle(dest: Path, bundle: SkillBundle) -> None:
    """Write the bundle's files under ``dest`` (a new folder), once its bytes are checked against its digest."""
    if bundle_digest(bundle.files) != bundle.digest:
        raise HarnessError(f"the skill {bundle.name!r} changed in memory since it was read (digest mismatch)")
    dest.mkdir(parents=True)
    made = {dest}
    for rel, data in bundle.files.items():
        parts = PurePosixPath(rel).parts
        if not parts or rel.startswith("/") or any(p in ("", ".", "..") for p in parts):
            raise InputError(f"skill file {rel!r} is not a relative path inside the skill", file=bundle.source)
        path = dest.joinpath(*parts)
        if path.parent not in made:
            path.parent.mkdir(parents=True, exist_ok=True)
            made.add(path.parent)
        with open(path, "xb") as out:  # never through something already there
            out.write(data)
