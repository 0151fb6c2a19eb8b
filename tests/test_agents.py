"""Agent runs with real processes: the fake agent program (tests/fakes/fake_agent.py) as a ``command`` agent."""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fakes import FAKE_AGENT, fake_agent
from procs import wait_gone

from eval_skills.agents import AgentRequest, SkillSource, create_agent
from eval_skills.errors import InputError
from eval_skills.formats.workspace import FinalEvent, MessageEvent, SkillEvent, ToolCallEvent, UsageEvent

SKILL_MD = "---\nname: {name}\ndescription: Helps with {name}.\n---\nUse the {name} method.\n"


def make_skill(root: Path, name: str = "my-skill", folder: str | None = None) -> Path:
    skill = root / "skills" / (folder or name)
    (skill / "evals").mkdir(parents=True)
    (skill / "references").mkdir()
    (skill / "SKILL.md").write_text(SKILL_MD.format(name=name))
    (skill / "references" / "guide.md").write_text("guide")
    (skill / "evals" / "evals.json").write_text('{"evals": []}')
    return skill


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("keep me")
    (ws / "old.txt").write_text("delete me")
    (ws / "same.txt").write_text("aaaa")
    return ws


def python_agent(code: str):
    """A command agent running ``python -c code`` with text output."""
    return create_agent("command", command=[sys.executable, "-c", code])


def run(agent, request: AgentRequest):
    return asyncio.run(agent.run(request))


def test_a_run_with_the_skill_records_everything(tmp_path: Path, workspace: Path) -> None:
    skill = make_skill(tmp_path)
    agent = fake_agent({"skill": "my-skill", "answer": "plain", "skilled_answer": "skilled: {prompt}",
                        "files": {"out/report.md": "# report", "same.txt": "bbbb"}, "delete": ["old.txt"],
                        "usage": {"input_tokens": 100, "output_tokens": 20, "cache_read_tokens": 5,
                                  "cost_usd": 0.25}})
    result = run(agent, AgentRequest("do it", workspace, skills=[skill], timeout=20))

    assert result.status == "ok" and result.error is None and result.exit_code == 0
    assert result.response == "skilled: do it"
    assert [type(e) for e in result.transcript] == [MessageEvent, ToolCallEvent, SkillEvent, ToolCallEvent,
                                                   ToolCallEvent, UsageEvent, FinalEvent]
    read = result.tool_calls[0]
    assert read.name == "Read" and read.input == {"file_path": ".agents/skills/my-skill/SKILL.md"}
    assert read.result.startswith("---\nname: my-skill")  # the result line completed the announced call
    assert result.skill_events[0].tool_call_id == "call_1"
    assert result.skills_invoked == ["my-skill"] and result.installed_skills == ["my-skill"]
    # the installed skill is a copy without evals/, and it is not among the changed files
    installed = workspace / ".agents" / "skills" / "my-skill"
    assert not installed.is_symlink() and (installed / "references" / "guide.md").read_text() == "guide"
    assert not (installed / "evals").exists()
    assert [(f.path, f.kind, f.size) for f in result.files] == [
        ("old.txt", "deleted", None), ("out/report.md", "created", 8), ("same.txt", "modified", 4)]
    usage = result.usage
    assert (usage.input_tokens, usage.output_tokens, usage.cache_read_tokens, usage.total_tokens) == (100, 20, 5, 125)
    assert usage.cost_usd == 0.25 and usage.measurement == "measured"
    assert result.timing().token_measurement == "measured" and result.timing().total_tokens == 125
    assert 0 < result.duration_s < 20
    assert json.loads(result.raw_stdout.text().splitlines()[-1]) == {"type": "final", "text": "skilled: do it"}
    assert json.dumps(result.to_json())  # serialisable as it is


def test_without_skills_nothing_is_installed_and_no_skill_is_used(tmp_path: Path, workspace: Path) -> None:
    agent = fake_agent({"skill": "my-skill", "answer": "plain", "skilled_answer": "skilled"})
    result = run(agent, AgentRequest("do it", workspace, timeout=20))
    assert result.status == "ok" and result.response == "plain"
    assert result.skill_events == [] and result.installed_skills == [] and result.files == []
    assert not (workspace / ".agents").exists()


