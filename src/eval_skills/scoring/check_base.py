"""The records and the registry of the assertion engine (:mod:`eval_skills.scoring.assertions` runs them).

A check is a :class:`Check`; its result a :class:`CheckResult`. Two kinds of check function are registered:

- on the answer (``register_check``): ``fn(check, text, tool_calls, data)``, the text kinds and
  ``tool_called`` / ``tool_not_called`` (which fall back to the text when no tool calls were recorded);
- on what the agent did (``register_trace_check``): ``fn(check, trace)``, where a :class:`Trace` holds the run's
  transcript events in order and the files the agent created or changed. Each has a validator
  (``fn(check)``, raising InputError) run when the checks are loaded.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from ..errors import InputError

__all__ = [
    "ALIASES",
    "CHECKS",
    "MISSING",
    "TRACE_CHECKS",
    "AgentFile",
    "Check",
    "CheckFunction",
    "CheckResult",
    "ToolCall",
    "Trace",
    "TraceCheckFunction",
    "TraceKind",
    "register_check",
    "register_trace_check",
    "short",
    "text_value",
    "where",
]


class _Missing:
    """The absence of a value (``None`` is a value a JSONPath match can be expected to equal)."""

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False


MISSING: Final = _Missing()

ToolCall = Mapping[str, Any]
"""A tool-call event: at least ``name``; ``input`` (or ``arguments``/``args``) may hold its arguments."""



@dataclass(frozen=True, slots=True)
class Check:
    """What to check. ``kind`` is kept as written (``must_include`` stays ``must_include`` in results).
    ``options`` hold the further fields of the checks on what the agent did (``strict``, ``min``, ``max``,
    ``skill``, ``path``, ``pattern``, ``text``, ``tool``)."""

    kind: str
    value: Any
    flags: str | Sequence[str] | int | None = None  # regex, and the patterns of tool_args / file_contains
    expected: Any = MISSING  # json_path / tool_args: MISSING means "a match exists"
    args: str | None = None  # tool_called / tool_not_called: substring of the call's input
    options: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class CheckResult:
    kind: str
    value: Any
    passed: bool
    evidence: str

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "value": self.value, "passed": self.passed, "evidence": self.evidence}


CheckFunction = Callable[[Check, str, "Sequence[ToolCall] | None", Any], CheckResult]
"""``fn(check, text, tool_calls, data) -> CheckResult``; ``data`` is a parsed JSON answer or MISSING."""


@dataclass(frozen=True, slots=True)
class AgentFile:
    """A file the agent created or changed: its path relative to the run's folder, ``created`` or ``modified``,
    and its bytes as saved with the run (None when they were not kept: too large, or unreadable)."""

    path: str
    kind: str
    data: bytes | None = None


@dataclass(frozen=True, slots=True)
class Trace:
    """What the agent did: its transcript events in order (``type`` ``tool_call``, ``skill``, ``message``, ...;
    numbered from 1 in evidence, as the lines of ``transcript.jsonl``) and the files it created or changed
    (None when the run recorded none, as opposed to an empty list: it made none)."""

    events: Sequence[Mapping[str, Any]] = ()
    files: Sequence[AgentFile] | None = None
    calls: tuple[tuple[int, Mapping[str, Any]], ...] = field(init=False, repr=False, compare=False)
    """The tool calls with their event numbers, found once."""

    def __post_init__(self) -> None:
        calls = tuple((n, e) for n, e in enumerate(self.events, 1) if isinstance(e, Mapping) and
                      (e.get("type") == "tool_call" or ("type" not in e and "name" in e)))
        object.__setattr__(self, "calls", calls)


TraceCheckFunction = Callable[[Check, Trace], CheckResult]
"""``fn(check, trace) -> CheckResult``."""

CHECKS: dict[str, CheckFunction] = {}
ALIASES: dict[str, str] = {"must_include": "contains", "must_not_include": "not_contains"}


def register_check(kind: str) -> Callable[[CheckFunction], CheckFunction]:
    """Register ``fn`` as the check for ``kind`` (a decorator)."""

    def decorate(fn: CheckFunction) -> CheckFunction:
        CHECKS[kind] = fn
        return fn

    return decorate



@dataclass(frozen=True, slots=True)
class TraceKind:
    """A registered check on a trace: its function, its load-time validator (``fn(check)``, InputError), the
    fields that may give its ``value`` (beside ``value`` itself) and the further fields it takes."""

    run: TraceCheckFunction
    validate: Callable[[Check], None]
    primary: tuple[str, ...] = ()
    options: tuple[str, ...] = ()


TRACE_CHECKS: dict[str, TraceKind] = {}


def register_trace_check(kind: str, validate: Callable[[Check], None], *, primary: tuple[str, ...] = (),
                         options: tuple[str, ...] = ()) -> Callable[[TraceCheckFunction], TraceCheckFunction]:
    """Register ``fn`` as the check for ``kind`` on a :class:`Trace` (a decorator); see :class:`TraceKind`."""

    def decorate(fn: TraceCheckFunction) -> TraceCheckFunction:
        TRACE_CHECKS[kind] = TraceKind(fn, validate, primary, options)
        return fn

    return decorate


# -- helpers -------------------------------------------------------------------------------------------


def text_value(check: Check) -> str:
    value = check.value
    if not isinstance(value, str) or not value:
        raise InputError(f"{check.kind}: value must be a non-empty string, got {value!r}")
    return value


def where(text: str, index: int) -> str:
    line = text.count("\n", 0, index) + 1
    column = index - (text.rfind("\n", 0, index) + 1) + 1
    return f"line {line}, column {column}"


def short(value: Any, limit: int = 80) -> str:
    shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    shown = repr(shown) if isinstance(value, str) else shown
    return shown if len(shown) <= limit else shown[: limit - 3] + "..."

