"""What the report's confidence interval costs: the bootstrap of the mean task score, per skill.

Scores with two values (pass/fail scorers) take the binomial shortcut; others resample directly.

    python bench/bootstrap_ci.py
"""

from __future__ import annotations

import random
import time

from eval_skills.stats import bootstrap_ci


def best_of(runs: int, scores: list[float]) -> float:
    best = float("inf")
    for _ in range(runs):
        started = time.perf_counter()
        bootstrap_ci(scores)
        best = min(best, time.perf_counter() - started)
    return best * 1000


def main() -> None:
    rng = random.Random(1)
    print(f"{'results':>8} {'pass/fail ms':>13} {'3 values ms':>12}")
    for n in (10, 100, 1000, 5000):
        binary = [float(rng.random() < 0.7) for _ in range(n)]
        three = [rng.choice((0.0, 0.5, 1.0)) for _ in range(n)]
        print(f"{n:>8} {best_of(5, binary):>13.2f} {best_of(3, three):>12.1f}")


if __name__ == "__main__":
    main()
