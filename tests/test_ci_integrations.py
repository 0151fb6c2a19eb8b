"""The GitHub Action (action.yml) and the pre-commit hooks (.pre-commit-hooks.yaml), run the way GitHub's runner
and pre-commit run them: the action's shell steps with a simulated runner environment (files for
GITHUB_OUTPUT, GITHUB_PATH and GITHUB_STEP_SUMMARY, inputs substituted), the hooks' entries on a sample
repository after pre-commit's own check of the manifest."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from clirun import ROOT

ACTION = yaml.safe_load((ROOT / "action.yml").read_text())
HOOKS = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
FIXTURE_SKILLS = ROOT / "examples" / "fixtures" / "skills"
EXPRESSION = re.compile(r"\$\{\{\s*([^}]*?)\s*\}\}")
BIN = Path(sys.executable).parent  # where this environment's eval-skills is


def substitute(text: str, inputs: dict[str, str]) -> str:
    """``${{ inputs.NAME }}`` replaced as the runner does; any other expression is a test failure."""
    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        assert name.startswith("inputs."), f"unexpected expression {name!r}"
        return inputs[name.removeprefix("inputs.")]

    return EXPRESSION.sub(value, text)


def action_inputs(**given: str) -> dict[str, str]:
    declared = ACTION["inputs"]
    missing = [name for name, spec in declared.items() if spec.get("required") and name not in given]
    assert not missing, missing
    return {name: given.get(name, str(spec.get("default", ""))) for name, spec in declared.items()}


def run_step(step: dict[str, Any], inputs: dict[str, str], workspace: Path, runner: dict[str, str]) -> int:
    """One ``run:`` step as the runner runs a bash step: ``bash --noprofile --norc -eo pipefail``, its env with the
    inputs substituted, in its working directory, with the runner's files; GITHUB_PATH lines go on PATH after."""
    assert step["shell"] == "bash"
    assert "${{" not in step["run"]  # inputs reach the script through env only: no injection into the shell text
    env = {**os.environ, **runner, **{k: substitute(str(v), inputs) for k, v in (step.get("env") or {}).items()}}
    path_file = Path(runner["GITHUB_PATH"])
    added = [line for line in path_file.read_text().splitlines() if line] if path_file.exists() else []
    env["PATH"] = os.pathsep.join([*reversed(added), env["PATH"]])
    cwd = workspace / substitute(step.get("working-directory", "."), inputs)
    script = workspace.parent / "step.sh"
    script.write_text(step["run"])
    return subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], cwd=cwd, env=env,
                          timeout=600).returncode


def runner_env(tmp_path: Path) -> dict[str, str]:
    temp = tmp_path / "runner-temp"
    temp.mkdir()
    return {"RUNNER_TEMP": str(temp), "GITHUB_ACTION_PATH": str(ROOT), "GITHUB_ACTIONS": "true",
            "GITHUB_WORKSPACE": str(tmp_path / "repo"), "GITHUB_OUTPUT": str(temp / "output"),
            "GITHUB_PATH": str(temp / "path"), "GITHUB_STEP_SUMMARY": str(temp / "summary.md")}


def sample_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURE_SKILLS, repo / ".claude" / "skills")
    shutil.copytree(FIXTURE_SKILLS.parent / "rules", repo / ".claude" / "rules")  # what the skills cite
    (repo / "my skills").mkdir()
    shutil.copytree(FIXTURE_SKILLS / "b2b-pricing", repo / "my skills" / "b2b-pricing")
    return repo


def outputs(runner: dict[str, str]) -> dict[str, str]:
    return dict(line.split("=", 1) for line in Path(runner["GITHUB_OUTPUT"]).read_text().splitlines())


# ---- action.yml ----------------------------------------------------------------------------------------


def test_the_action_is_a_composite_action_whose_inputs_are_all_used() -> None:
    assert ACTION["runs"]["using"] == "composite"
    text = yaml.safe_dump(ACTION["runs"])
    used = set(re.findall(r"inputs\.([\w-]+)", text))
    assert used == set(ACTION["inputs"]), used ^ set(ACTION["inputs"])  # every input used, none undeclared
    ids = {step.get("id") for step in ACTION["runs"]["steps"]}
    for output in ACTION["outputs"].values():
        step_id = re.fullmatch(r"\$\{\{ steps\.([\w-]+)\.outputs\.[\w-]+ \}\}", output["value"]).group(1)  # type: ignore[union-attr]
        assert step_id in ids
    assert all(step.get("shell") == "bash" for step in ACTION["runs"]["steps"] if "run" in step)


