"""The checks on the agent's tool calls and skills, read from its transcript.

``tool_called`` / ``tool_not_called`` take the run's tool-call events (and search the answer's text when there
are none). The others read a :class:`~.check_base.Trace`; tool names are as the agent records them (``Write`` in
Claude Code, ``write`` in OpenCode, ``command_execution`` in Codex), and wherever a tool is named a list of names
means any of them::

    tool_sequence   value [tool, ...]: calls of these tools in this order (other calls may come between;
                    strict: true, none may)
    tool_args       tool + path (a JSONPath into the call's input) with expected (equal to some match) or not
                    (a match exists), and/or pattern (a regex on the values at path, else on the input as JSON)
    tool_count      tool (optional: every call) called at least min and at most max times
    skill_before    a skill (skill: its name, else any) invoked before tool was first called (the call that
                    invoked the skill counts as at its place); fails when no skill was invoked
    no_tool_errors  at most max (default 0) tool calls (of tool, when given) ended in an error

Evidence names the events it looked at by their number in the transcript (the line of ``transcript.jsonl``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import InputError
from .check_base import (
    MISSING,
    Check,
    CheckResult,
    ToolCall,
    Trace,
    register_check,
    register_trace_check,
)
from .check_base import short as _short
from .check_base import text_value as _text_value
from .check_base import where as _where
from .text_checks import REGEX_TIMEOUT_S, compile_pattern, json_equal, jsonpath, regex_flags

__all__ = ["call_input", "tool_names"]

LISTED = 10  # tool calls named in a failure's evidence


# -- tool_called / tool_not_called ---------------------------------------------------------------------


_TEXT_ONLY = "text search only: the run recorded no tool calls"


def _event_name(event: ToolCall) -> Any:
    return event.get("name", event.get("tool_name", event.get("tool")))


def _event_input(event: ToolCall) -> str:
    raw = event.get("input", event.get("arguments", event.get("args", "")))
    return raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False, sort_keys=True, default=str)


def _find_call(check: Check, text: str, tool_calls: Sequence[ToolCall] | None) -> tuple[bool, str]:
    """Whether the tool was called, and why we think so."""
    name = _text_value(check)
    args = check.args
    if tool_calls is None:
        index = text.find(name)
        if index < 0:
            return False, f"{_TEXT_ONLY}; {name!r} does not appear in the answer"
        if args is not None:
            arg_index = text.find(args)
            if arg_index < 0:
                return False, f"{_TEXT_ONLY}; {name!r} appears but {args!r} does not"
        return True, f"{_TEXT_ONLY}; {name!r} appears at {_where(text, index)}"
    events = [e for e in tool_calls if isinstance(e, Mapping)]
    named = [i for i, e in enumerate(events) if _event_name(e) == name]
    if not named:
        called = sorted({str(_event_name(e)) for e in events})
        more = ", ..." if len(called) > 10 else ""
        listing = f" (called: {', '.join(called[:10])}{more})" if called else ""
        return False, f"not among the {len(events)} recorded tool calls{listing}"
    if args is None:
        return True, f"call {named[0] + 1} of {len(events)}; {len(named)} call(s) to {name!r}"
    for i in named:
        if args in _event_input(events[i]):
            return True, f"call {i + 1} of {len(events)} has input containing {args!r}"
    return False, f"{len(named)} call(s) to {name!r}, none with input containing {args!r}"


@register_check("tool_called")
def check_tool_called(check: Check, text: str, tool_calls: Sequence[ToolCall] | None,
                      data: Any) -> CheckResult:
    called, why = _find_call(check, text, tool_calls)
    return CheckResult(check.kind, check.value, called, why)


@register_check("tool_not_called")
def check_tool_not_called(check: Check, text: str, tool_calls: Sequence[ToolCall] | None,
                          data: Any) -> CheckResult:
    called, why = _find_call(check, text, tool_calls)
    return CheckResult(check.kind, check.value, not called, why)


# -- reading a trace -----------------------------------------------------------------------------------


def tool_names(spec: Any, what: str = "tool") -> tuple[str, ...]:
    """A tool named as a string, or a list of names any of which matches (InputError otherwise)."""
    if isinstance(spec, str) and spec.strip():
        return (spec,)
    if isinstance(spec, list) and spec and all(isinstance(n, str) and n.strip() for n in spec):
        return tuple(spec)
    raise InputError(f"{what} must be a tool name or a non-empty list of names, got {spec!r}")


def _label(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else "|".join(names)


def _calls(trace: Trace) -> Sequence[tuple[int, Mapping[str, Any]]]:
    """The tool calls with their event numbers (from 1)."""
    return trace.calls


def _listing(calls: Sequence[tuple[int, Mapping[str, Any]]]) -> str:
    if not calls:
        return "no tool calls recorded"
    shown = ", ".join(f"{_event_name(e)}@{n}" for n, e in calls[:LISTED])
    more = f", ... ({len(calls)} in all)" if len(calls) > LISTED else ""
    return f"tool calls (name@event): {shown}{more}"


def _events(numbers: Sequence[int]) -> str:
    shown = ", ".join(str(n) for n in numbers[:LISTED])
    return f"event{'s' if len(numbers) != 1 else ''} {shown}{', ...' if len(numbers) > LISTED else ''}"


def call_input(event: Mapping[str, Any]) -> Any:
    """A call's input as JSON data (an input given as JSON text is parsed; other text stays text)."""
    raw = event.get("input", event.get("arguments", event.get("args")))
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except ValueError:
            return raw
    return raw


