"""Reading a data set file: JSON Lines, or one JSON array."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import InputError

__all__ = ["read_records"]


def read_records(path: Path) -> list[tuple[str, dict[str, Any]]]:
    """``[(where, record)]`` from a JSON Lines file or a file holding one JSON array of objects; ``where`` is
    ``line N`` or ``$[N]`` for error messages. InputError naming the file and the line otherwise."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError("file not found", file=str(path)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot be read ({exc})", file=str(path)) from None
    if text.lstrip().startswith("["):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"invalid JSON at line {exc.lineno}: {exc.msg}", file=str(path)) from None
        records = [(f"$[{i}]", item) for i, item in enumerate(data)]
    else:
        records = []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                records.append((f"line {number}", json.loads(line)))
            except json.JSONDecodeError as exc:
                raise InputError(f"invalid JSON: {exc.msg}", file=str(path), field=f"line {number}") from None
    for where, item in records:
        if not isinstance(item, dict):
            raise InputError("expected a JSON object", file=str(path), field=where)
    if not records:
        raise InputError("holds no records", file=str(path))
    return records
