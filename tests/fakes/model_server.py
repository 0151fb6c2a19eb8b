"""A scripted model server on 127.0.0.1 for the real agent CLIs: Anthropic Messages (Claude Code), OpenAI
Responses (Codex) and Chat Completions (OpenCode), streaming and not, answering by rules on the request.

    from fakes.model_server import Answer, Fail, ModelServer, Usage, after_tool_result, skill_call, skill_listed
    with ModelServer() as model:                        # model.base: http://127.0.0.1:<port>
        model.rule(skill_listed("pdf") & ~skill_loaded("PDF steps"), Answer(tools=(skill_call("claude", "pdf"),)))
        model.rule(after_tool_result(), Answer("Done.", usage=Usage(input=120, output=30)))
        model.rule(prompt_has("FAIL-ME"), Fail(500), name="fails")
        ... run the CLI with model.env("claude") ...
        model.calls                                     # every request read (fakes.model_wire.Call), in order

The first rule whose condition holds answers (a rule given ``times`` stops after that many answers); else
:attr:`ModelServer.default` (an answer saying nothing was scripted). Conditions are :class:`When` objects,
combined with ``&``, ``|`` and ``~``. Replies: :class:`~fakes.model_wire.Answer` (text, tool calls, usage),
:class:`Fail` (an API error status, with ``retry-after``), :class:`Stall` (headers, then nothing until the server
closes or the time passes), :class:`Cut` (a stream ended after some events, without its terminal event), or a
function of the :class:`~fakes.model_wire.Call` returning one of these. ``delay`` on a rule holds each reply back.

The extra requests CLIs make are answered by built-in rules that come after the test's: an untooled request
(OpenCode's session title, Claude Code's helper calls) gets a short title, ``count_tokens`` a count, and
``GET /v1/models`` the model list. :meth:`ModelServer.env` gives each CLI's variables for this server;
:mod:`agent_clis` writes the configuration files (Codex, OpenCode).
"""

from __future__ import annotations

import shlex
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import urlsplit

from .model_wire import Answer, Call, ToolUse, Usage, body, error_body, events, read_call
from .scripted_server import Reply as HttpReply
from .scripted_server import Request, ScriptedServer

__all__ = ["Answer", "Call", "Cut", "Fail", "ModelServer", "Stall", "ToolUse", "Usage", "When", "after_tool_result",
           "always", "made", "mentions", "prompt_has", "skill_call", "skill_listed", "skill_loaded", "tooled",
           "write_call"]

API_KEY = "sk-test-model-server-key"


@dataclass(frozen=True)
class Fail:
    """An API error: ``status`` with the protocol's error body; ``retry_after`` seconds in ``retry-after``
    (and ``retry-after-ms``) when given."""

    status: int = 500
    message: str = "the scripted model failed"
    retry_after: float | None = None


@dataclass(frozen=True)
class Stall:
    """Accept the request, send the headers of a stream, then nothing for ``seconds`` (or until the server
    closes), then close the connection."""

    seconds: float = 3600.0


@dataclass(frozen=True)
class Cut:
    """Stream ``answer`` but close the connection after ``events`` events, before its terminal event."""

    answer: Answer
    events: int = 2


Reply = Answer | Fail | Stall | Cut


class When:
    """A condition on a request; ``&``, ``|`` and ``~`` combine conditions."""

    def __init__(self, test: Callable[[Call], bool], text: str) -> None:
        self.test, self.text = test, text

    def __call__(self, call: Call) -> bool:
        return bool(self.test(call))

    def __and__(self, other: When) -> When:
        return When(lambda c: self(c) and other(c), f"({self.text} and {other.text})")

    def __or__(self, other: When) -> When:
        return When(lambda c: self(c) or other(c), f"({self.text} or {other.text})")

    def __invert__(self) -> When:
        return When(lambda c: not self(c), f"not {self.text}")

    def __repr__(self) -> str:
        return f"When({self.text})"


def always() -> When:
    return When(lambda call: True, "always")


def mentions(text: str) -> When:
    """The model is shown ``text`` anywhere (system, tool descriptions, messages)."""
    return When(lambda call: text in call.text, f"mentions {text!r}")


def prompt_has(text: str) -> When:
    """A user message holds ``text``."""
    return When(lambda call: text in call.user_text, f"prompt has {text!r}")


def tooled() -> When:
    """The request offers tools (a CLI's agent turn, not one of its helper calls)."""
    return When(lambda call: bool(call.tools), "tools offered")


def after_tool_result() -> When:
    """The last message is a tool's result."""
    return When(lambda call: call.last_role == "tool", "after a tool result")


