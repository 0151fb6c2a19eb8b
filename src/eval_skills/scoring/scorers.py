"""Scorers for tool-skill tasks: pure functions of (output, task) registered by name.

A scorer is registered with :func:`scorer`; later scorers (``llm_judge``) register the same way and the
runner never changes. Each returns a :class:`~eval_skills.results.Score`.
"""

from __future__ import annotations

import importlib.util
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError, ScorerError, UnknownScorerError
from ..formats._load import json_path
from ..formats.benchmark import Task
from ..results import Score
from .assertions import regex_flags

__all__ = ["SCORERS", "ScoringContext", "Scorer", "answer_of", "as_text", "get_scorer", "scorer",
           "scorer_type_of"]


@dataclass
class ScoringContext:
    """What a scorer may need beyond the task: the folder the task file came from (for custom scorers), the
    judge of llm_judge tasks."""

    base_dir: Path | None = None
    judge: Any = None  # for llm_judge: a RubricJudge (scoring.llm_judge), given by whoever runs the evaluation
    _cache: dict[Any, Any] = field(default_factory=dict)


ScoreFn = Callable[[Any, Task, dict[str, Any], ScoringContext], Score]
CheckFn = Callable[[Task, dict[str, Any], ScoringContext], None]


@dataclass(frozen=True)
class Scorer:
    """A registered scorer. ``check`` (optional) looks at a task before anything runs and raises
    ScorerError when the task cannot be scored (no expected value, an invalid pattern or schema)."""

    name: str
    fn: ScoreFn
    aliases: tuple[str, ...] = ()
    check: CheckFn | None = None

    def __call__(self, output: Any, task: Task, options: dict[str, Any], ctx: ScoringContext) -> Score:
        return self.fn(output, task, options, ctx)


SCORERS: dict[str, Scorer] = {}


def scorer(name: str, *aliases: str, check: CheckFn | None = None) -> Callable[[ScoreFn], ScoreFn]:
    """Register a scorer under ``name`` and its aliases, with an optional up-front ``check`` of a task."""

    def register(fn: ScoreFn) -> ScoreFn:
        entry = Scorer(name, fn, aliases, check)
        for key in (name, *aliases):
            SCORERS[key] = entry
        return fn

    return register


def get_scorer(name: str) -> Scorer:
    try:
        return SCORERS[name]
    except KeyError:
        known = ", ".join(sorted(SCORERS))
        raise UnknownScorerError(f"unknown scorer type {name!r}", hint=f"known types: {known}") from None


def scorer_type_of(task: Task, default: str) -> str:
    """The task's evaluator type, else its expectedOutput type, else the run's default."""
    if task.evaluator is not None:
        return task.evaluator.type
    return task.expectedOutput.type or default


ANSWER_KEYS = ("result", "output", "answer")


def answer_of(output: Any) -> Any:
    """The answer inside an output: its ``result``, ``output`` or ``answer`` key, else the whole output."""
    if isinstance(output, dict):
        for key in ANSWER_KEYS:
            if key in output:
                return output[key]
    return output


