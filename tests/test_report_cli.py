"""report convert and report diff, JUnit XML and per-tag results in every format."""

from __future__ import annotations

import csv
import io
import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from clirun import run

from eval_skills.reports import load_report_file, render, tag_breakdown
from eval_skills.reports.diff import diff_reports, regressions


def result(task: str, status: str, score: float, tags: list[str], run_id: int = 1, **extra: Any) -> dict[str, Any]:
    return {"taskId": task, "skillId": "s", "runId": run_id, "status": status, "score": score, "latencyMs": 12.5,
            "output": {"result": "x"}, "error": extra.get("error"), "scorerType": "contains",
            "reason": extra.get("reason", ""), "usage": None, "tags": tags}


TASKS = [result("t1", "pass", 1.0, ["math", "easy"]), result("t2", "fail", 0.5, ["math"], reason="missing: 'y'"),
         result("t3", "error", 0.0, ["string"], error="boom\x00 <&>"), result("t4", "pass", 1.0, [])]


def test_tag_breakdown_by_hand() -> None:
    rows = {r["tag"]: r for r in tag_breakdown(TASKS)}
    # math: t1 pass (1.0) and t2 fail (0.5): 1 of 2 passed, mean score 0.75; untagged t4 counts nowhere
    assert rows["math"] == {"tag": "math", "total": 2, "passed": 1, "completionRate": 0.5, "partialScore": 0.75}
    assert rows["easy"] == {"tag": "easy", "total": 1, "passed": 1, "completionRate": 1.0, "partialScore": 1.0}
    assert rows["string"] == {"tag": "string", "total": 1, "passed": 0, "completionRate": 0.0, "partialScore": 0.0}
    assert list(rows) == ["easy", "math", "string"]


def skill_report(skill: str = "s", completion: float = 0.5, tasks: list[dict[str, Any]] | None = None,
                 **summary: Any) -> dict[str, Any]:
    results = [dict(t, skillId=skill) for t in (TASKS if tasks is None else tasks)]
    return {"skillId": skill, "skillVersion": "1.0.0", "benchmarkId": "bench", "timestamp": "2026-01-01T00:00:00Z",
            "runs": 1, "summary": {"completionRate": completion, "partialScore": 0.625, "errorRate": 0.25,
                                   "compositeScore": 0.7, "totalTasks": len(results), **summary},
            "latency": {"p50Ms": 12.5, "p95Ms": 12.5, "p99Ms": 12.5}, "taskResults": results}


def test_per_tag_results_in_every_format() -> None:
    reports = [skill_report()]
    md = render(reports, "markdown")
    assert "## Results by tag" in md and "| s | math | 2 | 1 | 50.0% | 75.0% |" in md
    page = render(reports, "html")
    assert "Results by tag" in page and "<td>math</td>" in page and "75.0%" in page
    rows = list(csv.DictReader(io.StringIO(render(reports, "csv"))))
    assert [r["tags"] for r in rows] == ["math;easy", "math", "string", ""]
    suite = ET.fromstring(render(reports, "junit")).find("testsuite")
    assert suite is not None
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert props["tag.math.completionRate"] == "0.5" and props["tag.math.partialScore"] == "0.75"


def test_junit_xml_one_suite_per_skill_one_case_per_task_and_run() -> None:
    two_runs = [result("t1", "pass", 1.0, [], run_id=r) for r in (1, 2)]
    two_runs.append(result("t2", "timeout", 0.0, [], error="slow"))
    reports = [skill_report("alpha"), dict(skill_report("beta", tasks=two_runs), runs=2)]
    root = ET.fromstring(render(reports, "junit"))  # well formed although an error holds \x00 and <&>
    assert root.tag == "testsuites" and root.get("tests") == "7" and root.get("failures") == "1"
    assert root.get("errors") == "2"
    alpha, beta = root.findall("testsuite")
    assert alpha.get("name") == "alpha" and alpha.get("tests") == "4"
    cases = {c.get("name"): c for c in alpha.findall("testcase")}
    assert cases["t1"].find("failure") is None and cases["t1"].find("error") is None
    assert cases["t1"].get("time") == "0.013" and cases["t1"].get("classname") == "alpha.bench"
    failure = cases["t2"].find("failure")
    assert failure is not None and failure.get("message") == "missing: 'y'"
    error = cases["t3"].find("error")
    assert error is not None and error.get("message") == "boom\ufffd <&>" and error.get("type") == "error"
    assert [c.get("name") for c in beta.findall("testcase")] == ["t1 [run 1]", "t1 [run 2]", "t2 [run 1]"]
    timeout = beta.findall("testcase")[2].find("error")
    assert timeout is not None and timeout.get("type") == "timeout"


@pytest.mark.parametrize("fmt, suffix", [("markdown", ".md"), ("html", ".html"), ("csv", ".csv"),
                                         ("junit", ".xml")])
def test_convert_to_each_format(tmp_path: Path, fmt: str, suffix: str) -> None:
    source = tmp_path / "eval-result.json"
    source.write_text(json.dumps([skill_report()]))
    out = run("report", "convert", "--input", source, "--format", fmt)
    assert out.exit_code == 0, out.output
    target = source.with_suffix(suffix)
    # as loaded: counts the file lacks (passed, failed, ...) are derived from its task results
    assert target.read_bytes() == render(load_report_file(source), fmt).encode()
    chosen = run("report", "convert", "--input", source, "--format", fmt, "--output", tmp_path / "x.out")
    assert chosen.exit_code == 0 and (tmp_path / "x.out").read_bytes() == target.read_bytes()


