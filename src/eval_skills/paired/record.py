"""The files of an iteration, written as each run, grade and comparison finishes, and read back to resume.

A run folder (``eval-<id>/<arm>/run-<k>/``) holds ``outputs/response.md`` (the final response),
``outputs/<path>`` (copies of the files the agent created or changed; an agent file named ``response.md`` at
its root is kept as ``response.agent.md``; one in a subfolder is linked again at the top, see
:func:`_viewer_copies`), ``transcript.jsonl``, ``timing.json`` and, once graded,
``grading.json`` (every run the agent finished, see :func:`write_grading`). ``timing.json`` is written last and
atomically: a run folder with a readable ``timing.json`` is a finished run, whatever else happened; any other
run folder is started again on resume.
The files an agent wrote are untrusted and may quote a secret it saw (an ``env.txt``): their copies, and the texts
the judge is sent, have the known secrets masked (the agent's and this process's, see :mod:`eval_skills.masking`).
``timing.json`` also records the run's ``status`` and ``error``, its start and end, the token usage, the
number of tool calls, the skills invoked and the files changed.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from .._atomic import write_atomic, write_file
from ..formats.indented_json import dumps_indented_utf8
from ..formats.workspace import (
    EVAL_METADATA_FILE,
    INPUTS_DIR,
    Comparison,
    EvalMetadata,
    Grading,
    Timing,
    ToolCallEvent,
    TranscriptEvent,
)
from ..masking import environ_secrets, mask, mask_bytes
from .executor import RunOutput
from .plan import Case

__all__ = ["OUTPUT_TEXT_LIMIT", "VIEWER_COPY", "RunRecord", "load_comparisons", "load_grading", "load_run",
           "write_case", "write_comparisons", "write_grading", "write_json", "write_run"]

RESPONSE = "response.md"
AGENT_RESPONSE_FILE = "response.agent.md"
OUTPUT_TEXT_LIMIT = 100_000  # characters of one output file shown to the judge
OUTPUTS_TEXT_LIMIT = 400_000  # characters of all output files of a run shown to the judge
_EVENTS: TypeAdapter[TranscriptEvent] = TypeAdapter(TranscriptEvent)


@dataclass
class RunRecord:
    """A finished run, as grading, comparing and the statistics need it."""

    run_id: str
    case_key: str
    arm: str
    number: int
    status: str
    error: str | None
    response: str | None
    transcript: list[Any]
    outputs: dict[str, str]  # the output files as text for the judge (binary ones described)
    duration_s: float
    tokens: int | None
    token_measurement: str
    tool_calls: int
    grading: Grading | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    folder: Path | None = None  # the run's folder (its outputs/ holds the files the agent made)

    @property
    def ok(self) -> bool:
        return self.status == "ok" and self.response is not None


def write_json(path: Path, data: Any) -> None:
    """Write ``data`` (a model or plain JSON) to ``path`` atomically (a temporary file, then a rename)."""
    if isinstance(data, BaseModel):
        data = data.model_dump(mode="json")
    text = dumps_indented_utf8(data) + "\n"  # json.dumps(indent=2)'s text, by orjson where it can
    try:
        write_atomic(path, text)
    except FileNotFoundError:  # its folder is not there yet (usually it is: no call to look first)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, text)


def _read_model(path: Path, model: type[BaseModel]) -> Any:
    try:
        return model.model_validate_json(path.read_bytes())
    except (OSError, ValidationError, ValueError):
        return None


def write_case(case_dir: Path, case: Case, arms: tuple[str, ...] = ()) -> None:
    """``eval_metadata.json`` (the case as run) in the case folder and in each arm's folder (where
    skill-creator's viewer looks for it: a run's folder or its parent), and ``inputs/`` (its fixture files at
    their paths relative to the skill)."""
    meta = EvalMetadata(eval_id=case.case.id, eval_name=case.name, prompt=case.case.prompt,
                        expected_output=case.case.expected_output, files=case.case.files,
                        assertions=case.texts)
    write_json(case_dir / EVAL_METADATA_FILE, meta)
    for arm in arms:
        write_json(case_dir / arm / EVAL_METADATA_FILE, meta)
    inputs = case_dir / INPUTS_DIR
    for name, data in case.files.items():
        target = inputs / name
        if not target.resolve().is_relative_to(inputs.resolve()):
            continue  # a checked path never leaves the folder; this keeps it so whatever the plan holds
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


def _texts(files: dict[str, bytes | None], sizes: dict[str, int | None], secrets: tuple[str, ...]) -> dict[str, str]:
    """The output files as the judge sees them: secrets masked, text clipped, binary and missing ones described."""
    texts: dict[str, str] = {}
    budget = OUTPUTS_TEXT_LIMIT
    for path in sorted(files):
        data = files[path]
        if data is None:
            texts[path] = f"(not copied: {sizes.get(path)} bytes)"
            continue
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            texts[path] = f"(binary file, {len(data)} bytes)"
            continue
        text = mask(text, secrets)
        limit = min(OUTPUT_TEXT_LIMIT, budget)
        if len(text) > limit:
            text = text[:limit] + f"\n... [{len(text) - limit} more characters not shown]"
        budget = max(0, budget - len(text))
        texts[path] = text
    return texts


VIEWER_COPY = "viewer_copy"  # the key of a files entry naming its copy at the top of outputs/


def _viewer_copies(outputs: Path, listed: list[dict[str, Any]]) -> None:
    """A file the agent wrote in a subfolder is linked again at the top of ``outputs/`` as ``a__b.txt`` (for
    ``a/b.txt``; a hard link, so no second copy on disk), because skill-creator's viewer lists only the top
    level. The entry records the name (``viewer_copy``); a name already taken gets no copy."""
    taken = {str(e.get("saved_as") or e["path"]) for e in listed}
    for entry in listed:
        path = str(entry.get("saved_as") or entry["path"])
        if "/" not in path or entry["kind"] == "deleted":
            continue
        source, name = outputs / path, path.replace("/", "__")
        if name in taken or name == RESPONSE or not source.is_file() or source.is_symlink():
            continue
        try:
            os.link(source, outputs / name)
        except OSError:
            try:
                shutil.copyfile(source, outputs / name)
            except OSError:
                continue
        taken.add(name)
        entry[VIEWER_COPY] = name


def _stays_inside(path: str) -> bool:
    """Whether the relative ``/`` path ``path`` names a place inside the folder it is joined to: not absolute, no
    step up. That is enough for a run's ``outputs/``: it is made new for the run, and every folder in it is made
    here, so it holds no link that could lead out."""
    parts = PurePosixPath(path).parts
    return bool(parts) and not path.startswith("/") and ".." not in parts and "\0" not in path


def _new_folder(folder: Path) -> None:
    """``folder``, empty: made (with its parents, when they are missing), or emptied when it was there (a run
    started again)."""
    try:
        folder.mkdir()
    except FileNotFoundError:
        folder.mkdir(parents=True)
    except FileExistsError:
        shutil.rmtree(folder)
        folder.mkdir()


def write_run(folder: Path, out: RunOutput, *, case_key: str, arm: str, number: int,
              agent_version: str | None = None) -> RunRecord:
    """Write a finished run's files (``timing.json`` last) and return its record (``agent_version``: the version
    the agent's CLI reported for this iteration)."""
    _new_folder(folder)
    secrets = environ_secrets(out.raw_stdout.secrets if out.raw_stdout is not None else ())
    outputs = folder / "outputs"
    outputs.mkdir()
    if out.response is not None:
        write_file(outputs / RESPONSE, out.response.encode("utf-8"))
    copied: dict[str, bytes | None] = {}
    sizes: dict[str, int | None] = {}
    listed = []
    made = {outputs}
    for change in out.files:
        path = AGENT_RESPONSE_FILE if change.path == RESPONSE else change.path
        entry = {"path": change.path, "kind": change.kind, "size": change.size}
        if path != change.path:
            entry["saved_as"] = path
        if change.note:
            entry["note"] = change.note
        listed.append(entry)
        if change.kind == "deleted":
            continue
        if not _stays_inside(path):
            continue  # never write outside the run's outputs folder
        target = outputs / path
        data = None if change.data is None else mask_bytes(change.data, secrets)
        if data is not None:
            if target.parent not in made:
                target.parent.mkdir(parents=True, exist_ok=True)
                made.add(target.parent)
            write_file(target, data)
        copied[path] = data
        sizes[path] = change.size
    _viewer_copies(outputs, listed)
    lines = [event.model_dump_json() for event in out.transcript]
    write_file(folder / "transcript.jsonl", "".join(line + "\n" for line in lines).encode("utf-8"))
    if out.raw_stdout is not None and out.raw_stdout.size:
        out.raw_stdout.save(folder / "stdout.txt")  # beside the parsed record, the agent's keys masked
    tool_calls = sum(isinstance(e, ToolCallEvent) for e in out.transcript)
    usage = out.usage
    timing = Timing(total_tokens=usage.total_tokens, duration_ms=round(out.duration_s * 1000),
                    total_duration_seconds=round(out.duration_s, 3), token_measurement=usage.measurement)
    extra = {"status": out.status, "error": out.error, "executor_start": out.started_at,
             "executor_end": out.finished_at, "executor_duration_seconds": round(out.duration_s, 3),
             "usage": usage.to_json(), "tool_calls": tool_calls, "skills_invoked": out.skills_invoked,
             "files": listed, "agent": out.agent, "agent_version": agent_version, "model": out.model,
             "exit_code": out.exit_code,
             "warnings": out.warnings, "isolation": out.isolation}
    write_json(folder / "timing.json", {**timing.model_dump(mode="json"), **extra})
    return RunRecord(run_id=out.run_id, case_key=case_key, arm=arm, number=number, status=out.status,
                     error=out.error, response=out.response, transcript=list(out.transcript),
                     outputs=_texts(copied, sizes, secrets), duration_s=timing.total_duration_seconds,
                     tokens=usage.total_tokens,
                     token_measurement=usage.measurement, tool_calls=tool_calls, extra=extra, folder=folder)


