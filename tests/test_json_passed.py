"""Every command's --json is one JSON object whose first field, ``passed``, is true exactly when the command
exits 0: the field a CI step reads, the same name everywhere."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from clirun import CALCULATOR, ROOT, process, run
from paired_data import agent_args
from test_cli_edges import report
from test_github_ci import wrong_tasks
from test_paired_cli import small_skill
from test_routing_cli import AGENT, setup  # noqa: F401  (a fixture)

EXAMPLES = ROOT / "examples"


def passed(out: Any, code: int) -> dict[str, Any]:
    """The --json document of a finished command that exited ``code``, checked for its ``passed`` field."""
    returncode = out.returncode if hasattr(out, "returncode") else out.exit_code
    assert returncode == code, out.stderr
    doc = json.loads(out.stdout)
    assert isinstance(doc, dict) and list(doc)[0] == "passed"
    assert doc["passed"] is (code == 0)
    return doc


def test_tool_skill_commands(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    common = ["--output-dir", tmp_path / "r", "--store", store]
    doc = passed(run("eval", "--skills", CALCULATOR, "--benchmark", "coding-easy", "--json", *common, cwd=tmp_path), 0)
    assert doc["reports"][0]["skillId"] == "calculator" and doc["evaluationId"] and len(doc["reportFiles"]) == 2
    tasks = wrong_tasks(tmp_path, 4)
    doc = passed(run("eval", "--skills", CALCULATOR, "--tasks", tasks, "--exit-on-fail", "--min-completion", "0.9",
                     "--json", *common, cwd=tmp_path), 1)
    assert doc["reports"][0]["summary"]["completionRate"] == 0.5
    assert passed(run("eval", "--skills", CALCULATOR, "--dry-run", "--json", cwd=tmp_path), 0)["totalItems"] == 20
    # the report files eval --json prints load where report files do
    (tmp_path / "printed.json").write_text(json.dumps(doc))
    diff = passed(run("report", "diff", tmp_path / "printed.json", doc["reportFiles"][0], "--json", cwd=tmp_path), 0)
    assert diff["labelA"] == "printed.json"

    skills = EXAMPLES / "skills"
    assert [s["id"] for s in passed(run("find", "--skills-dir", skills, "-q", "calculator", "--store", store,
                                        "--json", cwd=tmp_path), 0)["skills"]][:1] == ["calculator"]
    assert passed(run("find", "--skills-dir", skills, "-q", "zebra", "--json", "--store", store, cwd=tmp_path),
                  0)["skills"] == []
    history = passed(run("history", "--skill", "calculator", "--store", store, "--json", cwd=tmp_path), 0)
    assert len(history["evaluations"]) == 2
    selection = passed(run("select", "--from", CALCULATOR, "--store", store, "--json", cwd=tmp_path), 0)
    assert [s["skillId"] for s in selection["selected"] + selection["excluded"]] == ["calculator"]
    assert passed(run("benchmarks", "list", "--json", cwd=tmp_path), 0)["benchmarks"]
    doc = passed(run("run", "--skills-dir", skills, "-q", "calculator", "--tasks", tasks, "--exit-on-fail",
                     "--min-completion", "0.9", "--json", *common, cwd=tmp_path), 1)  # no skill met the selection
    assert doc["selected"] == [] and doc["reports"][0]["skillId"] == "calculator"


def test_report_diff_gate_and_convert(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text(json.dumps([report("alpha", 1.0)]))
    (tmp_path / "b.json").write_text(json.dumps([report("alpha", 0.5)]))
    doc = passed(run("report", "diff", "a.json", "b.json", "--fail-on-regression", "0.1", "--json", cwd=tmp_path), 1)
    assert doc["labelA"] == "a.json"
    passed(run("report", "diff", "a.json", "b.json", "--fail-on-regression", "0.6", "--json", cwd=tmp_path), 0)
    assert passed(run("report", "convert", "--input", "a.json", "--format", "csv", "--json", cwd=tmp_path),
                  0)["output"] == "a.csv"


def test_project_and_config_commands(tmp_path: Path) -> None:
    env = {"EVAL_SKILLS_HOME": str(tmp_path / "home")}
    assert passed(run("init", "--dir", "proj", "--json", cwd=tmp_path), 0)["created"]
    made = passed(run("create", "--name", "my-skill", "--from-template", "agent_skill", "--output-dir", "skills",
                      "--json", cwd=tmp_path), 0)
    assert made["next"] == "eval-skills fixtures --skills-dir skills"
    assert passed(run("config", "set", "concurrency", "3", "--json", cwd=tmp_path, env=env), 0)["value"] == 3
    assert passed(run("config", "get", "concurrency", "--json", cwd=tmp_path, env=env), 0)["value"] == 3
    listed = passed(run("config", "list", "--json", cwd=tmp_path, env=env), 0)
    assert listed["settings"]["concurrency"]["value"] == 3


def test_instruction_skill_checks(tmp_path: Path) -> None:
    fixtures = EXAMPLES / "fixtures"
    assert passed(run("fixtures", "--skills-dir", fixtures / "skills", "--json", cwd=tmp_path), 0)["ok"] is True
    doc = passed(run("fixtures", "--skills-dir", fixtures / "skills", "--answers", fixtures / "answers",
                     "--min-score", "0.9", "--json", cwd=tmp_path), 1)
    assert doc["ok"] is False  # its earlier name, kept
    release_notes = EXAMPLES / "agent-skills" / "release-notes"
    assert passed(run("validate", release_notes, "--json", cwd=tmp_path), 0)["skills"][0]["valid"] is True
    broken = tmp_path / "Broken"
    shutil.copytree(release_notes, broken)
    passed(run("validate", broken, "--json", cwd=tmp_path), 1)  # the name is not the folder's
    static = passed(run("routing", "--skill-path", release_notes, "--static", "--json", cwd=tmp_path), 0)
    assert static["skill_name"] == "release-notes"
    plan = passed(run("routing", "--skill-path", release_notes, "--agent-cmd", "python3 agent.py {prompt_file}",
                      "--agent-output", "events", "--no-store", "--dry-run", "--json", cwd=tmp_path), 0)
    assert plan["skill"] == "release-notes"


def test_paired_runs_and_its_plan(tmp_path: Path) -> None:
    skill, _, script = small_skill(tmp_path, 2)
    common = ["paired", "--skill-path", skill, *agent_args(script), "--no-compare", "--no-store", "--json"]
    env = {"FAKE_AGENT_CONFIG": str(script)}
    assert passed(process(*common, "--dry-run", cwd=tmp_path, env=env), 0)["agent_runs"] == 4
    doc = passed(process(*common, "--min-delta", "0.5", cwd=tmp_path, env=env), 0)
    assert doc["metadata"]["iteration"] == 1 and len(doc["runs"]) == 4
    doc = passed(process(*common, "--min-delta", "1.5", cwd=tmp_path, env=env), 1)
    assert doc["metadata"]["iteration"] == 2
    assert passed(process(*common, "--plan", cwd=tmp_path, env=env), 0)
    compared = passed(process(*common, "--compare-iterations", "1", "2", cwd=tmp_path, env=env), 0)
    assert compared


@pytest.mark.parametrize("min_f1, code", [("0.6", 0), ("0.7", 1)])
def test_routing_runs(tmp_path: Path, setup, min_f1: str, code: int) -> None:  # noqa: F811
    skill, env = setup
    doc = passed(process("routing", "--skill-path", skill, "--distractors", tmp_path / "others", *AGENT, "--min-f1",
                         min_f1, "--no-store", "--json", cwd=tmp_path, env=env), code)
    assert doc["metrics"]["f1"] == 0.6667
