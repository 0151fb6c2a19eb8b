"""``claude``: Claude Code's ``-p --output-format stream-json --verbose`` output, and its ``json`` form.

Lines are dispatched on ``type`` (never on key order):

- ``assistant``: ``message.content`` blocks: ``text`` (a message), ``tool_use`` (a tool call; a ``Skill``
  call naming ``input.skill`` (``input.command`` in 2.0 versions) is a skill event, as is a ``Read`` of
  ``.claude/skills/<name>/SKILL.md``).
  One API message may come as several lines with the same ``message.id``, each repeating a provisional
  ``usage``: only the last usage of each message counts. Lines from a subagent (``parent_tool_use_id``)
  are kept, marked with that id, and never give the final text.
- ``user``: ``tool_result`` blocks complete their call (``content``, ``is_error``). A ``Skill`` call (or a
  ``Read`` of a ``SKILL.md``) whose result is an error (the skill was refused, failed to load, or the file is
  not there) is not a skill invocation; a warning says so, since the run then went on without the skill.
- ``result``: the final text (``result``; when it is empty, the last assistant text), usage and
  ``total_cost_usd``; ``is_error`` or a subtype other than ``success`` is the agent reporting a failure
  (``errors``, else the ``result`` text, says what).

Usage: ``modelUsage`` when the result line has it, one usage event per model (``inputTokens``,
``outputTokens``, ``cacheReadInputTokens``, ``cacheCreationInputTokens``, ``costUSD``), so the totals are the
sums over every model, helper models included: the figures ``total_cost_usd`` covers (``result.usage`` counts
the main model only, and in 2.0 versions lower than ``modelUsage`` does). Without it, ``result.usage``
(uncached input, cache reads and writes, output). Without either, the messages' usage (the last of each
message), marked ``partial``: a message's usage is provisional (2.0 versions send output counts below the
true figure), so it is a lower bound, never a measurement.

The ``result`` line is Claude Code's end event: output without one was cut (the CLI killed, a crash, a pipe
closed), and the run is an error whatever the exit code, its last assistant text a remark made along the way,
no answer. ``--output-format json`` prints one result object, or (with ``--verbose``) a JSON array of every
message ending with it: both are read.
"""

from __future__ import annotations

from typing import Any

from ...formats.workspace import SkillEvent, UsageEvent
from ..output import ParseContext, ParsedOutput, RawOutput, read_json
from ..usage import TokenUsage
from .common import READ_OF_SKILL_MD, JsonLinesParser, as_cost, as_int, obj, one_line, skill_read, text_of, usage_event

__all__ = ["ClaudeParser"]

WHOLE_JSON_LIMIT = 64 << 20  # a stdout that is one JSON document is read whole up to this size
SKILL_TOOL = "Skill tool call"


def _usage_event(usage: Any, cost: Any = None, model: Any = None) -> UsageEvent | None:
    usage = obj(usage)
    event = usage_event(input_tokens=usage.get("input_tokens"), output_tokens=usage.get("output_tokens"),
                        cache_read_tokens=usage.get("cache_read_input_tokens"),
                        cache_write_tokens=usage.get("cache_creation_input_tokens"), cost=cost)
    return event.model_copy(update={"model": model}) if event is not None and _is_name(model) else event


def _model_usage(models: Any) -> list[UsageEvent]:
    """``modelUsage``: one usage event per model that holds a readable count."""
    events = []
    for name, usage in obj(models).items():
        usage = obj(usage)
        event = usage_event(input_tokens=usage.get("inputTokens"), output_tokens=usage.get("outputTokens"),
                            cache_read_tokens=usage.get("cacheReadInputTokens"),
                            cache_write_tokens=usage.get("cacheCreationInputTokens"), cost=usage.get("costUSD"))
        if event is not None and _is_name(name):
            events.append(event.model_copy(update={"model": name}))
    return events


