"""Finding what a paired-run or routing workspace holds: its iterations, cases, arms and runs.

Only folder names are read here (``iteration-<n>``, ``eval-<id>``, ``<arm>``, ``run-<k>``, ``routing-<n>``),
so scanning 200 cases x 2 arms x 3 runs takes milliseconds; the files inside a run are read when its case is
shown. Symlinked folders are not followed, so nothing outside the workspace is listed.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InputError
from ..formats.workspace import ARMS, run_id

__all__ = ["CaseRef", "RunRef", "Workspace", "arm_order", "case_sort_key", "open_workspace", "scan_case",
           "scan_iteration"]

_NUMBERED = re.compile(r"(iteration|routing)-(\d+)")
_RUN = re.compile(r"run-(\d+)")
NOT_ARMS = frozenset({"inputs", "outputs"})


@dataclass(frozen=True, slots=True)
class RunRef:
    case_key: str
    arm: str
    number: int
    path: Path

    @property
    def run_id(self) -> str:
        return run_id(self.case_key, self.arm, self.number)


@dataclass(slots=True)
class CaseRef:
    """A case folder: its arms, and its runs when they were scanned."""

    key: str
    path: Path
    arms: list[str] = field(default_factory=list)
    runs: list[RunRef] = field(default_factory=list)


def arm_order(arm: str) -> tuple[int, str]:
    """with_skill first, then the baselines, then any other arm by name."""
    return (ARMS.index(arm), "") if arm in ARMS else (len(ARMS), arm)


def case_sort_key(key: str) -> tuple[int, int, str]:
    """Numeric ids in numeric order, then the others by name."""
    return (0, int(key), "") if key.isdigit() else (1, 0, key)


def _subdirs(path: Path | str) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(path) as entries:
            return [entry for entry in entries if entry.is_dir(follow_symlinks=False)]
    except OSError:
        return []


def scan_case(path: Path, *, runs: bool = True) -> CaseRef:
    """One ``eval-<id>`` folder: its arms and (unless ``runs`` is False) its runs, ordered by run number, then
    arm. Without runs, an arm is any folder other than ``inputs`` and ``outputs``."""
    key = path.name.removeprefix("eval-")
    case = CaseRef(key=key, path=path)
    arms = []
    for arm in _subdirs(path):
        if arm.name in NOT_ARMS:
            continue
        if not runs:
            arms.append(arm.name)
            continue
        for run in _subdirs(arm.path):
            match = _RUN.fullmatch(run.name)
            if match:
                case.runs.append(RunRef(key, arm.name, int(match.group(1)), Path(run.path)))
    case.runs.sort(key=lambda r: (r.number, arm_order(r.arm)))
    case.arms = sorted(set(arms) if not runs else {r.arm for r in case.runs}, key=arm_order)
    return case


def scan_iteration(path: Path, *, runs: bool = True) -> list[CaseRef]:
    """Every ``eval-<id>`` case of an iteration folder that holds at least one arm (with ``runs``: one run)."""
    cases = [scan_case(Path(entry.path), runs=runs) for entry in _subdirs(path)
             if entry.name.startswith("eval-") and len(entry.name) > 5]
    cases = [case for case in cases if case.arms]
    cases.sort(key=lambda c: case_sort_key(c.key))
    return cases


def _numbers(root: Path, prefix: str) -> list[int]:
    found = []
    for entry in _subdirs(root):
        match = _NUMBERED.fullmatch(entry.name)
        if match and match.group(1) == prefix:
            found.append(int(match.group(2)))
    return sorted(found)


@dataclass(slots=True)
class Workspace:
    """A workspace folder, the iteration chosen for review and the routing results shown."""

    root: Path
    iterations: list[int]
    routings: list[int]
    iteration: int | None
    routing: int | None

    @property
    def iteration_path(self) -> Path | None:
        return None if self.iteration is None else self.root / f"iteration-{self.iteration}"

    @property
    def routing_path(self) -> Path | None:
        return None if self.routing is None else self.root / f"routing-{self.routing}"

    @property
    def previous_path(self) -> Path | None:
        """The iteration before the one reviewed (the highest lower number), if any."""
        earlier = [n for n in self.iterations if self.iteration is not None and n < self.iteration]
        return self.root / f"iteration-{earlier[-1]}" if earlier else None


def open_workspace(path: Path, iteration: int | None = None) -> Workspace:
    """The workspace at ``path`` (or the one holding ``path`` when it is an ``iteration-<n>`` or ``routing-<n>``
    folder). The latest iteration unless ``iteration`` is given. InputError when there is nothing to show."""
    path = Path(path)
    if not path.exists():
        raise InputError("not found", file=str(path), hint="pass the workspace folder of eval-skills paired")
    if not path.is_dir():
        raise InputError("is not a folder", file=str(path))
    root, routing = path.resolve(), None
    match = _NUMBERED.fullmatch(path.resolve().name)
    if match:
        root = path.resolve().parent
        if match.group(1) == "iteration" and iteration is None:
            iteration = int(match.group(2))
        elif match.group(1) == "routing":
            routing = int(match.group(2))
    iterations, routings = _numbers(root, "iteration"), _numbers(root, "routing")
    if not iterations and not routings:
        raise InputError("holds no iteration-<n> or routing-<n> folder", file=str(path),
                         hint="pass the workspace written by eval-skills paired or eval-skills routing")
    if iteration is not None and iteration not in iterations:
        have = ", ".join(map(str, iterations)) or "none"
        raise InputError(f"has no iteration-{iteration}", file=str(root), field="--iteration",
                         hint=f"iterations here: {have}")
    chosen = iteration if iteration is not None else (iterations[-1] if iterations else None)
    return Workspace(root=root, iterations=iterations, routings=routings, iteration=chosen,
                     routing=routing if routing is not None else (routings[-1] if routings else None))
