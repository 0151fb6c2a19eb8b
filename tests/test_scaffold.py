"""init and create: real files, and every generated skill passing its own generated test."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import pytest
from clirun import process, run

from eval_skills.config import Config, load_config
from eval_skills.formats.agentskills import load_evals, load_routing, load_skill_md
from eval_skills.formats.benchmark import load_benchmark_file
from eval_skills.formats.skill import load_skill


def test_init_writes_a_commented_config_and_folders(tmp_path: Path) -> None:
    out = run("init", "--dir", tmp_path / "proj")
    assert out.exit_code == 0, out.output
    proj = tmp_path / "proj"
    assert all((proj / name).is_dir() for name in ("skills", "benchmarks", "reports"))
    text = (proj / "eval-skills.config.yaml").read_text()
    assert "# concurrency: 4" in text and "# timeoutMs: 30000" in text and "# outputDir: ./reports" in text
    assert all(line.startswith("#") or not line.strip() for line in text.splitlines())  # every setting commented
    settings = [line for line in text.splitlines() if line.startswith("# ") and ": " in line.split("#")[1]]
    assert {line.split(":")[0][2:] for line in settings} == set(Config.model_fields)  # every key, each explained
    assert all(line.split("  # ", 1)[-1].strip() not in ("", "#") and "  # " in line for line in settings), settings
    assert load_config(proj / "eval-skills.config.yaml") == Config()  # so the defaults apply
    # it refuses to overwrite, unless --force
    (proj / "eval-skills.config.yaml").write_text("concurrency: 9\n")
    again = run("init", "--dir", proj)
    assert again.exit_code == 2 and "already exists" in again.stderr and "--force" in again.stderr
    assert len(again.stderr.strip().splitlines()) == 1
    assert (proj / "eval-skills.config.yaml").read_text() == "concurrency: 9\n"
    assert run("init", "--dir", proj, "--force").exit_code == 0
    assert "# concurrency: 4" in (proj / "eval-skills.config.yaml").read_text()


@pytest.mark.parametrize("under", ["", "sub/deeper"])
def test_init_and_create_into_a_file_say_it_is_a_file(tmp_path: Path, under: str) -> None:
    (tmp_path / "afile").write_text("mine\n")
    out = run("init", "--dir", tmp_path / "afile" / under)
    assert out.exit_code == 2, out.output
    assert out.stderr.strip() == f"error: {tmp_path / 'afile'}: is a file, not a folder (choose another --dir)"
    made = run("create", "--name", "x", "--output-dir", tmp_path / "afile" / under)
    assert made.exit_code == 2, made.output
    assert made.stderr.strip() == f"error: {tmp_path / 'afile'}: is a file, not a folder (choose another --output-dir)"
    assert (tmp_path / "afile").read_text() == "mine\n"


@pytest.mark.parametrize("template", ["python_script", "http_request", "mcp_tool"])
def test_generated_tool_skill_passes_its_own_test(tmp_path: Path, template: str) -> None:
    name = f"gen_{template}"
    out = run("create", "--name", name, "--from-template", template, "--output-dir", tmp_path / "skills",
              "--description", 'Fetches "weather" <data>')
    assert out.exit_code == 0, out.output
    folder = tmp_path / "skills" / name
    skill = load_skill(folder)
    assert skill.manifest.description == 'Fetches "weather" <data>'
    assert skill.manifest.adapterType == {"python_script": "subprocess", "http_request": "http",
                                          "mcp_tool": "mcp"}[template]
    if template == "python_script":
        assert skill.adapter.persistent is True
    assert {p.name for p in folder.iterdir()} >= {"skill.json", "adapter.config.json", "tests"}
    test = folder / "tests" / "basic.eval.json"
    load_benchmark_file(test)
    result = process("eval", "--skills", folder, "--benchmark", test, "--json", "--no-store",
                     "--format", "json", "--output-dir", tmp_path / "r", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    (report,) = json.loads(result.stdout)["reports"]
    assert report["summary"]["completionRate"] == 1.0, report["taskResults"]
    assert report["summary"]["totalTasks"] == 1


def test_mcp_tool_template_is_a_real_mcp_server(tmp_path: Path) -> None:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    assert run("create", "--name", "echo_tool", "--from-template", "mcp_tool", "--output-dir", tmp_path,
               "--description", "Echoes text").exit_code == 0
    folder = tmp_path / "echo_tool"
    skill = load_skill(folder)
    assert skill.manifest.adapterType == "mcp" and skill.manifest.metadata["toolName"] == "echo_tool"
    assert skill.manifest.entrypoint == "python3 server.py"
    benchmark = load_benchmark_file(folder / "tests" / "basic.eval.json")
    (task,) = benchmark.tasks

    async def call() -> tuple[list[str], dict]:
        params = StdioServerParameters(command=sys.executable, args=["server.py"], cwd=str(folder))
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            tools = await session.list_tools()
            result = await session.call_tool(skill.manifest.metadata["toolName"], task.inputData)
            return [t.name for t in tools.tools], result.model_dump(by_alias=True)

    names, result = anyio.run(call)
    assert names == ["echo_tool"]
    assert result["isError"] is False
    # what the MCP adapter takes as the output: the structured content; the task's exact scorer reads "result"
    assert result["structuredContent"] == {"result": task.expectedOutput.value}


def test_agent_skill_template_is_a_valid_agent_skill(tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    out = run("create", "--name", "release-notes", "--from-template", "agent_skill", "--output-dir", skills,
              "--description", "Writes release notes from a list of merged changes.")
    assert out.exit_code == 0, out.output
    folder = skills / "release-notes"
    doc = load_skill_md(folder)
    assert doc.name == "release-notes" and doc.description.startswith("Writes release notes")
    assert doc.warnings == []
    evals = load_evals(folder / "evals" / "evals.json", folder)
    assert evals.skill_name == "release-notes" and evals.evals[0].assertions
    routing = load_routing(folder / "evals" / "routing.json")
    assert {q.should_trigger for q in routing} == {True, False}
    assert (folder / "evals" / "tasks.json").is_file() and list((folder / "evals" / "examples").glob("*.md"))
    checked = run("fixtures", "--skills-dir", skills, "--json")
    assert checked.exit_code == 0, checked.output
    report = json.loads(checked.stdout)
    assert report["ok"] and report["overall"] == {"score": 1.0, "passed": 1, "total": 1}


@pytest.mark.parametrize("args, message", [
    (["--name", "x", "--from-template", "flask"], "unknown template 'flask'"),
    (["--name", "Bad Name", "--from-template", "python_script"], "--name"),
    (["--name", "under_score", "--from-template", "agent_skill"], "--name"),
    (["--name", "-dash", "--from-template", "python_script"], "not starting with -"),
    (["--name=-dash", "--from-template", "agent_skill"], "--name"),
])
def test_bad_create_input_is_one_line_and_writes_nothing(tmp_path: Path, args: list[str], message: str) -> None:
    out = run("create", *args, "--output-dir", tmp_path / "skills")
    assert out.exit_code == 2 and message in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "skills").exists()


def test_an_existing_folder_is_never_overwritten(tmp_path: Path) -> None:
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "skill.py").write_text("# my work\n")
    out = run("create", "--name", "mine", "--from-template", "python_script", "--output-dir", tmp_path)
    assert out.exit_code == 2 and "already exists" in out.stderr
    assert [p.name for p in (tmp_path / "mine").iterdir()] == ["skill.py"]
    assert (tmp_path / "mine" / "skill.py").read_text() == "# my work\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine"]  # no staging folder left behind
