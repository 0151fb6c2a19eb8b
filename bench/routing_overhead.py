"""What a routing test costs beyond the agent itself: per run, a fresh workspace, the skill and distractors
copied in, two snapshots, the transcript and result files, a store row.

    python bench/routing_overhead.py [--queries 200] [--distractors 2] [--repeat 3]

The agent is a tiny program that prints one ``skill`` event and a final answer (so the time is the harness
plus one interpreter start). It is run ``--queries`` times bare (spawned in a fresh temporary folder, one at a
time) and through :func:`eval_skills.routing.run_routing` at concurrency 1 and 4; the script prints the best
of ``--repeat`` for each and the overhead per run. Also times ``routing --static`` on 10,000 queries.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

AGENT = ("import json; print(json.dumps({'type': 'skill', 'skill': 'bench-skill'})); "
         "print(json.dumps({'type': 'final', 'text': 'done'}))")
BODY = "Step by step instructions for the skill.\n" * 200  # about 8 KB, like a real SKILL.md


def make_skill(folder: Path, description: str) -> Path:
    (folder / "references").mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\nname: {folder.name}\ndescription: {description}\n---\n{BODY}")
    (folder / "references" / "notes.md").write_text(BODY)
    return folder


def bare(n: int) -> float:
    started = time.perf_counter()
    for _ in range(n):
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run([sys.executable, "-c", AGENT], cwd=tmp, capture_output=True, check=True)
    return time.perf_counter() - started


def routed(root: Path, n: int, distractors: int, concurrency: int) -> float:
    from eval_skills.agents import create_agent
    from eval_skills.routing import RunSettings, load_plan, run_routing

    plan = load_plan(root / "bench-skill", distractors=[root / "others"] if distractors else [])
    agent = create_agent("command", command=[sys.executable, "-c", AGENT], output="events")
    started = time.perf_counter()
    outcome = asyncio.run(run_routing(plan, agent, RunSettings(concurrency=concurrency, timeout_s=60),
                                      workspace=root / "ws", store_path=root / "s.db"))
    elapsed = time.perf_counter() - started
    assert outcome.results.metadata["finished_runs"] == n and outcome.results.metrics.recall == 1.0
    return elapsed


def static(root: Path) -> float:
    from eval_skills.formats.agentskills import load_routing
    from eval_skills.routing import static_check

    queries = [{"query": f"please check invoice number {i} for wrong VAT and totals", "should_trigger": i % 2 == 0}
               for i in range(10_000)]
    path = root / "many.json"
    path.write_text(json.dumps(queries))
    started = time.perf_counter()
    static_check(root / "bench-skill", load_routing(path))
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--distractors", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        skill = make_skill(root / "bench-skill", "Checks invoices. Use when asked to check an invoice.")
        for d in range(args.distractors):
            make_skill(root / "others" / f"other-{d}", "Another skill.")
        (skill / "evals").mkdir()
        (skill / "evals" / "routing.json").write_text(json.dumps(
            [{"query": f"check invoice {i}", "should_trigger": True} for i in range(args.queries)]))
        n = args.queries
        base = min(bare(n) for _ in range(args.repeat))
        print(f"bare agent spawn, {n} runs: {base:.2f} s ({base / n * 1000:.1f} ms per run)")
        for concurrency in (1, 4):
            best = min(routed(root, n, args.distractors, concurrency) for _ in range(args.repeat))
            print(f"routing, concurrency {concurrency}, skill + {args.distractors} distractors: {best:.2f} s "
                  f"({best / n * 1000:.1f} ms per run; {(best - base) / n * 1000:+.1f} ms per run against bare)")
        print(f"routing --static, 10,000 queries: {min(static(root) for _ in range(args.repeat)):.2f} s")


if __name__ == "__main__":
    main()
