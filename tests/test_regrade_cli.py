"""`eval-skills regrade`: real `eval-skills paired` runs with the fake agent and the fake judge programs, then
the saved runs graded again with revised assertions or another command judge, in subprocesses; Ctrl-C and
--resume; refusals; the comparison of iterations under a grading rule."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from paired_data import ASSERTIONS, agent_args, judge_args, paired
from regrade_data import count, make_iteration, regrade
from skill_creator_facts import aggregator_runs, viewer_runs

# a second judge: it fails every assertion about the VAT, and otherwise checks the quoted phrases as the fake
# judge does; each call appends a line to $STRICT_LOG
STRICT_JUDGE = r'''
import json, os, re, sys
request = json.loads(sys.stdin.read())
if os.environ.get("STRICT_LOG"):
    with open(os.environ["STRICT_LOG"], "a") as log:
        log.write(request["kind"] + "\n")
if request["kind"] == "grade":
    text = request["response"].lower()
    out = [{"text": a, "passed": "VAT" not in a and all(p.lower() in text for p in re.findall(r'"([^"]+)"', a)),
            "evidence": "strict"} for a in request["assertions"]]
    print(json.dumps({"expectations": out}))
else:
    print(json.dumps({"winner": "TIE", "reasoning": "strict"}))
'''


def revise(skill: Path, tmp_path: Path, change) -> Path:
    """A copy of the skill's evals file with ``change`` applied (to the list of cases), beside the skill."""
    evals = json.loads((skill / "evals" / "evals.json").read_text())
    change(evals["evals"])
    path = tmp_path / "revised-evals.json"
    path.write_text(json.dumps(evals))
    return path


def grading(iteration: Path, case: int, arm: str, name: str = "grading.json") -> dict:
    return json.loads((iteration / f"eval-{case}" / arm / "run-1" / name).read_text())


