"""What the real agent CLIs do that the harness allows for (found running them against a scripted model; the
end-to-end tests run the real ones): PWD names the workspace, OpenCode's own files and first start, the folders
Codex and OpenCode cannot work without. Real programs: small scripts standing in for the CLIs' behaviour."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
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


def test_a_codex_home_inside_the_temporary_folder_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    agent = create_agent("codex", bin=str(FAKES / "codex"))
    with pytest.raises(InputError, match=r"CODEX_HOME: Codex's home .*codex-home is inside the temporary folder"):
        agent.check()
    monkeypatch.delenv("CODEX_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # ~/.codex inside the temporary folder too
    with pytest.raises(InputError, match="inside the temporary folder"):
        agent.check()
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    agent.check()


def test_the_cli_says_so_in_one_line_and_exit_2(tmp_path: Path) -> None:
    skill = tmp_path / "s"
    skill.mkdir()
    (skill / "SKILL.md").write_text("---\nname: s\ndescription: d\n---\nbody\n")
    (skill / "routing.json").write_text(json.dumps([{"query": "q", "should_trigger": True}]))
    env = {**os.environ, "TMPDIR": str(tmp_path), "CODEX_HOME": str(tmp_path / "h")}
    out = subprocess.run([sys.executable, "-m", "eval_skills", "routing", "--skill-path", str(skill), "--routing",
                          str(skill / "routing.json"), "--agent", "codex", "--agent-bin", str(FAKES / "codex"),
                          "--no-store"], capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 2
    assert len(out.stderr.strip().splitlines()) == 1 and "inside the temporary folder" in out.stderr
