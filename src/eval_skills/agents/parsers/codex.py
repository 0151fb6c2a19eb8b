"""``codex``: the JSON lines of ``codex exec --json``.

- ``item.started`` / ``item.updated`` / ``item.completed`` carry an ``item`` (``id``, ``type``); the same id
  seen again updates the same event. ``agent_message`` (``text``) is a message, and the last completed
  one is the final response (earlier ones are preambles); ``reasoning`` is a message of role
  ``reasoning``; ``command_execution`` (``command``, ``aggregated_output``, ``exit_code``, ``status``),
  ``file_change`` (``changes``), ``mcp_tool_call`` (``server``, ``tool``, ``arguments``, ``result``),
  ``web_search`` (``query``) and ``collab_tool_call`` are tool calls named by their type (an MCP call as
  ``mcp:<server>/<tool>``); a failed or declined one, or a command with a non-zero exit code, is an error.
  ``error`` items are warnings.
- Plan mode: a ``plan`` item (``text``, streamed before as ``item.plan.delta`` ``{item_id, delta}``) is a
  message of role ``plan``, and, as Codex itself does, the response when the turn gave no agent message (a
  warning says so); a ``todo_list`` (``items[{text, completed}]``) is a message of role ``plan`` once
  completed; ``request_user_input`` (``call_id``, ``questions[{id, header, question}]``) is a tool call that a
  non-interactive run cannot answer: a warning says so, and a run that then ends without a response is an
  error saying Codex asked for input. A run that ends with a plan being written or a to-do list and no
  answer says that too, never just "no final response".
- Codex has no skill event: a command that names ``skills/<name>/SKILL.md`` (``sed -n '1,200p' ...``,
  ``cat``, ``Get-Content``) is the skill's invocation, detected as a read of ``SKILL.md`` (every skill a
  command names: one command may read several), unless the command failed (a warning says so).
- ``turn.completed`` ``usage`` is the thread's running total (Codex sends what it counted so far, not the
  turn's own tokens), so the last one counts: ``input_tokens`` includes the cached ones
  (``cached_input_tokens``, counted as cache reads) and any ``cache_write_input_tokens``; reasoning tokens
  are part of ``output_tokens``. Codex reports no cost.
- ``turn.completed`` and ``turn.failed`` end a turn: output that stops inside a turn (after ``turn.started``,
  or with no turn at all) was cut, and the run is an error whatever the exit code.
- ``turn.failed`` (``error.message``) is the agent reporting a failure, and the turn's messages are no
  response. An ``error`` event (``message``) is one too, unless a ``turn.completed`` follows it: Codex also
  sends ``error`` events for trouble it recovers from (``Reconnecting... 1/5``), kept as warnings. Its retry
  notices are never the reported error when a real one came: ``unexpected status 401 Unauthorized: ...``
  after ``Reconnecting... 5/5`` is reported alone, the retries as a warning.

Builds of late 2025 said ``item_type`` for ``type`` and ``assistant_message`` for ``agent_message``: both
are read. Lines that are not JSON (a wrapper merging stderr into stdout) are skipped as warnings.
"""

from __future__ import annotations

import re
from typing import Any

from ...formats.workspace import SkillEvent, UsageEvent
from ..output import ParseContext, ParsedOutput, RawOutput
from .common import READ_OF_SKILL_MD, JsonLinesParser, as_int, is_count, obj, one_line, usage_event

__all__ = ["CodexParser"]

TOOL_ITEMS = ("command_execution", "file_change", "mcp_tool_call", "web_search", "collab_tool_call")
RETRY_NOTICE = re.compile(r"\s*Reconnecting\.\.\.\s*\d+\s*/\s*\d+")  # Codex retrying a request
END_EVENTS = "turn.completed or turn.failed"


