"""The three model wire protocols the agent CLIs speak, for :mod:`fakes.model_server`: a request read into one
neutral view (:class:`Call`), and a scripted reply (:class:`Answer`) written back in the request's protocol.

    Anthropic Messages   POST /v1/messages (?beta=true)  JSON or SSE (``"stream": true``)   Claude Code
    OpenAI Responses     POST /v1/responses              SSE (``"stream": true``) or JSON    Codex
    Chat Completions     POST /v1/chat/completions       SSE (``"stream": true``) or JSON    OpenCode

An answer is protocol-neutral: text and/or tool calls and the usage figures; :func:`events` turns it into the
server-sent events (or :func:`body` the JSON body) of the protocol asked.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["Answer", "Call", "ToolUse", "Usage", "body", "error_body", "events", "read_call"]

Protocol = Literal["anthropic", "responses", "chat"]

_ids = itertools.count(1)


@dataclass(frozen=True)
class Usage:
    """Tokens of one model reply. ``input`` is uncached input; ``cache_read`` and ``cache_write`` come on top
    (Anthropic reports them apart; OpenAI counts cached tokens inside its input figure, and has no writes)."""

    input: int = 10
    output: int = 5
    cache_read: int = 0
    cache_write: int = 0


@dataclass(frozen=True)
class ToolUse:
    """A tool call the model makes: the tool's name as the CLI offered it, and its arguments."""

    name: str
    arguments: dict[str, Any]
    id: str = ""

    def with_id(self) -> ToolUse:
        return self if self.id else ToolUse(self.name, self.arguments, f"call_{next(_ids)}")


@dataclass(frozen=True)
class Answer:
    """A model reply: ``text`` and/or ``tools`` (calls), with ``usage``."""

    text: str | None = None
    tools: tuple[ToolUse, ...] = ()
    usage: Usage = field(default_factory=Usage)


@dataclass
class Call:
    """One request a CLI sent to the model, read into what scripts and tests look at.

    ``system``: the system prompt and developer/system messages; ``tools``: the names of the tools offered
    with their descriptions; ``messages``: (role, text) pairs, tool results as role ``tool``, tool calls the
    model made as role ``assistant`` with the call's name and arguments in the text; ``body``: the JSON as sent.
    """

    protocol: Protocol
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    system: str = ""
    tools: dict[str, str] = field(default_factory=dict)
    messages: list[tuple[str, str]] = field(default_factory=list)
    tool_calls: list[tuple[str, str]] = field(default_factory=list)  # (name, arguments) the model already made

    @property
    def model(self) -> str:
        return str(self.body.get("model", ""))

    @property
    def stream(self) -> bool:
        return bool(self.body.get("stream"))

    @property
    def text(self) -> str:
        """Everything the model is shown: system, tool descriptions and every message."""
        return "\n".join([self.system, *self.tools.values(), *(text for _, text in self.messages)])

    @property
    def user_text(self) -> str:
        return "\n".join(text for role, text in self.messages if role == "user")

    @property
    def tool_results(self) -> list[str]:
        return [text for role, text in self.messages if role == "tool"]

    @property
    def workdir(self) -> str:
        """The working folder the CLI tells the model it runs in ("" when it names none)."""
        found = _WORKDIR.search(self.text)
        return found.group(1).strip() if found else ""

    def made(self, tool: ToolUse) -> bool:
        """Whether the model already made this call (same tool, same arguments) in this conversation."""
        for name, arguments in self.tool_calls:
            try:
                same = json.loads(arguments) == tool.arguments
            except ValueError:
                same = False
            if name == tool.name and same:
                return True
        return False

    @property
    def last_role(self) -> str:
        return self.messages[-1][0] if self.messages else ""


# Claude Code: "Primary working directory: X"; OpenCode: "Working directory: X"; Codex: "<cwd>X</cwd>"
_WORKDIR = re.compile(r"(?:[Ww]orking directory: |<cwd>)([^\n<]+)")


# ---- requests -------------------------------------------------------------------------------------------


