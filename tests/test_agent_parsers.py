"""The agent CLI output parsers (claude, codex, opencode) on every recorded sample in tests/data/agents/, and on
the variants the samples' README documents: split assistant messages, a missing result line, Claude's JSON-array
form, refused skills, failures reported by the agent, lines that are not JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from eval_skills.agents import PARSERS, ParseContext, RawOutput, create_parser
from eval_skills.agents.parsers.common import skill_read, skill_reads
from eval_skills.formats.workspace import MessageEvent, SkillEvent, ToolCallEvent, UsageEvent

DATA = Path(__file__).parent / "data" / "agents"


def parse(name: str, data: bytes | str | list[Any], subdir: str = ".agents/skills"):
    """Feed ``data`` (bytes, text, or objects to write one per line) to a fresh parser, as the harness does."""
    if isinstance(data, list):
        data = "\n".join(json.dumps(item) for item in data) + "\n"
    if isinstance(data, str):
        data = data.encode()
    parser = create_parser(name, ParseContext(("csv-summary",), subdir))
    raw = RawOutput()
    raw.write(data)
    for line in data.split(b"\n"):
        parser.feed(line)
    return parser, parser.finish(raw)


def sample(name: str) -> bytes:
    return (DATA / name).read_bytes()


def lines(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in sample(name).splitlines() if line.strip()]


def kinds(out) -> list[str]:
    return [e.type if not isinstance(e, MessageEvent) else f"message:{e.role}" for e in out.transcript]


def usage_of(out) -> tuple[int, int, int, int, int, float | None]:
    u = out.usage
    return (u.input_tokens, u.output_tokens, u.cache_read_tokens, u.cache_write_tokens, u.total_tokens, u.cost_usd)


def test_every_sample_has_a_test() -> None:
    samples = {p.name for p in DATA.iterdir() if p.name != "README.md"}
    from test_agent_real_recordings import RECORDINGS  # recorded from the real CLIs
    from test_agent_stream_ends import FILES  # how each CLI's output ends

    tested = ({name for name, *_ in SAMPLES + AWKWARD} | {"openai-chat-tool-calls.json"} | set(FILES)
              | set(RECORDINGS.values()))
    assert samples == tested
    assert {"claude", "codex", "opencode"} <= set(PARSERS.names())


# file, parser, response start, transcript kinds, usage (input, output, cache read, cache write, total, cost), skills
SAMPLES = [
    # modelUsage: the main model and the Haiku helper the cost also covers (result.usage counts the main one only)
    ("claude-json-result.json", "claude", "Excellent! The script has been successfully created",
     ["usage", "usage"], (25 + 3412, 668 + 161, 91771, 23352, 25 + 3412 + 668 + 161 + 91771 + 23352, 0.1294133), []),
    ("claude-stream-json-basic.jsonl", "claude", "4",
     ["message:assistant", "usage"], (10, 25, 0, 21570, 21605, 0.1354875), []),
    # modelUsage counts the main model higher than result.usage does (18 in, 424 out): its figures are the ones its
    # costUSD (0.22844625 at the model's prices) is made of
    ("claude-stream-json-tool.jsonl", "claude", "Here are the files in the current directory.",
     ["tool_call", "usage"], (38, 765, 28775, 31159, 38 + 765 + 28775 + 31159, 0.24722425), []),
    ("claude-stream-json-skill.constructed.jsonl", "claude", "sales.csv has 3 rows and 2 columns",
     ["tool_call", "skill", "tool_call", "message:assistant", "usage"],
     (7, 91, 31480, 9910, 7 + 91 + 31480 + 9910, 0.0412), [("csv-summary", "Skill tool call")]),
    ("claude-stream-json-read-skillmd.constructed.jsonl", "claude", "EXAMPLE-SKILL-OK",
     ["tool_call", "skill", "message:assistant", "usage"], (6, 28, 1000, 1120, 2154, 0.01),
     [("example-skill", "read of SKILL.md")]),
    ("codex-exec-json.jsonl", "codex", "Yep — there’s a `README.md` in the repository root.",
     ["message:reasoning", "tool_call", "message:reasoning", "message:assistant", "usage"],
     (24763 - 24448, 122, 24448, 0, 24763 + 122, None), []),
    ("codex-exec-json-implicit-skill.constructed.jsonl", "codex", "EXAMPLE-SKILL-OK",
     ["message:reasoning", "tool_call", "skill", "message:assistant", "usage"],
     (8000, 40, 12000, 0, 20040, None), [("example-skill", "read of SKILL.md")]),
    ("opencode-run-json.jsonl", "opencode", "```\nhello\n```",
     ["tool_call", "usage", "message:assistant", "usage"],
     (21772 + 671, 110 + 8, 21415, 0, 21772 + 671 + 118 + 21415, 0.001), []),
    ("opencode-run-json-skill.constructed.jsonl", "opencode", "sales.csv has 3 rows and 2 columns",
     ["tool_call", "skill", "usage", "message:assistant", "usage"],
     (8120 + 8290, 24 + 66 + 40 + 72, 7900, 0, 16410 + 202 + 7900, 0.0021 + 0.0019), [("csv-summary", "skill tool")]),
]


@pytest.mark.parametrize(("file", "parser", "response", "expected_kinds", "usage", "skills"), SAMPLES,
                         ids=[s[0] for s in SAMPLES])
def test_samples(file: str, parser: str, response: str, expected_kinds: list[str], usage: tuple, skills: list) -> None:
    p, out = parse(parser, sample(file), ".claude/skills" if parser == "claude" else ".agents/skills")
    assert out.response is not None and out.response.startswith(response)
    assert kinds(out) == expected_kinds
    got = usage_of(out)
    assert got[:5] == usage[:5] and out.usage.measurement == "measured"
    assert got[5] == pytest.approx(usage[5]) if usage[5] is not None else got[5] is None
    assert [(e.skill, e.detected_by) for e in out.transcript if isinstance(e, SkillEvent)] == skills
    assert out.error is None and out.unfinished is None and p.warnings() == []


# Constructed samples of what the documented formats allow and the recorded ones do not show: file, parser,
# response, error (start), skills (name, detected_by), usage (input, output, cache read, cache write, cost), warnings
AWKWARD = [
    ("claude-stream-json-hooks-subagent-max-turns.constructed.jsonl", "claude", None,
     "Claude Code reported error_max_turns after 4 turns: Reached maximum number of turns (4)",
     [("tools:csv-summary", "Skill tool call"), ("csv-summary", "read of SKILL.md")], (14, 87, 36000, 480, 0.0731),
     ["the Skill call for csv-summary failed, so the run went on without it: Skill csv-summary cannot be used with "
      "Skill tool due to disable-model-invocation"]),
    ("claude-stream-json-skill-command-empty-result.constructed.jsonl", "claude",
     "sales.csv has 3 rows and 2 columns (region, total).", None, [("csv-summary", "Skill tool call")],
     (6, 41, 18000, 240, 0.011), []),
    ("codex-exec-json-recovered.constructed.jsonl", "codex",
     "sales.csv has 3 rows and 2 columns; the summary is in summary.md.", None,
     [("csv-summary", "read of SKILL.md"), ("csv-charts", "read of SKILL.md")], (6000, 310, 15000, 0, None),
     ["line 3 is not JSON: '2026-01-05T10:00:01.000000Z ERROR codex_api::endpoint::responses: stream disconn...'",
      "line 7 is not JSON: '2026-01-05T10:00:03.000000Z WARN codex_core::exec: sandbox denied a network requ...'",
      "codex reported, then went on: Reconnecting... 1/5 (stream disconnected before completion: error sending "
      "request for url (https://api.openai.com/v1/responses))"]),
    ("codex-exec-json-turn-failed.constructed.jsonl", "codex", None,
     "codex reported: stream disconnected before completion: Transport error: timeout", [],
     None, ["codex retried once before failing (last: Reconnecting... 5/5 (stream disconnected before completion))"]),
    ("opencode-run-json-refused-skill.constructed.jsonl", "opencode", "sales.csv has 3 rows and 2 columns.", None,
     [("csv-summary", "read of SKILL.md")], (1200, 100, 8000, 0, 0.0042),
     ["the skill call for csv-summary failed, so the run went on without it: Error: The user has specified a rule "
      "which prevents you from using this specific tool call",
      "opencode rejected 1 permission requests (run it with --auto to allow)"]),
]


@pytest.mark.parametrize(("file", "parser", "response", "error", "skills", "usage", "warnings"), AWKWARD,
                         ids=[s[0] for s in AWKWARD])
def test_awkward_samples(file: str, parser: str, response: str | None, error: str | None, skills: list,
                         usage: tuple | None, warnings: list[str]) -> None:
    p, out = parse(parser, sample(file), ".claude/skills" if parser == "claude" else ".agents/skills")
    assert out.response == response
    assert out.error == error, out.error
    assert [(e.skill, e.detected_by) for e in out.transcript if isinstance(e, SkillEvent)] == skills
    if usage is None:
        assert out.usage is None
    else:
        assert usage_of(out)[:4] == usage[:4] and usage_of(out)[4] == sum(usage[:4])
        assert usage_of(out)[5] == pytest.approx(usage[4]) if usage[4] is not None else usage_of(out)[5] is None
    assert p.warnings() == [f"{parser} output: {w}" for w in warnings]


def test_claude_subagent_lines_are_marked_and_never_answer() -> None:
    _, out = parse("claude", sample("claude-stream-json-hooks-subagent-max-turns.constructed.jsonl"), ".claude/skills")
    read = next(e for e in out.transcript if isinstance(e, ToolCallEvent) and e.name == "Read")
    assert read.parent_tool_use_id == "toolu_c03" and read.result.startswith("     1\t---")
    assert [e.text for e in out.transcript if isinstance(e, MessageEvent) and e.role == "subagent"] == [
        "sales.csv has 3 rows."]
    refused = out.transcript[0]
    assert (refused.name, refused.is_error) == ("Skill", True)  # kept as a failed call, not as an invocation


def test_claude_result_without_usage_takes_the_messages() -> None:
    stream = lines("claude-stream-json-skill-command-empty-result.constructed.jsonl")
    del stream[-1]["usage"]
    parser, out = parse("claude", stream)
    # msg_d01 (25 out) and msg_d02 (16 out), each with 3 uncached input, 120 written and 9000 read from the cache;
    # a message's usage is provisional: partial, never measured
    assert usage_of(out) == (6, 41, 18000, 240, 18287, 0.011) and out.usage.measurement == "partial"
    assert parser.warnings() == [] and out.unfinished is None


def test_claude_tool_calls_are_paired_with_their_results() -> None:
    _, out = parse("claude", sample("claude-stream-json-skill.constructed.jsonl"), ".claude/skills")
    skill_call, read = [e for e in out.transcript if isinstance(e, ToolCallEvent)]
    assert (skill_call.id, skill_call.name) == ("toolu_constructed_01", "Skill")
    assert skill_call.input == {"skill": "csv-summary"}
    assert skill_call.result == "Launching skill: csv-summary" and not skill_call.is_error
    assert read.input == {"file_path": "/home/user/run-3/sales.csv"} and read.result.startswith("     1\tregion")
    assert out.transcript[1].tool_call_id == "toolu_constructed_01"


def test_claude_split_assistant_message_usage_is_not_summed() -> None:
    """One API message over three lines, each repeating a provisional usage; the stream is cut before the result
    line, so usage comes from the messages: the last usage of each message id, summed over ids."""
    def part(msg_id: str, block: dict, output_tokens: int) -> dict:
        return {"type": "assistant", "message": {"id": msg_id, "role": "assistant", "content": [block],
                "usage": {"input_tokens": 5, "cache_read_input_tokens": 100, "cache_creation_input_tokens": 10,
                          "output_tokens": output_tokens}}, "parent_tool_use_id": None}
    stream = [
        {"type": "system", "subtype": "init", "model": "m"},
        part("msg_1", {"type": "text", "text": "Let me look."}, 1),
        part("msg_1", {"type": "tool_use", "id": "t1", "name": "Read",
                       "input": {"file_path": "/w/.claude/skills/csv-summary/SKILL.md"}}, 1),
        part("msg_1", {"type": "tool_use", "id": "t2", "name": "Bash", "input": {"command": "ls"}}, 30),
        {"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "t2", "content": "a.csv"}]}},
        part("msg_2", {"type": "text", "text": "Done: a.csv"}, 7),
    ]
    parser, out = parse("claude", stream, ".claude/skills")
    assert kinds(out) == ["message:assistant", "tool_call", "skill", "tool_call", "message:assistant", "usage",
                          "usage"]
    assert out.response == "Done: a.csv" and out.error is None
    assert usage_of(out) == (10, 37, 200, 20, 267, None)  # msg_1 counted once, with its last usage (30 out)
    assert out.usage.measurement == "partial"
    assert out.unfinished == "the output ended after 6 events, before Claude Code's result line"
    assert parser.warnings() == []
    assert out.transcript[3].result == "a.csv"


def test_claude_empty_result_falls_back_to_the_last_assistant_text() -> None:
    stream = lines("claude-stream-json-basic.jsonl")
    stream[-1]["result"] = ""
    _, out = parse("claude", stream)
    assert out.response == "4" and out.error is None


@pytest.mark.parametrize("form", ["one line", "pretty", "object"])
def test_claude_json_output_forms(form: str) -> None:
    """``--output-format json``: with --verbose an array of every message ending with the result, else one object;
    either on one line or pretty-printed over many."""
    stream = lines("claude-stream-json-skill.constructed.jsonl")
    if form == "one line":
        data = json.dumps(stream)
    elif form == "pretty":
        data = json.dumps(stream, indent=2)
    else:
        data = json.dumps(stream[-1], indent=2)
    parser, out = parse("claude", data, ".claude/skills")
    assert out.response.startswith("sales.csv has 3 rows") and parser.warnings() == []
    assert usage_of(out)[:4] == (7, 91, 31480, 9910)
    if form != "object":
        assert [e.skill for e in out.transcript if isinstance(e, SkillEvent)] == ["csv-summary"]


def test_claude_refused_skill_is_no_invocation_and_subagents_do_not_answer() -> None:
    refusal = {"type": "tool_result", "tool_use_id": "s1", "is_error": True,
               "content": [{"type": "text", "text": "<tool_use_error>no</tool_use_error>"}]}
    stream = [
        {"type": "assistant", "message": {"id": "m1", "content": [
            {"type": "tool_use", "id": "s1", "name": "Skill", "input": {"skill": "csv-summary"}}]}},
        {"type": "user", "message": {"content": [refusal]}},
        {"type": "assistant", "message": {"id": "m2", "content": [{"type": "text", "text": "The answer."}]}},
        {"type": "assistant", "parent_tool_use_id": "task_1", "message": {"id": "m3", "content": [
            {"type": "text", "text": "subagent chatter"},
            {"type": "tool_use", "id": "s2", "name": "Skill", "input": {"skill": "/other"}}]}},
        {"type": "result", "subtype": "success", "is_error": False, "result": "",
         "permission_denials": [{"tool_name": "Write"}, {"tool_name": "Bash"}]},
    ]
    parser, out = parse("claude", stream)
    assert [(e.skill, e.tool_call_id) for e in out.transcript if isinstance(e, SkillEvent)] == [("other", "s2")]
    refused = out.transcript[0]
    assert refused.is_error and refused.result == "<tool_use_error>no</tool_use_error>"
    assert out.response == "The answer."
    assert out.transcript[3].parent_tool_use_id == "task_1"  # the subagent's skill call, marked
    assert parser.warnings() == [
        "claude output: the Skill call for csv-summary failed, so the run went on without it: no",
        "claude output: Claude Code denied 2 tool calls: Write, Bash"]


@pytest.mark.parametrize(("result", "error", "response"), [
    ({"subtype": "error_max_turns", "is_error": False, "result": "partial"},
     "Claude Code reported error_max_turns: partial", "partial"),
    ({"subtype": "error_during_execution", "is_error": True, "errors": ["boom", "again"]},
     "Claude Code reported error_during_execution: boom; again", None),
    ({"subtype": "success", "is_error": True, "result": "Credit balance is too low"},
     "Claude Code reported an error: Credit balance is too low", None),
    # the detail is what the result line says, never the last assistant text
    ({"subtype": "error_max_turns", "is_error": True, "num_turns": 4, "errors": []},
     "Claude Code reported error_max_turns after 4 turns", None),
])
def test_claude_reported_failures(result: dict, error: str, response: str | None) -> None:
    _, out = parse("claude", [{"type": "result", **result}])
    assert out.error == error and out.response == response


def test_claude_garbage_lines_are_warnings() -> None:
    data = b"not json\n\xff\xfe\n[1, 2]\n" + sample("claude-stream-json-basic.jsonl")
    parser, out = parse("claude", data)
    assert out.response == "4" and parser.problem_count == 4
    assert parser.warnings()[0] == "claude output: line 1 is not JSON: 'not json'"


def test_codex_failures_and_updates() -> None:
    read = {"id": "i0", "type": "command_execution", "command": "sed -n 1,200p .agents/skills/csv-summary/SKILL.md"}
    stream = [
        {"type": "item.started", "item": {**read, "status": "in_progress"}},
        {"type": "item.completed", "item": {**read, "aggregated_output": "---", "exit_code": 0, "status": "completed"}},
        {"type": "item.started", "item": {"id": "i1", "type": "command_execution", "command": "cat .agents/skills/"
                                          "other/SKILL.md", "status": "in_progress"}},
        {"type": "item.completed", "item": {"id": "i1", "type": "command_execution", "command": "cat .agents/skills/"
                                            "other/SKILL.md", "aggregated_output": "x", "exit_code": 1,
                                            "status": "failed"}},
        {"type": "item.completed", "item": {"id": "i2", "type": "mcp_tool_call", "server": "docs", "tool": "search",
                                            "arguments": {"q": "a"}, "result": {"content": []}, "status": "completed"}},
        {"type": "item.completed", "item": {"id": "i3", "type": "file_change", "status": "completed",
                                            "changes": [{"path": "a.md", "kind": "add"}]}},
        {"type": "item.completed", "item": {"id": "i4", "type": "error", "message": "rate limited, retrying"}},
        {"type": "item.completed", "item": {"id": "i5", "item_type": "assistant_message", "text": "old-style answer"}},
        {"type": "turn.completed", "usage": {"input_tokens": 100, "cached_input_tokens": 40, "output_tokens": 5,
                                             "reasoning_output_tokens": 3}},
        # usage is the thread's running total: the last one counts, not the sum
        {"type": "turn.completed", "usage": {"input_tokens": 110, "cached_input_tokens": 40, "output_tokens": 6}},
    ]
    parser, out = parse("codex", stream)
    calls = [e for e in out.transcript if isinstance(e, ToolCallEvent)]
    assert [(c.name, c.is_error) for c in calls] == [("command_execution", False), ("command_execution", True),
                                                     ("mcp:docs/search", False), ("file_change", False)]
    assert calls[1].result == "x" and calls[3].input == {"changes": [{"path": "a.md", "kind": "add"}]}
    # once, not per update; the failed read of other/SKILL.md is taken back (it was counted when it started)
    assert [e.skill for e in out.transcript if isinstance(e, SkillEvent)] == ["csv-summary"]
    assert out.response == "old-style answer"
    assert usage_of(out) == (70, 6, 40, 0, 116, None)
    assert out.error is None
    assert parser.warnings() == ["codex output: the command reading other's SKILL.md failed, so the run went on "
                                 "without it", "codex output: codex reported: rate limited, retrying"]


def test_failed_reads_of_skill_md_are_no_invocations() -> None:
    def read(call_id: str, skill: str) -> dict:
        path = f".claude/skills/{skill}/SKILL.md"
        return {"type": "tool_use", "id": call_id, "name": "Read", "input": {"file_path": path}}

    claude = [{"type": "assistant", "message": {"id": "m", "content": [read("t1", "gone"), read("t2", "csv")]}},
              {"type": "user", "message": {"content": [
                  {"type": "tool_result", "tool_use_id": "t1", "content": "File does not exist.", "is_error": True},
                  {"type": "tool_result", "tool_use_id": "t2", "content": "---"}]}},
              {"type": "result", "subtype": "success", "result": "ok"}]
    parser, out = parse("claude", claude)
    assert [e.skill for e in out.transcript if isinstance(e, SkillEvent)] == ["csv"]
    assert parser.warnings() == ["claude output: the read of gone's SKILL.md failed, so the run went on without it: "
                                 "File does not exist."]
    opencode = [{"type": "tool_use", "part": {"tool": "read", "callID": "c1", "state": {
                    "status": "error", "input": {"filePath": ".opencode/skills/gone/SKILL.md"}, "error": "not found"}}},
                {"type": "text", "part": {"text": "ok"}}]
    parser, out = parse("opencode", opencode)
    assert not [e for e in out.transcript if isinstance(e, SkillEvent)] and out.response == "ok"
    assert parser.warnings() == ["opencode output: the read of gone's SKILL.md failed, so the run went on without it"]


def test_reads_of_skill_md_in_a_command_agents_own_skills_folder_are_found() -> None:
    codex = [{"type": "item.completed", "item": {"id": "i", "type": "command_execution", "status": "completed",
                                                 "command": "cat tools/csv-summary/SKILL.md", "exit_code": 0}}]
    opencode = [{"type": "tool_use", "part": {"tool": "read", "callID": "c", "state": {
        "status": "completed", "input": {"filePath": "/w/tools/csv-summary/SKILL.md"}, "output": "---"}}}]
    for name, stream in (("codex", codex), ("opencode", opencode)):
        _, out = parse(name, stream, subdir="tools")  # --skills-subdir tools: no "skills/" in the path
        assert [e.skill for e in out.transcript if isinstance(e, SkillEvent)] == ["csv-summary"], name
        _, out = parse(name, stream)  # installed elsewhere: another folder's SKILL.md is not a skill read
        assert not [e for e in out.transcript if isinstance(e, SkillEvent)], name


def test_codex_stderr_mixed_into_stdout_is_skipped() -> None:
    data = b"ERROR codex_core::exec: something\n" + sample("codex-exec-json.jsonl")
    parser, out = parse("codex", data)
    assert out.response.startswith("Yep") and parser.problem_count == 1


def test_opencode_errors_and_last_step_text() -> None:
    stream = [
        {"type": "step_start", "part": {}},
        {"type": "text", "part": {"text": "first step"}},
        {"type": "tool_use", "part": {"callID": "c1", "tool": "skill", "state": {
            "status": "error", "input": {"name": "csv-summary"}, "error": "permission denied"}}},
        {"type": "tool_use", "part": {"callID": "c2", "tool": "read", "state": {
            "status": "completed", "input": {"filePath": "/w/.claude/skills/csv-summary/SKILL.md"}, "output": "..."}}},
        {"type": "step_start", "part": {}},
        {"type": "text", "part": {"text": "part one"}},
        {"type": "text", "part": {"text": "part two"}},
        {"type": "step_finish", "part": {"tokens": {"input": 1, "output": 2, "reasoning": 3,
                                                    "cache": {"read": 4, "write": 5}}, "cost": 0.5}},
        {"type": "error", "error": {"name": "APIError", "data": {"message": "overloaded"}}},
        {"type": "done", "reason": "idle", "rejected": [{"permission": "bash"}]},
    ]
    parser, out = parse("opencode", stream)
    assert out.response == "part one\npart two"
    skill_call = out.transcript[1]
    assert skill_call.is_error and skill_call.result == "permission denied"
    assert [(e.skill, e.detected_by) for e in out.transcript if isinstance(e, SkillEvent)] == [
        ("csv-summary", "read of SKILL.md")]  # the failed skill tool call does not count
    assert usage_of(out) == (1, 5, 4, 5, 15, 0.5)
    assert out.error == "opencode reported: overloaded"
    assert parser.warnings() == [
        "opencode output: the skill call for csv-summary failed, so the run went on without it: permission denied",
        "opencode output: opencode rejected 1 permission requests (run it with --auto to allow)"]


def test_codex_error_events_before_a_completed_turn_are_warnings() -> None:
    """Codex sends ``error`` for trouble it retries: only one no turn.completed follows ends the run."""
    recovered = [{"type": "error", "message": "Reconnecting... 1/5"},
                 {"type": "item.completed", "item": {"id": "i1", "type": "agent_message", "text": "fine"}},
                 {"type": "turn.completed", "usage": {"input_tokens": 5, "output_tokens": 1}}]
    parser, out = parse("codex", recovered)
    assert (out.response, out.error) == ("fine", None)
    assert parser.warnings() == ["codex output: codex reported, then went on: Reconnecting... 1/5"]
    parser, out = parse("codex", [*recovered, {"type": "error", "message": "quota exceeded"}])
    assert out.error == "codex reported: quota exceeded" and out.response == "fine"


@pytest.mark.parametrize(("text", "subdirs", "skill"), [
    ("/bin/bash -lc \"sed -n '1,200p' .agents/skills/pdf/SKILL.md\"", (), "pdf"),
    ("Get-Content .agents\\skills\\pdf\\SKILL.md", (), "pdf"),
    ("cat ~/.codex/skills/pdf/SKILL.md | head", (), "pdf"),
    ("/w/.claude/skills/pdf/SKILL.md", (".claude/skills",), "pdf"),
    ("/w/project/skills/pdf/SKILL.md", (".claude/skills",), None),
    ("/w/.claude/skills/pdf/SKILL.md.bak", (".claude/skills",), None),
    ("cat skills/pdf/README.md", (), None),
    ("/w/.claude/skills/pdf/references/SKILL.md", (".claude/skills",), None),
    (None, (), None),
])
def test_skill_read(text: str | None, subdirs: tuple, skill: str | None) -> None:
    assert skill_read(text, subdirs) == skill


@pytest.mark.parametrize(("text", "subdirs", "skills"), [
    ("cat skills/a/SKILL.md skills/b/SKILL.md", (), ["a", "b"]),
    ("sed -n 1,80p .agents/skills/a/SKILL.md && sed -n 1,80p .agents/skills/b/SKILL.md;cat .agents/skills/a/SKILL.md",
     (), ["a", "b"]),
    ("head '.claude/skills/a/SKILL.md' \".claude/skills/b/SKILL.md\"", (".claude/skills",), ["a", "b"]),
    ("cat .agents/skills/a/SKILL.md", (".claude/skills",), []),
])
def test_skill_reads_finds_every_skill_a_command_reads(text: str, subdirs: tuple, skills: list[str]) -> None:
    assert skill_reads(text, subdirs) == skills


@pytest.mark.parametrize("name", ["claude", "codex", "opencode"])
def test_hostile_values_never_raise(name: str) -> None:
    """Every field of an unexpected type: noted or ignored, the parse goes on."""
    stream: list[Any] = [
        {"type": "assistant", "message": {"id": 3, "content": [5, {"type": "tool_use", "input": "x", "id": []}],
                                          "usage": "many"}},
        {"type": "user", "message": {"content": "text"}},
        {"type": "item.completed", "item": {"id": 1, "type": "command_execution", "command": 7, "exit_code": "x"}},
        {"type": "turn.completed", "usage": {"input_tokens": -5, "cached_input_tokens": True}},
        {"type": "tool_use", "part": {"state": "?"}},
        {"type": "step_finish", "part": {"tokens": {"input": "1", "cache": 3}, "cost": "free"}},
        {"type": "result", "result": 42, "usage": [], "total_cost_usd": "x", "permission_denials": "none"},
        {"type": 5}, "just a string", None,
    ]
    parser, out = parse(name, stream)
    assert out.response is None or isinstance(out.response, str)
    assert all(not isinstance(e, UsageEvent) or e.input_tokens >= 0 for e in out.transcript)


@pytest.mark.parametrize("name", ["text", "events", "claude", "codex", "opencode"])
@pytest.mark.parametrize("file", sorted(p.name for p in DATA.iterdir() if p.name != "README.md"))
def test_every_parser_reads_every_sample_without_failing(name: str, file: str) -> None:
    """Another CLI's output (a wrong --agent-output) is at worst warnings and no response, never an exception."""
    parser, out = parse(name, sample(file))
    assert out.response is None or out.response.strip()
    assert all(e.type in ("message", "tool_call", "skill", "usage", "final") for e in out.transcript)
    native = file.split("-")[0]
    if name in ("codex", "opencode") and native not in (name, "openai"):
        assert out.response is None  # nothing of its own format in there


