"""What ``eval-skills paired`` costs beyond the agents and the judge, at 200 cases x 2 arms x 3 runs.

Runs in one process:
  1. the paired pipeline (``run_paired`` with the local executor): a no-op agent (``/bin/echo``, a real process
     per run), a command judge (a shell one-liner answering every grade and compare request with a fixed
     verdict), two plain-language assertions and two SelfTune checks per case, the blind A/B on, the store on;
  2. a bare baseline: the same agent processes and judge processes started with asyncio at the same
     concurrency (agents in one pool, judge calls in another), and nothing else;
then prints the wall times, the harness's own CPU time (this process only: the agents and judges are
children), the bare baseline's parent's CPU and the programs' own (on a machine with few cores they compete with
the harness for them), the overhead per run, how long the first run waited and the peak memory.

    python bench/paired_scale.py                       # 200 cases x 2 arms x 3 runs, concurrency 8
    python bench/paired_scale.py --cases 50 --runs 2 --concurrency 4
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import shutil
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

from eval_skills.agents import create_agent
from eval_skills.judges import create_judge
from eval_skills.paired import LocalExecutor, PairedSettings, load_plan, run_paired, thread_pool
from eval_skills.paired.executor import RunOutput, RunSpec

VERDICT = json.dumps({"expectations": [{"text": "a", "passed": True, "evidence": "static"},
                                       {"text": "b", "passed": False, "evidence": "static"}],
                      "winner": "TIE", "reasoning": "static verdict"})
JUDGE = ["sh", "-c", 'cat > /dev/null; printf "%s" "$1"', "judge", VERDICT]
AGENT = ["/bin/echo", "The total is 42 EUR."]


def make_skill(root: Path, cases: int) -> Path:
    skill = root / "scale-skill"
    (skill / "evals" / "files").mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: scale-skill\ndescription: A skill for the scale bench.\n---\nBody.\n")
    (skill / "evals" / "files" / "input.txt").write_text("an input file\n" * 20)
    evals = [{"id": i, "prompt": f"Case {i}: total the invoice in input.txt", "expected_output": "42 EUR",
              "files": ["evals/files/input.txt"], "assertions": ["It states the total.", "It names the currency."],
              "selftune_assertions": [{"type": "contains", "value": "42"},
                                      {"type": "regex", "value": "\\d+ EUR"}]} for i in range(1, cases + 1)]
    (skill / "evals" / "evals.json").write_text(json.dumps({"skill_name": "scale-skill", "evals": evals}))
    return skill


async def bare(agents: int, judges: int, concurrency: int, request: bytes) -> float:
    """Start the same programs the same number of times, at the same concurrency, doing nothing else."""
    async def pool(count: int, argv: list[str], stdin: bytes | None) -> None:
        gate = asyncio.Semaphore(concurrency)

        async def one() -> None:
            async with gate:
                proc = await asyncio.create_subprocess_exec(
                    *argv, stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
                    stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
                await proc.communicate(stdin)

        await asyncio.gather(*(one() for _ in range(count)))

    started = time.perf_counter()
    await asyncio.gather(pool(agents, AGENT, None), pool(judges, JUDGE, request))
    return time.perf_counter() - started


class FirstStartExecutor(LocalExecutor):
    """The local executor, noting when it takes its first run (what a user waits for before anything runs)."""

    first: float | None = None

    async def run(self, specs: Iterator[RunSpec]) -> AsyncIterator[RunOutput]:
        def noted() -> Iterator[RunSpec]:
            for spec in specs:
                if self.first is None:
                    self.first = time.perf_counter()
                yield spec

        async for out in super().run(noted()):
            yield out


def cpu_seconds(who: int = resource.RUSAGE_SELF) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def measure(cases: int, runs: int, concurrency: int, keep_root: bool = False) -> dict[str, Any]:
    """One paired run and its bare baseline: wall times (s), this process's CPU, counts, peak memory."""
    root = Path(tempfile.mkdtemp(prefix="paired-scale-"))
    try:
        plan = load_plan(make_skill(root, cases), runs=runs, seed=1)
        agent = create_agent("command", command=AGENT)
        judge = create_judge("command", command=JUDGE, timeout=60)
        settings = PairedSettings(workspace=root / "ws", concurrency=concurrency, timeout=60,
                                  agent={"agent": "command"})
        executor = FirstStartExecutor(agent, concurrency=concurrency)
        cpu0, children0, started = cpu_seconds(), cpu_seconds(resource.RUSAGE_CHILDREN), time.perf_counter()

        async def paired() -> Any:
            asyncio.get_running_loop().set_default_executor(thread_pool(concurrency))
            return await run_paired(plan, settings, executor=executor, judge=judge, store_path=root / "s.db")

        outcome = asyncio.run(paired())
        wall, cpu = time.perf_counter() - started, cpu_seconds() - cpu0
        children1 = cpu_seconds(resource.RUSAGE_CHILDREN)
        bench = outcome.benchmark
        done = len(bench.runs)
        pairs = bench.comparison.model_extra.get("pairs", 0) if bench.comparison else 0
        request = json.dumps({"kind": "grade", "prompt": "p", "response": "r", "assertions": ["a", "b"]}).encode()
        bare_cpu0 = cpu_seconds()
        baseline = asyncio.run(bare(done, done + pairs, concurrency, request))
        bare_cpu = cpu_seconds() - bare_cpu0
        return {"runs": done, "pairs": pairs, "wall": wall, "bare": baseline, "cpu": cpu, "root": root,
                "bare_cpu": bare_cpu, "children_cpu": children1 - children0,
                "bare_children_cpu": cpu_seconds(resource.RUSAGE_CHILDREN) - children1,
                "first_start": (executor.first or started) - started,
                "agent_time": sum(r.result.time_seconds or 0 for r in bench.runs),
                "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                "files": sum(1 for _ in outcome.iteration.rglob("*"))}
    finally:
        if not keep_root:
            shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()
    m = measure(args.cases, args.runs, args.concurrency, keep_root=True)
    root = m["root"]
    try:
        runs, pairs, wall, baseline, cpu = m["runs"], m["pairs"], m["wall"], m["bare"], m["cpu"]
        print(f"{args.cases} cases x 2 arms x {args.runs} runs = {runs} agent runs, {runs} grades, {pairs} "
              f"comparisons; concurrency {args.concurrency}")
        print(f"paired pipeline wall time     {wall:8.2f} s  ({wall / runs * 1000:.1f} ms per run)")
        print(f"bare processes wall time      {baseline:8.2f} s  (the same agent and judge processes, nothing else)")
        print(f"harness beyond the processes  {wall - baseline:8.2f} s  ({(wall - baseline) / runs * 1000:.1f} ms "
              f"per run, {wall / baseline:.2f}x the bare wall time)")
        print(f"harness CPU (this process)    {cpu:8.2f} s  ({cpu / runs * 1000:.1f} ms per run)")
        print(f"bare processes' parent CPU    {m['bare_cpu']:8.2f} s  ({m['bare_cpu'] / runs * 1000:.1f} ms per run)")
        print(f"the programs' own CPU         {m['children_cpu']:8.2f} s  (agents and judges; bare: "
              f"{m['bare_children_cpu']:.2f} s): they share the cores with the harness")
        print(f"first run taken after         {m['first_start']:8.3f} s  (the start: checks, store, iteration folder)")
        print(f"agents' own time (summed)     {m['agent_time']:8.2f} s")
        print(f"peak memory                   {m['peak_mb']:8.1f} MB")
        print(f"iteration folder              {m['files']} files and folders")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