def load_run(folder: Path, *, run_id: str, case_key: str, arm: str, number: int) -> RunRecord | None:
    """The record of a finished run from its folder; None when it did not finish (no readable timing.json)."""
    timing = _read_model(folder / "timing.json", Timing)
    if timing is None:
        return None
    extra = dict(timing.model_extra or {})
    try:
        response: str | None = (folder / "outputs" / RESPONSE).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        response = None
    transcript: list[Any] = []
    try:
        for line in (folder / "transcript.jsonl").read_text(encoding="utf-8").splitlines():
            try:
                transcript.append(_EVENTS.validate_json(line))
            except ValidationError:
                continue
    except (OSError, UnicodeDecodeError):
        pass
    files: dict[str, bytes | None] = {}
    sizes: dict[str, int | None] = {}
    for entry in extra.get("files") or []:
        if not isinstance(entry, dict) or entry.get("kind") == "deleted":
            continue
        path = str(entry.get("saved_as") or entry.get("path"))
        target = (folder / "outputs" / path).resolve()
        if not target.is_relative_to((folder / "outputs").resolve()):
            continue
        try:
            files[path] = target.read_bytes()
        except OSError:
            files[path] = None
        sizes[path] = entry.get("size")
    status = str(extra.get("status") or "ok")
    error = extra.get("error")
    return RunRecord(run_id=run_id, case_key=case_key, arm=arm, number=number, status=status,
                     error=str(error) if error else None, response=response, transcript=transcript,
                     outputs=_texts(files, sizes, environ_secrets()),
                     duration_s=timing.total_duration_seconds,
                     tokens=timing.total_tokens, token_measurement=timing.token_measurement,
                     tool_calls=int(extra.get("tool_calls") or sum(isinstance(e, ToolCallEvent)
                                                                   for e in transcript)),
                     grading=load_grading(folder), extra=extra, folder=folder)


