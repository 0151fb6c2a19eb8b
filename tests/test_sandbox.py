"""Isolation of agent runs: a private folder per run whatever the sandbox, and ``--sandbox bwrap`` / ``docker``.

The agent is a hostile program (tests/fakes/hostile_agent.py) that does its job and tries to write into other
runs' folders, change its installed skill and the skill under test, read the user's home and its skills, read a
secret it was not given, write outside its workspace, and leave a process behind. Everything runs for real:
the CLI as a process, bubblewrap, the kernel's namespaces.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from clirun import process, run
from fakes import FAKE_AGENT, PYTHON_BINDS, SANDBOX_BIND_ARGS

from eval_skills.errors import InputError
from eval_skills.sandbox import Bind, RunPaths, SandboxSettings, create_sandbox
from eval_skills.sandbox.bwrap import bwrap_probe

HOSTILE = Path(__file__).parent / "fakes" / "hostile_agent.py"
SECRET = "HOSTILE_TEST_SECRET_TOKEN"
PYTHON = tuple(Bind.parse(bind) for bind in PYTHON_BINDS)  # this Python, wherever its virtualenv is
SKILL_MD = "---\nname: pdf-fill\ndescription: Fills PDF forms. Use it for PDF forms.\n---\n# PDF fill\nFill the form.\n"


def _bwrap_problem() -> str | None:
    found = shutil.which("bwrap")
    if found is None:
        return "bubblewrap (bwrap) is not installed (apt-get install bubblewrap)"
    return bwrap_probe(found, False)


needs_bwrap = pytest.mark.skipif(_bwrap_problem() is not None, reason=f"bwrap cannot run here: {_bwrap_problem()}")


def _leftovers(token: str) -> list[int]:
    """Processes whose command line holds ``token``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if token.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


@pytest.fixture
def hostile(tmp_path):
    """A skill with two cases, the user's home holding a skill of the same name, a secret in the environment,
    a folder outside every workspace, and the hostile agent's command line aimed at all of them."""
    skill = tmp_path / "pdf-fill"
    (skill / "evals").mkdir(parents=True)
    (skill / "SKILL.md").write_text(SKILL_MD)
    cases = [{"id": i, "prompt": f"Fill form {i}", "expected_output": "done",
              "selftune_assertions": [{"type": "contains", "value": "done"}]} for i in (1, 2)]
    (skill / "evals" / "evals.json").write_text(json.dumps({"skill_name": "pdf-fill", "evals": cases}))
    home = tmp_path / "home"
    (home / ".agents" / "skills" / "pdf-fill").mkdir(parents=True)
    (home / ".agents" / "skills" / "pdf-fill" / "SKILL.md").write_text(SKILL_MD.replace("Fill the form", "Mine"))
    outside = tmp_path / "outside"
    outside.mkdir()
    temp = tmp_path / "tmp"  # the runs' temporary folders, so the agent's search stays inside this test
    temp.mkdir()
    token = f"leftover-{uuid.uuid4().hex}"
    targets = {"skill": "pdf-fill", "home": str(home), "secret": SECRET, "outside": str(outside),
               "skill_source": str(skill), "token": token}
    command = (f"{shlex.quote(sys.executable)} {shlex.quote(str(HOSTILE))} --prompt-file {{prompt_file}} "
               f"--targets {shlex.quote(json.dumps(targets))}")
    env = {"HOME": str(home), "TMPDIR": str(temp), SECRET: "s3cr3t-value-of-the-test"}
    return {"skill": skill, "home": home, "outside": outside, "token": token, "command": command, "env": env,
            "original": hashlib.sha256(SKILL_MD.encode()).hexdigest(), "tmp": tmp_path}


def _paired(h, *extra):
    return process("paired", "--skill-path", h["skill"], "--agent-cmd", h["command"], "--runs", "2", "--no-compare",
                   "--no-store", "--json", *extra, cwd=h["tmp"], env=h["env"], timeout=180)


