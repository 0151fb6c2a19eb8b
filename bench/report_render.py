"""Time to render and to convert large reports in every format, and to diff two of them.

    python bench/report_render.py [TASKS]   (default 10000 task results over 4 skills)
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from eval_skills.reports import FORMATS, render
from eval_skills.reports.diff import diff_reports


def reports(total: int, seed: int) -> list[dict[str, object]]:
    rng = random.Random(seed)
    out = []
    for skill in range(4):
        tasks = []
        for i in range(total // 4):
            status = rng.choice(["pass", "pass", "pass", "fail", "error", "timeout"])
            tasks.append({"taskId": f"task-{i}", "skillId": f"skill-{skill}", "runId": 1, "status": status,
                          "score": 1.0 if status == "pass" else 0.0, "latencyMs": rng.uniform(1, 500),
                          "output": {"result": "x" * rng.randint(0, 400)}, "error": None, "scorerType": "exact",
                          "reason": "expected 42", "usage": None, "tags": [rng.choice(["math", "text", "io"])]})
        out.append({"skillId": f"skill-{skill}", "skillVersion": "1.0.0", "benchmarkId": "bench", "runs": 1,
                    "timestamp": "2026-01-01T00:00:00Z",
                    "summary": {"completionRate": 0.5, "partialScore": 0.5, "errorRate": 0.3, "compositeScore": 0.6},
                    "latency": {"p50Ms": 250, "p95Ms": 480, "p99Ms": 495}, "taskResults": tasks})
    return out


def best_of(n: int, fn) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(n):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    total = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    a, b = reports(total, 1), reports(total, 2)
    print(f"{total} task results over 4 skills")
    for fmt in FORMATS:
        seconds = best_of(3, lambda fmt=fmt: render(a, fmt))
        print(f"render {fmt:<8} {seconds * 1000:8.1f} ms  ({len(render(a, fmt)) / 1e6:.1f} MB)")
    print(f"diff           {best_of(3, lambda: diff_reports(a, b)) * 1000:8.1f} ms")
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "r.json"
        source.write_text(json.dumps(a))
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "eval_skills", "report", "convert", "--input", str(source), "--format",
                        "html"], check=True, capture_output=True)
        print(f"eval-skills report convert --format html, whole process: {time.perf_counter() - start:.2f} s")
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "eval_skills", "--version"], check=True, capture_output=True)
    print(f"eval-skills --version: {(time.perf_counter() - start) * 1000:.0f} ms")


if __name__ == "__main__":
    main()
