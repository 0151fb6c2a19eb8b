"""The plan of a paired evaluation: the skill and its cases, loaded and checked, and the order of the runs.

Everything a user can get wrong is found here, before any agent runs: the skill's frontmatter (name equal to
its folder), the baseline skill's, the evals file (cases, ids, ``files`` inside the skill folder, two fixture
files with one name in a case), every ``selftune_assertions`` check (an unknown kind, a bad regex or
JSONPath). The plan then lists the runs: for each run number, each case, its two arms side by side in an order
drawn from the seed, so a model that drifts over time drifts for both arms alike.
"""

from __future__ import annotations

import os
import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from ..errors import InputError
from ..formats.agentskills import (
    EVALS_FILE,
    EvalCase,
    SkillDoc,
    frontmatter_problems,
    load_evals,
    load_skill_md,
    parse_frontmatter,
)
from ..formats.skill_files import list_skill_files, read_regular, read_text_file
from ..formats.workspace import run_id
from .executor import SkillBundle, read_bundle
from .selftune import DeterministicCheck, selftune_check

__all__ = ["Case", "PairedPlan", "PlannedRun", "ab_order", "load_plan", "selftune_check"]

WITH_SKILL, WITHOUT_SKILL, OLD_SKILL = "with_skill", "without_skill", "old_skill"


@dataclass(frozen=True)
class Case:
    """One eval case. ``files``: the fixture files' bytes by their ``/`` path relative to the skill (a folder
    named in ``files`` gives every file below it); ``placed``: where each is copied in a run's folder, at
    that same path and again by its name at the root (a folder by its own name), so a prompt naming
    ``evals/cases/cnt.vhd`` finds it, and so does one naming ``cnt.vhd``."""

    case: EvalCase
    files: dict[str, bytes]
    checks: tuple[DeterministicCheck, ...]
    placed: dict[str, bytes] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return self.case.key

    @property
    def name(self) -> str | None:
        """The case's human-readable name (``eval_name`` or ``name`` in evals.json), if it has one."""
        extra = self.case.model_extra or {}
        name = extra.get("eval_name", extra.get("name"))
        return name if isinstance(name, str) and name.strip() else None

    @property
    def assertions(self) -> list[str]:
        """The plain-language assertions (graded by the judge)."""
        return list(self.case.assertions)

    @property
    def texts(self) -> list[str]:
        """Every expectation of a run of this case, in ``grading.json`` order: the judge's, then the checks'."""
        return self.assertions + [c.text for c in self.checks]


@dataclass(frozen=True)
class PlannedRun:
    case: Case
    arm: str
    number: int

    @property
    def run_id(self) -> str:
        return run_id(self.case.key, self.arm, self.number)


@dataclass(frozen=True)
class PairedPlan:
    skill: SkillDoc
    skill_path: Path
    evals_path: Path
    cases: list[Case]
    arms: tuple[str, str]  # (with_skill, the baseline arm)
    bundles: dict[str, tuple[SkillBundle, ...]]  # arm -> skills installed in its runs
    runs: int
    seed: int
    baseline_path: Path | None = None
    warnings: list[str] = field(default_factory=list)

    @property
    def baseline(self) -> str:
        return self.arms[1]

    @property
    def total(self) -> int:
        return len(self.cases) * len(self.arms) * self.runs

    @property
    def needs_judge(self) -> bool:
        return any(case.assertions for case in self.cases)

    def check_fixture_names(self, skills_subdir: str) -> None:
        """InputError when a fixture file, copied to the run's root by name, would take the place of the
        folder the agent finds its skills in (``.agents`` for ``.agents/skills``)."""
        parts = PurePosixPath(skills_subdir).parts
        for i, case in enumerate(self.cases):
            for j, name in enumerate(case.case.files):
                clash = {PurePosixPath(name).parts[0], PurePosixPath(name).name} if name else set()
                if parts and parts[0] in clash:
                    raise InputError(f"the fixture file {parts[0]!r} has the name of the folder the agent "
                                     f"finds skills in ({skills_subdir}): the skill could not be installed",
                                     file=str(self.evals_path), field=f"$.evals[{i}].files[{j}]",
                                     hint="rename the fixture file")

    def order(self) -> Iterator[PlannedRun]:
        """Run 1 of every case (both arms, adjacent, in a seeded order), then run 2, and so on."""
        for number in range(1, self.runs + 1):
            for case in self.cases:
                rng = random.Random(f"order:{self.seed}:{case.key}:{number}")
                arms = self.arms if rng.random() < 0.5 else self.arms[::-1]
                for arm in arms:
                    yield PlannedRun(case, arm, number)


def ab_order(seed: int, case_key: str, number: int, arms: tuple[str, str]) -> dict[str, str]:
    """Which arm is shown to the judge as A and which as B, drawn from the seed for this case and run pair."""
    rng = random.Random(f"ab:{seed}:{case_key}:{number}")
    first, second = arms if rng.random() < 0.5 else arms[::-1]
    return {"A": first, "B": second}


# ---- loading ---------------------------------------------------------------------------------------------


