"""What the JSON-lines parsers share: one JSON object per line, tool calls completed by id, skill reads.

:class:`JsonLinesParser` decodes each line and hands the objects to :meth:`JsonLinesParser.event`; a
line that is not JSON is a noted problem (a wrapper may mix log lines into stdout). A line holding a JSON
array hands over each object in it. :class:`Transcript` builds the event list: tool calls by id (a later
sight of the same call completes it), usage, the last assistant text.
"""

from __future__ import annotations

import functools
import json
import re
from abc import abstractmethod
from collections.abc import Iterable
from typing import Any

from ...formats.workspace import MessageEvent, SkillEvent, ToolCallEvent, TranscriptEvent, UsageEvent
from ...procs import excerpt
from ..output import OutputParser, ParseContext
from ..usage import TokenUsage

__all__ = ["READ_OF_SKILL_MD", "JsonLinesParser", "Transcript", "as_cost", "as_int", "is_count", "obj",
           "one_line", "skill_read", "skill_reads", "text_of", "usage_event"]

READ_OF_SKILL_MD = "read of SKILL.md"
_NAME = r"([A-Za-z0-9][A-Za-z0-9._-]*)"
_START = r"(?:^|(?<=[\s'\"=/]))"  # lookarounds, so paths side by side are each found
_END = r"(?=$|[\s'\";|&)<>`])"
# .../skills/<name>/SKILL.md inside a path or a command line (any skills folder: project, user, plugin)
_ANY_SKILL_MD = re.compile(_START + r"skills/" + _NAME + r"/SKILL\.md" + _END)


def skill_read(text: Any, subdirs: Iterable[str] = ()) -> str | None:
    """The skill whose ``SKILL.md`` a path or command line names: ``<subdir>/<name>/SKILL.md`` for one of
    ``subdirs`` (``.claude/skills``), or any ``skills/<name>/SKILL.md`` when none is given."""
    found = skill_reads(text, subdirs)
    return found[0] if found else None


def skill_reads(text: Any, subdirs: Iterable[str] = ()) -> list[str]:
    """Every skill whose ``SKILL.md`` a path or command line names (as :func:`skill_read`), in order, each once:
    one command may read several (``cat a/SKILL.md b/SKILL.md``)."""
    if not isinstance(text, str) or "SKILL.md" not in text:
        return []
    found = _pattern(tuple(subdirs)).finditer(text.replace("\\", "/"))
    return list(dict.fromkeys(match.group(1) for match in found))


@functools.lru_cache(maxsize=64)
def _pattern(subdirs: tuple[str, ...]) -> re.Pattern[str]:
    if not subdirs:
        return _ANY_SKILL_MD
    folders = "|".join(re.escape(s.strip("/")) for s in subdirs)
    return re.compile(_START + r"(?:" + folders + ")/" + _NAME + r"/SKILL\.md" + _END)


def obj(value: Any) -> dict[str, Any]:
    """A JSON object from untrusted data: the value when it is one, else an empty one."""
    return value if isinstance(value, dict) else {}


def as_int(value: Any) -> int:
    """A token count from untrusted JSON: a non-negative int, else 0."""
    return value if is_count(value) else 0


def is_count(value: Any) -> bool:
    """Whether untrusted JSON holds a token count (a non-negative int)."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def usage_event(cost: Any = None, **counts: Any) -> UsageEvent | None:
    """A usage event of the counts (``input_tokens=...``) and cost that untrusted JSON holds readable; None
    when it holds none: a usage line without numbers measures nothing (the run's usage is then estimated)."""
    read: dict[str, Any] = {key: value for key, value in counts.items() if is_count(value)}
    if (cost := as_cost(cost)) is not None:
        read["cost_usd"] = cost
    return UsageEvent(**read) if read else None


def as_cost(value: Any) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
        return float(value)
    return None


def one_line(text: str, limit: int = 300) -> str:
    """``text`` on one line, cut at ``limit`` characters (for a warning or an error message)."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "..."


def text_of(content: Any) -> str:
    """A tool result or message content as text: a string, or the ``text`` of a list of blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(block.get("text", "")) for block in content
                         if isinstance(block, dict) and block.get("type") == "text")
    return "" if content is None else json.dumps(content, ensure_ascii=False)


class Transcript:
    """The events of one run in order, with tool calls findable by id and the usage events kept apart."""

    def __init__(self) -> None:
        self.events: list[TranscriptEvent] = []
        self.calls: dict[str, ToolCallEvent] = {}
        self.usage: list[UsageEvent] = []
        self.last_text: str | None = None

    def message(self, text: str, role: str = "assistant") -> None:
        if text.strip():
            self.events.append(MessageEvent(role=role, text=text))
            if role == "assistant":
                self.last_text = text

    def call(self, call_id: str | None, name: str, input: Any = None, **extra: Any) -> ToolCallEvent:
        """A tool call; seen again under the same id, the first one is updated and returned."""
        if call_id is not None and (known := self.calls.get(call_id)) is not None:
            if input is not None:
                known.input = input
            for key, value in extra.items():
                setattr(known, key, value)
            return known
        event = ToolCallEvent(id=call_id, name=name, input=input, **extra)
        if call_id is not None:
            self.calls[call_id] = event
        self.events.append(event)
        return event

    def result(self, call_id: Any, result: Any, is_error: bool = False) -> ToolCallEvent | None:
        known = self.calls.get(call_id) if isinstance(call_id, str) else None
        if known is not None:
            known.result, known.is_error = result, is_error
        return known

    def skill(self, name: str, detected_by: str, call_id: str | None) -> SkillEvent:
        event = SkillEvent(skill=name, detected_by=detected_by, tool_call_id=call_id)
        self.events.append(event)
        return event

    def drop(self, event: TranscriptEvent) -> None:
        self.events = [e for e in self.events if e is not event]

    def add_usage(self, event: UsageEvent) -> None:
        self.usage.append(event)
        self.events.append(event)

    def total_usage(self) -> TokenUsage | None:
        return TokenUsage.from_events(self.usage)


class JsonLinesParser(OutputParser):
    """One JSON object per line; subclasses implement :meth:`event`."""

    def __init__(self, context: ParseContext) -> None:
        super().__init__(context)
        self.t = Transcript()
        self.objects = 0  # JSON objects handed to event()

    def feed(self, line: bytes) -> None:
        read, data = self.json_line(line)
        if read:
            self.dispatch(data if isinstance(data, list) else [data])

    def dispatch(self, items: Iterable[Any]) -> None:
        for data in items:
            if not isinstance(data, dict) or not isinstance(data.get("type"), str):
                self.note(f"line {self.lines} is not an event object: {excerpt(json.dumps(data), 80)}")
                continue
            self.objects += 1
            try:
                self.event(data)
            except Exception as exc:  # a field of an unexpected type: noted, the rest still counts
                self.note(f"line {self.lines} ({data['type']}) could not be read: {type(exc).__name__}: {exc}")

    def skill_md_reads(self, text: Any) -> list[str]:
        """The skills whose ``SKILL.md`` a path or command line names: in any ``skills/`` folder, or in the
        folder the skills were installed in (a ``command`` agent's ``--skills-subdir`` may be named otherwise)."""
        return list(dict.fromkeys(skill_reads(text, (self.context.skills_subdir,)) + skill_reads(text)))

    @abstractmethod
    def event(self, data: dict[str, Any]) -> None:
        """One decoded object (it has a string ``type``)."""
