"""Planning a paired design from a pilot, and stopping it early: through the command line, figures by hand."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from paired_data import agent_args, invoice_skill, judge_args, paired
from test_paired_cli import small_skill

Z = 1.959964 + 0.841621  # z[0.975] + z[0.8]


def test_a_pilot_gives_the_design_its_figures_and_plan(tmp_path: Path) -> None:
    skill, old, script = invoice_skill(tmp_path)
    out = paired("--skill-path", skill, "--baseline-skill-path", old, *agent_args(script), *judge_args(),
                 "--runs", 2, "--no-compare", "--no-store", "--json", cwd=tmp_path, script_file=script)
    assert out.returncode == 0, out.stderr
    bench = json.loads(out.stdout)
    design = bench["statistics"]["design"]
    # per-case deltas (invoice_skill's docstring): +0.25 x 4, -0.25, 0, +0.125 (case 7 left out): mean 0.125,
    # sample variance 0.21875 / 6. Only case 8 varies over runs: var([1, 0.75]) = 0.03125 with the skill, so the
    # within-case variance is 0.03125 / 7 and the noise it puts in a delta 0.03125 / 2 / 7
    total, within = 0.21875 / 6, 0.03125 / 7
    between = total - within / 2
    assert design["cases"] == 7 and design["runs"] == 2
    assert design["within_case_variance"] == pytest.approx(within, abs=1e-6)
    assert design["between_case_variance"] == pytest.approx(between, abs=1e-6)
    mde = Z * math.sqrt((between + within / 2) / 7)  # 0.2022
    assert design["minimum_detectable_effect"] == pytest.approx(mde, abs=1e-4)
    assert design["target_delta"] == 0.2 and design["target_from"] == "default" and design["underpowered"] is True
    # each arm's standard error, clustered by case, is there beside mean and stddev
    assert bench["run_summary"]["with_skill"]["pass_rate_se_clustered"] > 0
    workspace = tmp_path / "invoice-check-workspace"
    assert "## What this design can detect" in (workspace / "iteration-1" / "benchmark.md").read_text()

    # --plan reads the pilot and runs nothing: 15 points need ceil(Z^2 x total / 0.15^2) = 13 cases; at 7
    # cases 7 x 0.0225 / Z^2 = 0.0201 is below the between-case variance, so no number of runs is enough
    out = paired("--skill-path", skill, "--baseline-skill-path", old, "--plan", "--target-delta", 0.15, "--json",
                 cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    plan = json.loads(out.stdout)
    todo = plan["to_detect_target"]
    assert todo["cases_at_current_runs"] == math.ceil(Z ** 2 * total / 0.15 ** 2) == 13
    assert todo["runs_at_current_cases"] is None and "no number of runs is enough" in todo["runs_note"]
    assert todo["better"] == "cases" and plan["target_from"] == "--target-delta"
    out = paired("--skill-path", skill, "--baseline-skill-path", old, "--plan", "--target-delta", 0.15,
                 cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "run about 13 cases at 2 runs" in out.stdout and "no number of runs is enough" in out.stdout
    assert sorted(p.name for p in workspace.iterdir() if p.name.startswith("iteration-")) == ["iteration-1"]

    # the same design, run again, fails its power gate
    out = paired("--skill-path", skill, "--baseline-skill-path", old, *agent_args(script), *judge_args(),
                 "--runs", 2, "--no-compare", "--no-store", "--fail-underpowered", cwd=tmp_path, script_file=script)
    assert out.returncode == 1
    assert "the design is underpowered: it detects lifts of 20 pp or more with 80% power, not 20 pp" in out.stderr


def test_plan_without_a_pilot_is_one_line(tmp_path: Path) -> None:
    skill, _, _ = small_skill(tmp_path, 2)
    out = paired("--skill-path", skill, "--plan", cwd=tmp_path)
    assert out.returncode == 2
    assert out.stderr.strip().splitlines()[-1].startswith("error: ")
    assert "run a small pilot first" in out.stderr


def test_adaptive_stops_once_the_lift_is_settled(tmp_path: Path) -> None:
    skill, _, script = small_skill(tmp_path, 8)  # the skill passes every case, the baseline fails every one
    out = paired("--skill-path", skill, *agent_args(script), "--runs", 3, "--adaptive", "--no-compare",
                 "--no-store", "--json", cwd=tmp_path, script_file=script)
    assert out.returncode == 0, out.stderr
    bench = json.loads(out.stdout)
    seq = bench["statistics"]["sequential"]
    # round 1 spends 0.05 ln(1 + (e - 1) / 3) = 0.02264; 8 deltas of +1: k = floor(0.01132 x 256) = 2, so the
    # interval's lower bound is the 2nd smallest subset mean, 1: above 0
    assert (seq["rounds_run"], seq["reason"], seq["stopped_early"], seq["runs_saved"]) == (1, "lift", True, 32)
    assert seq["looks"][0]["alpha"] == pytest.approx(0.022642, abs=1e-6)
    assert bench["statistics"]["pass_rate_delta"]["ci_low"] == 1.0
    assert bench["metadata"]["complete"] is True and bench["metadata"]["missing_runs"] == []
    assert bench["verdict"].startswith("The skill raises the pass rate")
    assert any("stopped after 1 round of 3" in note for note in bench["notes"])
    case = tmp_path / "invoice-check-workspace" / "iteration-1" / "eval-1"
    assert (case / "with_skill" / "run-1").is_dir() and not (case / "with_skill" / "run-2").exists()


def test_adaptive_stops_when_no_lift_above_the_target_remains(tmp_path: Path) -> None:
    skill, _, script = small_skill(tmp_path, 8, helps=False)  # both arms pass everything: deltas of 0
    common = ["--skill-path", skill, *agent_args(script), "--runs", 3, "--adaptive", "--no-compare", "--no-store",
              "--json"]
    out = paired(*common, "--target-delta", 0.2, cwd=tmp_path, script_file=script)
    assert out.returncode == 0, out.stderr
    seq = json.loads(out.stdout)["statistics"]["sequential"]
    assert (seq["rounds_run"], seq["reason"], seq["runs_saved"]) == (1, "within_target", 32)
    out = paired(*common, cwd=tmp_path, script_file=script)  # no target: nothing settles a null result early
    assert out.returncode == 0, out.stderr
    seq = json.loads(out.stdout)["statistics"]["sequential"]
    assert (seq["rounds_run"], seq["stopped_early"], seq["runs_saved"]) == (3, False, 0)
    assert [look["round"] for look in seq["looks"]] == [1, 2, 3]


def test_adaptive_needs_several_runs(tmp_path: Path) -> None:
    skill, _, script = small_skill(tmp_path, 2)
    out = paired("--skill-path", skill, *agent_args(script), "--adaptive", "--no-store", cwd=tmp_path,
                 script_file=script)
    assert out.returncode == 2 and "--adaptive needs --runs 2 or more" in out.stderr


def test_check_assertions_before_any_agent_runs(tmp_path: Path) -> None:
    skill, _, script = small_skill(tmp_path, 3)
    path = skill / "evals" / "evals.json"
    evals = json.loads(path.read_text())
    evals["evals"][0]["expected_output"] = "The total only"  # fails its own contains "VAT amount"
    evals["evals"][1]["selftune_assertions"].append({"type": "not_contains", "value": "ERROR"})  # empty passes
    evals["evals"][2]["selftune_assertions"].append({"type": "tool_called", "value": "Read"})  # not checkable
    path.write_text(json.dumps(evals))
    log = tmp_path / "agent-log.jsonl"
    out = paired("--skill-path", skill, *agent_args(script), "--no-compare", "--no-store", "--strict-assertions",
                 cwd=tmp_path, script_file=script)
    assert out.returncode == 1, out.stderr
    assert ("eval 1: the assertion 'contains \"VAT amount\"' fails on the case's own expected_output"
            in out.stderr)
    assert "eval 2: the assertion 'not_contains \"ERROR\"' passes an empty response" in out.stderr
    assert "tool_called" not in out.stderr
    assert "1 assertions contradict their case, 1 check nothing" in out.stderr
    assert not log.exists() and not (tmp_path / "invoice-check-workspace").exists()  # no agent ran
    out = paired("--skill-path", skill, *agent_args(script), "--no-compare", "--no-store", "--check-assertions",
                 "--json", cwd=tmp_path, script_file=script)
    assert out.returncode == 0, out.stderr
    found = json.loads(out.stdout)["metadata"]["assertion_check"]
    assert [(f["eval_id"], f["kind"]) for f in found] == [(1, "contradicts"), (2, "checks_nothing")]
    assert found[0]["evidence"] == "not found in the answer (14 characters)"


def test_compare_iterations_only_when_comparable(tmp_path: Path) -> None:
    skill, _, script = small_skill(tmp_path, 8, helps=False)  # iteration 1: both arms pass every case
    common = ["--skill-path", skill, *agent_args(script), "--no-compare", "--no-store"]
    assert paired(*common, cwd=tmp_path, script_file=script).returncode == 0
    md = skill / "SKILL.md"
    md.write_text(md.read_text().replace("version 2", "version 1"))  # the skill now misses the VAT amount
    assert paired(*common, cwd=tmp_path, script_file=script).returncode == 0
    out = paired("--skill-path", skill, "--compare-iterations", 1, 2, "--json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    with_skill, baseline = result["arms"]
    # every case's with_skill pass rate went from 1 to 0; 8 deltas of -1: the interval is [-1, -1]
    assert (with_skill["configuration"], with_skill["estimate"], with_skill["ci_high"]) == ("with_skill", -1.0, -1.0)
    assert with_skill["p_value"] == 2 / 2 ** 8 and with_skill["cases"] == 8
    assert baseline["configuration"] == "without_skill" and baseline["estimate"] == 0.0
    assert result["different_conditions"] == {}
    assert result["verdict"].startswith("Iteration 2 lowers the with_skill pass rate against iteration 1: -100.0 pp")

    evals = skill / "evals" / "evals.json"  # a changed test set: iteration 3 is not comparable with 1
    data = json.loads(evals.read_text())
    data["evals"][0]["prompt"] += " today"
    evals.write_text(json.dumps(data))
    assert paired(*common, cwd=tmp_path, script_file=script).returncode == 0
    out = paired("--skill-path", skill, "--compare-iterations", 1, 3, cwd=tmp_path)
    assert out.returncode == 2
    assert "iterations 1 and 3 are not comparable: the test set (case ids, prompts, expected outputs) changed" in (
        out.stderr)
    assert "--allow-different test-set" in out.stderr
    out = paired("--skill-path", skill, "--compare-iterations", 1, 3, "--allow-different", "test-set",
                 cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "Compared although the test set (case ids, prompts, expected outputs) changed." in out.stdout
    # the agent's model differs: refused as well
    assert paired(*common, "--model", "other-model", cwd=tmp_path, script_file=script).returncode == 0
    out = paired("--skill-path", skill, "--compare-iterations", 3, 4, cwd=tmp_path)
    assert out.returncode == 2 and "model was the default, now other-model" in out.stderr


def test_several_agents_say_whether_the_skill_is_portable(tmp_path: Path) -> None:
    import os
    import sys

    from paired_data import V1_ANSWER, V2_ANSWER

    skill, _, script = small_skill(tmp_path, 8)
    data = json.loads(script.read_text())  # the command agent: the skill makes it miss the VAT amount
    data.update(answer=V2_ANSWER, skill_answers=[{"when": "version 2", "skilled_answer": V1_ANSWER}])
    script.write_text(json.dumps(data))
    fakes = Path(__file__).parent / "fakes"  # the stand-in claude CLI: the skill makes it pass
    cli = {"skill": "invoice-check", "answer": "plain answer", "skilled_answer": V2_ANSWER}
    env = {"PATH": f"{fakes}:{Path(sys.executable).parent}:{os.environ['PATH']}", "FAKE_CLI_JSON": json.dumps(cli),
           "HOME": str(tmp_path / "home")}
    out = paired("--skill-path", skill, "--agent", "command", *agent_args(script), "--agent", "claude",
                 "--model", "claude=sonnet-x", "--no-compare", "--no-store", "--json", cwd=tmp_path, script_file=script,
                 env=env)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    report = result["portability"]
    by_agent = {a["agent"]: a for a in report["agents"]}
    assert by_agent["command"]["estimate"] == -1.0 and by_agent["command"]["direction"] == "hurts"
    assert by_agent["claude"]["estimate"] == 1.0 and by_agent["claude"]["direction"] == "helps"
    assert by_agent["claude"]["model"] == "sonnet-x" and by_agent["command"]["model"] is None
    # per case the command agent's delta (-1) minus claude's (+1): eight differences of -2
    (pair,) = report["interaction"]
    assert pair["agents"] == ["command", "claude"] and (pair["difference"], pair["cases"]) == (-2.0, 8)
    assert pair["p_value"] == 2 / 2 ** 8
    assert report["verdict"] == ("Not portable: the skill helps on claude and hurts on command (each agent's 95% "
                                 "interval excludes 0).")
    agents = tmp_path / "invoice-check-workspace" / "agents"
    assert (agents / "command" / "iteration-1" / "benchmark.json").is_file()
    assert (agents / "claude" / "iteration-1" / "benchmark.json").is_file()
    assert "Not portable" in (agents / "portability-1.md").read_text()
    assert result["benchmarks"]["claude"]["metadata"]["model"] == "sonnet-x"


def test_agent_options_for_several_agents_are_checked(tmp_path: Path) -> None:
    skill, _, script = small_skill(tmp_path, 2)
    out = paired("--skill-path", skill, "--agent", "claude", "--agent", "codex", "--agent-cmd", "x", "--no-store",
                 cwd=tmp_path)
    assert out.returncode == 2 and "--agent-cmd: applies only to --agent command, none of which is given" in out.stderr
    out = paired("--skill-path", skill, "--agent", "claude", "--agent", "claude", "--no-store", cwd=tmp_path)
    assert out.returncode == 2 and "names the same agent twice" in out.stderr
    out = paired("--skill-path", skill, "--agent", "claude", "--agent", "codex", "--model", "opencode=m",
                 "--no-store", cwd=tmp_path)
    assert out.returncode == 2 and "names the agent 'opencode', which is not among the --agent given" in out.stderr


def test_runs_that_report_different_models_are_flagged(tmp_path: Path) -> None:
    skill, _, script = small_skill(tmp_path, 2)
    data = json.loads(script.read_text())
    data["usage"] = {"model": "model-2026-01", "input_tokens": 10, "output_tokens": 5}
    data["cases"] = [{"match": "invoice 2", "usage": {"model": "model-2026-06", "input_tokens": 10,
                                                      "output_tokens": 5}}]
    script.write_text(json.dumps(data))
    out = paired("--skill-path", skill, *agent_args(script), "--no-compare", "--no-store", "--json", cwd=tmp_path,
                 script_file=script)
    assert out.returncode == 0, out.stderr
    bench = json.loads(out.stdout)
    assert bench["metadata"]["reported_models"] == ["model-2026-01", "model-2026-06"]
    assert bench["metadata"]["conditions_within"] == {
        "model-2026-01": ["eval-1-with_skill-run-1", "eval-1-without_skill-run-1"],
        "model-2026-06": ["eval-2-with_skill-run-1", "eval-2-without_skill-run-1"]} or sorted(
        map(sorted, bench["metadata"]["conditions_within"].values())) == [
        ["eval-1-with_skill-run-1", "eval-1-without_skill-run-1"],
        ["eval-2-with_skill-run-1", "eval-2-without_skill-run-1"]]
    assert any(note.startswith("The runs of this iteration report different models") for note in bench["notes"])
