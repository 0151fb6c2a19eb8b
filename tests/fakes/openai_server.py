"""A fake OpenAI-compatible chat-completions server on 127.0.0.1, for tests of the ``openai`` agent and judge
(and of anything built on them: paired runs, routing tests).

    from fakes.openai_server import FakeOpenAI, completion, tool_call, error
    with FakeOpenAI(key="sk-test") as api:         # api.url is the base URL, http://127.0.0.1:<port>/v1
        api.script(error(429), completion(tool_calls=[tool_call("read_file", {"path": "a.txt"})]),
                   completion("the answer", usage=(10, 5)))
        agent = create_agent("openai", base_url=api.url, model="m", api_key_env="MY_KEY")
        ...
        api.chat_requests()                        # the JSON bodies the server received, in order

``POST /v1/chat/completions`` answers with the next scripted reply (then ``api.handler(request)`` when set);
``GET /v1/models`` lists ``models`` (a reachability check). ``key``: requests without it get 401. See
``scripted_server.py`` for delays and malformed bodies (``Reply(raw=b"...")``).
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from .scripted_server import Reply, Request, ScriptedServer

__all__ = ["FakeOpenAI", "Reply", "Request", "completion", "error", "tool_call"]

_ids = itertools.count(1)


def tool_call(name: str, arguments: dict[str, Any] | str, call_id: str | None = None) -> dict[str, Any]:
    """One entry of ``message.tool_calls``; ``arguments`` as a dict (encoded) or a raw string (maybe not JSON)."""
    return {"id": call_id or f"call_{next(_ids)}", "type": "function",
            "function": {"name": name, "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments)}}


def completion(content: str | None = None, tool_calls: list[dict[str, Any]] | None = None,
               usage: tuple[int, int] | tuple[int, int, int] | None = (10, 5), model: str = "fake-model",
               finish_reason: str | None = None) -> Reply:
    """A chat completion; ``usage`` is (prompt, completion[, cached prompt]) tokens, or None for none."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    body: dict[str, Any] = {
        "id": f"chatcmpl-{next(_ids)}", "object": "chat.completion", "created": 1_700_000_000, "model": model,
        "choices": [{"index": 0, "message": message, "logprobs": None,
                     "finish_reason": finish_reason or ("tool_calls" if tool_calls else "stop")}]}
    if usage is not None:
        body["usage"] = {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": usage[0] + usage[1]}
        if len(usage) > 2:
            body["usage"]["prompt_tokens_details"] = {"cached_tokens": usage[2]}
    return Reply(200, body)


def error(status: int, message: str = "try again later", retry_after_ms: int | None = 1) -> Reply:
    """An API error reply (a 429 or a 5xx is retried by the SDK, after ``retry-after-ms``)."""
    headers = {"retry-after-ms": str(retry_after_ms)} if retry_after_ms is not None else {}
    return Reply(status, {"error": {"message": message, "type": "server_error" if status >= 500 else "rate_limit",
                                    "code": None}}, headers)


class FakeOpenAI(ScriptedServer):
    def __init__(self, key: str | None = None, models: tuple[str, ...] = ("fake-model",)) -> None:
        super().__init__(key)
        self.models = models
        self.get_handler = self._get

    def _get(self, request: Request) -> Reply:
        if request.path.rstrip("/") == "/v1/models":
            return Reply(200, {"object": "list", "data": [{"id": m, "object": "model", "created": 0,
                                                          "owned_by": "fake"} for m in self.models]})
        return Reply(404, {"error": {"message": f"no route {request.path}"}})

    def __enter__(self) -> FakeOpenAI:
        self.start()
        return self

    @property
    def url(self) -> str:
        """The base URL an OpenAI client takes (``.../v1``)."""
        return self.base + "/v1"

    def chat_requests(self) -> list[dict[str, Any]]:
        return [r.body for r in self.posts() if r.path.endswith("/chat/completions")]
