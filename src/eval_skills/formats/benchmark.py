"""``benchmark.json`` and task files, and finding a benchmark by id or path."""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator

from ..errors import InputError, UnknownBenchmarkError
from ._load import json_path, read_json, validate

CUSTOM_BENCHMARK_ID = "custom"


# Tasks written for the original eval-skills name an llm_judge rubric ``judgePrompt`` (its type) or
# ``criteria`` (its shipped benchmark definitions); both are read as ``rubric``, the reference answer
# staying in ``value``.
RUBRIC_ALIASES = ("judgePrompt", "criteria")


class ExpectedOutput(BaseModel):
    """What a task expects. ``type`` names the scorer when the task has no ``evaluator``."""

    model_config = ConfigDict(extra="allow")

    type: str | None = None
    value: Any = None
    keywords: list[str] | None = None
    schema_: dict[str, Any] | None = Field(default=None, alias="schema")
    pattern: str | None = None
    patterns: list[str] | None = None  # the original's regex list: every pattern must match
    customScorerPath: str | None = None
    rubric: str | None = None  # llm_judge: what the judge rates the output against

    @model_validator(mode="before")
    @classmethod
    def _rubric_from_original(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        given = [key for key in ("rubric", *RUBRIC_ALIASES) if key in data]
        if len(given) > 1:
            raise ValueError(f"{' and '.join(given)} both name the judge's rubric; keep one")
        if given and given[0] != "rubric":
            alias = given[0]
            data = {("rubric" if k == alias else k): v for k, v in data.items()}
        return data


class Evaluator(BaseModel):
    """How to score a task: the scorer ``type`` and its options (``caseSensitive``, ``flags``, ...), which
    each scorer declares and checks itself (see ``eval_skills.scoring.registry``)."""

    model_config = ConfigDict(extra="allow")

    type: str

    def options(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


class Task(BaseModel):
    """A benchmark task. Unknown keys are refused, so a misspelt ``expectedOutput`` is an error, not a
    silently empty expectation."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    name: str | None = None
    description: str = ""
    prompt: str | None = None  # the original's task text; not sent to the skill (inputData is)
    metadata: dict[str, Any] = Field(default_factory=dict)
    inputData: Any = None
    expectedOutput: ExpectedOutput = Field(default_factory=ExpectedOutput)
    evaluator: Evaluator | None = None
    timeoutMs: int | None = Field(default=None, gt=0)
    tags: list[str] = Field(default_factory=list)
    weight: float = Field(default=1.0, ge=0, allow_inf_nan=False)  # used by scoringMethod weighted_mean

    @model_validator(mode="before")
    @classmethod
    def _scorer_path_from_evaluator(cls, data: Any) -> Any:
        """The original also allows ``customScorerPath`` on the ``evaluator``: it is the expected output's."""
        if not isinstance(data, dict) or not isinstance(data.get("evaluator"), dict):
            return data
        evaluator = dict(data["evaluator"])
        path = evaluator.pop("customScorerPath", None)
        if path is None:
            return data
        expected = data.get("expectedOutput")
        expected = dict(expected) if isinstance(expected, dict) else {}
        expected.setdefault("customScorerPath", path)
        return {**data, "evaluator": evaluator, "expectedOutput": expected}


ScoringMethod = Literal["mean", "weighted_mean", "pass_at_k"]


class Benchmark(BaseModel):
    """A benchmark file. Unknown keys are refused, so a misspelt ``scoringMethod`` is an error.

    ``scoringMethod`` sets how ``partialScore`` is computed: ``mean`` of the task scores, ``weighted_mean``
    (by each task's ``weight``), or ``pass_at_k`` (per task over its runs, with ``passAtK``, default 1)."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    name: str = ""
    description: str = ""
    version: str = "1.0.0"
    domain: str = "general"
    scoringMethod: ScoringMethod = "mean"
    passAtK: int | None = Field(default=None, ge=1)
    maxLatencyMs: int | None = Field(default=None, gt=0)
    metadata: dict[str, Any] = Field(default_factory=dict)
    tasks: list[Task]
    _source: Path | None = PrivateAttr(default=None)
    _tasks_at: tuple[str, ...] = PrivateAttr(default=("tasks",))  # where the task list is in its file

    @property
    def source(self) -> Path | None:
        """The file it was read from (None for a built-in); custom scorer paths are relative to its folder."""
        return self._source

    def task_loc(self, index: int) -> tuple[str | int, ...]:
        """Where task ``index`` is in the file it came from (JSON path parts), for error messages."""
        return (*self._tasks_at, index)

    def task_path(self, index: int) -> str:
        """The JSON path of task ``index`` in the file it came from, for error messages."""
        return json_path(self.task_loc(index))

    @property
    def k(self) -> int:
        """The k of ``pass_at_k``: ``passAtK``, else 1."""
        return self.passAtK or 1

    @model_validator(mode="after")
    def _unique_ids(self) -> Benchmark:
        duplicate = _duplicate_id(self.tasks)
        if duplicate is not None:
            raise ValueError(f"task id {self.tasks[duplicate].id!r} appears twice (tasks[{duplicate}])")
        if self.passAtK is not None and self.scoringMethod != "pass_at_k":
            raise ValueError("passAtK is used only with scoringMethod pass_at_k")
        return self


def _duplicate_id(tasks: list[Task]) -> int | None:
    """The index of the first task whose id an earlier task already has."""
    seen: set[str] = set()
    for index, task in enumerate(tasks):
        if task.id in seen:
            return index
        seen.add(task.id)
    return None


def _parse_benchmark(data: Any, file: str) -> Benchmark:
    if not isinstance(data, dict):
        raise InputError("expected a benchmark object with a tasks array", file=file, field="$")
    return validate(Benchmark, data, file)


def load_benchmark_file(path: Path) -> Benchmark:
    benchmark = _parse_benchmark(read_json(path), str(path))
    if not benchmark.tasks:
        raise InputError("the benchmark has no tasks", file=str(path), field="$.tasks")
    benchmark._source = path.resolve()
    return benchmark


def load_tasks_file(path: Path) -> Benchmark:
    """``--tasks FILE``: a bare array of tasks or a benchmark object; either way its id is ``custom``."""
    data = read_json(path)
    if isinstance(data, list):
        tasks = validate(list[Task], data, str(path))
        duplicate = _duplicate_id(tasks)
        if duplicate is not None:
            raise InputError(f"task id {tasks[duplicate].id!r} appears twice", file=str(path),
                             field=f"$[{duplicate}].id", hint="give each task a distinct id")
        benchmark = Benchmark.model_construct(id=CUSTOM_BENCHMARK_ID, name=path.stem, description="",
                                              version="1.0.0", domain="general", scoringMethod="mean",
                                              passAtK=None, maxLatencyMs=None, metadata={}, tasks=tasks)
        benchmark._tasks_at = ()
    else:
        if isinstance(data, dict):
            data = {"id": CUSTOM_BENCHMARK_ID, **data}  # the id is replaced anyway: it may be left out
        benchmark = _parse_benchmark(data, str(path)).model_copy(update={"id": CUSTOM_BENCHMARK_ID})
    if not benchmark.tasks:
        raise InputError("the task file has no tasks", file=str(path), hint="add at least one task")
    benchmark._source = path.resolve()
    return benchmark


def builtin_benchmark_ids() -> list[str]:
    folder = resources.files("eval_skills") / "benchmarks"
    return sorted(entry.name[:-5] for entry in folder.iterdir() if entry.name.endswith(".json"))


_BENCHMARK_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def benchmark_files(folder: Path) -> list[Path]:
    """The benchmark files of a folder, as the original eval-skills finds them: ``<name>.json``,
    ``<name>/benchmark.json`` and ``definitions/<name>.json``."""
    folder = Path(folder)
    return [*sorted(folder.glob("*.json")), *sorted(folder.glob("*/benchmark.json")),
            *sorted(folder.glob("definitions/*.json"))]


def find_benchmark_file(folder: Path, ref: str) -> Path | None:
    """The file of benchmark ``ref`` in ``folder``: ``<ref>.json`` or ``<ref>/benchmark.json``, else the one
    benchmark file whose ``id`` is ``ref`` (the original finds benchmarks by id, whatever their file name).
    InputError when two such files have that id; None when there is none."""
    for path in (folder / f"{ref}.json", folder / ref / "benchmark.json"):
        if path.is_file():
            return path
    found = []
    for path in benchmark_files(folder):
        try:
            data = read_json(path)
        except InputError:
            continue  # a file that does not load is not this benchmark; ``benchmarks list`` shows its problem
        if isinstance(data, dict) and data.get("id") == ref:
            found.append(path)
    if len(found) > 1:
        raise UnknownBenchmarkError(f"{len(found)} benchmarks in {folder} have the id {ref!r}: "
                                    + ", ".join(str(p) for p in found), field="--benchmark",
                                    hint="pass the path of the one to run")
    return found[0] if found else None


def resolve_benchmark(ref: str, benchmarks_dirs: list[Path] | None = None,
                      notes: list[str] | None = None) -> Benchmark:
    """Find a benchmark: a path to a file, an id in one of ``benchmarks_dirs``, or a built-in id.

    An id is letters, digits, ``.``, ``_`` and ``-`` and is only looked up inside the folders (``../x`` is a
    path, never an id), by file name and then by the ``id`` in each file (see :func:`find_benchmark_file`).
    A folder's benchmark that has a built-in's id adds a line to ``notes``.
    """
    candidate = Path(ref)
    if ref.endswith(".json") or "/" in ref or "\\" in ref or candidate.is_file():
        if not candidate.is_file():
            raise UnknownBenchmarkError("benchmark file not found", file=ref)
        return load_benchmark_file(candidate)
    known = ", ".join(builtin_benchmark_ids())
    if not _BENCHMARK_ID.fullmatch(ref):
        raise UnknownBenchmarkError(f"{ref!r} is not a benchmark id (letters, digits, '.', '_' and '-')",
                                    field="--benchmark", hint=f"built-in ids: {known}; or a path to a benchmark.json")
    for folder in benchmarks_dirs or []:
        path = find_benchmark_file(folder, ref)
        if path is not None:
            if notes is not None and ref in builtin_benchmark_ids():
                notes.append(f"benchmark {ref!r} is {path}, not the built-in benchmark of that id")
            return load_benchmark_file(path)
    builtin = resources.files("eval_skills") / "benchmarks" / f"{ref}.json"
    if builtin.is_file():
        data = read_json(Path(str(builtin)))
        return _parse_benchmark(data, f"<built-in {ref}>")
    raise UnknownBenchmarkError(f"unknown benchmark {ref!r}", hint=f"built-in ids: {known}; or pass a path to a "
                                "benchmark.json, or --benchmarks-dir")
