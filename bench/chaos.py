"""A seeded run of many misbehaving skills through ``eval-skills eval``, checked end to end.

Each of S skills (one-shot or persistent, at random) gets the same T tasks; each task asks the skill for a
misbehaviour picked at random: crash, hang (with a grandchild), garbage, huge (50 MB on one line), deep
(nested 100,000 deep), surrogate (a lone surrogate), detach (a descendant in its own session holding stdout),
slowscore (a custom scorer that sleeps past its deadline), ok. The CLI runs in its own process, as a user
would run it; then this script checks that

- every planned (skill, task) has exactly one result in the store, in the JSON, CSV, HTML and JUnit reports,
  and every one that did not pass is in the Markdown report;
- each status is the one the misbehaviour must give (see ``EXPECTED``);
- no process the skills or scorers started is left (every pid they wrote down is gone, and nothing runs
  in the run's folder);

and prints the counts. Exit 1 if a check fails.

    python bench/chaos.py                      # seed 1, 8 skills x 40 tasks
    python bench/chaos.py --seed 7 --skills 12 --tasks 60
"""

from __future__ import annotations

import argparse
import collections
import csv
import io
import json
import os
import random
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SKILL = r'''
import json, os, subprocess, sys, time
PIDS = sys.argv[1]

def note(pid):
    with open(os.path.join(PIDS, str(pid)), "w"):
        pass

def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()

def handle(request):
    params, rid = request["params"], request["id"]
    do, marker = params["do"], params["marker"]
    if do == "crash":
        raise RuntimeError("crashed on purpose")
    if do == "hang":
        note(subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"]).pid)
        time.sleep(600)
    if do == "garbage":
        sys.stdout.write("garbage\n{not json\n\x00\xff\n")
        sys.stdout.flush()
        sys.exit(0)  # no reply, ever
    if do == "huge":
        sys.stdout.write("x" * (50 << 20) + "\n")
        sys.stdout.flush()
        return
    if do == "deep":
        sys.stdout.write('{"jsonrpc": "2.0", "id": %d, "result": %s%s}\n' % (rid, "[" * 100000, "]" * 100000))
        sys.stdout.flush()
        return
    if do == "detach":
        note(subprocess.Popen(["setsid", "sleep", "780"], stdin=subprocess.DEVNULL).pid)
        os._exit(0)
    text = marker + (" lone \ud800 surrogate" if do == "surrogate" else "")
    send({"jsonrpc": "2.0", "id": rid, "result": {"result": text}})

note(os.getpid())
for line in sys.stdin:
    if line.strip():
        handle(json.loads(line))
'''

SLOW_SCORER = """
import time
def score(output, expected, task):
    time.sleep(30)
    return True
"""

BEHAVIOURS = ["ok", "crash", "hang", "garbage", "huge", "deep", "surrogate", "detach", "slowscore"]
EXPECTED = {  # (behaviour, persistent) -> status
    ("ok", False): "pass", ("ok", True): "pass",
    ("crash", False): "error", ("crash", True): "error",
    ("hang", False): "timeout", ("hang", True): "timeout",
    ("garbage", False): "error", ("garbage", True): "error",  # log lines, then the end
    ("huge", False): "error", ("huge", True): "error",
    ("deep", False): "error", ("deep", True): "error",
    ("surrogate", False): "pass", ("surrogate", True): "pass",
    ("detach", False): "error", ("detach", True): "error",
    ("slowscore", False): "error", ("slowscore", True): "error",
}


def build(root: Path, rng: random.Random, skills: int, tasks: int) -> tuple[list[Path], dict[str, bool], list[dict]]:
    pids = root / "pids"
    pids.mkdir()
    folders, persistent = [], {}
    for i in range(skills):
        folder = root / f"skill-{i:02d}"
        folder.mkdir()
        (folder / "chaos.py").write_text(SKILL)
        mode = rng.random() < 0.5
        persistent[folder.name] = mode
        command = ["python3", "chaos.py", str(pids)]
        (folder / "skill.json").write_text(json.dumps({
            "id": folder.name, "name": f"Chaos {i}", "version": "1.0.0", "adapterType": "subprocess",
            "entrypoint": "python3 chaos.py"}))
        (folder / "adapter.config.json").write_text(json.dumps({"persistent": mode, "command": command[0],
                                                                "args": command[1:]}))
        folders.append(folder)
    (root / "slow_scorer.py").write_text(SLOW_SCORER)
    items = []
    for i in range(tasks):
        do = rng.choice(BEHAVIOURS)
        task = {"id": f"t{i:03d}-{do}", "inputData": {"do": do, "marker": f"marker-{i:03d}"},
                "expectedOutput": {"type": "contains", "keywords": [f"marker-{i:03d}"]}}
        if do == "slowscore":
            task["evaluator"] = {"type": "custom"}
            task["expectedOutput"] = {"customScorerPath": "slow_scorer.py"}
        items.append(task)
    (root / "tasks.json").write_text(json.dumps(items))
    return folders, persistent, items


