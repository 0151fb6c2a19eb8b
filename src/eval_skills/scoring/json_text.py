"""The text of a value as scorers compare and search it: strings as they are, anything else as compact JSON
written the way JavaScript writes it (``JSON.stringify``), which is how the original eval-skills compared.

A JSON number has one value however it is written, so numbers are written the shortest way: ``25.0`` (which a
Python skill's ``json.dumps(100 / 4)`` sends) is ``25``, ``1e2`` is ``100``, ``1.5e-07`` is ``1.5e-7``,
``0.00001`` stays ``0.00001`` and ``-0.0`` is ``0``. Integers keep every digit (JavaScript would round those
past 2**53). ``null`` is ``null``.
"""

from __future__ import annotations

import json
import re
from decimal import Decimal
from typing import Any

__all__ = ["as_text", "js_number"]

# a number in JSON text that Python writes unlike JavaScript (``25.0``, ``1e-05``): may also match inside a
# string, which costs only the slower, exact path
_FLOAT_LIKE = re.compile(r"[0-9](?:\.[0-9]|[eE][-+]?[0-9])")
_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode  # json.dumps with these, built once


def js_number(value: float) -> str:
    """A float as JavaScript's ``String(x)`` writes it (ECMAScript Number::toString, shortest digits)."""
    if value == 0:
        return "0"
    if value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    sign, digits, exponent = Decimal(repr(value)).as_tuple()
    text = "".join(map(str, digits)).rstrip("0")
    exponent = int(exponent) + len(digits) - len(text)  # value = 0.d1d2... x 10**point
    point = len(text) + exponent
    if len(text) <= point <= 21:
        body = text + "0" * (point - len(text))
    elif 0 < point <= 21:
        body = text[:point] + "." + text[point:]
    elif -6 < point <= 0:
        body = "0." + "0" * -point + text
    else:
        power = point - 1
        body = text[0] + ("." + text[1:] if len(text) > 1 else "") + ("e+" if power > 0 else "e-") + str(abs(power))
    return ("-" if sign else "") + body


class _Tiny(Exception):  # noqa: N818 - a signal, not an error: a float Python writes unlike JavaScript
    pass


def _integral_floats(value: Any) -> Any:
    """``value`` with every integral float an int (``25.0`` -> ``25``), which JSON then writes as JavaScript
    does; _Tiny for a float below 1e-4, the only others Python writes otherwise (``1e-05``, ``1.5e-07``)."""
    if type(value) is float:
        if value.is_integer() and abs(value) < 1e21:
            return int(value)
        if abs(value) < 1e-4:
            raise _Tiny
        return value
    if isinstance(value, dict):
        return {k: _integral_floats(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_integral_floats(v) for v in value]
    return value


def _js_json(value: Any) -> str:
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, float):
        return js_number(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, dict):
        return "{" + ",".join(f"{json.dumps(str(k), ensure_ascii=False)}:{_js_json(v)}" for k, v in value.items()) + "}"
    return "[" + ",".join(_js_json(v) for v in value) + "]"


def as_text(value: Any) -> str:
    """A value as the text a user would compare: strings as they are, other values as compact JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, float):
        return js_number(value)
    text = _COMPACT(value)
    if isinstance(value, dict | list | tuple) and _FLOAT_LIKE.search(text):
        try:
            return _COMPACT(_integral_floats(value))
        except _Tiny:
            return _js_json(value)
    return text