def made(tool: ToolUse) -> When:
    """The model already made this call (same tool and arguments) in this conversation."""
    return When(lambda call: call.made(tool), f"made {tool.name} {tool.arguments}")


def skill_listed(name: str) -> When:
    """The CLI lists a skill called ``name`` among those the model may use: in the system prompt, a tool's
    description or a system reminder (Claude Code), as ``name:`` or ``<name>name</name>``."""
    def listed(call: Call) -> bool:
        shown = "\n".join([call.system, *call.tools.values(), call.user_text])
        return any(form in shown for form in (f"- {name}:", f"<name>{name}</name>", f'"{name}"', f"**{name}**"))
    return When(listed, f"skill {name!r} listed")


def skill_loaded(marker: str) -> When:
    """A tool result holds ``marker`` (a line of the skill's body: the CLI loaded it)."""
    return When(lambda call: any(marker in result for result in call.tool_results) or
                any(marker in text for role, text in call.messages if role == "user"), f"loaded {marker!r}")


def skill_call(cli: str, name: str, skills_subdir: str = "") -> ToolUse:
    """The tool call with which the model invokes skill ``name`` in ``cli``: Claude Code's ``Skill`` tool,
    OpenCode's ``skill`` tool, Codex reading its SKILL.md with its shell tool."""
    if cli == "claude":
        return ToolUse("Skill", {"skill": name})
    if cli == "opencode":
        return ToolUse("skill", {"name": name})
    if cli == "codex":
        return ToolUse("exec_command", {"cmd": f"cat {skills_subdir or '.agents/skills'}/{name}/SKILL.md"})
    raise ValueError(f"no skill call known for {cli!r}")


def write_call(cli: str, path: str, content: str, workdir: str = "") -> ToolUse:
    """The tool call with which the model has ``cli`` write ``content`` to ``path``, relative to ``workdir``
    (Claude Code's and OpenCode's tools take absolute paths: give the folder, see ``Call.workdir``)."""
    full = f"{workdir.rstrip('/')}/{path}" if workdir else path
    if cli == "claude":
        return ToolUse("Write", {"file_path": full, "content": content})
    if cli == "opencode":
        return ToolUse("write", {"filePath": full, "content": content})
    if cli == "codex":
        return ToolUse("exec_command", {"cmd": f"printf '%s' {shlex.quote(content)} > {shlex.quote(path)}"})
    raise ValueError(f"no write call known for {cli!r}")


@dataclass
class Rule:
    when: When
    reply: Reply | Callable[[Call], Reply]
    name: str = ""
    times: int | None = None
    delay: float = 0.0
    used: int = 0


@dataclass
class Record:
    """A request as the server saw it, and the rule that answered it ("" when none did)."""

    call: Call
    rule: str
    query: str = ""
    at: float = field(default_factory=time.monotonic)