def _runs(h) -> dict[str, Path]:
    iteration = h["tmp"] / "pdf-fill-workspace" / "iteration-1"
    return {f"{p.parent.parent.name}/{p.parent.name}/{p.name}": p for p in sorted(iteration.glob("eval-*/*/run-*"))}


def _check_results_as_without_attempts(h) -> list[dict]:
    """Every run's outputs are its own: the same answer in every run of an arm (with_skill saw the skill as it
    was read), no file from another run; the skill under test never changed for a later run."""
    runs = _runs(h)
    assert len(runs) == 8, runs
    reports = []
    for name, folder in runs.items():
        outputs = folder / "outputs"
        assert sorted(p.name for p in outputs.iterdir()) == ["answer.txt", "report.json", "response.md"], name
        expected = h["original"] if "/with_skill/" in name else "none"
        assert (outputs / "answer.txt").read_text() == f"skill {expected}\nfiles \n", name
        reports.append(json.loads((outputs / "report.json").read_text()))
    return reports


@needs_bwrap
def test_under_bwrap_every_attempt_fails_and_every_result_is_as_without_it(hostile):
    h = hostile
    done = _paired(h, "--sandbox", "bwrap", *SANDBOX_BIND_ARGS, "--concurrency", "4")
    assert done.returncode == 0, done.stderr
    bench = json.loads(done.stdout)
    reports = _check_results_as_without_attempts(h)
    for report in reports:
        assert report["other_runs"] == []  # no other run's folder can be seen
        assert report["installed_skill"] is False  # read-only
        assert report["skill_source"] is False  # the skill under test: read-only
        assert report["home"] == []  # the user's home is an empty folder
        assert report["secret"] is False  # not in the allow-list
        assert report["outside"] is False  # read-only
        assert report["process"] is True  # it could start one ...
    assert _leftovers(h["token"]) == []  # ... which did not outlive its run
    assert (h["skill"] / "SKILL.md").read_text() == SKILL_MD
    assert list(h["outside"].iterdir()) == []
    assert "s3cr3t" not in done.stdout + done.stderr
    meta = bench["metadata"]
    assert meta["isolation"]["sandbox"] == "bwrap" and meta["isolation"]["home"] == "private"
    assert SECRET not in meta["isolation"]["variables"] and "PATH" in meta["isolation"]["variables"]
    assert meta["baseline_clean"] is True  # the user-level copy cannot reach the runs
    assert "installed at user level" not in done.stderr
    for folder in _runs(h).values():
        timing = json.loads((folder / "timing.json").read_text())
        assert timing["isolation"] == meta["isolation"]


def test_without_a_sandbox_no_run_reaches_another_run_or_the_skill_it_gets(hostile):
    h = hostile
    done = _paired(h, "--concurrency", "1")
    assert done.returncode == 0, done.stderr
    bench = json.loads(done.stdout)
    reports = _check_results_as_without_attempts(h)
    for report in reports:
        assert report["other_runs"] == []  # no sibling folder, no staged copy of the skill to change
    # each with_skill run changed its own copy, and the next one still got the skill as it was read
    assert [r["installed_skill"] for r in reports].count(True) == 4
    assert bench["metadata"]["isolation"] == {"sandbox": "none", "home": "user", "home_files": [],
                                              "environment": "inherited", "variables": None, "network": "host",
                                              "binds": []}
    assert bench["metadata"]["baseline_clean"] is False  # the user's own pdf-fill may load in the baseline
    assert "installed at user level" in done.stderr
    assert _leftovers(h["token"]) == []


def test_bwrap_missing_is_one_line_and_exit_2(tmp_path):
    empty = tmp_path / "bin"
    empty.mkdir()
    (tmp_path / "s" / "evals").mkdir(parents=True)
    (tmp_path / "s" / "SKILL.md").write_text(SKILL_MD.replace("pdf-fill", "s"))
    (tmp_path / "s" / "evals" / "routing.json").write_text(json.dumps([{"query": "q", "should_trigger": True}]))
    result = run("routing", "--skill-path", tmp_path / "s", "--agent-cmd", f"{sys.executable} {FAKE_AGENT}",
                 "--sandbox", "bwrap", "--no-store", cwd=tmp_path, env={"PATH": str(empty)})
    assert result.exit_code == 2
    assert result.stderr.strip().count("\n") == 0
    assert "bubblewrap (bwrap) is not installed" in result.stderr and "--sandbox none" in result.stderr
    assert not list(tmp_path.glob("s-workspace/routing-*"))


