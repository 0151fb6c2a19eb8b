"""The claude, codex and opencode presets, end to end: their command lines run the fake CLIs in tests/fakes/
(found on PATH, as the real ones would be), which print each CLI's own output format."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from test_agents import make_skill

from eval_skills.agents import AgentRequest, create_agent
from eval_skills.errors import InputError
from eval_skills.formats.workspace import SkillEvent

FAKES = Path(__file__).parent / "fakes"
SKILL_DIRS = {"claude": ".claude/skills", "codex": ".agents/skills", "opencode": ".opencode/skills"}
DETECTED = {"claude": "Skill tool call", "codex": "read of SKILL.md", "opencode": "skill tool"}
CUT = {"claude": "the output ended after 4 events, before Claude Code's result line",
       "codex": "the output ended inside a turn, before codex's turn.completed or turn.failed",
       "opencode": "the output ended inside a step (no step_finish), before opencode's done line"}


@pytest.fixture(autouse=True)
def fake_clis_on_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", f"{FAKES}:{Path(sys.executable).parent}:/usr/bin:/bin")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "tmp").mkdir()  # the real Codex refuses a home inside the temporary folder: keep it outside
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


def run(agent, request: AgentRequest):
    return asyncio.run(agent.run(request))


def script(tmp_path: Path, **keys: Any) -> dict[str, str]:
    log = tmp_path / "cli.jsonl"
    return {"FAKE_CLI_JSON": json.dumps({"log": str(log), **keys})}


def logged(tmp_path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (tmp_path / "cli.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("name", ["claude", "codex", "opencode"])
def test_a_preset_run_installs_the_skill_where_the_cli_looks_and_sees_it_used(
        name: str, tmp_path: Path, workspace: Path) -> None:
    skill = make_skill(tmp_path, "csv-summary")
    env = script(tmp_path, skill="csv-summary", trigger="csv", answer="plain", skilled_answer="skilled {prompt}",
                 files={"out/summary.md": "# summary"}, usage={"input": 40, "output": 7, "cache_read": 20})
    agent = create_agent(name, env=env, model="big-model")
    agent.check()
    result = run(agent, AgentRequest("summarise the csv", workspace, skills=[skill], timeout=30))

    assert result.status == "ok", result.error
    assert result.response == "skilled summarise the csv" and result.model == "big-model"
    assert (workspace / SKILL_DIRS[name] / "csv-summary" / "SKILL.md").is_file()
    assert result.installed_skills == ["csv-summary"] and result.skills_invoked == ["csv-summary"]
    assert result.skill_events[0].detected_by == DETECTED[name]
    assert [(f.path, f.kind) for f in result.files] == [("out/summary.md", "created")]
    assert result.usage.measurement == "measured" and result.usage.output_tokens >= 7
    run_log = logged(tmp_path)[0]
    assert run_log["prompt"] == "summarise the csv" and run_log["skill_used"] and run_log["model"] == "big-model"
    assert run_log["cwd"] == str(workspace.resolve())


def test_without_the_skill_the_baseline_uses_none(tmp_path: Path, workspace: Path) -> None:
    agent = create_agent("claude", env=script(tmp_path, skill="csv-summary", answer="plain"))
    result = run(agent, AgentRequest("summarise the csv", workspace, timeout=30))
    assert (result.status, result.response, result.skill_events) == ("ok", "plain", [])
    assert not (workspace / ".claude").exists()


def test_claude_command_line(tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDECODE", "1")
    agent = create_agent("claude", env=script(tmp_path), max_turns=8)
    result = run(agent, AgentRequest("hi", workspace, timeout=30, model="m2"))
    assert result.status == "ok"
    first = logged(tmp_path)[0]
    assert first["argv"] == ["-p", "--output-format", "stream-json", "--verbose", "--max-turns", "8", "--model", "m2",
                             "--permission-mode", "acceptEdits"]
    assert first["claudecode"] is False  # removed, so a run from inside Claude Code starts
    usage = result.usage
    assert (usage.input_tokens, usage.output_tokens, usage.cache_read_tokens, usage.cache_write_tokens,
            usage.total_tokens, usage.cost_usd) == (3, 5, 20, 10, 38, 0.01)

    bypass = create_agent("claude", env=script(tmp_path), extra_args="--dangerously-skip-permissions")
    run(bypass, AgentRequest("hi", workspace, timeout=30, max_turns=3))
    assert logged(tmp_path)[1]["argv"] == ["-p", "--output-format", "stream-json", "--verbose", "--max-turns", "3",
                                           "--dangerously-skip-permissions"]


def test_claude_split_message_without_a_result_line(tmp_path: Path, workspace: Path) -> None:
    """The CLI exits 0 after the answer's message, without its result line: the run did not finish, so it is an
    error and the text it wrote along the way is no response; its tokens are partial."""
    result = run(create_agent("claude", env=script(tmp_path, mode="split", answer="the answer")),
                 AgentRequest("hi", workspace, timeout=30))
    assert (result.status, result.response, result.exit_code) == ("error", None, 0)
    assert result.error == ("the output ended after 3 events, before Claude Code's result line: the run did not "
                            "finish; stderr was empty")
    # two lines of one message (each: 3 in, 10 written, 20 read, 5 out) count once; no cost without a result line
    assert (result.usage.input_tokens, result.usage.output_tokens, result.usage.total_tokens) == (3, 5, 38)
    assert result.usage.cost_usd is None and result.usage.measurement == "partial"
    assert result.timing().token_measurement == "partial"
    assert [e.text for e in result.transcript if e.type == "message"] == ["Working.", "the answer"]


@pytest.mark.parametrize(("name", "error"), [
    ("claude", "Claude Code reported an error after 1 turn: API Error: overloaded"),
    ("codex", "codex reported: stream disconnected before completion"),
    ("opencode", "opencode reported: provider overloaded"),
])
def test_a_failure_the_cli_reports_is_an_error(name: str, error: str, tmp_path: Path, workspace: Path) -> None:
    result = run(create_agent(name, env=script(tmp_path, mode="error", stderr="warn: slow")),
                 AgentRequest("hi", workspace, timeout=30))
    assert result.status == "error" and result.error == f"{error}; stderr: warn: slow"


@pytest.mark.parametrize("name", ["claude", "opencode"])
def test_a_refused_skill_call_is_not_an_invocation(name: str, tmp_path: Path, workspace: Path) -> None:
    skill = make_skill(tmp_path, "csv-summary")
    result = run(create_agent(name, env=script(tmp_path, skill="csv-summary", mode="refuse-skill")),
                 AgentRequest("hi", workspace, skills=[skill], timeout=30))
    assert result.status == "ok" and result.skill_events == []
    assert result.tool_calls[0].is_error


@pytest.mark.parametrize("name", ["claude", "codex", "opencode"])
def test_crash_and_timeout(name: str, tmp_path: Path, workspace: Path) -> None:
    skill = make_skill(tmp_path, "csv-summary")
    crashed = run(create_agent(name, env=script(tmp_path, skill="csv-summary", mode="crash")),
                  AgentRequest("hi", workspace, skills=[skill], timeout=30))
    # the exit status first, then that the output was cut before the CLI's end event
    assert crashed.status == "error"
    assert crashed.error.startswith(f"the agent exited with code 1; {CUT[name]}; stderr: ")
    assert crashed.error.endswith(f"RuntimeError: the fake {name} crashed on purpose")
    assert crashed.skills_invoked == ["csv-summary"]  # what it printed before crashing is kept
    hung = run(create_agent(name, env=script(tmp_path, mode="hang")), AgentRequest("hi", workspace, timeout=0.5))
    assert hung.status == "timeout" and hung.error.startswith("timed out after 0.5 s")


@pytest.mark.parametrize(("name", "file", "code", "status", "error", "skills", "warnings"), [
    ("claude", "claude-stream-json-hooks-subagent-max-turns.constructed.jsonl", 1, "error",
     "Claude Code reported error_max_turns after 4 turns: Reached maximum number of turns (4); stderr: ",
     ["tools:csv-summary", "csv-summary"], 1),
    ("claude", "claude-stream-json-skill-command-empty-result.constructed.jsonl", 0, "ok", None, ["csv-summary"], 0),
    ("codex", "codex-exec-json-recovered.constructed.jsonl", 0, "ok", None, ["csv-summary", "csv-charts"], 3),
    ("codex", "codex-exec-json-turn-failed.constructed.jsonl", 1, "error",
     "codex reported: stream disconnected before completion: Transport error: timeout", [], 1),
    ("opencode", "opencode-run-json-refused-skill.constructed.jsonl", 0, "ok", None, ["csv-summary"], 2),
])
def test_each_preset_on_awkward_output(name: str, file: str, code: int, status: str, error: str | None,
                                       skills: list[str], warnings: int, tmp_path: Path, workspace: Path) -> None:
    """The CLI prints a constructed sample (hooks, subagents, refused skills, recovered and failed turns); the
    run's status, error, skills and warnings follow what it printed, whatever the exit status says."""
    sample = Path(__file__).parent / "data" / "agents" / file
    result = run(create_agent(name, env=script(tmp_path, replay=str(sample), exit=code, stderr="note")),
                 AgentRequest("summarise sales.csv", workspace, timeout=30))
    assert result.status == status and result.exit_code == code
    assert result.error is None if error is None else result.error.startswith(error), result.error
    assert result.response is None or result.response.startswith("sales.csv has 3 rows")
    assert (result.response is None) == (status == "error")
    assert result.skills_invoked == skills and len(result.warnings) == warnings, result.warnings
    assert result.raw_stdout.read_bytes() == sample.read_bytes()