@pytest.mark.parametrize("command, code", [
    ("fixtures --skills-dir .claude/skills", 0),
    ('validate "my skills" .claude/skills', 0),  # a quoted path with a space stays one argument
    ("fixtures --skills-dir .claude/skills --answers answers --min-score 0.9", 2),  # no such folder: bad input
])
def test_the_command_step_runs_the_command_and_says_its_exit_code(tmp_path: Path, command: str, code: int) -> None:
    repo = sample_repo(tmp_path)
    runner = runner_env(tmp_path)
    Path(runner["GITHUB_PATH"]).write_text(f"{BIN}\n")  # as the install step leaves it
    step = next(s for s in ACTION["runs"]["steps"] if s.get("id") == "run")
    assert run_step(step, action_inputs(command=command), repo, runner) == code
    assert outputs(runner) == {"exit-code": str(code)}
    summary = Path(runner["GITHUB_STEP_SUMMARY"])
    if code == 0:
        assert f"eval-skills {command.split()[0]}: passed" in summary.read_text()


def test_the_command_step_runs_in_the_working_directory_and_fails_the_step(tmp_path: Path) -> None:
    repo = sample_repo(tmp_path)
    shutil.copytree(ROOT / "examples" / "fixtures" / "answers", repo / "sub" / "answers")
    shutil.copytree(FIXTURE_SKILLS, repo / "sub" / "skills")
    runner = runner_env(tmp_path)
    Path(runner["GITHUB_PATH"]).write_text(f"{BIN}\n")
    step = next(s for s in ACTION["runs"]["steps"] if s.get("id") == "run")
    inputs = action_inputs(command="fixtures --skills-dir skills --answers answers --min-score 0.9",
                           **{"working-directory": "sub"})
    assert run_step(step, inputs, repo, runner) == 1  # the gate failed: the step fails
    assert outputs(runner) == {"exit-code": "1"}
    assert ":x: eval-skills fixtures: failed" in Path(runner["GITHUB_STEP_SUMMARY"]).read_text()


@pytest.mark.slow
def test_every_step_of_the_action_installs_and_runs(tmp_path: Path) -> None:
    """The install step too: a virtual environment in RUNNER_TEMP with this revision pip-installed (from PyPI's
    dependencies), put on GITHUB_PATH for the next step."""
    repo = sample_repo(tmp_path)
    runner = runner_env(tmp_path)
    inputs = action_inputs(command="validate .claude/skills")
    env_bin = f"{Path(sys.executable).parent}{os.pathsep}"
    for step in ACTION["runs"]["steps"]:
        if "uses" in step:  # actions/setup-python: this interpreter stands for the one it sets up
            assert step["uses"].startswith("actions/setup-python@")
            continue
        assert run_step(step, inputs, repo, {**runner, "PATH": env_bin + os.environ["PATH"]}) == 0
    venv_bin = Path(runner["RUNNER_TEMP"]) / "eval-skills-venv" / "bin"
    assert Path(runner["GITHUB_PATH"]).read_text() == f"{venv_bin}\n" and (venv_bin / "eval-skills").is_file()
    assert outputs(runner) == {"exit-code": "0"}


# ---- .pre-commit-hooks.yaml ---------------------------------------------------------------------------------


def test_pre_commit_accepts_the_hooks_manifest() -> None:
    manifest = ROOT / ".pre-commit-hooks.yaml"
    out = subprocess.run([sys.executable, "-m", "pre_commit", "validate-manifest", str(manifest)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    assert [h["id"] for h in HOOKS] == ["eval-skills-validate", "eval-skills-fixtures"]


def run_hook(hook_id: str, args: list[str], repo: Path, changed: list[str]) -> int | None:
    """The hook as pre-commit runs it: skipped (None) unless a changed file matches ``files``; with
    ``pass_filenames: false``, its entry and args once, in the repository's root."""
    hook = next(h for h in HOOKS if h["id"] == hook_id)
    if not any(re.search(hook["files"], path) for path in changed):
        return None
    assert hook["pass_filenames"] is False and hook["language"] == "python"
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    return subprocess.run([*shlex.split(hook["entry"]), *args], cwd=repo, env=env, capture_output=True,
                          timeout=120).returncode


def test_the_hooks_run_on_a_sample_repository(tmp_path: Path) -> None:
    repo = sample_repo(tmp_path)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    validate, fixtures = (["eval-skills-validate", [".claude/skills"]],
                          ["eval-skills-fixtures", ["--skills-dir", ".claude/skills"]])
    skill_md = ".claude/skills/b2b-pricing/SKILL.md"
    assert run_hook(*validate, repo, [skill_md]) == 0  # type: ignore[arg-type]
    assert run_hook(*fixtures, repo, [".claude/skills/b2b-pricing/evals/tasks.json"]) == 0  # type: ignore[arg-type]
    assert run_hook(*validate, repo, ["README.md", "src/app.py"]) is None  # type: ignore[arg-type]
    path = repo / skill_md
    good = path.read_text()
    path.write_text(good.replace("name: b2b-pricing", "name: B2B_Pricing"))
    assert run_hook(*validate, repo, [skill_md]) == 1  # type: ignore[arg-type]
    path.write_text(good)
    example = repo / ".claude" / "skills" / "b2b-pricing" / "evals" / "examples"
    for file in example.iterdir():
        file.write_text("nothing useful\n")
    assert run_hook(*fixtures, repo, [".claude/skills/b2b-pricing/evals/examples/x.md"]) == 1  # type: ignore[arg-type]
