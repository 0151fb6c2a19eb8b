"""The files of a workspace laid out by Anthropic's skill-creator that ours do not hold, read for the page.

- ``transcript.md`` (in the run folder or its ``outputs/``): shown as the run's transcript when it has no
  ``transcript.jsonl``; its ``## Eval Prompt`` section is the prompt when no ``eval_metadata.json`` gives one.
- ``outputs/metrics.json`` (the executor's tool calls, steps, files and errors) and ``outputs/user_notes.md``:
  shown with the run, never listed as files the agent made (unless ``timing.json`` lists the agent made them).
- ``comparison.json`` and ``comparison-<n>.json`` in a case folder, in skill-creator's shape (one blind verdict:
  ``winner``, ``reasoning``, ``rubric``, ``output_quality``) besides ours (``{"comparisons": [...]}``). Its
  verdicts say which output won, A or B, not which arm: the page says so.
- ``eval_metadata.json`` in an arm or run folder, where skill-creator's viewer also looks for it.
"""

from __future__ import annotations

import contextlib
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..formats.workspace import EVAL_METADATA_FILE, Comparison, EvalMetadata, Timing
from .files import Reader

__all__ = ["METADATA_FILES", "Comparisons", "eval_metadata", "prompt_from_transcript", "read_comparisons",
           "run_extras", "skipped_outputs"]

METADATA_FILES = ("transcript.md", "user_notes.md", "metrics.json")  # in outputs/: the executor's, not outputs
_PROMPT = re.compile(r"## Eval Prompt\n\n([\s\S]*?)(?=\n##|$)")
_NUMBERED = re.compile(r"comparison-(\d{1,9})\.json")


class Comparisons(BaseModel):
    """``comparison.json`` as we write it."""

    model_config = ConfigDict(extra="allow")

    comparisons: list[Comparison] = Field(default_factory=list)


class Metrics(BaseModel):
    """``outputs/metrics.json`` of skill-creator's executor."""

    model_config = ConfigDict(extra="allow")

    tool_calls: dict[str, int] = Field(default_factory=dict)
    total_tool_calls: int | None = None
    total_steps: int | None = None
    files_created: list[str] = Field(default_factory=list)
    errors_encountered: int | None = None


def skipped_outputs(timing: Timing | None) -> frozenset[str]:
    """The names at the top of ``outputs/`` that are not files the agent made: ``response.md``, the copies
    made for skill-creator's viewer (``viewer_copy``), and skill-creator's executor files unless the run's
    ``timing.json`` lists the agent made a file of that name."""
    listed: set[str] = set()
    copies: set[str] = set()
    for entry in (timing.model_extra or {}).get("files") or [] if timing is not None else []:
        if isinstance(entry, dict):
            listed.add(str(entry.get("saved_as") or entry.get("path")))
            if isinstance(entry.get("viewer_copy"), str):
                copies.add(entry["viewer_copy"])
    return frozenset({"response.md", *copies, *(name for name in METADATA_FILES if name not in listed)})


def prompt_from_transcript(text: str | None) -> str:
    match = _PROMPT.search(text or "")
    return match.group(1).strip() if match else ""


def run_extras(read: Reader, run: Path, timing: Timing | None) -> dict[str, Any]:
    """What a skill-creator run folder adds: ``transcript_md``, ``metrics``, ``user_notes`` and the problems
    met reading them (an agent's own file of such a name is left as the agent's)."""
    skipped = skipped_outputs(timing)
    problems: list[str] = []
    transcript, problem = read.text(run / "transcript.md")
    if transcript is None and "transcript.md" in skipped:
        transcript, problem = read.text(run / "outputs" / "transcript.md")
    problems += [problem] if problem else []
    metrics: Metrics | None = None
    notes: str | None = None
    if "metrics.json" in skipped:
        metrics, problem = read.model(run / "outputs" / "metrics.json", Metrics)
        problems += [problem] if problem else []
    if "user_notes.md" in skipped:
        notes, problem = read.text(run / "outputs" / "user_notes.md")
        problems += [problem] if problem else []
    return {"transcript_md": transcript, "metrics": metrics, "user_notes": notes, "extra_problems": problems}


def eval_metadata(read: Reader, case: Path, runs: list[Path]) -> tuple[EvalMetadata | None, list[str]]:
    """The case's ``eval_metadata.json``: the case folder's, else the first arm or run folder's that has one."""
    problems: list[str] = []
    candidates = [case / EVAL_METADATA_FILE]
    for run in runs:
        candidates += [run / EVAL_METADATA_FILE, run.parent / EVAL_METADATA_FILE]
    for path in dict.fromkeys(candidates):
        meta, problem = read.model(path, EvalMetadata)
        if problem:
            problems.append(problem)
        if meta is not None:
            return meta, problems
    return None, problems


def _blind(data: dict[str, Any], number: int) -> Comparison:
    """One skill-creator verdict as a :class:`Comparison` without arms (it does not record them)."""
    winner = data.get("winner")
    winner = str(winner).upper() if isinstance(winner, str) and str(winner).upper() in ("A", "B", "TIE") else None
    scores: dict[str, Any] = {}
    found = data.get("rubric")
    rubric: dict[str, Any] = found if isinstance(found, dict) else {}
    for side in ("A", "B"):
        part = rubric.get(side)
        score = part.get("overall_score") if isinstance(part, dict) else None
        if isinstance(score, int | float) and not isinstance(score, bool):
            scores[side] = score
    reasoning = data.get("reasoning") if isinstance(data.get("reasoning"), str) else ""
    return Comparison.model_validate({"run_number": number, "order": {}, "winner": winner, "winner_arm": None,
                                      "reasoning": reasoning, "scores": scores, "arms_unknown": True})


def read_comparisons(read: Reader, case: Path) -> tuple[list[Comparison], list[str]]:
    """The blind verdicts of a case: ``comparison.json`` (ours, or one of skill-creator's) and every
    ``comparison-<n>.json`` (skill-creator's, verdict of run ``n``), by run number."""
    found: list[Comparison] = []
    problems: list[str] = []
    files = [(case / "comparison.json", 1)]
    with contextlib.suppress(OSError):
        files += sorted(((p, int(m.group(1))) for p in case.iterdir() if (m := _NUMBERED.fullmatch(p.name))),
                        key=lambda item: item[1])
    for path, number in files:
        data, problem = read.model(path, _AnyObject)
        if problem:
            problems.append(problem)
        if data is None:
            continue
        raw = data.model_dump()
        try:
            if "comparisons" in raw:
                found += Comparisons.model_validate(raw).comparisons
            else:
                found.append(_blind(raw, number))
        except ValidationError as exc:
            problems.append(f"{read.shown(path)}: not a comparison ({exc.errors()[0]['msg']})")
    return sorted(found, key=lambda c: c.run_number), problems


class _AnyObject(BaseModel):
    model_config = ConfigDict(extra="allow")
