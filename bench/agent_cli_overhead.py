"""What the harness costs per run of a real agent CLI (Claude Code, Codex, OpenCode), beyond the CLI's own time.

For each CLI installed (``npm ci`` at the repository root), against one scripted model server on 127.0.0.1 that
answers every agent turn with a short text (tests/fakes/model_server.py), in the same run, alternating:

- bare: the CLI started directly in a folder holding the skill where it discovers project skills, with the same
  command line and environment the harness gives it, in its own session as the harness starts it (in the
  caller's session the CLIs start seconds slower), its stdout read to the end;
- harness: the same CLI as an eval-skills agent (``create_agent(cli).run(...)``): a fresh workspace, the skill
  copied in, the workspace snapshotted before and after, the output parsed, the run's result built.

The harness's cost per run is the difference of the medians; the ratio is harness / bare. The CLIs' own
start-up varies by seconds from run to run, far more than the harness costs, so the wall times rarely resolve it.
The CPU time this process spends (``time.process_time``: every thread of it, none of its children) does: in a
bare run it is the scripted model server's alone, in a harness run the server's and the harness's, so the
difference of the medians is the CPU the harness spends per run, whatever the CLI's spread.

    python bench/agent_cli_overhead.py            # 6 runs of each kind per CLI
    python bench/agent_cli_overhead.py --quick    # 2 runs of each kind
    python bench/agent_cli_overhead.py --cli claude --n 10
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from agent_clis import CLIS, MODELS, cli_env, cli_path, missing  # noqa: E402
from fakes.model_server import Answer, ModelServer, tooled  # noqa: E402

from eval_skills.agents import AgentRequest, create_agent  # noqa: E402
from eval_skills.agents.preset import CliAgent  # noqa: E402

SKILL_MD = "---\nname: noop-skill\ndescription: Does nothing.\n---\nDo nothing.\n"
PROMPT = "Say done."


def bare(agent: CliAgent, folder: Path, env: dict[str, str]) -> tuple[float, float]:
    argv = [str(agent.bin), *agent.arguments(MODELS[agent.name], None, folder), *agent.last_args]
    cpu = time.process_time()
    started = time.perf_counter()
    subprocess.run(argv, cwd=folder, input=PROMPT.encode(), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                   env={**env, "PWD": str(folder)}, check=False, timeout=300, start_new_session=True)
    return time.perf_counter() - started, time.process_time() - cpu


def harnessed(agent: CliAgent, root: Path, skill: Path) -> tuple[float, float]:
    workspace = Path(tempfile.mkdtemp(prefix="ws-", dir=root))
    cpu = time.process_time()
    started = time.perf_counter()
    result = asyncio.run(agent.run(AgentRequest(PROMPT, workspace, [skill], timeout=300, model=MODELS[agent.name])))
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    shutil.rmtree(workspace, ignore_errors=True)
    if not result.ok:
        raise SystemExit(f"{agent.name}: the run failed: {result.error}")
    return elapsed, cpu


def measure(cli: str, n: int, root: Path) -> tuple[float, float, float]:
    """Median wall time of a bare run and of a harness run, and the harness's CPU per run (s)."""
    with ModelServer() as model:
        model.rule(tooled(), Answer("done"))
        env = {**os.environ, **cli_env(cli, model, root / f"home-{cli}")}
        os.environ.update(env)  # the agent passes the caller's environment on, as eval-skills does
        agent = create_agent(cli, bin=str(cli_path(cli)))
        assert isinstance(agent, CliAgent)
        skill = root / "noop-skill"
        skill.mkdir(exist_ok=True)
        (skill / "SKILL.md").write_text(SKILL_MD)
        folder = root / f"bare-{cli}"
        (folder / agent.skills_subdir / "noop-skill").mkdir(parents=True, exist_ok=True)
        (folder / agent.skills_subdir / "noop-skill" / "SKILL.md").write_text(SKILL_MD)
        harnessed(agent, root, skill)  # warm up: first starts set up the CLI's home
        bares, runs = [], []
        for _ in range(n):
            bares.append(bare(agent, folder, env))
            runs.append(harnessed(agent, root, skill))
    cpu = statistics.median(r[1] for r in runs) - statistics.median(b[1] for b in bares)
    return statistics.median(b[0] for b in bares), statistics.median(r[0] for r in runs), cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=6, help="runs of each kind per CLI")
    parser.add_argument("--quick", action="store_true", help="2 runs of each kind")
    parser.add_argument("--cli", action="append", choices=CLIS, help="only this CLI (repeat for several)")
    args = parser.parse_args()
    n = 2 if args.quick else args.n
    rows = []
    with tempfile.TemporaryDirectory(prefix="cli-overhead-") as tmp:
        for cli in args.cli or CLIS:
            reason = missing(cli)
            if reason:
                rows.append((cli, None, None, None, reason))
                continue
            bare_s, run_s, cpu_s = measure(cli, n, Path(tmp))
            rows.append((cli, bare_s, run_s, cpu_s, ""))
    print(f"{'CLI':<10}{'bare (s)':>10}{'harness (s)':>13}{'cost (s)':>10}{'ratio':>8}{'harness CPU (ms)':>18}"
          f"   median of {n} runs each")
    for cli, bare_s, run_s, cpu_s, reason in rows:
        if bare_s is None or run_s is None or cpu_s is None:
            print(f"{cli:<10}skipped: {reason}")
        else:
            print(f"{cli:<10}{bare_s:>10.2f}{run_s:>13.2f}{run_s - bare_s:>10.2f}{run_s / bare_s:>8.2f}"
                  f"{cpu_s * 1000:>18.1f}")


if __name__ == "__main__":
    main()
