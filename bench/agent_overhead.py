"""What running an agent costs the harness, beyond the agent itself.

1. Per run: a no-op agent program (``sh`` printing one ``final`` event) run N times as a ``command`` agent with
   the ``events`` parser, each through the local executor as ``paired`` runs it (one slot: a fresh private
   folder, five fixture files written, one skill installed, the outputs collected, the folder removed) and
   recorded with ``paired``'s own ``write_run`` (outputs, ``transcript.jsonl``, raw stdout, ``timing.json``); against a
   bare spawn of the same program in an existing folder (its own session, stdout read, exit awaited). The
   difference per run is the harness's cost: workspace preparation, skill install, the snapshots that find
   changed files, parsing, recording.
2. Parsing: a synthetic 50 MB Claude Code stream-json transcript (tool calls with large results, split
   assistant messages, text) fed in 64 KiB chunks through the same path a run's stdout takes (raw output
   kept, lines split, the ``claude`` parser), in a fresh process: its time and the process's peak memory.

    python bench/agent_overhead.py              # N=500, 50 MB
    python bench/agent_overhead.py --n 100 --mb 10
    python bench/agent_overhead.py --n 200 --mb 1 --files 20   # an agent that writes 20 files a run
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from eval_skills.agents import create_agent
from eval_skills.agents.bundle import read_bundle
from eval_skills.paired import LocalExecutor
from eval_skills.paired.executor import RunSpec
from eval_skills.paired.record import write_run

NOOP = ["/bin/sh", "-c", "printf '%s\\n' '{\"type\": \"final\", \"text\": \"done\"}'"]
SKILL_MD = "---\nname: noop-skill\ndescription: Does nothing.\n---\nDo nothing.\n"


def agent_command(files: int = 0) -> list[str]:
    """The no-op agent; with ``files``, it first writes that many files of 10 KB (shell built-ins only)."""
    if not files:
        return NOOP
    writes = f"i=0; while [ $i -lt {files} ]; do printf '%10240s' '' > out-$i.txt; i=$((i+1)); done; "
    return [NOOP[0], NOOP[1], writes + NOOP[2]]


def make_skill(root: Path) -> Path:
    skill = root / "noop-skill"
    (skill / "references").mkdir(parents=True, exist_ok=True)
    (skill / "evals").mkdir(exist_ok=True)
    (skill / "SKILL.md").write_text(SKILL_MD)
    (skill / "references" / "guide.md").write_text("guide\n" * 100)
    (skill / "evals" / "evals.json").write_text('{"evals": []}')
    return skill


FIXTURES = {f"data/file-{k}.txt": f"fixture {k}\n".encode() * 50 for k in range(5)}


async def harness_runs(root: Path, n: int, files: int = 0) -> list[float]:
    """Each run as ``paired`` makes it: the local executor (one slot: a fresh private folder, the fixtures
    written, the skill installed, the agent run, its outputs collected, the folder removed),
    then the run's records (``write_run``: outputs, transcript, raw stdout, timing) before the next run
    starts. A run's time is from the end of the previous run's records to the end of its own."""
    agent = create_agent("command", command=agent_command(files), output="events")
    skill = read_bundle(make_skill(root))
    executor = LocalExecutor(agent, concurrency=1)  # its folders where paired makes them
    specs = (RunSpec(run_id=f"run-{i}", prompt="do nothing", files=FIXTURES, skills=(skill,), timeout=30)
             for i in range(n))
    times = []
    started = time.perf_counter()
    async for out in executor.run(specs):
        assert out.status == "ok" and out.response == "done" and len(out.files) == files, out.error
        write_run(root / "records" / out.run_id, out, case_key="1", arm="with_skill", number=1)
        times.append(time.perf_counter() - started)
        started = time.perf_counter()
    return times


async def bare_runs(root: Path, n: int, files: int = 0) -> list[float]:
    ws = root / "bare"
    ws.mkdir(exist_ok=True)
    times = []
    for _ in range(n):
        started = time.perf_counter()
        proc = await asyncio.create_subprocess_exec(*agent_command(files), cwd=ws, stdout=asyncio.subprocess.PIPE,
                                                    stdin=asyncio.subprocess.DEVNULL, start_new_session=True)
        out, _ = await proc.communicate()
        assert b"final" in out
        times.append(time.perf_counter() - started)
    return times


def make_transcript(path: Path, megabytes: int) -> int:
    """A Claude Code stream-json transcript of about ``megabytes`` MB; returns the number of lines."""
    lines = 0
    payload = "x" * 20_000
    with open(path, "w") as out:
        out.write(json.dumps({"type": "system", "subtype": "init", "model": "m", "tools": ["Read"]}) + "\n")
        i = 0
        while out.tell() < megabytes * 1_000_000:
            usage = {"input_tokens": 3, "cache_read_input_tokens": 1000, "output_tokens": 20}
            for block in ({"type": "text", "text": f"Step {i}: reading."},
                          {"type": "tool_use", "id": f"t{i}", "name": "Read", "input": {"file_path": f"/w/f{i}.txt"}}):
                out.write(json.dumps({"type": "assistant", "message": {"id": f"m{i}", "content": [block],
                                                                       "usage": usage}}) + "\n")
            out.write(json.dumps({"type": "user", "message": {"content": [
                {"type": "tool_result", "tool_use_id": f"t{i}", "content": payload}]}}) + "\n")
            lines += 3
            i += 1
        out.write(json.dumps({"type": "result", "subtype": "success", "is_error": False, "result": "done",
                              "usage": {"input_tokens": 1, "output_tokens": 1}, "total_cost_usd": 0.1}) + "\n")
    return lines + 2


PARSE = """
import resource, sys, time
from eval_skills.agents import ParseContext, RawOutput, create_parser
from eval_skills.agents.process import LineSplitter
path = sys.argv[1]
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
started = time.perf_counter()
parser = create_parser("claude", ParseContext((), ".claude/skills"))
raw, splitter = RawOutput(), LineSplitter(parser)
with open(path, "rb") as source:
    while chunk := source.read(1 << 16):
        raw.write(chunk)
        splitter.feed(chunk)
