"""Estimators shared by every kind of evaluation: pure functions of numbers, seeded where random.

- :func:`sample_summary`: ``{mean, stddev, min, max}`` with the sample standard deviation (n - 1; 0 for n = 1);
- :func:`pass_at_k_task` / :func:`pass_hat_k_task`: the unbiased pass@k ``1 - C(n-c, k) / C(n, k)`` and
  pass^k ``C(c, k) / C(n, k)`` of one task run ``n`` times with ``c`` passes;
- :func:`bootstrap_ci`: a percentile bootstrap interval of a mean, from a seeded random source (the same values
  always give the same interval), as the original eval-skills computes its report's interval;
- :func:`sign_flip_test`: the two-sided paired sign-flip permutation test with the mean as its statistic, exact up
  to 16 values and seeded Monte Carlo above; :func:`min_two_sided_p` is the smallest p-value it can give;
- :func:`wilson_interval`: the Wilson score interval of a proportion.
"""

from __future__ import annotations

import bisect
import itertools
import math
import operator
import random
import statistics
from collections.abc import Sequence

__all__ = ["bootstrap_ci", "min_two_sided_p", "pass_at_k_task", "pass_hat_k_task", "sample_summary",
           "sign_flip_test", "wilson_interval"]

CI_ITERATIONS = 1000
CI_LEVEL = 0.95
EXACT_MAX = 16
MONTE_CARLO_RESAMPLES = 100_000


def _r(value: float) -> float:
    return round(value, 4)


def sample_summary(values: Sequence[float]) -> dict[str, float | None]:
    """``{mean, stddev, min, max}`` rounded to 4 decimals; stddev is the sample one (n - 1), 0 when n = 1;
    every field is None when there are no values."""
    if not values:
        return {"mean": None, "stddev": None, "min": None, "max": None}
    # the arithmetic of skill-creator's aggregator (plain sums), so that a tie at the 4th decimal rounds the
    # same way in both and the two tools give the same figures for the same runs
    mean = sum(values) / len(values)
    stddev = math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1)) if len(values) > 1 else 0.0
    return {"mean": _r(mean), "stddev": _r(stddev), "min": _r(min(values)), "max": _r(max(values))}


def _check_counts(n: int, c: int, k: int) -> None:
    if not 0 <= c <= n or k < 1:
        raise ValueError(f"pass@k needs 0 <= c <= n and k >= 1 (n={n}, c={c}, k={k})")
    if n < k:
        raise ValueError(f"pass@{k} needs at least {k} runs, got {n}")


def pass_at_k_task(n: int, c: int, k: int) -> float:
    """The chance that at least one of ``k`` runs drawn without replacement from ``n`` (``c`` of them passing)
    passes: ``1 - C(n-c, k) / C(n, k)``. ValueError when ``n < k``."""
    _check_counts(n, c, k)
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k_task(n: int, c: int, k: int) -> float:
    """The chance that all ``k`` runs drawn without replacement from ``n`` pass: ``C(c, k) / C(n, k)``."""
    _check_counts(n, c, k)
    return math.comb(c, k) / math.comb(n, k)


def bootstrap_ci(values: Sequence[float], *, iterations: int = CI_ITERATIONS, level: float = CI_LEVEL,
                 seed: int = 0) -> dict[str, float] | None:
    """A percentile bootstrap interval of the mean: ``{lower, upper, mean, level}``, or None without values.

    ``iterations`` resamples with replacement; the bounds are the sorted resample means at
    ``floor(alpha/2 x iterations)`` and ``floor((1 - alpha/2) x iterations)``; ``mean`` is the mean of the
    resample means. The values are sorted and the source seeded, so the same values give the same interval."""
    if not values:
        return None
    means = sorted(_resample_means(sorted(values), iterations, random.Random(seed)))
    alpha = 1 - level
    lower = means[min(math.floor(alpha / 2 * iterations), iterations - 1)]
    upper = means[min(math.floor((1 - alpha / 2) * iterations), iterations - 1)]
    return {"lower": _r(lower), "upper": _r(upper), "mean": _r(math.fsum(means) / iterations), "level": level}


