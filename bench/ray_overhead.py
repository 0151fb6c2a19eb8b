"""What the Ray executor costs beyond the agent, and how it scales with nodes.

1. Per run: N runs of a no-op agent program (``sh`` printing one ``final`` event, a ``command`` agent) with a
   skill and five fixture files, through the local executor and through the Ray executor on a local Ray of the
   same slots, in the same process. The difference in wall time, times the slots, over N is what each run costs
   beyond the agent on Ray: the spec and the output by value, a Ray task, the agent unpickled on the node.
2. Scaling: R runs of an agent that sleeps S seconds on a cluster of 1, 2 and 3 nodes (2 slots each), started on
   this machine one node at a time; the wall time against the ideal R x S / slots.

    python bench/ray_overhead.py              # N=200; R=300 runs of 2 s on 1, 2, 3 nodes (about 15 minutes)
    python bench/ray_overhead.py --quick      # N=60;  R=24 runs of 2 s

On one machine the "nodes" share its cores: with more slots than cores the agents (which sleep) still overlap,
but the harness's own work does not.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from eval_skills.agents import create_agent
from eval_skills.agents.bundle import read_bundle
from eval_skills.cluster import RayCluster
from eval_skills.paired.executor import RunSpec
from eval_skills.paired.local import LocalExecutor, thread_pool
from eval_skills.paired.ray_executor import RayExecutor

NOOP = "/bin/sh -c 'printf \"%s\\n\" \"{\\\"type\\\": \\\"final\\\", \\\"text\\\": \\\"done\\\"}\"'"
SLEEP = "/bin/sh -c 'sleep {seconds}; printf \"%s\\n\" \"{{\\\"type\\\": \\\"final\\\", \\\"text\\\": \\\"done\\\"}}\"'"


def specs(root: Path, count: int) -> list[RunSpec]:
    skill = root / "noop-skill"
    (skill / "references").mkdir(parents=True, exist_ok=True)
    (skill / "SKILL.md").write_text("---\nname: noop-skill\ndescription: Does nothing.\n---\nDo nothing.\n")
    (skill / "references" / "guide.md").write_text("guide\n" * 100)
    bundle = read_bundle(skill)
    files = {f"data/file-{k}.txt": (f"fixture {k}\n" * 50).encode() for k in range(5)}
    return [RunSpec(f"run-{i}", "do nothing", files, (bundle,), timeout=60) for i in range(count)]


async def drain(executor, items: list[RunSpec]) -> float:
    asyncio.get_running_loop().set_default_executor(thread_pool(4))
    started = time.perf_counter()
    statuses = [out.status async for out in executor.run(iter(items))]
    elapsed = time.perf_counter() - started
    bad = [s for s in statuses if s != "ok"]
    if bad or len(statuses) != len(items):
        sys.exit(f"runs failed: {len(bad)} of {len(statuses)}")
    return elapsed


def agent(command: str):
    return create_agent("command", command=command, output="events", skills_subdir=".agents/skills")


def per_run(root: Path, count: int) -> None:
    slots = 2
    items = specs(root, count)
    local = asyncio.run(drain(LocalExecutor(agent(NOOP), concurrency=slots), items))
    cluster = RayCluster(None, local_cpus=slots)
    try:
        executor = RayExecutor(agent(NOOP), cluster)
        asyncio.run(drain(executor, items[:slots * 4]))  # the workers started, the function exported
        remote = asyncio.run(drain(executor, items))
    finally:
        cluster.close()
    extra_ms = (remote - local) * slots / count * 1000
    print(f"per run ({count} runs of a no-op agent, {slots} slots): local {local / count * 1000:.1f} ms, "
          f"Ray {remote / count * 1000:.1f} ms of wall time a run; beyond the agent on Ray {extra_ms:+.1f} ms a run "
          f"(ratio {remote / local:.2f})")


def scaling(runs: int, seconds: float) -> None:
    from ray._private.services import get_node_ip_address
    from ray.cluster_utils import Cluster

    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    node = {"num_cpus": 2, "node_ip_address": get_node_ip_address(), "include_dashboard": False}
    temp = f"/tmp/ray-bench-{os.getpid()}"
    cluster = Cluster(initialize_head=True, head_node_args={**node, "temp_dir": temp})
    root = Path(tempfile.mkdtemp(prefix="eval-skills-bench-"))
    try:
        connected = RayCluster(cluster.address)
        items = specs(root, runs)
        sleeper = agent(SLEEP.format(seconds=seconds))
        print(f"scaling: {runs} runs of an agent sleeping {seconds:g} s, 2 slots a node")
        for nodes in (1, 2, 3):
            if nodes > 1:
                cluster.add_node(**node)
                cluster.wait_for_nodes()
                time.sleep(2)  # the node's resources reach the scheduler
            executor = RayExecutor(sleeper, connected)
            asyncio.run(drain(executor, items[:executor.slots]))  # its workers started
            wall = asyncio.run(drain(executor, items))
            ideal = runs * seconds / executor.slots
            print(f"  {nodes} node{'s' if nodes > 1 else ' '} ({executor.slots} slots): {wall:7.1f} s, ideal "
                  f"{ideal:6.1f} s, ratio {wall / ideal:.3f}")
        connected.close()
    finally:
        cluster.shutdown()
        shutil.rmtree(temp, ignore_errors=True)
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small sizes (a minute or two)")
    parser.add_argument("--n", type=int, default=None, help="runs of the per-run measurement")
    parser.add_argument("--runs", type=int, default=None, help="runs of the scaling measurement")
    parser.add_argument("--seconds", type=float, default=2.0, help="how long the scaling agent sleeps")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="eval-skills-bench-"))
    try:
        per_run(root, args.n or (60 if args.quick else 200))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    scaling(args.runs or (24 if args.quick else 300), args.seconds)


if __name__ == "__main__":
    main()
