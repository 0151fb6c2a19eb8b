"""Runs on several agents and across iterations, through the command line with the stand-in agents: the agent
CLI's version recorded per run and per iteration (and a changed one named by --compare-iterations), the per-agent
portability table on the review page, the verdict "the lift differs", and an adaptive design finished by --resume."""

from __future__ import annotations

import html
import json
import os
import subprocess
import sys
from pathlib import Path

from paired_data import V2_ANSWER, agent_args, paired
from test_paired_cli import small_skill

from eval_skills.viewer import open_workspace_source

FAKES = Path(__file__).parent / "fakes"


def claude_env(tmp_path: Path, version: str, **script: object) -> dict[str, str]:
    """The stand-in claude CLI first on PATH, answering ``--version`` with ``version``; the skill makes it pass."""
    cli = {"skill": "invoice-check", "answer": "plain answer", "skilled_answer": V2_ANSWER, "version": version,
           **script}
    return {"PATH": f"{FAKES}:{Path(sys.executable).parent}:{os.environ['PATH']}", "FAKE_CLI_JSON": json.dumps(cli),
            "HOME": str(tmp_path / "home")}


def benchmark_tab(workspace: Path) -> str:
    """The Benchmark tab of the review page of ``workspace``, as the page shows it."""
    return open_workspace_source(workspace).tab_html("benchmark", static=True) or ""


