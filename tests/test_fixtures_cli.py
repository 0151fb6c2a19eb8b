"""``eval-skills fixtures`` end to end: exit codes, the table, the JSON report, input errors."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from eval_skills.cli import cli

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "fixtures"
SKILLS = str(EXAMPLES / "skills")
ANSWERS = str(EXAMPLES / "answers")


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, ["fixtures", *args])


def write_skill(skills: Path, name: str, tasks: object, examples: dict[str, str | bytes]) -> None:
    root = skills / name
    (root / "evals" / "examples").mkdir(parents=True)
    (root / "SKILL.md").write_text(f"---\nname: {name}\ndescription: test\n---\nalpha beta", encoding="utf-8")
    (root / "evals" / "tasks.json").write_text(json.dumps(tasks), encoding="utf-8")
    for task_id, text in examples.items():
        path = root / "evals" / "examples" / f"{task_id}.md"
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")


def test_worked_examples_pass_exit_0() -> None:
    result = run("--skills-dir", SKILLS)
    assert result.exit_code == 0, result.output
    assert "b2b-pricing" in result.stdout and "stripe-payments" in result.stdout
    assert "OK: overall score 1.0000" in result.stdout


def test_default_skills_dir_is_dot_skills(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copytree(EXAMPLES, tmp_path / "project")
    monkeypatch.chdir(tmp_path / "project")
    assert run().exit_code == 0
    monkeypatch.chdir(tmp_path)
    missing = run()
    assert missing.exit_code == 2 and "skills: skills folder not found" in missing.stderr


def test_answers_report_only_by_default_and_names_each_failure() -> None:
    result = run("--skills-dir", SKILLS, "--answers", ANSWERS)
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "stripe-payments / handle-webhook: must_include \"construct_event\": not found" in out
    assert "stripe-payments / handle-webhook: must_not_include \"whsec_\": found at line 2" in out
    assert "b2b-pricing / net-terms: missing file" in out and "net-terms.md" in out
    assert re.search(r"^overall +0\.6944 +3/6$", out, re.MULTILINE)
    assert re.search(r"^b2b-pricing +0\.5555 +1/3$", out, re.MULTILINE)  # rounded down, never up


def test_min_score_gates_the_exit_code() -> None:
    below = run("--skills-dir", SKILLS, "--answers", ANSWERS, "--min-score", "0.8")
    assert below.exit_code == 1 and "FAIL: overall score 0.6944 is below min score 0.8" in below.stdout
    one_skill = run("--skills-dir", SKILLS, "--answers", ANSWERS, "--skill", "stripe-payments",
                    "--min-score", "0.8")
    assert one_skill.exit_code == 0
    assert run("--skills-dir", SKILLS, "--answers", ANSWERS, "--min-score", "0").exit_code == 0
    assert run("--skills-dir", SKILLS, "--answers", ANSWERS, "--min-score", "1").exit_code == 1
    assert run("--skills-dir", SKILLS, "--min-score", "1").exit_code == 0


@pytest.mark.parametrize("value", ["1.5", "-0.1", "nan", "inf", "high"])
def test_min_score_out_of_range_is_a_usage_error(value: str) -> None:
    result = run("--skills-dir", SKILLS, "--min-score", value)
    assert result.exit_code == 2 and "--min-score" in result.stderr


def test_json_report_shape_and_nothing_else_on_stdout() -> None:
    result = run("--skills-dir", SKILLS, "--answers", ANSWERS, "--skill", "stripe-payments",
                 "--skill", "b2b-pricing", "--min-score", "0.8", "--json")
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert set(report) >= {"skills", "overall", "min_score", "ok", "problems"}
    assert report["min_score"] == 0.8 and report["ok"] is False
    assert [s["skill"] for s in report["skills"]] == ["stripe-payments", "b2b-pricing"]
    assert report["overall"]["passed"] == 3 and report["overall"]["total"] == 6
    assert report["overall"]["score"] == pytest.approx((1 + 0.5 + 1 + 1 + 2 / 3 + 0) / 6)
    skill = report["skills"][0]
    assert set(skill) >= {"skill", "score", "passed", "total", "tasks"}
    webhook = skill["tasks"][1]
    assert set(webhook) >= {"id", "score", "passed", "missing", "checks"}
    assert (webhook["id"], webhook["score"], webhook["passed"], webhook["missing"]) == \
        ("handle-webhook", 0.5, False, False)
    assert webhook["checks"][0] == {"kind": "must_include", "value": "construct_event", "passed": False,
                                    "evidence": webhook["checks"][0]["evidence"]}
    net_terms = report["skills"][1]["tasks"][2]
    assert net_terms["missing"] is True and net_terms["score"] == 0


def test_unknown_skill_exits_2_and_names_it() -> None:
    result = run("--skills-dir", SKILLS, "--skill", "stripe-payments", "--skill", "paypal")
    assert result.exit_code == 2
    assert "error:" in result.stderr and "unknown skill 'paypal'" in result.stderr
    assert result.stdout == ""


def test_non_utf8_answer_exits_2_naming_the_file(tmp_path: Path) -> None:
    answers = tmp_path / "answers"
    shutil.copytree(ANSWERS, answers)
    (answers / "stripe-payments" / "refund-payment.md").write_bytes(b"Refund \xff\xfe")
    result = run("--skills-dir", SKILLS, "--answers", str(answers))
    assert result.exit_code == 2
    assert "refund-payment.md" in result.stderr and "not valid UTF-8" in result.stderr
    assert result.stderr.count("\n") == 1  # one line, no traceback


def test_unsafe_task_id_exits_2_naming_the_task(tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    write_skill(skills, "s", [{"id": "../../etc/passwd", "prompt": "p", "must_include": ["alpha"]}], {})
    result = run("--skills-dir", str(skills))
    assert result.exit_code == 2
    assert "tasks.json: $[0].id: task id '../../etc/passwd'" in result.stderr


def test_validation_problems_exit_1_and_are_listed(tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    tasks = [{"id": "a", "prompt": "p", "must_include": ["alpha", "made_up"]},
             {"id": "b", "prompt": "p"},
             {"id": "c", "prompt": "p", "must_include": ["beta"]}]
    write_skill(skills, "s", tasks, {"a": "alpha made_up", "b": "anything"})
    result = run("--skills-dir", str(skills), "--min-score", "0")
    assert result.exit_code == 1
    out = result.stdout
    assert "s / a: not_grounded: must_include 'made_up' appears nowhere" in out
    assert "s / b: no_checks" in out
    assert "s / c: missing_example" in out
    report = json.loads(run("--skills-dir", str(skills), "--json").stdout)
    assert sorted((p["task"], p["kind"]) for p in report["problems"]) == [
        ("a", "not_grounded"), ("b", "no_checks"), ("c", "missing_example")]
    assert set(report["problems"][0]) == {"skill", "task", "kind", "value", "message"}


def test_duplicate_task_id_exits_2(tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    write_skill(skills, "s", [{"id": "a", "prompt": "p", "must_include": ["alpha"]}] * 2, {"a": "alpha"})
    result = run("--skills-dir", str(skills))
    assert result.exit_code == 2 and "'a' is used twice" in result.stderr


def test_real_process_on_the_shipped_example(tmp_path: Path) -> None:
    exe = Path(sys.executable).with_name("eval-skills")
    fallback = [sys.executable, "-c", "from eval_skills.cli import main; main()"]
    command = [str(exe)] if exe.exists() else fallback

    def call(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*command, "fixtures", "--skills-dir", SKILLS, *args], capture_output=True,
                              text=True, timeout=60, check=False)

    assert call().returncode == 0
    gate = call("--answers", ANSWERS, "--skill", "stripe-payments", "--skill", "b2b-pricing",
                "--min-score", "0.8", "--json")
    assert gate.returncode == 1, gate.stderr
    report = json.loads(gate.stdout)
    assert report["ok"] is False and report["overall"]["total"] == 6
    assert call("--answers", ANSWERS, "--skill", "stripe-payments", "--min-score", "0.8").returncode == 0
    unknown = call("--skill", "nope")
    assert unknown.returncode == 2 and unknown.stderr.startswith("error: ") and "'nope'" in unknown.stderr
    assert call("--min-score", "2").returncode == 2
