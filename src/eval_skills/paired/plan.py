"""The plan of a paired evaluation: the skill and its cases, loaded and checked, and the order of the runs.

Everything a user can get wrong is found here, before any agent runs: the skill's frontmatter (name equal to
its folder), the baseline skill's, the evals file (cases, ids, ``files`` inside the skill folder, two fixture
files with one name in a case), every ``selftune_assertions`` check (an unknown kind, a bad regex or
JSONPath). The plan then lists the runs: for each run number, each case, its two arms side by side in an order
drawn from the seed, so a model that drifts over time drifts for both arms alike.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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
from ..formats.workspace import run_id
from ..scoring.assertions import Check, check_from_mapping
from .executor import SkillBundle, read_bundle

__all__ = ["Case", "PairedPlan", "PlannedRun", "ab_order", "load_plan", "selftune_check"]

WITH_SKILL, WITHOUT_SKILL, OLD_SKILL = "with_skill", "without_skill", "old_skill"
_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")


@dataclass(frozen=True)
class DeterministicCheck:
    """A ``selftune_assertions`` entry: the text shown for it, and the check the assertion engine runs."""

    text: str
    check: Check


@dataclass(frozen=True)
class Case:
    """One eval case: ``files`` are the fixture files' bytes by file name (copied to each run's root)."""

    case: EvalCase
    files: dict[str, bytes]
    checks: tuple[DeterministicCheck, ...]

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


def selftune_check(spec: Any, *, file: str, field: str) -> DeterministicCheck:
    """A ``selftune_assertions`` entry as a check. SelfTune's ``json_path`` form ``key=expected`` (a value
    without a leading ``$`` holding ``=``) becomes the JSONPath ``$.key`` with ``expected`` (read as JSON when
    it parses, so ``count=3`` expects the number 3, else as a string)."""
    if not isinstance(spec, dict):
        raise InputError("a selftune assertion must be an object with a type and a value", file=file,
                         field=field)
    spec = dict(spec)
    kind = spec.get("type", spec.get("kind"))
    value = spec.get("value")
    explicit_expected = "expected" in spec
    if kind == "json_path" and isinstance(value, str) and "=" in value and not value.lstrip().startswith("$") \
            and not explicit_expected:
        key, _, expected = value.partition("=")
        key = key.strip()
        spec["value"] = f"$.{key}" if _PLAIN_KEY.fullmatch(key) else f"$[{json.dumps(key)}]"
        try:
            spec["expected"] = json.loads(expected)
        except ValueError:
            spec["expected"] = expected
    check = check_from_mapping(spec, file=file, field=field)
    description = spec.get("description")
    if isinstance(description, str) and description.strip():
        text = description.strip()
    else:
        text = f"{kind} {json.dumps(value, ensure_ascii=False)}"
        if explicit_expected:
            text += f" = {json.dumps(spec['expected'], ensure_ascii=False)}"
        if spec.get("args") is not None:
            text += f" with {json.dumps(spec['args'], ensure_ascii=False)}"
    return DeterministicCheck(text, check)


def _load_baseline(path: Path, skill: SkillDoc) -> list[str]:
    """Validate an old copy of the skill (its folder may be named anything); returns warnings."""
    if not (path / "SKILL.md").is_file():
        raise InputError("no SKILL.md in this folder", file=str(path), field="--baseline-skill-path",
                         hint="pass the folder of the previous version of the skill")
    try:
        text = (path / "SKILL.md").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        raise InputError("cannot be read as UTF-8 text", file=str(path / "SKILL.md")) from None
    meta, _ = parse_frontmatter(text, file=str(path / "SKILL.md"))
    errors, _ = frontmatter_problems(meta, None)
    if errors:
        field_name, _, problem = errors[0].partition(": ")
        raise InputError(problem, file=str(path / "SKILL.md"), field=f"frontmatter.{field_name}")
    if str(meta["name"]).strip() != skill.name:
        return [f"the baseline skill is named {str(meta['name']).strip()!r}, not {skill.name!r}; it is installed "
                f"as {skill.name!r} so both arms see the same folder name"]
    return []


def _case(case: EvalCase, index: int, skill_root: Path, evals_path: Path) -> Case:
    at = f"$.evals[{index}]"
    files: dict[str, bytes] = {}
    for j, name in enumerate(case.files):
        base = Path(name).name
        if base in files:
            raise InputError(f"two fixture files are named {base!r}; each is copied to the run's root by file "
                             "name", file=str(evals_path), field=f"{at}.files[{j}]")
        files[base] = (skill_root / name).read_bytes()
    checks = tuple(selftune_check(spec, file=str(evals_path), field=f"{at}.selftune_assertions[{j}]")
                   for j, spec in enumerate(case.selftune_assertions))
    return Case(case, files, checks)


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
    cases = [_case(case, i, skill_path, evals_path) for i, case in enumerate(evals.evals)]
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
    bundles = {WITH_SKILL: (bundle,), arms[1]: baseline}
    return PairedPlan(skill=skill, skill_path=skill_path, evals_path=evals_path, cases=cases, arms=arms,
                      bundles=bundles, runs=runs, seed=seed, baseline_path=baseline_path, warnings=warnings)
