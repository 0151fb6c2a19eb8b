"""The command line's contract: the option tables of the original eval-skills documentation (each option
exists with the stated default), and the global options on every command, before or after its name."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import click
import pytest
from clirun import CALCULATOR, process, run

from eval_skills.cli import COMMANDS, cli

REQUIRED = object()
NONE = None
# command path -> {option: default} as the documentation's tables state them
TABLES: dict[str, dict[str, Any]] = {
    "find": {"-q/--query": NONE, "-t/--tag": (), "-a/--adapter": NONE, "--min-completion": NONE,
             "--skills-dir": Path("./skills"), "--limit": 20},
    "create": {"--name": REQUIRED, "--from-template": "http_request", "--output-dir": Path("./skills"),
               "--description": NONE},
    "eval": {"--skills": REQUIRED, "--benchmark": "coding-easy", "--tasks": NONE, "--concurrency": 4,
             "--timeout": 30000, "--retries": 0, "--runs": 1, "--evaluator": "exact", "--format": (),
             "--output-dir": Path("./reports"), "--exit-on-fail": False, "--min-completion": 0.7,
             "--dry-run": False, "--benchmarks-dir": (), "--store": Path("./eval-skills.db"), "-c/--config": NONE},
    "select": {"--from": REQUIRED, "--reports": (), "--strategy": NONE, "--min-completion": NONE, "--top-k": NONE,
               "--output": NONE},
    "run": {"--query": NONE, "--benchmark": "coding-easy", "--skills-dir": Path("./skills"), "--top-k": NONE,
            "--min-completion": 0.7, "--format": (), "--output-dir": Path("./reports"), "--strategy": NONE},
    "report convert": {"--input": REQUIRED, "--format": "markdown", "--output": NONE},
    "report diff": {"--label-a": NONE, "--label-b": NONE, "--output": NONE, "--fail-on-regression": NONE},
    "init": {"--dir": Path(".")},
    "history": {"--skill": REQUIRED, "--benchmark": NONE, "--json": False},
}
GLOBALS = ("-c", "--config", "--json", "--no-color", "-v", "--verbose", "--version", "-h", "--help")


def command(path: str) -> click.Command:
    ctx = click.Context(cli)
    found: click.Command | None = cli
    for name in path.split():
        assert isinstance(found, click.Group)
        found = found.get_command(ctx, name)
        assert found is not None, path
    return found


def leaves(group: click.Group = cli, prefix: str = "") -> list[str]:
    ctx = click.Context(group)
    out = []
    for name in group.list_commands(ctx):
        sub = group.get_command(ctx, name)
        assert sub is not None
        path = f"{prefix}{name}"
        out += leaves(sub, path + " ") if isinstance(sub, click.Group) else [path]
    return out


@pytest.mark.parametrize("path", sorted(TABLES))
def test_every_documented_option_exists_with_its_default(path: str) -> None:
    cmd = command(path)
    for flags, default in TABLES[path].items():
        names = flags.split("/")
        param = next((p for p in cmd.params if set(names) <= set(p.opts)), None)
        assert param is not None, f"{path}: {flags} missing"
        value = param.get_default(click.Context(cmd))
        if value is getattr(click.core, "UNSET", object()):  # click 8.2+: no default given
            value = () if getattr(param, "multiple", False) else None
        if default is REQUIRED:
            assert param.required, f"{path}: {flags} should be required"
        elif isinstance(default, Path):
            assert Path(str(value)) == default, f"{path}: {flags} default {value!r}"
        else:
            assert value == default, f"{path}: {flags} default {value!r}"
        assert flags.split("/")[-1] in run(*path.split(), "--help").stdout


def test_every_command_takes_the_global_options() -> None:
    paths = leaves()
    assert {"find", "create", "eval", "select", "run", "report convert", "report diff", "init", "config list",
            "config get", "config set", "history", "benchmarks list", "benchmarks import gaia",
            "benchmarks import toolbench", "fixtures"} <= set(paths)
    for path in paths:
        cmd = command(path)
        opts = {opt for p in cmd.params for opt in p.opts}
        assert set(GLOBALS) - {"-h", "--help"} <= opts, f"{path} lacks {set(GLOBALS) - opts}"
        for flag in ("-h", "--help"):
            helped = run(*path.split(), flag)
            assert helped.exit_code == 0 and helped.stdout.startswith(f"Usage: eval-skills {path}"), path
    assert set(COMMANDS) == {p.split()[0] for p in paths}


@pytest.mark.parametrize("path", ["find", "report diff", "config list", "benchmarks import gaia", "eval"])
def test_version_and_help_on_any_command(path: str) -> None:
    out = run(*path.split(), "--version")
    assert out.exit_code == 0 and re.fullmatch(r"eval-skills, version \S+\n", out.stdout)
    assert run(*path.split(), "-h").stdout.startswith(f"Usage: eval-skills {path}")


def test_global_options_before_or_after_the_command_name(tmp_path: Path) -> None:
    (tmp_path / "other.yaml").write_text("concurrency: 3\n")
    after = run("benchmarks", "list", "--json", cwd=tmp_path)
    before = run("--json", "benchmarks", "list", cwd=tmp_path)
    middle = run("benchmarks", "--json", "list", cwd=tmp_path)
    assert after.exit_code == before.exit_code == middle.exit_code == 0
    assert json.loads(after.stdout) == json.loads(before.stdout) == json.loads(middle.stdout)
    for args in (["-c", tmp_path / "other.yaml", "config", "get", "concurrency"],
                 ["config", "get", "concurrency", "-c", tmp_path / "other.yaml"],
                 [f"--config={tmp_path / 'other.yaml'}", "--no-color", "-v", "config", "get", "concurrency"]):
        out = run(*args, cwd=tmp_path)
        assert out.exit_code == 0 and out.stdout == "3\n", (args, out.output)
    missing = run("-c", tmp_path / "nope.yaml", "find", "--skills-dir", tmp_path, cwd=tmp_path)
    assert missing.exit_code == 2 and "nope.yaml" in missing.stderr


def test_no_color_and_verbose(tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    skills.mkdir()
    import shutil

    shutil.copytree(CALCULATOR, skills / "calculator")
    colour = {"FORCE_COLOR": "1", "TERM": "xterm-256color"}
    plain = process("run", "--skills-dir", skills, "--no-store", "--format", "json", "--output-dir",
                    tmp_path / "r", cwd=tmp_path, env=colour)
    assert plain.returncode == 0 and "\x1b[" in plain.stdout  # colours forced on...
    out = process("--no-color", "-v", "run", "--skills-dir", skills, "--no-store", "--format", "json",
                  "--output-dir", tmp_path / "r", cwd=tmp_path, env=colour)
    assert out.returncode == 0, out.stderr
    assert "\x1b[" not in out.stdout  # ...and off again
    assert "INFO eval_skills.run: found 1 skill(s): calculator" in out.stderr
    quiet = process("find", "--skills-dir", skills, cwd=tmp_path)
    assert "INFO" not in quiet.stderr