NO_NUMBERS = [  # a usage line that reports no number: no measurement (the harness then estimates)
    ("claude", [{"type": "result", "subtype": "success", "result": "done", "usage": {}}]),
    ("claude", [{"type": "result", "subtype": "success", "result": "done", "usage": {"input_tokens": "12"}}]),
    ("claude", [{"type": "assistant", "message": {"id": "m1", "content": [{"type": "text", "text": "hi"}],
                                                  "usage": {"output_tokens": None}}}]),
    ("codex", [{"type": "item.completed", "item": {"id": "i1", "type": "agent_message", "text": "ok"}},
               {"type": "turn.completed", "usage": None}]),
    ("codex", [{"type": "turn.completed"}, {"type": "turn.completed", "usage": {"input_tokens": -1}}]),
    ("opencode", [{"type": "step_finish", "part": {"tokens": "lots"}}]),
    ("opencode", [{"type": "step_finish", "part": {"tokens": {"input": "10", "output": 1.5, "cache": {}}}}]),
    ("opencode", [{"type": "step_finish", "part": {}}]),
    ("events", [{"type": "usage"}, {"type": "usage", "total_tokens": None, "cost_usd": None}]),
]


@pytest.mark.parametrize(("name", "stream"), NO_NUMBERS)
def test_usage_lines_without_numbers_measure_nothing(name: str, stream: list[Any]) -> None:
    _, out = parse(name, stream)
    assert out.usage is None


