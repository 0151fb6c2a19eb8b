"""Finding what a paired-run or routing workspace holds: its iterations, cases, arms and runs.

Only folder names are read here (``iteration-<n>``, ``eval-<id>`` or a case's own name, ``<arm>``, ``run-<k>``
or an arm folder holding ``outputs/`` itself, ``routing-<n>``),
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

__all__ = ["CaseRef", "RunRef", "Workspace", "arm_order", "case_key", "case_sort_key", "open_workspace",
           "scan_case", "scan_iteration", "unreadable_folders"]

_NUMBERED = re.compile(r"(iteration|routing)-(\d+)")
_RUN = re.compile(r"run-(\d+)")
NOT_ARMS = frozenset({"inputs", "outputs"})


@dataclass(frozen=True, slots=True)
class RunRef:
    """One run. ``folder_id``: its folder relative to the iteration with ``/`` as ``-`` (the id skill-creator's
    viewer gives it in ``feedback.json``), when that differs from :func:`run_id` (a run without a ``run-<k>``
    folder, a case folder not named ``eval-<id>``)."""

    case_key: str
    arm: str
    number: int
    path: Path
    folder_id: str | None = None

    @property
    def run_id(self) -> str:
        return self.folder_id or run_id(self.case_key, self.arm, self.number)


@dataclass(slots=True)
class CaseRef:
    """A case folder: its arms, and its runs when they were scanned."""

    key: str
    path: Path
    arms: list[str] = field(default_factory=list)
    runs: list[RunRef] = field(default_factory=list)


def arm_order(arm: str) -> tuple[int, str]:
    """with_skill (or skill-creator's new_skill) first, then the baselines, then any other arm by name."""
    if arm == "new_skill":
        return (0, arm)
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


def _is_dir(path: str) -> bool:
    return os.path.isdir(path) and not os.path.islink(path)


def case_key(folder_name: str) -> str:
    """The key of a case folder: ``eval-<id>`` gives ``<id>``; a descriptive name (``csv-totals``, as
    skill-creator's SKILL.md says to name them) is its own key."""
    return folder_name.removeprefix("eval-") if folder_name.startswith("eval-") and len(folder_name) > 5 \
        else folder_name


def _arm_runs(key: str, case_name: str, arm: os.DirEntry[str]) -> list[RunRef]:
    """The runs of one arm folder: its ``run-<k>`` folders, or the arm folder itself when it holds
    ``outputs/`` directly (skill-creator's ``eval-0/with_skill/outputs/``, run 1)."""
    runs = []
    for run in _subdirs(arm.path):
        match = _RUN.fullmatch(run.name)
        if match:
            number = int(match.group(1))
            folder_id = None if case_name == f"eval-{key}" else f"{case_name}-{arm.name}-run-{number}"
            runs.append(RunRef(key, arm.name, number, Path(run.path), folder_id))
    if not runs and _is_dir(os.path.join(arm.path, "outputs")):
        runs.append(RunRef(key, arm.name, 1, Path(arm.path), f"{case_name}-{arm.name}"))
    return runs


def scan_case(path: Path, *, runs: bool = True) -> CaseRef:
    """One case folder: its arms and (unless ``runs`` is False) its runs, ordered by run number, then arm.
    Without runs, an arm is any folder other than ``inputs`` and ``outputs``."""
    key = case_key(path.name)
    case = CaseRef(key=key, path=path)
    arms = []
    for arm in _subdirs(path):
        if arm.name in NOT_ARMS:
            continue
        if not runs:
            inner = _subdirs(arm.path)  # none yet (a run in progress), or runs: an arm; other folders: not
            if not inner or _arm_runs(key, path.name, arm):
                arms.append(arm.name)
            continue
        case.runs += _arm_runs(key, path.name, arm)
    case.runs.sort(key=lambda r: (r.number, arm_order(r.arm)))
    case.arms = sorted(set(arms) if not runs else {r.arm for r in case.runs}, key=arm_order)
    return case


def _holds_runs(path: str) -> bool:
    """Whether a folder not named ``eval-<id>`` is a case: an arm folder in it holds ``run-<k>`` or
    ``outputs/``."""
    for arm in _subdirs(path):
        if arm.name in NOT_ARMS:
            continue
        if _is_dir(os.path.join(arm.path, "outputs")) or any(_RUN.fullmatch(r.name) for r in _subdirs(arm.path)):
            return True
    return False


def scan_iteration(path: Path, *, runs: bool = True) -> list[CaseRef]:
    """Every case of an iteration folder that holds at least one arm (with ``runs``: one run): the
    ``eval-<id>`` folders, and the folders of other names whose arm folders hold runs."""
    cases, keys = [], set()
    entries = sorted(_subdirs(path), key=lambda e: (not e.name.startswith("eval-"), e.name))
    for entry in entries:
        if entry.name.startswith(".") or entry.name.startswith("eval-") and len(entry.name) == 5:
            continue
        if not entry.name.startswith("eval-") and not _holds_runs(entry.path):
            continue
        case = scan_case(Path(entry.path), runs=runs)
        if case.arms and case.key not in keys:
            keys.add(case.key)
            cases.append(case)
    cases.sort(key=lambda c: case_sort_key(c.key))
    return cases


def unreadable_folders(path: Path) -> list[str]:
    """One line per folder of an iteration that cannot be read as runs: a folder that is no case (no arm
    folder in it holds ``run-<k>/`` or ``outputs/``), and an arm folder holding folders but no run."""
    problems = []
    for entry in sorted(_subdirs(path), key=lambda e: e.name):
        if entry.name.startswith("."):
            continue
        if not entry.name.startswith("eval-") and not _holds_runs(entry.path):
            problems.append(f"{path.name}/{entry.name}: not read as a case: no folder in it holds run-<k>/ or "
                            "outputs/ (expected <case>/<arm>/run-<k>/outputs/ or <case>/<arm>/outputs/)")
            continue
        for arm in sorted(_subdirs(entry.path), key=lambda e: e.name):
            inner = [d.name for d in _subdirs(arm.path)]
            if arm.name in NOT_ARMS or not inner or _arm_runs(case_key(entry.name), entry.name, arm):
                continue
            problems.append(f"{path.name}/{entry.name}/{arm.name}: no run read: it holds neither run-<k>/ nor "
                            f"outputs/ (found {', '.join(sorted(inner)[:5])})")
    return problems


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
