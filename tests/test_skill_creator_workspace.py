"""A workspace written by `eval-skills paired`, read by the rules of skill-creator's aggregator and viewer
(``skill_creator_facts``): every run is found with its prompt, eval id, grades and files, and the aggregator
counts each run our time and token figures count. Also the skill folders people write: assertions as objects,
a folder in ``files``, fixtures at their path relative to the skill and by name."""

from __future__ import annotations

import json
import re
from pathlib import Path

from paired_data import paired
from skill_creator_facts import aggregator_runs, aggregator_summary, viewer_runs
from test_paired_edges import AGENT, CHECKS, JUDGE, make_skill

from eval_skills.paired import load_plan
from eval_skills.viewer import open_workspace_source

STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")  # JavaScript's toISOString, as its viewer writes


def test_skill_creator_tools_read_every_run_of_our_workspace(tmp_path: Path) -> None:
    # case 1: three checks, 3/3 with the skill, 1/3 without; case 2: no assertion at all (a first iteration)
    skill, script = make_skill(tmp_path, {
        "one": {"with": "alpha beta gamma", "without": "alpha", "checks": CHECKS},
        "two": {"with": "alpha", "without": "beta", "checks": []}})
    (skill / "evals" / "cases" / "deep").mkdir(parents=True)
    (skill / "evals" / "cases" / "cnt.vhd").write_text("entity cnt is end;\n")
    (skill / "evals" / "cases" / "deep" / "notes.txt").write_text("notes\n")
    evals = json.loads((skill / "evals" / "evals.json").read_text())
    evals["evals"][0]["files"] = ["evals/cases"]  # a folder: copied whole
    (skill / "evals" / "evals.json").write_text(json.dumps(evals))
    data = json.loads(script.read_text())
    data["files"] = {"report/summary.md": "# Summary of {prompt}\n", "top.txt": "top\n"}
    script.write_text(json.dumps(data))

    out = paired("--skill-path", skill, *AGENT, *JUDGE, "--runs", "2", "--no-store", cwd=tmp_path,
                 script_file=script)
    assert out.returncode == 0, out.stderr
    iteration = tmp_path / "tally-workspace" / "iteration-1"
    bench = json.loads((iteration / "benchmark.json").read_text())

    # the fixture folder is at its path relative to the skill, and again by its name at the run's root
    log = [json.loads(line) for line in (tmp_path / "agent-log.jsonl").read_text().splitlines()]
    first = [entry["listing"] for entry in log if "one" in entry["prompt"]]
    assert len(first) == 4 and all({"evals/cases/cnt.vhd", "evals/cases/deep/notes.txt", "cases/cnt.vhd",
                                    "cases/deep/notes.txt"} <= set(listing) for listing in first)

    # its viewer: every run, with the prompt and eval id from eval_metadata.json in the arm folder, the grades,
    # and the agent's file in a subfolder (linked at the top of outputs/, where it looks)
    runs = viewer_runs(iteration)
    assert sorted(r["id"] for r in runs) == sorted(f"eval-{c}-{arm}-run-{k}" for c in (1, 2) for k in (1, 2)
                                                   for arm in ("with_skill", "without_skill"))
    for run in runs:
        case = 1 if run["id"].startswith("eval-1-") else 2
        assert run["eval_id"] == case and run["prompt"] == f"Handle the {('one', 'two')[case - 1]} task"
        assert run["grading"] is not None
        assert {"response.md", "top.txt", "report__summary.md"} <= set(run["files"])
    for case in ("eval-1", "eval-2"):
        meta = (iteration / case / "eval_metadata.json").read_text()
        assert all((iteration / case / arm / "eval_metadata.json").read_text() == meta
                   for arm in ("with_skill", "without_skill"))

    # its aggregator counts every run our time and token figures count, and computes the same figures
    counted = aggregator_runs(iteration)
    assert {c: len(r) for c, r in counted.items()} == {"with_skill": 4, "without_skill": 4}
    theirs = aggregator_summary(iteration)
    for arm in ("with_skill", "without_skill"):
        ours = bench["run_summary"][arm]
        assert theirs[arm]["time_seconds"] == ours["time_seconds"]
        assert theirs[arm]["tokens"] == ours["tokens"]
    # the pass rate: the runs with graded assertions agree; a run with none has no pass_rate key (read as 0 by
    # the aggregator, shown as "?" by the viewer; ours leaves it out)
    graded = {arm: [r["pass_rate"] for r in runs if json.loads((r["run"] / "grading.json").read_text())
                    ["summary"]["total"]] for arm, runs in counted.items()}
    assert graded == {"with_skill": [1.0, 1.0], "without_skill": [0.3333, 0.3333]}
    assert bench["run_summary"]["with_skill"]["pass_rate"]["mean"] == 1.0
    assert bench["run_summary"]["without_skill"]["pass_rate"]["mean"] == 0.3333
    bare = json.loads((iteration / "eval-2" / "with_skill" / "run-1" / "grading.json").read_text())
    assert bare["expectations"] == [] and bare["summary"] == {"passed": 0, "failed": 0, "total": 0, "ungraded": 0}

    # execution_metrics in skill-creator's shape: tool calls by name, total, steps, files, errors
    for arm in ("with_skill", "without_skill"):
        folder = iteration / "eval-1" / arm / "run-1"
        metrics = json.loads((folder / "grading.json").read_text())["execution_metrics"]
        timing = json.loads((folder / "timing.json").read_text())
        assert metrics["tool_calls"]["write_file"] == 2
        assert ("Read" in metrics["tool_calls"]) == (arm == "with_skill")  # the skill's SKILL.md
        assert metrics["total_tool_calls"] == sum(metrics["tool_calls"].values()) == timing["tool_calls"]
        assert sorted(metrics["files_created"]) == ["report/summary.md", "top.txt"]
        assert metrics["total_steps"] == 2 and metrics["errors_encountered"] == 0  # a message and the answer
        assert "output_chars" not in metrics  # it would be read as the tokens of a run without them
        assert counted[arm][0]["tool_calls"] == metrics["total_tool_calls"]

    # feedback.json: every review carries a time, as its viewer writes them
    feedback = json.loads((iteration / "feedback.json").read_text())
    assert len(feedback["reviews"]) == 8 and all(STAMP.fullmatch(r["timestamp"]) for r in feedback["reviews"])

    # our own page lists the agent's file once, by its path, not the copy made for skill-creator's viewer
    src = open_workspace_source(iteration.parent)
    files = src.run_files_html("1/with_skill/1", static=True) or ""
    assert "report/summary.md" in files and "top.txt" in files and "report__summary.md" not in files
    case_two = src.case_html("2", static=True) or ""
    assert case_two.count("no assertions") == 4 and "0/0 passed" not in case_two