@pytest.mark.parametrize(("name", "stream", "usage"), [
    ("events", [{"type": "usage", "input_tokens": 0, "output_tokens": 0}], (0, 0, 0, 0, 0, None)),
    ("events", [{"type": "usage"}, {"type": "usage", "cost_usd": 0.5}], (0, 0, 0, 0, 0, 0.5)),
    ("opencode", [{"type": "step_finish", "part": {"tokens": {"input": 12, "output": "x", "reasoning": 3}}},
                  {"type": "step_finish", "part": {"tokens": {}}}], (12, 3, 0, 0, 15, None)),
    ("codex", [{"type": "turn.completed", "usage": {"input_tokens": 100, "cached_input_tokens": 40,
                                                    "output_tokens": 7}},
               {"type": "turn.completed", "usage": {}}], (60, 7, 40, 0, 107, None)),
    ("claude", [{"type": "assistant", "message": {"id": "m1", "content": [{"type": "text", "text": "hi"}],
                                                  "usage": {"input_tokens": 5, "output_tokens": 2}}},
                {"type": "result", "subtype": "success", "result": "hi", "usage": {}, "total_cost_usd": 0.25}],
     (5, 2, 0, 0, 7, 0.25)),
])
def test_usage_counts_only_the_numbers_reported(name: str, stream: list[Any], usage: tuple) -> None:
    """Zeros the agent wrote are measured; a line without numbers does not hide the ones before it (Claude's
    messages' usage, provisional, is partial)."""
    _, out = parse(name, stream)
    assert usage_of(out) == usage and out.usage.measurement == ("partial" if name == "claude" else "measured")
