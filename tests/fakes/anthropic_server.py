"""A fake Anthropic Messages API on 127.0.0.1, for tests of the ``anthropic`` judge.

    from fakes.anthropic_server import FakeAnthropic, message
    with FakeAnthropic(key="sk-ant-test") as api:    # api.base is the base URL the SDK takes
        api.script(message(tool_input={"score": 0.8, "reason": "ok"}), message(text='{"score": 1}'))
        ... api.message_requests()                   # the JSON bodies of POST /v1/messages, in order

``POST /v1/messages`` answers with the next scripted reply (then ``api.handler``); ``GET /v1/models`` lists one
model. See ``scripted_server.py`` for errors, delays and malformed bodies.
"""

from __future__ import annotations

import itertools
from typing import Any

from .scripted_server import Reply, Request, ScriptedServer

__all__ = ["FakeAnthropic", "Reply", "error", "message"]

_ids = itertools.count(1)


def message(text: str | None = None, tool_input: dict[str, Any] | None = None, usage: tuple[int, int] = (50, 20),
            stop_reason: str | None = None) -> Reply:
    """A Messages API reply with a text block and/or a tool_use block."""
    content: list[dict[str, Any]] = []
    if text is not None:
        content.append({"type": "text", "text": text})
    if tool_input is not None:
        content.append({"type": "tool_use", "id": f"toolu_{next(_ids)}", "name": "record_verdict", "input": tool_input})
    return Reply(200, {"id": f"msg_{next(_ids)}", "type": "message", "role": "assistant", "model": "fake-claude",
                       "content": content, "stop_reason": stop_reason or ("tool_use" if tool_input else "end_turn"),
                       "stop_sequence": None, "usage": {"input_tokens": usage[0], "output_tokens": usage[1]}})


def error(status: int, message: str = "overloaded", retry_after_ms: int | None = 1) -> Reply:
    kind = {400: "invalid_request_error", 429: "rate_limit_error", 529: "overloaded_error"}.get(status, "api_error")
    headers = {"retry-after-ms": str(retry_after_ms)} if retry_after_ms is not None else {}
    return Reply(status, {"type": "error", "error": {"type": kind, "message": message}}, headers)


class FakeAnthropic(ScriptedServer):
    def __init__(self, key: str | None = None) -> None:
        super().__init__(key)
        self.get_handler = self._get

    def _get(self, request: Request) -> Reply:
        if request.path.startswith("/v1/models"):
            return Reply(200, {"data": [{"type": "model", "id": "fake-claude", "display_name": "Fake",
                                         "created_at": "2025-01-01T00:00:00Z"}],
                               "has_more": False, "first_id": "fake-claude", "last_id": "fake-claude"})
        return Reply(404, {"type": "error", "error": {"type": "not_found_error", "message": request.path}})

    def __enter__(self) -> FakeAnthropic:
        self.start()
        return self

    def message_requests(self) -> list[dict[str, Any]]:
        return [r.body for r in self.posts() if r.path.startswith("/v1/messages")]
