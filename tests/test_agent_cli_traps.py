"""What the real agent CLIs do that the harness allows for (found running them against a scripted model; the
end-to-end tests run the real ones): PWD names the workspace, OpenCode's own files and first start, the folders
Codex and OpenCode cannot work without. Real programs: small scripts standing in for the CLIs' behaviour."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest

from eval_skills.agents import AgentRequest, create_agent
from eval_skills.errors import InputError

FAKES = Path(__file__).parent / "fakes"

# an OpenCode stand-in: sets up its "database" on a first start (failing when another start is doing it), writes
# .opencode/.gitignore and notes.txt in its working folder (from PWD, as OpenCode takes it), answers with that folder
OPENCODE = r'''
import json, os, sys, time
from pathlib import Path
home = Path(os.environ["FAKE_HOME"])
db, busy = home / "opencode.db", home / "creating"
if not db.exists():
    try:
        busy.mkdir()
    except FileExistsError:
        print("Failed query: CREATE TABLE workspace", file=sys.stderr)
        sys.exit(1)
    time.sleep(0.3)
    db.write_text("ok")
    busy.rmdir()
here = Path(os.environ["PWD"])
(here / ".opencode").mkdir(exist_ok=True)
(here / ".opencode" / ".gitignore").write_text("*\n")
(here / "notes.txt").write_text("made by the agent")
for line in ({"type": "step_start", "part": {}}, {"type": "text", "part": {"text": str(here)}},
             {"type": "step_finish", "part": {"tokens": {"input": 5, "output": 2}, "cost": 0}}):
    print(json.dumps(line), flush=True)
'''


def stand_in(tmp_path: Path) -> Path:
    program = tmp_path / "opencode"
    program.write_text(f"#!{sys.executable}\n{OPENCODE}")
    program.chmod(0o755)
    return program


def test_pwd_names_the_workspace_not_the_callers_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    monkeypatch.setenv("PWD", str(tmp_path))  # the caller's folder
    agent = create_agent("command", command=["sh", "-c", 'printf "%s" "$PWD"'], output="text")
    result = asyncio.run(agent.run(AgentRequest("where?", workspace, timeout=30)))
    assert result.response == str(workspace.resolve())


def test_opencode_runs_in_the_workspace_its_own_files_left_out_its_first_start_alone(tmp_path: Path,
                                                                                      monkeypatch: pytest.MonkeyPatch
                                                                                      ) -> None:
    monkeypatch.setenv("FAKE_HOME", str(tmp_path))
    monkeypatch.setenv("PWD", str(tmp_path))
    agent = create_agent("opencode", bin=str(stand_in(tmp_path)))
    workspaces = [tmp_path / f"ws{i}" for i in range(3)]
    for folder in workspaces:
        folder.mkdir()

    async def three_at_once():
        return await asyncio.gather(*(agent.run(AgentRequest("go", ws, timeout=30)) for ws in workspaces))

    results = asyncio.run(three_at_once())
    assert [r.status for r in results] == ["ok"] * 3, [r.error for r in results]  # no start beside the first
    assert [r.response for r in results] == [str(ws.resolve()) for ws in workspaces]
    assert all([f.path for f in r.files] == ["notes.txt"] for r in results)  # not .opencode/.gitignore
    assert all((ws / ".opencode" / ".gitignore").is_file() for ws in workspaces)


def test_opencode_without_ripgrep_is_refused_before_anything_runs(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(FAKES))  # the stand-in CLIs, no rg
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    with pytest.raises(InputError, match=r"OpenCode's skill tool needs ripgrep \(rg\).*apt-get install ripgrep"):
        create_agent("opencode").check()
    rg = tmp_path / "cache" / "opencode" / "bin" / "rg"  # where OpenCode keeps the ripgrep it downloads
    rg.parent.mkdir(parents=True)
    rg.write_text("")
    create_agent("opencode").check()


# a Codex stand-in: records its CODEX_HOME, TMPDIR and what that home holds (in the file FAKE_LOG names), waits a
# moment (so concurrent runs overlap), and answers as `codex exec --json` does
CODEX = r"""
import json, os, sys, time
from pathlib import Path
home = Path(os.environ["CODEX_HOME"])
files = {str(p.relative_to(home)): p.read_text() for p in sorted(home.rglob("*")) if p.is_file()}
(home / "tmp").mkdir(exist_ok=True)  # what Codex makes there (its arg0 helpers), seen by no other run
time.sleep(0.3)
with open(os.environ["FAKE_LOG"], "a") as log:
    log.write(json.dumps({"home": str(home), "tmp": os.environ["TMPDIR"], "files": files,
                          "user_home": os.environ["HOME"]}) + "\n")