class CodexParser(JsonLinesParser):
    name = "codex"

    def __init__(self, context: ParseContext) -> None:
        super().__init__(context)
        self.response: str | None = None
        self.failures: list[str] = []  # turn.failed messages
        self.pending: list[str] = []  # error events no turn.completed has followed (yet)
        self.usage: UsageEvent | None = None  # the last turn.completed's (a running total)
        self.skill_seen: dict[tuple[str | None, str], SkillEvent] = {}  # (item id, skill) -> its skill event
        self.in_turn = False  # a turn.started no turn.completed or turn.failed has ended yet
        self.turns_ended = 0
        self.plan: str | None = None  # the last completed plan item's text (plan mode)
        self.plan_deltas: dict[str, str] = {}  # plan item id -> its streamed text so far
        self.todo: list[Any] = []  # the last to-do list seen
        self.questions: list[str] = []  # what request_user_input asked

    def event(self, data: dict[str, Any]) -> None:
        kind = data["type"]
        if kind == "item.plan.delta":
            item_id = str(data.get("item_id"))
            self.plan_deltas[item_id] = self.plan_deltas.get(item_id, "") + str(data.get("delta") or "")
        elif kind.startswith("item.") and isinstance(data.get("item"), dict):
            self._item(data["item"], completed=kind == "item.completed")
        elif kind == "request_user_input":
            self._request_user_input(data)
        elif kind == "turn.started":
            self.in_turn = True
        elif kind == "turn.completed":
            self.in_turn, self.turns_ended = False, self.turns_ended + 1
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
            self.in_turn, self.turns_ended = False, self.turns_ended + 1
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
        elif kind == "plan":
            said = item.get("text")
            text = said if isinstance(said, str) else self.plan_deltas.get(str(item_id), "")
            if completed and text.strip():
                self.t.message(text, "plan")
                self.plan = text
        elif kind == "todo_list" and isinstance(item.get("items"), list):
            self.todo = item["items"]
            if completed and (steps := _todo_text(self.todo)):
                self.t.message(steps, "plan")
        elif kind in TOOL_ITEMS:
            self._tool(item_id, kind, item)
        elif kind == "error" and completed:
            self.note(f"codex reported: {item.get('message')}")

    def _request_user_input(self, data: dict[str, Any]) -> None:
        questions = [obj(q) for q in data.get("questions") or [] if isinstance(q, dict)]
        asked = [str(q.get("question") or q.get("header") or q.get("id") or "?") for q in questions]
        self.questions += asked
        call_id = data.get("call_id") if isinstance(data.get("call_id"), str) else None
        self.t.call(call_id, "request_user_input", {"questions": questions},
                    result="not answered: a non-interactive run cannot answer", is_error=True)
        self.note("codex asked for user input (plan mode), which a non-interactive run cannot give: "
                  + one_line("; ".join(asked) or "no question text", 200))

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
        error = self._error()
        # a failed turn's messages are no answer (Codex itself gives none then)
        response = None if self.failures else self.response
        if response is None and self.plan is not None and not self.failures and self.turns_ended:
            response = self.plan  # what Codex itself gives as its last message in plan mode
            self.note("codex gave a plan (plan mode) and no message: the plan is the response")
        unfinished = None
        if self.in_turn or not self.turns_ended:
            where = "inside a turn" if self.in_turn else "before any turn"
            unfinished = f"the output ended {where}, before codex's {END_EVENTS}"
        if error is None and response is None and unfinished is None:
            error = self._no_response()
        if unfinished and (planning := self._planning()):
            unfinished += f" ({planning})"
        return ParsedOutput(transcript=self.t.events, response=response, usage=self.t.total_usage(),
                            error=error, unfinished=unfinished)

    def _error(self) -> str | None:
        """The failure Codex reported: its real messages, without the retry notices that came before them
        (those are a warning), or the last notice when nothing else came."""
        errors = list(dict.fromkeys(self.failures + self.pending))
        if not errors:
            return None
        retries = [e for e in errors if RETRY_NOTICE.match(e)]
        real = [e for e in errors if not RETRY_NOTICE.match(e)]
        if real and retries:
            times = "once" if len(retries) == 1 else f"{len(retries)} times"
            self.note(f"codex retried {times} before failing (last: {one_line(retries[-1], 200)})")
        return "codex reported: " + "; ".join(real or retries[-1:])

    def _planning(self) -> str | None:
        """What the run was doing in plan mode when it stopped, said in a few words (None: it was not)."""
        if self.questions:
            return ("codex asked for user input (plan mode), which a non-interactive run cannot give: "
                    + one_line("; ".join(self.questions), 200))
        if self.plan_deltas and self.plan is None:
            return f"codex was writing a plan (plan mode): {one_line(list(self.plan_deltas.values())[-1], 120)}"
        if self.todo:
            done = sum(obj(step).get("completed") is True for step in self.todo)
            return f"codex was working through a to-do list ({done} of {len(self.todo)} steps done)"
        return None

    def _no_response(self) -> str | None:
        planning = self._planning()
        return f"codex gave no final message: {planning}" if planning else None


def _todo_text(items: list[Any]) -> str:
    steps = [obj(step) for step in items]
    return "\n".join(f"- [{'x' if step.get('completed') is True else ' '}] {step.get('text', '')}" for step in steps)
