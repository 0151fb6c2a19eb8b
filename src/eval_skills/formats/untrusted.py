"""JSON from outside the harness (a skill's reply, a scorer's verdict, a data file), made safe to keep.

Every such text goes through :func:`loads_untrusted`, so the rest of the code can store, score, report
and show any value it returns, one way everywhere:

- bytes are read as UTF-8; bytes that are not UTF-8 become U+FFFD;
- a string holding a lone surrogate (``"\\ud800"``, valid JSON but not encodable as UTF-8) has it
  replaced by U+FFFD, in values and in keys;
- values nested deeper than :data:`MAX_DEPTH` are refused (:class:`UnusableJSON`), never a
  ``RecursionError`` somewhere downstream;
- ``NaN`` and ``Infinity`` are not JSON: refused, unless ``allow_nan`` (a scorer's verdict, which is then
  refused with a better message by its reader).

:class:`NotJSON` (a ``ValueError``) means the text is not JSON at all; :class:`UnusableJSON`, its subclass,
means it is JSON we will not take. Nothing else is ever raised.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["MAX_DEPTH", "NotJSON", "UnusableJSON", "clean_text", "clean_value", "loads_untrusted", "terminal_text"]

MAX_DEPTH = 256  # arrays and objects inside one another; deeper replies are refused
_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


class NotJSON(ValueError):  # noqa: N818 - reads as a sentence: raise NotJSON(...)
    """The text is not JSON."""


class UnusableJSON(NotJSON):
    """The text is JSON, but nested too deeply or holding NaN/Infinity."""


def _refuse_constant(name: str) -> Any:
    raise UnusableJSON(f"{name} is not a JSON number")


_STRICT = json.JSONDecoder(parse_constant=_refuse_constant)
_LAX = json.JSONDecoder()


def clean_text(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD (a no-op, and fast, for normal text)."""
    return _SURROGATE.sub("\ufffd", text) if _SURROGATE.search(text) else text


def _depth_exceeds(value: Any, limit: int) -> bool:
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        if type(item) is dict:
            stack.extend((child, depth + 1) for child in item.values() if type(child) in (dict, list))
        elif type(item) is list:
            stack.extend((child, depth + 1) for child in item if type(child) in (dict, list))
    return False


def clean_value(value: Any) -> Any:
    """``value`` (JSON data: dicts, lists, strings, numbers) with lone surrogates replaced in every string, keys
    included; for data that did not come through :func:`loads_untrusted` (an SDK's parse)."""
    kind = type(value)
    if kind is str:
        return clean_text(value)
    if kind is dict:
        return {clean_text(key) if type(key) is str else key: clean_value(item) for key, item in value.items()}
    if kind in (list, tuple):
        return [clean_value(item) for item in value]
    return value


def loads_untrusted(data: bytes | bytearray | str, *, allow_nan: bool = False, max_depth: int = MAX_DEPTH) -> Any:
    """Parse ``data`` as JSON (see the module doc). Raises only :class:`NotJSON` or :class:`UnusableJSON`.

    ``max_depth`` is for files that hold such values inside a few levels of their own (a report holds a skill's
    output four levels down); values from outside keep the default."""
    try:
        text = data if isinstance(data, str) else bytes(data).decode("utf-8", "replace")
        if text[:1] == "\ufeff":
            text = text[1:]
        try:
            value = (_LAX if allow_nan else _STRICT).decode(text)
        except RecursionError:
            raise UnusableJSON(f"nested deeper than {max_depth} levels") from None
        except UnusableJSON:
            raise
        except json.JSONDecodeError as exc:
            raise NotJSON(f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
        except ValueError as exc:  # an integer too long to convert, and the like: JSON we will not take
            raise UnusableJSON(f"cannot be read as JSON ({str(exc).splitlines()[0][:100]})") from None
        if type(value) in (dict, list) and text.count("[") + text.count("{") > max_depth \
                and _depth_exceeds(value, max_depth):
            raise UnusableJSON(f"nested deeper than {max_depth} levels")
        # decoded bytes hold no surrogates: only escapes (or a str given as such) can bring them in
        if ("\\u" in text and _SURROGATE_ESCAPE.search(text)) or (data is text and _SURROGATE.search(text)):
            value = clean_value(value)
        return value
    except NotJSON:
        raise
    except Exception as exc:  # noqa: BLE001 - untrusted input: whatever goes wrong, it is "not JSON"
        raise NotJSON(f"invalid JSON: {type(exc).__name__}") from None


# what a terminal would act on rather than show: C0/C1 controls (escape sequences, bell, carriage return),
# bidirectional overrides and line/paragraph separators
_UNSHOWN = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def terminal_text(text: str, *, keep_newlines: bool = False) -> str:
    """``text`` as it may reach a terminal: what a skill, scorer or server sent (quoted in an error or a log
    line) can hold escape sequences; each such character is shown as its escape (``\\x1b``), so it is seen,
    never obeyed, and a one-line message stays one line."""
    def escape(match: re.Match[str]) -> str:
        char = match.group()
        if keep_newlines and char == "\n":
            return char
        return f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}"

    return _UNSHOWN.sub(escape, text)