def as_text(value: Any) -> str:
    """A value as the text a user would compare: strings as they are, other values as compact JSON."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _short(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _needs_value(task: Task, options: dict[str, Any], ctx: ScoringContext) -> None:
    if "value" not in task.expectedOutput.model_fields_set:
        raise ScorerError("exact needs expectedOutput.value")


@scorer("exact", "exact_match", check=_needs_value)
def exact(output: Any, task: Task, options: dict[str, Any], ctx: ScoringContext) -> Score:
    got = as_text(answer_of(output)).strip()
    want = as_text(task.expectedOutput.value).strip()
    same = got == want if options.get("caseSensitive", True) else got.casefold() == want.casefold()
    if same:
        return Score(1.0, True, "exact match")
    return Score(0.0, False, f"expected {_short(want)!r}, got {_short(got)!r}")


def _keywords(task: Task) -> list[str]:
    expected = task.expectedOutput
    if expected.keywords is not None:
        return expected.keywords
    if isinstance(expected.value, list):
        return [as_text(v) for v in expected.value]
    if expected.value is not None:
        return [as_text(expected.value)]
    return []


def _needs_keywords(task: Task, options: dict[str, Any], ctx: ScoringContext) -> None:
    if not _keywords(task):
        raise ScorerError("contains needs expectedOutput.keywords (a non-empty list) or value")


@scorer("contains", check=_needs_keywords)
def contains(output: Any, task: Task, options: dict[str, Any], ctx: ScoringContext) -> Score:
    keywords = _keywords(task)
    if not keywords:
        raise ScorerError(f"task {task.id!r}: contains needs expectedOutput.keywords or value")
    text = as_text(answer_of(output))
    case_sensitive = options.get("caseSensitive", False)
    haystack = text if case_sensitive else text.casefold()
    missing = [k for k in keywords if (k if case_sensitive else k.casefold()) not in haystack]
    value = (len(keywords) - len(missing)) / len(keywords)
    passed = value >= float(options.get("passThreshold", 1.0))
    reason = "all keywords found" if not missing else "missing: " + ", ".join(repr(k) for k in missing)
    return Score(value, passed, reason)


def _compiled(task: Task, options: dict[str, Any]) -> re.Pattern[str]:
    pattern = task.expectedOutput.pattern or task.expectedOutput.value
    if not isinstance(pattern, str):
        raise ScorerError("regex needs expectedOutput.pattern")
    flags = regex_flags(options.get("flags") or (task.expectedOutput.model_extra or {}).get("flags"))
    try:
        return re.compile(pattern, flags)
    except re.error as exc:
        raise ScorerError(f"invalid regex {pattern!r}: {exc}") from None


def _check_regex(task: Task, options: dict[str, Any], ctx: ScoringContext) -> None:
    _compiled(task, options)


@scorer("regex", check=_check_regex)
def regex(output: Any, task: Task, options: dict[str, Any], ctx: ScoringContext) -> Score:
    compiled = _compiled(task, options)
    pattern = compiled.pattern
    text = as_text(answer_of(output))
    match = compiled.search(text)
    if match:
        return Score(1.0, True, f"matched {_short(match.group(0))!r} at offset {match.start()}")
    return Score(0.0, False, f"no match for /{_short(pattern)}/")


def schema_validator(schema: dict[str, Any]) -> Any:
    """A jsonschema validator for ``schema`` (its draft read from ``$schema``); ScorerError if invalid."""
    import jsonschema

    cls = jsonschema.validators.validator_for(schema)
    try:
        cls.check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise ScorerError(f"invalid JSON Schema: {exc.message}") from None
    return cls(schema)


def schema_problem(validator: Any, value: Any) -> str | None:
    """``"$.path: message"`` for the most relevant error of ``value``, or None when it is valid."""
    import jsonschema

    error = jsonschema.exceptions.best_match(validator.iter_errors(value))
    return None if error is None else f"{json_path(list(error.absolute_path))}: {error.message}"


def _validator(task: Task, ctx: ScoringContext) -> Any:
    schema = task.expectedOutput.schema_ or task.expectedOutput.value
    if not isinstance(schema, dict):
        raise ScorerError("json_schema needs expectedOutput.schema (an object)")
    key = ("schema", json.dumps(schema, sort_keys=True))
    validator = ctx._cache.get(key)
    if validator is None:
        validator = ctx._cache[key] = schema_validator(schema)
    return validator


def _check_schema(task: Task, options: dict[str, Any], ctx: ScoringContext) -> None:
    _validator(task, ctx)


@scorer("json_schema", "schema", check=_check_schema)
def json_schema(output: Any, task: Task, options: dict[str, Any], ctx: ScoringContext) -> Score:
    validator = _validator(task, ctx)
    value = output
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            return Score(0.0, False, "output is a string that is not JSON")
    problem = schema_problem(validator, value)
    if problem is None:
        return Score(1.0, True, "output matches the schema")
    return Score(0.0, False, _short(problem, 200))


def _load_custom(path: Path, ctx: ScoringContext) -> Callable[..., Any]:
    key = ("custom", path)
    fn = ctx._cache.get(key)
    if fn is None:
        spec = importlib.util.spec_from_file_location(f"eval_skills_custom_{abs(hash(path))}", path)
        if spec is None or spec.loader is None:
            raise ScorerError(f"cannot load custom scorer {path}")
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
        except Exception as exc:
            raise ScorerError(f"custom scorer {path.name} failed to load: {type(exc).__name__}: {exc}") from None
        fn = getattr(module, "score", None)
        if not callable(fn):
            raise ScorerError(f"custom scorer {path.name} has no score(output, expected, task) function")
        ctx._cache[key] = fn
    return fn


def _unit(value: Any) -> float:
    """A custom scorer's number, which must be a finite number from 0 to 1."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ScorerError(f"custom scorer returned score {value!r}; expected a number from 0 to 1") from None
    if not 0.0 <= number <= 1.0:  # also false for NaN
        raise ScorerError(f"custom scorer returned score {value!r}; expected a number from 0 to 1")
    return number


def custom_scorer_path(task: Task, base_dir: Path | None) -> Path:
    """The custom scorer file of a task, which must stay inside the task file's folder."""
    raw = task.expectedOutput.customScorerPath
    if not raw:
        raise InputError("custom scorer needs expectedOutput.customScorerPath", field=f"task {task.id}")
    base = (base_dir or Path.cwd()).resolve()
    path = (base / raw).resolve()
    if not path.is_relative_to(base):
        raise InputError(f"customScorerPath {raw!r} leaves the benchmark's folder", field=f"task {task.id}",
                         hint="keep custom scorers beside the benchmark file")
    if not path.is_file():
        raise InputError(f"custom scorer file not found: {path}", field=f"task {task.id}")
    return path


def _check_custom(task: Task, options: dict[str, Any], ctx: ScoringContext) -> None:
    _load_custom(custom_scorer_path(task, ctx.base_dir), ctx)


@scorer("custom", check=_check_custom)
def custom(output: Any, task: Task, options: dict[str, Any], ctx: ScoringContext) -> Score:
    fn = _load_custom(custom_scorer_path(task, ctx.base_dir), ctx)
    expected = task.expectedOutput.model_dump(by_alias=True, exclude_none=True)
    try:
        verdict = fn(output, expected, task.model_dump(by_alias=True))
    except Exception as exc:
        raise ScorerError(f"custom scorer raised {type(exc).__name__}: {exc}") from None
    if isinstance(verdict, bool):
        return Score(1.0 if verdict else 0.0, verdict, "custom scorer")
    if isinstance(verdict, int | float):
        value = _unit(verdict)
        return Score(value, value >= float(options.get("passThreshold", 1.0)), "custom scorer")
    if isinstance(verdict, dict) and "score" in verdict:
        value = _unit(verdict["score"])
        passed = bool(verdict.get("passed", value >= float(options.get("passThreshold", 1.0))))
        return Score(value, passed, str(verdict.get("reason", "custom scorer")))
    raise ScorerError(f"custom scorer returned {type(verdict).__name__}; expected bool, number or "
                      "{score, passed, reason}")


from . import gaia as _gaia  # noqa: E402,F401 - registers the gaia scorer (it imports this module)
from . import llm_judge as _llm_judge  # noqa: E402,F401 - registers the llm_judge scorer (it imports this module)
