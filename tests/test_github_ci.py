"""GitHub Actions output of every command: the job summary appended to $GITHUB_STEP_SUMMARY, failing tasks,
assertions and queries as workflow annotations (escaped by GitHub's rules, capped), and --format junit checked
against a JUnit schema. Real processes and real files."""

from __future__ import annotations

import json
import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import xmlschema
from clirun import CALCULATOR, ROOT, process
from hypothesis import given
from hypothesis import strategies as st
from paired_data import agent_args
from test_paired_cli import small_skill
from test_routing_cli import AGENT, setup  # noqa: F401  (a fixture)

from eval_skills.cli._github import publish
from eval_skills.reports.github import (
    Finding,
    StepReport,
    annotation,
    annotation_lines,
    escape_data,
    escape_property,
)

SCHEMA = xmlschema.XMLSchema(Path(__file__).parent / "data" / "junit.xsd")
FIXTURES = ROOT / "examples" / "fixtures"


def unescape(text: str, *, prop: bool = False) -> str:
    """What GitHub's runner makes of an escaped value (its CommandStringEscapeMappings, in reverse)."""
    pairs = [("%0D", "\r"), ("%0A", "\n")] + ([("%3A", ":"), ("%2C", ",")] if prop else [])
    for escaped, plain in pairs + [("%25", "%")]:
        text = text.replace(escaped, plain)
    return text