def leftovers(root: Path) -> list[int]:
    """Processes still alive that the run started: pids written down, and anything running in ``root``."""
    alive = []
    for entry in (root / "pids").iterdir():
        pid = int(entry.name)
        try:
            with open(f"/proc/{pid}/stat") as handle:
                if handle.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X"):
                    alive.append(pid)
        except FileNotFoundError:
            continue
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit() and int(proc.name) not in alive:
            try:
                if os.readlink(proc / "cwd").startswith(str(root)):
                    alive.append(int(proc.name))
            except OSError:
                continue
    return alive


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--skills", type=int, default=8)
    parser.add_argument("--tasks", type=int, default=40)
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    problems: list[str] = []
    with tempfile.TemporaryDirectory(prefix="eval-skills-chaos-") as tmp:
        root = Path(tmp)
        folders, persistent, items = build(root, rng, args.skills, args.tasks)
        started = time.perf_counter()
        out = subprocess.run([sys.executable, "-m", "eval_skills", "eval", "--skills", *map(str, folders),
                              "--tasks", str(root / "tasks.json"), "--timeout", "5000", "--scorer-timeout", "500",
                              "--concurrency", str(args.concurrency),
                              "--format", "json", "markdown", "html", "csv", "junit",
                              "--output-dir", str(root / "reports"), "--store", str(root / "chaos.db")],
                             cwd=root, capture_output=True, text=True, timeout=1800)
        elapsed = time.perf_counter() - started
        if out.returncode != 0:
            problems.append(f"exit code {out.returncode}: {out.stderr.strip()[-500:]}")
        planned = {(folder.name, task["id"]) for folder in folders for task in items}
        behaviour = {task["id"]: task["inputData"]["do"] for task in items}

        with sqlite3.connect(root / "chaos.db") as db:
            rows = db.execute("select skill_id, task_id, status from task_results").fetchall()
        stored = collections.Counter((skill, task) for skill, task, _ in rows)
        if set(stored) != planned or any(count != 1 for count in stored.values()):
            problems.append(f"store: {len(rows)} rows for {len(planned)} planned items "
                            f"({sum(1 for c in stored.values() if c > 1)} duplicated, {len(planned - set(stored))} "
                            "missing)")
        counts: collections.Counter[str] = collections.Counter()
        for skill, task, status in rows:
            counts[status] += 1
            want = EXPECTED[(behaviour[task], persistent[skill])]
            if status != want:
                problems.append(f"{skill} {task} ({'persistent' if persistent[skill] else 'one-shot'}): "
                                f"{status}, expected {want}")

        reports = root / "reports"
        (json_file,) = reports.glob("*.json")
        in_json = collections.Counter((r["skillId"], t["taskId"]) for r in json.loads(json_file.read_text())
                                      for t in r["taskResults"])
        (csv_file,) = reports.glob("*.csv")
        in_csv = collections.Counter((row["skillId"], row["taskId"])
                                     for row in csv.DictReader(io.StringIO(csv_file.read_text(encoding="utf-8"))))
        (html_file,) = reports.glob("*.html")
        html_rows = html_file.read_text(encoding="utf-8").count('<tr class="')
        (xml_file,) = reports.glob("*.xml")
        junit_cases = xml_file.read_text(encoding="utf-8").count("<testcase ")
        if junit_cases != len(planned):
            problems.append(f"JUnit report: {junit_cases} test cases for {len(planned)} planned items")
        (md_file,) = reports.glob("*.md")
        markdown = md_file.read_text(encoding="utf-8")
        for name, found in (("JSON", in_json), ("CSV", in_csv)):
            if set(found) != planned or any(count != 1 for count in found.values()):
                problems.append(f"{name} report: {sum(found.values())} results for {len(planned)} planned items")
        if html_rows != len(planned):
            problems.append(f"HTML report: {html_rows} task rows for {len(planned)} planned items")
        missing_md = [task for _, task, status in rows if status != "pass" and f"| {task} |" not in markdown]
        if missing_md:
            problems.append(f"Markdown report: {len(missing_md)} tasks that did not pass are missing")
        surrogates = sum(1 for t in json.loads(json_file.read_text())[0]["taskResults"] if "\ufffd" in json.dumps(
            t["output"], ensure_ascii=False))
        time.sleep(0.5)
        left = leftovers(root)
        if left:
            problems.append(f"{len(left)} processes left: {left[:10]}")

    kinds = collections.Counter(behaviour.values())
    print(f"chaos: seed {args.seed}, {args.skills} skills ({sum(persistent.values())} persistent) x {args.tasks} "
          f"tasks = {len(planned)} items, concurrency {args.concurrency}")
    print("misbehaviours per skill: " + ", ".join(f"{k} {kinds[k]}" for k in BEHAVIOURS))
    statuses = ", ".join(f"{k} {counts[k]}" for k in ("pass", "fail", "error", "timeout"))
    print(f"results: {len(rows)} in the store, {sum(in_json.values())} JSON, {sum(in_csv.values())} CSV, "
          f"{html_rows} HTML rows, {junit_cases} JUnit test cases; statuses {statuses}")
    print(f"surrogates shown as U+FFFD in the first skill's outputs: {surrogates}; processes left: {len(left)}")
    print(f"wall time {elapsed:.1f} s (exit code {out.returncode})")
    for problem in problems[:20]:
        print(f"PROBLEM: {problem}")
    print("OK" if not problems else f"{len(problems)} problems")
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main())