def _is_name(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


class ClaudeParser(JsonLinesParser):
    name = "claude"

    def __init__(self, context: ParseContext) -> None:
        super().__init__(context)
        self.subdirs = tuple(dict.fromkeys((".claude/skills", context.skills_subdir)))
        self.message_usage: dict[str, tuple[Any, Any]] = {}  # message id -> (model, its last provisional usage)
        self.skill_calls: dict[str, SkillEvent] = {}  # Skill (or SKILL.md Read) tool_use id -> its skill event
        self.result: dict[str, Any] | None = None
        self.denied: list[str] = []

    def event(self, data: dict[str, Any]) -> None:
        kind = data["type"]
        if kind == "assistant":
            self._assistant(data)
        elif kind == "user":
            self._user(data)
        elif kind == "result":
            self.result = data

    def _assistant(self, data: dict[str, Any]) -> None:
        message = obj(data.get("message"))
        parent = data.get("parent_tool_use_id")
        marks = {"parent_tool_use_id": parent} if parent else {}
        if isinstance(message.get("id"), str) and "usage" in message:
            self.message_usage[message["id"]] = (message.get("model"), message["usage"])
        for block in message.get("content") or []:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                self.t.message(block["text"], "subagent" if parent else "assistant")
            elif block.get("type") == "tool_use":
                self._tool_use(block, marks)

    def _tool_use(self, block: dict[str, Any], marks: dict[str, Any]) -> None:
        call_id = block.get("id") if isinstance(block.get("id"), str) else None
        name = str(block.get("name") or "?")
        tool_input = block.get("input")
        self.t.call(call_id, name, tool_input, **marks)
        args = tool_input if isinstance(tool_input, dict) else {}
        skill = args.get("skill") if isinstance(args.get("skill"), str) else args.get("command")
        if name == "Skill" and isinstance(skill, str) and skill.strip().lstrip("/"):
            event = self.t.skill(skill.strip().lstrip("/"), SKILL_TOOL, call_id)
            if call_id is not None:
                self.skill_calls[call_id] = event
        elif name == "Read" and (skill := skill_read(args.get("file_path"), self.subdirs)):
            event = self.t.skill(skill, READ_OF_SKILL_MD, call_id)
            if call_id is not None:
                self.skill_calls[call_id] = event

    def _user(self, data: dict[str, Any]) -> None:
        message = obj(data.get("message"))
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                is_error = block.get("is_error") is True
                call_id = block.get("tool_use_id")
                self.t.result(call_id, text_of(block.get("content")), is_error)
                if is_error and isinstance(call_id, str) and (refused := self.skill_calls.get(call_id)):
                    self.t.drop(refused)
                    said = one_line(text_of(block.get("content")).replace("<tool_use_error>", "")
                                    .replace("</tool_use_error>", ""), 200)
                    what = (f"Skill call for {refused.skill}" if refused.detected_by == SKILL_TOOL
                            else f"read of {refused.skill}'s SKILL.md")
                    self.note(f"the {what} failed, so the run went on without it"
                              + (f": {said}" if said else " (no message)"))

    def finish(self, raw: RawOutput) -> ParsedOutput:
        if self.objects == 0 and 0 < raw.size <= WHOLE_JSON_LIMIT:
            self._whole_document(raw)
        result = self.result
        if result is None:
            return self._without_result()
        response = result.get("result") if isinstance(result.get("result"), str) else None
        if not (response and response.strip()):
            response = self.t.last_text
        usage = self._reported_usage(result)

        denials = result.get("permission_denials")
        if isinstance(denials, list) and denials:
            names = [str(d.get("tool_name", "?")) if isinstance(d, dict) else "?" for d in denials]
            self.note(f"Claude Code denied {len(denials)} tool calls: {', '.join(names[:10])}")
        error = None
        subtype = result.get("subtype")
        if result.get("is_error") is True or (isinstance(subtype, str) and subtype != "success"):
            errors = result.get("errors")
            said = result["result"].strip() if isinstance(result.get("result"), str) else ""
            detail = "; ".join(str(e) for e in errors) if isinstance(errors, list) and errors else said
            turns = as_int(result.get("num_turns"))
            what = subtype if isinstance(subtype, str) and subtype != "success" else "an error"
            after = f" after {turns} turn{'s' if turns != 1 else ''}" if turns else ""
            error = f"Claude Code reported {what}{after}" + (f": {one_line(detail)}" if detail else "")
            response = None if result.get("is_error") is True else response
        return ParsedOutput(transcript=self.t.events, response=response, usage=usage, error=error)

    def _reported_usage(self, result: dict[str, Any]) -> TokenUsage | None:
        """The usage the result line reports: per model from ``modelUsage``, else ``usage``, else the messages'
        (partial); the cost is ``total_cost_usd`` (it covers every model)."""
        cost = as_cost(result.get("total_cost_usd"))
        if models := _model_usage(result.get("modelUsage")):
            for event in models:
                self.t.add_usage(event)
            usage = self.t.total_usage()
            if usage is not None and cost is not None:
                usage.cost_usd = cost
            return usage
        if (reported := _usage_event(result.get("usage"))) is not None:
            self.t.add_usage(reported.model_copy(update={"cost_usd": cost}))
            return self.t.total_usage()
        return self._message_usage(cost)

    def _without_result(self) -> ParsedOutput:
        events = f"after {self.objects} event{'s' if self.objects != 1 else ''}" if self.objects else "with no event"
        return ParsedOutput(transcript=self.t.events, response=self.t.last_text, usage=self._message_usage(),
                            unfinished=f"the output ended {events}, before Claude Code's result line")

    def _message_usage(self, cost: float | None = None) -> TokenUsage | None:
        """The usage summed over the API messages (the last usage of each), when the result line gives none:
        partial, as a message's usage is provisional."""
        for model, usage in self.message_usage.values():
            if (event := _usage_event(usage, model=model)) is not None:
                self.t.add_usage(event)
        if not self.t.usage and cost is not None:
            self.t.add_usage(UsageEvent(cost_usd=cost))
        total = self.t.total_usage()
        if total is not None:
            total.measurement = "partial"
            total.cost_usd = cost if cost is not None else total.cost_usd
        return total

    def _whole_document(self, raw: RawOutput) -> None:
        """``--output-format json``, pretty-printed: the stdout as one JSON object or array."""
        try:
            data = read_json(raw.read_bytes())
        except ValueError:
            return
        self.problems.clear()
        self.problem_count = 0
        self.dispatch(data if isinstance(data, list) else [data])
