"""``paired --dry-run`` and ``routing --dry-run`` through the command line: every check a run makes first, then the
plan (cases or queries, arms, runs, the agent's full command line with its secrets masked, where skills go, the
judge), and nothing run or written: no workspace folder, no store, no iteration, no agent or judge started."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from paired_data import agent_args, invoice_skill, judge_args
from test_routing import QUERIES, write_skill

from eval_skills.cli import cli

FAKES = Path(__file__).parent / "fakes"
SECRET = "tok-9f8e7d6c5b4a3210"


def invoke(*args: object, env: dict[str, str] | None = None):
    return CliRunner().invoke(cli, [str(a) for a in args], env=env)


def written(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


@pytest.fixture
def paired_setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("FAKE_JUDGE_LOG", str(tmp_path / "judge-log.jsonl"))
    skill, old, script = invoice_skill(tmp_path)
    monkeypatch.setenv("FAKE_AGENT_CONFIG", str(script))
    return skill, old, script


def test_paired_dry_run_prints_the_plan_and_writes_nothing(tmp_path: Path, paired_setup) -> None:
    skill, old, script = paired_setup
    before = written(tmp_path)
    result = invoke("paired", "--skill-path", skill, "--baseline-skill-path", old, "--runs", 2, *agent_args(script),
                    *judge_args(), "--dry-run")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert out.startswith("dry run of paired: nothing was run or written\n")
    assert f"iteration 1: would write {tmp_path / 'invoice-check-workspace' / 'iteration-1'}" in out
    assert "cases (8):" in out
    assert "  1: 2 assertions, 2 checks, files: evals/files/invoice.txt, evals/files/notes/terms.txt" in out
    assert "old_skill: invoice-check from" in out
    assert "runs: 2 per case and arm; 32 agent runs in all, 4 at once" in out
    assert f"command (in each run's folder): {sys.executable} " in out and "--prompt-file '<prompt file>'" in out
    assert "skills go to <run folder>/.agents/skills" in out
    assert "judge: command" in out and "store: eval-skills.db" in out
    assert written(tmp_path) == before  # no workspace, no store, no iteration
    assert not (tmp_path / "agent-log.jsonl").exists() and not (tmp_path / "judge-log.jsonl").exists()


def test_paired_dry_run_json_is_the_plan(tmp_path: Path, paired_setup) -> None:
    skill, _, script = paired_setup
    before = written(tmp_path)
    result = invoke("paired", "--skill-path", skill, *agent_args(script), *judge_args(), "--dry-run", "--json",
                    "--store", tmp_path / "s.db", "--iteration", 4)
    assert result.exit_code == 0, result.output
    plan = json.loads(result.stdout)
    assert plan["dry_run"] is True and plan["iteration"] == 4
    assert [arm["arm"] for arm in plan["arms"]] == ["with_skill", "without_skill"]
    assert plan["arms"][0]["skills"][0]["installed_at"] == "<run folder>/.agents/skills/invoice-check"
    assert plan["arms"][1]["skills"] == []
    assert plan["agent_runs"] == len(plan["cases"]) * 2 == 16
    assert plan["agent"]["agent"] == "command" and plan["agent"]["command"][0] == sys.executable
    assert plan["judge"]["backend"] == "command" and plan["store"] == str(tmp_path / "s.db")
    assert written(tmp_path) == before


def test_a_preset_agents_command_line_is_shown_with_its_secrets_masked(tmp_path: Path, paired_setup,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    skill, _, _ = paired_setup
    monkeypatch.setenv("PATH", f"{FAKES}:{Path(sys.executable).parent}:/usr/bin:/bin")
    monkeypatch.setenv("MY_SERVICE_TOKEN", SECRET)
    result = invoke("paired", "--skill-path", skill, "--agent", "claude", f"--agent-arg=--settings-token={SECRET}",
                    "--model", "big-model", *judge_args(), "--dry-run", "--json")
    assert result.exit_code == 0, result.output
    agent = json.loads(result.stdout)["agent"]
    assert agent["command"] == [str(FAKES / "claude"), "-p", "--output-format", "stream-json", "--verbose",
                                "--max-turns", "30", "--model", "big-model", "--permission-mode", "acceptEdits",
                                "--settings-token=***"]
    assert agent["stdin"] == "the prompt" and agent["skills_dir"] == ".claude/skills"
    assert agent["user_skill_dirs"] == [str(tmp_path / "home" / ".claude" / "skills")]
    assert SECRET not in result.stdout
    text = invoke("paired", "--skill-path", skill, "--agent", "claude", f"--agent-arg=--settings-token={SECRET}",
                  *judge_args(), "--dry-run")
    assert "--settings-token=***" in text.stdout and SECRET not in text.output
    assert "skills go to <run folder>/.claude/skills" in text.stdout


@pytest.mark.parametrize(("args", "message"), [
    (["--agent", "nope"], "unknown agent 'nope'"),
    (["--agent-cmd", "no-such-agent-xyz {prompt}"], "not found"),
    (["--workspace", "SKILL/runs"], "--workspace: is inside the skill folder"),
    (["--resume"], "no iteration to resume"),
    (["--judge", "nope"], "unknown judge 'nope'"),
    (["--evals", "none.json"], "none.json: evals file not found"),
    (["--store", "not-a-store.db"], "not-a-store.db"),
])
def test_paired_dry_run_bad_input_is_one_line_exit_2(tmp_path: Path, paired_setup, args: list[str],
                                                     message: str) -> None:
    skill, _, script = paired_setup
    (tmp_path / "not-a-store.db").write_text("my notes, not a database")
    args = [str(skill / "runs") if a == "SKILL/runs" else a for a in args]
    agent = [] if any(a in args for a in ("--agent", "--agent-cmd")) else agent_args(script)
    judge = [] if "--judge" in args else judge_args()
    before = written(tmp_path)
    result = invoke("paired", "--skill-path", skill, *agent, *judge, *args, "--dry-run")
    assert result.exit_code == 2, result.output
    assert len(result.stderr.strip().splitlines()) == 1 and message in result.stderr, result.stderr
    assert result.stdout == "" and written(tmp_path) == before


def test_paired_dry_run_refuses_a_taken_iteration(tmp_path: Path, paired_setup) -> None:
    skill, _, script = paired_setup
    taken = tmp_path / "invoice-check-workspace" / "iteration-1"
    taken.mkdir(parents=True)
    (taken / "notes.txt").write_text("mine")
    result = invoke("paired", "--skill-path", skill, *agent_args(script), *judge_args(), "--iteration", 1,
                    "--dry-run")
    assert result.exit_code == 2 and "iteration-1: --iteration: already holds runs" in result.stderr
    result = invoke("paired", "--skill-path", skill, *agent_args(script), *judge_args(), "--dry-run", "--json")
    assert result.exit_code == 0 and json.loads(result.stdout)["iteration"] == 2
    assert sorted(p.name for p in taken.iterdir()) == ["notes.txt"]


@pytest.fixture
def routing_setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    skill = write_skill(tmp_path / "invoice-check", "Checks invoice totals, VAT and due dates. Use when asked to "
                        "check an invoice.", QUERIES)
    write_skill(tmp_path / "others" / "receipt-scan", "Reads scanned receipts. Use for receipts.")
    monkeypatch.setenv("FAKE_AGENT_JSON", json.dumps({"log": str(tmp_path / "runs.jsonl")}))
    return skill, ["--agent-cmd", f"{sys.executable} {FAKES / 'fake_agent.py'} --prompt-file {{prompt_file}}",
                   "--agent-output", "events"]


def test_routing_dry_run_prints_the_plan_and_writes_nothing(tmp_path: Path, routing_setup) -> None:
    skill, agent = routing_setup
    before = written(tmp_path)
    result = invoke("routing", "--skill-path", skill, "--distractors", tmp_path / "others", *agent, "--runs", 3,
                    "--dry-run")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert out.startswith("dry run of routing: nothing was run or written\n")
    assert f"results: would write {tmp_path / 'invoice-check-workspace' / 'routing-1'}" in out
    assert f"queries ({len(QUERIES)}, {sum(q['should_trigger'] for q in QUERIES)} should trigger):" in out
    assert "receipt-scan (distractor) from" in out and "at <run folder>/.agents/skills/receipt-scan" in out
    assert f"runs: 3 per query; {3 * len(QUERIES)} agent runs in all" in out
    assert written(tmp_path) == before and not (tmp_path / "runs.jsonl").exists()
    result = invoke("routing", "--skill-path", skill, "--distractors", tmp_path / "others", *agent, "--dry-run",
                    "--json", "--no-store")
    plan = json.loads(result.stdout)
    assert [(s["name"], s["role"]) for s in plan["skills"]] == [("invoice-check", "skill"),
                                                                 ("receipt-scan", "distractor")]
    assert plan["agent_runs"] == len(QUERIES) and plan["store"] is None
    assert written(tmp_path) == before


@pytest.mark.parametrize(("args", "message"), [
    (["--static"], "--static runs no agent already: drop --dry-run"),
    (["--workspace", "SKILL/results"], "--workspace: is inside the skill folder"),
    (["--agent-output", "text"], "reports no skill invocations"),
    (["--distractors", "nowhere"], "distractor folder not found"),
])
def test_routing_dry_run_bad_input_is_one_line_exit_2(tmp_path: Path, routing_setup, args: list[str],
                                                      message: str) -> None:
    skill, agent = routing_setup
    args = [str(skill / "results") if a == "SKILL/results" else a for a in args]
    if "--agent-output" in args:
        agent = agent[:2]
    before = written(tmp_path)
    result = invoke("routing", "--skill-path", skill, *agent, *args, "--dry-run")
    assert result.exit_code == 2, result.output
    assert len(result.stderr.strip().splitlines()) == 1 and message in result.stderr, result.stderr
    assert result.stdout == "" and written(tmp_path) == before