def _resample_means(population: list[float], iterations: int, rng: random.Random) -> list[float]:
    """The means of ``iterations`` resamples (with replacement, of the same size) of sorted ``population``.

    Scores with two values (pass/fail scorers) take a shortcut with the same distribution: a resample's
    mean depends only on how many draws took the higher value, a Binomial(n, p) count, drawn by inverting
    its cumulative distribution. That costs O(n + iterations log n) instead of O(n x iterations)."""
    n = len(population)
    low, high = population[0], population[-1]
    if low == high:
        return [low] * iterations
    highs = n - bisect.bisect_right(population, low)
    if population[n - highs] != high or population[n - highs - 1] != low:  # more than two values
        return [math.fsum(rng.choices(population, k=n)) / n for _ in range(iterations)]
    p = highs / n
    log_p, log_q, log_n = math.log(p), math.log1p(-p), math.lgamma(n + 1)
    cdf = list(itertools.accumulate(
        math.exp(log_n - math.lgamma(k + 1) - math.lgamma(n - k + 1) + k * log_p + (n - k) * log_q)
        for k in range(n + 1)))
    counts = (min(bisect.bisect_left(cdf, rng.random() * cdf[-1]), n) for _ in range(iterations))
    return [(low * (n - k) + high * k) / n for k in counts]


def sign_flip_test(deltas: Sequence[float], *, seed: int = 0, exact_max: int = EXACT_MAX,
                   resamples: int = MONTE_CARLO_RESAMPLES) -> float | None:
    """The two-sided p-value that the mean of paired ``deltas`` is 0, by flipping their signs.

    Up to ``exact_max`` values every one of the 2^n sign patterns is enumerated: p = the share of patterns whose
    |mean| is at least the observed |mean|. Above that, ``resamples`` random patterns from a seeded source give
    ``(hits + 1) / (resamples + 1)``. None without values."""
    n = len(deltas)
    if n == 0:
        return None
    observed = abs(math.fsum(deltas))
    tolerance = 1e-9 * max(1.0, observed)
    if n <= exact_max:
        hits = sum(1 for signs in itertools.product((1, -1), repeat=n)
                   if abs(math.fsum(s * d for s, d in zip(signs, deltas, strict=True))) >= observed - tolerance)
        return hits / 2 ** n
    # Monte Carlo: one random bit per value (set: its sign flipped). The deltas are cut into blocks of 8, and
    # each block's signed sum is looked up by its 8 bits, so a resample costs n/8 additions, not n.
    tables = []
    for start in range(0, n, 8):
        block = deltas[start:start + 8]
        table = [math.fsum(block)] * (1 << len(block))
        for mask in range(1, len(table)):
            low = (mask & -mask).bit_length() - 1
            table[mask] = table[mask & (mask - 1)] - 2 * block[low]
        tables.append(table)
    # The resamples are summed a block at a time across all of them (C loops over columns, not a Python loop per
    # resample): each resample's total is still its blocks' values added in block order, so the p-value is the
    # same to the last bit as adding them one resample at a time. The last block's table covers the bits left.
    rng = random.Random(seed)
    width = len(tables)
    patterns = b"".join(rng.getrandbits(n).to_bytes(width, "little") for _ in range(resamples))
    totals: list[float] = list(map(tables[0].__getitem__, patterns[0::width]))
    for column in range(1, width):
        totals = list(map(operator.add, totals, map(tables[column].__getitem__, patterns[column::width])))
    threshold = observed - tolerance
    hits = sum(1 for total in totals if abs(total) >= threshold)
    return (hits + 1) / (resamples + 1)


def min_two_sided_p(n: int) -> float:
    """The smallest p-value :func:`sign_flip_test` can give for ``n`` values (exactly): ``2 / 2^n``. Below 6
    values it is above 0.05, so no such test can reach significance at that level."""
    return 2 / 2 ** n if n > 0 else 1.0


def wilson_interval(successes: int, n: int, *, level: float = CI_LEVEL) -> tuple[float, float] | None:
    """The Wilson score interval ``(lower, upper)`` of ``successes / n``, rounded to 4 decimals; None for n = 0."""
    if n <= 0:
        return None
    if not 0 <= successes <= n:
        raise ValueError(f"successes must be between 0 and n (successes={successes}, n={n})")
    z = statistics.NormalDist().inv_cdf(1 - (1 - level) / 2)
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return _r(max(0.0, centre - half)), _r(min(1.0, centre + half))
