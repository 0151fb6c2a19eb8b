"""How much the harness costs per task, against doing the same calls by hand.

Runs in one process:
  1. persistent subprocess adapter, N tasks of a trivial echo skill, contains scorer, store and reports on;
     also N/10 tasks, so the marginal cost per task (the slope) is separated from start-up;
  2. one-shot subprocess adapter, M tasks (a process per task), concurrency 1 and 4;
  3. baseline: a bare JSON-RPC loop over one pipe to the same skill (no asyncio, no scoring, no store);
  4. baseline: a bare spawn of the same interpreter per task (subprocess.run);
  5. MCP adapter (stdio), K tasks of an echo tool of an MCP server written with the SDK, against the persistent
     subprocess adapter on the same K tasks, and against a bare loop of the SDK's own ``call_tool``;
  6. custom adapter (an in-process Python function), N tasks and N/10 tasks (the marginal cost per task);
then prints ms per task, the ratios, the peak memory and the time of ``eval-skills --version``.

    python bench/harness_overhead.py            # N=5000, M=200, K=1000
    python bench/harness_overhead.py --n 1000 --m 50 --k 200
    python bench/harness_overhead.py --only mcp custom
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

from eval_skills.formats.benchmark import Benchmark
from eval_skills.formats.skill import load_skill
from eval_skills.tool_skills.evaluation import evaluate
from eval_skills.tool_skills.plan import build_plan
from eval_skills.tool_skills.runner import RunSettings

ECHO = """\
import json, sys
for line in sys.stdin:
    req = json.loads(line)
    reply = {"jsonrpc": "2.0", "id": req["id"], "result": {"result": req["params"]["text"]}}
    sys.stdout.write(json.dumps(reply) + "\\n")
    sys.stdout.flush()
"""


MCP_ECHO = """\
from mcp.server.mcpserver import MCPServer

server = MCPServer("echo")


@server.tool()
def echo(text: str) -> str:
    return text


if __name__ == "__main__":
    server.run()
"""

CUSTOM_ECHO = """\
def echo(data):
    return {"result": data["text"]}
