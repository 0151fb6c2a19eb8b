"""Time ``eval-skills fixtures --answers`` as a whole process on 200 skills x 50 tasks (10,000 answers).

    python bench/fixtures_scale.py [--skills 200] [--tasks 50] [--repeat 5] [--keep DIR]

Generates a skills folder (SKILL.md, evals/tasks.json, worked examples, rules, references) and an answers
folder (about 1 KB per answer; some answers fail a check, some are missing), then runs the installed
``eval-skills`` command several times per mode and prints the best and median wall time. Target: the
``--answers`` run under 2 s on a 2-core machine, Python start-up included.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FILLER = ("The answer explains the approach in a few paragraphs, shows the code and says why it is safe. "
          * 8)


def generate(root: Path, n_skills: int, n_tasks: int) -> tuple[Path, Path]:
    skills_dir, answers_dir = root / "skills", root / "answers"
    for s in range(n_skills):
        name = f"skill-{s:03d}"
        skill = skills_dir / name
        (skill / "evals" / "examples").mkdir(parents=True)
        (skill / "rules").mkdir()
        (skill / "references").mkdir()
        (answers_dir / name).mkdir(parents=True)
        tasks = []
        vocabulary = []
        for t in range(n_tasks):
            words = [f"api_{s}_{t}_{k}" for k in range(3)]
            vocabulary += words
            tasks.append({"id": f"task-{t:02d}", "prompt": f"Do task {t} of {name}.",
                          "must_include": words, "must_not_include": [f"forbidden_{t}"]})
            body = f"# Task {t}\n\n{FILLER}\n\nUse {' and '.join(words)}.\n"
            (skill / "evals" / "examples" / f"task-{t:02d}.md").write_text(body, encoding="utf-8")
            if (s + t) % 50 == 7:
                continue  # a missing answer
            answer = body if (s * 7 + t) % 10 else body.replace(words[0], "something_else")
            (answers_dir / name / f"task-{t:02d}.md").write_text(answer, encoding="utf-8")
        (skill / "evals" / "tasks.json").write_text(json.dumps(tasks, indent=2), encoding="utf-8")
        third = len(vocabulary) // 3
        (skill / "SKILL.md").write_text(f"---\nname: {name}\ndescription: Skill {s}.\n---\n\n"
                                        + " ".join(vocabulary[:third]) + "\n", encoding="utf-8")
        (skill / "rules" / "rule.md").write_text(" ".join(vocabulary[third:2 * third]), encoding="utf-8")
        (skill / "references" / "api.md").write_text(" ".join(vocabulary[2 * third:]), encoding="utf-8")
    return skills_dir, answers_dir


def command() -> list[str]:
    beside = Path(sys.executable).with_name("eval-skills")
    if beside.exists():
        return [str(beside)]
    found = shutil.which("eval-skills")
    if not found:
        sys.exit("eval-skills is not installed (pip install -e .)")
    return [found]


def timed(argv: list[str], repeat: int) -> tuple[list[float], int]:
    times, code = [], 0
    for _ in range(repeat):
        start = time.perf_counter()
        done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
        times.append(time.perf_counter() - start)
        code = done.returncode
        if code not in (0, 1):
            sys.exit(f"{' '.join(argv)} failed with exit {code}: {done.stderr.decode(errors='replace')}")
    return times, code


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skills", type=int, default=200)
    parser.add_argument("--tasks", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--keep", type=Path, help="generate into this folder and keep it")
    args = parser.parse_args()

    root = args.keep or Path(tempfile.mkdtemp(prefix="fixtures-bench-"))
    try:
        if args.keep and (root / "skills").exists():
            skills_dir, answers_dir = root / "skills", root / "answers"
        else:
            start = time.perf_counter()
            skills_dir, answers_dir = generate(root, args.skills, args.tasks)
            took = time.perf_counter() - start
            print(f"generated {args.skills} skills x {args.tasks} tasks in {took:.1f} s")
        base = [*command(), "fixtures", "--skills-dir", str(skills_dir)]
        runs = {
            "--answers (table)": [*base, "--answers", str(answers_dir)],
            "--answers --json": [*base, "--answers", str(answers_dir), "--json"],
            "worked examples + validation": base,
        }
        print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, {args.repeat} runs each")
        for label, argv in runs.items():
            times, code = timed(argv, args.repeat)
            best, median = min(times), statistics.median(times)
            print(f"{label:<30} best {best:.3f} s  median {median:.3f} s  exit {code}")
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
