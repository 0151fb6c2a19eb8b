"""What the agent did in a run, as the checks on it read it: the transcript events in order and the files it
created or changed, read from the run's ``outputs/`` (never from outside it; a link is not followed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..scoring.assertions import AgentFile, Trace
from .record import RunRecord

__all__ = ["FILE_KINDS", "FILE_LIMIT", "trace_of"]

FILE_KINDS = frozenset({"file_created", "file_contains"})  # the checks that read the files

FILE_LIMIT = 10 << 20  # bytes of one agent file a check reads (as many as a run brings back of one file)


def _read(outputs: Path, name: str) -> bytes | None:
    target = outputs / name
    try:
        if target.is_symlink() or not target.resolve().is_relative_to(outputs.resolve()) or not target.is_file() \
                or target.stat().st_size > FILE_LIMIT:
            return None
        return target.read_bytes()
    except OSError:
        return None


def _files(record: RunRecord) -> list[AgentFile] | None:
    listed = record.extra.get("files")
    if not isinstance(listed, list):
        return None
    outputs = record.folder / "outputs" if record.folder is not None else None
    found = []
    for entry in listed:
        if not isinstance(entry, dict) or entry.get("kind") == "deleted" or not entry.get("path"):
            continue
        saved: Any = entry.get("saved_as") or entry["path"]
        data = _read(outputs, str(saved)) if outputs is not None else None
        found.append(AgentFile(path=str(entry["path"]), kind=str(entry.get("kind") or "modified"), data=data))
    return found


def trace_of(record: RunRecord, *, with_files: bool = True) -> Trace:
    """The run's :class:`Trace` (its files read only ``with_files``)."""
    events = tuple(e.model_dump(mode="json") if hasattr(e, "model_dump") else e for e in record.transcript)
    return Trace(events=events, files=_files(record) if with_files else None)
