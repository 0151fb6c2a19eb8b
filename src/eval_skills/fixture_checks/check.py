"""Fixture checks of instruction skills: score worked examples or answers on disk, validate the fixtures.

Two modes, one report:

- ``examples`` (no answers folder): each task's worked example ``evals/examples/<id>.md`` is scored like an
  answer, and the fixtures are validated. Validation problems (``missing_example``, ``no_checks``,
  ``not_grounded``, ``no_tasks``) make the report fail whatever the score.
- ``answers``: ``<answers>/<skill>/<id>.md`` is scored. Problems of the fixtures themselves (``no_checks``,
  ``no_tasks``) are listed but do not change the verdict, which is the score against ``min_score``.

Scoring: every must_include / must_not_include entry is one check (a case-sensitive substring test); a
task's score is the checks it passed over its checks and it passes only when all pass; a missing file
scores 0; a skill's score is the mean of its task scores and the overall score the mean over all scored
tasks. A task with no checks is not scored (score ``None``). Nothing scored at all is a failure.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..errors import InputError
from ..formats.agentskills import load_skill_md
from ..formats.fixtures import (
    EXAMPLES_DIR,
    FixtureTask,
    InstructionSkill,
    discover_skills,
    grounding_sources,
    load_tasks,
    read_answer,
    select_skills,
)
from ..scoring.assertions import Check, CheckResult, run_check

__all__ = [
    "Failure",
    "FixturesReport",
    "Overall",
    "Problem",
    "SkillResult",
    "FixtureTaskResult",
    "check_fixtures",
    "default_min_score",
    "score_task",
    "task_checks",
]

Mode = Literal["examples", "answers"]
TOLERANCE = 1e-9  # means of fractions are compared to the threshold with this slack


@dataclass(frozen=True, slots=True)
class FixtureTaskResult:
    id: str
    score: float | None  # None: the task has no checks, so it is not scored
    passed: bool
    missing: bool
    file: str
    checks: list[CheckResult]

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "score": self.score, "passed": self.passed, "missing": self.missing,
                "file": self.file, "checks": [c.to_dict() for c in self.checks]}


@dataclass(frozen=True, slots=True)
class SkillResult:
    skill: str
    score: float | None  # mean of the scored tasks; None when none was scored
    passed: int  # tasks that passed
    total: int  # tasks scored
    tasks: list[FixtureTaskResult]

    def to_dict(self) -> dict[str, Any]:
        return {"skill": self.skill, "score": self.score, "passed": self.passed, "total": self.total,
                "tasks": [t.to_dict() for t in self.tasks]}


@dataclass(frozen=True, slots=True)
class Problem:
    """Something wrong with the fixtures themselves (not with an answer)."""

    skill: str
    task: str | None
    kind: str  # missing_example | no_checks | not_grounded | no_tasks
    value: str | None
    message: str

    def to_dict(self) -> dict[str, Any]:
        return {"skill": self.skill, "task": self.task, "kind": self.kind, "value": self.value,
                "message": self.message}


@dataclass(frozen=True, slots=True)
class Overall:
    score: float
    passed: int
    total: int


@dataclass(frozen=True, slots=True)
class Failure:
    """One failed check, or one missing file, for the report's list of failures."""

    skill: str
    task: str
    file: str
    check: CheckResult | None  # None: the file is missing


@dataclass(frozen=True)
class FixturesReport:
    mode: Mode
    skills_dir: str
    answers_dir: str | None
    min_score: float
    skills: list[SkillResult]
    overall: Overall
    problems: list[Problem] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # files of the skills not read, and why

    @property
    def score_ok(self) -> bool:
        return self.overall.total > 0 and self.overall.score >= self.min_score - TOLERANCE

    @property
    def ok(self) -> bool:
        """The verdict: the score reaches ``min_score`` and, when checking examples, no problem was found."""
        return self.score_ok and not (self.mode == "examples" and self.problems)

    def failures(self) -> Iterator[Failure]:
        for skill in self.skills:
            for task in skill.tasks:
                if task.missing:
                    yield Failure(skill.skill, task.id, task.file, None)
                    continue
                for check in task.checks:
                    if not check.passed:
                        yield Failure(skill.skill, task.id, task.file, check)

    def to_dict(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "skills_dir": self.skills_dir,
            "answers_dir": self.answers_dir,
            "skills": [s.to_dict() for s in self.skills],
            "overall": {"score": self.overall.score, "passed": self.overall.passed,
                        "total": self.overall.total},
            "min_score": self.min_score,
            "problems": [p.to_dict() for p in self.problems],
            "warnings": self.warnings,
            "ok": self.ok,
        }


def default_min_score(with_answers: bool) -> float:
    """1 when checking worked examples (every check must pass), 0 when scoring answers (report only)."""
    return 0.0 if with_answers else 1.0


