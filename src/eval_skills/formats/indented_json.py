"""``json.dumps(value, indent=2)``, byte for byte, at the speed of the C encoder, or faster.

With ``indent`` set, the standard library falls back to its pure-Python encoder, which dominates the cost
of writing a report of thousands of results. Here, a container none of whose members is a non-empty
container (a result row, a list of numbers) is encoded in one call of the C encoder, its item separator
carrying the newline and the indentation; only the containers above those are walked in Python.

:func:`dumps_indented_utf8` goes further for UTF-8 text (a report file): orjson writes the whole value in one
call, ten times as fast again, and its text is kept where it is what ``json.dumps`` writes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

__all__ = ["dumps_indented", "dumps_indented_utf8"]

_CONTAINERS = (dict, list, tuple)
# orjson writes a float as json.dumps does but where json.dumps writes an exponent of a small number
# ("1e-05"): orjson writes "0.00001" or "1e-5". Text with neither shape holds no float written otherwise.
# (Searched for as two literal-led patterns: a pattern led by a digit class is ten times as slow.)
_NEGATIVE_EXPONENT = re.compile(rb"e-[0-9]")
_SMALL_FIXED = b"0.0000"
_SCALARS = (str, int, float)
_PLAIN_TYPES = frozenset((str, int, float, bool, type(None)))  # the common case of _plain, by a set lookup


def _plain(member: Any) -> bool:
    """Neither a non-empty container nor anything ``default`` would have to turn into JSON."""
    return type(member) in _PLAIN_TYPES or isinstance(member, _SCALARS) or member is None or (
        isinstance(member, _CONTAINERS) and not member)


def _flat(members: Any) -> bool:
    """No member is a non-empty container, nor anything ``default`` would have to turn into JSON."""
    for member in members:  # noqa: SIM110 - a plain loop: all() of a generator costs a frame per member
        if type(member) not in _PLAIN_TYPES and not _plain(member):
            return False
    return True


def _c_encoder(ensure_ascii: bool, default: Callable[[Any], Any] | None,
               item_separator: str) -> Callable[[Any], str]:
    """A function encoding a value in one call of the C encoder (the standard encoder where there is none)."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return json.JSONEncoder(ensure_ascii=ensure_ascii, default=default,
                                separators=(item_separator, ": ")).encode
    strings = json.encoder.encode_basestring_ascii if ensure_ascii else json.encoder.encode_basestring
    encode = make({}, default or _refuse, strings, None, ": ", item_separator, False, False, True)
    return lambda value: "".join(encode(value, 0))


def _refuse(value: Any) -> Any:
    raise TypeError(f"Object of type {value.__class__.__name__} is not JSON serializable")


def dumps_indented(value: Any, *, ensure_ascii: bool = True, default: Callable[[Any], Any] | None = None) -> str:
    """What ``json.dumps(value, indent=2, ensure_ascii=ensure_ascii, default=default)`` returns."""
    encoders: dict[int, Callable[[Any], str]] = {}
    keys: dict[tuple[int, str], str] = {}  # '"name": ' at a depth, for string keys (others are converted)
    out: list[str] = []
    plain_types = _PLAIN_TYPES

    def encoder(depth: int) -> Callable[[Any], str]:
        found = encoders.get(depth)
        if found is None:
            found = encoders[depth] = _c_encoder(ensure_ascii, default, ",\n" + "  " * depth)
        return found

    def key_text(key: Any, depth: int) -> str:
        if type(key) is not str:
            return encoder(depth)({key: None})[1:-5]
        found = keys.get((depth, key))
        if found is None:
            found = keys[depth, key] = encoder(depth)({key: None})[1:-5]
        return found

    def emit(item: Any, depth: int) -> None:
        if isinstance(item, dict):
            if not item:
                out.append("{}")
                return
            inner = "  " * (depth + 1)
            out.append("{\n" + inner)
            if _flat(item.values()):
                out.append(encoder(depth + 1)(item)[1:-1])
            else:
                # runs of plain members in one call each; the containers among them walked
                run: dict[Any, Any] = {}
                first = True
                for key, member in item.items():
                    if type(member) in plain_types or _plain(member):
                        run[key] = member
                        continue
                    if run:
                        out.append(("" if first else ",\n" + inner) + encoder(depth + 1)(run)[1:-1])
                        run, first = {}, False
                    out.append(("" if first else ",\n" + inner) + key_text(key, depth + 1))
                    first = False
                    emit(member, depth + 1)
                if run:
                    out.append(("" if first else ",\n" + inner) + encoder(depth + 1)(run)[1:-1])
            out.append("\n" + "  " * depth + "}")
        elif isinstance(item, list | tuple):
            if not item:
                out.append("[]")
                return
            inner = "  " * (depth + 1)
            out.append("[\n" + inner)
            if _flat(item):
                out.append(encoder(depth + 1)(item)[1:-1])
            else:
                for index, member in enumerate(item):
                    if index:
                        out.append(",\n" + inner)
                    emit(member, depth + 1)
            out.append("\n" + "  " * depth + "]")
        elif default is not None and not isinstance(item, _SCALARS) and item is not None:
            emit(default(item), depth)
        else:
            out.append(encoder(depth)(item))

    emit(value, 0)
    return "".join(out)


class _NotTheSame(TypeError):
    """A value orjson would write otherwise than json.dumps does: the standard library's encoder writes it."""


def dumps_indented_utf8(value: Any, *, default: Callable[[Any], Any] | None = None) -> str:
    """What ``json.dumps(value, indent=2, ensure_ascii=False, default=default)`` returns, but that NaN and the
    infinities (which are not JSON, and which no score or count ever is) are written as ``null``, and a plain
    ``Enum`` member (no result holds one) as its value.

    orjson writes it where it can; what it refuses (keys that are not strings, integers over 64 bits, lone
    surrogates, nesting past 254 levels) or writes otherwise (a float under 0.0001, a subclass of float) is left
    to :func:`dumps_indented`. Dates, dataclasses and other objects go to ``default``, as with ``json.dumps``.
    """
    import orjson  # only when a report is written

    def fallback(item: Any) -> Any:
        if isinstance(item, float):  # a float subclass (numpy's float64): json.dumps writes it as a number
            raise _NotTheSame
        if default is None:
            raise TypeError(f"Object of type {item.__class__.__name__} is not JSON serializable")
        return default(item)

    options = (orjson.OPT_INDENT_2 | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS)
    try:
        data = orjson.dumps(value, default=fallback, option=options)
    except TypeError:  # orjson.JSONEncodeError too, whatever ``default`` raised
        return dumps_indented(value, ensure_ascii=False, default=default)
    if _SMALL_FIXED in data or _NEGATIVE_EXPONENT.search(data):
        return dumps_indented(value, ensure_ascii=False, default=default)
    return data.decode()
