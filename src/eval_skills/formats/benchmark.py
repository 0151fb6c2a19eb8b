"""``benchmark.json`` and task files, and finding a benchmark by id or path."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator

from ..errors import InputError, UnknownBenchmarkError
from ._load import read_json, validate

CUSTOM_BENCHMARK_ID = "custom"


class ExpectedOutput(BaseModel):
    """What a task expects. ``type`` names the scorer when the task has no ``evaluator``."""

    model_config = ConfigDict(extra="allow")

    type: str | None = None
    value: Any = None
    keywords: list[str] | None = None
    schema_: dict[str, Any] | None = Field(default=None, alias="schema")
    pattern: str | None = None
    customScorerPath: str | None = None
    rubric: str | None = None  # llm_judge: what the judge rates the output against
    judgePrompt: str | None = None  # llm_judge, as tasks written for the original tool name the rubric


class Evaluator(BaseModel):
    """How to score a task: the scorer ``type`` and its options (``caseSensitive``, ``flags``, ...)."""

    model_config = ConfigDict(extra="allow")

    type: str
    caseSensitive: bool | None = None

    def options(self) -> dict[str, Any]:
        opts = dict(self.model_extra or {})
        if self.caseSensitive is not None:
            opts["caseSensitive"] = self.caseSensitive
        return opts


class Task(BaseModel):
    """A benchmark task. Unknown keys are refused, so a misspelt ``expectedOutput`` is an error, not a
    silently empty expectation."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    name: str | None = None
    description: str = ""
    metadata: dict[str, Any] = Field(default_factory=dict)
    inputData: Any = None
    expectedOutput: ExpectedOutput = Field(default_factory=ExpectedOutput)
    evaluator: Evaluator | None = None
    timeoutMs: int | None = Field(default=None, gt=0)
    tags: list[str] = Field(default_factory=list)


class Benchmark(BaseModel):
    model_config = ConfigDict(extra="allow")

    id: str = Field(min_length=1)
    name: str = ""
    version: str = "1.0.0"
    domain: str = "general"
    scoringMethod: str = "mean"
    maxLatencyMs: int | None = Field(default=None, gt=0)
    metadata: dict[str, Any] = Field(default_factory=dict)
    tasks: list[Task]
    _source: Path | None = PrivateAttr(default=None)
    _tasks_at: str = PrivateAttr(default="$.tasks")  # the JSON path of the task list in its file

    @property
    def source(self) -> Path | None:
        """The file it was read from (None for a built-in); custom scorer paths are relative to its folder."""
        return self._source

    def task_path(self, index: int) -> str:
        """The JSON path of task ``index`` in the file it came from, for error messages."""
        return f"{self._tasks_at}[{index}]"

    @model_validator(mode="after")
    def _unique_ids(self) -> Benchmark:
        duplicate = _duplicate_id(self.tasks)
        if duplicate is not None:
            raise ValueError(f"task id {self.tasks[duplicate].id!r} appears twice (tasks[{duplicate}])")
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
        benchmark = Benchmark.model_construct(id=CUSTOM_BENCHMARK_ID, name=path.stem, version="1.0.0",
                                              domain="general", scoringMethod="mean", maxLatencyMs=None,
                                              metadata={}, tasks=tasks)
        benchmark._tasks_at = "$"
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


def resolve_benchmark(ref: str, benchmarks_dirs: list[Path] | None = None) -> Benchmark:
    """Find a benchmark: a path to a file, an id in one of ``benchmarks_dirs``, or a built-in id."""
    candidate = Path(ref)
    if ref.endswith(".json") or candidate.is_file():
        if not candidate.is_file():
            raise UnknownBenchmarkError("benchmark file not found", file=ref)
        return load_benchmark_file(candidate)
    for folder in benchmarks_dirs or []:
        for path in (folder / f"{ref}.json", folder / ref / "benchmark.json"):
            if path.is_file():
                return load_benchmark_file(path)
    builtin = resources.files("eval_skills") / "benchmarks" / f"{ref}.json"
    if builtin.is_file():
        data = read_json(Path(str(builtin)))
        return _parse_benchmark(data, f"<built-in {ref}>")
    known = ", ".join(builtin_benchmark_ids())
    raise UnknownBenchmarkError(f"unknown benchmark {ref!r}", hint=f"built-in ids: {known}; or pass a path to a "
                                "benchmark.json, or --benchmarks-dir")