def test_assertions_as_objects_and_folders_in_files_are_read(tmp_path: Path) -> None:
    skill = tmp_path / "vhdl-lint"
    (skill / "evals" / "cases" / "more").mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: vhdl-lint\ndescription: Lints VHDL. Use it on .vhd files.\n---\n"
                                    "# Lint\n")
    (skill / "evals" / "cases" / "cnt.vhd").write_bytes(b"entity cnt is end;\n")
    (skill / "evals" / "cases" / "more" / "alu.vhd").write_bytes(b"entity alu is end;\n")
    (skill / "evals" / "cases" / ".hidden").write_bytes(b"x")
    (skill / "evals" / "evals.json").write_text(json.dumps({"skill_name": "vhdl-lint", "evals": [
        {"id": 1, "prompt": "Read `evals/cases/cnt.vhd` and lint it", "files": ["evals/cases/cnt.vhd"],
         "assertions": [{"id": "a1", "text": "Names the entity cnt"}, "Says it is empty"]},
        {"id": 2, "prompt": "Lint every file", "files": ["./evals/cases/"],
         "expectations": [{"id": "b1", "text": "Lints alu.vhd"}]}]}))
    plan = load_plan(skill)
    one, two = plan.cases
    assert one.assertions == ["Names the entity cnt", "Says it is empty"]
    assert two.assertions == ["Lints alu.vhd"]
    assert one.placed == {"evals/cases/cnt.vhd": b"entity cnt is end;\n", "cnt.vhd": b"entity cnt is end;\n"}
    assert sorted(two.placed) == ["cases/cnt.vhd", "cases/more/alu.vhd", "evals/cases/cnt.vhd",
                                  "evals/cases/more/alu.vhd"]  # hidden files are left out
    assert sorted(two.files) == ["evals/cases/cnt.vhd", "evals/cases/more/alu.vhd"]
