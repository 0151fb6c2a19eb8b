"""The plan of an evaluation: the matrix skills x tasks x runs, validated before anything runs."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from ..errors import InputError, ScorerError
from ..formats._load import validation_error
from ..formats.benchmark import Benchmark, Task
from ..formats.skill import Skill
from ..scoring.schemas import UnresolvedRef
from ..scoring.scorers import (
    DEFAULT_SCORER_TIMEOUT_S,
    Scorer,
    ScoringContext,
    get_scorer,
    schema_problem,
    schema_validator,
    scorer_type_of,
)

__all__ = ["Plan", "PlannedTask", "WorkItem", "build_plan"]

# expectedOutput keys besides its declared fields that scorers read (a custom scorer may use any)
EXPECTED_OPTIONAL = {"flags", "rubric"}


@dataclass(slots=True)
class PlannedTask:
    """A task with everything resolved once: its scorer, options and per-skill input check."""

    task: Task
    scorer: Scorer
    scorer_type: str
    options: BaseModel  # the scorer's options model, validated
    timeout_ms: int | None


@dataclass(slots=True)
class WorkItem:
    skill: Skill
    planned: PlannedTask
    run_id: int
    input_problem: str | None = None  # inputData does not match the skill's inputSchema


@dataclass
class Plan:
    skills: list[Skill]
    benchmark: Benchmark
    tasks: list[PlannedTask]
    runs: int
    scoring: ScoringContext = field(default_factory=ScoringContext)
    input_problems: dict[tuple[str, str], str] = field(default_factory=dict)
    strict_input: bool = False  # an input_problem is the task's error instead of a warning

    @property
    def total(self) -> int:
        return len(self.skills) * len(self.tasks) * self.runs

    def close(self) -> None:
        """Stop what planning started (custom scorer workers). Safe to call twice."""
        self.scoring.close()

    def __enter__(self) -> Plan:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def items(self) -> Iterator[WorkItem]:
        """Run by run, so an interrupted evaluation has whole runs first; within a run task by task across the
        skills, so the tasks in flight belong to different skills (a persistent skill answers one at a time)
        and an interrupted run has about as many results for each skill."""
        for run_id in range(1, self.runs + 1):
            for planned in self.tasks:
                for skill in self.skills:
                    problem = self.input_problems.get((skill.id, planned.task.id))
                    yield WorkItem(skill, planned, run_id, problem)


def _input_problems(skills: list[Skill], tasks: list[Task], timeout_s: float,
                    strict: bool) -> dict[tuple[str, str], str]:
    """Tasks whose inputData does not fit a skill's inputSchema: a warning (or a task error), not a stop.
    An inputSchema that is not valid JSON Schema (which the original eval-skills never reads; written for another
    draft, say) cannot check any input: a warning on each task with inputData, or with ``strict`` an InputError.
    One whose ``$ref`` does not resolve is broken whatever its draft: always an InputError."""
    problems: dict[tuple[str, str], str] = {}
    for skill in skills:
        schema = skill.manifest.inputSchema
        if not schema:
            continue
        try:
            validator = schema_validator(schema, timeout=timeout_s)
        except ScorerError as exc:
            if strict or isinstance(exc, UnresolvedRef):
                raise InputError(str(exc), file=str(skill.path), field="$.inputSchema") from None
            problems.update({(skill.id, task.id): f"the skill's inputSchema cannot check inputData: {exc}"
                             for task in tasks if task.inputData is not None})
            continue
        for task in tasks:
            if task.inputData is None:
                continue
            try:
                problem = schema_problem(validator, task.inputData)
            except Exception as exc:  # noqa: BLE001 - a schema that cannot judge this input
                problem = f"$: cannot be checked ({type(exc).__name__})"
            if problem is not None:
                problems[(skill.id, task.id)] = f"inputData does not match the skill's inputSchema at {problem}"
    return problems


def _plan_task(benchmark: Benchmark, index: int, task: Task, default_evaluator: str, where: str,
               scoring: ScoringContext) -> PlannedTask:
    kind = scorer_type_of(task, default_evaluator)
    try:
        scorer = get_scorer(kind)
    except InputError as exc:
        at = benchmark.task_path(index)
        kind_field = (f"{at}.evaluator.type" if task.evaluator is not None
                      else f"{at}.expectedOutput.type" if task.expectedOutput.type else "--evaluator")
        raise type(exc)(exc.problem, file=where, field=kind_field, hint=exc.hint) from None
    try:
        options = scorer.parse_options(task.evaluator.options() if task.evaluator else {})
    except ValidationError as exc:
        raise validation_error(exc, where, (*benchmark.task_loc(index), "evaluator")) from None
    unknown = sorted(set(task.expectedOutput.model_extra or {}) - EXPECTED_OPTIONAL)
    if unknown and scorer.name != "custom":
        raise InputError("unknown field (remove it or check its spelling)", file=where,
                         field=f"{benchmark.task_path(index)}.expectedOutput.{unknown[0]}")
    if scorer.check is not None:
        try:
            scorer.check(task, options, scoring)
        except (ScorerError, InputError) as exc:
            problem = exc.problem if isinstance(exc, InputError) else str(exc)
            raise InputError(problem, file=where, field=f"{benchmark.task_path(index)}.expectedOutput",
                             hint=f"task {task.id!r} cannot be scored by {scorer.name}") from None
    return PlannedTask(task, scorer, scorer.name, options, task.timeoutMs)


def build_plan(skills: list[Skill], benchmark: Benchmark, *, runs: int, default_evaluator: str,
               base_dir: Path | None = None, benchmark_file: str | None = None,
               scorer_timeout_s: float = DEFAULT_SCORER_TIMEOUT_S, strict_input: bool = False,
               services: Mapping[str, Any] | None = None) -> Plan:
    """Resolve every task's scorer and options and check inputs; any problem with the files raises InputError
    now. Custom scorers are loaded now (their workers are kept for the run): close the plan when done.

    A task input that does not match a skill's ``inputSchema`` is sent anyway and recorded as a warning
    on its result; with ``strict_input`` it is that task's error instead. ``services`` are handed to the
    scorers (``ScoringContext.services``: a judge, say; see ``eval_skills.scoring.registry``)."""
    if not skills:
        raise InputError("no skills to evaluate", hint="pass --skills with a skill.json or a folder")
    where = benchmark_file or f"benchmark {benchmark.id}"
    if benchmark.scoringMethod == "pass_at_k" and runs < benchmark.k:
        raise InputError(f"scoringMethod pass_at_k with passAtK {benchmark.k} needs at least {benchmark.k} "
                         f"runs of each task", field="--runs", hint=f"run with --runs {benchmark.k} or more")
    try:
        get_scorer(default_evaluator)
    except InputError as exc:
        raise type(exc)(exc.problem, field="--evaluator", hint=exc.hint) from None
    scoring = ScoringContext(base_dir=base_dir, timeout_s=scorer_timeout_s, services=dict(services or {}))
    try:
        planned = [_plan_task(benchmark, index, task, default_evaluator, where, scoring)
                   for index, task in enumerate(benchmark.tasks)]
        problems = _input_problems(skills, benchmark.tasks, scorer_timeout_s, strict_input)
    except BaseException:
        scoring.close()
        raise
    return Plan(skills=skills, benchmark=benchmark, tasks=planned, runs=runs, scoring=scoring,
                input_problems=problems, strict_input=strict_input)