def task_checks(task: FixtureTask) -> list[Check]:
    return ([Check("must_include", value) for value in task.must_include]
            + [Check("must_not_include", value) for value in task.must_not_include])


def score_task(task: FixtureTask, text: str | None, file: str) -> FixtureTaskResult:
    """Score one answer (``None`` when its file is missing) against its task's checks."""
    checks = task_checks(task)
    if text is None:
        why = "no file: " + file
        results = [CheckResult(c.kind, c.value, False, why) for c in checks]
        return FixtureTaskResult(task.id, 0.0 if checks else None, False, True, file, results)
    results = [run_check(c, text) for c in checks]
    if not results:
        return FixtureTaskResult(task.id, None, False, False, file, results)
    passed = sum(1 for r in results if r.passed)
    return FixtureTaskResult(task.id, passed / len(results), passed == len(results), False, file, results)


def _mean(scores: Sequence[float]) -> float:
    return math.fsum(scores) / len(scores) if scores else 0.0


def _validate_task(skill: InstructionSkill, task: FixtureTask, result: FixtureTaskResult,
                   sources: Sequence[str]) -> list[Problem]:
    problems: list[Problem] = []
    if result.missing:
        problems.append(Problem(skill.name, task.id, "missing_example", result.file,
                                f"the task has no worked example: {result.file}"))
    for value in dict.fromkeys(task.must_include):
        if not any(value in text for text in sources):
            problems.append(Problem(skill.name, task.id, "not_grounded", value,
                                    f"must_include {value!r} appears nowhere in SKILL.md, "
                                    "its rules or its references"))
    return problems


def _check_skill(skill: InstructionSkill, skills_dir: Path, answers_dir: Path | None,
                 problems: list[Problem], warnings: list[str]) -> SkillResult:
    tasks = load_tasks(skill.tasks_file)
    if not tasks:
        what = "has no tasks" if tasks is not None else "not found"
        problems.append(Problem(skill.name, None, "no_tasks", str(skill.tasks_file),
                                f"{skill.tasks_file} {what}: the skill has nothing to check"))
        return SkillResult(skill.name, None, 0, 0, [])
    sources: list[str] = []
    if answers_dir is None:
        skipped: list[str] = []
        sources = [source.text for source in grounding_sources(skill, skills_dir, skipped)]
        warnings += skipped
    folder = str(skill.root / EXAMPLES_DIR if answers_dir is None else answers_dir / skill.name)
    results: list[FixtureTaskResult] = []
    for task in tasks:
        file = os.path.join(folder, f"{task.id}.md")
        result = score_task(task, read_answer(file), file)
        results.append(result)
        if not task.check_count:
            problems.append(Problem(skill.name, task.id, "no_checks", None,
                                    "the task has no must_include or must_not_include entry"))
        if answers_dir is None:
            problems.extend(_validate_task(skill, task, result, sources))
    scored = [r.score for r in results if r.score is not None]
    passed = sum(1 for r in results if r.passed)
    return SkillResult(skill.name, _mean(scored) if scored else None, passed, len(scored), results)


def check_fixtures(skills_dir: Path, *, answers_dir: Path | None = None, skills: Sequence[str] = (),
                   min_score: float | None = None) -> FixturesReport:
    """Score the worked examples (``answers_dir=None``) or the answers of the selected skills.

    Raises InputError for an unknown skill, a missing folder, a bad tasks.json or a file that is not UTF-8.
    """
    if min_score is None:
        min_score = default_min_score(answers_dir is not None)
    if not 0.0 <= min_score <= 1.0:  # also refuses NaN
        raise InputError(f"min score must be a number from 0 to 1, got {min_score}")
    if answers_dir is not None and not answers_dir.is_dir():
        what = "is not a folder" if answers_dir.exists() else "answers folder not found"
        raise InputError(what, file=str(answers_dir),
                         hint="pass --answers with one folder per skill holding <task-id>.md files")
    selected = select_skills(discover_skills(skills_dir), skills, skills_dir)
    for skill in selected:  # the frontmatter check paired and routing make: a skill they refuse is refused here
        load_skill_md(skill.root)
    problems: list[Problem] = []
    warnings: list[str] = []  # what was not read (a FIFO, a link out of the skill)
    results = [_check_skill(skill, skills_dir, answers_dir, problems, warnings) for skill in selected]
    task_scores = [t.score for s in results for t in s.tasks if t.score is not None]
    overall = Overall(_mean(task_scores), sum(s.passed for s in results), len(task_scores))
    return FixturesReport(
        mode="answers" if answers_dir is not None else "examples",
        skills_dir=str(skills_dir),
        answers_dir=str(answers_dir) if answers_dir is not None else None,
        min_score=min_score,
        skills=results,
        overall=overall,
        problems=problems,
        warnings=warnings,
    )