def write_grading(folder: Path, grading: Grading, name: str = "grading.json") -> None:
    """``grading.json`` of every run the agent finished, so skill-creator's aggregator, which counts exactly
    the runs that have one, counts the runs our time and token figures count. A run with nothing graded (a case
    without assertions, or every assertion met a judge error) has no ``pass_rate`` key: skill-creator's viewer
    then shows "?", and a null would stop its aggregator. An error run (the agent failed or timed out) has
    none, as it counts in none of our figures: its reason is in ``timing.json``. A judge error is an
    expectation with ``passed: null`` and the error as its evidence; ``--resume`` grades it again."""
    path = folder / name  # another name: a grading version (eval_skills.formats.grading)
    if grading.error is not None:
        path.unlink(missing_ok=True)
        return
    data = grading.model_dump(mode="json")
    if data["summary"].get("pass_rate") is None:
        data["summary"].pop("pass_rate", None)
    write_json(path, data)


def load_grading(folder: Path, name: str = "grading.json") -> Grading | None:
    grading: Grading | None = _read_model(folder / name, Grading)
    return grading


def write_comparisons(case_dir: Path, comparisons: dict[int, Comparison]) -> None:
    write_json(case_dir / "comparison.json",
               {"comparisons": [comparisons[n].model_dump(mode="json") for n in sorted(comparisons)]})


def load_comparisons(case_dir: Path) -> dict[int, Comparison]:
    try:
        data = json.loads((case_dir / "comparison.json").read_text(encoding="utf-8"))
        items = data.get("comparisons", []) if isinstance(data, dict) else []
    except (OSError, ValueError, UnicodeDecodeError):
        return {}
    found: dict[int, Comparison] = {}
    for item in items:
        try:
            comparison = Comparison.model_validate(item)
        except ValidationError:
            continue
        found[comparison.run_number] = comparison
    return found