def test_revised_assertions_are_graded_and_unchanged_verdicts_reused(tmp_path: Path) -> None:
    skill, workspace, iteration = make_iteration(tmp_path)
    v1 = {p: p.read_bytes() for p in iteration.rglob("grading.json")}
    bench_v1 = (iteration / "benchmark.json").read_bytes()

    def change(cases: list[dict]) -> None:
        cases[0]["assertions"].append('It mentions "VAT"')  # case 1: added
        cases[1]["assertions"].remove(ASSERTIONS[0])  # case 5: removed

    evals = revise(skill, tmp_path, change)
    log = tmp_path / "judge-2.jsonl"
    out = regrade(workspace, "--evals", evals, *judge_args(), "--store", tmp_path / "s.db", cwd=tmp_path,
                  env={"FAKE_JUDGE_LOG": str(log)})
    assert out.returncode == 0, out.stderr
    assert "grading version 2 (1 assertions added; 1 removed; 2 judge verdicts asked; 6 reused" in out.stdout
    # only the added assertion went to the judge, once per run of case 1 (both arms); nothing else, no A/B
    assert [json.loads(line)["kind"] for line in log.read_text().splitlines()] == ["grade", "grade"]
    for arm in ("with_skill", "without_skill"):
        new = grading(iteration, 1, arm)
        assert [e["text"] for e in new["expectations"]][:3] == [*ASSERTIONS, 'It mentions "VAT"']
        assert new["grading_version"] == 2
        reused = [e for e in new["expectations"] if e.get("reused_from") == 1]
        assert [e["text"] for e in reused] == ASSERTIONS
        assert ASSERTIONS[0] not in [e["text"] for e in grading(iteration, 5, arm)["expectations"]]
        assert grading(iteration, 1, arm, "grading.v2.json") == new
    assert grading(iteration, 1, "with_skill")["expectations"][2]["passed"] is True  # "VAT amount" says VAT
    assert grading(iteration, 1, "without_skill")["expectations"][2]["passed"] is False
    # version 1 is kept byte for byte beside the new one
    for path, data in v1.items():
        assert (path.parent / "grading.v1.json").read_bytes() == data
    assert (iteration / "benchmark.v1.json").read_bytes() == bench_v1
    bench = json.loads((iteration / "benchmark.json").read_text())
    assert bench["metadata"]["grading_version"] == 2 and bench["metadata"]["evals_path"] == str(evals.resolve())
    assert json.loads((iteration / "benchmark.v2.json").read_text()) == bench
    case5 = [r for r in bench["runs"] if r["eval_id"] == 5 and r["configuration"] == "with_skill"][0]
    assert case5["result"]["total"] == 3  # one judged assertion and the two checks
    assert "## Grading version" in (iteration / "benchmark.md").read_text()
    versions = json.loads((iteration / "grading_versions.json").read_text())
    assert versions["current"] == 2 and [v["version"] for v in versions["versions"]] == [1, 2]
    second = versions["versions"][1]
    assert second["status"] == "finished" and second["made_by"] == "regrade" and second["based_on"] == 1
    assert second["assertions"]["1"][2] == 'It mentions "VAT"' and second["judge"]["backend"] == "command"
    assert second["judge"]["grade_prompt"] == "external" and second["asked"] == 2
    # the store holds the new grades
    with sqlite3.connect(tmp_path / "s.db") as db:
        config = json.loads(db.execute("SELECT config_json FROM paired_iterations").fetchone()[0])
        assert config["grading_version"] == 2
        totals = dict(db.execute("SELECT run_id, total FROM paired_runs").fetchall())
    assert totals["eval-5-with_skill-run-1"] == 3 and totals["eval-1-with_skill-run-1"] == 5

    # skill-creator's viewer and aggregator read the latest version, and every run once
    runs = viewer_runs(iteration)
    assert len(runs) == 4 and all(r["grading"]["grading_version"] == 2 for r in runs)
    assert {arm: len(found) for arm, found in aggregator_runs(iteration).items()} == {"with_skill": 2,
                                                                                     "without_skill": 2}
    # the page shows either version
    from eval_skills.viewer import open_workspace_source

    latest = open_workspace_source(workspace).case_html("1", static=True) or ""
    first = open_workspace_source(workspace, grading_version=1).case_html("1", static=True) or ""
    assert "It mentions &#34;VAT&#34;" in latest and "It mentions &#34;VAT&#34;" not in first


def test_a_changed_prompt_fixture_or_case_is_refused(tmp_path: Path) -> None:
    skill, workspace, iteration = make_iteration(tmp_path)
    before = sorted(p.relative_to(iteration) for p in iteration.rglob("*"))
    cases = {
        "prompt": (lambda c: c[1].update(prompt="Check something else"), "case '5': the prompt changed",
                   "$.evals[1].prompt"),
        "new case": (lambda c: c.append({**c[0], "id": 9}), "case '9' was not run in iteration-1", "$.evals"),
        "dropped case": (lambda c: c.pop(0), "case '1' of iteration-1 is not in the evals file", "$.evals"),
    }
    for name, (change, message, where) in cases.items():
        out = regrade(workspace, "--evals", revise(skill, tmp_path, change), "--no-store", cwd=tmp_path)
        assert out.returncode == 2, (name, out.stderr)
        assert message in out.stderr and where in out.stderr, (name, out.stderr)
        assert len(out.stderr.strip().splitlines()) == 1
    (skill / "evals" / "files" / "invoice.txt").write_text("Invoice 7: 40 EUR + 8 EUR VAT\n")
    out = regrade(workspace, "--no-store", cwd=tmp_path)
    assert out.returncode == 2
    assert "case '1': the fixture file 'evals/files/invoice.txt' changed" in out.stderr
    assert "$.evals[0].files" in out.stderr
    assert sorted(p.relative_to(iteration) for p in iteration.rglob("*")) == before  # nothing written