def github_env(tmp_path: Path) -> tuple[dict[str, str], Path]:
    summary = tmp_path / "summary.md"
    summary.write_text("## an earlier step\n")
    return {"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary), "GITHUB_WORKSPACE": str(tmp_path)}, summary


def annotations(text: str) -> list[tuple[str, dict[str, str], str]]:
    """Each ``::level props::message`` line of ``text``: level, properties and message, unescaped."""
    found = []
    for line in text.splitlines():
        match = re.fullmatch(r"::(error|warning|notice)(?: ([^:]*))?::(.*)", line)
        if match:
            props = dict(p.split("=", 1) for p in match.group(2).split(",")) if match.group(2) else {}
            found.append((match.group(1), {k: unescape(v, prop=True) for k, v in props.items()},
                          unescape(match.group(3))))
    return found


# ---- the pieces ---------------------------------------------------------------------------------------


def test_workflow_command_escaping_follows_githubs_rules() -> None:
    assert escape_data("50% done\r\nnext: a, b") == "50%25 done%0D%0Anext: a, b"
    assert escape_property("a:b,c%d\n") == "a%3Ab%2Cc%25d%0A"
    assert annotation("error", "line 1\nline 2", file="skills/a,b.json", title="calc / t1: fail") == (
        "::error file=skills/a%2Cb.json,title=calc / t1%3A fail::line 1%0Aline 2")
    assert annotation("warning", "plain") == "::warning::plain"


@given(st.text())
def test_any_text_comes_back_as_it_was_from_an_annotation(text: str) -> None:
    assert unescape(escape_data(text)) == text
    assert unescape(escape_property(text), prop=True) == text


def test_annotations_are_capped_per_level_and_say_how_many_more() -> None:
    findings = [Finding(f"task {i}: fail", f"reason {i}", "b.json") for i in range(25)]
    findings += [Finding(f"skill {i}", "a warning", level="warning") for i in range(3)]
    lines = annotations("\n".join(annotation_lines(StepReport("eval", False, "v", findings=findings))))
    errors = [line for line in lines if line[0] == "error"]
    assert len(errors) == 10 and [e[2] for e in errors[:9]] == [f"reason {i}" for i in range(9)]
    assert errors[9][2].startswith("16 more not annotated (GitHub shows 10 per step): every one is listed in")
    assert [w[2] for w in lines if w[0] == "warning"] == ["a warning"] * 3
    assert errors[0][1] == {"file": "b.json", "title": "eval-skills eval: task 0: fail"}


def test_the_summary_masks_secrets_and_lets_no_markdown_or_html_through(tmp_path: Path) -> None:
    secret = "sk-live-0123456789abcdef"
    hostile = f"key {secret} [click](https://evil.example) <img src=x onerror=alert(1)> | cell\nnext **bold**"
    report = StepReport("eval", False, f"verdict with {secret}", head=("skill", "why"), rows=[["a|b", hostile]],
                        findings=[Finding(f"t {secret}", hostile, "a.json")], files=["r/`x`.json"])
    env, summary = github_env(tmp_path)
    publish(report, env={**env, "OPENAI_API_KEY": secret})
    text = summary.read_text()
    assert text.startswith("## an earlier step\n### :x: eval-skills eval: failed\n")  # appended
    assert secret not in text and "verdict with \\*\\*\\*" in text  # masked (the mask escaped too)
    assert "<img" not in text and "&lt;img" in text and "\\[click\\]" in text and "\\*\\*bold\\*\\*" in text
    assert "| a\\|b |" in text and "cell next" in text  # one line per row, the pipe escaped
    assert "`r/'x'.json`" in text
    line = annotation_lines(report, (secret,))[0]
    assert secret not in line and "%0A" not in line  # one line, masked


def test_nothing_is_written_outside_github_actions(tmp_path: Path) -> None:
    publish(StepReport("eval", True, "fine"), env={})
    assert list(tmp_path.iterdir()) == []


# ---- the commands ---------------------------------------------------------------------------------------


def test_fixtures_summary_annotations_and_json(tmp_path: Path) -> None:
    shutil.copytree(FIXTURES, tmp_path / "fixtures")
    env, summary = github_env(tmp_path)
    out = process("fixtures", "--skills-dir", "fixtures/skills", "--answers", "fixtures/answers", "--min-score",
                  "0.9", cwd=tmp_path, env=env)
    assert out.returncode == 1, out.stderr
    found = annotations(out.stdout)
    assert len(found) == 4 and all(level == "error" for level, _, _ in found)
    level, props, message = found[0]
    assert props["file"] == "fixtures/answers/b2b-pricing/quote-expiry.md"
    assert props["title"] == "eval-skills fixtures: b2b-pricing / quote-expiry: must_include"
    assert message == '"expires_at": not found in the answer (201 characters)'
    text = summary.read_text()
    assert "### :x: eval-skills fixtures: failed" in text and "FAIL: overall score 0.6944" in text
    assert "| b2b-pricing | 0.5556 | 1/3 |" in text and "**Did not pass (4):**" in text

    out = process("fixtures", "--skills-dir", "fixtures/skills", "--answers", "fixtures/answers", "--min-score",
                  "0.9", "--json", cwd=tmp_path, env=env)
    doc = json.loads(out.stdout)  # annotations went to stderr: stdout is one JSON document
    assert list(doc)[0] == "passed" and doc["passed"] is False and doc["ok"] is False
    assert len(annotations(out.stderr)) == 4 and text.count("eval-skills fixtures") == 1
    assert summary.read_text().count("### :x: eval-skills fixtures: failed") == 2


def test_fixtures_junit_is_valid_and_says_why(tmp_path: Path) -> None:
    shutil.copytree(FIXTURES, tmp_path / "fixtures")
    tasks = tmp_path / "fixtures" / "skills" / "b2b-pricing" / "evals" / "tasks.json"
    data = json.loads(tasks.read_text())
    data["tasks"][0]["must_include"] = ["<tag> & \"quote\""]  # not in the answer
    tasks.write_text(json.dumps(data))
    out = process("fixtures", "--skills-dir", "fixtures/skills", "--answers", "fixtures/answers", "--format",
                  "junit", cwd=tmp_path)
    assert out.returncode == 0, out.stderr  # --answers: min score 0, a report
    SCHEMA.validate(out.stdout)
    root = ET.fromstring(out.stdout)
    cases = {c.get("name"): c for c in root.iter("testcase")}
    assert len(cases) == 7  # six tasks and the overall score
    failure = cases[data["tasks"][0]["id"]].find("failure")
    assert failure is not None and failure.get("message", "").startswith('must_include "<tag> & \\"quote\\"": not')
    assert cases["net-terms"].find("failure").get("message") == (  # type: ignore[union-attr]
        "missing file fixtures/answers/b2b-pricing/net-terms.md")
    assert cases["overall score"].find("failure") is None
    assert root.get("failures") == str(sum(1 for c in cases.values() if c.find("failure") is not None))
    refused = process("fixtures", "--skills-dir", "fixtures/skills", "--json", "--format", "junit", cwd=tmp_path)
    assert refused.returncode == 2 and "--json and --format junit cannot be used together" in refused.stderr


def wrong_tasks(tmp_path: Path, count: int) -> Path:
    tasks = [{"id": f"sum-{i}", "inputData": {"expression": f"{i} + 1"},
              "expectedOutput": {"type": "exact", "value": str(i + 1 if i % 2 else i + 2)}} for i in range(count)]
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(tasks))
    return path


