"""``opencode``: the JSON lines of ``opencode run --format json``.

Each line is ``{type, timestamp, sessionID, part}``:

- ``step_start`` begins a step; ``text`` (``part.text``) is a message; ``reasoning`` a message of role
  ``reasoning``. The final response is the text of the last step that has any (its ``text`` parts joined).
- ``tool_use``: a finished tool call (``part.tool``, ``part.callID``, ``part.state`` with ``status``
  ``completed`` or ``error``, ``input``, ``output``, ``error``). The native ``skill`` tool
  (``state.input.name``) is a skill invocation unless it failed (then a warning says the run went on without
  it); a ``read`` of ``skills/<name>/SKILL.md`` is one too, unless it failed.
- ``step_finish``: ``part.tokens`` (``input`` without cache reads, ``output``, ``reasoning``, counted as
  output, ``cache.read``, ``cache.write``) and ``part.cost``, summed over steps. Its ``total`` is not
  used: builds disagree on whether it counts cache reads, so the total is the sum of the counts.
- ``error`` (``error.data.message`` or ``error.name``) is the agent reporting a failure; ``done`` lists the
  permission requests it rejected (``rejected``), kept as a warning.
- The end: ``done`` (``reason: "idle"``), which current builds print once the session is idle; builds
  without it end with the last step's ``step_finish`` whose ``reason`` is not ``tool-calls`` (``stop``). Output
  that stops before either (inside a step, or after a step that asked for tools) was cut, and the run is an
  error whatever the exit code.
"""

from __future__ import annotations

from typing import Any

from ..output import ParseContext, ParsedOutput, RawOutput
from .common import READ_OF_SKILL_MD, JsonLinesParser, is_count, obj, one_line, usage_event

__all__ = ["OpenCodeParser"]

SKILL_TOOL = "skill tool"


class OpenCodeParser(JsonLinesParser):
    name = "opencode"

    def __init__(self, context: ParseContext) -> None:
        super().__init__(context)
        self.step_texts: list[str] = []  # text parts of the current step
        self.response: str | None = None  # the text of the last step that had any
        self.errors: list[str] = []
        self.done = False  # a done line came
        self.step_open = False  # a step_start no step_finish has closed yet
        self.last_reason: Any = None  # the reason of the last step_finish
        self.steps = 0

    def event(self, data: dict[str, Any]) -> None:
        kind = data["type"]
        part = obj(data.get("part"))
        if kind == "step_start":
            self.step_texts = []
            self.step_open, self.steps = True, self.steps + 1
        elif kind == "text" and isinstance(part.get("text"), str):
            self.t.message(part["text"])
            if part["text"].strip():
                self.step_texts.append(part["text"])
                self.response = "\n".join(self.step_texts)
        elif kind == "reasoning" and isinstance(part.get("text"), str):
            self.t.message(part["text"], "reasoning")
        elif kind == "tool_use":
            self._tool(part)
        elif kind == "step_finish":
            self.step_open, self.last_reason = False, part.get("reason")
            self._usage(part)
        elif kind == "error":
            error = obj(data.get("error"))
            details = obj(error.get("data"))
            self.errors.append(str(details.get("message") or error.get("name") or "an error"))
        elif kind == "done":
            self.done = True
        if kind == "done" and isinstance(data.get("rejected"), list) and data["rejected"]:
            self.note(f"opencode rejected {len(data['rejected'])} permission requests (run it with --auto to allow)")

    def _tool(self, part: dict[str, Any]) -> None:
        state = obj(part.get("state"))
        call_id = part.get("callID") if isinstance(part.get("callID"), str) else None
        tool = str(part.get("tool") or "?")
        tool_input = state.get("input")
        failed = state.get("status") == "error"
        result = state.get("error") if failed else state.get("output")
        self.t.call(call_id, tool, tool_input, result=result, is_error=failed)
        args = obj(tool_input)
        if tool == "skill" and isinstance(args.get("name"), str) and args["name"].strip():
            if not failed:
                self.t.skill(args["name"].strip(), SKILL_TOOL, call_id)
            else:  # the run went on without the skill: say so, or it reads as a skill not chosen
                said = one_line(str(result or ""), 200)
                self.note(f"the skill call for {args['name'].strip()} failed, so the run went on without it"
                          + (f": {said}" if said else " (no message)"))
        elif tool == "read" and (reads := self.skill_md_reads(args.get("filePath") or args.get("file_path"))):
            skill = reads[0]
            if not failed:
                self.t.skill(skill, READ_OF_SKILL_MD, call_id)
            else:
                self.note(f"the read of {skill}'s SKILL.md failed, so the run went on without it")

    def _usage(self, part: dict[str, Any]) -> None:
        tokens = obj(part.get("tokens"))
        cache = obj(tokens.get("cache"))
        said = [tokens.get(key) for key in ("output", "reasoning") if is_count(tokens.get(key))]
        event = usage_event(input_tokens=tokens.get("input"), output_tokens=sum(said) if said else None,
                            cache_read_tokens=cache.get("read"), cache_write_tokens=cache.get("write"),
                            cost=part.get("cost"))
        if event is None:
            self.note(f"line {self.lines} (step_finish) has no token count or cost that can be read")
        else:
            self.t.add_usage(event)

    def finish(self, raw: RawOutput) -> ParsedOutput:
        error = "opencode reported: " + "; ".join(self.errors) if self.errors else None
        return ParsedOutput(transcript=self.t.events, response=self.response, usage=self.t.total_usage(),
                            error=error, unfinished=self._unfinished())

    def _unfinished(self) -> str | None:
        """Why the output is cut, when it is: no ``done`` line, and the last step never finished its loop."""
        if self.done or self.errors:
            return None
        if not self.steps:
            return "the output ended before opencode's first step" + (" (no event)" if not self.objects else "")
        if self.step_open:
            return "the output ended inside a step (no step_finish), before opencode's done line"
        if self.last_reason == "tool-calls":
            return "the output ended after a step that called tools, before opencode's next step and its done line"
        return None
