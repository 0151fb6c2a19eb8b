"""config list/get/set: the user file under HOME, and its values taking effect in eval and run."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from clirun import CALCULATOR, run


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("EVAL_SKILLS_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def test_set_get_list_with_dot_notation(home: Path, tmp_path: Path) -> None:
    assert run("config", "set", "concurrency", "8", cwd=tmp_path).exit_code == 0
    assert run("config", "set", "llm.model", "gpt-4o", cwd=tmp_path).exit_code == 0
    assert run("config", "set", "llm.temperature", "0", cwd=tmp_path).exit_code == 0
    assert run("config", "set", "format", "[json, html]", cwd=tmp_path).exit_code == 0
    saved = yaml.safe_load((home / ".eval-skills" / "config.yaml").read_text())
    assert saved == {"concurrency": 8, "llm": {"model": "gpt-4o", "temperature": 0}, "format": ["json", "html"]}
    assert run("config", "get", "llm.model", cwd=tmp_path).stdout == "gpt-4o\n"
    assert json.loads(run("config", "get", "llm.temperature", "--json", cwd=tmp_path).stdout) == {
        "passed": True, "key": "llm.temperature", "set": True, "value": 0}
    assert run("config", "get", "timeoutMs", cwd=tmp_path).stdout == "30000\n"  # a default
    unset = run("config", "get", "llm.provider", cwd=tmp_path)
    assert unset.exit_code == 0 and unset.stdout == "" and "llm.provider is not set" in unset.stderr
    assert json.loads(run("config", "get", "llm.provider", "--json", cwd=tmp_path).stdout) == {
        "passed": True, "key": "llm.provider", "set": False, "value": None}
    listed = json.loads(run("--json", "config", "list", cwd=tmp_path).stdout)["settings"]
    user = str(home / ".eval-skills" / "config.yaml")
    assert listed["concurrency"] == {"value": 8, "source": user}
    assert listed["llm.model"] == {"value": "gpt-4o", "source": user}
    assert listed["retries"] == {"value": 0, "source": "default"}
    # the project file wins over the user file
    (tmp_path / "eval-skills.config.yaml").write_text("concurrency: 2\n")
    assert run("config", "get", "concurrency", cwd=tmp_path).stdout == "2\n"
    text = run("config", "list", cwd=tmp_path).stdout
    assert "concurrency" in text and "eval-skills.config.yaml" in text


@pytest.mark.parametrize("args, message", [
    (["set", "colour", "red"], "unknown config key 'colour'"),
    (["set", "concurrency.x", "1"], "unknown config key 'concurrency.x'"),
    (["set", "concurrency", "many"], "concurrency"),
    (["set", "format", "pdf"], "format"),
    (["get", "nope"], "unknown config key 'nope'"),
    # the settings under llm are known too: a typo or a wrong type never reaches the file
    (["set", "llm.modle", "gpt-4o"], "unknown config key 'llm.modle'"),
    (["get", "llm.apiKey"], "unknown config key 'llm.apiKey'"),
    (["set", "llm.model.name", "x"], "unknown config key 'llm.model.name'"),
    (["set", "llm.temperature", "hot"], "temperature must be a number"),
    # a negative number is the value, not an unknown option
    (["set", "concurrency", "-3"], "concurrency: Input should be greater than or equal to 1 (got '-3')"),
    (["set", "llm", "{provider: 3}"], "provider must be a string"),
])
def test_bad_keys_and_values_are_exit_2_and_write_nothing(home: Path, tmp_path: Path, args: list[str],
                                                          message: str) -> None:
    out = run("config", *args, cwd=tmp_path)
    assert out.exit_code == 2, out.output
    assert message in out.stderr and len(out.stderr.strip().splitlines()) == 1
    assert not (home / ".eval-skills").exists()


def test_user_config_takes_effect_in_eval_and_run_below_project_file_and_flags(home: Path, tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    shutil.copytree(CALCULATOR, skills / "calculator")
    assert run("config", "set", "outputDir", "./from-user", cwd=tmp_path).exit_code == 0
    assert run("config", "set", "format", "csv", cwd=tmp_path).exit_code == 0
    assert run("config", "set", "store", "./user.db", cwd=tmp_path).exit_code == 0

    assert run("eval", "--skills", skills / "calculator", cwd=tmp_path).exit_code == 0
    assert [p.suffix for p in (tmp_path / "from-user").iterdir()] == [".csv"]
    assert (tmp_path / "user.db").is_file()

    assert run("run", "--skills-dir", skills, cwd=tmp_path).exit_code == 0
    assert sorted(p.suffix for p in (tmp_path / "from-user").iterdir()) == [".csv", ".csv"]

    (tmp_path / "eval-skills.config.yaml").write_text("outputDir: ./from-project\n")
    assert run("eval", "--skills", skills / "calculator", "--no-store", cwd=tmp_path).exit_code == 0
    assert [p.suffix for p in (tmp_path / "from-project").iterdir()] == [".csv"]

    out = run("eval", "--skills", skills / "calculator", "--no-store", "--output-dir", tmp_path / "flag",
              "--format", "json", cwd=tmp_path)
    assert out.exit_code == 0 and [p.suffix for p in (tmp_path / "flag").iterdir()] == [".json"]


def test_a_config_file_with_an_unknown_llm_setting_is_refused_by_every_command(home: Path, tmp_path: Path) -> None:
    (tmp_path / "eval-skills.config.yaml").write_text("llm:\n  apiKey: sk-secret-123\n")
    out = run("eval", "--skills", str(CALCULATOR), "--dry-run", cwd=tmp_path)
    assert out.exit_code == 2, out.output
    assert "eval-skills.config.yaml" in out.stderr and "unknown setting llm.apiKey" in out.stderr
    assert "sk-secret-123" not in out.output
