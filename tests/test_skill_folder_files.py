"""What is in a skill folder besides regular files: a FIFO, a link to /dev/zero, a link out of the folder, a huge
sparse file. Every command that reads a skill folder finishes (each runs as a real process with a timeout: a hang
fails the test), reads and installs only the regular files, and warns naming each entry it skipped."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest
from clirun import process
from fakes import FAKE_AGENT

from eval_skills.agents import AgentRequest, create_agent, read_bundle
from eval_skills.errors import InputError
from eval_skills.formats.skill_files import MAX_FILE_BYTES, read_regular

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs (POSIX)")

SKILL_MD = "---\nname: odd-skill\ndescription: Sums invoices. Use it for invoices.\n---\n# Odd skill\nalpha beta\n"
TIMEOUT = 60  # every command here takes a second or two; a hang is cut off here and fails the test
ODD = ("pipe", "zero", "outside.txt", "big.bin", "references/pipe", "references/zero", "linked-folder")


def odd_skill(tmp_path: Path) -> Path:
    """A skill folder holding, beside its regular files, one of each thing no command may read."""
    skill = tmp_path / "skills" / "odd-skill"
    (skill / "evals" / "examples").mkdir(parents=True)
    (skill / "notes").mkdir()
    (skill / "references").mkdir()
    (skill / "SKILL.md").write_text(SKILL_MD)
    (skill / "notes" / "inside.md").write_text("read through a link inside the skill")
    (skill / "inside-link.md").symlink_to("notes/inside.md")  # inside the folder: read as that file
    (skill / "references" / "guide.md").write_text("gamma")
    os.mkfifo(skill / "pipe")  # nobody ever writes: reading it waits for ever
    os.mkfifo(skill / "references" / "pipe")
    (skill / "zero").symlink_to("/dev/zero")  # never ends
    (skill / "references" / "zero").symlink_to("/dev/zero")
    (tmp_path / "secret.txt").write_text("not the skill's")
    (skill / "outside.txt").symlink_to(tmp_path / "secret.txt")
    (skill / "linked-folder").symlink_to(skill / "notes")
    with open(skill / "big.bin", "wb") as big:
        big.truncate(64 << 30)  # 64 GiB, sparse: takes no space, but read it would
    (skill / "evals" / "evals.json").write_text(json.dumps({"skill_name": "odd-skill", "evals": [
        {"id": 1, "prompt": "Sum the invoice", "selftune_assertions": [{"type": "contains", "value": "done"}]}]}))
    (skill / "evals" / "routing.json").write_text(json.dumps([{"query": "sum this invoice", "should_trigger": True}]))
    (skill / "evals" / "tasks.json").write_text(json.dumps({"tasks": [
        {"id": "t1", "prompt": "p", "must_include": ["gamma"]}]}))
    (skill / "evals" / "examples" / "t1.md").write_text("gamma")
    return skill


def warned(text: str, skill: Path, names: tuple[str, ...]) -> list[str]:
    """The names among ``names`` that no ``warning:`` line of ``text`` names (so [] when all are named)."""
    lines = [line for line in text.splitlines() if line.startswith("warning: ")]
    return [name for name in names if not any(f"{skill / name}: " in line for line in lines)]


AGENT = ["--agent-cmd", f"{sys.executable} {FAKE_AGENT} --prompt-file {{prompt_file}}", "--agent-output", "events"]


def agent_env(log: Path) -> dict[str, str]:
    script = {"skill": "odd-skill", "skills_dir": ".agents/skills", "skilled_answer": "done", "log": str(log)}
    return {"FAKE_AGENT_JSON": json.dumps(script)}


def test_the_bundle_holds_the_regular_files_only(tmp_path: Path) -> None:
    skill = odd_skill(tmp_path)
    bundle = read_bundle(skill)
    assert sorted(bundle.files) == ["SKILL.md", "inside-link.md", "notes/inside.md", "references/guide.md"]
    assert bundle.files["inside-link.md"] == b"read through a link inside the skill"
    reasons = {Path(line.split(": ", 1)[0]).relative_to(skill).as_posix(): line for line in bundle.skipped}
    assert sorted(reasons) == sorted(ODD)
    assert "is a FIFO, not a regular file: skipped" in reasons["pipe"]
    assert "is a symbolic link out of the skill folder (to /dev/zero)" in reasons["zero"]
    assert f"is a symbolic link out of the skill folder (to {tmp_path / 'secret.txt'})" in reasons["outside.txt"]
    assert "is larger than 16 MiB (65536 MiB)" in reasons["big.bin"]
    assert "symbolic link to a folder" in reasons["linked-folder"]


def test_read_regular_refuses_what_is_no_regular_file_without_waiting(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(InputError, match="is a FIFO, not a regular file"):
        read_regular(tmp_path / "fifo")
    with pytest.raises(InputError, match="is a character device"):
        read_regular("/dev/zero")
    (tmp_path / "big").write_bytes(b"x" * (MAX_FILE_BYTES + 1))
    with pytest.raises(InputError, match="is larger than 16 MiB"):
        read_regular(tmp_path / "big")
    (tmp_path / "link").symlink_to(tmp_path / "big")
    with pytest.raises(InputError, match="symbolic link"):
        read_regular(tmp_path / "link", follow=False)
    assert read_regular(tmp_path / "big", limit=MAX_FILE_BYTES + 1) == b"x" * (MAX_FILE_BYTES + 1)


def test_paired_installs_only_the_regular_files_and_names_the_rest(tmp_path: Path) -> None:
    skill = odd_skill(tmp_path)
    log = tmp_path / "agent.jsonl"
    done = process("paired", "--skill-path", skill, *AGENT, "--no-compare", "--no-store", "--json",
                   cwd=tmp_path, env=agent_env(log), timeout=TIMEOUT)
    assert done.returncode in (0, 1), done.stderr
    assert warned(done.stderr, skill, ODD) == [], done.stderr
    bench = json.loads(done.stdout)
    assert bench["run_summary"]["with_skill"]["pass_rate"]["mean"] == 1.0  # the skill was installed and used
    runs = [json.loads(line) for line in log.read_text().splitlines()]
    assert sorted(r["skill_installed"] for r in runs) == [False, True]


def test_routing_finishes_and_names_what_it_skipped(tmp_path: Path) -> None:
    skill = odd_skill(tmp_path)
    done = process("routing", "--skill-path", skill, *AGENT, "--no-store", "--json", cwd=tmp_path,
                   env=agent_env(tmp_path / "agent.jsonl"), timeout=TIMEOUT)
    assert done.returncode == 0, done.stderr
    assert warned(done.stderr, skill, ODD) == [], done.stderr
    assert json.loads(done.stdout)["metrics"]["f1"] == 1.0


def test_the_agents_api_installs_a_folder_as_a_bundle(tmp_path: Path) -> None:
    skill = odd_skill(tmp_path)
    lister = ("import json, os, pathlib; root = pathlib.Path('.agents/skills/odd-skill'); "
              "print(json.dumps({'type': 'final', 'text': json.dumps(sorted("
              "p.relative_to(root).as_posix() for p in root.rglob('*') if not p.is_dir()))}))")
    agent = create_agent("command", command=[sys.executable, "-c", lister], output="events")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    result = asyncio.run(asyncio.wait_for(agent.run(AgentRequest("go", workspace, skills=[skill], timeout=30)),
                                          TIMEOUT))
    assert result.ok, result.error
    assert json.loads(result.response or "[]") == ["SKILL.md", "inside-link.md", "notes/inside.md",
                                                   "references/guide.md"]
    assert not any((workspace / ".agents" / "skills" / "odd-skill" / name).is_symlink() for name in ("inside-link.md",))
    assert warned("\n".join(f"warning: {w}" for w in result.warnings), skill, ODD) == []


def test_fixtures_finishes_and_names_what_it_skipped(tmp_path: Path) -> None:
    skill = odd_skill(tmp_path)
    done = process("fixtures", "--skills-dir", skill.parent, cwd=tmp_path, timeout=TIMEOUT)
    assert done.returncode == 0, done.stdout + done.stderr  # "gamma" is grounded in references/guide.md
    assert warned(done.stderr, skill, ("references/pipe", "references/zero")) == [], done.stderr


def test_validate_warns_of_each_entry_every_command_skips(tmp_path: Path) -> None:
    skill = odd_skill(tmp_path)
    done = process("validate", skill, "--json", cwd=tmp_path, timeout=TIMEOUT)
    assert done.returncode == 0, done.stdout + done.stderr  # warnings only
    problems = json.loads(done.stdout)["skills"][0]["problems"]
    named = {Path(p["file"]).relative_to(skill).as_posix(): p for p in problems}
    assert set(ODD) <= set(named), problems
    assert all(named[name]["level"] == "warning" and "every command skips it" in named[name]["message"]
               for name in ODD)


@pytest.mark.parametrize("odd", ["fifo", "dev-zero"])
@pytest.mark.parametrize("command", ["paired", "routing", "routing --static", "validate"])
def test_a_skill_md_that_is_no_regular_file_is_refused_in_one_line(odd: str, command: str, tmp_path: Path) -> None:
    skill = odd_skill(tmp_path)
    (skill / "SKILL.md").unlink()
    if odd == "fifo":
        os.mkfifo(skill / "SKILL.md")
    else:
        (skill / "SKILL.md").symlink_to("/dev/zero")
    args = [*command.split(), *([skill] if command == "validate" else ["--skill-path", skill])]
    if command in ("paired", "routing"):
        args += [*AGENT, "--no-store"]
    done = process(*args, cwd=tmp_path, env=agent_env(tmp_path / "agent.jsonl"), timeout=TIMEOUT)
    assert done.returncode in (1, 2), done.stdout + done.stderr  # validate: an invalid skill (1); the others: 2
    text = done.stdout + done.stderr
    assert "SKILL.md" in text and ("not a regular file" in text or "no SKILL.md" in text), text
