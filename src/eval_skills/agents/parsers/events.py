"""``events``: our own JSON-lines format, one :data:`~eval_skills.formats.workspace.TranscriptEvent` per line.

Line types: ``message`` (``role``, ``text``), ``tool_call`` (``id``, ``name``, ``input``, ``result``,
``is_error``; a later line with the same ``id`` completes the earlier one), ``skill`` (``skill``,
``detected_by``, ``tool_call_id``), ``usage`` (``input_tokens``, ``output_tokens``, ``cache_read_tokens``,
``cache_write_tokens``, ``total_tokens``, ``cost_usd``; summed) and ``final`` (``text``: the response; the
last one wins). Blank lines are skipped; a line that is not JSON or not a valid event is a noted problem.
There is no response without a ``final`` line.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from pydantic import TypeAdapter, ValidationError

from ...formats.workspace import FinalEvent, ToolCallEvent, TranscriptEvent, UsageEvent
from ...procs import excerpt
from ..output import OutputParser, ParsedOutput, RawOutput
from ..usage import TokenUsage

__all__ = ["EventsParser"]


@cache
def _events() -> TypeAdapter[Any]:
    return TypeAdapter(TranscriptEvent)


class EventsParser(OutputParser):
    name = "events"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.transcript: list[TranscriptEvent] = []
        self.calls: dict[str, ToolCallEvent] = {}
        self.usage: list[UsageEvent] = []
        self.response: str | None = None

    def feed(self, line: bytes) -> None:
        read, data = self.json_line(line)
        if not read:
            return
        line = line.strip()
        try:
            event = _events().validate_python(data)
        except ValidationError as exc:
            error = exc.errors()[0]
            where = ".".join(str(p) for p in error["loc"]) or "line"
            self.note(f"line {self.lines} is not an event ({where}: {error['msg']}): {excerpt(line, 80)}")
            return
        if isinstance(event, ToolCallEvent) and event.id is not None:
            earlier = self.calls.get(event.id)
            if earlier is not None:  # the result of a call announced before
                for key in event.model_fields_set - {"type", "id"}:
                    setattr(earlier, key, getattr(event, key))
                return
            self.calls[event.id] = event
        elif isinstance(event, UsageEvent):
            if not event.reported:
                self.note(f"line {self.lines} (usage) holds no token count or cost")
            self.usage.append(event)
        elif isinstance(event, FinalEvent):
            self.response = event.text
        self.transcript.append(event)

    def finish(self, raw: RawOutput) -> ParsedOutput:
        return ParsedOutput(transcript=self.transcript, response=self.response,
                            usage=TokenUsage.from_events(self.usage))