def test_bwrap_refused_by_the_kernel_is_one_line_and_exit_2(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "bwrap"  # what Debian's bwrap prints where user namespaces are off
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to creating new namespace, likely because the kernel "
                    "does not allow non-privileged user namespaces.' >&2\nexit 1\n")
    fake.chmod(0o755)
    (tmp_path / "s" / "evals").mkdir(parents=True)
    (tmp_path / "s" / "SKILL.md").write_text(SKILL_MD.replace("pdf-fill", "s"))
    (tmp_path / "s" / "evals" / "routing.json").write_text(json.dumps([{"query": "q", "should_trigger": True}]))
    result = run("routing", "--skill-path", tmp_path / "s", "--agent-cmd", f"{sys.executable} {FAKE_AGENT}",
                 "--sandbox", "bwrap", "--no-store", cwd=tmp_path,
                 env={"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"})
    assert result.exit_code == 2
    assert result.stderr.strip().count("\n") == 0
    assert "bwrap cannot create a sandbox here: bwrap: No permissions to creating new namespace" in result.stderr


def test_sandbox_options_without_a_sandbox_or_for_an_agent_without_a_program_are_refused(tmp_path):
    (tmp_path / "s" / "evals").mkdir(parents=True)
    (tmp_path / "s" / "SKILL.md").write_text(SKILL_MD.replace("pdf-fill", "s"))
    (tmp_path / "s" / "evals" / "routing.json").write_text(json.dumps([{"query": "q", "should_trigger": True}]))
    base = ("routing", "--skill-path", tmp_path / "s", "--no-store")
    result = run(*base, "--agent-cmd", f"{sys.executable} {FAKE_AGENT}", "--sandbox-env", "X", cwd=tmp_path)
    assert result.exit_code == 2 and "need a sandbox" in result.stderr
    result = run(*base, "--agent", "openai", "--sandbox", "bwrap", cwd=tmp_path, env={"OPENAI_API_KEY": "k" * 20})
    assert result.exit_code == 2 and "runs no program for a sandbox to confine" in result.stderr
    result = run(*base, "--agent-cmd", f"{sys.executable} {FAKE_AGENT}", "--sandbox", "docker", cwd=tmp_path)
    assert result.exit_code == 2 and "--sandbox-image" in result.stderr
    result = run(*base, "--agent-cmd", f"{sys.executable} {FAKE_AGENT}", "--sandbox", "bwrap", "--sandbox-bind",
                 tmp_path / "nowhere", cwd=tmp_path)
    assert result.exit_code == 2 and "does not exist" in result.stderr


@needs_bwrap
def test_an_agent_program_in_the_home_folder_needs_a_bind(tmp_path):
    home = tmp_path / "home"
    tools = home / ".local" / "bin"
    tools.mkdir(parents=True)
    agent = tools / "my-agent"
    agent.write_text(f"#!{sys.executable}\nimport json, pathlib\ntext = pathlib.Path('{tools}/note.txt').read_text()\n"
                     "print(json.dumps({'type': 'final', 'text': text}))\n")
    agent.chmod(0o755)
    (tools / "note.txt").write_text("seen through the bind")
    (tmp_path / "s" / "evals").mkdir(parents=True)
    (tmp_path / "s" / "SKILL.md").write_text(SKILL_MD.replace("pdf-fill", "s"))
    (tmp_path / "s" / "evals" / "routing.json").write_text(json.dumps([{"query": "q", "should_trigger": True}]))
    base = ("routing", "--skill-path", tmp_path / "s", "--no-store", "--agent-cmd", str(agent), "--agent-output",
            "events", "--sandbox", "bwrap", *SANDBOX_BIND_ARGS)
    env = {"HOME": str(home)}
    refused = process(*base, cwd=tmp_path, env=env)
    assert refused.returncode == 2, refused.stderr
    assert "is in your home folder, which the sandbox hides" in refused.stderr
    assert f"give --sandbox-bind {tools}:ro" in refused.stderr
    done = process(*base, "--sandbox-bind", f"{tools}:ro", "--json", cwd=tmp_path, env=env)
    assert done.stdout, done.stderr
    results = json.loads(done.stdout)
    run_result = json.loads((tmp_path / "s-workspace" / "routing-1" / "query-1" / "run-1" / "result.json").read_text())
    assert run_result["response"] == "seen through the bind", run_result
    assert results["metadata"]["isolation"]["binds"] == [*PYTHON_BINDS, f"{tools}:ro"]


