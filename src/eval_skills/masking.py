"""Known secret values taken out of every untrusted text before it is kept, shown or sent on.

The rule, one way everywhere (agents' responses, errors, transcripts and saved stdout, the files an agent
writes, what a judge is sent, what an endpoint quotes back, the review page):

- **what is a secret**: the value of every environment variable whose name says it holds one (``KEY``,
  ``TOKEN``, ``SECRET``, ``PASSWORD``, ``PASSWD``, ``CREDENTIAL``, ``AUTH`` anywhere in the name, any case), and
  the credentials inside any variable's value that is a URL (``postgres://user:pass@host``: ``user:pass`` and,
  when long enough, ``pass``), whatever the variable is called; plus the keys a judge or endpoint is given.
  Values shorter than :data:`SECRET_MIN` characters are not looked for (they would blank ordinary text);
- **in what forms**: as written, and as it appears inside a JSON string (``"`` and ``\\`` escaped, control
  characters and non-ASCII as ``\\uXXXX``, ``/`` as ``\\/``), so a transcript line or a saved stdout holding it
  JSON-escaped is masked too;
- **replaced by** :data:`MASK` (``***``; tool-skill adapters say ``[redacted]``), longest secret first, so a
  secret holding another is masked whole;
- **before cutting**: a text is masked whole, then cut (:func:`cut`), and a cut edge that ends inside a secret
  has that partial secret masked too, so no part of a key outlives the cut.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any, Literal

__all__ = ["MASK", "SECRET_MIN", "cut", "environ_secrets", "holds", "longest_form", "mask", "mask_bytes", "mask_value",
           "secret_forms", "secret_values"]

MASK = "***"
SECRET_MIN = 8  # shorter values (a local server's "x") are not looked for: they would blank ordinary text
EDGE_MIN = 4  # the shortest piece of a secret masked where a cut edge splits one
_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH", re.IGNORECASE)
# scheme://user:password@ (the userinfo of a URL; the password may be empty, the user too)
_URL_CREDENTIALS = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://([^\s/?#@:]*):([^\s/?#@]*)@")


def secret_values(env: Mapping[str, str], extra: Iterable[str | None] = ()) -> tuple[str, ...]:
    """The secrets ``env`` holds (see the module's rule) and ``extra`` (keys given otherwise), longest first."""
    # every agent run and judge call asks this of the same few environments: the scan is kept for the last ones
    return _secret_values(tuple(env.items()), tuple(extra))


def environ_secrets(extra: Iterable[str | None] = ()) -> tuple[str, ...]:
    """``secret_values(os.environ, extra)``: this process's secrets, its environment read as it is now. Its
    variables are taken as the bytes the process holds (no text decoded unless they changed since the last
    call): every run's record asks for them."""
    data = getattr(os.environ, "_data", None)  # os._Environ's own dict (bytes; text on Windows)
    if not isinstance(data, dict):
        return secret_values(os.environ, extra)
    return _environ_secrets(tuple(data.items()), tuple(extra))


@lru_cache(maxsize=4)
def _environ_secrets(data: tuple[tuple[bytes | str, bytes | str], ...],
                     extra: tuple[str | None, ...]) -> tuple[str, ...]:
    return _secret_values(tuple((os.fsdecode(name), os.fsdecode(value)) for name, value in data), extra)


@lru_cache(maxsize=16)
def _secret_values(env: tuple[tuple[str, str], ...], extra: tuple[str | None, ...]) -> tuple[str, ...]:
    found = {value for name, value in env if _SECRET_NAME.search(name)}
    for _, value in env:
        if "://" in value:
            for match in _URL_CREDENTIALS.finditer(value):
                found.add(f"{match.group(1)}:{match.group(2)}")
                found.add(match.group(2))
    found.update(value for value in extra if value)
    return tuple(sorted((v for v in found if len(v) >= SECRET_MIN), key=lambda v: (-len(v), v)))


def secret_forms(secrets: Iterable[str]) -> tuple[str, ...]:
    """Every form in which ``secrets`` can appear: as written and JSON-escaped, longest first."""
    forms: set[str] = set()
    for secret in secrets:
        if len(secret) < SECRET_MIN:
            continue
        for form in (secret, json.dumps(secret, ensure_ascii=False)[1:-1], json.dumps(secret)[1:-1]):
            forms.add(form)
            if "/" in form:
                forms.add(form.replace("/", "\\/"))
    return tuple(sorted(forms, key=lambda v: (-len(v), v)))


@lru_cache(maxsize=64)
def _pattern(secrets: tuple[str, ...]) -> re.Pattern[str] | None:
    forms = secret_forms(secrets)
    return re.compile("|".join(map(re.escape, forms))) if forms else None


@lru_cache(maxsize=64)
def _bytes_pattern(secrets: tuple[str, ...]) -> re.Pattern[bytes] | None:
    forms = [form.encode("utf-8", "surrogateescape") for form in secret_forms(secrets)]
    return re.compile(b"|".join(map(re.escape, forms))) if forms else None


def _key(secrets: Iterable[str]) -> tuple[str, ...]:
    return secrets if isinstance(secrets, tuple) else tuple(secrets)


def holds(text: str, secrets: Iterable[str]) -> bool:
    """True when ``text`` holds one of ``secrets`` in any of its forms."""
    pattern = _pattern(_key(secrets))
    return pattern is not None and pattern.search(text) is not None


def mask(text: str, secrets: Iterable[str], marker: str = MASK) -> str:
    """``text`` with every form of each of ``secrets`` replaced by ``marker``."""
    pattern = _pattern(_key(secrets))
    if pattern is None or not text:
        return text
    return pattern.sub(marker.replace("\\", "\\\\"), text)


def mask_bytes(data: bytes, secrets: Iterable[str], marker: bytes = MASK.encode()) -> bytes:
    """``data`` with every form of each of ``secrets`` (UTF-8) replaced by ``marker``."""
    pattern = _bytes_pattern(_key(secrets))
    if pattern is None or not data:
        return data
    return pattern.sub(marker.replace(b"\\", b"\\\\"), data)


def longest_form(secrets: Iterable[str]) -> int:
    """The length in bytes of the longest form of ``secrets`` (0 when none): what a stream must hold back."""
    forms = secret_forms(secrets)
    return max((len(f.encode("utf-8", "surrogateescape")) for f in forms), default=0)


def mask_value(value: Any, secrets: Iterable[str], marker: str = MASK) -> Any:
    """``value`` (plain JSON: dicts, lists, strings) with every string, keys included, masked."""
    key = _key(secrets)
    if isinstance(value, str):
        return mask(value, key, marker)
    if isinstance(value, dict):
        return {mask(str(k), key, marker): mask_value(v, key, marker) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [mask_value(item, key, marker) for item in value]
    return value


def _mask_edge(text: str, forms: tuple[str, ...], edge: Literal["start", "end"], marker: str) -> str:
    """``text`` with the piece of a secret it starts with (``edge`` start: a secret's end) or ends with (a
    secret's beginning) masked, when that piece is at least EDGE_MIN characters long."""
    best = 0
    for form in forms:
        for size in range(min(len(form) - 1, len(text)), EDGE_MIN - 1, -1):
            piece = form[-size:] if edge == "start" else form[:size]
            if (text.startswith(piece) if edge == "start" else text.endswith(piece)):
                best = max(best, size)
                break
    if not best:
        return text
    return marker + text[best:] if edge == "start" else text[:-best] + marker


def cut(text: str, limit: int, secrets: Iterable[str], *, keep: Literal["head", "tail"] = "head",
        more: str = "...", cut_before: bool = False, marker: str = MASK) -> str:
    """``text`` masked, then cut to ``limit`` characters (its beginning, or with ``keep="tail"`` its end),
    ``more`` marking the cut. A cut edge that splits a secret has the piece it keeps masked too; so does the
    start of a text that was already cut before it came here (``cut_before``: the tail of a stream)."""
    key = _key(secrets)
    text = mask(text, key, marker)
    forms = secret_forms(key)
    if cut_before and forms:
        text = _mask_edge(text, forms, "start", marker)
    if len(text) <= limit:
        return text
    if keep == "head":
        kept = text[:limit]
        return (_mask_edge(kept, forms, "end", marker) if forms else kept) + more
    kept = text[-limit:]
    return more + (_mask_edge(kept, forms, "start", marker) if forms else kept)
