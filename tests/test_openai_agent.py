"""The built-in agent loop (``openai``) against a fake OpenAI-compatible server on 127.0.0.1: skills listed and
loaded, tools confined to the workspace (hostile paths refused, the loop goes on), retries, malformed replies,
limits, and the checks before a run."""

from __future__ import annotations

import asyncio
import json
import os
import socket
from pathlib import Path

import pytest
from fakes.openai_server import FakeOpenAI, Reply, completion, error, tool_call
from test_agents import make_skill

from eval_skills.agents import AgentRequest, create_agent
from eval_skills.errors import InputError
from eval_skills.formats.workspace import FinalEvent, SkillEvent, ToolCallEvent, UsageEvent

DATA = Path(__file__).parent / "data" / "agents"
KEY = "sk-test-key"


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("TEST_OPENAI_KEY", KEY)
    with FakeOpenAI(key=KEY) as server:
        yield server


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("the total is 42")
    return ws


def agent_for(api: FakeOpenAI, **options):
    return create_agent("openai", base_url=api.url, model="fake-model", api_key_env="TEST_OPENAI_KEY", **options)


def run(agent, request: AgentRequest):
    return asyncio.run(agent.run(request))


def tool_results(api: FakeOpenAI) -> dict[str, str]:
    """Every tool message the model was sent, by call id."""
    return {m["tool_call_id"]: m["content"] for m in api.chat_requests()[-1]["messages"] if m["role"] == "tool"}


def test_a_run_with_a_skill(api: FakeOpenAI, tmp_path: Path, workspace: Path) -> None:
    skill = make_skill(tmp_path, "csv-summary")
    api.script(
        error(429),
        completion("Let me load the skill.", [tool_call("load_skill", {"name": "csv-summary"}, "c1")], usage=(100, 10)),
        error(503),
        completion(None, [tool_call("read_file", {"path": "notes.txt"}, "c2"),
                          tool_call("write_file", {"path": "out/deep/report.md", "content": "# 42"}, "c3"),
                          tool_call("list_files", {}, "c4")], usage=(200, 20, 150)),
        completion("The total is 42.", usage=(300, 30, 250)),
    )
    result = run(agent_for(api), AgentRequest("Summarise notes.txt", workspace, skills=[skill], timeout=30))

    assert result.status == "ok", result.error
    assert result.response == "The total is 42." and result.model == "fake-model"
    assert result.skills_invoked == ["csv-summary"]
    skill_event = result.skill_events[0]
    assert (skill_event.detected_by, skill_event.tool_call_id) == ("load_skill", "c1")
    assert [(c.name, c.is_error) for c in result.tool_calls] == [
        ("load_skill", False), ("read_file", False), ("write_file", False), ("list_files", False)]
    assert (workspace / "out" / "deep" / "report.md").read_text() == "# 42"
    assert [(f.path, f.kind) for f in result.files] == [("out/deep/report.md", "created")]
    # usage: prompt tokens include the cached ones; summed over the three replies that arrived
    usage = result.usage
    assert (usage.input_tokens, usage.cache_read_tokens, usage.output_tokens) == (100 + 50 + 50, 150 + 250, 60)
    assert usage.total_tokens == 110 + 220 + 330 and usage.measurement == "measured"
    assert sum(isinstance(e, UsageEvent) for e in result.transcript) == 3
    assert isinstance(result.transcript[-1], FinalEvent)
    assert len(result.raw_stdout.text().splitlines()) == 3  # one line per reply

    requests = api.chat_requests()
    assert len(requests) == 5  # the 429 and the 503 were retried
    first = requests[0]
    system = first["messages"][0]["content"]
    assert system.endswith("<available_skills>\n<skill>\n<name>csv-summary</name>\n"
                           "<description>Helps with csv-summary.</description>\n</skill>\n</available_skills>")
    assert first["messages"][1] == {"role": "user", "content": "Summarise notes.txt"}
    assert [t["function"]["name"] for t in first["tools"]] == ["read_file", "list_files", "write_file", "load_skill"]
    results = tool_results(api)
    assert results["c1"] == ("Skill folder: .agents/skills/csv-summary/ (read its other files with read_file)\n\n"
                             "Use the csv-summary method.")
    assert results["c2"] == "the total is 42"
    assert results["c3"] == "wrote 4 bytes to out/deep/report.md"
    assert results["c4"].splitlines() == [".agents/skills/csv-summary/SKILL.md",
                                          ".agents/skills/csv-summary/references/guide.md", "notes.txt",
                                          "out/deep/report.md"]