"""


def make_mcp_skill(root: Path) -> Path:
    folder = root / "echo-mcp"
    folder.mkdir()
    (folder / "server.py").write_text(MCP_ECHO)
    (folder / "skill.json").write_text(json.dumps({
        "id": folder.name, "name": "Echo", "version": "1.0.0", "adapterType": "mcp",
        "entrypoint": "python3 server.py", "metadata": {"toolName": "echo"}}))
    return folder


def make_custom_skill(root: Path) -> Path:
    folder = root / "echo-custom"
    folder.mkdir()
    (folder / "echo.py").write_text(CUSTOM_ECHO)
    (folder / "skill.json").write_text(json.dumps({
        "id": folder.name, "name": "Echo", "version": "1.0.0", "adapterType": "custom", "entrypoint": "echo:echo"}))
    return folder


def bare_mcp_loop(skill_dir: Path, n: int) -> float:
    """The SDK alone: one stdio session, ``call_tool`` n times in a row (start-up not counted)."""
    from mcp import Client, StdioServerParameters

    async def main() -> float:
        params = StdioServerParameters(command=sys.executable, args=["server.py"], cwd=skill_dir)
        async with Client(params, cache=None) as client:
            started = time.perf_counter()
            for i in range(n):
                result = await client.call_tool("echo", {"text": f"hello {i}"})
                assert result.structured_content == {"result": f"hello {i}"}
            return time.perf_counter() - started

    return asyncio.run(main())


def make_skill(root: Path, persistent: bool) -> Path:
    folder = root / ("echo-persistent" if persistent else "echo-oneshot")
    folder.mkdir()
    (folder / "echo.py").write_text(ECHO)
    (folder / "skill.json").write_text(json.dumps({
        "id": folder.name, "name": "Echo", "version": "1.0.0", "adapterType": "subprocess",
        "entrypoint": "python3 echo.py"}))
    (folder / "adapter.config.json").write_text(json.dumps({"persistent": persistent}))
    return folder


ALL_FORMATS = ("json", "markdown", "html", "csv")


def make_benchmark(n: int, scorer: str = "contains") -> Benchmark:
    def expected(i: int) -> dict[str, object]:
        return {"keywords": [f"hello {i}"]} if scorer == "contains" else {"value": f"hello {i}"}

    return Benchmark.model_validate({"id": "echo", "tasks": [
        {"id": f"t{i}", "inputData": {"text": f"hello {i}"}, "expectedOutput": expected(i),
         "evaluator": {"type": scorer}} for i in range(n)]})


def run_harness(skill_dir: Path, n: int, work: Path, concurrency: int = 4, tag: str = "", scorer: str = "contains",
                formats: tuple[str, ...] = ALL_FORMATS, cpu: list[float] | None = None) -> float:
    """Seconds for an n-task evaluation, store and the report formats on (by default all four; each run a new
    store). ``cpu``, when given, gets the CPU seconds this process spent on the evaluation (all its threads; not
    the skill's)."""
    plan = build_plan([load_skill(skill_dir)], make_benchmark(n, scorer), runs=1, default_evaluator=scorer)
    out = Path(tempfile.mkdtemp(dir=work, prefix=f"run-{skill_dir.name}-{n}-{concurrency}{tag}-"))
    cpu_started, started = time.process_time(), time.perf_counter()
    outcome = asyncio.run(evaluate(plan, RunSettings(concurrency=concurrency), store_path=out / "store.db",
                                   output_dir=out, formats=formats))
    elapsed = time.perf_counter() - started
    if cpu is not None:
        cpu.append(time.process_time() - cpu_started)
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
    parser.add_argument("--n", type=int, default=5000, help="tasks through the persistent and custom adapters")
    parser.add_argument("--m", type=int, default=200, help="tasks through the one-shot adapter")
    parser.add_argument("--k", type=int, default=1000, help="tasks through the MCP adapter")
    parser.add_argument("--only", nargs="+", choices=["subprocess", "mcp", "custom"],
                        default=["subprocess", "mcp", "custom"], help="the sections to run")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        if "subprocess" in args.only:
            subprocess_section(work, args.n, args.m)
        if "mcp" in args.only:
            mcp_section(work, args.k)
        if "custom" in args.only:
            custom_section(work, args.n)
    if "subprocess" in args.only:
        print(f"eval-skills --version:                {version_time() * 1000:5.0f} ms (target < 300 ms)")


def per(total: float, count: int) -> float:
    return total / count * 1000


def show(rows: list[tuple[str, float]]) -> None:
    width = max(len(label) for label, _ in rows)
    print(f"{'what':<{width}}  ms/task")
    for label, value in rows:
        print(f"{label:<{width}}  {value:7.3f}")
    print()


def subprocess_section(work: Path, n: int, m: int) -> None:
    small = max(n // 10, 1)
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
    show([
        (f"persistent adapter, {n} tasks (store + 4 report formats)", per(t_big, n)),
        (f"persistent adapter, marginal per task ({small}->{n})", marginal_ms),
        (f"bare JSON-RPC pipe loop, {n} tasks", per(t_pipe, n)),
        (f"one-shot adapter, {m} tasks, concurrency 1", per(t_one_c1, m)),
        (f"one-shot adapter, {m} tasks, concurrency 4", per(t_one_c4, m)),
        (f"bare spawn per task, {m} tasks", per(t_spawn, m)),
    ])
    print(f"persistent / bare pipe loop:          {per(t_big, n) / per(t_pipe, n):5.2f}x  (target <= 3x)")
    print(f"persistent marginal per task:         {marginal_ms:5.3f} ms (target <= 0.3 ms)")
    print(f"one-shot (concurrency 1) / bare spawn: {t_one_c1 / t_spawn:5.2f}x  (target <= 1.2x)")
    print(f"one-shot (concurrency 4) / bare spawn: {t_one_c4 / t_spawn:5.2f}x")
    print(f"peak memory after {n} tasks:        {peak_mb:6.1f} MB (target < 150 MB)")


def mcp_section(work: Path, k: int) -> None:
    small = max(k // 10, 1)
    beside = work / "beside-mcp"
    beside.mkdir()
    mcp_skill, persistent = make_mcp_skill(work), make_skill(beside, True)
    t_mcp = best(run_harness, mcp_skill, k, work, repeat=3)
    t_mcp_small = best(run_harness, mcp_skill, small, work, repeat=3)
    t_persistent = best(run_harness, persistent, k, work, repeat=3)
    t_bare = best(bare_mcp_loop, mcp_skill, k, repeat=3)
    marginal = (t_mcp - t_mcp_small) / (k - small) * 1000
    show([
        (f"MCP adapter (stdio), {k} tasks, concurrency 4 (store + 4 report formats)", per(t_mcp, k)),
        (f"MCP adapter, marginal per task ({small}->{k})", marginal),
        (f"persistent subprocess adapter, the same {k} tasks", per(t_persistent, k)),
        (f"bare SDK loop: call_tool {k} times in a row, one session", per(t_bare, k)),
    ])
    print(f"MCP marginal / persistent subprocess per task: {marginal / per(t_persistent, k):5.1f}x")
    print(f"MCP marginal / bare SDK call_tool loop:        {marginal / per(t_bare, k):5.2f}x")
    print()


def custom_section(work: Path, n: int) -> None:
    small = max(n // 10, 1)
    beside = work / "beside-custom"
    beside.mkdir()
    skill, persistent = make_custom_skill(work), make_skill(beside, True)
    t_big = best(run_harness, skill, n, work, repeat=3)
    t_small = best(run_harness, skill, small, work, repeat=3)
    t_persistent = best(run_harness, persistent, n, work, repeat=3)
    t_persistent_small = best(run_harness, persistent, small, work, repeat=3)
    marginal = (t_big - t_small) / (n - small) * 1000
    marginal_persistent = (t_persistent - t_persistent_small) / (n - small) * 1000
    show([
        (f"custom adapter (in-process function), {n} tasks (store + 4 report formats)", per(t_big, n)),
        (f"custom adapter, marginal per task ({small}->{n})", marginal),
        (f"persistent subprocess adapter, the same {n} tasks", per(t_persistent, n)),
        (f"persistent subprocess adapter, marginal per task ({small}->{n})", marginal_persistent),
    ])
    print(f"custom marginal / persistent subprocess marginal: {marginal / marginal_persistent:5.2f}x")
    print()


if __name__ == "__main__":
    main()
