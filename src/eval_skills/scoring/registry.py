"""The scorer registry: scorers are registered by name with the options they take.

Adding a scorer needs no change to the plan or the runner::

    class FuzzyOptions(BaseModel):
        model_config = ConfigDict(extra="forbid", strict=True)
        minRatio: float = Field(default=0.8, ge=0, le=1)

    @scorer("fuzzy", "fuzzy_match", options=FuzzyOptions, check=optional_check)
    def fuzzy(output, task, options: FuzzyOptions, ctx: ScoringContext) -> Score: ...

A task names its scorer in ``evaluator.type`` (else ``expectedOutput.type``, else the run's ``--evaluator``);
``get_scorer(name)`` finds it by name or alias, and an unknown name is an input error listing the known ones.

- ``options`` is a pydantic model of the scorer's settings (a task's ``evaluator`` keys besides ``type``).
  They are validated before anything runs, so a misspelt or mistyped option is an error naming the file
  and the JSON path. Use ``extra="forbid"`` (an unknown key is refused) and ``strict=True`` (``"high"``
  is not a number). The scorer and its ``check`` receive the validated model.
- ``check(task, options, ctx)``, optional, looks at a task before anything runs (when the plan is built) and
  raises :class:`~eval_skills.errors.ScorerError` (or InputError) when it cannot be scored. Expected-output
  keys a scorer reads beyond ``ExpectedOutput``'s fields must be listed in ``plan.EXPECTED_OPTIONAL``
  (``rubric`` is: the original's ``judgePrompt`` and ``criteria`` are read as it), else they are refused as
  misspellings.
- A plain function runs in a thread, off the event loop, with a deadline of ``ctx.timeout_s`` seconds
  (``--scorer-timeout``): a scorer that can take long (matching, a worker process) should stop itself by
  then. Whatever it raises is that task's error, never a crash; past the deadline the task is an error
  naming the scorer.
- An ``async def`` scorer runs on the event loop, with the same deadline (it is cancelled there), or its own:
  ``deadline(ctx) -> seconds`` (the ``llm_judge`` scorer waits as long as its judge may take). This is
  for scorers that wait on I/O, such as a judge model: they must never block (no sleeping, no CPU-heavy
  work; put those in a thread with ``asyncio.to_thread``).
- ``inline(output)``, optional, says when scoring an output is too quick to be worth a thread: only for
  work linear in a small output (``exact`` and ``gaia`` on answers up to ``INLINE_MAX_CHARS``, ``contains``
  on outputs that size), which then runs on the event loop in microseconds.

Services from above. ``scoring`` ranks beside ``judges`` and ``agents`` and imports neither, so a scorer that
needs one (the ``llm_judge`` scorer needs an async judge) gets it injected by whoever builds the plan:
``build_plan(..., services={"judge": judge})`` (or ``plan.scoring.services["judge"] = judge``) puts it in
``ctx.services``; the scorer is an ``async def`` that awaits it (``scoring/llm_judge.py``). The code that
knows both sides (the command line, or a module ranked above ``scoring`` and ``judges``, such as
``judging.py``) creates the judge and passes it in.
"""

from __future__ import annotations

import functools
import inspect
import threading
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar, cast, overload

from pydantic import BaseModel, ConfigDict

from ..errors import UnknownScorerError
from ..formats.benchmark import Task
from ..results import Score
from .json_text import as_text

__all__ = ["DEFAULT_SCORER_TIMEOUT_S", "INLINE_MAX_CHARS", "NoOptions", "SCORERS", "Scorer", "ScoringContext",
           "SearchedTexts", "answer_of", "as_text", "get_scorer", "scorer", "scorer_type_of", "searched_texts",
           "short_answer", "small_output"]

DEFAULT_SCORER_TIMEOUT_S = 5.0  # the original tool's deadline for scoring one task
INLINE_MAX_CHARS = 65536  # an answer this short is compared on the event loop by linear-time scorers


@dataclass
class ScoringContext:
    """What scorers share during one evaluation: the task file's folder (custom scorer paths are relative to
    it), the scoring deadline, services injected from above (``services``), and resources to release at the
    end (custom scorer workers): :meth:`close`."""

    base_dir: Path | None = None
    timeout_s: float = DEFAULT_SCORER_TIMEOUT_S
    workers_per_scorer: int = 4  # worker processes one custom scorer file may have at once
    services: dict[str, Any] = field(default_factory=dict)  # injected from above (a judge): see the module doc
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