def test_without_skills_there_is_no_list_and_no_load_skill(api: FakeOpenAI, workspace: Path) -> None:
    api.script(completion(None, [tool_call("load_skill", {"name": "csv-summary"}, "c1")]), completion("plain"))
    result = run(agent_for(api), AgentRequest("hi", workspace, timeout=30))
    assert result.status == "ok" and result.response == "plain" and result.skill_events == []
    first = api.chat_requests()[0]
    assert "available_skills" not in first["messages"][0]["content"] and "skill" not in first["messages"][0]["content"]
    assert "load_skill" not in json.dumps(first["tools"])
    assert tool_results(api)["c1"] == "error: there is no tool 'load_skill'"


def test_hostile_paths_are_refused_and_the_loop_goes_on(api: FakeOpenAI, tmp_path: Path, workspace: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("SECRET")
    (workspace / "link").symlink_to(outside)                      # a folder link out
    (workspace / "secret-link.txt").symlink_to(outside / "secret.txt")  # a file link out
    (workspace / "dangling").symlink_to(outside / "new.txt")      # a dangling link out
    (workspace / "inner").symlink_to(workspace / "notes.txt")     # a link that stays inside: fine
    calls = {
        "up": ("read_file", {"path": "../outside/secret.txt"}),
        "deep-up": ("read_file", {"path": "sub/../../outside/secret.txt"}),
        "absolute": ("read_file", {"path": str(outside / "secret.txt")}),
        "etc": ("read_file", {"path": "/etc/passwd"}),
        "home": ("read_file", {"path": "~/.bashrc"}),
        "via-dir-link": ("read_file", {"path": "link/secret.txt"}),
        "via-file-link": ("read_file", {"path": "secret-link.txt"}),
        "list-out": ("list_files", {"path": "link"}),
        "list-up": ("list_files", {"path": ".."}),
        "write-up": ("write_file", {"path": "../outside/evil.txt", "content": "x"}),
        "write-abs": ("write_file", {"path": str(outside / "evil.txt"), "content": "x"}),
        "write-link-dir": ("write_file", {"path": "link/evil.txt", "content": "x"}),
        "write-dangling": ("write_file", {"path": "dangling", "content": "x"}),
        "nul": ("read_file", {"path": "notes.txt\u0000.png"}),
        "not-json": ("read_file", '{"path": '),
        "not-object": ("read_file", '["notes.txt"]'),
        "wrong-args": ("read_file", {"file": "notes.txt"}),
        "folder": ("read_file", {"path": "."}),
        "missing": ("read_file", {"path": "nope.txt"}),
        "inside-link": ("read_file", {"path": "inner"}),
        "unknown": ("delete_everything", {}),
    }
    api.script(completion(None, [tool_call(name, args, call_id) for call_id, (name, args) in calls.items()]),
               completion("still here"))
    result = run(agent_for(api), AgentRequest("try to escape", workspace, timeout=30))

    assert result.status == "ok" and result.response == "still here"
    results = tool_results(api)
    assert results.pop("inside-link") == "the total is 42"
    expected = {
        "up": "leaves the workspace", "deep-up": "leaves the workspace", "absolute": "is absolute",
        "etc": "is absolute", "home": "is absolute", "via-dir-link": "through a symbolic link",
        "via-file-link": "through a symbolic link", "list-out": "through a symbolic link",
        "list-up": "leaves the workspace", "write-up": "leaves the workspace", "write-abs": "is absolute",
        "write-link-dir": "through a symbolic link", "write-dangling": "through a symbolic link",
        "nul": "NUL", "not-json": "not valid JSON", "not-object": "must be a JSON object",
        "wrong-args": "wrong arguments for read_file", "folder": "is not a file", "missing": "No such file",
        "unknown": "there is no tool 'delete_everything'",
    }
    for call_id, fragment in expected.items():
        assert results[call_id].startswith("error: ") and fragment in results[call_id], (call_id, results[call_id])
    assert "SECRET" not in json.dumps(api.chat_requests()[-1])
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]  # nothing written outside
    errors = [c for c in result.tool_calls if c.is_error]
    assert len(errors) == len(expected)


