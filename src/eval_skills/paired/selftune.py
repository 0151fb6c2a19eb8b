"""SelfTune's ``selftune_assertions`` as checks of the assertion engine, read the way SelfTune reads them.

Every kind (``contains``, ``not_contains``, ``regex``, ``json_path``, ``tool_called``, ``tool_not_called``, and
the checks on what the agent did: ``tool_sequence``, ``tool_args``, ``tool_count``, ``skill_before``,
``no_tool_errors``, ``file_created``, ``file_contains``) is a check of :mod:`eval_skills.scoring.assertions`,
validated when the evals are loaded. One form is SelfTune's own:
``{"type": "json_path", "value": "key=expected"}`` (no leading ``$``). SelfTune passes it when the answer's JSON
object has ``key`` and ``String(value) === expected``: it compares text, and finds the object in the whole
answer or anywhere in it. :func:`run_key_value` does the same, so a check that passes in SelfTune passes here:

- the JSON is the whole answer, else its first ```json block, else the first JSON object found in its text;
- ``count=3`` passes for ``3`` and for ``"3"``, ``ok=true`` for ``true`` and ``"true"``, ``version=2.0`` for
  ``"2.0"`` and ``2.0``: the value passes when it equals ``expected`` as text, or as JSON.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from ..errors import InputError
from ..scoring.assertions import Check, check_from_mapping, parse_json_answer

__all__ = ["DeterministicCheck", "KeyValue", "run_key_value", "selftune_check"]

_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
SCAN_LIMIT = 200  # "{" positions tried when looking for a JSON object inside text


@dataclass(frozen=True)
class KeyValue:
    """SelfTune's ``json_path`` form ``key=expected``: both as written."""

    key: str
    expected: str


@dataclass(frozen=True)
class DeterministicCheck:
    """A ``selftune_assertions`` entry: the text shown for it, the check the assertion engine runs, and for the
    ``key=expected`` form, how SelfTune reads it (then run by :func:`run_key_value` instead)."""

    text: str
    check: Check
    key_value: KeyValue | None = None


def selftune_check(spec: Any, *, file: str, field: str) -> DeterministicCheck:
    """A ``selftune_assertions`` entry as a check (InputError naming ``file`` and ``field`` when it cannot run).
    The ``json_path`` form ``key=expected`` (a value without a leading ``$`` holding ``=``, no ``expected``) is
    also kept as a JSONPath, ``$.key`` with ``expected`` read as JSON when it parses, so it is validated like
    any other."""
    if not isinstance(spec, dict):
        raise InputError("a selftune assertion must be an object with a type and a value", file=file,
                         field=field)
    spec = dict(spec)
    kind = spec.get("type", spec.get("kind"))
    value = spec.get("value")
    explicit_expected = "expected" in spec
    key_value = None
    if kind == "json_path" and isinstance(value, str) and "=" in value and not value.lstrip().startswith("$") \
            and not explicit_expected:
        key, _, expected = value.partition("=")
        key = key.strip()
        if not key:
            raise InputError(f"json_path {value!r} has no key before '='", file=file, field=field,
                             hint='write "key=expected", or a JSONPath starting with $')
        key_value = KeyValue(key, expected)
        spec["value"] = f"$.{key}" if _PLAIN_KEY.fullmatch(key) else f"$[{json.dumps(key)}]"
        try:
            spec["expected"] = json.loads(expected)
        except ValueError:
            spec["expected"] = expected
    check = check_from_mapping(spec, file=file, field=field)
    description = spec.get("description")
    if isinstance(description, str) and description.strip():
        text = description.strip()
    else:
        shown = check.value if check.options or value is None else value
        text = f"{kind} {json.dumps(shown, ensure_ascii=False)}" if shown is not None else str(kind)
        for key, option in check.options.items():
            text += f" {key} {json.dumps(option, ensure_ascii=False)}"
        if explicit_expected:
            text += f" = {json.dumps(spec['expected'], ensure_ascii=False)}"
        if spec.get("args") is not None:
            text += f" with {json.dumps(spec['args'], ensure_ascii=False)}"
    return DeterministicCheck(text, check, key_value)


def _find_object(text: str) -> tuple[Any, str] | None:
    """The answer's JSON (whole, or its first ```json block), else the first JSON object in its text."""
    try:
        return parse_json_answer(text)
    except ValueError:
        pass
    decoder = json.JSONDecoder()
    start = text.find("{")
    for _ in range(SCAN_LIMIT):
        if start < 0:
            return None
        try:
            found, _end = decoder.raw_decode(text, start)
        except ValueError:
            start = text.find("{", start + 1)
            continue
        if isinstance(found, dict):
            line = text.count("\n", 0, start) + 1
            return found, f"the JSON object at line {line}"
        start = text.find("{", start + 1)
    return None


def _same(found: Any, expected: str) -> bool:
    if isinstance(found, str):
        return found == expected
    if json.dumps(found, ensure_ascii=False) == expected:
        return True
    try:
        wanted = json.loads(expected)
    except ValueError:
        return False
    if isinstance(found, bool) or isinstance(wanted, bool):
        return found is wanted
    return bool(found == wanted)


def _short(value: Any) -> str:
    shown = json.dumps(value, ensure_ascii=False)
    return shown if len(shown) <= 80 else shown[:77] + "..."


def run_key_value(item: KeyValue, text: str) -> tuple[bool, str]:
    """``(passed, evidence)`` of SelfTune's ``key=expected`` on an answer (see the module doc)."""
    located = _find_object(text)
    if located is None:
        return False, "no JSON object in the answer"
    data, where = located
    if not isinstance(data, dict) or item.key not in data:
        return False, f"no key {item.key!r} in {where}"
    found = data[item.key]
    if _same(found, item.expected):
        return True, f"{item.key} is {_short(found)} in {where}"
    return False, f"{item.key} is {_short(found)} in {where}, not {item.expected!r}"
