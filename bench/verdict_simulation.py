"""How often the paired verdict is wrong, checked by simulating iterations from known truths.

Each simulated iteration has ``cases`` cases; case i has a baseline pass probability drawn around 0.6 and a
true lift drawn from Normal(lift, spread) (clipped so both probabilities stay in [0, 1]); each arm runs ``runs``
times, each run passing with its probability. The product's own functions then give the interval
(``eval_skills.stats.intervals.sign_flip_interval``), the plan (``eval_skills.stats.design``) and the adaptive
looks (``eval_skills.stats.sequential``), exactly as ``paired`` applies them. Reported, per design:

- false positives: the share of iterations with no true lift whose verdict says "raises" or "lowers"
  (fixed design, and adaptive with one look per round);
- coverage: the share of 95% intervals holding the mean of the true per-case lifts;
- power: the predicted chance of detecting the lift (normal approximation from the true variances) against
  the achieved share;
- runs saved by ``--adaptive`` when the lift is large.

Monte Carlo error: with T trials a rate near 0.05 is known to about +-2 sqrt(0.05 x 0.95 / T).

    python bench/verdict_simulation.py            # 400 trials per cell
    python bench/verdict_simulation.py --quick    # 100 trials per cell
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import time

from eval_skills.stats.design import z_total
from eval_skills.stats.intervals import sign_flip_interval
from eval_skills.stats.sequential import look_levels, stop_reason

BASE = 0.6


def _case(rng: random.Random, lift: float, spread: float) -> tuple[float, float]:
    base = min(max(rng.gauss(BASE, 0.15), 0.02), 0.98)
    skilled = min(max(base + rng.gauss(lift, spread), 0.0), 1.0)
    return skilled, base


def _runs(rng: random.Random, p: float, runs: int) -> list[int]:
    return [int(rng.random() < p) for _ in range(runs)]


def _iteration(rng: random.Random, cases: int, runs: int, lift: float, spread: float):
    truths = [_case(rng, lift, spread) for _ in range(cases)]
    outcomes = [(_runs(rng, w, runs), _runs(rng, b, runs)) for w, b in truths]
    true_mean = math.fsum(w - b for w, b in truths) / cases
    return outcomes, true_mean


def _deltas(outcomes, upto: int) -> list[float]:
    return [sum(w[:upto]) / upto - sum(b[:upto]) / upto for w, b in outcomes]


def _verdict(low: float, high: float) -> bool:
    return low > 0 or high < 0


def _adaptive(outcomes, runs: int, seed: int, target: float | None) -> tuple[tuple[float, float], int]:
    levels = look_levels(runs)
    interval = (-1.0, 1.0)
    for k in range(1, runs + 1):
        got = sign_flip_interval(_deltas(outcomes, k), level=1 - levels[k - 1], seed=seed)
        assert got is not None
        interval = got
        if stop_reason(*interval, target) is not None:
            return interval, k
    return interval, runs


def predicted_power(cases: int, runs: int, lift: float, spread: float) -> float:
    within = 2 * BASE * (1 - BASE)  # one run's variance, both arms, at the base rate
    se = math.sqrt((spread ** 2 + within / runs) / cases)
    normal = statistics.NormalDist()
    return 1 - normal.cdf(normal.inv_cdf(0.975) - lift / se)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--trials", type=int, default=None)
    args = parser.parse_args()
    trials = args.trials or (100 if args.quick else 400)
    designs = [(6, 3), (12, 3), (30, 3), (12, 1), (12, 10), (30, 10)] if not args.quick else [(6, 3), (12, 3),
                                                                                               (30, 3)]
    moe = 2 * math.sqrt(0.05 * 0.95 / trials)
    print(f"{trials} trials per cell; a rate near 0.05 is known to +-{moe:.3f}; z total {z_total():.4f}")
    header = (f"{'cases':>5} {'runs':>4} | {'FP fixed':>8} {'FP adapt':>8} | {'coverage':>8} | "
              f"{'power pred':>10} {'achieved':>8} | {'runs saved (lift 0.5)':>21} | {'s':>5}")
    print(header)
    print("-" * len(header))
    for cases, runs in designs:
        started = time.perf_counter()
        rng = random.Random(f"{cases}:{runs}")
        fp_fixed = fp_adaptive = covered = detected = 0
        saved = 0.0
        for t in range(trials):
            null, _ = _iteration(rng, cases, runs, 0.0, 0.0)
            low, high = sign_flip_interval(_deltas(null, runs), seed=t) or (-1.0, 1.0)
            fp_fixed += _verdict(low, high)
            if runs > 1:
                interval, _ = _adaptive(null, runs, t, None)
                fp_adaptive += _verdict(*interval)
            lifted, truth = _iteration(rng, cases, runs, 0.15, 0.15)
            low, high = sign_flip_interval(_deltas(lifted, runs), seed=t) or (-1.0, 1.0)
            covered += low <= truth <= high
            detected += low > 0
            if runs > 1:
                large, _ = _iteration(rng, cases, runs, 0.5, 0.1)
                _, used = _adaptive(large, runs, t, None)
                saved += (runs - used) / runs
        adaptive = f"{fp_adaptive / trials:>8.3f}" if runs > 1 else f"{'n/a':>8}"
        saving = f"{saved / trials:>20.0%} " if runs > 1 else f"{'n/a':>21}"
        print(f"{cases:>5} {runs:>4} | {fp_fixed / trials:>8.3f} {adaptive} | {covered / trials:>8.3f} | "
              f"{predicted_power(cases, runs, 0.15, 0.15):>10.3f} {detected / trials:>8.3f} | {saving} | "
              f"{time.perf_counter() - started:>5.1f}")


if __name__ == "__main__":
    main()