def test_convert_reads_reports_with_missing_keys_as_na(tmp_path: Path) -> None:
    source = tmp_path / "old.json"
    source.write_text(json.dumps({"skillId": "legacy", "summary": {"completionRate": 0.5}}))
    assert run("report", "convert", "--input", source, "--format", "html").exit_code == 0
    page = (tmp_path / "old.html").read_text()
    assert "legacy" in page and "50.0%" in page and "n/a" in page


@pytest.mark.parametrize("content, message", [('{"a": 1}', "skillId"), ("[1, 2]", "$[0]"),
                                              ("not json", "invalid JSON")])
def test_convert_refuses_what_is_not_a_report(tmp_path: Path, content: str, message: str) -> None:
    source = tmp_path / "r.json"
    source.write_text(content)
    out = run("report", "convert", "--input", source, "--format", "html")
    assert out.exit_code == 2 and message in out.stderr and "r.json" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]
    bad_format = run("report", "convert", "--input", source, "--format", "pdf")
    assert bad_format.exit_code == 2 and "pdf" in bad_format.stderr


def test_diff_table_task_changes_and_regression_gate(tmp_path: Path) -> None:
    before = [skill_report("stable", 0.8), skill_report("gone", 1.0),
              skill_report("moving", 0.9, tasks=[result("a", "pass", 1, []), result("b", "fail", 0, [])])]
    after = [skill_report("stable", 0.801), skill_report("new", 1.0),
             skill_report("moving", 0.85, tasks=[result("a", "fail", 0, [], reason="expected 5"),
                                                 result("b", "pass", 1, [])])]
    a, b = tmp_path / "v1.json", tmp_path / "v2.json"
    a.write_text(json.dumps(before))
    b.write_text(json.dumps(after))
    out = run("report", "diff", a, b, "--label-a", "v1.0", "--label-b", "v2.0")
    assert out.exit_code == 0, out.output
    md = out.stdout
    assert "| stable | Completion rate | 0.8000 | 0.8010 | ▲ +0.0010 (better) |" in md  # 0.001 is visible
    assert "| moving | Completion rate | 0.9000 | 0.8500 | ▼ -0.0500 (worse) |" in md
    assert "| stable | Error rate | 0.2500 | 0.2500 | → +0.0000 |" in md
    assert "Only in v1.0: gone" in md and "Only in v2.0: new" in md
    assert "### Newly failing (1)" in md and "| moving | a | 1 | pass | fail | expected 5 |" in md
    assert "### Newly passing (1)" in md and "| moving | b | 1 | fail | pass |" in md
    # the gate: a drop of 0.05 is more than 0.04, not more than 0.05
    gate = run("report", "diff", a, b, "--fail-on-regression", "0.04", "--output", tmp_path / "diff.md")
    assert gate.exit_code == 1 and "moving (-0.0500)" in gate.stderr
    assert (tmp_path / "diff.md").read_text() == render_md(a, b)
    assert run("report", "diff", a, b, "--fail-on-regression", "0.05").exit_code == 0
    as_json = json.loads(run("report", "diff", a, b, "--json").stdout)
    moving = next(s for s in as_json["skills"] if s["skillId"] == "moving")
    assert moving["metrics"]["completionRate"] == {"a": 0.9, "b": 0.85, "delta": -0.05, "verdict": "worse"}
    assert as_json["onlyInA"] == ["gone"] and as_json["onlyInB"] == ["new"]
    missing = run("report", "diff", a, tmp_path / "nope.json", "--output", tmp_path / "d2.md")
    assert missing.exit_code == 2 and "nope.json" in missing.stderr and not (tmp_path / "d2.md").exists()


def render_md(a: Path, b: Path) -> str:
    from eval_skills.reports.diff import render_diff_markdown

    return render_diff_markdown(diff_reports(json.loads(a.read_text()), json.loads(b.read_text())), a.name, b.name)


def test_a_change_smaller_than_the_columns_places_still_shows() -> None:
    from eval_skills.reports.diff import render_diff_markdown

    slow = skill_report("s", 0.8)
    slow["latency"] = {"p50Ms": 12.5, "p95Ms": 12.54, "p99Ms": 12.54}  # +0.04 ms: "+0.0" in one decimal
    slow["summary"]["errorRate"] = 0.25002
    md = render_diff_markdown(diff_reports([skill_report("s", 0.8)], [slow]), "a", "b")
    assert "| s | P95 latency (ms) | 12.5 | 12.5 | ▲ +0.040 (worse) |" in md
    assert "| s | Error rate | 0.2500 | 0.2500 | ▲ +0.000020 (worse) |" in md
    assert "| s | Completion rate | 0.8000 | 0.8000 | → +0.0000 |" in md


def test_regressions_threshold_by_hand() -> None:
    diff = diff_reports([skill_report("x", 0.9), skill_report("y", 0.5)],
                        [skill_report("x", 0.8), skill_report("y", 0.6)])
    assert regressions(diff, 0.05) == [("x", pytest.approx(0.1))]
    assert regressions(diff, 0.1) == []


def test_convert_survives_lone_surrogates_from_an_old_file(tmp_path: Path) -> None:
    source = tmp_path / "odd.json"
    source.write_text('[{"skillId": "s", "taskResults": [{"taskId": "t", "status": "fail", '
                      '"output": "\\ud800 bad", "reason": "\\udfff"}]}]')
    for fmt in ("html", "markdown", "csv", "junit"):
        out = run("report", "convert", "--input", source, "--format", fmt, "--output", tmp_path / f"out.{fmt}")
        assert out.exit_code == 0, out.output
        text = (tmp_path / f"out.{fmt}").read_text(encoding="utf-8")  # valid UTF-8: the surrogates became U+FFFD
        assert "\ufffd bad" in text if fmt != "markdown" else "| \ufffd |" in text