def test_codex_and_opencode_command_lines(tmp_path: Path, workspace: Path) -> None:
    codex = run(create_agent("codex", env=script(tmp_path), model="gpt-x"), AgentRequest("hi", workspace, timeout=30,
                                                                                      max_turns=5))
    assert codex.status == "ok" and codex.warnings == []
    opencode = run(create_agent("opencode", env=script(tmp_path), extra_args=["--auto"]),
                   AgentRequest("hi", workspace, timeout=30, model="anthropic/claude"))
    assert opencode.status == "ok" and opencode.warnings == []
    full_auto = run(create_agent("codex", env=script(tmp_path), extra_args="--full-auto"),
                    AgentRequest("hi", workspace, timeout=30))
    assert full_auto.status == "ok"
    argvs = [entry["argv"] for entry in logged(tmp_path)]
    assert argvs == [
        ["exec", "--json", "--skip-git-repo-check", "--sandbox", "workspace-write", "--model", "gpt-x", "-"],
        ["run", "--format", "json", "--model", "anthropic/claude", "--auto"],
        ["exec", "--json", "--skip-git-repo-check", "--full-auto", "-"],
    ]
    assert codex.usage.input_tokens == 100 and codex.usage.cache_read_tokens == 20


def test_a_setting_in_the_extra_arguments_replaces_the_presets_own(tmp_path: Path, workspace: Path) -> None:
    request = AgentRequest("hi", workspace, timeout=30, model="m-default", max_turns=4)
    for name, extra in (("claude", ["--model=m-user", "--max-turns", "9", "--output-format", "json"]),
                        ("codex", ["-m", "m-user"]), ("opencode", ["--model=m-user"])):
        assert run(create_agent(name, env=script(tmp_path), extra_args=extra), request).status == "ok"
    assert [entry["argv"] for entry in logged(tmp_path)] == [  # never a flag twice (Codex refuses that)
        ["-p", "--verbose", "--permission-mode", "acceptEdits", "--model=m-user", "--max-turns", "9",
         "--output-format", "json"],
        ["exec", "--json", "--skip-git-repo-check", "--sandbox", "workspace-write", "-m", "m-user", "-"],
        ["run", "--format", "json", "--model=m-user"],
    ]