sys.stdin.read()
for event in ({"type": "thread.started", "thread_id": "t"}, {"type": "turn.started"},
              {"type": "item.completed", "item": {"id": "i", "type": "agent_message", "text": "done"}},
              {"type": "turn.completed", "usage": {"input_tokens": 1, "output_tokens": 1}}):
    print(json.dumps(event), flush=True)
"""


def test_every_codex_run_has_a_codex_home_of_its_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    user = tmp_path / "user-codex"
    user.mkdir()
    (user / "config.toml").write_text('model = "gpt-x"\n[mcp_servers.mine]\ncommand = "x"\n')
    (user / "auth.json").write_text('{"OPENAI_API_KEY": null}')
    (user / "skills" / "mine").mkdir(parents=True)
    (user / "skills" / "mine" / "SKILL.md").write_text("---\nname: mine\n---\n")
    monkeypatch.setenv("CODEX_HOME", str(user))
    codex = tmp_path / "codex"
    codex.write_text(f"#!{sys.executable}\n{CODEX}")
    codex.chmod(0o755)
    log = tmp_path / "log.jsonl"
    agent = create_agent("codex", bin=str(codex), env={"FAKE_LOG": str(log)})
    folders = [tmp_path / f"ws{i}" for i in range(3)]
    for folder in folders:
        folder.mkdir()

    async def runs() -> list:
        return await asyncio.gather(*(agent.run(AgentRequest("hi", ws, timeout=30)) for ws in folders))

    results = asyncio.run(runs())
    assert [r.status for r in results] == ["ok"] * 3, [r.error for r in results]
    seen = [json.loads(line) for line in log.read_text().splitlines()]
    assert len({s["home"] for s in seen}) == 3  # three runs at once, three homes: nothing to race on
    for s in seen:
        # the user's auth and config as they are (no sandbox), nothing else of the user's Codex home
        assert s["files"] == {"auth.json": '{"OPENAI_API_KEY": null}',
                              "config.toml": 'model = "gpt-x"\n[mcp_servers.mine]\ncommand = "x"\n'}
        assert not Path(s["home"]).is_relative_to(s["tmp"])  # Codex refuses its helpers in a home inside TMPDIR
        assert Path(s["home"]).parent == Path(s["tmp"]).parent and s["user_home"] == os.environ["HOME"]
        assert not Path(s["home"]).exists()  # gone with the run
    assert sorted(p.name for p in user.iterdir()) == ["auth.json", "config.toml", "skills"]  # the user's untouched
    assert agent.user_level_skills(["mine"]) == []  # $CODEX_HOME/skills reaches no run


def test_claude_code_retries_are_bounded_per_run_unless_the_user_says(monkeypatch: pytest.MonkeyPatch) -> None:
    from eval_skills.agents.claude import MAX_RETRIES

    monkeypatch.delenv("CLAUDE_CODE_MAX_RETRIES", raising=False)
    request = AgentRequest("hi", Path.cwd())
    agent = create_agent("claude", bin=str(FAKES / "claude"))
    assert agent.preview(request)["env"] == {"CLAUDE_CODE_MAX_RETRIES": str(MAX_RETRIES)}
    assert "CLAUDE_CODE_MAX_RETRIES" in agent.key_variables  # passed into a sandbox too
    assert create_agent("claude", env={"CLAUDE_CODE_MAX_RETRIES": "0"}).preview(request)["env"] == {}
    monkeypatch.setenv("CLAUDE_CODE_MAX_RETRIES", "7")
    agent = create_agent("claude", bin=str(FAKES / "claude"))
    assert agent.preview(request)["env"] == {} and agent.child_env()["CLAUDE_CODE_MAX_RETRIES"] == "7"
