"""Time the review page's first view on a workspace of 200 cases x 2 arms x 3 runs.

    python bench/view_scale.py [--cases 200] [--runs 3] [--events 20] [--repeat 3] [--keep DIR]
                               [--routing-queries 100] [--routing-runs 3] [--routing-events 40]

Writes the workspace with the tests' generator (two iterations, so each run also shows the previous
iteration's response; 20 transcript events per run) and routing results of 100 queries x 3 runs, each run's
transcript 40 tool calls with 2 KB results (about the size of a real agent's). Then, ``--repeat`` times, it
starts a fresh ``eval-skills view WORKSPACE`` process and times over HTTP: the page (``/``), its script and
styles, and the first case's fragment, all cold; then the Benchmark and Routing tabs, one routing run's
transcript, and warm repeats. It also times ``--static`` on the same workspace. Target: the first view (page
+ assets + first case) answered in under one second on a 2-core machine.
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from review_data import make_workspace  # noqa: E402

from eval_skills.formats.routing_results import RoutingOverall, RoutingQueryResult, RoutingResults, RoutingRunRecord
from eval_skills.formats.workspace import FinalEvent, ToolCallEvent


def make_big_routing(workspace: Path, queries: int, runs: int, events: int) -> None:
    """``routing-2/`` (the one the page shows): ``queries`` x ``runs`` runs, ``events`` tool calls each."""
    folder = workspace / "routing-2"
    results = []
    for i in range(1, queries + 1):
        records = []
        for k in range(1, runs + 1):
            path = folder / f"query-{i}" / f"run-{k}" / "transcript.jsonl"
            path.parent.mkdir(parents=True, exist_ok=True)
            lines = [ToolCallEvent(id=f"c{e}", name="Bash", input={"command": f"grep -rn invoice src/{e}"},
                                   result=f"src/{e}/a.py: invoice total line\n" * 60).model_dump_json()
                     for e in range(events)]
            lines.append(FinalEvent(text=f"Answer to query {i}, run {k}.").model_dump_json())
            path.write_text("\n".join(lines) + "\n", encoding="utf-8")
            records.append(RoutingRunRecord(run=k, status="ok", triggered=k % 2 == 1, duration_s=3.2,
                                            skills_invoked=["bench-skill"] if k % 2 else [],
                                            transcript=path.relative_to(folder).as_posix()))
        triggers = sum(1 for r in records if r.triggered)
        results.append(RoutingQueryResult(index=i, query=f"Check invoice number {i}", should_trigger=i % 3 != 0,
                                          runs=runs, triggers=triggers, errors=0, trigger_rate=triggers / runs,
                                          passed=(triggers / runs >= 0.5) == (i % 3 != 0), run_results=records))
    overall = RoutingOverall(precision=0.5, recall=0.5, f1=0.5, accuracy=0.5, queries=queries)
    text = RoutingResults(metadata={"skill_name": "bench-skill", "runs": runs}, queries=results,
                          metrics=overall).model_dump_json(indent=2)
    (folder / "routing_results.json").write_text(text, encoding="utf-8")


def command() -> list[str]:
    beside = Path(sys.executable).with_name("eval-skills")
    return [str(beside)] if beside.exists() else [sys.executable, "-m", "eval_skills"]


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def timed(client: httpx.Client, path: str) -> tuple[float, int]:
    start = time.perf_counter()
    response = client.get(path)
    response.raise_for_status()
    return time.perf_counter() - start, len(response.content)


def one_process(workspace: Path, first_case: str) -> dict[str, float]:
    start = time.perf_counter()
    proc = subprocess.Popen([*command(), "view", str(workspace)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        found = re.search(r"http://\S+", proc.stdout.readline())
        assert found, "no address printed"
        out = {"startup": time.perf_counter() - start}
        with httpx.Client(base_url=found.group(0), timeout=30) as client:
            out["page"], out["page_bytes"] = timed(client, "/")
            assets = [timed(client, f"/assets/{name}")[0] for name in ("viewer.css", "highlight.css", "viewer.js")]
            out["assets"] = sum(assets)
            out["case"], out["case_bytes"] = timed(client, f"/api/case/{first_case}")
            out["first_view"] = out["page"] + out["assets"] + out["case"]
            out["benchmark"], out["benchmark_bytes"] = timed(client, "/api/tab/benchmark")
            out["routing"], out["routing_bytes"] = timed(client, "/api/tab/routing")
            out["routing_run"], out["routing_run_bytes"] = timed(client, "/api/detail/routing-run/1/1")
            out["page_warm"] = statistics.median(timed(client, "/")[0] for _ in range(5))
            out["case_warm"] = statistics.median(timed(client, f"/api/case/{n}")[0] for n in range(2, 12))
        out["rss_mb"] = peak_rss_mb(proc.pid)
        return out
    finally:
        proc.terminate()
        proc.wait(10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--events", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--routing-queries", type=int, default=100)
    parser.add_argument("--routing-runs", type=int, default=3)
    parser.add_argument("--routing-events", type=int, default=40)
    parser.add_argument("--keep", type=Path, default=None, help="write the workspace here and keep it")
    args = parser.parse_args()

    base = args.keep or Path(tempfile.mkdtemp(prefix="view-scale-"))
    workspace = base / "bench-skill-workspace"
    try:
        if not workspace.exists():
            start = time.perf_counter()
            make_workspace(workspace, cases=args.cases, runs=args.runs, iterations=2,
                           transcript_events=args.events)
            make_big_routing(workspace, args.routing_queries, args.routing_runs, args.routing_events)
            print(f"workspace: {args.cases} cases x 2 arms x {args.runs} runs, 2 iterations, routing "
                  f"{args.routing_queries} queries x {args.routing_runs} runs, "
                  f"written in {time.perf_counter() - start:.1f} s")
        results = [one_process(workspace, "1") for _ in range(args.repeat)]

        def show(key: str, label: str, unit: str = "ms") -> None:
            values = [r[key] for r in results]
            if unit == "ms":
                best, median = min(values) * 1000, statistics.median(values) * 1000
                print(f"  {label:<44} best {best:7.1f} ms   median {median:7.1f} ms")
            else:
                print(f"  {label:<44} {statistics.median(values):,.0f} {unit}")

        print(f"served ({args.repeat} fresh processes):")
        show("startup", "process start until the address is printed")
        show("page", "GET / (cold)")
        show("page_bytes", "  its size", "bytes")
        show("assets", "GET the script and two styles (cold)")
        show("case", "GET /api/case/1 (cold)")
        show("case_bytes", "  its size", "bytes")
        show("first_view", "first view: page + assets + first case")
        show("benchmark", "GET /api/tab/benchmark (on demand)")
        show("benchmark_bytes", "  its size", "bytes")
        show("routing", "GET /api/tab/routing (on demand)")
        show("routing_bytes", "  its size", "bytes")
        show("routing_run", "GET one routing run's transcript (unfolded)")
        show("routing_run_bytes", "  its size", "bytes")
        show("page_warm", "GET / (warm, median of 5)")
        show("case_warm", "GET /api/case/<n> (warm, median of 10 cases)")
        show("rss_mb", "server peak memory", "MB")

        out = base / "review.html"
        start = time.perf_counter()
        subprocess.run([*command(), "view", str(workspace), "--static", str(out)], check=True, capture_output=True)
        print(f"static: --static page written in {time.perf_counter() - start:.2f} s (whole process), "
              f"{out.stat().st_size / 1e6:.1f} MB")
    finally:
        if args.keep is None:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