raw.close()
splitter.close()
out = parser.finish(raw)
elapsed = time.perf_counter() - started
assert out.response == "done", out.response
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(elapsed, before, peak, len(out.transcript))
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=500)
    parser.add_argument("--mb", type=int, default=50)
    parser.add_argument("--files", type=int, default=0, help="files of 10 KB the agent writes in each run [0]")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="agent-overhead-"))
    try:
        asyncio.run(bare_runs(root, 20, args.files))  # warm up
        bare = asyncio.run(bare_runs(root, args.n, args.files))
        harness = asyncio.run(harness_runs(root, args.n, args.files))
        b, h = statistics.median(bare) * 1000, statistics.median(harness) * 1000
        writes = f" writing {args.files} files of 10 KB" if args.files else ""
        print(f"{args.n} runs of a no-op agent{writes}, one skill installed, recorded:")
        print(f"  bare spawn      median {b:.2f} ms, mean {statistics.mean(bare) * 1000:.2f} ms")
        print(f"  through agents  median {h:.2f} ms, mean {statistics.mean(harness) * 1000:.2f} ms")
        print(f"  harness cost per run: median {h - b:.2f} ms, mean "
              f"{(statistics.mean(harness) - statistics.mean(bare)) * 1000:.2f} ms (target <= 20 ms)")

        transcript = root / "transcript.jsonl"
        lines = make_transcript(transcript, args.mb)
        size = transcript.stat().st_size
        done = subprocess.run([sys.executable, "-c", PARSE, str(transcript)], capture_output=True, text=True,
                              check=True)
        elapsed, before, peak, events = done.stdout.split()
        print(f"parsing a {size / 1e6:.0f} MB stream-json transcript ({lines} lines, {events} events), "
              f"fresh process: {float(elapsed):.2f} s (target < 2 s), peak memory {int(peak) / 1024:.0f} MB "
              f"(after imports {int(before) / 1024:.0f} MB; target < 200 MB)")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(f"(bench process peak memory {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB)")


if __name__ == "__main__":
    main()
