"""The ``custom`` scorer: a user's file with ``score(output, expected, task)``, run in worker processes.

The file is ``expectedOutput.customScorerPath``, relative to the benchmark's folder and inside it (a path not
found there is looked up from the current folder, as the original eval-skills does, and must stay inside
that folder). Python files run in Python workers, JavaScript files (``.js``, ``.mjs``, ``.cjs``) in Node.js
workers (:mod:`.node`), both through :mod:`.workers`. The file is loaded before anything runs (a file that
cannot be loaded stops the run with its reason), then called in a worker with the scoring deadline. Its
verdict is a bool, a number from 0 to 1, or ``{score, passed, reason}``; anything else (NaN included) is
that task's error.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..errors import InputError, ScorerError
from ..formats.benchmark import Task
from ..results import Score
from .registry import ScoringContext, scorer
from .workers import ScorerWorkers

__all__ = ["CustomOptions", "custom_scorer_path", "verdict_score"]


class CustomOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    passThreshold: float = Field(default=1.0, ge=0, le=1)


def _inside(base: Path, raw: str, task: Task) -> Path:
    try:
        return (base / raw).resolve()
    except (ValueError, OSError) as exc:  # a NUL byte, a loop of symlinks
        raise InputError(f"customScorerPath {raw!r} is not a usable path ({exc})", field=f"task {task.id}") from None


def _locate(task: Task, base_dir: Path | None) -> tuple[Path, Path]:
    """(the scorer file, the folder it must stay inside): next to the benchmark, else (as the original
    resolves it) from the current folder."""
    raw = task.expectedOutput.customScorerPath
    if not raw:
        raise InputError("custom scorer needs expectedOutput.customScorerPath", field=f"task {task.id}")
    base = (base_dir or Path.cwd()).resolve()
    path = _inside(base, raw, task)
    if not (path.exists() and path.is_relative_to(base)):  # also an absolute path into the current folder
        here = Path.cwd().resolve()
        found = _inside(here, raw, task)
        if found.is_file() and found.is_relative_to(here):
            base, path = here, found
    if not path.is_relative_to(base):
        raise InputError(f"customScorerPath {raw!r} leaves the benchmark's folder", field=f"task {task.id}",
                         hint="keep custom scorers beside the benchmark file")
    if not path.is_file():
        raise InputError(f"custom scorer file not found: {path}", field=f"task {task.id}")
    return path, base


def custom_scorer_path(task: Task, base_dir: Path | None) -> Path:
    """The custom scorer file of a task, which must stay inside the task file's folder (or, when it is not
    there, inside the current folder, from where the original eval-skills resolves it)."""
    return _locate(task, base_dir)[0]


def _workers(task: Task, ctx: ScoringContext) -> ScorerWorkers:
    path, base = _locate(task, ctx.base_dir)
    name = f"custom scorer {path.relative_to(base).as_posix()}"
    workers: ScorerWorkers = ctx.cached(
        ("custom", path),
        lambda: ScorerWorkers(path, name=name, timeout=ctx.timeout_s, max_workers=ctx.workers_per_scorer),
        lambda made: made.close())
    return workers


def _unit(value: Any, name: str) -> float:
    """A verdict's number, which must be a finite number from 0 to 1."""
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value) \
            or not 0.0 <= value <= 1.0:
        raise ScorerError(f"{name} returned score {value!r}; expected a number from 0 to 1")
    return float(value)


def verdict_score(verdict: Any, pass_threshold: float, name: str = "custom scorer") -> Score:
    """A scorer's verdict (a bool, a number from 0 to 1, or ``{score, passed, reason}``) as a Score."""
    if isinstance(verdict, bool):
        return Score(1.0 if verdict else 0.0, verdict, "custom scorer")
    if isinstance(verdict, int | float):
        value = _unit(verdict, name)
        return Score(value, value >= pass_threshold, "custom scorer")
    if isinstance(verdict, dict) and "score" in verdict:
        value = _unit(verdict["score"], name)
        passed = verdict.get("passed", value >= pass_threshold)
        if not isinstance(passed, bool):
            raise ScorerError(f"{name} returned passed {passed!r}; expected true or false")
        reason = verdict.get("reason", "custom scorer")
        return Score(value, passed, reason if isinstance(reason, str) else str(reason))
    shown = "null" if verdict is None else type(verdict).__name__ if not isinstance(verdict, dict) else \
        "an object without score"
    raise ScorerError(f"{name} returned {shown}; expected bool, number or {{score, passed, reason}}")


def _check_custom(task: Task, options: Any, ctx: ScoringContext) -> None:
    _workers(task, ctx).check()


@scorer("custom", options=CustomOptions, check=_check_custom)
def custom(output: Any, task: Task, options: CustomOptions, ctx: ScoringContext) -> Score:
    workers = _workers(task, ctx)
    expected = task.expectedOutput.model_dump(by_alias=True, exclude_none=True)
    verdict = workers.call(output, expected, task.model_dump(by_alias=True))
    return verdict_score(verdict, options.passThreshold, workers.name)
