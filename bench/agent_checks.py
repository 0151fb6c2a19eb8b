"""What the checks on what the agent did cost, against the transcript check there was before them, in the same run.

One run as grading sees it: a transcript of N events (tool calls with their inputs and results, skill events,
messages), the agent having made 50 files of 2,000 bytes each.

- baseline: ``tool_called`` (the check on the transcript that existed before) eight times, on the run's tool calls;
- agent checks: tool_sequence (loose and strict), tool_args (JSONPath and regex), tool_count, skill_before,
  no_tool_errors, file_created and file_contains (a glob and a regex), the run's trace built first.

Each is timed as the median of repeats; the ratio is agent checks / baseline.

    python bench/agent_checks.py              # 2,000 events
    python bench/agent_checks.py --events 20000
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

from eval_skills.scoring.assertions import AgentFile, Check, CheckResult, Trace, check_from_mapping, run_check

BASELINE = [{"type": "tool_called", "value": "Write", "args": "report-48.md"}] * 8
AGENT_CHECKS = [
    {"type": "tool_sequence", "value": ["Skill", "Read", "Write"]},
    {"type": "tool_sequence", "value": ["Read", "Write"], "strict": True},
    {"type": "tool_args", "tool": "Write", "path": "$.file_path", "pattern": r"out/report-48\.md$"},
    {"type": "tool_count", "tool": "Bash", "min": 1, "max": 100_000},
    {"type": "skill_before", "tool": "Write", "skill": "invoice-check"},
    {"type": "no_tool_errors", "max": 100_000},
    {"type": "file_created", "path": "out/**/*.md"},
    {"type": "file_contains", "path": "out/*.md", "pattern": r"VAT checked: 49\b"},
]


def run_of(events: int) -> tuple[str, Trace]:
    answer = ("The total is 42 EUR; VAT amount 7 EUR. " * 2600)[:100_000]
    made: list[dict[str, object]] = [{"type": "tool_call", "id": "c0", "name": "Skill",
                                      "input": {"skill": "invoice-check"}, "result": "Launching skill"},
                                     {"type": "skill", "skill": "invoice-check", "tool_call_id": "c0"}]
    names = ("Read", "Bash", "Write", "Grep")
    for n in range(1, events - 1):
        name = names[n % 4]
        if n % 10 == 9:
            made.append({"type": "message", "role": "assistant", "text": f"step {n}"})
        else:
            made.append({"type": "tool_call", "id": f"c{n}", "name": name, "is_error": n % 97 == 0,
                         "input": {"file_path": f"/tmp/run/ws/out/report-{n % 50}.md", "content": "x" * 200},
                         "result": "ok " * 50})
    files = [AgentFile(f"out/report-{i}.md", "created", (f"VAT checked: {i}\n" + "y" * 1980).encode())
             for i in range(50)]
    return answer, Trace(events=made, files=files)


def agent_checks(checks: list[Check], answer: str, trace: Trace) -> list[CheckResult]:
    """The checks on one run, its trace built first (as grading builds it once per run: its tool calls found)."""
    built = Trace(events=trace.events, files=trace.files)
    return [run_check(c, answer, trace=built) for c in checks]


def timed(fn: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=21)
    args = parser.parse_args()
    answer, trace = run_of(args.events)
    on_calls = [check_from_mapping(s) for s in BASELINE]
    calls = [e for e in trace.events if e.get("type") == "tool_call"]
    on_agent = [check_from_mapping(s) for s in AGENT_CHECKS]
    assert all(run_check(c, answer, trace=trace).passed for c in on_agent)  # every check reads to its end
    base = timed(lambda: [run_check(c, answer, calls) for c in on_calls], args.repeats)
    agent = timed(lambda: agent_checks(on_agent, answer, trace), args.repeats)
    print(f"{args.events:,} events, 50 files (median of {args.repeats})")
    print(f"  tool_called x 8:    {base * 1000:8.2f} ms")
    print(f"  agent checks (8):   {agent * 1000:8.2f} ms   ratio {agent / base:.2f}")


if __name__ == "__main__":
    main()