class ModelServer(ScriptedServer):
    """See the module docstring. ``key``: requests without ``Authorization: Bearer <key>`` or ``x-api-key: <key>``
    get 401 (None: any key). The HTTP server and its request loop are :class:`~fakes.scripted_server.
    ScriptedServer`'s; this answers by its rules in the wire protocol of each request."""

    def __init__(self, key: str | None = API_KEY) -> None:
        super().__init__(key)
        self.rules: list[Rule] = []
        self.default: Reply = Answer("(nothing was scripted for this request)")
        self.records: list[Record] = []
        self.others: list[tuple[str, str]] = []  # (method, path) of requests to no endpoint of ours
        self._closing = threading.Event()
        self._helpers = [
            Rule(When(lambda call: call.path.endswith("/count_tokens"), "count_tokens"), Answer(), "count_tokens"),
            Rule(~tooled(), Answer("Scripted session", usage=Usage(0, 0)), "untooled helper"),
        ]

    # ---- script ------------------------------------------------------------------------------------------

    def rule(self, when: When, reply: Reply | Callable[[Call], Reply], *, name: str = "", times: int | None = None,
             delay: float = 0.0) -> ModelServer:
        with self._lock:
            self.rules.append(Rule(when, reply, name or when.text, times, delay))
        return self

    @property
    def calls(self) -> list[Call]:
        """Every model request, in order (helper calls included; see :meth:`agent_calls`)."""
        with self._lock:
            return [record.call for record in self.records]

    def agent_calls(self) -> list[Call]:
        """The requests that offered tools: the CLI's agent turns."""
        return [call for call in self.calls if call.tools]

    def answered_by(self, name: str) -> list[Call]:
        with self._lock:
            return [record.call for record in self.records if record.rule == name]

    def env(self, cli: str) -> dict[str, str]:
        """The variables that point ``cli`` at this server (Codex and OpenCode also need the configuration
        :mod:`agent_clis` writes)."""
        key = self.key or API_KEY
        if cli == "claude":
            return {"ANTHROPIC_BASE_URL": self.base, "ANTHROPIC_API_KEY": key,
                    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1"}
        return {"MODEL_SERVER_API_KEY": key}

    # ---- lifetime ----------------------------------------------------------------------------------------

    def close(self) -> None:
        self._closing.set()  # stalled replies end
        super().close()

    def __enter__(self) -> ModelServer:
        self.start()
        return self

    # ---- HTTP --------------------------------------------------------------------------------------------

    def _choose(self, call: Call) -> tuple[Rule | None, Reply]:
        with self._lock:
            for rule in [*self.rules, *self._helpers]:
                if (rule.times is None or rule.used < rule.times) and rule.when(call):
                    rule.used += 1
                    self.records.append(Record(call, rule.name))
                    break
            else:
                self.records.append(Record(call, ""))
                return None, self.default
        reply = rule.reply(call) if callable(rule.reply) else rule.reply
        return rule, reply

    def respond(self, http: BaseHTTPRequestHandler, request: Request) -> None:
        if request.method == "GET":
            return self._get(http)
        self._post(http, request)

    def _get(self, http: BaseHTTPRequestHandler) -> None:
        path = urlsplit(http.path).path
        if path.rstrip("/").endswith("/models"):
            models = [{"id": "scripted-model", "object": "model", "type": "model", "created": 0,
                       "owned_by": "scripted", "display_name": "Scripted", "created_at": "2025-01-01T00:00:00Z"}]
            return self._json(http, 200, {"object": "list", "data": models, "has_more": False})
        with self._lock:
            self.others.append(("GET", http.path))
        self._json(http, 404, {"error": {"message": f"no route {path}", "type": "not_found"}})

    def _post(self, http: BaseHTTPRequestHandler, request: Request) -> None:
        parts = urlsplit(request.path)
        headers = request.headers
        if not parts.path.endswith(("/messages", "/count_tokens", "/responses", "/chat/completions")):
            with self._lock:
                self.others.append(("POST", request.path))
            return self._json(http, 404, {"error": {"message": f"no route {parts.path}", "type": "not_found"}})
        if not isinstance(request.body, dict | None):
            return self._json(http, 400, {"error": {"message": "the body is not JSON", "type": "invalid_request"}})
        call = read_call(parts.path, headers, request.body or {})
        if not self._authorised(headers):
            with self._lock:
                self.records.append(Record(call, "unauthorised", parts.query))
            return self._json(http, 401, error_body(call.protocol, 401, "invalid x-api-key"))
        if call.path.endswith("/count_tokens"):
            with self._lock:
                self.records.append(Record(call, "count_tokens", parts.query))
            return self._json(http, 200, {"input_tokens": max(1, len(call.text) // 4)})
        rule, reply = self._choose(call)
        if rule is not None and rule.delay:
            self._closing.wait(rule.delay)
        self._reply(http, call, reply)

    def _json(self, http: BaseHTTPRequestHandler, status: int, payload: Any,
              headers: dict[str, str] | None = None) -> None:
        self.send(http, HttpReply(status, payload, headers or {}))

    def _reply(self, http: BaseHTTPRequestHandler, call: Call, reply: Reply) -> None:
        try:
            if isinstance(reply, Fail):
                headers = {} if reply.retry_after is None else {
                    "retry-after": f"{reply.retry_after:g}", "retry-after-ms": str(round(reply.retry_after * 1000))}
                self._json(http, reply.status, error_body(call.protocol, reply.status, reply.message), headers)
            elif isinstance(reply, Stall):
                _start_stream(http)
                self._closing.wait(reply.seconds)
                http.close_connection = True
            elif isinstance(reply, Cut):
                _start_stream(http)
                for index, event in enumerate(events(call, reply.answer)):
                    if index >= reply.events:
                        break
                    _chunk(http, event.encode())
                http.close_connection = True  # no terminal chunk: the stream is cut
            elif call.stream:
                _start_stream(http)
                for event in events(call, reply):
                    _chunk(http, event.encode())
                _chunk(http, b"")
            else:
                self._json(http, 200, body(call, reply))
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (its timeout): fine
            http.close_connection = True


def _start_stream(http: BaseHTTPRequestHandler) -> None:
    http.send_response(200)
    http.send_header("content-type", "text/event-stream")
    http.send_header("cache-control", "no-cache")
    http.send_header("transfer-encoding", "chunked")
    http.end_headers()
    http.wfile.flush()


def _chunk(http: BaseHTTPRequestHandler, data: bytes) -> None:
    http.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
    http.wfile.flush()
