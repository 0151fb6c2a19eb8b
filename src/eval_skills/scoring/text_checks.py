"""The checks on the answer's text: ``contains``, ``not_contains``, ``regex`` and ``json_path``."""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Final

from ..errors import InputError
from ..formats.untrusted import NotJSON, loads_untrusted
from .check_base import MISSING, Check, CheckResult, ToolCall, register_check
from .check_base import short as _short
from .check_base import text_value as _text_value
from .check_base import where as _where

if TYPE_CHECKING:
    from jsonpath_ng import JSONPath

__all__ = ["REGEX_TIMEOUT_S", "compile_pattern", "json_equal", "jsonpath", "parse_json_answer", "regex_flags"]


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
def jsonpath(expression: str) -> JSONPath:
    from jsonpath_ng.exceptions import JSONPathError
    from jsonpath_ng.ext.parser import parse

    try:
        return parse(expression)
    except (JSONPathError, ValueError, TypeError, AttributeError, IndexError) as exc:
        raise InputError(f"invalid JSONPath {expression!r}: {exc}") from None


def json_equal(a: Any, b: Any) -> bool:
    """JSON equality: unlike Python's ``==``, ``true`` is not ``1``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a is b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


@register_check("json_path")
def check_json_path(check: Check, text: str, tool_calls: Sequence[ToolCall] | None, data: Any) -> CheckResult:
    expression = _text_value(check)
    path = jsonpath(expression)
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
        if json_equal(found, check.expected):
            return CheckResult(check.kind, expression, True,
                               f"match {index + 1} of {len(matches)} in {source} equals "
                               f"{_short(check.expected)}")
    return CheckResult(check.kind, expression, False,
                       f"{count}, none equals {_short(check.expected)}; first: {_short(matches[0])}")
