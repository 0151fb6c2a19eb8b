"""Reading JSON files into pydantic models, with errors that name the file and the field."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, TypeAdapter, ValidationError

from ..errors import InputError
from .untrusted import MAX_DEPTH, NotJSON, UnusableJSON, loads_untrusted

M = TypeVar("M")


def json_path(loc: tuple[int | str, ...] | list[int | str]) -> str:
    """``("tasks", 3, "id")`` -> ``$.tasks[3].id``."""
    out = "$"
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def read_json(path: Path, *, max_depth: int = MAX_DEPTH) -> Any:
    """Parse a JSON file; any failure is an InputError naming the file (and line for syntax errors).

    A UTF-8 byte order mark is accepted; see :func:`.untrusted.loads_untrusted` for what else is refused."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise InputError("file not found", file=str(path)) from None
    except IsADirectoryError:
        raise InputError("is a folder, expected a JSON file", file=str(path)) from None
    except UnicodeDecodeError:
        raise InputError("is not valid UTF-8", file=str(path)) from None
    except OSError as exc:
        raise InputError(f"cannot be read ({exc.strerror})", file=str(path)) from None
    try:
        return loads_untrusted(text, max_depth=max_depth)
    except UnusableJSON as exc:
        raise InputError(str(exc), file=str(path)) from None
    except NotJSON as exc:
        raise InputError(str(exc), file=str(path), hint="fix the JSON syntax") from None


def validation_error(exc: ValidationError, file: str, prefix: tuple[int | str, ...] = ()) -> InputError:
    """Turn the first pydantic error into a one-line InputError (the rest are counted)."""
    errors = exc.errors(include_url=False)
    first = errors[0]
    loc = prefix + tuple(p for p in first["loc"] if not (isinstance(p, str) and p.startswith("function-")))
    msg = first["msg"].removeprefix("Value error, ")
    if first["type"] == "extra_forbidden":
        msg = "unknown field (remove it or check its spelling)"
    elif first["type"] == "missing":
        msg = "required field is missing"
    elif first["type"] in ("model_type", "dict_type"):  # not "a valid dictionary or instance of <Model>"
        msg = "expected a JSON object"
    more = f" (+{len(errors) - 1} more problems)" if len(errors) > 1 else ""
    return InputError(msg + more, file=file, field=json_path(loc))


def validate(model: type[M], data: Any, file: str, prefix: tuple[int | str, ...] = ()) -> M:
    try:
        if isinstance(model, type) and issubclass(model, BaseModel):
            return model.model_validate(data)
        return TypeAdapter(model).validate_python(data)
    except ValidationError as exc:
        raise validation_error(exc, file, prefix) from None


def load_model(model: type[M], path: Path) -> M:
    return validate(model, read_json(path), str(path))
