"""The prompts the model judges send, one package file per kind (``prompts/grade.md``, ``compare.md``,
``score.md``, ``improve.md``), and the JSON schema of each verdict.

A prompt file holds its version in a frontmatter (``version: grade-1``), then a ``[system]`` and a ``[user]``
section; the user section is a Jinja2 template of the request's fields. The version is recorded with every
verdict and is part of the verdict cache key: change a prompt's text, change its version
(``tests/test_judge_prompts.py`` pins each file's hash to its version).

Long fields are cut to keep the prompt bounded: each text field and file to :data:`FIELD_LIMIT` characters, at
most :data:`MAX_FILES` output files, the transcript to one line per event and :data:`TRANSCRIPT_LIMIT`
characters; a cut says how much was left out.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from ..formats.workspace import MessageEvent, SkillEvent, ToolCallEvent
from .models import CompareRequest, GradeRequest, ImproveRequest, ScoreRequest

__all__ = ["FIELD_LIMIT", "MAX_FILES", "TRANSCRIPT_LIMIT", "Prompt", "load_prompt", "render", "verdict_schema"]

FIELD_LIMIT = 20_000
MAX_FILES = 20
TRANSCRIPT_LIMIT = 20_000
EVENT_LIMIT = 400  # characters of one transcript event's text, input or result

Request = GradeRequest | CompareRequest | ScoreRequest | ImproveRequest


@dataclass(frozen=True)
class Prompt:
    kind: str
    version: str
    system: str
    user: Any  # a jinja2 Template


@cache
def load_prompt(kind: str) -> Prompt:
    """The prompt of ``kind`` (grade, compare or score), read from the package once."""
    import jinja2

    text = (resources.files(__package__) / "prompts" / f"{kind}.md").read_text(encoding="utf-8")
    _, front, body = text.split("---\n", 2)
    meta = dict(line.split(":", 1) for line in front.strip().splitlines())
    system, user = body.split("[user]\n", 1)
    env = jinja2.Environment(autoescape=False, trim_blocks=True, lstrip_blocks=True,
                             undefined=jinja2.StrictUndefined)
    return Prompt(kind, meta["version"].strip(), system.removeprefix("[system]\n").strip(), env.from_string(user))


def _clip(text: str, limit: int = FIELD_LIMIT) -> str:
    return text if len(text) <= limit else text[:limit] + f"\n[... {len(text) - limit} more characters cut]"


def _as_text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False, default=str)


def _files(outputs: dict[str, str]) -> list[tuple[str, str]]:
    files = [(path, _clip(text)) for path, text in sorted(outputs.items())[:MAX_FILES]]
    if len(outputs) > MAX_FILES:
        files.append(("...", f"[{len(outputs) - MAX_FILES} more files not shown]"))
    return files


def _one_line(value: Any) -> str:
    text = " ".join(_as_text(value).split())
    return text if len(text) <= EVENT_LIMIT else text[:EVENT_LIMIT] + "..."


def _transcript(events: list[Any]) -> str:
    lines: list[str] = []
    size = 0
    for i, event in enumerate(events):
        if isinstance(event, MessageEvent):
            line = f"[{event.role}] {_one_line(event.text)}"
        elif isinstance(event, ToolCallEvent):
            line = f"[tool {event.name}] {_one_line(event.input)}"
            if event.result is not None:
                line += f" -> {'(error) ' if event.is_error else ''}{_one_line(event.result)}"
        elif isinstance(event, SkillEvent):
            line = f"[skill {event.skill} used, detected by {event.detected_by}]"
        else:
            continue
        if size + len(line) > TRANSCRIPT_LIMIT:
            lines.append(f"[... {len(events) - i} more events cut]")
            break
        lines.append(line)
        size += len(line) + 1
    return "\n".join(lines)


def render(request: Request, problem: str | None = None) -> tuple[str, str]:
    """(system, user) messages for ``request``; ``problem`` (what was wrong with a first reply) is added when
    asking again."""
    prompt = load_prompt(request.kind)
    if isinstance(request, GradeRequest):
        user = prompt.user.render(prompt=_clip(request.prompt), expected_output=_clip(request.expected_output),
                                  response=_clip(request.response), outputs=_files(request.outputs),
                                  transcript=_transcript(request.transcript), assertions=request.assertions)
    elif isinstance(request, CompareRequest):
        arms = [(label, {"response": _clip(arm.response), "outputs": _files(arm.outputs)})
                for label, arm in (("A", request.A), ("B", request.B))]
        user = prompt.user.render(prompt=_clip(request.prompt), expected_output=_clip(request.expected_output),
                                  arms=arms)
    elif isinstance(request, ImproveRequest):
        user = prompt.user.render(**{**request.model_dump(), "skill_body": _clip(request.skill_body)})
    else:
        user = prompt.user.render(rubric=_clip(request.rubric), task=_clip(request.task or ""),
                                  input=_clip(_as_text(request.input)),
                                  output=_clip(_as_text(request.output)), expected=_clip(_as_text(request.expected)))
    user = user.strip()
    if problem:
        user += (f"\n\nYour previous reply could not be used: {problem}. Reply with the JSON object only, "
                 "exactly as described.")
    return prompt.system, user


def verdict_schema(kind: str) -> dict[str, Any]:
    """The JSON schema of a verdict, in the strict form structured-output APIs take (every property
    required, no others)."""
    def obj(properties: dict[str, Any]) -> dict[str, Any]:
        return {"type": "object", "properties": properties, "required": list(properties),
                "additionalProperties": False}

    if kind == "grade":
        entry = obj({"text": {"type": "string"}, "passed": {"type": "boolean"}, "evidence": {"type": "string"}})
        return obj({"expectations": {"type": "array", "items": entry}})
    if kind == "compare":
        return obj({"winner": {"type": "string", "enum": ["A", "B", "TIE"]}, "reasoning": {"type": "string"}})
    if kind == "improve":
        return obj({"description": {"type": "string"}, "reasoning": {"type": "string"}})
    return obj({"score": {"type": "number"}, "reason": {"type": "string"}})
