"""The MCP adapter against real MCP servers written with the SDK (tests/skills/mcp_server.py), over stdio and
streamable HTTP on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import socket
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from procs import wait_gone

from eval_skills.adapters import create_adapter
from eval_skills.adapters.mcp import McpAdapter
from eval_skills.errors import InputError, SkillProtocolError, SkillRpcError, SkillTimeout
from eval_skills.formats.benchmark import Benchmark
from eval_skills.formats.skill import load_skill
from eval_skills.results import Usage
from eval_skills.tool_skills.evaluation import evaluate
from eval_skills.tool_skills.plan import build_plan
from eval_skills.tool_skills.preflight import dry_run_notes, run_preflight
from eval_skills.tool_skills.runner import RunSettings

SERVER = Path(__file__).parent / "skills" / "mcp_server.py"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def mcp_skill(folder: Path, tool: str = "act", *, args: str = "", url: str | None = None,
              config: dict[str, Any] | None = None) -> Path:
    """A skill folder whose entrypoint starts the test server (or names its URL); starts are counted in
    ``folder/starts``."""
    folder.mkdir(parents=True, exist_ok=True)
    entrypoint = url or f"python3 {SERVER} --starts {folder / 'starts'} {args}".strip()
    (folder / "skill.json").write_text(json.dumps({
        "id": folder.name, "name": "MCP test", "version": "1.0.0", "adapterType": "mcp", "entrypoint": entrypoint,
        "metadata": {"toolName": tool}}))
    if config is not None:
        (folder / "adapter.config.json").write_text(json.dumps(config))
    return folder


def starts(folder: Path) -> int:
    path = folder / "starts"
    return len(path.read_text().splitlines()) if path.exists() else 0


def act_tasks(*specs: tuple[str, dict[str, Any], dict[str, Any]]) -> Benchmark:
    return Benchmark.model_validate({"id": "acts", "tasks": [
        {"id": task_id, "inputData": args, "expectedOutput": {"type": "exact", "value": args.get("text", "")},
         **extra} for task_id, args, extra in specs]})


def evaluate_plan(folder: Path, benchmark: Benchmark, concurrency: int = 2) -> dict[str, Any]:
    plan = build_plan([load_skill(folder)], benchmark, runs=1, default_evaluator="exact")
    outcome = asyncio.run(evaluate(plan, RunSettings(concurrency=concurrency, timeout_ms=10_000)))
    return {r.task_id: r for r in outcome.results}


def test_one_stdio_session_answers_concurrently_with_outputs_errors_and_timeouts(tmp_path, monkeypatch):
    monkeypatch.setenv("EVAL_SKILLS_TEST_SECRET", "hunter2")
    monkeypatch.setenv("EVAL_SKILLS_TEST_PASSED", "yes")
    folder = mcp_skill(tmp_path / "stdio", "act", config={"passEnv": ["EVAL_SKILLS_TEST_PASSED"],
                                                          "env": {"FROM_CONFIG": "1"}})
    benchmark = act_tasks(("good", {"do": "echo", "text": "x"}, {}), ("no-do", {"text": "x"}, {}),
                          ("bad-seconds", {"do": "slow", "seconds": "soon"}, {}))
    plan = build_plan([load_skill(folder)], benchmark, runs=1, default_evaluator="exact")

    async def main() -> dict[str, Any]:
        adapter = create_adapter(load_skill(folder))
        assert isinstance(adapter, McpAdapter)
        seen: dict[str, Any] = {}
        try:
            notes = await run_preflight(plan, {"stdio": adapter})  # the session it opens is kept for the calls
            assert notes is not None
            seen["notes"] = notes["stdio"]
            seen["schema"] = adapter.input_schema
            adapter.tool = "echo"
            seen["echo"] = (await adapter.invoke({"text": "hi"}, 5)).output
            adapter.tool = "shout"  # a tool without structured output: its text
            seen["shout"] = (await adapter.invoke({"text": "hi"}, 5)).output
            adapter.tool = "counted"
            seen["usage"] = (await adapter.invoke({"text": "n"}, 5)).usage
            adapter.tool = "act"
            with pytest.raises(SkillRpcError, match="the tool reported an error: .*failing on purpose: no") as err:
                await adapter.invoke({"do": "fail", "text": "no"}, 5)
            seen["retryable"] = err.value.retryable
            # a tool that raises: the SDK says only "Error executing tool act"; the server's log says what
            raised = await asyncio.gather(*(adapter.invoke({"do": "raise", "text": f"n{i}"}, 5) for i in range(3)),
                                          return_exceptions=True)
            seen["raised"] = [str(exc) for exc in raised]
            began = time.perf_counter()
            with pytest.raises(SkillTimeout, match="no result within 0.3s"):
                await adapter.invoke({"do": "slow", "seconds": 30, "text": "late"}, 0.3)
            seen["timeout_s"] = time.perf_counter() - began
            began = time.perf_counter()
            slow = await asyncio.gather(*(adapter.invoke({"do": "slow", "seconds": 0.5, "text": str(i)}, 5)
                                          for i in range(4)))
            seen["concurrent_s"] = time.perf_counter() - began
            seen["slow"] = [inv.output for inv in slow]
            with pytest.raises(SkillProtocolError, match="an object of arguments"):
                await adapter.invoke(["not", "an", "object"], 5)
            adapter.tool = "environment"
            seen["env"] = (await adapter.invoke({}, 5)).output
            seen["pid"] = adapter.server_pid
            seen["starts"] = adapter.starts
        finally:
            await adapter.close()
        return seen

    seen = asyncio.run(main())
    assert seen["notes"][0].startswith("MCP server python3 ") and "has 7 tools: echo, add, shout, counted, act" \
        in seen["notes"][0]
    assert seen["notes"][1].startswith("tool 'act' found: Do what `do` says")
    assert seen["notes"][2:] == ["the inputData of 2 of 3 tasks do not fit its input schema:",
                                 "  task no-do: $: 'do' is a required property",
                                 "  task bad-seconds: $.seconds: 'soon' is not of type 'number'"]
    assert seen["schema"]["required"] == ["do"]
    assert seen["echo"] == {"result": "hi"}  # structured content
    assert seen["shout"] == "HI!"  # text content
    assert seen["usage"] == Usage(3, 4, 7)
    assert seen["retryable"] is False
    assert seen["raised"] == [f"the tool reported an error: Error executing tool act (the server's stderr: "
                              f"ValueError: raised on purpose: n{i})" for i in range(3)]
    assert seen["timeout_s"] < 2
    assert seen["concurrent_s"] < 1.5, "four 0.5 s calls share one session concurrently"
    assert seen["slow"] == [{"result": str(i)} for i in range(4)]
    assert seen["env"]["cwd"] == str(folder.resolve())
    names = set(seen["env"]["names"])
    assert {"EVAL_SKILLS_TEST_PASSED", "FROM_CONFIG", "PATH"} <= names
    assert "EVAL_SKILLS_TEST_SECRET" not in names
    assert seen["starts"] == 1 and starts(folder) == 1, "one session for every call, the timed-out one included"
    assert wait_gone(seen["pid"]), "close() stops the server"


def test_a_crash_mid_run_fails_the_calls_in_flight_and_later_tasks_run_on_a_fresh_server(tmp_path):
    folder = mcp_skill(tmp_path / "crashy")
    results = evaluate_plan(folder, act_tasks(
        ("in-flight", {"do": "slow", "seconds": 1.5, "text": "a"}, {}),
        ("crash", {"do": "crash", "seconds": 0.2}, {}),
        ("hangs", {"do": "slow", "seconds": 30, "text": "b"}, {"timeoutMs": 400}),
        ("after-1", {"do": "echo", "text": "c"}, {}),
        ("after-2", {"do": "echo", "text": "d"}, {}),
        ("tool-error", {"do": "fail", "text": "e"}, {}),
    ))
    for task_id in ("in-flight", "crash"):
        assert results[task_id].status == "error"
        assert results[task_id].error.startswith("the MCP server exited with code 3 while the call was in flight")
        assert "stderr: " in results[task_id].error and "crashing on purpose" in results[task_id].error
    assert results["hangs"].status == "timeout" and results["hangs"].error == "no result within 0.4s"
    assert results["after-1"].status == results["after-2"].status == "pass"
    assert results["after-1"].output == {"result": "c"}
    assert results["after-1"].latency_ms < 600, "the fresh server's start is not the task's latency"
    assert results["tool-error"].status == "error"
    assert "failing on purpose: e" in results["tool-error"].error
    assert starts(folder) == 2


def test_a_server_that_cannot_start_again_fails_the_remaining_tasks_at_once(tmp_path):
    folder = mcp_skill(tmp_path / "once", args="--max-starts 1")
    results = evaluate_plan(folder, act_tasks(
        ("crash", {"do": "crash"}, {}), *((f"t{i}", {"do": "echo", "text": str(i)}, {}) for i in range(5))),
        concurrency=1)
    assert results["crash"].error.startswith("the MCP server exited with code 3")
    for i in range(5):
        error = results[f"t{i}"].error
        assert error.startswith("the MCP server could not be started again after it failed: the MCP server exited "
                                "with code 5"), error
        assert "cannot open the database" in error
    assert starts(folder) == 2, "one failed attempt, not one per task"


def test_preflight_refuses_a_missing_tool_and_a_server_that_does_not_start(tmp_path):
    missing = mcp_skill(tmp_path / "missing", "ech")
    broken = mcp_skill(tmp_path / "broken", args="--fail-start")
    plan = build_plan([load_skill(missing)], act_tasks(), runs=1, default_evaluator="exact")

    with pytest.raises(InputError) as info:
        asyncio.run(dry_run_notes(plan, {"missing": create_adapter(load_skill(missing))}))
    assert info.value.file == str(missing.resolve() / "skill.json") and info.value.field == "$.metadata.toolName"
    assert ("has no tool 'ech' (its tools: echo, add, shout, counted, act, as_json_text, environment)"
            in info.value.problem)

    with pytest.raises(InputError) as info:
        asyncio.run(dry_run_notes(plan, {"broken": create_adapter(load_skill(broken))}))
    assert info.value.field == "$.entrypoint"
    assert info.value.problem == ("the MCP server did not start: the MCP server exited with code 5; "
                                  "stderr: cannot open the database: no such file")

    nowhere = tmp_path / "nowhere"
    nowhere.mkdir()
    (nowhere / "skill.json").write_text(json.dumps({"id": "nowhere", "name": "N", "version": "1.0.0",
                                                    "adapterType": "mcp", "entrypoint": "no-such-program-xyz --x"}))
    with pytest.raises(InputError) as info:
        asyncio.run(dry_run_notes(plan, {"nowhere": create_adapter(load_skill(nowhere))}))
    assert info.value.problem == ("the MCP server did not start: cannot start 'no-such-program-xyz': program not "
                                  "found on PATH")


@pytest.fixture
def http_skill(tmp_path, monkeypatch):
    port = free_port()
    monkeypatch.setenv("EVAL_SKILLS_TEST_MCP_TOKEN", "tok-123")
    folder = tmp_path / "over-http"
    mcp_skill(folder, url=f"http://127.0.0.1:{port}/mcp", config={
        "start": ["python3", str(SERVER), "--http", str(port), "--starts", str(folder / "starts"),
                  "--token", "tok-123"],
        "authType": "bearer", "authTokenEnvKey": "EVAL_SKILLS_TEST_MCP_TOKEN"})
    return folder


def test_streamable_http_with_a_started_server_a_token_and_a_crash(http_skill):
    results = evaluate_plan(http_skill, act_tasks(
        ("first", {"do": "echo", "text": "a"}, {}),
        ("in-flight", {"do": "slow", "seconds": 1.5, "text": "b"}, {}),
        ("crash", {"do": "crash", "seconds": 0.3}, {}),
        ("after", {"do": "echo", "text": "c"}, {}),
    ))
    assert results["first"].status == "pass" and results["first"].output == {"result": "a"}
    for task_id in ("in-flight", "crash"):
        error = results[task_id].error
        assert error.startswith(f"lost the connection to the MCP server at {load_skill(http_skill).manifest.entrypoint}"
                                " while the call was in flight"), error
        assert "its server exited with code 3" in error and "crashing on purpose" in error
        assert "tok-123" not in error
    assert results["after"].status == "pass"
    assert starts(http_skill) == 2


def test_streamable_http_with_a_wrong_token_is_refused_before_anything_runs(http_skill, monkeypatch):
    monkeypatch.setenv("EVAL_SKILLS_TEST_MCP_TOKEN", "wrong")
    plan = build_plan([load_skill(http_skill)], act_tasks(), runs=1, default_evaluator="exact")
    adapter = create_adapter(load_skill(http_skill))
    with pytest.raises(InputError) as info:
        asyncio.run(dry_run_notes(plan, {"over-http": adapter}))
    # the server started and answers: the refusal is named with its HTTP status, on the skill's entrypoint
    assert info.value.field == "$.entrypoint" and info.value.file == str(http_skill / "skill.json")
    assert "the MCP server did not answer" in info.value.problem
    assert "the server answered HTTP 401 Unauthorized: unauthorized: got Bearer [redacted]" in info.value.problem
    assert "wrong" not in info.value.line()


def test_an_unset_token_variable_is_an_input_error_at_once(http_skill, monkeypatch):
    monkeypatch.delenv("EVAL_SKILLS_TEST_MCP_TOKEN")
    with pytest.raises(InputError, match="EVAL_SKILLS_TEST_MCP_TOKEN is not set"):
        create_adapter(load_skill(http_skill))
    assert starts(http_skill) == 0


def test_tool_name_defaults_to_the_skill_id(tmp_path):
    folder = tmp_path / "echo"
    folder.mkdir()
    (folder / "skill.json").write_text(json.dumps({
        "id": "echo", "name": "E", "version": "1.0.0", "adapterType": "mcp", "entrypoint": f"python3 {SERVER}"}))
    assert McpAdapter(load_skill(folder)).tool == "echo"
    (folder / "skill.json").write_text(json.dumps({
        "id": "echo", "name": "E", "version": "1.0.0", "adapterType": "mcp", "entrypoint": f"python3 {SERVER}",
        "metadata": {"toolName": 7}}))
    with pytest.raises(InputError, match=r"\$\.metadata\.toolName"):
        McpAdapter(load_skill(folder))


if sys.platform == "win32":  # pragma: no cover
    pytestmark = pytest.mark.skip("process groups")


def test_the_original_transports_sse_over_http_and_json_in_a_text_block(tmp_path):
    """The original eval-skills reaches an MCP server over HTTP with the older HTTP+SSE transport only, and
    reads a tool's text as JSON when it is JSON: a server written for it answers here the same way."""
    port = free_port()
    folder = mcp_skill(tmp_path / "over-sse", "as_json_text", url=f"http://127.0.0.1:{port}/sse", config={
        "start": ["python3", str(SERVER), "--sse", str(port), "--starts", str(tmp_path / "over-sse" / "starts")],
        "healthPath": "/sse"})
    adapter = McpAdapter(load_skill(folder))
    assert adapter.transport == "sse"
    benchmark = Benchmark.model_validate({"id": "sse", "tasks": [
        {"id": "unwrapped", "inputData": {"text": "5"}, "expectedOutput": {"type": "exact", "value": "5"}},
        {"id": "keyword", "inputData": {"text": "Paris"}, "expectedOutput": {"type": "contains",
                                                                             "keywords": ["result", "Paris"]}}]})
    results = evaluate_plan(folder, benchmark)
    assert results["unwrapped"].status == "pass" and results["unwrapped"].output == {"result": "5"}
    assert results["keyword"].status == "pass"
    assert starts(folder) == 1
    # metadata.transport (the original's key) chooses it too; one that does not fit the entrypoint is refused
    skill = json.loads((folder / "skill.json").read_text())
    for metadata, transport in (({"transport": "sse"}, "sse"), ({}, "sse")):
        (folder / "skill.json").write_text(json.dumps({**skill, "metadata": {"toolName": "x", **metadata}}))
        assert McpAdapter(load_skill(folder)).transport == transport
    (folder / "skill.json").write_text(json.dumps({**skill, "entrypoint": f"http://127.0.0.1:{port}/mcp"}))
    assert McpAdapter(load_skill(folder)).transport == "streamable-http"
    (folder / "skill.json").write_text(json.dumps({**skill, "metadata": {"transport": "stdio"}}))
    with pytest.raises(InputError, match=r"transport 'stdio' does not fit the entrypoint") as info:
        McpAdapter(load_skill(folder))
    assert info.value.field == "$.metadata.transport"


