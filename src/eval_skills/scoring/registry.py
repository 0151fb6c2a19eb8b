"""The scorer registry: scorers are registered by name with the options they take.

Adding a scorer (``llm_judge`` registers the same way, and the runner never changes)::

    class FuzzyOptions(BaseModel):
        model_config = ConfigDict(extra="forbid", strict=True)
        minRatio: float = Field(default=0.8, ge=0, le=1)

    @scorer("fuzzy", options=FuzzyOptions, check=optional_check)
    def fuzzy(output, task, options: FuzzyOptions, ctx: ScoringContext) -> Score: ...

- ``options`` is a pydantic model of the scorer's settings (a task's ``evaluator`` keys besides ``type``).
  They are validated before anything runs, so a misspelt or mistyped option is an error naming the file
  and the JSON path. Use ``extra="forbid"`` (an unknown key is refused) and ``strict=True`` (``"high"``
  is not a number).
- ``check(task, options, ctx)``, optional, looks at a task before anything runs and raises
  :class:`~eval_skills.errors.ScorerError` (or InputError) when it cannot be scored.
- The scorer runs in a thread, off the event loop, with a deadline of ``ctx.timeout_s`` seconds: a scorer
  that can take long (matching, a model call) should stop itself by then. Whatever it raises is that
  task's error, never a crash.
- ``inline(output)``, optional, says when scoring an output is too quick to be worth a thread: only for
  work linear in a small answer (``exact`` and ``contains`` on answers up to ``INLINE_MAX_CHARS``), which
  then runs on the event loop in microseconds.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from ..errors import UnknownScorerError
from ..formats.benchmark import Task
from ..results import Score

__all__ = ["DEFAULT_SCORER_TIMEOUT_S", "INLINE_MAX_CHARS", "NoOptions", "SCORERS", "Scorer", "ScoringContext",
           "answer_of", "as_text", "get_scorer", "scorer", "scorer_type_of", "searched_texts", "short_answer",
           "small_output"]

DEFAULT_SCORER_TIMEOUT_S = 5.0  # the original tool's deadline for scoring one task
INLINE_MAX_CHARS = 65536  # an answer this short is compared on the event loop by linear-time scorers


@dataclass
class ScoringContext:
    """What scorers share during one evaluation: the task file's folder (custom scorer paths are relative to
    it), the scoring deadline, and resources to release at the end (custom scorer workers): :meth:`close`."""

    base_dir: Path | None = None
    timeout_s: float = DEFAULT_SCORER_TIMEOUT_S
    workers_per_scorer: int = 4  # worker processes one custom scorer file may have at once
    _cache: dict[Any, Any] = field(default_factory=dict)
    _closers: list[Callable[[], None]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def cached(self, key: Any, make: Callable[[], Any], close: Callable[[Any], None] | None = None) -> Any:
        """The value cached under ``key``, made once (thread-safe); ``close`` is called on it by :meth:`close`."""
        with self._lock:
            if key in self._cache:
                return self._cache[key]
        value = make()
        with self._lock:
            if key in self._cache:  # made twice by two threads: keep the first
                if close is not None:
                    close(value)
                return self._cache[key]
            self._cache[key] = value
            if close is not None:
                self._closers.append(lambda: close(value))
        return value

    def close(self) -> None:
        """Release what scorers started (worker processes). Safe to call twice."""
        with self._lock:
            closers, self._closers = self._closers, []
            self._cache.clear()
        for close in closers:
            close()


class NoOptions(BaseModel):
    """A scorer that takes no options."""

    model_config = ConfigDict(extra="forbid", strict=True)


ScoreFn = Callable[[Any, Task, Any, ScoringContext], Score]
CheckFn = Callable[[Task, Any, ScoringContext], None]
InlineFn = Callable[[Any], bool]


@dataclass(frozen=True)
class Scorer:
    """A registered scorer (see the module doc)."""

    name: str
    fn: ScoreFn
    aliases: tuple[str, ...] = ()
    check: CheckFn | None = None
    options: type[BaseModel] = NoOptions
    inline: InlineFn | None = None

    def parse_options(self, raw: Mapping[str, Any] | BaseModel | None) -> BaseModel:
        """The options as the scorer's model (pydantic ValidationError when they do not fit)."""
        if isinstance(raw, BaseModel):
            return raw
        return self.options.model_validate(dict(raw or {}))

    def __call__(self, output: Any, task: Task, options: Mapping[str, Any] | BaseModel | None,
                 ctx: ScoringContext) -> Score:
        return self.fn(output, task, self.parse_options(options), ctx)


SCORERS: dict[str, Scorer] = {}


def scorer(name: str, *aliases: str, options: type[BaseModel] = NoOptions, check: CheckFn | None = None,
           inline: InlineFn | None = None) -> Callable[[ScoreFn], ScoreFn]:
    """Register a scorer under ``name`` and its aliases, with its options model, an optional ``check`` and an
    optional ``inline`` predicate (see the module doc)."""

    def register(fn: ScoreFn) -> ScoreFn:
        entry = Scorer(name, fn, aliases, check, options, inline)
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


def short_answer(output: Any) -> bool:
    """True when the answer in ``output`` is a scalar or a string of at most INLINE_MAX_CHARS characters."""
    answer = answer_of(output)
    if isinstance(answer, str):
        return len(answer) <= INLINE_MAX_CHARS
    return answer is None or isinstance(answer, bool | int | float)


def small_output(output: Any, limit: int = INLINE_MAX_CHARS) -> bool:
    """True when the whole output's JSON text is at most about ``limit`` characters. Stops counting at the
    limit, so asking costs no more than a small output's size."""
    budget = limit
    todo = [output]
    while todo:
        value = todo.pop()
        if isinstance(value, str):
            budget -= len(value) + 2
        elif isinstance(value, dict | list):
            budget -= 2 + len(value)  # every item costs a character at least: a long one stops here
            if budget < 0:
                return False
            if isinstance(value, dict):
                budget -= sum(len(key) + 3 if isinstance(key, str) else 24 for key in value)
                todo.extend(value.values())
            else:
                todo.extend(value)
        else:
            budget -= 24  # a number, a boolean, null
        if budget < 0:
            return False
    return True


def as_text(value: Any) -> str:
    """A value as the text a user would compare: strings as they are, other values as compact JSON."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def searched_texts(output: Any) -> list[str]:
    """What ``contains`` and ``regex`` search: the answer's text and, for an object or array output, the
    JSON text of the whole output too, key names included (as the original eval-skills does)."""
    texts = [as_text(answer_of(output))]
    if isinstance(output, dict | list):
        whole = as_text(output)
        if whole != texts[0]:
            texts.append(whole)
    return texts


def short(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