def test_a_flag_of_the_presets_own_in_the_extra_arguments_is_given_once(tmp_path: Path, workspace: Path) -> None:
    request = AgentRequest("hi", workspace, timeout=30)
    for name, extra in (("claude", ["--print", "--verbose"]), ("codex", ["--json", "--skip-git-repo-check"]),
                        ("opencode", ["--format=json"])):
        result = run(create_agent(name, env=script(tmp_path), extra_args=extra), request)
        assert result.status == "ok", result.error
    assert [entry["argv"] for entry in logged(tmp_path)] == [
        ["--output-format", "stream-json", "--permission-mode", "acceptEdits", "--print", "--verbose"],
        ["exec", "--sandbox", "workspace-write", "--json", "--skip-git-repo-check", "-"],
        ["run", "--format=json"],
    ]


@pytest.mark.parametrize(("name", "template"), [
    ("claude", "claude -p --output-format json --verbose"),
    ("claude", "claude -p --output-format json"),
    ("codex", "codex exec --json --skip-git-repo-check -"),
    ("opencode", "opencode run --format json"),
])
def test_command_wrappers_reuse_the_cli_parsers(name: str, template: str, tmp_path: Path, workspace: Path) -> None:
    """A wrapper script around a CLI, read with --agent-output claude|codex|opencode."""
    skill = make_skill(tmp_path, "csv-summary")
    agent = create_agent("command", command=["sh", "-c", f'{template} < "$1"', "sh", "{prompt_file}"],
                         output=name, skills_subdir=SKILL_DIRS[name],
                         env=script(tmp_path, skill="csv-summary", skilled_answer="wrapped"))
    result = run(agent, AgentRequest("hi", workspace, skills=[skill], timeout=30))
    assert result.status == "ok" and result.response == "wrapped" and result.warnings == []
    if "--verbose" in template or name != "claude":  # the bare json form holds only the result
        assert result.skills_invoked == ["csv-summary"]


