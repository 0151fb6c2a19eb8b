"""GAIA (validation ``metadata.jsonl``) -> a benchmark scored by the ``gaia`` scorer.

Each record has ``task_id``, ``Question``, ``Level``, ``Final answer`` and ``file_name`` (an attachment
beside the metadata file, or empty). A task's ``inputData`` is ``{"question"}``, plus ``{"file", "filePath"}``
when it has an attachment (the path is absolute; a name that leaves the data set's folder is refused).
Records without an answer (the test split's ``?``) are skipped and counted.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import InputError
from ._jsonl import read_records

__all__ = ["GAIA_ID", "import_gaia"]

GAIA_ID = "gaia-v1"
LEVELS = ("1", "2", "3")


def import_gaia(path: Path, *, levels: tuple[str, ...] = ("1",), limit: int | None = None,
                benchmark_id: str = GAIA_ID) -> tuple[dict[str, Any], int]:
    """``(benchmark dict, records skipped)``. InputError for a record missing a field, a bad level, or no task."""
    path = Path(path)
    for level in levels:
        if level not in LEVELS:
            raise InputError(f"unknown GAIA level {level!r}", field="--level", hint="use 1, 2, 3 or all")
    folder = path.resolve().parent
    tasks: list[dict[str, Any]] = []
    skipped = 0
    for where, record in read_records(path):
        for key in ("task_id", "Question", "Level"):
            if key not in record:
                raise InputError(f"record has no {key!r}", file=str(path), field=where,
                                 hint="is this GAIA's metadata.jsonl?")
        if str(record["Level"]) not in levels:
            continue
        answer = record.get("Final answer")
        if answer is None or str(answer).strip() in ("", "?"):
            skipped += 1
            continue
        data: dict[str, Any] = {"question": str(record["Question"])}
        name = str(record.get("file_name") or "")
        if name:
            attachment = (folder / name).resolve()
            if not attachment.is_relative_to(folder):
                raise InputError(f"file_name {name!r} leaves the data set's folder", file=str(path), field=where)
            data.update({"file": name, "filePath": str(attachment)})
        question = " ".join(str(record["Question"]).split())
        tasks.append({"id": str(record["task_id"]),
                      "description": question if len(question) <= 100 else question[:99] + "…",
                      "inputData": data, "expectedOutput": {"type": "gaia", "value": str(answer)},
                      "evaluator": {"type": "gaia"}, "tags": ["gaia", f"level-{record['Level']}"],
                      "metadata": {"level": str(record["Level"]), "hasFile": bool(name)}})
        if limit is not None and len(tasks) >= limit:
            break
    if not tasks:
        raise InputError(f"no GAIA task of level {', '.join(levels)} with an answer", file=str(path),
                         hint="the validation split has answers; the test split does not")
    benchmark = {"id": benchmark_id, "name": f"GAIA validation, level {'+'.join(levels)}",
                 "version": "1.0.0", "domain": "general", "scoringMethod": "mean",
                 "metadata": {"source": path.name, "levels": list(levels), "scorer": "GAIA question_scorer"},
                 "tasks": tasks}
    return benchmark, skipped