@needs_bwrap
def test_routing_under_bwrap_passes_only_named_variables_and_hides_user_skills(tmp_path):
    from test_routing import QUERIES, SCRIPT, write_skill

    skill = write_skill(tmp_path / "invoice-check", "Checks invoices. Use when asked to check an invoice.", QUERIES)
    home = tmp_path / "home"
    write_skill(home / ".agents" / "skills" / "invoice-check", "The user's own copy.")
    env = {"HOME": str(home), "FAKE_AGENT_JSON": json.dumps(SCRIPT), SECRET: "s3cr3t-value-of-the-test"}
    args = ("routing", "--skill-path", skill, "--no-store", "--json", "--agent-output", "events",
            "--agent-cmd", f"{sys.executable} {FAKE_AGENT} --prompt-file {{prompt_file}}")
    plain = process(*args, cwd=tmp_path, env=env)
    assert plain.returncode in (0, 1), plain.stderr
    assert "installed at user level" in plain.stderr
    done = process(*args, "--sandbox", "bwrap", *SANDBOX_BIND_ARGS, "--sandbox-env", "FAKE_AGENT_JSON", cwd=tmp_path,
                   env=env)
    assert done.returncode in (0, 1), done.stderr
    assert "installed at user level" not in done.stderr
    results = json.loads(done.stdout)
    isolation = results["metadata"]["isolation"]
    assert isolation["sandbox"] == "bwrap" and "FAKE_AGENT_JSON" in isolation["variables"]
    assert SECRET not in isolation["variables"] and results["metadata"]["user_level_skills"] == []
    assert results["metrics"] == json.loads(plain.stdout)["metrics"]  # the agent worked as without the sandbox
    record = json.loads((tmp_path / "invoice-check-workspace" / "routing-2" / "query-1" / "run-1" / "result.json")
                        .read_text())
    assert record["isolation"] == isolation
    assert SCRIPT["skill"] not in json.dumps(isolation)  # names, never values


