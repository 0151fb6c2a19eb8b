"""What writing an output as the text ``contains`` and ``regex`` search costs (JSON written as JavaScript
writes it: ``25.0`` is ``25``), against ``json.dumps`` of the same value.

    python bench/json_text.py
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable
from typing import Any

from eval_skills.scoring.json_text import as_text


def best_of(runs: int, work: Callable[[], Any]) -> float:
    best = float("inf")
    for _ in range(runs):
        started = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - started)
    return best * 1000


def main() -> None:
    rng = random.Random(1)
    rows = 50_000
    outputs = {
        "no floats": {"result": [{"id": i, "name": f"item {i}"} for i in range(rows)]},
        "floats": {"result": [{"id": i, "score": rng.random() + 0.001, "w": 2.0} for i in range(rows)]},
        "tiny floats": {"result": [{"id": i, "score": rng.random() * 1e-5} for i in range(rows)]},
    }
    print(f"{'output':<12} {'MB':>5} {'as_text ms':>11} {'json.dumps ms':>14}")
    for name, value in outputs.items():
        size = len(as_text(value)) / 1e6
        ours = best_of(3, lambda v=value: as_text(v))
        plain = best_of(3, lambda v=value: json.dumps(v, ensure_ascii=False, separators=(",", ":")))
        print(f"{name:<12} {size:>5.1f} {ours:>11.0f} {plain:>14.0f}")


if __name__ == "__main__":
    main()
