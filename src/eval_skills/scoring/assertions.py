"""Deterministic assertions: pure functions of an answer and an expectation.

Every kind of evaluation (fixture checks, paired runs, tool skills) runs its deterministic checks here,
and every check gives the same record, :class:`CheckResult` (``kind``, ``value``, ``passed``, ``evidence``).

Kinds (``CHECKS``), with the names tasks.json uses as aliases (``ALIASES``)::

    contains          value is a substring of the answer (case-sensitive)   alias: must_include
    not_contains      value is not a substring of the answer                alias: must_not_include
    regex             value is found in the answer (the ``regex`` package, re-compatible, with a time
                      limit of REGEX_TIMEOUT_S); flags: "imsxa" letters, names, or their ``re`` integer
    json_path         the JSONPath ``value`` matches in the answer's JSON (or ``data``); with
                      ``expected``, some match equals it, else at least one match exists
    tool_called       a recorded tool call has name ``value`` (and input containing ``args``)
    tool_not_called   no recorded tool call does

``tool_called`` / ``tool_not_called`` look in the run's tool-call events. When the run recorded none
(``tool_calls=None``) they fall back to searching the answer text, and the evidence says so.

The checks on what the agent did (``TRACE_CHECKS``: ``tool_sequence``, ``tool_args``, ``tool_count``,
``skill_before``, ``no_tool_errors`` in :mod:`.tool_checks`; ``file_created``, ``file_contains`` in
:mod:`.file_checks`) read a :class:`Trace`, the run's transcript and the files the agent made; without one they
fail, saying so.

A bad check (unknown kind, invalid regex or JSONPath, missing value, unknown field) is an :class:`InputError`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..errors import InputError
from . import file_checks, tool_checks  # noqa: F401 - imported for their registrations
from .check_base import (
    ALIASES,
    CHECKS,
    MISSING,
    TRACE_CHECKS,
    AgentFile,
    Check,
    CheckFunction,
    CheckResult,
    ToolCall,
    Trace,
    register_check,
)
from .check_base import text_value as _text_value
from .text_checks import compile_pattern, jsonpath, parse_json_answer, regex_flags

__all__ = [
    "ALIASES",
    "CHECKS",
    "MISSING",
    "TRACE_CHECKS",
    "TRANSCRIPT_KINDS",
    "AgentFile",
    "Check",
    "CheckFunction",
    "CheckResult",
    "ToolCall",
    "Trace",
    "check_from_mapping",
    "compile_pattern",
    "only_forbids",
    "parse_json_answer",
    "regex_flags",
    "register_check",
    "run_check",
    "run_checks",
    "validate_check",
]

TRANSCRIPT_KINDS: frozenset[str] = frozenset({"tool_called", "tool_not_called", *TRACE_CHECKS})
"""The kinds that read what the agent did rather than its answer."""

COMMON_FIELDS = frozenset({"type", "kind", "value", "description"})
NO_TRANSCRIPT = "the run recorded no transcript: this check reads what the agent did"


def _function(kind: str) -> CheckFunction:
    fn = CHECKS.get(ALIASES.get(kind, kind))
    if fn is None:
        known = ", ".join(sorted([*CHECKS, *TRACE_CHECKS, *ALIASES]))
        raise InputError(f"unknown check kind {kind!r}", hint=f"use one of: {known}")
    return fn


def _calls_of(trace: Trace) -> list[ToolCall]:
    return [e for _, e in trace.calls]


def run_check(check: Check, text: str, tool_calls: Sequence[ToolCall] | None = None, *,
              data: Any = MISSING, trace: Trace | None = None) -> CheckResult:
    """Run one check on an answer's ``text`` (and its recorded ``tool_calls``, or ``data`` for json_path, or
    the ``trace`` of what the agent did: its tool calls are taken from it when ``tool_calls`` is None)."""
    found = TRACE_CHECKS.get(check.kind)
    if found is not None:
        if trace is None and tool_calls is not None:
            trace = Trace(events=tuple(tool_calls))
        if trace is None:
            return CheckResult(check.kind, check.value, False, NO_TRANSCRIPT)
        return found.run(check, trace)
    if tool_calls is None and trace is not None and ALIASES.get(check.kind, check.kind) in TRANSCRIPT_KINDS:
        tool_calls = _calls_of(trace)
    return _function(check.kind)(check, text, tool_calls, data)


def run_checks(checks: Iterable[Check], text: str, tool_calls: Sequence[ToolCall] | None = None, *,
               data: Any = MISSING, trace: Trace | None = None) -> list[CheckResult]:
    return [run_check(c, text, tool_calls, data=data, trace=trace) for c in checks]


def only_forbids(check: Check) -> bool:
    """Whether ``check`` only forbids something the agent might do (so an agent doing nothing passes it by
    design): ``tool_not_called``, ``no_tool_errors``, a ``tool_count`` with a ``max`` and no ``min`` above 0."""
    if check.kind in ("tool_not_called", "no_tool_errors"):
        return True
    return check.kind == "tool_count" and check.options.get("max") is not None and not check.options.get("min")


def validate_check(check: Check, *, file: str | None = None, field: str | None = None) -> None:
    """Raise InputError (naming ``file`` and ``field``) if ``check`` cannot run: use it when loading."""
    try:
        kind = ALIASES.get(check.kind, check.kind)
        if kind in TRACE_CHECKS:
            TRACE_CHECKS[kind].validate(check)
            return
        _function(check.kind)
        if kind == "regex":
            compile_pattern(_text_value(check), regex_flags(check.flags))
        elif kind == "json_path":
            jsonpath(_text_value(check))
        else:
            _text_value(check)
            if check.args is not None and not isinstance(check.args, str):
                raise InputError(f"{check.kind}: args must be a string")
    except InputError as exc:
        raise InputError(exc.problem, file=file or exc.file, field=field or exc.field,
                         hint=exc.hint) from None


def _trace_check(kind: str, spec: Mapping[str, Any], file: str | None, field: str | None) -> Check:
    known = TRACE_CHECKS[kind]
    allowed = COMMON_FIELDS | set(known.primary) | set(known.options)
    for key in spec:
        if key not in allowed:
            takes = ", ".join(sorted(allowed - {"type", "kind"}))
            raise InputError(f"{kind} has no field {key!r}", file=file,
                             field=f"{field}.{key}" if field else key, hint=f"it takes: {takes}")
    given = [k for k in ("value", *known.primary) if k in spec]
    if len(given) > 1:
        raise InputError(f"{kind}: give {' or '.join(given)}, not both", file=file, field=field)
    options = {k: spec[k] for k in known.options if k in spec and k not in ("expected", "flags")}
    return Check(kind=kind, value=spec[given[0]] if given else None, flags=spec.get("flags"),
                 expected=spec.get("expected", MISSING), options=options)


def check_from_mapping(spec: Mapping[str, Any], *, file: str | None = None,
                       field: str | None = None) -> Check:
    """Build a Check from a JSON object: ``{"type"|"kind", "value"|"pattern"|"path"|"tool", ...}`` (the
    checks on what the agent did take the fields their module lists, and refuse others)."""
    kind = spec.get("kind", spec.get("type"))
    if not isinstance(kind, str):
        raise InputError("an assertion needs a \"type\" (or \"kind\") string", file=file, field=field)
    if kind in TRACE_CHECKS:
        check = _trace_check(kind, spec, file, field)
    else:
        value = spec.get("value", MISSING)
        for alt in ("pattern", "path", "tool", "name"):
            if value is MISSING and alt in spec:
                value = spec[alt]
        check = Check(kind=kind, value=None if value is MISSING else value, flags=spec.get("flags"),
                      expected=spec.get("expected", MISSING), args=spec.get("args"))
    validate_check(check, file=file, field=field)
    return check