def _option_int(check: Check, key: str) -> int | None:
    value = check.options.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InputError(f"{check.kind}: {key} must be a whole number of at least 0, got {value!r}")
    return value


# -- tool_sequence -------------------------------------------------------------------------------------


def _validate_sequence(check: Check) -> None:
    steps = check.value
    if not isinstance(steps, list) or not steps:
        raise InputError(f"tool_sequence: value must be a non-empty list of tool names, got {steps!r}")
    for step in steps:
        tool_names(step, "each step of tool_sequence")
    if not isinstance(check.options.get("strict", False), bool):
        raise InputError(f"tool_sequence: strict must be true or false, got {check.options['strict']!r}")


@register_trace_check("tool_sequence", _validate_sequence, primary=("tools",), options=("strict",))
def check_tool_sequence(check: Check, trace: Trace) -> CheckResult:
    steps = [tool_names(s) for s in check.value]
    shown = " -> ".join(_label(s) for s in steps)
    calls = _calls(trace)
    names = [_event_name(e) for _, e in calls]
    if check.options.get("strict", False):
        for start in range(len(calls) - len(steps) + 1):
            if all(names[start + k] in steps[k] for k in range(len(steps))):
                found = [calls[start + k][0] for k in range(len(steps))]
                return CheckResult(check.kind, check.value, True,
                                   f"{shown} with no other call between: {_events(found)}")
    found, at = [], 0
    for step in steps:
        while at < len(calls) and names[at] not in step:
            at += 1
        if at == len(calls):
            break
        found.append(calls[at][0])
        at += 1
    if len(found) == len(steps) and not check.options.get("strict", False):
        return CheckResult(check.kind, check.value, True, f"{shown} in order: {_events(found)}")
    if len(found) == len(steps):
        why = f"in order ({_events(found)}) but with other calls between"
    elif found:
        why = (f"{' -> '.join(_label(s) for s in steps[:len(found)])} at {_events(found)}, then no "
               f"{_label(steps[len(found)])} after it")
    else:
        why = f"no call of {_label(steps[0])}"
    return CheckResult(check.kind, check.value, False, f"{why}; {_listing(calls)}")


# -- tool_args -----------------------------------------------------------------------------------------


def _validate_args(check: Check) -> None:
    tool_names(check.value)
    path, pattern = check.options.get("path"), check.options.get("pattern")
    if path is None and pattern is None:
        raise InputError("tool_args needs path (a JSONPath into the call's input) or pattern (a regex)")
    if path is not None:
        if not isinstance(path, str) or not path:
            raise InputError(f"tool_args: path must be a JSONPath string, got {path!r}")
        jsonpath(path)
    elif check.expected is not MISSING:
        raise InputError("tool_args: expected needs a path (the JSONPath of the value it is compared with)")
    if pattern is not None:
        if check.expected is not MISSING:
            raise InputError("tool_args: give expected (a value) or pattern (a regex), not both")
        if not isinstance(pattern, str) or not pattern:
            raise InputError(f"tool_args: pattern must be a non-empty string, got {pattern!r}")
        compile_pattern(pattern, regex_flags(check.flags))


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def _args_match(check: Check, data: Any) -> tuple[bool, str]:
    """Whether one call's input matches, and what was found."""
    path, pattern = check.options.get("path"), check.options.get("pattern")
    values = [m.value for m in jsonpath(path).find(data)] if path is not None else [data]
    if not values:
        return False, f"no {path}"
    label = path if path is not None else "the input"
    for value in values:
        if pattern is not None:
            text = _as_text(value)
            if compile_pattern(pattern, regex_flags(check.flags)).search(text, timeout=REGEX_TIMEOUT_S):
                return True, f"{label} = {_short(value)} matches {pattern!r}"
        elif check.expected is MISSING or json_equal(value, check.expected):
            return True, f"{label} = {_short(value)}"
    return False, f"{label} = {_short(values[0])}"


@register_trace_check("tool_args", _validate_args, primary=("tool",),
                      options=("path", "expected", "pattern", "flags"))
