"""Reading JSON files into pydantic models, with errors that name the file and the field."""

from __future__ import annotations

import difflib
import json
import re
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, TypeAdapter, ValidationError

from ..errors import InputError
from .skill_files import read_regular
from .untrusted import MAX_DEPTH, NotJSON, UnusableJSON, loads_untrusted

M = TypeVar("M")
MAX_JSON_BYTES = 256 << 20  # a JSON file larger than this is refused, not read


_PLAIN_KEY = re.compile(r"[^\s.\[\]\"'\\$]+")


def json_path(loc: tuple[int | str, ...] | list[int | str]) -> str:
    """``("tasks", 3, "id")`` -> ``$.tasks[3].id``; a key that is not plain text (a space, a dot, a bracket, a
    quote, a control character: keys are untrusted) is quoted as JSON, ``$["a b"]``, so the path stays one line."""
    out = "$"
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif _PLAIN_KEY.fullmatch(str(part)) and str(part).isprintable():
            out += f".{part}"
        else:
            out += f"[{json.dumps(str(part))}]"
    return out


def read_json(path: Path, *, max_depth: int = MAX_DEPTH) -> Any:
    """Parse a JSON file; any failure is an InputError naming the file (and line for syntax errors).

    A UTF-8 byte order mark is accepted; see :func:`.untrusted.loads_untrusted` for what else is refused."""
    if path.is_dir():
        raise InputError("is a folder, expected a JSON file", file=str(path))
    try:  # a FIFO or a device is refused, never read (reading would wait, or never end)
        text = read_regular(path, limit=MAX_JSON_BYTES).decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InputError("is not valid UTF-8", file=str(path)) from None
    try:
        return loads_untrusted(text, max_depth=max_depth)
    except UnusableJSON as exc:
        raise InputError(str(exc), file=str(path)) from None
    except NotJSON as exc:
        raise InputError(str(exc), file=str(path), hint="fix the JSON syntax") from None


# what a pattern asks for, in words: shown instead of the regular expression
PATTERN_WORDS = {
    r"^[A-Za-z0-9_-]+$": "letters, digits, '-' and '_' only, like my-skill",
    r"^[^\s\x00-\x1f\x7f]{1,64}$": "a version like 1.2.0 (one word, at most 64 characters, no spaces)",
    r"\S": "a name, not blank",
}


def _suggest(name: str, candidates: list[str]) -> str | None:
    """The candidate ``name`` was probably meant to be: a close spelling, or one it is a piece of."""
    close = difflib.get_close_matches(name, candidates, n=1, cutoff=0.6)
    if close:
        return close[0]
    pieces = [c for c in candidates if len(name) >= 3 and (c.lower().startswith(name.lower())
                                                           or name.lower().startswith(c.lower()))]
    return pieces[0] if len(pieces) == 1 else None


def validation_error(exc: ValidationError, file: str, prefix: tuple[int | str, ...] = (),
                     fields: list[str] | None = None) -> InputError:
    """Turn the first pydantic error into a one-line InputError (the rest are counted). An unknown key comes
    first (a misspelt key is also why a required one is "missing"), with the field it probably meant: one of
    ``fields`` (the model's own) or of the required fields missing beside it."""
    errors = exc.errors(include_url=False)
    unknown = [e for e in errors if e["type"] == "extra_forbidden"]
    first = unknown[0] if unknown else errors[0]
    loc = prefix + tuple(p for p in first["loc"] if not (isinstance(p, str) and p.startswith("function-")))
    msg = first["msg"].removeprefix("Value error, ")
    if first["type"] == "extra_forbidden":
        parent, name = tuple(first["loc"][:-1]), str(first["loc"][-1])
        missing = [str(e["loc"][-1]) for e in errors if e["type"] == "missing" and tuple(e["loc"][:-1]) == parent]
        meant = _suggest(name, missing) or (_suggest(name, fields or []) if not parent else None)
        msg = f"unknown field; did you mean {meant!r}?" if meant else "unknown field (remove it or check its spelling)"
    elif first["type"] == "missing":
        msg = "required field is missing"
    elif first["type"] in ("model_type", "dict_type"):  # not "a valid dictionary or instance of <Model>"
        msg = "expected a JSON object"
    elif first["type"] == "string_pattern_mismatch":
        pattern = str((first.get("ctx") or {}).get("pattern", ""))
        msg = f"expected {PATTERN_WORDS.get(pattern, 'another form of text')}, not {first.get('input')!r}"
    more = f" (+{len(errors) - 1} more problems)" if len(errors) > 1 else ""
    return InputError(msg + more, file=file, field=json_path(loc))


_ADAPTERS: dict[Any, TypeAdapter[Any]] = {}


def _adapter(model: Any) -> TypeAdapter[Any]:
    """One validator per type (``list[RoutingQuery]``...), built on its first use: building one costs about
    a millisecond, more than validating a small file with it."""
    adapter = _ADAPTERS.get(model)
    if adapter is None:
        adapter = _ADAPTERS[model] = TypeAdapter(model)
    return adapter


def validate(model: type[M], data: Any, file: str, prefix: tuple[int | str, ...] = ()) -> M:
    fields: list[str] | None = None
    try:
        if isinstance(model, type) and issubclass(model, BaseModel):
            fields = list(model.model_fields)
            return model.model_validate(data)
        return _adapter(model).validate_python(data)
    except ValidationError as exc:
        raise validation_error(exc, file, prefix, fields) from None


def load_model(model: type[M], path: Path) -> M:
    return validate(model, read_json(path), str(path))
