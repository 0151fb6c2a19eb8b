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

A bad check (unknown kind, invalid regex or JSONPath, missing value) is an :class:`InputError`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Final

from ..errors import InputError
from ..formats.untrusted import NotJSON, loads_untrusted

if TYPE_CHECKING:
    from jsonpath_ng import JSONPath

__all__ = [
    "ALIASES",
    "CHECKS",
    "MISSING",
    "Check",
    "CheckFunction",
    "CheckResult",
    "ToolCall",
    "check_from_mapping",
    "compile_pattern",
    "parse_json_answer",
    "regex_flags",
    "register_check",
    "run_check",
    "run_checks",
    "validate_check",
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
    """What to check. ``kind`` is kept as written (``must_include`` stays ``must_include`` in results)."""

    kind: str
    value: Any
    flags: str | Sequence[str] | int | None = None  # regex
    expected: Any = MISSING  # json_path: MISSING means "a match exists"
    args: str | None = None  # tool_called / tool_not_called: substring of the call's input


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

CHECKS: dict[str, CheckFunction] = {}
ALIASES: dict[str, str] = {"must_include": "contains", "must_not_include": "not_contains"}


def register_check(kind: str) -> Callable[[CheckFunction], CheckFunction]:
    """Register ``fn`` as the check for ``kind`` (a decorator)."""

    def decorate(fn: CheckFunction) -> CheckFunction:
        CHECKS[kind] = fn
        return fn

    return decorate


def _function(kind: str) -> CheckFunction:
    fn = CHECKS.get(ALIASES.get(kind, kind))
    if fn is None:
        known = ", ".join(sorted(CHECKS) + sorted(ALIASES))
        raise InputError(f"unknown check kind {kind!r}", hint=f"use one of: {known}")
    return fn


def run_check(check: Check, text: str, tool_calls: Sequence[ToolCall] | None = None, *,
              data: Any = MISSING) -> CheckResult:
    """Run one check on an answer's ``text`` (and its recorded ``tool_calls``, or ``data`` for json_path)."""
    return _function(check.kind)(check, text, tool_calls, data)


def run_checks(checks: Iterable[Check], text: str, tool_calls: Sequence[ToolCall] | None = None, *,
               data: Any = MISSING) -> list[CheckResult]:
    return [_function(c.kind)(c, text, tool_calls, data) for c in checks]


def validate_check(check: Check, *, file: str | None = None, field: str | None = None) -> None:
    """Raise InputError (naming ``file`` and ``field``) if ``check`` cannot run: use it when loading."""
    try:
        _function(check.kind)
        kind = ALIASES.get(check.kind, check.kind)
        if kind == "regex":
            compile_pattern(_text_value(check), regex_flags(check.flags))
        elif kind == "json_path":
            _jsonpath(_text_value(check))
        else:
            _text_value(check)
            if check.args is not None and not isinstance(check.args, str):
                raise InputError(f"{check.kind}: args must be a string")
    except InputError as exc:
        raise InputError(exc.problem, file=file or exc.file, field=field or exc.field,
                         hint=exc.hint) from None


def check_from_mapping(spec: Mapping[str, Any], *, file: str | None = None,
                       field: str | None = None) -> Check:
    """Build a Check from a JSON object: ``{"type"|"kind", "value"|"pattern"|"path"|"tool", ...}``."""
    kind = spec.get("kind", spec.get("type"))
    if not isinstance(kind, str):
        raise InputError("an assertion needs a \"type\" (or \"kind\") string", file=file, field=field)
    value = spec.get("value", MISSING)
    for alt in ("pattern", "path", "tool", "name"):
        if value is MISSING and alt in spec:
            value = spec[alt]
    check = Check(kind=kind, value=None if value is MISSING else value, flags=spec.get("flags"),
                  expected=spec.get("expected", MISSING), args=spec.get("args"))
    validate_check(check, file=file, field=field)
    return check


# -- helpers -------------------------------------------------------------------------------------------


def _text_value(check: Check) -> str:
    value = check.value
    if not isinstance(value, str) or not value:
        raise InputError(f"{check.kind}: value must be a non-empty string, got {value!r}")
    return value


def _where(text: str, index: int) -> str:
    line = text.count("\n", 0, index) + 1
    column = index - (text.rfind("\n", 0, index) + 1) + 1
    return f"line {line}, column {column}"


def _short(value: Any, limit: int = 80) -> str:
    shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    shown = repr(shown) if isinstance(value, str) else shown
    return shown if len(shown) <= limit else shown[: limit - 3] + "..."


# -- contains / not_contains ------------------------------------------------------------------------------


@register_check("contains")
def check_contains(check: Check, text: str, tool_calls: Sequence[ToolCall] | None, data: Any) -> CheckResult:
    value = _text_value(check)
    index = text.find(value)
    if index >= 0:
        return CheckResult(check.kind, value, True, f"found at {_where(text, index)}")
    return CheckResult(check.kind, value, False, "not found" + _case_hint(text, value))


@register_check("not_contains")
def check_not_contains(check: Check, text: str, tool_calls: Sequence[ToolCall] | None,
                       data: Any) -> CheckResult:
    value = _text_value(check)
    index = text.find(value)
    if index >= 0:
        return CheckResult(check.kind, value, False, f"found at {_where(text, index)}")
    return CheckResult(check.kind, value, True, "absent")


def _case_hint(text: str, value: str) -> str:
    index = text.lower().find(value.lower())
    if index >= 0:
        return f" (matching is case-sensitive; a different case is at {_where(text, index)})"
    return f" in the answer ({len(text)} characters)" if text else " (the answer is empty)"


# -- regex ---------------------------------------------------------------------------------------------

_FLAG_NAMES: Final[dict[str, re.RegexFlag]] = {
    "IGNORECASE": re.IGNORECASE, "I": re.IGNORECASE,
    "MULTILINE": re.MULTILINE, "M": re.MULTILINE,
    "DOTALL": re.DOTALL, "S": re.DOTALL,
    "VERBOSE": re.VERBOSE, "X": re.VERBOSE,
    "ASCII": re.ASCII, "A": re.ASCII,
}


_ALLOWED_FLAGS = re.IGNORECASE | re.MULTILINE | re.DOTALL | re.VERBOSE | re.ASCII
REGEX_TIMEOUT_S = 5.0  # matching one pattern against one answer


def regex_flags(spec: str | Sequence[str] | int | None) -> int:
    """``"im"``, ``"IGNORECASE|MULTILINE"``, ``["i", "DOTALL"]`` or an int of those ``re`` flags -> ``re`` flags.

    Only IGNORECASE, MULTILINE, DOTALL, VERBOSE and ASCII exist here (``128``, ``re.DEBUG``, is refused).
    """
    if spec is None:
        return 0
    if isinstance(spec, bool):
        raise InputError(f"regex flags must be letters or flag names, got {spec!r}")
    if isinstance(spec, int):
        if spec < 0 or spec & ~_ALLOWED_FLAGS:
            raise InputError(f"regex flags {spec} hold flags other than IGNORECASE (2), MULTILINE (8), DOTALL (16), "
                             "VERBOSE (64) and ASCII (256)", hint="or give letters such as \"im\"")
        return spec
    tokens = re.split(r"[|,\s]+", spec) if isinstance(spec, str) else list(spec)
    flags = 0
    for token in tokens:
        if not isinstance(token, str):
            raise InputError(f"regex flags must be letters or flag names, got {token!r}")
        name = token.strip().upper().removeprefix("RE.")
        if not name:
            continue
        if name in _FLAG_NAMES:
            flags |= _FLAG_NAMES[name]
        elif all(letter in _FLAG_NAMES for letter in name):
            for letter in name:
                flags |= _FLAG_NAMES[letter]
        else:
            raise InputError(f"unknown regex flag {token!r}",
                             hint="use letters i, m, s, x, a or names like IGNORECASE, DOTALL")
    return flags


@lru_cache(maxsize=1024)
def compile_pattern(pattern: str, flags: int = 0) -> Any:
    """``pattern`` compiled by the ``regex`` package (whose ``search`` takes a ``timeout``), with ``re``
    ``flags``; InputError if it is not a valid pattern."""
    import regex

    native = regex.VERSION0
    for ours, theirs in ((re.IGNORECASE, regex.IGNORECASE), (re.MULTILINE, regex.MULTILINE),
                         (re.DOTALL, regex.DOTALL), (re.VERBOSE, regex.VERBOSE), (re.ASCII, regex.ASCII)):
        if flags & ours:
            native |= theirs
    try:
        return regex.compile(pattern, native)
    except Exception as exc:  # noqa: BLE001 - regex.error, and overflows of odd repeat counts
        raise InputError(f"invalid regular expression {pattern!r}: {exc}") from None


@register_check("regex")
def check_regex(check: Check, text: str, tool_calls: Sequence[ToolCall] | None, data: Any) -> CheckResult:
    pattern = _text_value(check)
    try:
        match = compile_pattern(pattern, regex_flags(check.flags)).search(text, timeout=REGEX_TIMEOUT_S)
    except TimeoutError:
        return CheckResult(check.kind, pattern, False, f"matching took longer than {REGEX_TIMEOUT_S:g}s "
                                                       "(the pattern backtracks too much on this answer)")
    if match is None:
        return CheckResult(check.kind, pattern, False, f"no match in the answer ({len(text)} characters)")
    return CheckResult(check.kind, pattern, True,
                       f"matched {_short(match.group(0))} at {_where(text, match.start())}")


# -- json_path -----------------------------------------------------------------------------------------

_FENCED_JSON = re.compile(r"```[ \t]*json[^\n]*\n(.*?)```", re.DOTALL | re.IGNORECASE)


def parse_json_answer(text: str) -> tuple[Any, str]:
    """The answer as JSON, else its first fenced ```json block. Returns ``(data, where)``.

    Raises ValueError (with the reason) when neither is JSON.
    """
    try:
        return loads_untrusted(text), "the answer"
    except NotJSON as exc:
        whole_error = str(exc).removeprefix("invalid JSON at ")
    block = _FENCED_JSON.search(text)
    if block is None:
        raise ValueError(f"the answer is not JSON ({whole_error}) and has no ```json block")
    try:
        return loads_untrusted(block.group(1)), f"the ```json block at {_where(text, block.start())}"
    except NotJSON as exc:
        raise ValueError(f"the first ```json block (at {_where(text, block.start())}) is not JSON: "
                         f"{str(exc).removeprefix('invalid JSON at ')}") from None


@lru_cache(maxsize=512)
def _jsonpath(expression: str) -> JSONPath:
    from jsonpath_ng.exceptions import JSONPathError
    from jsonpath_ng.ext.parser import parse

    try:
        return parse(expression)
    except (JSONPathError, ValueError, TypeError, AttributeError, IndexError) as exc:
        raise InputError(f"invalid JSONPath {expression!r}: {exc}") from None


def _json_equal(a: Any, b: Any) -> bool:
    """JSON equality: unlike Python's ``==``, ``true`` is not ``1``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a is b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


@register_check("json_path")
def check_json_path(check: Check, text: str, tool_calls: Sequence[ToolCall] | None, data: Any) -> CheckResult:
    expression = _text_value(check)
    path = _jsonpath(expression)
    if data is MISSING:
        try:
            data, source = parse_json_answer(text)
        except ValueError as exc:
            return CheckResult(check.kind, expression, False, str(exc))
    else:
        source = "the given data"
    matches = [m.value for m in path.find(data)]
    if not matches:
        return CheckResult(check.kind, expression, False, f"no match in {source}")
    count = f"{len(matches)} match{'es' if len(matches) != 1 else ''} in {source}"
    if check.expected is MISSING:
        return CheckResult(check.kind, expression, True, f"{count}; first: {_short(matches[0])}")
    for index, found in enumerate(matches):
        if _json_equal(found, check.expected):
            return CheckResult(check.kind, expression, True,
                               f"match {index + 1} of {len(matches)} in {source} equals "
                               f"{_short(check.expected)}")
    return CheckResult(check.kind, expression, False,
                       f"{count}, none equals {_short(check.expected)}; first: {_short(matches[0])}")


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