def check_tool_args(check: Check, trace: Trace) -> CheckResult:
    names = tool_names(check.value)
    calls = _calls(trace)
    named = [(n, e) for n, e in calls if _event_name(e) in names]
    if not named:
        return CheckResult(check.kind, check.value, False, f"no call of {_label(names)}; {_listing(calls)}")
    seen = []
    for number, event in named:
        try:
            matched, what = _args_match(check, call_input(event))
        except TimeoutError:
            matched, what = False, f"matching took longer than {REGEX_TIMEOUT_S:g}s"
        if matched:
            return CheckResult(check.kind, check.value, True, f"event {number} ({_event_name(event)}): {what}")
        seen.append(f"event {number}: {what}")
    wanted = f" equal to {_short(check.expected)}" if check.expected is not MISSING else ""
    return CheckResult(check.kind, check.value, False,
                       f"{len(named)} call(s) of {_label(names)}, none matching{wanted}: {'; '.join(seen[:3])}"
                       + (" ..." if len(seen) > 3 else ""))


# -- tool_count ----------------------------------------------------------------------------------------


def _validate_count(check: Check) -> None:
    if check.value is not None:
        tool_names(check.value)
    low, high = _option_int(check, "min"), _option_int(check, "max")
    if low is None and high is None:
        raise InputError("tool_count needs min, max or both")
    if low is not None and high is not None and low > high:
        raise InputError(f"tool_count: min ({low}) is above max ({high})")


@register_trace_check("tool_count", _validate_count, primary=("tool",), options=("min", "max"))
def check_tool_count(check: Check, trace: Trace) -> CheckResult:
    calls = _calls(trace)
    names = tool_names(check.value) if check.value is not None else None
    named = [n for n, e in calls if names is None or _event_name(e) in names]
    low, high = _option_int(check, "min"), _option_int(check, "max")
    bounds = " and ".join(b for b in (f"at least {low}" if low is not None else "",
                                      f"at most {high}" if high is not None else "") if b)
    what = f"call(s) of {_label(names)}" if names is not None else "tool call(s)"
    where_ = f" ({_events(named)})" if named else ""
    passed = (low is None or len(named) >= low) and (high is None or len(named) <= high)
    return CheckResult(check.kind, check.value, passed, f"{len(named)} {what}{where_}; wanted {bounds}")


# -- skill_before --------------------------------------------------------------------------------------


def _validate_skill_before(check: Check) -> None:
    tool_names(check.value)
    skill = check.options.get("skill")
    if skill is not None and (not isinstance(skill, str) or not skill.strip()):
        raise InputError(f"skill_before: skill must be a skill's name, got {skill!r}")


def _skill_place(trace: Trace, number: int, event: Mapping[str, Any]) -> int:
    """Where a skill was invoked: the call that invoked it (the nearest before it with its id), else the
    skill event itself."""
    call_id = event.get("tool_call_id")
    if call_id:
        for n in range(number - 1, 0, -1):
            other = trace.events[n - 1]
            if isinstance(other, Mapping) and other.get("type", "tool_call") == "tool_call" \
                    and other.get("id") == call_id:
                return n
    return number


@register_trace_check("skill_before", _validate_skill_before, primary=("tool",), options=("skill",))
def check_skill_before(check: Check, trace: Trace) -> CheckResult:
    names = tool_names(check.value)
    wanted = check.options.get("skill")
    skills = [(n, e) for n, e in enumerate(trace.events, 1) if isinstance(e, Mapping) and e.get("type") == "skill"
              and (wanted is None or e.get("skill") == wanted)]
    first = next((n for n, e in _calls(trace) if _event_name(e) in names), None)
    tool = f"first call of {_label(names)} at event {first}" if first else f"{_label(names)} never called"
    if not skills:
        which = f"the skill {wanted!r} was never invoked" if wanted else "no skill was invoked"
        return CheckResult(check.kind, check.value, False, f"{which}; {tool}")
    number, event = skills[0]
    place = _skill_place(trace, number, event)
    how = f" (invoked by event {place})" if place != number else ""
    said = f"skill {event.get('skill')!r} at event {number}{how}; {tool}"
    return CheckResult(check.kind, check.value, first is None or first >= place, said)


# -- no_tool_errors ------------------------------------------------------------------------------------


def _validate_no_errors(check: Check) -> None:
    if check.value is not None:
        tool_names(check.value)
    _option_int(check, "max")


@register_trace_check("no_tool_errors", _validate_no_errors, primary=("tool",), options=("max",))
def check_no_tool_errors(check: Check, trace: Trace) -> CheckResult:
    names = tool_names(check.value) if check.value is not None else None
    calls = [(n, e) for n, e in _calls(trace) if names is None or _event_name(e) in names]
    failed = [(n, e) for n, e in calls if e.get("is_error") is True]
    most = _option_int(check, "max") or 0
    what = f"call(s) of {_label(names)}" if names is not None else "tool call(s)"
    if not failed:
        return CheckResult(check.kind, check.value, True, f"none of {len(calls)} {what} ended in an error")
    listed = "; ".join(f"event {n} ({_event_name(e)}): {_short(_as_text(e.get('result') or ''), 60)}"
                       for n, e in failed[:3]) + (" ..." if len(failed) > 3 else "")
    return CheckResult(check.kind, check.value, len(failed) <= most,
                       f"{len(failed)} of {len(calls)} {what} ended in an error (at most {most} allowed): {listed}")