def _load_baseline(path: Path, skill: SkillDoc) -> list[str]:
    """Validate an old copy of the skill (its folder may be named anything); returns warnings."""
    if not (path / "SKILL.md").is_file():
        raise InputError("no SKILL.md in this folder", file=str(path), field="--baseline-skill-path",
                         hint="pass the folder of the previous version of the skill")
    text = read_text_file(path / "SKILL.md")
    meta, _ = parse_frontmatter(text, file=str(path / "SKILL.md"))
    errors, _ = frontmatter_problems(meta, None)
    if errors:
        field_name, _, problem = errors[0].partition(": ")
        raise InputError(problem, file=str(path / "SKILL.md"), field=f"frontmatter.{field_name}")
    if str(meta["name"]).strip() != skill.name:
        return [f"the baseline skill is named {str(meta['name']).strip()!r}, not {skill.name!r}; it is installed "
                f"as {skill.name!r} so both arms see the same folder name"]
    return []


def _normal(name: str) -> PurePosixPath:
    """A ``files`` entry as a clean relative ``/`` path (``./a/../b.txt`` is ``b.txt``)."""
    return PurePosixPath(os.path.normpath(name.replace("\\", "/")).replace("\\", "/"))


def _fixture_files(skill_root: Path, name: str, skipped: list[str]) -> dict[str, Path]:
    """The files a ``files`` entry names, by their ``/`` path relative to the skill (a folder: every regular
    file below it, hidden ones left out; a link followed only to a file inside that folder; what else is there
    named in ``skipped``)."""
    rel = _normal(name)
    target = skill_root / rel
    if not target.is_dir() or target.is_symlink():
        return {rel.as_posix(): target}
    listed = list_skill_files(target, skip_top=(), skip=(), hidden=False, inside=skill_root)
    skipped += [entry.line() for entry in listed.skipped]
    return {(rel / inner).as_posix(): path for inner, path in listed.files.items()}


def _case(case: EvalCase, index: int, skill_root: Path, evals_path: Path, skipped: list[str]) -> Case:
    at = f"$.evals[{index}]"
    files: dict[str, bytes] = {}
    placed: dict[str, bytes] = {}
    by_name: dict[str, str] = {}  # a path in the run's folder -> the files entry that put it there
    for j, name in enumerate(case.files):
        entry = _normal(name)
        for rel, path in _fixture_files(skill_root, name, skipped).items():
            data = files[rel] = read_regular(path)
            alias = (PurePosixPath(entry.name) / PurePosixPath(rel).relative_to(entry)).as_posix()
            for where in dict.fromkeys((rel, alias)):
                if by_name.get(where, name) != name and placed.get(where) != data:
                    raise InputError(f"two fixture files would be copied to {where!r} in the run's folder (each "
                                     "is copied at its path and by its name)", file=str(evals_path),
                                     field=f"{at}.files[{j}]", hint="rename one of them")
                by_name.setdefault(where, name)
                placed[where] = data
    checks = tuple(selftune_check(spec, file=str(evals_path), field=f"{at}.selftune_assertions[{j}]")
                   for j, spec in enumerate(case.selftune_assertions))
    return Case(case, files, checks, placed)


def load_plan(skill_path: Path, *, baseline_path: Path | None = None, evals_path: Path | None = None,
              runs: int = 1, seed: int = 0) -> PairedPlan:
    """Load and check everything; InputError (one line naming the file and field) on the first problem."""
    if runs < 1:
        raise InputError("must be at least 1", field="--runs")
    skill_path = Path(skill_path)
    if skill_path.name == "SKILL.md":
        skill_path = skill_path.parent
    skill = load_skill_md(skill_path)
    evals_path = Path(evals_path) if evals_path is not None else skill_path / EVALS_FILE
    if not evals_path.is_file():
        raise InputError("evals file not found", file=str(evals_path),
                         hint="write evals/evals.json in the skill folder or pass --evals")
    evals = load_evals(evals_path, skill_path)
    skipped: list[str] = []
    cases = [_case(case, i, skill_path, evals_path, skipped) for i, case in enumerate(evals.evals)]
    warnings = [f"{skill.path}: {w}" for w in skill.warnings]
    if evals.skill_name and evals.skill_name != skill.name:
        warnings.append(f"{evals_path}: skill_name {evals.skill_name!r} is not the skill's name {skill.name!r}")
    without = [c.key for c in cases if not c.texts]
    if without:
        warnings.append(f"cases without assertions (compared blind only, no pass rate): {', '.join(without)}")
    bundle = read_bundle(skill_path, skill.name)
    arms: tuple[str, str] = (WITH_SKILL, WITHOUT_SKILL)
    baseline: tuple[SkillBundle, ...] = ()  # without_skill: nothing installed
    if baseline_path is not None:
        baseline_path = Path(baseline_path)
        if baseline_path.name == "SKILL.md":
            baseline_path = baseline_path.parent
        warnings += _load_baseline(baseline_path, skill)
        arms, baseline = (WITH_SKILL, OLD_SKILL), (read_bundle(baseline_path, skill.name),)
        if baseline[0].digest == bundle.digest:
            warnings.append("the baseline skill is identical to the skill: the arms cannot differ")
    warnings += [*bundle.skipped, *(b for old in baseline for b in old.skipped), *dict.fromkeys(skipped)]
    bundles = {WITH_SKILL: (bundle,), arms[1]: baseline}
    return PairedPlan(skill=skill, skill_path=skill_path, evals_path=evals_path, cases=cases, arms=arms,
                      bundles=bundles, runs=runs, seed=seed, baseline_path=baseline_path, warnings=warnings)