@pytest.mark.parametrize(("replies", "error_text"), [
    ([Reply(200, raw=b"this is not json")], "the endpoint's reply could not be read"),
    ([Reply(200, {"id": "x", "object": "chat.completion", "choices": []})], "the endpoint's reply has no message"),
    ([completion(None)], "the endpoint's reply has neither text nor tool calls"),
    ([error(500, "model crashed")] * 5, "the endpoint answered 500"),
    ([error(400, "context too long")], "the endpoint answered 400"),
])
def test_a_malformed_or_failing_endpoint_is_an_error(api: FakeOpenAI, workspace: Path, replies: list[Reply],
                                                     error_text: str) -> None:
    api.script(*replies)
    result = run(agent_for(api), AgentRequest("hi", workspace, timeout=30))
    assert result.status == "error" and result.error.startswith(error_text) and result.response is None
    assert "stderr" not in result.error  # no program ran: nothing about a stderr it never had


def test_a_key_the_endpoint_quotes_back_is_not_kept(api: FakeOpenAI, workspace: Path) -> None:
    def quote(request):
        said = request.headers["authorization"]
        if len(api.chat_requests()) == 1:
            return completion(f"Your header was {said}.")
        return Reply(400, {"error": {"message": f"invalid request from {said}", "type": "invalid_request_error"}})

    api.handler = quote
    answered = run(agent_for(api), AgentRequest("hi", workspace, timeout=30))
    failed = run(agent_for(api), AgentRequest("hi", workspace, timeout=30))
    assert answered.response == "Your header was Bearer ***." and KEY not in answered.raw_stdout.text()
    assert KEY not in json.dumps(answered.to_json())
    assert failed.error.startswith("the endpoint answered 400: Error code: 400 - invalid request from Bearer ***")


def test_max_turns_and_timeout(api: FakeOpenAI, workspace: Path) -> None:
    api.handler = lambda request: completion(None, [tool_call("list_files", {})])  # never answers
    result = run(agent_for(api, max_turns=3), AgentRequest("hi", workspace, timeout=30))
    assert result.status == "error" and result.error.startswith("no final response after 3 turns")
    assert len(result.tool_calls) == 3
    result = run(agent_for(api), AgentRequest("hi", workspace, timeout=30, max_turns=2))
    assert result.error.startswith("no final response after 2 turns")

    api.handler = None
    api.script(Reply(200, completion("late").body, delay=3))
    result = run(agent_for(api), AgentRequest("hi", workspace, timeout=0.5))
    assert result.status == "timeout" and result.error.startswith("timed out after 0.5 s")


def test_the_documented_sample_reply(api: FakeOpenAI, workspace: Path) -> None:
    """openai-chat-tool-calls.json (the API reference's example): its call to an unknown tool is a tool error."""
    sample = json.loads((DATA / "openai-chat-tool-calls.json").read_text())
    api.script(Reply(200, sample), completion("It is sunny."))
    result = run(agent_for(api), AgentRequest("weather?", workspace, timeout=30))
    assert result.status == "ok" and result.response == "It is sunny."
    call = result.tool_calls[0]
    assert (call.id, call.name, call.input, call.is_error) == (
        "call_abc123", "get_current_weather", {"location": "Boston, MA"}, True)
    assert (result.usage.input_tokens, result.usage.output_tokens) == (82 + 10, 17 + 5)
    assert isinstance(result.transcript[1], ToolCallEvent) and not any(
        isinstance(e, SkillEvent) for e in result.transcript)


