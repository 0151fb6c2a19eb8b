"""`eval-skills view` on a workspace laid out as skill-creator's SKILL.md and references/schemas.md describe it
(the commit named in docs/skill-creator.md): runs without run-N folders, descriptive case folder names,
timing.json as written from a task notification, grading.json summaries without ``failed``, transcript.md,
outputs/metrics.json, comparison-N.json, and a benchmark.json whose delta is old_skill - with_skill."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from clirun import run

from eval_skills.viewer import open_workspace_source


def _write(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data, indent=2), encoding="utf-8")


def _stat(mean: float) -> dict[str, float]:
    return {"mean": mean, "stddev": 0.0, "min": mean, "max": mean}


def skill_creator_workspace(root: Path) -> Path:
    """``csv-workspace/iteration-1`` with two cases, with_skill against old_skill, one run each."""
    it = root / "csv-workspace" / "iteration-1"
    # case 0: eval-<id>-<name>, runs straight in the arm folders (eval-0/with_skill/outputs/)
    case0 = it / "eval-0-csv-totals"
    _write(case0 / "eval_metadata.json", {"eval_id": 0, "eval_name": "csv-totals",
                                          "prompt": "Total the amounts in sales.csv", "assertions": []})
    _write(case0 / "with_skill" / "outputs" / "totals.csv", "region,total\nnorth,42\n")
    _write(case0 / "with_skill" / "outputs" / "metrics.json",
           {"tool_calls": {"Read": 2, "Bash": 1}, "total_tool_calls": 3, "total_steps": 2,
            "files_created": ["totals.csv"], "errors_encountered": 0})
    _write(case0 / "with_skill" / "outputs" / "transcript.md", "# Transcript\n\n## Eval Prompt\n\nTotal it\n\n"
                                                               "## Steps\n\nRead sales.csv with pandas\n")
    _write(case0 / "with_skill" / "timing.json", {"total_tokens": 84852, "duration_ms": 23332,
                                                  "total_duration_seconds": 23.3})
    _write(case0 / "with_skill" / "grading.json", {
        "expectations": [{"text": "Totals per region", "passed": True, "evidence": "totals.csv has them"},
                         {"text": "Sorted by total", "passed": False, "evidence": "one row only"}],
        "summary": {"passed": 1, "total": 2, "pass_rate": 0.5}})  # no "failed"
    _write(case0 / "old_skill" / "outputs" / "totals.txt", "42")
    _write(case0 / "old_skill" / "timing.json", {"total_tokens": 51000, "total_duration_seconds": 12.5})
    _write(case0 / "old_skill" / "grading.json", {
        "expectations": [{"text": "Totals per region", "passed": False, "evidence": "a bare number"},
                         {"text": "Sorted by total", "passed": False, "evidence": "no table"}],
        "summary": {"passed": 0, "failed": 2, "total": 2, "pass_rate": 0.0}})
    _write(case0 / "comparison-1.json", {
        "winner": "A", "reasoning": "Output A has the table.",
        "rubric": {"A": {"overall_score": 9.0}, "B": {"overall_score": 5.4}}})
    # case 1: a descriptive folder name, run-N folders, its eval_id in eval_metadata.json
    case1 = it / "csv-averages"
    _write(case1 / "eval_metadata.json", {"eval_id": 1, "eval_name": "csv-averages",
                                          "prompt": "Average the amounts", "assertions": ["Gives the mean"]})
    for arm, passed in (("with_skill", True), ("old_skill", False)):
        run_dir = case1 / arm / "run-1"
        _write(run_dir / "outputs" / "answer.md", f"mean from {arm}")
        _write(run_dir / "timing.json", {"total_tokens": 1000, "duration_ms": 4000, "total_duration_seconds": 4.0})
        _write(run_dir / "grading.json", {
            "expectations": [{"text": "Gives the mean", "passed": passed, "evidence": "see answer.md"}],
            "summary": {"passed": int(passed), "failed": int(not passed), "total": 1,
                        "pass_rate": float(passed)}})
    # a folder that holds no runs, and an arm folder whose runs are in folders of another name
    _write(it / "notes" / "ideas.md", "try a pivot table")
    _write(case1 / "new_try" / "attempt-1" / "outputs" / "x.md", "x")
    # the aggregator met old_skill first (alphabetical order), so its delta is old_skill - with_skill
    _write(it / "benchmark.json", {
        "metadata": {"skill_name": "csv", "evals_run": [0, 1], "runs_per_configuration": 1},
        "runs": [
            {"eval_id": 0, "configuration": "old_skill", "run_number": 1,
             "result": {"pass_rate": 0.0, "passed": 0, "failed": 2, "total": 2, "time_seconds": 12.5}},
            {"eval_id": 0, "configuration": "with_skill", "run_number": 1,
             "result": {"pass_rate": 0.5, "passed": 1, "failed": 1, "total": 2, "time_seconds": 23.3}},
            {"eval_id": 1, "configuration": "old_skill", "run_number": 1,
             "result": {"pass_rate": 0.0, "passed": 0, "failed": 1, "total": 1, "time_seconds": 4.0}},
            {"eval_id": 1, "configuration": "with_skill", "run_number": 1,
             "result": {"pass_rate": 1.0, "passed": 1, "failed": 0, "total": 1, "time_seconds": 4.0}}],
        "run_summary": {"old_skill": {"pass_rate": _stat(0.0), "time_seconds": _stat(8.25),
                                      "tokens": _stat(26000)},
                        "with_skill": {"pass_rate": _stat(0.75), "time_seconds": _stat(13.65),
                                       "tokens": _stat(42926)},
                        "delta": {"pass_rate": "-0.75", "time_seconds": "-5.4", "tokens": "-16926"}}})
    return it


def test_a_skill_creator_workspace_shows_every_run(tmp_path: Path) -> None:
    it = skill_creator_workspace(tmp_path)
    src = open_workspace_source(it.parent, None)
    # every case once, by its folder: eval-0-csv-totals is case 0's folder, not a second, empty case
    assert [c.key for c in src.cases()] == ["0-csv-totals", "csv-averages"]
    marks = {c.key: [m.text for m in c.marks] for c in src.cases()}
    assert marks == {"0-csv-totals": ["50%", "0%"], "csv-averages": ["100%", "0%"]}
    # run ids as skill-creator's viewer writes them in feedback.json (the folder path, / as -)
    assert sorted(src.run_ids()) == ["csv-averages-old_skill-run-1", "csv-averages-with_skill-run-1",
                                     "eval-0-csv-totals-old_skill", "eval-0-csv-totals-with_skill"]
    # what cannot be read as runs is said
    assert src.warnings == [
        "iteration-1/csv-averages/new_try: no run read: it holds neither run-<k>/ nor outputs/ (found attempt-1)",
        "iteration-1/notes: not read as a case: no folder in it holds run-<k>/ or outputs/ (expected "
        "<case>/<arm>/run-<k>/outputs/ or <case>/<arm>/outputs/)"]

    html = src.case_html("0-csv-totals", static=True) or ""
    assert "Total the amounts in sales.csv" in html and "csv-totals" in html
    runs = re.findall(r'<div class="run arm-(\w+)" data-run="([^"]+)">(.*?)(?=<div class="run arm-|</section>)',
                      html, re.S)
    assert [(arm, rid) for arm, rid, _ in runs] == [("with_skill", "eval-0-csv-totals-with_skill"),
                                                    ("old_skill", "eval-0-csv-totals-old_skill")]
    with_skill, old_skill = runs[0][2], runs[1][2]
    # tokens from a timing.json without token_measurement are measured; time without duration_ms is read
    assert "84,852 tokens" in with_skill and "23.3 s" in with_skill and "not measured" not in with_skill
    assert "51,000 tokens" in old_skill and "12.5 s" in old_skill and "error" not in old_skill
    # a summary without "failed" is graded: 1 of 2
    assert "1/2 passed" in with_skill and "1 passed, 1 failed of 2" in with_skill and "not graded" not in with_skill
    # the agent's file is listed; metrics.json and transcript.md are read as what they are, not as its files
    assert "totals.csv" in with_skill and "Files the agent made (1)" in with_skill
    assert "metrics.json: 3 tool calls (Read 2, Bash 1) · 2 steps" in with_skill
    assert "transcript.md" in with_skill and "Read sales.csv with pandas" in with_skill
    # skill-creator's blind verdict: output A won; it does not say which arm A was
    assert "output A" in html and "(the file does not say which arm)" in html and "Output A has the table." in html
    assert "A: 9.0" in html and "B: 5.4" in html

    case1 = src.case_html("csv-averages", static=True) or ""
    assert "Average the amounts" in case1 and "mean from with_skill" in case1 and "mean from old_skill" in case1

    bench = src.tab_html("benchmark", static=True) or ""
    # the delta shown is with skill - old skill, computed from the configurations; the file's is flagged
    assert '<span class="muted delta-label">with skill − old skill</span>' in bench
    rows = dict(re.findall(r'<tr data-metric="([^"]+)">.*?<td class="delta[^"]*">([^<]*)</td>', bench, re.S))
    assert rows == {"Pass rate": "+75.0 pp", "Time (s)": "+5.4", "Tokens": "+16,926"}
    assert "benchmark.json: run_summary.delta.pass_rate is -0.75, which is not with skill − old skill (+0.7500)" \
           in bench
    # the grid has one row group per case, not one per folder and one per eval_id
    keys = re.findall(r'<td class="case-key">([^<]+)</td>', bench)
    assert keys == ["0-csv-totals", "csv-averages"]


def test_view_says_on_stderr_what_it_cannot_read(tmp_path: Path) -> None:
    it = skill_creator_workspace(tmp_path)
    out = tmp_path / "page.html"
    result = run("view", it.parent, "--static", out)
    assert result.exit_code == 0, result.output
    assert "warning: iteration-1/notes: not read as a case" in result.stderr
    assert "warning: iteration-1/csv-averages/new_try: no run read" in result.stderr
    page = out.read_text()
    assert "iteration-1/notes: not read as a case" in page and "2 cases" in result.stdout