def test_the_cli_version_is_recorded_and_a_changed_one_named(tmp_path: Path) -> None:
    skill, _, script = small_skill(tmp_path, 3)
    common = ["--skill-path", skill, "--agent", "claude", "--no-compare", "--no-store"]
    out = paired(*common, "--json", cwd=tmp_path, env=claude_env(tmp_path, "2.1.0 (Claude Code)"))
    assert out.returncode == 0, out.stderr
    bench = json.loads(out.stdout)
    assert bench["metadata"]["agent_version"] == "2.1.0 (Claude Code)"
    assert bench["metadata"]["conditions"]["agent_version"] == "2.1.0 (Claude Code)"
    assert "agent_versions_within" not in bench["metadata"]
    iteration = tmp_path / "invoice-check-workspace" / "iteration-1"
    timings = [json.loads(p.read_text()) for p in iteration.glob("eval-*/*/run-*/timing.json")]
    assert len(timings) == 6 and {t["agent_version"] for t in timings} == {"2.1.0 (Claude Code)"}
    config = json.loads((iteration / "paired_config.json").read_text())
    assert config["conditions"]["agent_version"] == "2.1.0 (Claude Code)"

    out = paired(*common, cwd=tmp_path, env=claude_env(tmp_path, "2.2.0 (Claude Code)"))
    assert out.returncode == 0, out.stderr
    out = paired("--skill-path", skill, "--compare-iterations", 1, 2, cwd=tmp_path)
    assert out.returncode == 2
    assert ("iterations 1 and 2 are not comparable: the agent's CLI was 2.1.0 (Claude Code), now 2.2.0 (Claude Code)"
            in out.stderr) and "--allow-different agent-version" in out.stderr
    out = paired("--skill-path", skill, "--compare-iterations", 1, 2, "--allow-different", "agent-version", "--json",
                 cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["different_conditions"] == {
        "agent-version": "the agent's CLI was 2.1.0 (Claude Code), now 2.2.0 (Claude Code)"}
    assert result["verdict"].endswith("Compared although the agent's CLI was 2.1.0 (Claude Code), now 2.2.0 "
                                      "(Claude Code).")


def test_a_cli_upgraded_between_a_run_and_its_resume_is_flagged(tmp_path: Path) -> None:
    skill, _, _ = small_skill(tmp_path, 3)
    # 15 tokens a run: a budget of 40 stops after the third, one run at a time
    usage = {"input": 10, "output": 5, "cache_read": 0, "cache_write": 0}
    common = ["--skill-path", skill, "--agent", "claude", "--no-compare", "--no-store", "--concurrency", 1]
    out = paired(*common, "--budget-tokens", 40, cwd=tmp_path, env=claude_env(tmp_path, "2.1.0", usage=usage))
    assert out.returncode == 0, out.stderr
    out = paired(*common, "--resume", "--json", cwd=tmp_path, env=claude_env(tmp_path, "2.2.0", usage=usage))
    assert out.returncode == 0, out.stderr
    bench = json.loads(out.stdout)
    within = bench["metadata"]["agent_versions_within"]
    assert sorted(within) == ["2.1.0", "2.2.0"] and (len(within["2.1.0"]), len(within["2.2.0"])) == (3, 3)
    assert any(n.startswith("The runs of this iteration ran under different versions of the agent's CLI") and
               "2.1.0 in 3 runs; 2.2.0 in 3 runs" in n for n in bench["notes"])
    assert bench["metadata"]["agent_version"] == "2.2.0"  # the iteration's conditions are the latest command's


def test_an_agent_without_a_program_records_no_version(tmp_path: Path) -> None:
    skill, _, script = small_skill(tmp_path, 1)
    out = paired("--skill-path", skill, *agent_args(script), "--no-compare", "--no-store", "--json", cwd=tmp_path,
                 script_file=script)
    assert out.returncode == 0, out.stderr
    bench = json.loads(out.stdout)
    assert bench["metadata"]["agent_version"] is None and bench["metadata"]["conditions"]["agent_version"] is None


def test_the_lift_differs_between_agents_and_the_review_page_shows_the_table(tmp_path: Path) -> None:
    skill, _, script = small_skill(tmp_path, 8)
    data = json.loads(script.read_text())  # the command agent passes with and without the skill: delta 0
    data.update(answer=V2_ANSWER)
    script.write_text(json.dumps(data))
    out = paired("--skill-path", skill, "--agent", "command", *agent_args(script), "--agent", "claude",
                 "--no-compare", "--no-store", "--json", cwd=tmp_path, script_file=script,
                 env=claude_env(tmp_path, "9.9.9 (Claude Code)"))
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    report = result["portability"]
    by_agent = {a["agent"]: a for a in report["agents"]}
    assert (by_agent["command"]["estimate"], by_agent["command"]["direction"]) == (0.0, "unclear")
    assert (by_agent["claude"]["estimate"], by_agent["claude"]["direction"]) == (1.0, "helps")
    # per case the command agent's delta (0) minus claude's (+1): eight differences of -1, every sign flip of
    # which but none is larger: the interval is [-1, -1], p = 2 / 2^8
    (pair,) = report["interaction"]
    assert (pair["difference"], pair["ci_low"], pair["ci_high"], pair["p_value"]) == (-1.0, -1.0, -1.0, 2 / 2 ** 8)
    assert report["verdict"] == ("The lift differs between agents: command minus claude is -100.0 pp (95% interval "
                                 "-100.0 to -100.0 pp, p = 0.00781, 8 cases).")
    assert result["benchmarks"]["claude"]["metadata"]["agent_version"] == "9.9.9 (Claude Code)"
    assert result["benchmarks"]["command"]["metadata"]["agent_version"] is None

    agents = tmp_path / "invoice-check-workspace" / "agents"
    page = benchmark_tab(agents / "claude")
    assert 'id="portability-agents"' in page and "portability-1.md" in page
    assert html.escape(report["verdict"], quote=False) in page
    assert '<tr data-agent="claude" class="current">' in page and '<tr data-agent="command">' in page
    assert "+100.0 pp" in page and "−100.0 pp" not in page and "-100.0 pp" in page
    assert "command − claude" in page
    # the page of a single-agent workspace has no such table
    single, _, single_script = small_skill(tmp_path / "single", 1)
    out = paired("--skill-path", single, *agent_args(single_script), "--no-compare", "--no-store",
                 cwd=tmp_path / "single", script_file=single_script)
    assert out.returncode == 0, out.stderr
    assert 'id="portability' not in benchmark_tab(tmp_path / "single" / "invoice-check-workspace")
    done = subprocess.run([sys.executable, "-m", "eval_skills", "view", str(agents / "command"), "--static",
                           str(tmp_path / "page.html")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr  # the page written whole holds the same table
    assert 'id=\\"portability-agents\\"' in (tmp_path / "page.html").read_text()


def test_a_broken_report_is_a_problem_on_the_page_not_a_crash(tmp_path: Path) -> None:
    skill, _, script = small_skill(tmp_path, 2)
    out = paired("--skill-path", skill, "--agent", "command", *agent_args(script), "--agent", "claude",
                 "--no-compare", "--no-store", cwd=tmp_path, script_file=script, env=claude_env(tmp_path, "1"))
    assert out.returncode == 0, out.stderr
    agents = tmp_path / "invoice-check-workspace" / "agents"
    (agents / "portability-2.json").write_text('{"agents": "<script>alert(1)</script>"}')
    page = benchmark_tab(agents / "command")
    assert "agents/portability-2.json" in page and "<script>alert(1)" not in page
    assert 'id="portability-agents"' in page  # the earlier report that holds this iteration is still shown


def test_an_adaptive_design_finished_by_resume(tmp_path: Path) -> None:
    """Both arms pass every case (deltas of 0): with --target-delta 0.2 the first round settles it. The budget
    stops the first command inside round 1; --resume runs the rest of round 1 only, looks, and stops."""
    skill, _, script = small_skill(tmp_path, 8, helps=False)
    log = tmp_path / "agent-log.jsonl"
    common = ["--skill-path", skill, *agent_args(script), "--runs", 3, "--adaptive", "--target-delta", 0.2,
              "--no-compare", "--no-store", "--concurrency", 1]
    out = paired(*common, "--budget-tokens", 100, "--json", cwd=tmp_path, script_file=script)
    assert out.returncode == 0, out.stderr
    first = json.loads(out.stdout)
    started = len(log.read_text().splitlines())
    assert started == 7  # 15 tokens a run: the 7th brings the total to 105, past 100
    assert first["metadata"]["cut_short"] == "budget" and len(first["metadata"]["missing_runs"]) == 48 - 7
    assert first["statistics"]["sequential"]["looks"] == []  # round 1 never finished: no look yet

    out = paired(*common, "--resume", "--json", cwd=tmp_path, script_file=script)
    assert out.returncode == 0, out.stderr
    bench = json.loads(out.stdout)
    runs = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(runs) == 16  # round 1 (8 cases x 2 arms), each run once: the 7 finished ones were kept
    seq = bench["statistics"]["sequential"]
    assert (seq["rounds_run"], seq["reason"], seq["stopped_early"], seq["runs_saved"]) == (1, "within_target", True,
                                                                                         32)
    assert [look["round"] for look in seq["looks"]] == [1]
    assert bench["metadata"]["complete"] is True and bench["metadata"]["missing_runs"] == []
    assert bench["metadata"]["resumed"] is True and bench["metadata"]["cut_short"] is None
    iteration = tmp_path / "invoice-check-workspace" / "iteration-1"
    assert len(list(iteration.glob("eval-*/*/run-1/timing.json"))) == 16
    assert not list(iteration.glob("eval-*/*/run-2"))