def _text(content: Any) -> str:
    """The text of a message's content: a string, or a list of blocks (text, input_text, tool_result...)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_text(block) for block in content)
    if isinstance(content, dict):
        for key in ("text", "content", "output"):
            if key in content:
                return _text(content[key])
    return ""


def read_call(path: str, headers: dict[str, str], body: dict[str, Any]) -> Call:
    """The neutral view of a request to one of the three endpoints (``path`` without its query)."""
    if path.endswith("/messages"):
        return _anthropic(Call("anthropic", path, headers, body))
    if path.endswith("/responses"):
        return _responses(Call("responses", path, headers, body))
    return _chat(Call("chat", path, headers, body))


def _anthropic(call: Call) -> Call:
    body = call.body
    call.system = _text(body.get("system", ""))
    call.tools = {t.get("name", ""): t.get("description", "") for t in body.get("tools") or []}
    for message in body.get("messages") or []:
        content = message.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        for block in blocks:
            kind = block.get("type")
            if kind == "tool_result":
                call.messages.append(("tool", _text(block.get("content", ""))))
            elif kind == "tool_use":
                arguments = json.dumps(block.get("input", {}))
                call.tool_calls.append((block.get("name", ""), arguments))
                call.messages.append(("assistant", f"{block.get('name')} {arguments}"))
            elif kind == "text":
                call.messages.append((message.get("role", "user"), block.get("text", "")))
    return call


def _responses(call: Call) -> Call:
    body = call.body
    system = [_text(body.get("instructions", ""))]
    call.tools = {t.get("name", t.get("type", "")): t.get("description", "") for t in body.get("tools") or []}
    items = body.get("input") or []
    for item in [{"role": "user", "content": items}] if isinstance(items, str) else items:
        kind = item.get("type", "message")
        if kind == "message" and item.get("role") in ("developer", "system"):
            system.append(_text(item.get("content")))
        elif kind == "message":
            call.messages.append((item.get("role", "user"), _text(item.get("content"))))
        elif kind in ("function_call", "custom_tool_call", "local_shell_call"):
            arguments = item.get("arguments") or item.get("input") or json.dumps(item.get("action", {}))
            call.tool_calls.append((item.get("name", kind), arguments))
            call.messages.append(("assistant", f"{item.get('name', kind)} {arguments}"))
        elif kind.endswith("_output"):
            call.messages.append(("tool", _text(item.get("output", ""))))
    call.system = "\n".join(s for s in system if s)
    return call


def _chat(call: Call) -> Call:
    body = call.body
    call.tools = {t.get("function", {}).get("name", ""): t.get("function", {}).get("description", "")
                  for t in body.get("tools") or []}
    system: list[str] = []
    for message in body.get("messages") or []:
        role = message.get("role", "user")
        if role in ("system", "developer"):
            system.append(_text(message.get("content")))
            continue
        for tool_call in message.get("tool_calls") or []:
            function = tool_call.get("function", {})
            call.tool_calls.append((function.get("name", ""), function.get("arguments", "")))
            call.messages.append(("assistant", f"{function.get('name')} {function.get('arguments')}"))
        text = _text(message.get("content"))
        if text or role == "tool":
            call.messages.append(("tool" if role == "tool" else role, text))
    call.system = "\n".join(system)
    return call


# ---- replies --------------------------------------------------------------------------------------------


def error_body(protocol: Protocol, status: int, message: str) -> dict[str, Any]:
    if protocol == "anthropic":
        kind = {400: "invalid_request_error", 401: "authentication_error", 429: "rate_limit_error",
                529: "overloaded_error"}.get(status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": message}}
    kind = {401: "invalid_request_error", 429: "rate_limit_exceeded"}.get(status, "server_error")
    return {"error": {"message": message, "type": kind, "code": None, "param": None}}


def body(call: Call, answer: Answer) -> dict[str, Any]:
    """The non-streaming JSON reply."""
    tools = [tool.with_id() for tool in answer.tools]
    usage = answer.usage
    if call.protocol == "anthropic":
        content: list[dict[str, Any]] = [{"type": "text", "text": answer.text}] if answer.text else []
        content += [{"type": "tool_use", "id": t.id, "name": t.name, "input": t.arguments} for t in tools]
        return {"id": f"msg_{next(_ids)}", "type": "message", "role": "assistant", "model": call.model,
                "content": content, "stop_reason": "tool_use" if tools else "end_turn", "stop_sequence": None,
                "usage": _anthropic_usage(usage)}
    if call.protocol == "responses":
        return _response_object(call, _response_items(answer.text, tools), usage, "completed")
    message: dict[str, Any] = {"role": "assistant", "content": answer.text}
    if tools:
        message["tool_calls"] = [{"id": t.id, "type": "function",
                                  "function": {"name": t.name, "arguments": json.dumps(t.arguments)}} for t in tools]
    return {"id": f"chatcmpl-{next(_ids)}", "object": "chat.completion", "created": 1_700_000_000,
            "model": call.model, "choices": [{"index": 0, "message": message,
                                              "finish_reason": "tool_calls" if tools else "stop"}],
            "usage": _chat_usage(usage)}


def events(call: Call, answer: Answer) -> Iterator[str]:
    """The reply as server-sent events (``event:``/``data:`` blocks, each ending with a blank line)."""
    tools = [tool.with_id() for tool in answer.tools]
    if call.protocol == "anthropic":
        yield from _anthropic_events(call, answer.text, tools, answer.usage)
    elif call.protocol == "responses":
        yield from _responses_events(call, answer.text, tools, answer.usage)
    else:
        yield from _chat_events(call, answer.text, tools, answer.usage)


def _sse(data: dict[str, Any], event: str | None = None) -> str:
    return (f"event: {event}\n" if event else "") + f"data: {json.dumps(data)}\n\n"


def _anthropic_usage(usage: Usage) -> dict[str, int]:
    return {"input_tokens": usage.input, "output_tokens": usage.output,
            "cache_read_input_tokens": usage.cache_read, "cache_creation_input_tokens": usage.cache_write}


def _anthropic_events(call: Call, text: str | None, tools: list[ToolUse], usage: Usage) -> Iterator[str]:
    start = {"id": f"msg_{next(_ids)}", "type": "message", "role": "assistant", "model": call.model, "content": [],
             "stop_reason": None, "stop_sequence": None, "usage": {**_anthropic_usage(usage), "output_tokens": 1}}
    yield _sse({"type": "message_start", "message": start}, "message_start")
    index = 0
    if text:
        yield _sse({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
                   "content_block_start")
        for piece in _pieces(text):
            yield _sse({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": piece}},
                       "content_block_delta")
        yield _sse({"type": "content_block_stop", "index": 0}, "content_block_stop")
        index = 1
    for i, tool in enumerate(tools, start=index):
        yield _sse({"type": "content_block_start", "index": i,
                    "content_block": {"type": "tool_use", "id": tool.id, "name": tool.name, "input": {}}},
                   "content_block_start")
        yield _sse({"type": "content_block_delta", "index": i,
                    "delta": {"type": "input_json_delta", "partial_json": json.dumps(tool.arguments)}},
                   "content_block_delta")
        yield _sse({"type": "content_block_stop", "index": i}, "content_block_stop")
    yield _sse({"type": "message_delta", "delta": {"stop_reason": "tool_use" if tools else "end_turn",
                                                   "stop_sequence": None},
                "usage": _anthropic_usage(usage)}, "message_delta")
    yield _sse({"type": "message_stop"}, "message_stop")


def _responses_usage(usage: Usage) -> dict[str, Any]:
    prompt = usage.input + usage.cache_read
    return {"input_tokens": prompt, "input_tokens_details": {"cached_tokens": usage.cache_read},
            "output_tokens": usage.output, "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": prompt + usage.output}


def _response_items(text: str | None, tools: list[ToolUse]) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    if text:
        items.append({"type": "message", "id": f"msg_{next(_ids)}", "status": "completed", "role": "assistant",
                      "content": [{"type": "output_text", "text": text, "annotations": []}]})
    items += [{"type": "function_call", "id": f"fc_{next(_ids)}", "status": "completed", "call_id": t.id,
               "name": t.name, "arguments": json.dumps(t.arguments)} for t in tools]
    return items


def _response_object(call: Call, output: list[dict[str, Any]], usage: Usage | None, status: str) -> dict[str, Any]:
    return {"id": f"resp_{next(_ids)}", "object": "response", "created_at": 1_700_000_000, "status": status,
            "model": call.model, "output": output, "usage": _responses_usage(usage) if usage else None}


def _responses_events(call: Call, text: str | None, tools: list[ToolUse], usage: Usage) -> Iterator[str]:
    created = _response_object(call, [], None, "in_progress")
    yield _sse({"type": "response.created", "response": created}, "response.created")
    items = _response_items(text, tools)
    for index, item in enumerate(items):
        opened = {**item, "status": "in_progress"}
        if item["type"] == "message":
            opened["content"] = []
        yield _sse({"type": "response.output_item.added", "output_index": index, "item": opened},
                   "response.output_item.added")
        if item["type"] == "message":
            for piece in _pieces(item["content"][0]["text"]):
                yield _sse({"type": "response.output_text.delta", "item_id": item["id"], "output_index": index,
                            "content_index": 0, "delta": piece}, "response.output_text.delta")
        yield _sse({"type": "response.output_item.done", "output_index": index, "item": item},
                   "response.output_item.done")
    done = {**_response_object(call, items, usage, "completed"), "id": created["id"]}
    yield _sse({"type": "response.completed", "response": done}, "response.completed")


def _chat_usage(usage: Usage) -> dict[str, Any]:
    prompt = usage.input + usage.cache_read
    return {"prompt_tokens": prompt, "completion_tokens": usage.output, "total_tokens": prompt + usage.output,
            "prompt_tokens_details": {"cached_tokens": usage.cache_read}}


def _chat_events(call: Call, text: str | None, tools: list[ToolUse], usage: Usage) -> Iterator[str]:
    chunk_id = f"chatcmpl-{next(_ids)}"

    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> str:
        return _sse({"id": chunk_id, "object": "chat.completion.chunk", "created": 1_700_000_000,
                     "model": call.model, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
                     **extra})

    yield chunk({"role": "assistant", "content": ""})
    for piece in _pieces(text or ""):
        yield chunk({"content": piece})
    for index, tool in enumerate(tools):
        yield chunk({"tool_calls": [{"index": index, "id": tool.id, "type": "function",
                                     "function": {"name": tool.name, "arguments": json.dumps(tool.arguments)}}]})
    yield chunk({}, "tool_calls" if tools else "stop")
    yield _sse({"id": chunk_id, "object": "chat.completion.chunk", "created": 1_700_000_000, "model": call.model,
                "choices": [], "usage": _chat_usage(usage)})
    yield "data: [DONE]\n\n"


def _pieces(text: str, size: int = 24) -> list[str]:
    """Text streamed in a few deltas, as models do."""
    return [text[i:i + size] for i in range(0, len(text), size)] or [""]
