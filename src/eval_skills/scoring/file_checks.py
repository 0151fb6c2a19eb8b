"""The checks on the files the agent created or changed: ``file_created`` and ``file_contains``.

``path`` is a path relative to the run's folder, or a glob (``*`` and ``?`` within one folder, ``**`` any number
of folders: ``reports/*.md``, ``**/notes.txt``). It only ever names files the agent created or changed, as the
run recorded them: an absolute path or one with ``..`` is refused when the checks are loaded.

    file_created    a file the agent created (not one it only changed, such as a fixture file) matches path
    file_contains   a file the agent created or changed that matches path holds text (a substring,
                    case-sensitive) or matches pattern (a regex, with flags)
"""

from __future__ import annotations

from collections.abc import Sequence
from fnmatch import fnmatchcase
from functools import lru_cache

from ..errors import InputError
from .check_base import AgentFile, Check, CheckResult, Trace, register_trace_check
from .check_base import short as _short
from .check_base import where as _where
from .text_checks import REGEX_TIMEOUT_S, compile_pattern, regex_flags

__all__ = ["matches_glob", "safe_glob"]

LISTED = 10


def safe_glob(value: object, kind: str) -> str:
    """``value`` as a ``/`` path or glob inside the run's folder (InputError when it is not one)."""
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"{kind}: path must be a non-empty path or glob, got {value!r}")
    path = value.replace("\\", "/")
    while path.startswith("./"):
        path = path[2:]
    parts = path.split("/")
    if path.startswith("/") or (len(path) > 1 and path[1] == ":") or path.startswith("~"):
        raise InputError(f"{kind}: path {value!r} is absolute; give it relative to the run's folder")
    if ".." in parts:
        raise InputError(f"{kind}: path {value!r} leaves the run's folder ('..')")
    return "/".join(p for p in parts if p not in ("", "."))


@lru_cache(maxsize=256)
def _segments(pattern: str) -> tuple[str, ...]:
    return tuple(pattern.split("/"))


def _match(parts: Sequence[str], pattern: Sequence[str]) -> bool:
    if not pattern:
        return not parts
    if pattern[0] == "**":
        return any(_match(parts[i:], pattern[1:]) for i in range(len(parts) + 1))
    return bool(parts) and fnmatchcase(parts[0], pattern[0]) and _match(parts[1:], pattern[1:])


def matches_glob(path: str, pattern: str) -> bool:
    """Whether the ``/`` path ``path`` matches ``pattern`` (``*``, ``?``, ``[...]`` within a folder, ``**``
    across folders)."""
    return _match(tuple(path.split("/")), _segments(pattern))


def _names(files: Sequence[AgentFile]) -> str:
    shown = ", ".join(f.path for f in files[:LISTED])
    return shown + (f", ... ({len(files)} in all)" if len(files) > LISTED else "")


def _made(files: Sequence[AgentFile]) -> str:
    created = [f for f in files if f.kind == "created"]
    changed = [f for f in files if f.kind != "created"]
    said = [f"created {_names(created)}" if created else "", f"changed {_names(changed)}" if changed else ""]
    return "; ".join(s for s in said if s) or "it created or changed no file"


def _validate_created(check: Check) -> None:
    safe_glob(check.value, check.kind)


@register_trace_check("file_created", _validate_created, primary=("path",))
def check_file_created(check: Check, trace: Trace) -> CheckResult:
    pattern = safe_glob(check.value, check.kind)
    if trace.files is None:
        return CheckResult(check.kind, check.value, False, "the run recorded no files")
    found = [f for f in trace.files if f.kind == "created" and matches_glob(f.path, pattern)]
    if found:
        sizes = ", ".join(f"{f.path} ({len(f.data)} bytes)" if f.data is not None else f.path for f in found[:3])
        return CheckResult(check.kind, check.value, True,
                           f"{len(found)} created file(s) match {check.value!r}: {sizes}")
    changed = [f for f in trace.files if matches_glob(f.path, pattern)]
    also = f" ({_names(changed)} only changed)" if changed else ""
    return CheckResult(check.kind, check.value, False,
                       f"no file the agent created matches {check.value!r}{also}; {_made(trace.files)}")


def _validate_contains(check: Check) -> None:
    safe_glob(check.value, check.kind)
    text, pattern = check.options.get("text"), check.options.get("pattern")
    if (text is None) == (pattern is None):
        raise InputError("file_contains needs text (a substring) or pattern (a regex), one of them")
    if text is not None and (not isinstance(text, str) or not text):
        raise InputError(f"file_contains: text must be a non-empty string, got {text!r}")
    if pattern is not None:
        if not isinstance(pattern, str) or not pattern:
            raise InputError(f"file_contains: pattern must be a non-empty string, got {pattern!r}")
        compile_pattern(pattern, regex_flags(check.flags))


def _look(check: Check, file: AgentFile) -> tuple[bool, str]:
    if file.data is None:
        return False, f"{file.path}: its content was not kept"
    try:
        content = file.data.decode("utf-8")
    except UnicodeDecodeError:
        return False, f"{file.path}: not text ({len(file.data)} bytes)"
    text, pattern = check.options.get("text"), check.options.get("pattern")
    if isinstance(text, str):
        index = content.find(text)
        if index >= 0:
            return True, f"{file.path} holds {text!r} at {_where(content, index)}"
        return False, f"{file.path}: no {text!r} ({len(content)} characters)"
    try:
        found = compile_pattern(str(pattern), regex_flags(check.flags)).search(content, timeout=REGEX_TIMEOUT_S)
    except TimeoutError:
        return False, f"{file.path}: matching took longer than {REGEX_TIMEOUT_S:g}s"
    if found is None:
        return False, f"{file.path}: no match of {pattern!r} ({len(content)} characters)"
    return True, f"{file.path} matches {pattern!r}: {_short(found.group(0))} at {_where(content, found.start())}"


@register_trace_check("file_contains", _validate_contains, primary=("path",),
                      options=("text", "pattern", "flags"))
def check_file_contains(check: Check, trace: Trace) -> CheckResult:
    pattern = safe_glob(check.value, check.kind)
    if trace.files is None:
        return CheckResult(check.kind, check.value, False, "the run recorded no files")
    candidates = [f for f in trace.files if matches_glob(f.path, pattern)]
    if not candidates:
        return CheckResult(check.kind, check.value, False,
                           f"no file the agent created or changed matches {check.value!r}; {_made(trace.files)}")
    seen = []
    for file in candidates:
        passed, why = _look(check, file)
        if passed:
            return CheckResult(check.kind, check.value, True, why)
        seen.append(why)
    return CheckResult(check.kind, check.value, False,
                       "; ".join(seen[:3]) + (f" ... ({len(seen)} files)" if len(seen) > 3 else ""))
