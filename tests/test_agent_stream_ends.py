"""How each CLI's output ends, read from recorded-shaped samples in tests/data/agents/: output cut before the CLI's
own end event (Claude Code's result line, Codex's turn.completed, OpenCode's done) is an error run whatever the
exit code, its figures partial; Claude Code's usage per model (helper models included, as the cost is); Codex's
real error behind its retry notices; Codex in plan mode (a plan, a to-do list, a question it cannot have answered)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_agent_parsers import lines, parse, sample, usage_of
from test_agent_presets import fake_clis_on_path, run, script, workspace  # noqa: F401 - fixtures

from eval_skills.agents import AgentRequest, create_agent
from eval_skills.formats.workspace import MessageEvent, ToolCallEvent, UsageEvent

DATA = Path(__file__).parent / "data" / "agents"
FILES = ["claude-stream-json-cut-before-result.constructed.jsonl",
         "claude-stream-json-helper-model-usage.constructed.jsonl",
         "codex-exec-json-401-reconnecting.constructed.jsonl", "codex-exec-json-cut-after-message.constructed.jsonl",
         "codex-exec-json-plan-mode.constructed.jsonl", "codex-exec-json-request-user-input.constructed.jsonl",
         "opencode-run-json-cut-after-tool-step.constructed.jsonl"]
CLAUDE_CUT = "the output ended after 6 events, before Claude Code's result line"
CODEX_CUT = "the output ended inside a turn, before codex's turn.completed or turn.failed"
ASKED = ("codex asked for user input (plan mode), which a non-interactive run cannot give: Where should the summary "
         "be written?")
REAL_401 = "unexpected status 401 Unauthorized: Incorrect API key provided: sk-proj-****************XXXX."


def test_claude_stream_cut_before_its_result_line_is_unfinished_and_its_tokens_partial() -> None:
    _, out = parse("claude", sample(FILES[0]), ".claude/skills")
    assert out.unfinished == CLAUDE_CUT and out.error is None
    # the last (provisional) usage of each message: msg_01Hc7 8 out, msg_01Kd2 11 out; a lower bound, never measured
    assert usage_of(out) == (9, 19, 35851, 6623, 9 + 19 + 35851 + 6623, None)
    assert out.usage.measurement == "partial"
    assert set(out.usage.models) == {"claude-sonnet-4-5-20250929"}


@pytest.mark.parametrize("code", [0, 1])
def test_a_claude_run_cut_before_its_result_line_is_an_error_whatever_the_exit_code(
        code: int, tmp_path: Path, workspace: Path) -> None:  # noqa: F811
    result = run(create_agent("claude", env=script(tmp_path, replay=str(DATA / FILES[0]), exit=code)),
                 AgentRequest("compare the page with the screenshots", workspace, timeout=30))
    assert result.status == "error" and result.response is None  # "Let me read the local screenshots instead:"
    said = f"{CLAUDE_CUT}: the run did not finish" if code == 0 else f"the agent exited with code 1; {CLAUDE_CUT}"
    assert result.error == f"{said}; stderr was empty"
    assert result.usage.measurement == "partial" and result.timing().token_measurement == "partial"
    assert "Let me read the local screenshots instead:" in [e.text for e in result.transcript
                                                            if isinstance(e, MessageEvent)]


def test_claude_usage_is_recorded_per_model_and_totals_cover_the_helper_models() -> None:
    """The result line's usage counts the main model only (6 in, 49 out), lower than its modelUsage entry; the
    cost covers the Haiku helper too: the totals are the sums over modelUsage."""
    parser, out = parse("claude", sample(FILES[1]), ".claude/skills")
    usage = out.usage
    assert usage_of(out) == (139947 + 9, 1418 + 212, 38400, 2520, 139956 + 1630 + 38400 + 2520, 0.2026413)
    assert usage.measurement == "measured" and out.unfinished is None and parser.warnings() == []
    assert {name: (m.input_tokens, m.output_tokens, m.cost_usd) for name, m in usage.models.items()} == {
        "claude-3-5-haiku-20241022": (139947, 1418, 0.1176296),
        "claude-sonnet-4-5-20250929": (9, 212, 0.0850117)}
    assert usage.to_json()["models"]["claude-3-5-haiku-20241022"] == {
        "input_tokens": 139947, "output_tokens": 1418, "cache_read_tokens": 0, "cache_write_tokens": 0,
        "total_tokens": 141365, "cost_usd": 0.1176296}
    assert [e.model for e in out.transcript if isinstance(e, UsageEvent)] == [
        "claude-3-5-haiku-20241022", "claude-sonnet-4-5-20250929"]
    without = lines(FILES[1])
    del without[-1]["modelUsage"]  # older versions: result.usage, the main model only
    _, out = parse("claude", without)
    assert usage_of(out) == (6, 49, 38400, 2520, 40975, 0.2026413) and out.usage.models == {}
    assert "models" not in out.usage.to_json()


def test_the_run_record_and_timing_carry_the_usage_per_model(tmp_path: Path, workspace: Path) -> None:  # noqa: F811
    result = run(create_agent("claude", env=script(tmp_path, replay=str(DATA / FILES[1]))),
                 AgentRequest("summarise sales.csv", workspace, timeout=30))
    assert result.status == "ok" and result.response == "sales.csv has 2 regions; the total is 42."
    assert result.timing().total_tokens == 139956 + 1630 + 38400 + 2520  # what the cost covers
    record = json.loads(json.dumps(result.to_json()))
    assert sum(m["total_tokens"] for m in record["usage"]["models"].values()) == record["usage"]["total_tokens"]


def test_codex_reports_the_real_error_behind_its_retry_notices(tmp_path: Path, workspace: Path) -> None:  # noqa: F811
    parser, out = parse("codex", sample(FILES[2]))
    assert out.error == f"codex reported: {REAL_401}" and out.response is None and out.unfinished is None
    assert parser.warnings()[-1] == ("codex output: codex retried 5 times before failing (last: Reconnecting... 5/5 "
                                     "(unexpected status 401 Unauthorized))")
    result = run(create_agent("codex", env=script(tmp_path, replay=str(DATA / FILES[2]), exit=1)),
                 AgentRequest("summarise sales.csv", workspace, timeout=30))
    assert result.status == "error" and result.error == f"codex reported: {REAL_401}; stderr was empty"
    only_retries = [json.loads(line) for line in sample(FILES[2]).decode().splitlines() if "Reconnecting" in line]
    _, out = parse("codex", only_retries)  # nothing but retry notices: the last one says most
    assert out.error == "codex reported: Reconnecting... 5/5 (unexpected status 401 Unauthorized)"


@pytest.mark.parametrize("code", [0, 1])
def test_a_codex_run_cut_after_a_message_is_an_error_not_an_answer(code: int, tmp_path: Path,
                                                                    workspace: Path) -> None:  # noqa: F811
    _, out = parse("codex", sample(FILES[3]))
    assert out.unfinished == CODEX_CUT and out.error is None
    result = run(create_agent("codex", env=script(tmp_path, replay=str(DATA / FILES[3]), exit=code)),
                 AgentRequest("summarise sales.csv", workspace, timeout=30))
    assert result.status == "error" and result.response is None  # the preamble is no answer
    assert result.error.startswith(f"{CODEX_CUT}: the run did not finish" if code == 0
                                   else f"the agent exited with code 1; {CODEX_CUT}")
    assert result.usage.measurement == "estimated"  # Codex gave no usage before it was cut


def test_codex_in_plan_mode_answers_with_its_plan(tmp_path: Path, workspace: Path) -> None:  # noqa: F811
    parser, out = parse("codex", sample(FILES[4]))
    plan = next(e.text for e in out.transcript if isinstance(e, MessageEvent) and e.role == "plan"
                and e.text.startswith("# Plan"))
    assert out.response == plan and out.error is None and out.unfinished is None
    assert plan.endswith("3. Write summary.md with the totals.")
    assert "- [ ] Total each region" in [e.text for e in out.transcript if isinstance(e, MessageEvent)][-1]
    assert parser.warnings() == ["codex output: codex gave a plan (plan mode) and no message: the plan is the response"]
    result = run(create_agent("codex", env=script(tmp_path, replay=str(DATA / FILES[4]))),
                 AgentRequest("plan the summary", workspace, timeout=30))
    assert result.status == "ok" and result.response == plan and result.usage.measurement == "measured"


def test_codex_asking_for_user_input_says_so_instead_of_no_final_response(tmp_path: Path,
                                                                          workspace: Path) -> None:  # noqa: F811
    parser, out = parse("codex", sample(FILES[5]))
    assert out.response is None and out.error == f"codex gave no final message: {ASKED}"
    asked = next(e for e in out.transcript if isinstance(e, ToolCallEvent))
    assert (asked.name, asked.id, asked.is_error) == ("request_user_input", "call_Yb2kQ7", True)
    assert parser.warnings() == [f"codex output: {ASKED}"]
    result = run(create_agent("codex", env=script(tmp_path, replay=str(DATA / FILES[5]))),
                 AgentRequest("summarise sales.csv", workspace, timeout=30))
    assert result.status == "error" and result.error == f"codex gave no final message: {ASKED}; stderr was empty"
    _, out = parse("codex", lines(FILES[5])[:-1])  # cut while waiting for the answer
    assert out.unfinished == f"{CODEX_CUT} ({ASKED})"
    _, out = parse("codex", lines(FILES[4])[:6])  # cut while writing the plan: two of its three pieces came
    assert out.unfinished == (f"{CODEX_CUT} (codex was writing a plan (plan mode): # Plan: summarise sales.csv "
                              "1. Read sales.csv and check its columns. 2. To)")


@pytest.mark.parametrize("code", [0, 1])
def test_an_opencode_run_cut_inside_a_step_is_an_error(code: int, tmp_path: Path, workspace: Path) -> None:  # noqa: F811
    cut = "the output ended inside a step (no step_finish), before opencode's done line"
    _, out = parse("opencode", sample(FILES[6]))
    assert out.unfinished == cut and out.usage.measurement == "measured"
    result = run(create_agent("opencode", env=script(tmp_path, replay=str(DATA / FILES[6]), exit=code)),
                 AgentRequest("summarise sales.csv", workspace, timeout=30))
    assert result.status == "error" and result.response is None  # "Now I'll add them up:" is no answer
    assert cut in result.error
    stream = lines(FILES[6])[:3]  # the step that called tools finished, the next never started
    _, out = parse("opencode", stream)
    assert out.unfinished == ("the output ended after a step that called tools, before opencode's next step and its "
                              "done line")
    _, out = parse("opencode", [*lines(FILES[6]), {"type": "done", "reason": "idle", "rejected": []}])
    assert out.unfinished is None  # current builds' end event


@pytest.mark.parametrize(("name", "file"), [("claude", "claude-stream-json-basic.jsonl"),
                                            ("codex", "codex-exec-json.jsonl"),
                                            ("opencode", "opencode-run-json.jsonl")])
def test_complete_recordings_are_not_unfinished(name: str, file: str) -> None:
    """A real recording of each CLI ends with its end event (OpenCode's of late 2025 has no done line: its last step
    finished with reason stop)."""
    _, out = parse(name, sample(file))
    assert out.unfinished is None and out.error is None
