"""What ``eval-skills regrade`` saves: grading saved runs again against running them again, and reusing verdicts.

Runs in one process, on one iteration of N cases x 2 arms x R runs made by ``run_paired`` (a no-op agent,
``/bin/echo``; a command judge that takes ``--judge-delay`` seconds per request, standing in for a model):
  1. the paired run itself (agents, grades, blind A/B);
  2. a regrade with another judge (every verdict asked again, no agent run);
  3. a regrade with one assertion added to every case (the same judge: only the new assertion is asked, the
     other verdicts reused);
  4. a regrade with that assertion removed again (every verdict reused: nothing asked);
and prints each wall time, its judge requests and verdicts asked, and the ratios to the paired run measured in
the same process.

    python bench/regrade_reuse.py                        # 50 cases x 2 arms x 2 runs, concurrency 8
    python bench/regrade_reuse.py --cases 20 --runs 1 --judge-delay 0.5
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from eval_skills.agents import create_agent
from eval_skills.judges import create_judge
from eval_skills.paired import LocalExecutor, PairedSettings, load_plan, run_paired, thread_pool
from eval_skills.paired.regrade import RegradeSettings, run_regrade

AGENT = ["/bin/echo", "The total is 42 EUR."]
JUDGE = r"""
import json, sys, time
request = json.loads(sys.stdin.read())
time.sleep({delay})
with open({log!r}, "a") as log:
    log.write(request["kind"] + "\n")
if request["kind"] == "grade":
    print(json.dumps({{"expectations": [{{"text": a, "passed": {passed}, "evidence": "bench"}}
                                       for a in request["assertions"]]}}))
else:
    print(json.dumps({{"winner": "TIE", "reasoning": "bench"}}))
"""


def make_skill(root: Path, cases: int) -> Path:
    skill = root / "regrade-skill"
    (skill / "evals").mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: regrade-skill\ndescription: A skill for the regrade bench.\n---\n")
    evals = [{"id": i, "prompt": f"Case {i}: total the invoice", "expected_output": "42 EUR",
              "assertions": ["It states the total.", "It names the currency."],
              "selftune_assertions": [{"type": "contains", "value": "42"}]} for i in range(1, cases + 1)]
    (skill / "evals" / "evals.json").write_text(json.dumps({"skill_name": "regrade-skill", "evals": evals}))
    return skill


def judge(root: Path, name: str, delay: float, passed: bool) -> Any:
    script = root / f"{name}.py"
    script.write_text(JUDGE.format(delay=delay, log=str(root / f"{name}.log"), passed=passed))
    return create_judge("command", command=[sys.executable, str(script)], timeout=60)


def requests(root: Path, name: str) -> int:
    path = root / f"{name}.log"
    return len(path.read_text().splitlines()) if path.exists() else 0


def measure(cases: int, runs: int, concurrency: int, delay: float) -> dict[str, Any]:
    root = Path(tempfile.mkdtemp(prefix="regrade-bench-"))
    try:
        skill = make_skill(root, cases)
        plan = load_plan(skill, runs=runs, seed=1)
        settings = PairedSettings(workspace=root / "ws", concurrency=concurrency, timeout=60,
                                  agent={"agent": "command"})
        first = judge(root, "first", delay, True)

        async def paired() -> Any:
            asyncio.get_running_loop().set_default_executor(thread_pool(concurrency))
            return await run_paired(plan, settings, executor=LocalExecutor(create_agent("command", command=AGENT),
                                                                           concurrency=concurrency),
                                    judge=first, store_path=None)

        started = time.perf_counter()
        asyncio.run(paired())
        out: dict[str, Any] = {"paired": (time.perf_counter() - started, requests(root, "first"), 2 * 2 * runs * cases)}
        other = judge(root, "other", delay, False)

        def again(name: str, change: Any = None) -> None:
            if change is not None:
                evals = json.loads((skill / "evals" / "evals.json").read_text())
                for case in evals["evals"]:
                    change(case["assertions"])
                (skill / "evals" / "evals.json").write_text(json.dumps(evals))
            before, started = requests(root, "other"), time.perf_counter()
            outcome = asyncio.run(run_regrade(RegradeSettings(root / "ws", concurrency=concurrency), judge=other))
            out[name] = (time.perf_counter() - started, requests(root, "other") - before, outcome.asked)

        again("another judge")
        again("one assertion added", lambda texts: texts.append("It is polite."))
        again("that one removed", lambda texts: texts.pop())
        return out
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=50)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--judge-delay", type=float, default=0.2)
    args = parser.parse_args()
    found = measure(args.cases, args.runs, args.concurrency, args.judge_delay)
    total = args.cases * 2 * args.runs
    base = found["paired"][0]
    print(f"{args.cases} cases x 2 arms x {args.runs} runs = {total} runs; judge {args.judge_delay:g} s per "
          f"request; concurrency {args.concurrency}")
    for name, (wall, calls, asked) in found.items():
        print(f"{name:<20} {wall:7.2f} s  {calls:5d} judge requests  {asked:5d} verdicts asked  "
              f"{wall / base:5.2f}x the paired run")


if __name__ == "__main__":
    main()
