"""``codex``: the JSON lines of ``codex exec --json``.

- ``item.started`` / ``item.updated`` / ``item.completed`` carry an ``item`` (``id``, ``type``); the same id
  seen again updates the same event. ``agent_message`` (``text``) is a message, and the last completed
  one is the final response (earlier ones are preambles); ``reasoning`` is a message of role
  ``reasoning``; ``command_execution`` (``command``, ``aggregated_output``, ``exit_code``, ``status``),
  ``file_change`` (``changes``), ``mcp_tool_call`` (``server``, ``tool``, ``arguments``, ``result``),
  ``web_search`` (``query``) and ``collab_tool_call`` are tool calls named by their type (an MCP call as
  ``mcp:<server>/<tool>``); a failed or declined one, or a command with a non-zero exit code, is an error.
  ``error`` items are warnings.
- Codex has no skill event: a command that names ``skills/<name>/SKILL.md`` (``sed -n '1,200p' ...``,
  ``cat``, ``Get-Content``) is the skill's invocation, detected as a read of ``SKILL.md`` (every skill a
  command names: one command may read several), unless the command failed (a warning says so).
- ``turn.completed`` ``usage`` is the thread's running total (Codex sends what it counted so far, not the
  turn's own tokens), so the last one counts: ``input_tokens`` includes the cached ones
  (``cached_input_tokens``, counted as cache reads) and any ``cache_write_input_tokens``; reasoning tokens
  are part of ``output_tokens``. Codex reports no cost.
- ``turn.failed`` (``error.message``) is the agent reporting a failure, and the turn's messages are no
  response. An ``error`` event (``message``) is one too, unless a ``turn.completed`` follows it: Codex also
  sends ``error`` events for trouble it recovers from (``Reconnecting... 1/5``), kept as warnings.

Builds of late 2025 said ``item_type`` for ``type`` and ``assistant_message`` for ``agent_message``: both
are read. Lines that are not JSON (a wrapper merging stderr into stdout) are skipped as warnings.
"""

from __future__ import annotations

from typing import Any

from ...formats.workspace import SkillEvent, UsageEvent
from ..output import ParseContext, ParsedOutput, RawOutput
from .common import READ_OF_SKILL_MD, JsonLinesParser, as_int, is_count, obj, usage_event

__all__ = ["CodexParser"]

TOOL_ITEMS = ("command_execution", "file_change", "mcp_tool_call", "web_search", "collab_tool_call")


class CodexParser(JsonLinesParser):
    name = "codex"

    def __init__(self, context: ParseContext) -> None:
        super().__init__(context)
        self.response: str | None = None
        self.failures: list[str] = []  # turn.failed messages
        self.pending: list[str] = []  # error events no turn.completed has followed (yet)
        self.usage: UsageEvent | None = None  # the last turn.completed's (a running total)
        self.skill_seen: dict[tuple[str | None, str], SkillEvent] = {}  # (item id, skill) -> its skill event

    def event(self, data: dict[str, Any]) -> None:
        kind = data["type"]
        if kind.startswith("item.") and isinstance(data.get("item"), dict):
            self._item(data["item"], completed=kind == "item.completed")
        elif kind == "turn.completed":
            usage = obj(data.get("usage"))
            total_in = usage.get("input_tokens")
            cached, written = usage.get("cached_input_tokens"), usage.get("cache_write_input_tokens")
            uncached = max(as_int(total_in) - as_int(cached) - as_int(written), 0) if is_count(total_in) else None
            event = usage_event(input_tokens=uncached, output_tokens=usage.get("output_tokens"),
                                cache_read_tokens=cached, cache_write_tokens=written)
            if event is None:
                self.note(f"line {self.lines} (turn.completed) has no token count that can be read")
            else:
                self.usage = event
            for message in self.pending:  # it went on after them: they were not fatal
                self.note(f"codex reported, then went on: {message}")
            self.pending = []
        elif kind == "turn.failed":
            error = data.get("error")
            self.failures.append(str(error.get("message") if isinstance(error, dict) else error))
        elif kind == "error":
            self.pending.append(str(data.get("message")))

    def _item(self, item: dict[str, Any], completed: bool) -> None:
        item_id = item.get("id") if isinstance(item.get("id"), str) else None
        kind = item.get("type") or item.get("item_type")
        if kind in ("agent_message", "assistant_message"):
            if completed and isinstance(item.get("text"), str):
                self.t.message(item["text"])
                if item["text"].strip():
                    self.response = item["text"]
        elif kind == "reasoning":
            if completed and isinstance(item.get("text"), str):
                self.t.message(item["text"], "reasoning")
        elif kind in TOOL_ITEMS:
            self._tool(item_id, kind, item)
        elif kind == "error" and completed:
            self.note(f"codex reported: {item.get('message')}")

    def _tool(self, item_id: str | None, kind: str, item: dict[str, Any]) -> None:
        status = item.get("status")
        tool_input: Any
        if kind == "command_execution":
            name, tool_input, result = kind, {"command": item.get("command")}, item.get("aggregated_output")
        elif kind == "mcp_tool_call":
            name = f"mcp:{item.get('server')}/{item.get('tool')}"
            tool_input, result = item.get("arguments"), item.get("result") or item.get("error")
        else:
            name = kind
            tool_input = {key: value for key, value in item.items() if key not in ("id", "type", "item_type", "status")}
            result = None
        exit_code = item.get("exit_code")
        is_error = status in ("failed", "declined") or (isinstance(exit_code, int) and exit_code != 0)
        self.t.call(item_id, name, tool_input, **({"result": result} if result not in (None, "") else {}),
                    is_error=is_error)
        for skill in self.skill_md_reads(item.get("command")) if kind == "command_execution" else []:
            seen = self.skill_seen.get((item_id, skill))
            if is_error:  # the file was not read (a started command's skill event is taken back)
                if seen is not None:
                    self.t.drop(seen)
                self.note(f"the command reading {skill}'s SKILL.md failed, so the run went on without it")
            elif seen is None:
                event = self.t.skill(skill, READ_OF_SKILL_MD, item_id)
                if item_id is not None:
                    self.skill_seen[(item_id, skill)] = event

    def finish(self, raw: RawOutput) -> ParsedOutput:
        if self.usage is not None:
            self.t.add_usage(self.usage)
        errors = self.failures + self.pending
        # a failed turn's messages are no answer (Codex itself gives none then)
        response = None if self.failures else self.response
        return ParsedOutput(transcript=self.t.events, response=response, usage=self.t.total_usage(),
                            error="codex reported: " + "; ".join(dict.fromkeys(errors)) if errors else None)
