"""Time ``eval-skills validate`` as a whole process on 1,000 skill folders.

    python bench/validate_scale.py [--skills 1000] [--repeat 5] [--keep DIR]

Generates a folder of skills, each with SKILL.md (every tenth with a key outside the specification),
evals/evals.json (three cases, one with a fixture file and one with assertion objects), evals/routing.json
and evals/fixtures/input.txt, then runs the installed ``eval-skills validate`` on it several times and prints the
best and median wall time, against a baseline measured in the same run: ``eval-skills --version`` (the
process start-up), and, when skills-ref is installed, its validator on the same folders in this process.
Target: under 2 s for 1,000 folders on a 2-core machine, start-up included.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def generate(root: Path, n: int) -> Path:
    skills = root / "skills"
    for i in range(n):
        name = f"skill-{i:04d}"
        folder = skills / name
        (folder / "evals" / "fixtures").mkdir(parents=True)
        extra = "argument-hint: <file>\n" if i % 10 == 0 else ""
        (folder / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: Handles task family {i}. Use it when the request names it.\n"
            f"license: MIT\nallowed-tools: Bash Read\nmetadata:\n  version: '1.{i}'\n{extra}---\n"
            f"# Skill {i}\n\n" + "Follow these steps carefully.\n" * 40, encoding="utf-8")
        (folder / "evals" / "fixtures" / "input.txt").write_text("a,b\n1,2\n", encoding="utf-8")
        cases = [{"id": 1, "prompt": f"Run task {i}", "files": ["evals/fixtures/input.txt"],
                  "assertions": ["It totals the column"]},
                 {"id": 2, "prompt": "Explain", "expectations": [{"id": "e1", "text": "It explains"}]},
                 {"id": 3, "prompt": "Nothing asserted"}]
        (folder / "evals" / "evals.json").write_text(json.dumps({"skill_name": name, "evals": cases}))
        (folder / "evals" / "routing.json").write_text(json.dumps(
            [{"query": f"do task {i}", "should_trigger": True}, {"query": "bake bread", "should_trigger": False}]))
    return skills


def timed(cmd: list[str], repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        done = subprocess.run(cmd, capture_output=True, text=True)
        times.append(time.perf_counter() - start)
        if done.returncode not in (0, 1):
            raise SystemExit(f"{' '.join(cmd)} exited {done.returncode}: {done.stderr}")
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--skills", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--keep", type=Path, default=None)
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="validate-scale-"))
    try:
        skills = generate(root, args.skills)
        exe = shutil.which("eval-skills") or sys.exit("eval-skills is not installed")
        startup = timed([exe, "--version"], args.repeat)
        run = timed([exe, "validate", str(skills)], args.repeat)
        strict = timed([exe, "validate", "--strict", str(skills)], args.repeat)
        print(f"{args.skills} skill folders")
        for label, times in (("eval-skills --version (start-up)", startup), ("validate", run),
                             ("validate --strict", strict)):
            print(f"  {label:34} best {min(times):.3f} s  median {statistics.median(times):.3f} s")
        print(f"  validate / start-up (best): {min(run) / min(startup):.1f}x")
        try:
            from skills_ref.validator import validate as reference
        except ImportError:
            print("  skills-ref not installed: no comparison")
        else:
            folders = sorted(p for p in skills.iterdir())
            start = time.perf_counter()
            for folder in folders:
                reference(folder)
            took = time.perf_counter() - start
            print(f"  skills-ref validate, in process (SKILL.md only): {took:.3f} s "
                  f"(validate process / skills-ref: {min(run) / took:.2f}x)")
        print(f"  target: validate under 2 s -> {'met' if min(run) < 2 else 'NOT met'}")
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
