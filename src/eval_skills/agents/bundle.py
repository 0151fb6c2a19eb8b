"""A skill as data: read once at the start, installed into each run from those bytes.

:func:`read_bundle` freezes a skill folder (without ``evals/``, ``.git`` and ``__pycache__``) into a
:class:`SkillBundle`: its files by relative path and a digest of them. Only regular files are read, each and all
within a size bound; links out of the folder, FIFOs and devices are skipped, each named in the bundle's
``skipped`` warnings (see :mod:`eval_skills.formats.skill_files`). :func:`install_bundle` writes a bundle
into a run's workspace after checking its bytes still have that digest, so every run of an evaluation gets the
very skill that was read, whatever any run (or anyone) did to a copy of it since.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from .._atomic import write_file
from ..errors import HarnessError, InputError
from ..formats.skill_files import MAX_SKILL_BYTES, read_skill_files

__all__ = ["MAX_BUNDLE_BYTES", "SkillBundle", "bundle_digest", "install_bundle", "read_bundle"]

MAX_BUNDLE_BYTES = MAX_SKILL_BYTES  # a skill folder larger than this is refused (it is held in memory)


@dataclass(frozen=True, slots=True)
class SkillBundle:
    """A skill as data: its files by relative ``/`` path (without ``evals/``, ``.git``, ``__pycache__``),
    installed under ``name``. ``digest`` identifies the content (a SHA-256 over paths and bytes)."""

    name: str
    files: Mapping[str, bytes]
    digest: str
    source: str = ""  # where it was read from, for the record
    skipped: tuple[str, ...] = ()  # what was not read (a FIFO, a link out of the folder), one warning each


def bundle_digest(files: Mapping[str, bytes]) -> str:
    """The SHA-256 over the sorted paths and the digests of their bytes."""
    digest = hashlib.sha256()
    for key in sorted(files):
        digest.update(key.encode("utf-8", "surrogateescape") + b"\0" + hashlib.sha256(files[key]).digest())
    return digest.hexdigest()


def read_bundle(folder: Path, name: str | None = None) -> SkillBundle:
    """Read a skill folder into a bundle: its regular files (a link to a file inside the folder is read as
    that file, as an install copies it). The skill is frozen at this moment: edits made while the runs go on
    do not reach them. InputError when ``SKILL.md`` itself is skipped, or the folder is too large."""
    root = Path(folder).resolve()
    files, skipped = read_skill_files(root)
    if "SKILL.md" not in files:
        prefix = f"{root / 'SKILL.md'}: "
        reason = next((line[len(prefix):] for line in skipped if line.startswith(prefix)), None)
        if reason is not None:
            raise InputError(reason.removesuffix(": skipped"), file=str(Path(folder) / "SKILL.md"),
                             hint="SKILL.md must be a regular file inside the skill folder")
    return SkillBundle(name or root.name, files, bundle_digest(files), str(folder), tuple(skipped))


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
        write_file(path, data, exclusive=True)  # never through something already there