@needs_bwrap
def test_network_none_cuts_the_run_off_and_host_keeps_it(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    asyncio.run(_network(tmp_path))


async def _network(tmp_path: Path) -> None:
    from eval_skills.agents import AgentRequest, create_agent


    server = await asyncio.start_server(lambda r, w: w.close(), "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    probe = (f"import socket\ntry:\n    socket.create_connection(('127.0.0.1', {port}), timeout=2).close()\n"
             "    print('reached')\nexcept OSError as exc:\n    print('cut off:', exc.__class__.__name__)\n")
    seen = {}
    async with server:
        for network in ("host", "none"):
            agent = create_agent("command", command=[sys.executable, "-c", probe])
            agent.use_sandbox(create_sandbox(SandboxSettings("bwrap", network=network, binds=PYTHON)))
            agent.check()
            workspace = tmp_path / network
            workspace.mkdir()
            result = await agent.run(AgentRequest("go", workspace))
            seen[network] = (result.response or "").strip()
            assert result.isolation["network"] == network
    assert seen == {"host": "reached", "none": "cut off: ConnectionRefusedError"}


@needs_bwrap
def test_the_private_home_holds_only_the_agents_credentials(tmp_path, monkeypatch):
    from eval_skills.agents import AgentRequest, create_agent

    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / ".credentials.json").write_text('{"claudeAiOauth": "t"}')
    (home / ".claude" / "CLAUDE.md").write_text("user memory")
    (home / ".claude" / "settings.json").write_text("{}")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    (tmp_path / "bin").mkdir()
    lister = tmp_path / "bin" / "claude"  # stands for Claude Code: lists its home and its environment
    lister.write_text(f"#!{sys.executable}\nimport json, os, pathlib, sys\nsys.stdin.read()\n"
                      "home = pathlib.Path.home()\n"
                      "files = sorted(str(p.relative_to(home)) for p in home.rglob('*') if p.is_file())\n"
                      "print(json.dumps({'type': 'result', 'subtype': 'success', 'is_error': False, 'result': "
                      "json.dumps({'home': str(home), 'files': files, 'env': sorted(os.environ)})}))\n")
    lister.chmod(0o755)
    agent = create_agent("claude", bin=str(lister))
    agent.use_sandbox(create_sandbox(SandboxSettings("bwrap", binds=PYTHON)))
    with pytest.raises(InputError, match="in the temporary folder, which the sandbox hides"):
        agent.check()
    agent.use_sandbox(create_sandbox(SandboxSettings("bwrap", binds=(*PYTHON, Bind.parse(f"{tmp_path / 'bin'}:ro")))))
    agent.check()
    workspace = tmp_path / "ws"
    workspace.mkdir()
    result = asyncio.run(agent.run(AgentRequest("go", workspace)))
    assert result.ok, result.error
    seen = json.loads(result.response or "{}")
    assert seen["files"] == [".claude/.credentials.json"]
    assert seen["home"] != str(home)
    assert "ANTHROPIC_BASE_URL" in seen["env"] and "HOME" in seen["env"]
    assert result.isolation["home_files"] == [".claude/.credentials.json"]
    assert not (home / ".claude" / "projects").exists()


def test_the_codex_config_keeps_only_how_to_reach_the_model():
    from eval_skills.agents.codex import codex_config

    user = b"""model = "gpt-5"
model_provider = "local"
approval_policy = "never"
notify = ["say", "done"]

[model_providers.local]
name = "Local \\"scripted\\""
base_url = "http://127.0.0.1:8080/v1"
env_key = "LOCAL_KEY"

[model_providers.local.http_headers]
X-Test = "1"

[mcp_servers.secret]
command = "leak"
"""
    import tomllib

    written = tomllib.loads(codex_config(user))
    assert written == {"model": "gpt-5", "model_provider": "local",
                       "model_providers": {"local": {"name": 'Local "scripted"', "base_url": "http://127.0.0.1:8080/v1",
                                                     "env_key": "LOCAL_KEY", "http_headers": {"X-Test": "1"}}}}
    assert tomllib.loads(codex_config(None)) == {}
    assert tomllib.loads(codex_config(b"not = [toml")) == {}


def test_the_docker_command_line_names_variables_never_their_values(tmp_path):
    sandbox = create_sandbox(SandboxSettings("docker", image="agents:1", network="none",
                                             binds=(Bind.parse(f"{tmp_path}:ro"),)))
    run_paths = RunPaths(tmp_path / "ws", tmp_path / "home", (tmp_path / "ws" / ".agents" / "skills" / "pdf",),
                         name="eval-skills-abc")
    inside = sandbox.environment({"PATH": "/usr/bin", "OPENAI_API_KEY": "sk-value", "OTHER": "x"},
                                 ["OPENAI_API_KEY"], run_paths)
    argv = sandbox.command(["codex", "exec", "-"], run_paths, inside)
    assert argv[:4] == ["docker", "run", "--rm", "-i"]
    assert "--read-only" in argv and argv[argv.index("--network") + 1] == "none"
    assert argv[argv.index("--name") + 1] == "eval-skills-abc"
    assert f"{tmp_path / 'ws'}:{tmp_path / 'ws'}" in argv
    assert f"{tmp_path / 'ws' / '.agents' / 'skills' / 'pdf'}:{tmp_path / 'ws' / '.agents' / 'skills' / 'pdf'}:ro" \
        in argv
    assert f"{tmp_path}:{tmp_path}:ro" in argv
    names = [argv[i + 1] for i, word in enumerate(argv) if word == "-e"]
    assert names == ["HOME", "OPENAI_API_KEY", "TMPDIR"]  # PATH is the image's own; OTHER is not allowed
    assert "sk-value" not in " ".join(argv)
    assert argv[-4:] == ["agents:1", "codex", "exec", "-"]
    client = sandbox.process_environment({"PATH": "/usr/bin", "DOCKER_HOST": "unix:///x", "OTHER": "x"}, inside)
    assert client["OPENAI_API_KEY"] == "sk-value" and client["DOCKER_HOST"] == "unix:///x" and "OTHER" not in client


