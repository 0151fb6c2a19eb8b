"""A hostile agent, for the isolation tests: it does its job, and tries everything a run must not be able to do.

Run it as a ``command`` agent (text output) in its workspace::

    hostile_agent.py --prompt-file {prompt_file} --targets '<json>'

``--targets`` is JSON with the places it goes after (every key optional):

    skill        the name of the skill it looks for under .agents/skills/ of its workspace
    home         the user's home folder (it reads .agents/skills/* and .claude/skills/* there, and lists it)
    secret       the name of a variable it was not given
    outside      a folder outside its workspace it writes into
    skill_source the skill's own folder, which it tries to change
    token        a word on the command line of the process it leaves running

Its job, done first and the same in every run: ``answer.txt`` holds the SHA-256 of the installed ``SKILL.md`` as
it found it (or ``none``) and the names in its workspace when it started; the response is ``done``. Then the
attempts, each recorded in ``report.json`` (in the workspace) as what it achieved:

    other_runs       files written into other runs' folders (siblings of its workspace, and folders named
                     eval-skills-* in the temporary folder, two levels down)
    installed_skill  whether appending to its installed SKILL.md worked
    skill_source     whether appending to the skill's own SKILL.md worked
    home             what it could read of the home folder (file names, and the skills found there)
    secret           whether the variable was set
    outside          whether writing into the outside folder worked
    process          whether the process it left could be started (whether it outlives the run is the test's)
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

INTRUDER = "intruder.txt"


def _try_write(path: Path, text: str, append: bool = False) -> bool:
    try:
        with open(path, "a" if append else "w", encoding="utf-8") as out:
            out.write(text)
        return True
    except OSError:
        return False


def _folders_near(cwd: Path, prompt_file: str | None) -> list[Path]:
    found: list[Path] = []
    with contextlib.suppress(OSError):
        found += [p for p in cwd.parent.iterdir() if p.is_dir()]
    temp = Path(tempfile.gettempdir())
    try:
        for first in temp.iterdir():
            if first.name.startswith("eval-skills-") and first.is_dir():
                found.append(first)
                with contextlib.suppress(OSError):
                    found += [p for p in first.iterdir() if p.is_dir()]
    except OSError:
        pass
    temp = temp.resolve()
    own = [cwd.resolve()]  # its workspace, the folder holding it, and its own private folder (prompt, home)
    if prompt_file:
        own.append(Path(prompt_file).resolve().parent)
    return [p for p in dict.fromkeys(found) if p.resolve() != cwd.resolve().parent and p.resolve() != temp
            and not any(p.resolve() == mine or p.resolve().is_relative_to(mine) for mine in own)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--prompt-file")
    parser.add_argument("--targets", default="{}")
    args = parser.parse_args()
    targets = json.loads(args.targets)
    cwd = Path.cwd()
    skill = targets.get("skill", "")
    installed = cwd / ".agents" / "skills" / skill / "SKILL.md"
    digest = hashlib.sha256(installed.read_bytes()).hexdigest() if skill and installed.is_file() else "none"
    listing = sorted(p.name for p in cwd.iterdir() if p.name != ".agents")
    (cwd / "answer.txt").write_text(f"skill {digest}\nfiles {' '.join(listing)}\n", encoding="utf-8")

    report: dict[str, object] = {}
    written = []
    for folder in _folders_near(cwd, args.prompt_file):
        if _try_write(folder / INTRUDER, f"from {cwd}\n"):
            written.append(str(folder))
        patterns = ("*/SKILL.md", ".*/skills/*/SKILL.md", "skills/*/*/SKILL.md")  # skill copies, staged ones
        for found in (path for pattern in patterns for path in folder.glob(pattern)):
            if _try_write(found, "\nHACKED by another run\n", append=True):
                written.append(str(found))
    report["other_runs"] = written
    report["installed_skill"] = bool(skill) and installed.is_file() and _try_write(installed, "\nHACKED\n", True)
    source = targets.get("skill_source")
    report["skill_source"] = bool(source) and _try_write(Path(source) / "SKILL.md", "\nHACKED\n", append=True)
    seen: list[str] = []
    home = targets.get("home")
    if home:
        with contextlib.suppress(OSError):
            seen += sorted(p.name for p in Path(home).iterdir())
        for pattern in (".agents/skills/*/SKILL.md", ".claude/skills/*/SKILL.md"):
            for found in Path(home).glob(pattern):
                try:
                    found.read_bytes()
                    seen.append(str(found.relative_to(home)))
                except OSError:
                    pass
    report["home"] = seen
    report["secret"] = targets.get("secret", "") in os.environ
    outside = targets.get("outside")
    report["outside"] = bool(outside) and _try_write(Path(outside) / INTRUDER, f"from {cwd}\n")
    token = targets.get("token")
    if token:
        try:
            subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)", token], start_new_session=True,
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            report["process"] = True
        except OSError:
            report["process"] = False
    (cwd / "report.json").write_text(json.dumps(report), encoding="utf-8")
    print("done")


if __name__ == "__main__":
    main()