def test_an_assertion_without_a_verdict_to_reuse_needs_a_judge(tmp_path: Path) -> None:
    skill, workspace, iteration = make_iteration(tmp_path)
    added = revise(skill, tmp_path, lambda c: c[0]["assertions"].append('It mentions "VAT"'))
    out = regrade(workspace, "--evals", added, "--no-store", cwd=tmp_path)
    assert out.returncode == 2
    assert "the assertion 'It mentions \"VAT\"' has no verdict to reuse and needs a judge" in out.stderr
    assert not (iteration / "grading_versions.json").exists()
    # a removed one needs none: every verdict left is reused
    removed = revise(skill, tmp_path, lambda c: c[0]["assertions"].pop())
    out = regrade(workspace, "--evals", removed, "--no-store", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "0 judge verdicts asked" in out.stdout
    assert [e["text"] for e in grading(iteration, 1, "with_skill")["expectations"]][0] == ASSERTIONS[0]
    assert len(grading(iteration, 1, "with_skill")["expectations"]) == 3
    # a regraded iteration is not resumed by paired: its new runs would be graded under another rule
    out = paired("--skill-path", skill, *agent_args(tmp_path / "agent.json"), *judge_args(), "--no-store",
                 "--resume", cwd=tmp_path, script_file=tmp_path / "agent.json")
    assert out.returncode == 2 and "the iteration was graded again by eval-skills regrade" in out.stderr


def test_another_judge_grades_every_run_and_the_two_judges_agreement_is_measured(tmp_path: Path) -> None:
    _, workspace, iteration = make_iteration(tmp_path, cases=(1, 2, 5))
    judge = tmp_path / "strict_judge.py"
    judge.write_text(STRICT_JUDGE)
    log = tmp_path / "strict.log"
    out = regrade(workspace, "--judge-cmd", f"{sys.executable} {judge}", "--no-store", cwd=tmp_path,
                  env={"STRICT_LOG": str(log)})
    assert out.returncode == 0, out.stderr
    assert log.read_text().splitlines() == ["grade"] * 6  # every run, nothing reused from another judge
    bench = json.loads((iteration / "benchmark.json").read_text())
    two = bench["judges_agreement"]
    assert two["versions"] == [1, 2] and two["units"] == 12
    # the VAT assertion: the fake judge passed it in the 3 with-skill runs but one (case 5 gets the v1
    # answer); the strict judge failed all: 2 disagreements of 12
    assert two["agree"] == 10
    assert two["alpha"] is not None and two["alpha"] < 1
    assert "## Two judges" in (iteration / "benchmark.md").read_text()
    assert bench["metadata"]["judge"] == "command" and bench["metadata"]["grading_judge"]["identity"]


def test_ctrl_c_keeps_the_grades_that_finished_and_resume_finishes(tmp_path: Path) -> None:
    _, workspace, iteration = make_iteration(tmp_path, cases=(1, 2, 3, 4))
    v1 = {p: p.read_bytes() for p in iteration.rglob("grading.json")}
    log = tmp_path / "judge-2.jsonl"
    env = {**os.environ, "FAKE_JUDGE_DELAY": "0.4", "FAKE_JUDGE_LOG": str(log), "FAKE_JUDGE_MODE": ""}
    other_judge = ["--judge-cmd", f"{sys.executable} -B {Path(__file__).parent / 'fakes' / 'fake_judge.py'}"]
    common = [workspace, *other_judge, "--concurrency", 1, "--store", tmp_path / "s.db"]
    proc = subprocess.Popen([sys.executable, "-m", "eval_skills", "regrade", *map(str, common)], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.time() + 60
    while time.time() < deadline and len(list(iteration.rglob("grading.v2.json"))) < 2:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "--resume" in err
    kept = {p: p.read_bytes() for p in iteration.rglob("grading.v2.json")}
    assert 2 <= len(kept) < 8
    versions = json.loads((iteration / "grading_versions.json").read_text())
    assert versions["current"] == 1 and versions["versions"][1]["status"] == "interrupted"
    assert all(p.read_bytes() == data for p, data in v1.items())  # the latest finished version is untouched
    assert json.loads((iteration / "benchmark.json").read_text())["metadata"].get("grading_version") is None
    asked = count(log)

    out = regrade(*common, cwd=tmp_path)  # a new version is refused while one is unfinished
    assert out.returncode == 2 and "pass --resume" in out.stderr
    out = regrade(*common, "--resume", cwd=tmp_path, env={"FAKE_JUDGE_LOG": str(log)})
    assert out.returncode == 0, out.stderr
    assert count(log) - asked == 8 - len(kept)  # the finished grades were not asked again
    assert all(p.read_bytes() == data for p, data in kept.items())
    versions = json.loads((iteration / "grading_versions.json").read_text())
    assert versions["current"] == 2 and versions["versions"][1]["status"] == "finished"
    assert json.loads((iteration / "benchmark.json").read_text())["metadata"]["grading_version"] == 2
    assert len(list(iteration.rglob("grading.v2.json"))) == 8
    out = regrade(*common, "--resume", cwd=tmp_path)
    assert out.returncode == 2 and "no unfinished regrade to resume" in out.stderr


def test_compare_iterations_follows_the_grading_version(tmp_path: Path) -> None:
    skill, workspace, iteration = make_iteration(tmp_path)
    evals = json.loads((skill / "evals" / "evals.json").read_text())
    evals["evals"][0]["assertions"].append('It mentions "VAT"')
    (skill / "evals" / "evals.json").write_text(json.dumps(evals))
    out = paired("--skill-path", skill, *agent_args(tmp_path / "agent.json"), *judge_args(), "--no-store",
                 cwd=tmp_path, script_file=tmp_path / "agent.json")
    assert out.returncode == 0, out.stderr
    compare = ["--skill-path", skill, "--compare-iterations", 1, 2, "--json"]
    out = paired(*compare, cwd=tmp_path)
    assert out.returncode == 2 and "the grading rule" in out.stderr
    out = regrade(workspace, "--iteration", 1, *judge_args(), "--no-store", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    out = paired(*compare, cwd=tmp_path)  # iteration 1 now holds the grades of iteration 2's rule
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["different_conditions"] == {}


@pytest.mark.parametrize("missing", ["WORKSPACE", "iteration"])
def test_no_iteration_to_regrade(tmp_path: Path, missing: str) -> None:
    target = tmp_path / "nowhere" if missing == "WORKSPACE" else tmp_path
    out = regrade(target, "--no-store", cwd=tmp_path)
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1
    assert ("is not a folder" if missing == "WORKSPACE" else "no iteration written by eval-skills paired") \
        in out.stderr


def test_a_changed_expected_output_and_judge_errors_are_asked_again(tmp_path: Path) -> None:
    skill, workspace, iteration = make_iteration(tmp_path)
    evals = revise(skill, tmp_path, lambda c: c[0].update(expected_output="The total, the VAT and the date"))
    log = tmp_path / "judge-2.jsonl"
    # the judge fails: case 1's verdicts (its expected output changed) are not graded; case 5's are reused
    out = regrade(workspace, "--evals", evals, *judge_args(), "--no-store", "--json", cwd=tmp_path,
                  env={"FAKE_JUDGE_LOG": str(log), "FAKE_JUDGE_MODE": "crash"})
    assert out.returncode == 0, out.stderr
    bench = json.loads(out.stdout)
    assert bench["passed"] is True  # the field every --json carries: the command exits 0
    assert bench["metadata"]["grading_version"] == 2
    assert any("2 runs with judge errors" in n for n in bench["notes"])
    case1 = grading(iteration, 1, "with_skill")
    assert [e["passed"] for e in case1["expectations"][:2]] == [None, None]
    assert all(e.get("reused_from") == 1 for e in grading(iteration, 5, "with_skill")["expectations"][:2])
    asked = count(log)
    out = regrade(workspace, "--evals", evals, *judge_args(), "--no-store", cwd=tmp_path,
                  env={"FAKE_JUDGE_LOG": str(log)})
    assert out.returncode == 0, out.stderr
    assert "4 judge verdicts asked; 4 reused" in out.stdout  # only the ungraded ones, one request per run
    assert count(log) - asked == 2
    assert [e["passed"] for e in grading(iteration, 1, "with_skill")["expectations"][:2]] == [True, True]