def test_eval_annotates_failing_tasks_capped_and_summarises(tmp_path: Path) -> None:
    tasks = wrong_tasks(tmp_path, 30)  # 15 of them expect a wrong sum
    env, summary = github_env(tmp_path)
    out = process("eval", "--skills", CALCULATOR, "--tasks", tasks, "--no-store", "--output-dir", "r",
                  "--format", "json", "junit", "--exit-on-fail", "--min-completion", "0.9", cwd=tmp_path, env=env)
    assert out.returncode == 1, out.stderr
    found = annotations(out.stdout)
    assert len(found) == 10 and found[-1][2].startswith("6 more not annotated")
    assert found[0][1] == {"file": "tasks.json", "title": "eval-skills eval: calculator / sum-0: fail"}
    text = summary.read_text()
    assert "### :x: eval-skills eval: failed" in text
    assert "15 of 30 task results passed across 1 skill(s). Quality gate failed: completion rate below 0.9 for " \
           "calculator." in text
    assert "| calculator | 1.0.0 | 50.00% |" in text and "**Did not pass (15):**" in text
    assert "- … and -5 more" not in text and text.count("- calculator / sum-") == 15
    (junit,) = (tmp_path / "r").glob("*.xml")
    SCHEMA.validate(str(junit))  # eval's own JUnit report passes the same schema


def test_validate_annotates_each_problem_at_its_file(tmp_path: Path) -> None:
    folder = tmp_path / "Bad_Name"
    folder.mkdir()
    (folder / "SKILL.md").write_text("---\nname: Bad_Name\ndescription: Checks things.\n---\nBody\n")
    env, summary = github_env(tmp_path)
    out = process("validate", "Bad_Name", "--json", cwd=tmp_path, env=env)
    assert out.returncode == 1
    assert json.loads(out.stdout)["passed"] is False
    found = annotations(out.stderr)
    assert found and all(props["file"] == "Bad_Name/SKILL.md" for _, props, _ in found)
    assert "### :x: eval-skills validate: failed" in summary.read_text()


