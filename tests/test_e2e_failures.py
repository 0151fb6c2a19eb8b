"""The real CLIs when things go wrong: a model that keeps failing, a refused key, Claude Code's turn limit, a model
that stalls past --timeout (the CLI and its children gone afterwards), Ctrl-C in an iteration and --resume."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from agent_clis import CLIS, MODELS, cli_env, cli_path, require_cli
from e2e_scenarios import SKILL, eval_skills, invoice_skill, runs
from fakes import FAKE_JUDGE
from fakes.model_server import Answer, Cut, Fail, ModelServer, Stall, ToolUse, tooled

from eval_skills.agents.claude import MAX_RETRIES

pytestmark = pytest.mark.e2e


def one_case(tmp_path: Path) -> Path:
    skill, _ = invoice_skill(tmp_path)
    evals = json.loads((skill / "evals" / "evals.json").read_text())
    evals["evals"] = evals["evals"][:1]
    (skill / "evals" / "evals.json").write_text(json.dumps(evals))
    return skill


def processes_with(tag: str) -> list[int]:
    """Processes whose environment holds ``tag`` (the CLIs a test started, and whatever they started)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if tag.encode() in (entry / "environ").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def paired_runs(cli: str, tmp_path: Path, model: ModelServer, *extra: object, env: dict[str, str] | None = None):
    skill = one_case(tmp_path)
    out = eval_skills("paired", "--skill-path", skill, "--model", MODELS[cli], "--concurrency", 2, "--no-compare",
                      "--no-store", *extra, cli=cli, server=model, cwd=tmp_path, home=tmp_path / "home", env=env)
    return out, runs(tmp_path / f"{SKILL}-workspace" / "iteration-1")


@pytest.mark.parametrize("cli", CLIS)
def test_a_model_that_keeps_failing_ends_each_run_as_an_error_saying_so(cli: str, tmp_path: Path) -> None:
    require_cli(cli)
    with ModelServer() as model:
        model.rule(tooled(), Fail(500, "the scripted model is down", retry_after=0))
        out, found = paired_runs(cli, tmp_path, model, "--timeout", 200, env={"CLAUDE_CODE_MAX_RETRIES": "1"})
        tried = len(model.agent_calls())
    assert out.returncode == 1, out.stderr  # nothing could be measured
    assert tried >= 2  # the CLI tried (and retried) before giving up
    assert {run["status"] for run in found.values()} == {"error"}
    # Claude Code and OpenCode pass the model's message on; Codex says its own ("experiencing high demand")
    said = "the scripted model is down" if cli != "codex" else "codex reported: We’re currently experiencing high"
    assert all(said in run["error"] for run in found.values()), [run["error"] for run in found.values()]


@pytest.mark.parametrize("cli", CLIS)
def test_a_refused_key_is_an_error_run(cli: str, tmp_path: Path) -> None:
    require_cli(cli)
    with ModelServer() as model:
        model.rule(tooled(), Fail(401, "invalid x-api-key"))
        out, found = paired_runs(cli, tmp_path, model, "--timeout", 200)
    assert out.returncode == 1, out.stderr
    assert {run["status"] for run in found.values()} == {"error"}
    said = "invalid api key" if cli == "claude" else "invalid x-api-key"  # Claude Code says its own
    assert all(said in run["error"].lower() for run in found.values()), \
        [run["error"] for run in found.values()]


@pytest.mark.parametrize(("status", "env", "retries"), [(429, {}, MAX_RETRIES), (529, {}, MAX_RETRIES),
                                                      (529, {"CLAUDE_CODE_MAX_RETRIES": "1"}, 1)])
def test_claude_retries_a_busy_model_as_often_as_the_run_says(status: int, env: dict[str, str], retries: int,
                                                              tmp_path: Path) -> None:
    """Each run sets CLAUDE_CODE_MAX_RETRIES (Claude Code's own default, 10 with back-off, outlasts a timeout);
    a value of the user's is kept."""
    require_cli("claude")
    with ModelServer() as model:
        model.rule(tooled(), Fail(status, "busy, try again", retry_after=0))
        out, found = paired_runs("claude", tmp_path, model, "--timeout", 200, "--concurrency", 1,
                                 env=env)
        tried = len(model.agent_calls())
    assert out.returncode == 1, out.stderr
    assert {run["status"] for run in found.values()} == {"error"}
    assert all("busy, try again" in run["error"] for run in found.values()), [r["error"] for r in found.values()]
    assert tried == 2 * (1 + retries)  # two runs (with and without the skill), each its first try and its retries


