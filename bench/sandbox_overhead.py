"""What ``--sandbox bwrap`` costs per agent run, against no sandbox, in the same process and the same run.

A no-op agent program (``sh`` printing one ``final`` event) is run N times as a ``command`` agent with the
``events`` parser, each run in a fresh private folder with one skill written from its bundle, once per sandbox,
the two interleaved (so drift of a loaded machine hits both alike). The difference of the medians is the
sandbox's cost per run: the private home and ``/tmp`` made, bwrap's namespaces and mounts set up, its exit.
Target: under 50 ms per run.

    python bench/sandbox_overhead.py            # N=200
    python bench/sandbox_overhead.py --quick    # N=20
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from eval_skills.agents import AgentRequest, create_agent
from eval_skills.agents.bundle import read_bundle
from eval_skills.agents.workdir import RunFolders
from eval_skills.sandbox import create_sandbox

NOOP = ["/bin/sh", "-c", "printf '%s\\n' '{\"type\": \"final\", \"text\": \"done\"}'"]
SKILL_MD = "---\nname: noop-skill\ndescription: Does nothing.\n---\nDo nothing.\n"
TARGET_MS = 50.0


async def measure(n: int, skill: Path) -> dict[str, list[float]]:
    bundle = read_bundle(skill)
    agents = {}
    for kind in ("none", "bwrap"):
        agent = create_agent("command", command=NOOP, output="events")
        agent.use_sandbox(create_sandbox(kind))
        agent.check()
        agents[kind] = agent
    folders = RunFolders("bench")
    times: dict[str, list[float]] = {kind: [] for kind in agents}
    try:
        for _ in range(n):
            for kind, agent in agents.items():
                workspace = folders.new()
                started = time.perf_counter()
                result = await agent.run(AgentRequest("go", workspace, [bundle], timeout=30))
                times[kind].append((time.perf_counter() - started) * 1000)
                if not result.ok:
                    raise SystemExit(f"the {kind} run failed: {result.error}")
                shutil.rmtree(workspace)
    finally:
        folders.close()
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--quick", action="store_true", help="20 runs of each")
    args = parser.parse_args()
    n = 20 if args.quick else args.n
    if shutil.which("bwrap") is None:
        sys.exit("bwrap is not installed (apt-get install bubblewrap)")
    with tempfile.TemporaryDirectory() as tmp:
        skill = Path(tmp) / "noop-skill"
        skill.mkdir()
        (skill / "SKILL.md").write_text(SKILL_MD)
        times = asyncio.run(measure(n, skill))
    none, bwrap = statistics.median(times["none"]), statistics.median(times["bwrap"])
    print(f"runs of each: {n}")
    print(f"no sandbox:   median {none:7.2f} ms/run   p90 {statistics.quantiles(times['none'], n=10)[-1]:7.2f} ms")
    print(f"bwrap:        median {bwrap:7.2f} ms/run   p90 {statistics.quantiles(times['bwrap'], n=10)[-1]:7.2f} ms")
    cost = bwrap - none
    print(f"bwrap costs   {cost:7.2f} ms/run ({bwrap / none:.2f}x); target under {TARGET_MS:g} ms: "
          f"{'met' if cost < TARGET_MS else 'NOT met'}")


if __name__ == "__main__":
    main()