def test_missing_program_and_explicit_bin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    with pytest.raises(InputError, match="cannot start 'claude': program not found on PATH.*--agent-bin"):
        create_agent("claude").check()
    create_agent("claude", bin=str(FAKES / "claude")).check()
    with pytest.raises(InputError, match="is not an executable file"):
        create_agent("codex", bin=str(tmp_path / "nope" / "codex")).check()
    with pytest.raises(InputError, match="max turns"):
        create_agent("claude", max_turns=0)


def test_user_level_skills_per_backend(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    places = {".claude/skills": "a", ".agents/skills": "b", ".codex/skills": "c", ".config/opencode/skills": "d"}
    for folder, name in places.items():
        (home / folder / name).mkdir(parents=True)
        (home / folder / name / "SKILL.md").write_text("---\nname: x\n---\n")
    names = ["a", "b", "c", "d", "e"]

    def found(agent: str) -> list[str]:
        return [str(p.relative_to(home)) for p in create_agent(agent).user_level_skills(names)]

    assert found("claude") == [".claude/skills/a"]
    assert found("codex") == [".agents/skills/b"]  # each run has its own CODEX_HOME
    assert found("opencode") == [".config/opencode/skills/d", ".claude/skills/a", ".agents/skills/b"]
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / "elsewhere"))
    assert found("claude") == []


def test_skill_events_point_at_their_calls(tmp_path: Path, workspace: Path) -> None:
    skill = make_skill(tmp_path, "csv-summary")
    result = run(create_agent("codex", env=script(tmp_path, skill="csv-summary")),
                 AgentRequest("hi", workspace, skills=[skill], timeout=30))
    event = result.skill_events[0]
    assert isinstance(event, SkillEvent) and event.tool_call_id == "item_1"
    call = next(c for c in result.tool_calls if c.id == "item_1")
    assert "SKILL.md" in call.input["command"] and call.result.startswith("---\nname: csv-summary")


@pytest.mark.parametrize("name", ["claude", "codex", "opencode"])
def test_routing_through_each_preset(name: str, tmp_path: Path) -> None:
    """The presets as a command uses them: `eval-skills routing --agent <preset>`, the fake CLI found on PATH."""
    skill = make_skill(tmp_path, "csv-summary")
    (skill / "evals" / "routing.json").write_text(json.dumps([
        {"query": "summarise the csv", "should_trigger": True}, {"query": "write a poem", "should_trigger": False}]))
    user_dir = {"claude": ".claude", "codex": ".agents", "opencode": ".agents"}[name]
    user_copy = tmp_path / "home" / user_dir / "skills" / "csv-summary"
    user_copy.mkdir(parents=True)
    (user_copy / "SKILL.md").write_text("---\nname: csv-summary\ndescription: mine\n---\n")
    env = {**os.environ, **script(tmp_path, skill="csv-summary", trigger="csv")}
    done = subprocess.run([sys.executable, "-m", "eval_skills", "routing", "--skill-path", str(skill), "--agent", name,
                           "--no-store", "--json", "--workspace", str(tmp_path / "out")],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout)
    assert [(q["query"], q["triggers"], q["errors"]) for q in results["queries"]] == [
        ("summarise the csv", 1, 0), ("write a poem", 0, 0)]
    assert results["metrics"]["f1"] == 1.0
    assert f"{user_copy} is installed at user level too" in done.stderr
    assert sorted(entry["prompt"] for entry in logged(tmp_path)) == ["summarise the csv", "write a poem"]
