"""How much the harness costs per task, against doing the same calls by hand.

Runs in one process:
  1. persistent subprocess adapter, N tasks of a trivial echo skill, contains scorer, store and reports on;
     also N/10 tasks, so the marginal cost per task (the slope) is separated from start-up;
  2. one-shot subprocess adapter, M tasks (a process per task), concurrency 1 and 4;
  3. baseline: a bare JSON-RPC loop over one pipe to the same skill (no asyncio, no scoring, no store);
  4. baseline: a bare spawn of the same interpreter per task (subprocess.run);
then prints ms per task, the ratios, the peak memory and the time of ``eval-skills --version``.

    python bench/harness_overhead.py            # N=5000, M=200
    python bench/harness_overhead.py --n 1000 --m 50
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from eval_skills.evaluation import evaluate
from eval_skills.formats.benchmark import Benchmark
from eval_skills.formats.skill import load_skill
from eval_skills.plan import build_plan
from eval_skills.runner import RunSettings

ECHO = """\
import json, sys
for line in sys.stdin:
    req = json.loads(line)
    reply = {"jsonrpc": "2.0", "id": req["id"], "result": {"result": req["params"]["text"]}}
    sys.stdout.write(json.dumps(reply) + "\\n")
    sys.stdout.flush()
"""


def make_skill(root: Path, persistent: bool) -> Path:
    folder = root / ("echo-persistent" if persistent else "echo-oneshot")
    folder.mkdir()
    (folder / "echo.py").write_text(ECHO)
    (folder / "skill.json").write_text(json.dumps({
        "id": folder.name, "name": "Echo", "version": "1.0.0", "adapterType": "subprocess",
        "entrypoint": "python3 echo.py"}))
    (folder / "adapter.config.json").write_text(json.dumps({"persistent": persistent}))
    return folder


def make_benchmark(n: int) -> Benchmark:
    return Benchmark.model_validate({"id": "echo", "tasks": [
        {"id": f"t{i}", "inputData": {"text": f"hello {i}"}, "expectedOutput": {"keywords": [f"hello {i}"]},
         "evaluator": {"type": "contains"}} for i in range(n)]})


def run_harness(skill_dir: Path, n: int, work: Path, concurrency: int = 4, tag: str = "") -> float:
    """Seconds for an n-task evaluation, store and all four report formats on (each run a new store)."""
    plan = build_plan([load_skill(skill_dir)], make_benchmark(n), runs=1, default_evaluator="contains")
    out = Path(tempfile.mkdtemp(dir=work, prefix=f"run-{skill_dir.name}-{n}-{concurrency}{tag}-"))
    started = time.perf_counter()
    outcome = asyncio.run(evaluate(plan, RunSettings(concurrency=concurrency), store_path=out / "store.db",
                                   output_dir=out, formats=("json", "markdown", "html", "csv")))
    elapsed = time.perf_counter() - started
    passed = sum(r.status == "pass" for r in outcome.results)
    if passed != n:
        raise SystemExit(f"harness run failed: {passed}/{n} passed")
    return elapsed


def bare_pipe_loop(skill_dir: Path, n: int) -> float:
    proc = subprocess.Popen([sys.executable, "echo.py"], cwd=skill_dir, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, bufsize=1)
    assert proc.stdin is not None and proc.stdout is not None
    started = time.perf_counter()
    for i in range(n):
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "invoke", "params": {"text": f"hello {i}"},
                                     "id": i + 1}) + "\n")
        proc.stdin.flush()
        reply = json.loads(proc.stdout.readline())
        assert reply["result"]["result"] == f"hello {i}"
    elapsed = time.perf_counter() - started
    proc.stdin.close()
    proc.wait()
    return elapsed


def bare_spawn(skill_dir: Path, m: int) -> float:
    started = time.perf_counter()
    for i in range(m):
        request = json.dumps({"jsonrpc": "2.0", "method": "invoke", "params": {"text": f"hello {i}"}, "id": 1})
        out = subprocess.run([sys.executable, "echo.py"], cwd=skill_dir, input=request + "\n",
                             capture_output=True, text=True, check=True)
        assert json.loads(out.stdout)["result"]["result"] == f"hello {i}"
    return time.perf_counter() - started


def version_time(runs: int = 7) -> float:
    exe = shutil.which("eval-skills") or str(Path(sys.executable).with_name("eval-skills"))
    best = float("inf")
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([exe, "--version"], check=True, capture_output=True)
        best = min(best, time.perf_counter() - started)
    return best


def best(fn, *args, repeat: int = 3) -> float:  # type: ignore[no-untyped-def]
    """The best of ``repeat`` runs: the least disturbed by whatever else the machine is doing."""
    return min(fn(*args) for _ in range(repeat))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=5000, help="tasks through the persistent adapter")
    parser.add_argument("--m", type=int, default=200, help="tasks through the one-shot adapter")
    args = parser.parse_args()
    n, m = args.n, args.m
    small = max(n // 10, 1)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        persistent, oneshot = make_skill(work, True), make_skill(work, False)

        t_big = run_harness(persistent, n, work, tag="a")
        peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        t_big = min(t_big, best(run_harness, persistent, n, work, repeat=2))
        t_small = best(run_harness, persistent, small, work)
        marginal_ms = (t_big - t_small) / (n - small) * 1000
        t_pipe = best(bare_pipe_loop, persistent, n)
        t_one_c1 = best(run_harness, oneshot, m, work, 1)
        t_one_c4 = best(run_harness, oneshot, m, work, 4)
        t_spawn = best(bare_spawn, oneshot, m)
    t_version = version_time()

    def per(total: float, count: int) -> float:
        return total / count * 1000

    rows = [
        (f"persistent adapter, {n} tasks (store + 4 report formats)", per(t_big, n)),
        (f"persistent adapter, marginal per task ({small}->{n})", marginal_ms),
        (f"bare JSON-RPC pipe loop, {n} tasks", per(t_pipe, n)),
        (f"one-shot adapter, {m} tasks, concurrency 1", per(t_one_c1, m)),
        (f"one-shot adapter, {m} tasks, concurrency 4", per(t_one_c4, m)),
        (f"bare spawn per task, {m} tasks", per(t_spawn, m)),
    ]
    width = max(len(label) for label, _ in rows)
    print(f"{'what':<{width}}  ms/task")
    for label, value in rows:
        print(f"{label:<{width}}  {value:7.3f}")
    print()
    print(f"persistent / bare pipe loop:          {per(t_big, n) / per(t_pipe, n):5.2f}x  (target <= 3x)")
    print(f"persistent marginal per task:         {marginal_ms:5.3f} ms (target <= 0.3 ms)")
    print(f"one-shot (concurrency 1) / bare spawn: {t_one_c1 / t_spawn:5.2f}x  (target <= 1.2x)")
    print(f"one-shot (concurrency 4) / bare spawn: {t_one_c4 / t_spawn:5.2f}x")
    print(f"peak memory after {n} tasks:        {peak_mb:6.1f} MB (target < 150 MB)")
    print(f"eval-skills --version:                {t_version * 1000:5.0f} ms (target < 300 ms)")


if __name__ == "__main__":
    main()