def _docker_problem() -> str | None:
    if shutil.which("docker") is None:
        return "docker is not installed"
    done = subprocess.run(["docker", "info"], capture_output=True, timeout=30, check=False)
    return None if done.returncode == 0 else "no Docker daemon runs here"


@pytest.mark.skipif(_docker_problem() is not None, reason=f"needs a Docker daemon: {_docker_problem()}")
def test_under_docker_the_hostile_agent_changes_nothing(hostile):  # pragma: no cover - needs a daemon
    image = os.environ.get("EVAL_SKILLS_TEST_IMAGE", "python:3.12-slim")
    h = dict(hostile)
    h["command"] = h["command"].replace(shlex.quote(sys.executable), "python3")
    done = _paired(h, "--sandbox", "docker", "--sandbox-image", image, "--sandbox-bind", f"{HOSTILE.parent}:ro")
    assert done.returncode == 0, done.stderr
    for report in _check_results_as_without_attempts(h):
        assert not any(report[k] for k in ("other_runs", "installed_skill", "skill_source", "home", "secret",
                                           "outside"))
    time.sleep(0.5)
    assert _leftovers(h["token"]) == []


@needs_bwrap
def test_an_iteration_is_resumed_only_under_the_sandbox_it_started_with(hostile):
    h = hostile
    args = ("paired", "--skill-path", h["skill"], "--agent-cmd", h["command"], "--no-compare", "--no-store")
    first = process(*args, "--budget-tokens", "1", "--concurrency", "1", cwd=h["tmp"], env=h["env"])
    assert first.returncode == 0, first.stderr
    assert (h["skill"] / "SKILL.md").read_text() != SKILL_MD  # without a sandbox, the agent changed the skill
    (h["skill"] / "SKILL.md").write_text(SKILL_MD)  # put back, or resuming is refused for that
    refused = process(*args, "--resume", "--sandbox", "bwrap", *SANDBOX_BIND_ARGS, cwd=h["tmp"], env=h["env"])
    assert refused.returncode == 2
    assert "cannot resume: the runs so far had --sandbox none, now bwrap" in refused.stderr


def test_a_sandboxed_codex_gets_the_key_its_model_provider_names(tmp_path, monkeypatch):
    from eval_skills.agents import create_agent

    codex_home = tmp_path / "codex-home"
    codex_home.mkdir()
    (codex_home / "config.toml").write_text('model_provider = "mine"\n[model_providers.mine]\n'
                                            'base_url = "http://127.0.0.1:1/v1"\nenv_key = "MINE_KEY"\n')
    (codex_home / "auth.json").write_text('{"OPENAI_API_KEY": null}')
    monkeypatch.setenv("CODEX_HOME", str(codex_home))
    monkeypatch.setenv("MINE_KEY", "k" * 20)
    agent = create_agent("codex")
    agent.use_sandbox(create_sandbox("bwrap"))
    assert "MINE_KEY" in agent.sandbox_variables()
    assert sorted(agent.home_files()) == [".codex/auth.json", ".codex/config.toml"]
    assert "MINE_KEY" in agent.isolation()["variables"] and "CODEX_HOME" in agent.isolation()["variables"]