def test_paired_junit_summary_and_annotations(tmp_path: Path) -> None:
    skill, _, script = small_skill(tmp_path, 3)
    evals_file = skill / "evals" / "evals.json"
    evals = json.loads(evals_file.read_text())
    evals["evals"][0]["selftune_assertions"].append({"type": "contains", "value": "no such words"})
    evals_file.write_text(json.dumps(evals))
    env, summary = github_env(tmp_path)
    out = process("paired", "--skill-path", skill, *agent_args(script), "--no-compare", "--no-store",
                  "--format", "junit", "--min-delta", "0.99", cwd=tmp_path,
                  env={**env, "FAKE_AGENT_CONFIG": str(script)})
    assert out.returncode == 1, out.stderr
    junit = tmp_path / "invoice-check-workspace" / "iteration-1" / "junit.xml"
    assert f"wrote {junit}" in out.stdout
    SCHEMA.validate(str(junit))
    root = ET.parse(junit).getroot()
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    with_skill = suites["paired.invoice-check.with_skill"]
    assert with_skill.get("tests") == "4" and with_skill.get("failures") == "1"  # 3 runs, 4 assertions
    failed = [c for c in with_skill.iter("testcase") if c.find("failure") is not None]
    assert [c.get("name") for c in failed] == ['eval 1 run 1: contains "no such words"']
    assert suites["paired.invoice-check.without_skill"].get("tests") == "0"  # a failing baseline is measured
    gate = suites["paired.invoice-check"].find("testcase/failure")
    assert gate is not None and "below --min-delta +0.99" in gate.get("message", "")
    found = annotations(out.stdout)
    assert [(p["title"], m) for _, p, m in found] == [
        ("eval-skills paired: eval 1 with_skill run 1: assertion failed", found[0][2])]
    assert found[0][1]["file"] == "invoice-check/evals/evals.json"
    assert found[0][2].startswith('contains "no such words"')
    text = summary.read_text()
    assert "### :x: eval-skills paired: failed" in text and "Quality gate failed: pass-rate delta" in text
    assert "| with_skill | 83.33% | 3 | 0 |" in text and "| delta | +83.3 pp |" in text
    assert "Reports: `invoice-check-workspace/iteration-1/benchmark.json`" in text


def test_routing_junit_summary_and_annotations(tmp_path: Path, setup) -> None:  # noqa: F811
    skill, run_env = setup
    env, summary = github_env(tmp_path)
    out = process("routing", "--skill-path", skill, "--distractors", tmp_path / "others", *AGENT, "--min-f1", "0.7",
                  "--no-store", "--format", "junit", cwd=tmp_path, env={**run_env, **env})
    assert out.returncode == 1, out.stderr
    junit = tmp_path / "invoice-check-workspace" / "routing-1" / "junit.xml"
    SCHEMA.validate(str(junit))
    root = ET.parse(junit).getroot()
    cases = list(root.iter("testcase"))
    assert len(cases) == 9 + 1  # a case per query and the gates
    # fp 2, fn 1 (see test_routing.py), the query whose only run failed, and the F1 gate
    assert root.get("failures") == "4" and root.get("errors") == "1"
    assert "F1 0.6667 is below 0.7" in cases[-1].find("failure").get("message", "")  # type: ignore[union-attr]
    found = annotations(out.stdout)
    assert len(found) == 4 and {p["file"] for _, p, _ in found} == {"invoice-check/evals/routing.json"}
    text = summary.read_text()
    assert "### :x: eval-skills routing: failed" in text and "| 0.6000 | 0.7500 | 0.6667 | 0.6250 |" in text


@pytest.mark.parametrize("kind", ["fixtures", "paired", "routing"])
def test_junit_help_is_offered(kind: str, tmp_path: Path) -> None:
    out = process(kind, "--help", cwd=tmp_path)
    assert "junit" in out.stdout


def test_junit_text_is_escaped_and_control_characters_are_replaced() -> None:
    from eval_skills.reports.junit_kinds import JUnitCase, JUnitSuite, render_suites

    hostile = "bell \u0007 nul \u0000 <b>&amp;</b> \"q\" \ud800 end"
    xml = render_suites([JUnitSuite(f"suite {hostile}", [JUnitCase(hostile, "c", failure=f"{hostile}\nsecond line",
                                                                   output=hostile)])])
    SCHEMA.validate(xml)
    assert "\u0007" not in xml and "\u0000" not in xml
    case = ET.fromstring(xml).find("testsuite/testcase")
    assert case is not None and case.get("name") == "bell \ufffd nul \ufffd <b>&amp;</b> \"q\" \ufffd end"
    failure = case.find("failure")
    assert failure is not None and failure.get("message") == case.get("name")  # the reason's first line
    assert failure.text == case.get("name") + "\nsecond line"
