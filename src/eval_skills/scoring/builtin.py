"""The built-in scorers of tool-skill tasks: exact, contains, regex, json_schema (pure functions of the output).

Each declares its options as a pydantic model (checked before anything runs). They run off the event loop
with the scoring deadline; regex matching stops itself at that deadline.

``exact`` compares the answer (the output's ``result``, ``output`` or ``answer`` key, else the whole output).
``contains`` and ``regex`` search the answer and, for an object or array output, the JSON text of the whole
output too, key names included, as the original eval-skills does (its templates test for ``"result"``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..errors import InputError, ScorerError
from ..formats.benchmark import Task
from ..formats.untrusted import NotJSON, loads_untrusted
from ..results import Score
from .assertions import compile_pattern, regex_flags
from .registry import (
    NoOptions,
    ScoringContext,
    SearchedTexts,
    answer_of,
    as_text,
    scorer,
    short,
    short_answer,
    small_output,
)
from .schemas import schema_problem, schema_validator

__all__ = ["ContainsOptions", "ExactOptions", "RegexOptions"]


class _Options(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class ExactOptions(_Options):
    caseSensitive: bool = True


class ContainsOptions(_Options):
    caseSensitive: bool = False
    passThreshold: float = Field(default=1.0, ge=0, le=1)


FlagSpec = str | list[str] | int | None


def _check_flags(value: FlagSpec) -> FlagSpec:
    try:
        regex_flags(value)
    except InputError as exc:
        raise ValueError(exc.problem) from None
    return value


class RegexOptions(_Options):
    flags: FlagSpec = None

    _flags = field_validator("flags")(_check_flags)


def _needs_value(task: Task, options: Any, ctx: ScoringContext) -> None:
    if "value" not in task.expectedOutput.model_fields_set:
        raise ScorerError("exact needs expectedOutput.value")


@scorer("exact", "exact_match", options=ExactOptions, check=_needs_value, inline=short_answer)
def exact(output: Any, task: Task, options: ExactOptions, ctx: ScoringContext) -> Score:
    got = as_text(answer_of(output)).strip()
    want = as_text(task.expectedOutput.value).strip()
    same = got == want if options.caseSensitive else got.casefold() == want.casefold()
    if same:
        return Score(1.0, True, "exact match")
    return Score(0.0, False, f"expected {short(want)!r}, got {short(got)!r}")


def _keywords(task: Task) -> list[str]:
    expected = task.expectedOutput
    if expected.keywords is not None:
        return expected.keywords
    if isinstance(expected.value, list):
        return [as_text(v) for v in expected.value]
    if expected.value is not None:
        return [as_text(expected.value)]
    return []


def _needs_keywords(task: Task, options: Any, ctx: ScoringContext) -> None:
    if not _keywords(task):
        raise ScorerError("contains needs expectedOutput.keywords (a non-empty list) or value")


@scorer("contains", options=ContainsOptions, check=_needs_keywords, inline=small_output)
def contains(output: Any, task: Task, options: ContainsOptions, ctx: ScoringContext) -> Score:
    keywords = _keywords(task)
    if not keywords:
        raise ScorerError(f"task {task.id!r}: contains needs expectedOutput.keywords or value")
    fold = None if options.caseSensitive else str.casefold
    haystacks = SearchedTexts(output, fold)
    needles = keywords if fold is None else [fold(k) for k in keywords]
    missing = [k for k, needle in zip(keywords, needles, strict=True)
               if not any(needle in text for text in haystacks)]
    value = (len(keywords) - len(missing)) / len(keywords)
    reason = "all keywords found" if not missing else "missing: " + ", ".join(repr(k) for k in missing)
    return Score(value, value >= options.passThreshold, reason)


def _compiled(task: Task, options: RegexOptions) -> list[Any]:
    expected = task.expectedOutput
    patterns: Any = expected.patterns if expected.patterns is not None else [expected.pattern or expected.value]
    if not patterns or not all(isinstance(p, str) for p in patterns):
        raise ScorerError("regex needs expectedOutput.pattern (or patterns, a non-empty list)")
    spec = options.flags if options.flags is not None else (expected.model_extra or {}).get("flags")
    try:
        flags = regex_flags(spec)
        return [compile_pattern(pattern, flags) for pattern in patterns]
    except InputError as exc:
        raise ScorerError(exc.problem.replace("invalid regular expression", "invalid regex", 1)) from None


def _check_regex(task: Task, options: RegexOptions, ctx: ScoringContext) -> None:
    _compiled(task, options)


def _search(compiled: Any, texts: Iterable[str], deadline: float) -> Any:
    """The first match of ``compiled`` in ``texts``, or None; TimeoutError once past the scoring deadline."""
    for text in texts:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError
        match = compiled.search(text, timeout=remaining)
        if match:
            return match
    return None


@scorer("regex", options=RegexOptions, check=_check_regex)
def regex(output: Any, task: Task, options: RegexOptions, ctx: ScoringContext) -> Score:
    """``pattern`` must be found; with ``patterns`` (the original's list) the score is the share found and
    the task passes when all are."""
    compiled = _compiled(task, options)
    texts = SearchedTexts(output)
    deadline = time.monotonic() + ctx.timeout_s  # TimeoutError: the task is past the scoring deadline
    matches = [_search(pattern, texts, deadline) for pattern in compiled]
    missing = [c.pattern for c, m in zip(compiled, matches, strict=True) if m is None]
    total, matched = len(compiled), len(compiled) - len(missing)
    if not missing:
        first = matches[0]
        one = f"matched {short(first.group(0))!r} at offset {first.start()}"
        return Score(1.0, True, one if total == 1 else f"all {total} patterns matched")
    reason = "no match for " + ", ".join(f"/{short(p)}/" for p in missing)
    return Score(matched / total, False, reason if total == 1 else f"{reason} ({matched}/{total} matched)")


def _validator(task: Task, ctx: ScoringContext) -> Any:
    schema = task.expectedOutput.schema_ or task.expectedOutput.value
    if not isinstance(schema, dict):
        raise ScorerError("json_schema needs expectedOutput.schema (an object)")
    key = ("schema", json.dumps(schema, sort_keys=True))
    return ctx.cached(key, lambda: schema_validator(schema, timeout=ctx.timeout_s))


def _check_schema(task: Task, options: Any, ctx: ScoringContext) -> None:
    _validator(task, ctx)


@scorer("json_schema", "schema", options=NoOptions, check=_check_schema)
def json_schema(output: Any, task: Task, options: NoOptions, ctx: ScoringContext) -> Score:
    validator = _validator(task, ctx)
    value = output
    if isinstance(value, str):
        try:
            value = loads_untrusted(value)
        except NotJSON:
            return Score(0.0, False, "output is a string that is not JSON")
    problem = schema_problem(validator, value)
    if problem is None:
        return Score(1.0, True, "output matches the schema")
    return Score(0.0, False, short(problem, 200))
