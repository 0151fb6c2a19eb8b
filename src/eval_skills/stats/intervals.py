"""Intervals for a paired mean that stay valid with few cases: pure functions, seeded where random.

- :func:`sign_flip_interval`: the interval got by inverting the paired sign-flip test (the values ``d`` such that
  the test of ``deltas - d`` does not reject). Inverting the one-sided sign-flip test of the mean gives the order
  statistics of the means of the subsets of the values (Hartigan, 1969): each of the ``2^n`` gaps between the
  ``2^n - 1`` subset means holds the centre of a symmetric distribution with chance ``1 / 2^n``, so the interval
  from the ``k``-th smallest to the ``k``-th largest subset mean covers it with chance ``1 - 2k / 2^n``, exactly.
  Up to ``exact_max`` values every subset is enumerated; above, seeded random subsets stand in for them.
- :func:`clustered_standard_error`: the standard error of a mean of runs clustered by case (Miller, 2024,
  "Adding Error Bars to Evals", the clustered form of the central-limit standard error).
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

__all__ = ["clustered_standard_error", "sign_flip_interval", "smallest_level"]

EXACT_MAX = 16
RANDOM_SUBSETS = 9_999


def _subset_means_exact(values: Sequence[float]) -> list[float]:
    sums, sizes = [0.0], [0]
    for value in values:
        sums += [s + value for s in sums]
        sizes += [c + 1 for c in sizes]
    return sorted(s / c for s, c in zip(sums[1:], sizes[1:], strict=True))


def _subset_means_random(values: Sequence[float], count: int, rng: random.Random) -> list[float]:
    n = len(values)
    tables: list[list[float]] = []
    for start in range(0, n, 8):  # each block of 8 values: the sum of each of its 256 subsets
        block = values[start:start + 8]
        sums = [0.0] * (1 << len(block))
        for mask in range(1, len(sums)):
            low = (mask & -mask).bit_length() - 1
            sums[mask] = sums[mask & (mask - 1)] + block[low]
        tables.append(sums)
    means: list[float] = []
    while len(means) < count:
        bits = rng.getrandbits(n)
        size = bits.bit_count()
        if not size:
            continue
        total = 0.0
        for sums in tables:
            total += sums[bits & 0xFF]
            bits >>= 8
        means.append(total / size)
    return sorted(means)


def smallest_level(n: int) -> float:
    """The smallest two-sided miss rate (``1 - confidence``) an exact interval over ``n`` values can have."""
    return 2 / 2 ** n if n > 0 else 1.0


def sign_flip_interval(deltas: Sequence[float], *, level: float = 0.95, seed: int = 0, exact_max: int = EXACT_MAX,
                       subsets: int = RANDOM_SUBSETS, bounds: tuple[float, float] = (-1.0, 1.0)
                       ) -> tuple[float, float] | None:
    """The ``level`` interval of the centre of paired ``deltas`` (see the module doc), clipped to ``bounds``
    (the range the parameter can take: a pass-rate delta lies in [-1, 1]). When the values are too few for
    that level (fewer than ``log2(2 / (1 - level))``), the interval is the whole of ``bounds``. None without
    values."""
    n = len(deltas)
    if n == 0:
        return None
    alpha = 1 - level
    if n <= exact_max:
        means, slots = _subset_means_exact(deltas), 2 ** n
    else:
        means, slots = _subset_means_random(deltas, subsets, random.Random(seed)), subsets + 1
    k = math.floor(alpha / 2 * slots + 1e-9)
    if k < 1:
        return bounds
    low, high = means[k - 1], means[len(means) - k]
    return max(bounds[0], low), min(bounds[1], high)


def clustered_standard_error(clusters: Sequence[Sequence[float]]) -> float | None:
    """The standard error of the mean of every value, values clustered (by case):
    ``sqrt(sum over clusters of (sum of (x - mean))^2) / N``, N the number of values. With one value per cluster
    it is the usual ``sqrt(sum (x - mean)^2) / N``. None without values; 0 with one cluster's worth of
    identical values."""
    values = [x for cluster in clusters for x in cluster]
    n = len(values)
    if n == 0:
        return None
    mean = math.fsum(values) / n
    return math.sqrt(math.fsum(math.fsum(x - mean for x in c) ** 2 for c in clusters)) / n
