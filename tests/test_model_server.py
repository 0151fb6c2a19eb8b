"""The scripted model server the end-to-end tests put behind the real CLIs: each protocol's replies (JSON and
server-sent events), rules, errors, stalls and cut streams, and the record of what was asked. Real HTTP."""

from __future__ import annotations

import http.client
import json
import socket
import time

import pytest
from fakes.model_server import (
    API_KEY,
    Answer,
    Cut,
    Fail,
    ModelServer,
    Stall,
    ToolUse,
    Usage,
    after_tool_result,
    prompt_has,
    skill_listed,
)

REQUESTS = {
    "anthropic": ("/v1/messages?beta=true", {"model": "m", "system": "You can use skills:\n- pdf: reads PDFs",
                                              "tools": [{"name": "Skill", "description": "loads a skill"}],
                                              "messages": [{"role": "user", "content": "read a.pdf"}]}),
    "responses": ("/v1/responses", {"model": "m", "instructions": "be brief\n- pdf: reads PDFs",
                                    "tools": [{"type": "function", "name": "exec_command", "description": "run"}],
                                    "input": [{"type": "message", "role": "user",
                                               "content": [{"type": "input_text", "text": "read a.pdf"}]}]}),
    "chat": ("/v1/chat/completions", {"model": "m", "tools": [{"type": "function", "function": {
        "name": "skill", "description": "<available_skills><name>pdf</name></available_skills>"}}],
        "messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": "read a.pdf"}]}),
}


def post(server: ModelServer, path: str, body: dict, key: str = API_KEY, timeout: float = 10):
    conn = http.client.HTTPConnection("127.0.0.1", int(server.base.rsplit(":", 1)[1]), timeout=timeout)
    conn.request("POST", path, json.dumps(body), {"content-type": "application/json", "x-api-key": key,
                                                  "authorization": f"Bearer {key}"})
    return conn.getresponse()


def sse(data: bytes) -> list[dict]:
    return [json.loads(line[6:]) for line in data.decode().splitlines()
            if line.startswith("data: ") and line != "data: [DONE]"]


@pytest.mark.parametrize("protocol", sorted(REQUESTS))
def test_each_protocol_streams_text_tool_calls_and_usage(protocol: str) -> None:
    path, body = REQUESTS[protocol]
    with ModelServer() as server:
        server.rule(skill_listed("pdf") & ~after_tool_result(),
                    Answer("Reading.", (ToolUse("Skill", {"skill": "pdf"}, "call_1"),), Usage(7, 3, 2, 1)))
        reply = post(server, path, {**body, "stream": True})
        assert reply.status == 200 and reply.getheader("content-type") == "text/event-stream"
        events = sse(reply.read())
        call = server.calls[0]
    assert call.protocol == protocol and call.model == "m" and call.user_text == "read a.pdf"
    assert skill_listed("pdf")(call) and prompt_has("a.pdf")(call) and not after_tool_result()(call)
    text = json.dumps(events)
    assert "Reading." in text and '\\"skill\\": \\"pdf\\"' in text and "call_1" in text
    if protocol == "anthropic":
        assert events[0]["type"] == "message_start" and events[-1]["type"] == "message_stop"
        assert events[-2]["usage"] == {"input_tokens": 7, "output_tokens": 3, "cache_read_input_tokens": 2,
                                       "cache_creation_input_tokens": 1}
    elif protocol == "responses":
        assert events[-1]["type"] == "response.completed"
        assert events[-1]["response"]["usage"]["input_tokens"] == 9  # cached tokens counted in, as OpenAI does
        assert events[-1]["response"]["usage"]["input_tokens_details"] == {"cached_tokens": 2}
    else:
        assert events[-2]["choices"][0]["finish_reason"] == "tool_calls"
        assert events[-1]["usage"]["prompt_tokens"] == 9 and events[-1]["usage"]["completion_tokens"] == 3


@pytest.mark.parametrize("protocol", sorted(REQUESTS))
def test_json_replies_and_tool_results_seen(protocol: str) -> None:
    path, body = REQUESTS[protocol]
    with ModelServer() as server:
        server.rule(prompt_has("a.pdf"), Answer("Done.", usage=Usage(4, 2)))
        reply = post(server, path, body)
        data = json.loads(reply.read())
    assert reply.status == 200 and "Done." in json.dumps(data)


def test_errors_with_retry_after_then_the_next_rule() -> None:
    path, body = REQUESTS["anthropic"]
    with ModelServer() as server:
        server.rule(prompt_has("a.pdf"), Fail(529, "overloaded", retry_after=0.25), times=1, name="busy")
        server.rule(prompt_has("a.pdf"), Answer("ok"), name="fine")
        first = post(server, path, body)
        assert first.status == 529 and first.getheader("retry-after") == "0.25"
        assert first.getheader("retry-after-ms") == "250"
        assert json.loads(first.read())["error"]["type"] == "overloaded_error"
        second = post(server, path, body)
        assert second.status == 200 and second.read()
        wrong = post(server, path, body, key="sk-wrong-key-000")
        assert wrong.status == 401 and json.loads(wrong.read())["error"]["type"] == "authentication_error"
        assert [len(server.answered_by(name)) for name in ("busy", "fine", "unauthorised")] == [1, 1, 1]
        assert [r.rule for r in server.records] == ["busy", "fine", "unauthorised"]


def test_a_cut_stream_ends_without_its_terminal_event() -> None:
    path, body = REQUESTS["anthropic"]
    with ModelServer() as server:
        server.rule(prompt_has("a.pdf"), Cut(Answer("a long answer " * 5), events=3))
        reply = post(server, path, {**body, "stream": True})
        with pytest.raises(http.client.IncompleteRead) as cut:
            reply.read()
    events = sse(cut.value.partial)
    assert len(events) == 3 and all(e["type"] != "message_stop" for e in events)


def test_a_stall_holds_the_stream_open_until_the_client_gives_up() -> None:
    path, body = REQUESTS["chat"]
    with ModelServer() as server:
        server.rule(prompt_has("a.pdf"), Stall())
        reply = post(server, path, {**body, "stream": True}, timeout=0.5)
        assert reply.status == 200
        started = time.monotonic()
        with pytest.raises((socket.timeout, TimeoutError)):
            reply.read()
        assert time.monotonic() - started >= 0.4
    # closing the server ends the stall at once (a test never waits for it)


def test_untooled_helper_requests_get_a_title_and_unmatched_ones_the_default() -> None:
    path, body = REQUESTS["chat"]
    with ModelServer() as server:
        untooled = {k: v for k, v in body.items() if k != "tools"}
        title = json.loads(post(server, path, untooled).read())
        other = json.loads(post(server, path, body).read())
        assert server.agent_calls() == [server.calls[1]]
    assert title["choices"][0]["message"]["content"] == "Scripted session"
    assert "nothing was scripted" in other["choices"][0]["message"]["content"]