ScoreFn = Callable[[Any, Task, Any, ScoringContext], Score | Awaitable[Score]]
F = TypeVar("F", bound=ScoreFn)
CheckFn = Callable[[Task, Any, ScoringContext], None]
InlineFn = Callable[[Any], bool]
DeadlineFn = Callable[[ScoringContext], float]


@dataclass(frozen=True)
class Scorer:
    """A registered scorer (see the module doc)."""

    name: str
    fn: ScoreFn
    aliases: tuple[str, ...] = ()
    check: CheckFn | None = None
    options: type[BaseModel] = NoOptions
    inline: InlineFn | None = None
    deadline: DeadlineFn | None = None

    def timeout_s(self, ctx: ScoringContext) -> float:
        """This scorer's deadline: its own ``deadline(ctx)`` when it declares one, else ``ctx.timeout_s``."""
        return self.deadline(ctx) if self.deadline is not None else ctx.timeout_s

    @functools.cached_property
    def is_async(self) -> bool:
        """True for an ``async def`` scorer (run on the event loop; see the module doc)."""
        return inspect.iscoroutinefunction(self.fn)

    def parse_options(self, raw: Mapping[str, Any] | BaseModel | None) -> BaseModel:
        """The options as the scorer's model (pydantic ValidationError when they do not fit)."""
        if isinstance(raw, BaseModel):
            return raw
        if not raw:
            return self._defaults  # most tasks set none: one model serves them (scorers only read options)
        return self.options.model_validate(dict(raw))

    @functools.cached_property
    def _defaults(self) -> BaseModel:
        return self.options.model_validate({})

    def __call__(self, output: Any, task: Task, options: Mapping[str, Any] | BaseModel | None,
                 ctx: ScoringContext) -> Score:
        """Score one output with a plain scorer (``await`` :meth:`score` for any scorer)."""
        if self.is_async:
            raise TypeError(f"scorer {self.name} is async: await its score()")
        return cast(Score, self.fn(output, task, self.parse_options(options), ctx))

    async def score(self, output: Any, task: Task, options: Mapping[str, Any] | BaseModel | None,
                    ctx: ScoringContext) -> Score:
        """Score one output, awaiting an async scorer."""
        result = self.fn(output, task, self.parse_options(options), ctx)
        return await result if inspect.isawaitable(result) else result


SCORERS: dict[str, Scorer] = {}


def scorer(name: str, *aliases: str, options: type[BaseModel] = NoOptions, check: CheckFn | None = None,
           inline: InlineFn | None = None, deadline: DeadlineFn | None = None) -> Callable[[F], F]:
    """Register a scorer under ``name`` and its aliases, with its options model, an optional ``check``, an
    optional ``inline`` predicate and an optional ``deadline`` (see the module doc)."""

    def register(fn: F) -> F:
        entry = Scorer(name, fn, aliases, check, options, inline, deadline)
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


class SearchedTexts(Sequence[str]):
    """What ``contains`` and ``regex`` search, in order: the answer's text and, for an object or array output,
    the JSON text of the whole output too, key names included (as the original eval-skills does), when it is
    not the answer's. ``fold`` (``str.casefold``, say) is applied to each. The whole output's text is made only
    when a search goes past the answer, so an answer that holds what is looked for costs no encoding of the rest.
    """

    __slots__ = ("_output", "_fold", "_texts", "_whole_done")

    def __init__(self, output: Any, fold: Callable[[str], str] | None = None) -> None:
        self._output = output
        self._fold = fold
        answer = as_text(answer_of(output))
        self._texts = [answer if fold is None else fold(answer)]
        self._whole_done = not isinstance(output, dict | list)

    def _all(self) -> list[str]:
        if not self._whole_done:
            self._whole_done = True
            whole = as_text(self._output)
            if self._fold is not None:
                whole = self._fold(whole)
            if whole != self._texts[0]:
                self._texts.append(whole)
        return self._texts

    def __iter__(self) -> Iterator[str]:
        yield self._texts[0]
        yield from self._all()[1:]

    def __len__(self) -> int:
        return len(self._all())

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> list[str]: ...
    def __getitem__(self, index: int | slice) -> str | list[str]:
        return self._all()[index]

    def __repr__(self) -> str:
        return f"SearchedTexts({self._all()!r})"


def searched_texts(output: Any) -> list[str]:
    """Every text :class:`SearchedTexts` holds for ``output``, as a list."""
    return list(SearchedTexts(output))


def short(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
