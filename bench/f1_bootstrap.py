"""What the held-out F1 intervals of ``routing --optimize`` cost: the exact stratified bootstrap against its seeded
Monte Carlo (4,000 resamples), measured in the same run on the same queries.

For held-out sets of ``n`` queries per class, two classifiers' predictions drawn at random (seeded), each interval
computed ``repeat`` times; the figure is the median time, and the ratio exact / Monte Carlo. The exact enumeration
is used up to 20,000 outcomes (:data:`eval_skills.stats.f1_bootstrap.EXACT_MAX`), so a ratio above 1 past that
size says the limit is where it should be.

    python bench/f1_bootstrap.py
    python bench/f1_bootstrap.py --repeat 5
"""

from __future__ import annotations

import argparse
import functools
import random
import statistics
import time
from collections.abc import Callable

from eval_skills.stats.f1_bootstrap import f1_difference_interval


def timed(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    rng = random.Random(0)
    print(f"{'per class':>9}  {'exact s':>8}  {'MC s':>7}  {'exact/MC':>8}")
    for n in (3, 5, 7, 9, 12):
        actual = [True] * n + [False] * n
        first = [rng.random() < 0.6 for _ in actual]
        second = [rng.random() < 0.6 for _ in actual]
        exact = timed(functools.partial(f1_difference_interval, actual, first, second, exact_max=10**9),
                      args.repeat)
        sampled = timed(functools.partial(f1_difference_interval, actual, first, second, exact_max=0), args.repeat)
        print(f"{n:>9}  {exact:>8.3f}  {sampled:>7.3f}  {exact / sampled:>8.2f}")


if __name__ == "__main__":
    main()