def test_trigger_decides_whether_an_installed_skill_is_used(tmp_path: Path, workspace: Path) -> None:
    skill = make_skill(tmp_path)
    agent = fake_agent({"skill": "my-skill", "trigger": "invoice", "answer": "plain", "skilled_answer": "skilled"})
    used = run(agent, AgentRequest("Check this INVOICE", workspace, skills=[skill], timeout=20))
    unused = run(agent, AgentRequest("What time is it?", workspace, skills=[skill], timeout=20))
    assert (used.response, used.skills_invoked) == ("skilled", ["my-skill"])
    assert (unused.response, unused.skills_invoked) == ("plain", [])


def test_skills_subdir_and_install_name(tmp_path: Path, workspace: Path) -> None:
    old_copy = make_skill(tmp_path, name="my-skill", folder="my-skill-v1")
    other = make_skill(tmp_path, name="other")
    agent = fake_agent({"skill": "my-skill", "skilled_answer": "skilled"}, skills_subdir=".claude/skills")
    result = run(agent, AgentRequest("go", workspace, skills=[SkillSource(old_copy, "my-skill"), other], timeout=20))
    assert result.response == "skilled" and result.installed_skills == ["my-skill", "other"]
    assert (workspace / ".claude/skills/my-skill/SKILL.md").is_file()
    assert (workspace / ".claude/skills/other/SKILL.md").is_file()
    assert result.files == []