def test_checks_before_a_run(api: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> None:
    agent_for(api).check()
    assert api.requests[-1].path == "/v1/models" and api.requests[-1].headers["authorization"] == f"Bearer {KEY}"
    with pytest.raises(InputError, match="needs a model"):
        create_agent("openai", base_url=api.url).check()
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(InputError, match="needs a key: OPENAI_API_KEY is not set"):
        create_agent("openai", model="m").check()
    monkeypatch.setenv("WRONG_KEY", "sk-wrong")
    with pytest.raises(InputError, match="refused the key in WRONG_KEY"):
        create_agent("openai", model="m", base_url=api.url, api_key_env="WRONG_KEY").check()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed = sock.getsockname()[1]
    with pytest.raises(InputError, match=f"cannot reach http://127.0.0.1:{closed}/v1"):
        create_agent("openai", model="m", base_url=f"http://127.0.0.1:{closed}/v1").check()
    with pytest.raises(InputError, match="max turns"):
        create_agent("openai", model="m", max_turns=0)
    assert os.environ.get("OPENAI_API_KEY") is None


def test_a_base_url_without_v1_stops_before_a_run(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with FakeOpenAI() as local:
        local.handler = lambda request: Reply(404, {"error": {"message": f"no route {request.path}"}})
        with pytest.raises(InputError, match=f"{local.base} answers 404 to its model list and to a request for "
                                             "model 'llama'"):
            create_agent("openai", base_url=local.base, model="llama").check()
        create_agent("openai", base_url=local.url, model="llama").check()
    assert [(r.method, r.path) for r in local.requests] == [
        ("GET", "/models"), ("POST", "/chat/completions"), ("GET", "/v1/models")]


def test_a_local_server_needs_no_key(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with FakeOpenAI() as local:
        local.script(completion("local answer", usage=None))
        agent = create_agent("openai", base_url=local.url, model="llama")
        agent.check()
        result = run(agent, AgentRequest("hi", workspace, timeout=30))
    assert result.status == "ok" and result.response == "local answer"
    assert result.usage.measurement == "estimated"  # the server reported no usage


def test_odd_tool_calls_are_tool_errors_and_each_call_is_recorded(api: FakeOpenAI, workspace: Path) -> None:
    """Two calls under one id, a call without a name or a function, a custom tool call, a file path ending in /:
    each is one event of its own with its own result, and the loop goes on to the answer."""
    first = completion(None, [tool_call("read_file", {"path": "notes.txt"}, "same"),
                              tool_call("list_files", {}, "same"),
                              tool_call("read_file", {"path": "notes.txt"}, "no-name"),
                              tool_call("list_files", {}, "no-function"),
                              tool_call("list_files", {}, "custom"),
                              tool_call("write_file", {"path": "sub/", "content": "x"}, "slash")]).body
    odd = first["choices"][0]["message"]["tool_calls"]
    odd[2]["function"]["name"] = None
    del odd[3]["function"]
    odd[4] = {"id": "custom", "type": "custom", "custom": {"name": "shell", "input": "rm -rf /"}}
    api.script(Reply(200, first), completion("done", usage=None))
    result = run(agent_for(api), AgentRequest("hi", workspace, timeout=30))

    assert result.status == "ok" and result.response == "done"
    assert [(c.id, c.name, c.result, c.is_error) for c in result.tool_calls] == [
        ("same", "read_file", "the total is 42", False),
        ("same", "list_files", "notes.txt", False),
        ("no-name", "", "error: there is no tool ''", True),
        ("no-function", "", "error: there is no tool ''", True),
        ("custom", "shell", "error: there is no tool 'shell'", True),
        ("slash", "write_file", "error: 'sub/' is a folder", True)]
    sent = [m for m in api.chat_requests()[-1]["messages"] if m["role"] == "tool"]
    assert [m["content"] for m in sent[:2]] == ["the total is 42", "notes.txt"]
    assert not (workspace / "sub").exists()


def test_a_usage_without_counts_is_estimated(api: FakeOpenAI, workspace: Path) -> None:
    body = completion("done").body
    body["usage"] = {}
    api.script(Reply(200, body))
    result = run(agent_for(api), AgentRequest("a prompt of 24 letters..", workspace, timeout=30))
    assert result.status == "ok" and result.usage.measurement == "estimated"
    assert (result.usage.input_tokens, result.usage.output_tokens) == (6, 1)  # 24 and 4 characters
    assert not [e for e in result.transcript if isinstance(e, UsageEvent)]


def test_one_turn_is_said_in_the_singular(api: FakeOpenAI, workspace: Path) -> None:
    api.script(completion("thinking", [tool_call("list_files", {})]), completion("too late"))
    result = run(agent_for(api, max_turns=1), AgentRequest("hi", workspace, timeout=30))
    assert result.status == "error" and result.error.startswith("no final response after 1 turn")
    assert "1 turns" not in result.error and len(result.tool_calls) == 1


@pytest.mark.parametrize(("usage", "expected"), [
    ({"total_tokens": 40}, (0, 0, 40)),
    ({"prompt_tokens": 12, "completion_tokens": None}, (12, 0, 12)),
    ({"prompt_tokens": -5, "completion_tokens": 3, "total_tokens": -1}, (0, 3, 3)),
])
def test_a_usage_with_some_counts_is_measured(api: FakeOpenAI, workspace: Path, usage: dict, expected: tuple) -> None:
    body = completion("done").body
    body["usage"] = usage
    api.script(Reply(200, body))
    result = run(agent_for(api), AgentRequest("hi", workspace, timeout=30))
    assert result.usage.measurement == "measured"
    assert (result.usage.input_tokens, result.usage.output_tokens, result.usage.total_tokens) == expected