def test_claude_at_its_turn_limit(tmp_path: Path) -> None:
    require_cli("claude")
    with ModelServer() as model:
        model.rule(tooled(), Answer(tools=(ToolUse("Glob", {"pattern": "*.txt"}),)))  # never done
        out, found = paired_runs("claude", tmp_path, model, "--timeout", 200, "--max-turns", 2)
    assert out.returncode == 1, out.stderr
    assert {run["status"] for run in found.values()} == {"error"}
    assert all("error_max_turns" in run["error"] or "turn" in run["error"] for run in found.values()), \
        [run["error"] for run in found.values()]


@pytest.mark.parametrize("cli", CLIS)
def test_a_stalled_model_times_out_and_leaves_nothing_running(cli: str, tmp_path: Path) -> None:
    require_cli(cli)
    tag = f"EVAL_SKILLS_E2E_{uuid.uuid4().hex}"
    with ModelServer() as model:
        model.rule(tooled(), Stall())
        out, found = paired_runs(cli, tmp_path, model, "--timeout", 25, env={tag: "1"})
        assert out.returncode == 1, out.stderr
        assert {run["status"] for run in found.values()} == {"timeout"}
        assert all("timed out after 25 s" in run["error"] for run in found.values())
        deadline = time.monotonic() + 5
        while processes_with(tag) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert processes_with(tag) == []  # the CLIs and everything they started are gone


@pytest.mark.parametrize("cli", CLIS)
def test_ctrl_c_in_an_iteration_then_resume(cli: str, tmp_path: Path) -> None:
    require_cli(cli)
    skill, _ = invoice_skill(tmp_path)
    with ModelServer() as model:
        model.rule(tooled(), Answer("The total is 42 EUR; VAT amount 7 EUR."), delay=2.0)  # each run takes a while
        env = {**os.environ, **cli_env(cli, model, tmp_path / "home")}
        argv = [sys.executable, "-m", "eval_skills", "paired", "--skill-path", str(skill), "--agent", cli,
                "--agent-bin", str(cli_path(cli)), "--model", MODELS[cli], "--concurrency", 1, "--timeout", "200",
                "--no-compare", "--no-store", "--judge-cmd", f"{sys.executable} {FAKE_JUDGE}"]
        iteration = tmp_path / f"{SKILL}-workspace" / "iteration-1"
        proc = subprocess.Popen(list(map(str, argv)), cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 180
        while not list(iteration.rglob("timing.json")) and time.monotonic() < deadline:
            time.sleep(0.1)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 130, err
        finished = {p: p.read_bytes() for p in iteration.rglob("timing.json")}
        assert 1 <= len(finished) < 4
        asked = len(model.agent_calls())

        done = subprocess.run(list(map(str, [*argv, "--resume"])), cwd=tmp_path, env=env, capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        assert all(path.read_bytes() == data for path, data in finished.items())  # finished runs not run again
        assert len(model.agent_calls()) - asked == 4 - len(finished)
    bench = json.loads((iteration / "benchmark.json").read_text())
    assert bench["metadata"]["complete"] is True and len(bench["runs"]) == 4


@pytest.mark.parametrize("cli", CLIS)
def test_a_busy_model_and_a_cut_stream_are_retried(cli: str, tmp_path: Path) -> None:
    require_cli(cli)
    # Anthropic's "overloaded"; a 503 for the others (Codex 0.171 gives up on a 429 at once: "exceeded retry limit")
    status = 529 if cli == "claude" else 503
    with ModelServer() as model:
        model.rule(tooled(), Fail(status, "busy, try again", retry_after=0.2), times=1, name="busy")
        model.rule(tooled(), Cut(Answer("The total is 42 EUR; VAT amount 7 EUR."), events=2), times=1, name="cut")
        model.rule(tooled(), Answer("The total is 42 EUR; VAT amount 7 EUR."), name="answer")
        out, found = paired_runs(cli, tmp_path, model, "--timeout", 200, "--concurrency", 1,
                                 env={"CLAUDE_CODE_MAX_RETRIES": "3"})
        answered = [len(model.answered_by(name)) for name in ("busy", "cut", "answer")]
    assert out.returncode == 0, out.stderr
    assert {run["status"] for run in found.values()} == {"ok"}, [run["error"] for run in found.values()]
    assert answered[:2] == [1, 1] and answered[2] == 2  # the first run retried twice; the second went through