def test_paths_given_as_text(tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """As the README writes them: a SkillSource and a raw stdout's destination given as strings."""
    make_skill(tmp_path, name="my-skill", folder="my-skill-v1")
    monkeypatch.chdir(tmp_path)
    agent = fake_agent({"skill": "my-skill", "skilled_answer": "skilled"})
    result = run(agent, AgentRequest("go", str(workspace), timeout=20,
                                     skills=[SkillSource("skills/my-skill-v1", "my-skill"),
                                             SkillSource("skills/my-skill-v1")]))
    assert result.response == "skilled" and result.installed_skills == ["my-skill", "my-skill-v1"]
    result.raw_stdout.save("stdout.txt")
    assert json.loads((tmp_path / "stdout.txt").read_text().splitlines()[-1]) == {"type": "final", "text": "skilled"}


def test_timeout_kills_the_whole_group(tmp_path: Path, workspace: Path) -> None:
    pid_file = tmp_path / "pids"
    agent = fake_agent({"mode": "hang", "spawn_child": True, "pid_file": str(pid_file), "stderr": "starting up"})
    started = time.monotonic()
    result = run(agent, AgentRequest("go", workspace, timeout=1.5))
    assert time.monotonic() - started < 6
    assert result.status == "timeout" and result.response is None
    assert result.error.startswith("timed out after 1.5 s") and "starting up" in result.error
    assert isinstance(result.transcript[0], MessageEvent)  # what came before the timeout is kept
    pids = [int(line) for line in pid_file.read_text().split()]
    assert len(pids) == 2 and all(wait_gone(pid) for pid in pids)


def test_timeout_kills_descendants_that_left_the_group(tmp_path: Path, workspace: Path) -> None:
    """A child in its own session (``setsid cmd &``) is no member of the group: it is found by parent links
    while the agent still lives, and killed with it."""
    pid_file = tmp_path / "pids"
    agent = fake_agent({"mode": "hang", "spawn_child": True, "detach_child": True, "pid_file": str(pid_file)})
    result = run(agent, AgentRequest("go", workspace, timeout=1.5))
    assert result.status == "timeout"
    pids = [int(line) for line in pid_file.read_text().split()]
    try:
        assert len(pids) == 3 and all(wait_gone(pid) for pid in pids)
    finally:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def test_a_command_leaves_nothing_its_agents_left_running(tmp_path: Path) -> None:
    """An agent that ends normally but leaves a process outside its group (``setsid cmd &``): the command
    running it adopts the orphan and kills it, so nothing goes on changing the workspace after the run."""
    from test_routing import write_skill

    skill = write_skill(tmp_path / "invoice-check", "Checks invoices. Use for invoices.",
                        [{"query": "check this invoice", "should_trigger": True}])
    pid_file = tmp_path / "pids"
    script = {"skill": "invoice-check", "detach_child": True, "pid_file": str(pid_file)}
    done = subprocess.run([sys.executable, "-m", "eval_skills", "routing", "--skill-path", str(skill),
                           "--agent-cmd", f"python {FAKE_AGENT} --prompt-file {{prompt_file}}", "--agent-output",
                           "events", "--runs", "1", "--no-store", "--workspace", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path,
                          env={**os.environ, "HOME": str(tmp_path), "FAKE_AGENT_JSON": json.dumps(script)})
    assert done.returncode == 0, done.stderr
    pids = [int(line) for line in pid_file.read_text().split()]
    try:
        assert len(pids) == 2 and all(wait_gone(pid) for pid in pids)
    finally:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def test_cancelling_a_run_kills_the_group(tmp_path: Path, workspace: Path) -> None:
    pid_file = tmp_path / "pids"
    agent = fake_agent({"mode": "hang", "spawn_child": True, "pid_file": str(pid_file)})

    async def cancel_it() -> None:
        task = asyncio.create_task(agent.run(AgentRequest("go", workspace, timeout=60)))
        while not pid_file.exists() or len(pid_file.read_text().split()) < 2:
            await asyncio.sleep(0.02)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancel_it())
    assert all(wait_gone(int(pid)) for pid in pid_file.read_text().split())


@pytest.mark.parametrize(("script", "error"), [
    ({"mode": "crash"}, "the agent exited with code 1; stderr: Traceback"),
    ({"mode": "exit", "exit_code": 4, "stderr": "quota exceeded"},
     "the agent exited with code 4; stderr: quota exceeded"),
    ({"mode": "silent"}, "the agent gave no final response; stderr was empty"),
    ({"mode": "no-final", "stderr": "lost my way"}, "the agent gave no final response; stderr: lost my way"),
    ({"answer": "   "}, "the agent gave no final response"),
])
def test_failures_are_errors_with_the_stderr_tail(workspace: Path, script: dict, error: str) -> None:
    result = run(fake_agent(script), AgentRequest("go", workspace, timeout=20))
    assert result.status == "error" and result.error.startswith(error)
    if script.get("mode") in ("crash", "exit"):
        assert result.exit_code == (1 if script["mode"] == "crash" else 4)
    assert result.response != ""
    if script.get("mode") == "crash":
        assert "RuntimeError: the fake agent crashed on purpose" in result.stderr_tail


def test_malformed_lines_are_warnings_not_failures(workspace: Path) -> None:
    result = run(fake_agent({"mode": "garbage", "answer": "fine"}), AgentRequest("go", workspace, timeout=20))
    assert result.status == "ok" and result.response == "fine"
    assert len(result.warnings) == 4
    assert "is not JSON: 'this line is not JSON'" in result.warnings[0]
    assert "name: Field required" in result.warnings[1]
    assert "does not match any of the expected tags" in result.warnings[2]
    assert [type(e) for e in result.transcript] == [MessageEvent, FinalEvent]


def test_text_output_and_estimated_usage(workspace: Path) -> None:
    result = run(fake_agent({"output": "text", "answer": "line one\nline two"}),
                 AgentRequest("a prompt of 26 characters.", workspace, timeout=20))
    assert result.status == "ok" and result.response == "line one\nline two"
    assert result.usage.measurement == "estimated" and result.usage.cost_usd is None
    assert (result.usage.input_tokens, result.usage.output_tokens) == (math.ceil(26 / 4), math.ceil(17 / 4))
    assert result.timing().token_measurement == "estimated"


ECHO_ARGV = ("import json, os, sys; print(json.dumps({'argv': sys.argv[1:], 'cwd': os.getcwd(), "
             "'key': os.environ.get('AGENT_KEY'), 'extra': os.environ.get('EXTRA')}))")


def test_placeholders_stay_one_argument_and_the_environment_is_passed(workspace: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_KEY", "secret-from-caller")
    template = (f"{sys.executable} -c \"{ECHO_ARGV}\" {{prompt}} --p=\"{{prompt}}\" {{workdir}} {{model}} "
                "{max_turns} ${unknown} '{\"a\": 1}'")
    agent = create_agent("command", command=template, env={"EXTRA": "1"})
    prompt = "it's \"quoted\" $(rm -rf /) and spaced"
    result = run(agent, AgentRequest(prompt, workspace, timeout=20, model="m-1", max_turns=7))
    echoed = json.loads(result.response)
    assert echoed["argv"] == [prompt, f"--p={prompt}", str(workspace.resolve()), "m-1", "7", "${unknown}", '{"a": 1}']
    assert echoed["cwd"] == str(workspace.resolve())
    # the caller's key reached the agent: echoed back, it is masked, as every secret of the agent's environment
    assert (echoed["key"], echoed["extra"]) == ("***", "1")
    assert result.model == "m-1" and result.agent == "command"


def test_a_prompt_with_a_nul_or_a_lone_surrogate_is_a_result_not_a_crash(workspace: Path) -> None:
    as_argument = create_agent("command", command=[sys.executable, "-c", "import sys; print(sys.argv[1])", "{prompt}"])
    result = run(as_argument, AgentRequest("a \x00 b", workspace, timeout=20))
    assert result.status == "error" and "NUL" in result.error and result.response is None
    from_file = create_agent("command", command=[sys.executable, "-c",
                                                 "import sys; print(open(sys.argv[1], encoding='utf-8').read())",
                                                 "{prompt_file}"])
    for agent, prompt, expected in ((from_file, "a \x00 b", "a \x00 b"), (from_file, "lone \ud800", "lone \ufffd"),
                                    (as_argument, "lone \udcff", "lone \ufffd")):
        result = run(agent, AgentRequest(prompt, workspace, timeout=20))
        assert (result.status, result.response) == ("ok", expected)


def test_a_workspace_where_the_skills_cannot_go_is_that_runs_error(tmp_path: Path, workspace: Path) -> None:
    (workspace / ".agents").write_text("a file where the skills folder goes")
    result = run(python_agent("print('ran')"), AgentRequest("p", workspace, skills=[make_skill(tmp_path)], timeout=20))
    assert result.status == "error" and result.response is None and result.installed_skills == []
    assert result.error.startswith("could not install the skills in the workspace: [Errno 20] Not a directory")
    assert "stderr" not in result.error  # nothing ran


def test_prompt_file_is_outside_the_workspace(workspace: Path) -> None:
    code = "import sys; print(open(sys.argv[1]).read() + ' @ ' + sys.argv[1])"
    result = run(create_agent("command", command=[sys.executable, "-c", code, "{prompt_file}"]),
                 AgentRequest("the prompt", workspace, timeout=20))
    text, path = result.response.split(" @ ")
    assert text == "the prompt" and not Path(path).is_relative_to(workspace.resolve())
    assert not Path(path).exists() and result.files == []  # removed after the run


def test_a_leftover_child_holding_stdout_does_not_stall_the_run(tmp_path: Path, workspace: Path) -> None:
    pid_file = tmp_path / "pid"
    code = ("import subprocess, sys; p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)']); "
            f"open({str(pid_file)!r}, 'w').write(str(p.pid)); print('done')")
    started = time.monotonic()
    result = run(python_agent(code), AgentRequest("go", workspace, timeout=30))
    assert result.status == "ok" and result.response == "done"
    assert time.monotonic() - started < 5
    assert wait_gone(int(pid_file.read_text()))


def test_large_stdout_spills_to_a_file_and_stderr_is_bounded(tmp_path: Path, workspace: Path) -> None:
    code = ("import sys; sys.stderr.write('e' * 100000 + 'LAST'); "
            "[print('x' * 1023) for _ in range(3 * 1024)]; print('the end')")
    result = run(python_agent(code), AgentRequest("go", workspace, timeout=30))
    assert result.status == "ok" and result.response.endswith("the end")
    raw = result.raw_stdout
    assert raw.spilled and raw.size == 3 * 1024 * 1024 + 8 and raw.path.stat().st_size == raw.size
    assert len(result.stderr_tail) == 16 * 1024 and result.stderr_tail.endswith("LAST")
    spill = raw.path
    raw.save(tmp_path / "stdout.log")
    assert not spill.exists() and (tmp_path / "stdout.log").stat().st_size == raw.size


def test_git_folder_is_not_a_change(workspace: Path) -> None:
    (workspace / ".git").mkdir()
    agent = fake_agent({"files": {".git/index": "changed", "src/app.py": "x = 1"}})
    result = run(agent, AgentRequest("go", workspace, timeout=20))
    assert [f.path for f in result.files] == ["src/app.py"]


def test_a_missing_program_is_an_error_result_and_a_failed_check(workspace: Path) -> None:
    agent = create_agent("command", command="no-such-agent-program --x")
    with pytest.raises(InputError, match="no-such-agent-program"):
        agent.check()
    result = run(agent, AgentRequest("go", workspace, timeout=5))
    assert result.status == "error" and "not found on PATH" in result.error and result.exit_code is None


def test_bad_settings_are_input_errors_before_anything_runs(tmp_path: Path, workspace: Path) -> None:
    log = tmp_path / "log.jsonl"
    with pytest.raises(InputError, match="unknown agent 'nope'.*one of: claude, codex, command, openai, opencode"):
        create_agent("nope")
    with pytest.raises(InputError, match="unknown agent output format 'xml'"):
        create_agent("command", command="x", output="xml")
    with pytest.raises(InputError, match="quotes"):
        create_agent("command", command="my-agent 'unclosed")
    with pytest.raises(InputError, match="relative folder inside the workspace"):
        create_agent("command", command="x", skills_subdir="../skills")
    with pytest.raises(InputError, match="timeout"):
        AgentRequest("go", workspace, timeout=0)
    agent = fake_agent({"log": str(log)})
    with pytest.raises(InputError, match="no SKILL.md"):
        run(agent, AgentRequest("go", workspace, skills=[tmp_path / "missing"], timeout=5))
    with pytest.raises(InputError, match="not a folder"):
        run(agent, AgentRequest("go", tmp_path / "nowhere", timeout=5))
    skill = make_skill(tmp_path)
    with pytest.raises(InputError, match="appears twice"):
        run(agent, AgentRequest("go", workspace, skills=[skill, skill], timeout=5))
    assert not log.exists()  # the agent never ran


def test_user_level_skills_are_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    user_skill = tmp_path / "home" / ".claude" / "skills" / "my-skill"
    user_skill.mkdir(parents=True)
    (user_skill / "SKILL.md").write_text(SKILL_MD.format(name="my-skill"))
    agent = create_agent("command", command="x", skills_subdir=".claude/skills")
    assert agent.user_level_skills(["my-skill", "other"]) == [user_skill]
    assert create_agent("command", command="x").user_level_skills(["my-skill"]) == []


def test_concurrent_runs_keep_to_their_workspaces(tmp_path: Path) -> None:
    agent = fake_agent({"files": {"out.txt": "{prompt}"}, "answer": "{prompt}"})
    spaces = [tmp_path / f"ws{i}" for i in range(4)]
    for ws in spaces:
        ws.mkdir()

    async def all_runs():
        return await asyncio.gather(*(agent.run(AgentRequest(f"p{i}", ws, timeout=20)) for i, ws in enumerate(spaces)))

    results = asyncio.run(all_runs())
    assert [r.response for r in results] == ["p0", "p1", "p2", "p3"]
    assert [(ws / "out.txt").read_text() for ws in spaces] == ["p0", "p1", "p2", "p3"]
    assert all([f.path for f in r.files] == ["out.txt"] for r in results)


HOSTILE_AGENT = r"""
import json, os, sys
print('{"type": "message", "role": "assistant", "text": "half \\ud800 a pair"}')
print("[" * 5000 + "]" * 5000)
os.write(os.open(os.fsencode("out-\udcff.txt"), os.O_WRONLY | os.O_CREAT), b"x")
sys.stdout.buffer.write(b'{"type": "final", "text": "caf\xe9 \\udfff done"}\n')
"""


def test_whatever_an_agent_prints_can_be_written(tmp_path: Path, workspace: Path) -> None:
    """Lone surrogates, bytes that are not UTF-8, a file name that is not UTF-8 and nesting 5,000 deep: the run
    is ok, the unusable line is a warning, and the result serialises as UTF-8 (as the store and reports need)."""
    script = tmp_path / "agent.py"
    script.write_text(HOSTILE_AGENT)
    agent = create_agent("command", command=f"{sys.executable} {script}", output="events")
    result = run(agent, AgentRequest("go", workspace, timeout=20))
    assert result.status == "ok", result.error
    assert result.response == "caf\ufffd \ufffd done"
    assert [e.text for e in result.transcript if isinstance(e, MessageEvent)] == ["half \ufffd a pair"]
    assert any("nested deeper than" in w for w in result.warnings), result.warnings
    assert [f.name for f in result.files if f.kind == "created"] == ["out-\ufffd.txt"]
    json.dumps(result.to_json(), ensure_ascii=False).encode("utf-8")  # raises on a lone surrogate


LEAKY_AGENT = r"""
import json, os, sys
key = os.environ["MY_SERVICE_API_KEY"]
print(json.dumps({"type": "message", "role": "assistant", "text": "the env: MY_SERVICE_API_KEY=" + key}))
print(json.dumps({"type": "tool_call", "name": "Bash", "input": {"command": "echo " + key}, "output": key}))
sys.stdout.write("x" * (2 << 20) + key[:5])  # spilled to a file, the key straddling the copy's chunks
sys.stdout.write(key[5:] + "\n")
print(json.dumps({"type": "final", "text": "done with " + key}))
sys.stderr.write("leaked " + key + "\n")
sys.exit(1)
"""


def test_the_secrets_of_an_agents_environment_never_reach_its_result(tmp_path: Path, workspace: Path) -> None:
    """An agent that prints its environment's keys: every text of the result and the saved raw stdout read ***."""
    script = tmp_path / "agent.py"
    script.write_text(LEAKY_AGENT)
    key = "sk-live-0123456789abcdef"
    agent = create_agent("command", command=f"{sys.executable} {script}", output="events",
                         env={"MY_SERVICE_API_KEY": key, "PLAIN": key})
    result = run(agent, AgentRequest("go", workspace, timeout=30))
    assert result.status == "error" and "stderr: leaked ***" in result.error
    assert result.response == "done with ***"
    written = json.dumps(result.to_json())
    assert key not in written and "MY_SERVICE_API_KEY=***" in written
    assert [e.type for e in result.transcript][:2] == ["message", "tool_call"]
    assert result.raw_stdout.spilled
    result.raw_stdout.save(tmp_path / "stdout.txt")
    saved = (tmp_path / "stdout.txt").read_bytes()
    assert key.encode() not in saved and saved.count(b"***") == 5
    assert len(saved) > 2 << 20


def test_the_request_s_files_are_written_first_and_only_what_the_agent_changed_is_reported(tmp_path: Path) -> None:
    # the first snapshot takes the fixtures' digests from the bytes written: a fixture left alone, or rewritten
    # with the same bytes, is no change; one the agent rewrote, or removed, is
    code = ("from pathlib import Path; Path('data/b.txt').write_text('changed'); Path('same.txt').write_text('same');"
            "Path('data/gone.txt').unlink(); print(sorted(p.as_posix() for p in Path('.').rglob('*.txt')))")
    ws = tmp_path / "ws"
    ws.mkdir()
    files = {"data/a.txt": b"kept", "data/b.txt": b"before", "same.txt": b"same", "data/gone.txt": b"x"}
    result = run(python_agent(code), AgentRequest("go", ws, timeout=30, files=files))
    assert result.status == "ok", result.error
    assert result.response == "['data/a.txt', 'data/b.txt', 'same.txt']"
    assert [(f.path, f.kind) for f in result.files] == [("data/b.txt", "modified"), ("data/gone.txt", "deleted")]