def test_a_text_that_is_not_json_stays_text_and_a_placeholder_url_is_named(tmp_path):
    folder = mcp_skill(tmp_path / "stdio", "shout")

    async def main() -> Any:
        adapter = create_adapter(load_skill(folder))
        try:
            first = (await adapter.invoke({"text": "[1, 2"}, 10)).output
            return first, (await adapter.invoke({"text": "7"}, 10)).output
        finally:
            await adapter.close()

    # shout answers TEXT.upper() + "!": "[1, 2!" is not JSON; "7!" neither
    assert asyncio.run(main()) == ("[1, 2!", "7!")
    placeholder = tmp_path / "tool"
    placeholder.mkdir()
    (placeholder / "skill.json").write_text(json.dumps({"id": "tool", "name": "tool", "version": "0.1.0",
                                                        "adapterType": "mcp",
                                                        "entrypoint": "mcp://localhost:8080/tools/tool"}))
    with pytest.raises(InputError, match="placeholder the original eval-skills' create writes") as info:
        create_adapter(load_skill(placeholder))
    assert info.value.field == "$.entrypoint" and "http(s)://" in (info.value.hint or "")


def test_a_tool_returning_json_text_is_scored_on_that_json_as_the_original_reads_it(tmp_path):
    """The SDK wraps a tool's ``str`` return as structured content ``{"result": "<the text>"}``; when that
    text is a JSON object or array, the output is that JSON (the original reads the text as JSON), so `exact`
    sees its `result`; other texts stay wrapped."""
    folder = mcp_skill(tmp_path / "json-text", "echo")
    benchmark = Benchmark.model_validate({"id": "echoes", "tasks": [
        {"id": "json", "inputData": {"text": '{"result": "Processed: q"}'},
         "expectedOutput": {"type": "exact", "value": "Processed: q"}},
        {"id": "number", "inputData": {"text": "5"}, "expectedOutput": {"type": "exact", "value": 5}},
        {"id": "list", "inputData": {"text": ' [1, "a"]'}, "expectedOutput": {"type": "exact", "value": [1, "a"]}},
        {"id": "not-json", "inputData": {"text": "{not json"},
         "expectedOutput": {"type": "exact", "value": "{not json"}},
        {"id": "plain", "inputData": {"text": "plain words"},
         "expectedOutput": {"type": "exact", "value": "plain words"}}]})
    results = evaluate_plan(folder, benchmark)
    assert results["json"].output == {"result": "Processed: q"} and results["json"].status == "pass"
    assert results["number"].output == {"result": "5"} and results["number"].status == "pass"
    assert results["list"].output == [1, "a"] and results["list"].status == "pass"
    assert results["not-json"].output == {"result": "{not json"} and results["not-json"].status == "pass"
    assert results["plain"].output == {"result": "plain words"} and results["plain"].status == "pass"


def test_crash_detail_reads_a_plain_traceback_and_leaves_told_errors_alone() -> None:
    from eval_skills.adapters._mcp_stdio import crash_detail

    log = ("Traceback (most recent call last):\n  File \"s.py\", line 3, in act\n    boom()\n"
           "KeyError: 'missing'\n\nThe above exception was the direct cause of the following exception:\n"
           "mcp.server.mcpserver.exceptions.UnexpectedToolError: Error executing tool act\n"
           "Traceback (most recent call last):\nZeroDivisionError: division by zero\n")
    detail, used = crash_detail("Error executing tool act", log)
    assert detail == "KeyError: 'missing'" and log[used:].startswith("\nThe above")
    assert crash_detail("Error executing tool act", log[used:])[0] == "ZeroDivisionError: division by zero"
    assert crash_detail("Error executing tool act", "listening\nstill alive\n") == ("listening | still alive", 22)
    assert crash_detail("Error executing tool act: told", log) == (None, 0)
    assert crash_detail("Error executing tool act", "") == (None, 0)