@needs_bwrap
def test_a_sandboxed_opencode_gets_its_configuration_and_its_package_cache(tmp_path, monkeypatch):
    from eval_skills.agents import AgentRequest, create_agent

    home = tmp_path / "home"
    config = home / ".config" / "opencode"
    config.mkdir(parents=True)
    (config / "opencode.jsonc").write_text('{"model": "local/m", // comments are allowed\n'
                                           ' "mcp": {"mine": {"type": "local"}}, "instructions": ["~/rules.md"]}')
    extra = tmp_path / "extra.json"  # the file OPENCODE_CONFIG names, merged over the global one
    extra.write_text(json.dumps({"provider": {"local": {"npm": "@ai-sdk/openai-compatible",
                                                        "options": {"apiKey": "{env:LOCAL_KEY}"}}}}))
    cache = home / ".cache" / "opencode"
    (cache / "node_modules" / "@ai-sdk" / "x").mkdir(parents=True)
    (cache / "node_modules" / "@ai-sdk" / "x" / "package.json").write_text('{"name": "@ai-sdk/x"}')
    (cache / "package.json").write_text('{"dependencies": {"@ai-sdk/x": "1.0.0"}}')
    for name, value in (("HOME", str(home)), ("OPENCODE_CONFIG", str(extra)), ("LOCAL_KEY", "k" * 20),
                        ("NOT_NAMED_KEY", "s" * 20)):
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    (tmp_path / "bin").mkdir()
    lister = tmp_path / "bin" / "opencode"  # stands for OpenCode: reports its configuration, cache and variables
    lister.write_text(
        f"#!{sys.executable}\nimport json, os, pathlib, sys, time\nsys.stdin.read()\n"
        "home = pathlib.Path.home()\ncache = home / '.cache' / 'opencode'\n"
        "try:\n    (cache / 'node_modules' / 'new').mkdir()\n    writable = True\n"
        "except OSError:\n    writable = False\n"
        "seen = {'config': json.loads((home / '.config/opencode/opencode.json').read_text()),\n"
        "        'cached': sorted(str(p.relative_to(cache)) for p in cache.rglob('*') if p.is_file()),\n"
        "        'writable': writable, 'env': sorted(os.environ)}\n"
        "event = lambda kind, **part: print(json.dumps({'type': kind, 'timestamp': 0, 'sessionID': 's', "
        "'part': part}))\n"
        "tokens = {'input': 1, 'output': 1, 'reasoning': 0, 'cache': {'read': 0, 'write': 0}}\n"
        "event('step_start', type='step-start')\nevent('text', type='text', text=json.dumps(seen))\n"
        "event('step_finish', type='step-finish', reason='stop', cost=0, tokens=tokens)\n")
    lister.chmod(0o755)
    agent = create_agent("opencode", bin=str(lister))
    agent.use_sandbox(create_sandbox(SandboxSettings("bwrap", binds=(*PYTHON, Bind.parse(f"{tmp_path / 'bin'}:ro")))))
    workspace = tmp_path / "ws"
    workspace.mkdir()
    result = asyncio.run(agent.run(AgentRequest("go", workspace, timeout=60)))
    assert result.ok, result.error
    seen = json.loads(result.response or "{}")
    # of the configuration, only how to reach the model: no MCP server, no instructions file of the user's
    assert seen["config"] == {"model": "local/m", "provider": {"local": {
        "npm": "@ai-sdk/openai-compatible", "options": {"apiKey": "{env:LOCAL_KEY}"}}}}
    assert "LOCAL_KEY" in seen["env"] and "NOT_NAMED_KEY" not in seen["env"]  # the key the provider names, only
    assert seen["cached"] == ["node_modules/@ai-sdk/x/package.json", "package.json"]
    assert seen["writable"] is False and not (cache / "node_modules" / "new").exists()  # the cache stays yours
    assert ".cache/opencode/node_modules/ (read-only)" in result.isolation["home_files"]
