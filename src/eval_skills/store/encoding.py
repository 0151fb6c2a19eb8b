"""How values become store rows: a skill's output as bounded JSON text, long texts clipped, secret-looking
config values redacted, timestamps; and back."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

__all__ = ["OUTPUT_LIMIT", "TEXT_LIMIT", "TRUNCATED_KEY", "as_float", "clip", "dumps", "encode_output", "loads",
           "now", "redact"]

OUTPUT_LIMIT = 1_000_000  # characters of output JSON kept per result; longer ones keep a head and a marker
TEXT_LIMIT = 100_000  # characters kept of one error or reason
TRUNCATED_KEY = "$truncated"

# config keys whose values are never stored (keys naming an environment variable, like apiKeyEnv, are kept)
_SECRET_KEY = re.compile(r"(apikey|secret|passw|authorization|bearer|credential|privatekey|token$|cookie)")


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


dumps = json.JSONEncoder(ensure_ascii=False, default=str).encode  # json.dumps with these, built once


def encode_output(output: Any) -> str:
    """A skill's output as JSON text for the store: anything goes, and at most about OUTPUT_LIMIT chars.

    Values JSON cannot encode become strings (``default=str``); an output over the limit is stored as
    ``{"$truncated": true, "originalChars": N, "head": "<first OUTPUT_LIMIT chars of its JSON>"}``.
    """
    try:
        text = dumps(output)
    except (TypeError, ValueError):  # circular references, keys that are not strings
        text = dumps(repr(output))
    if len(text) > OUTPUT_LIMIT:
        text = dumps({TRUNCATED_KEY: True, "originalChars": len(text), "head": text[:OUTPUT_LIMIT]})
    return text


def clip(text: str | None) -> str | None:
    if text is None or len(text) <= TEXT_LIMIT:
        return text
    return f"{text[:TEXT_LIMIT]}… [{len(text) - TEXT_LIMIT} more characters not stored]"


def redact(value: Any) -> Any:
    """Config with the values of secret-looking keys replaced: the store never holds a credential."""
    if isinstance(value, Mapping):
        out = {}
        for key, item in value.items():
            norm = re.sub(r"[^a-z]", "", str(key).lower())
            secret = _SECRET_KEY.search(norm) and not norm.endswith(("env", "envvar", "variable"))
            out[str(key)] = "[redacted]" if secret else redact(item)
        return out
    if isinstance(value, list | tuple):
        return [redact(item) for item in value]
    return value


def as_float(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def loads(text: str | None) -> Any:
    return None if text is None else json.loads(text)
