"""Intervals of an F1 score and of the difference of two F1 scores over the same queries: a stratified bootstrap
over the queries, exact where it can be enumerated, seeded Monte Carlo above. Pure functions.

The queries are resampled with replacement *within each class* (the positives among the positives, the negatives
among the negatives), so every resample has as many positives as the set itself (at least one: F1 is always
defined) and as many negatives: the split that chose them fixed those counts. The difference interval is paired:
both predictions are read on the same resampled queries.

A resample's F1 depends only on how many draws fell on each kind of query (a positive predicted positive by both,
by the first only, ...), so the bootstrap distribution is a product of two multinomials over at most 4 kinds.
When it has at most ``exact_max`` outcomes it is enumerated with its exact probabilities; above, ``resamples``
seeded draws stand in for it. The ``level`` interval is the percentile one: from the smallest value whose
cumulative probability reaches ``(1 - level) / 2`` to the smallest whose cumulative probability reaches
``1 - (1 - level) / 2``.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Callable, Iterator, Sequence

__all__ = ["EXACT_MAX", "f1_difference_interval", "f1_interval", "f1_of"]

EXACT_MAX = 20_000  # outcomes of the bootstrap distribution enumerated exactly
RESAMPLES = 4_000
_EPS = 1e-12
Kind = tuple[bool, ...]
Statistic = Callable[[dict[Kind, int], dict[Kind, int]], float]


def f1_of(tp: int, fp: int, fn: int) -> float | None:
    """``2 tp / (2 tp + fp + fn)``, None when the denominator is 0."""
    bottom = 2 * tp + fp + fn
    return 2 * tp / bottom if bottom else None


def _compositions(total: int, parts: int) -> Iterator[tuple[int, ...]]:
    """Every way of writing ``total`` as an ordered sum of ``parts`` counts >= 0."""
    if parts == 1:
        yield (total,)
        return
    for first in range(total + 1):
        for rest in _compositions(total - first, parts - 1):
            yield (first, *rest)


def _multinomial(counts: tuple[int, ...], probabilities: Sequence[float]) -> float:
    n = sum(counts)
    log = math.lgamma(n + 1)
    for k, p in zip(counts, probabilities, strict=True):
        if k:
            log += k * math.log(p) - math.lgamma(k + 1)
    return math.exp(log)


def _outcomes(kinds: Counter[tuple[bool, ...]]) -> int:
    n, m = sum(kinds.values()), len(kinds)
    return math.comb(n + m - 1, m - 1) if m else 1


def _distribution(positives: Counter[tuple[bool, ...]], negatives: Counter[tuple[bool, ...]], *, exact_max: int,
                  resamples: int, seed: int, value: Statistic) -> list[tuple[float, float]]:
    """``[(statistic, probability)]`` of the stratified bootstrap. ``value(pos_draws, neg_draws)`` maps the draws
    per kind (kind -> count) to the statistic."""
    fn = value
    pos_kinds, neg_kinds = sorted(positives), sorted(negatives)
    p, n = sum(positives.values()), sum(negatives.values())
    if _outcomes(positives) * _outcomes(negatives) <= exact_max:
        pos_p = [positives[k] / p for k in pos_kinds]
        neg_p = [negatives[k] / n for k in neg_kinds] if n else []
        out = []
        for pc in _compositions(p, len(pos_kinds)):
            wp = _multinomial(pc, pos_p)
            if wp == 0:
                continue
            for nc in _compositions(n, len(neg_kinds)) if neg_kinds else [()]:
                w = wp * (_multinomial(nc, neg_p) if neg_kinds else 1.0)
                if w:
                    out.append((fn(dict(zip(pos_kinds, pc, strict=True)),
                                   dict(zip(neg_kinds, nc, strict=True))), w))
        return out
    rng = random.Random(seed)
    pos_pool = [k for k in pos_kinds for _ in range(positives[k])]
    neg_pool = [k for k in neg_kinds for _ in range(negatives[k])]
    draws = []
    for _ in range(resamples):
        pd = Counter(rng.choices(pos_pool, k=p))
        nd = Counter(rng.choices(neg_pool, k=n)) if n else Counter()
        draws.append((fn(dict(pd), dict(nd)), 1.0 / resamples))
    return draws


def _percentiles(distribution: list[tuple[float, float]], level: float) -> tuple[float, float]:
    ordered = sorted(distribution)
    total = math.fsum(w for _, w in ordered)
    alpha = (1 - level) / 2
    low = high = ordered[-1][0]
    cumulative, low_found = 0.0, False
    for value, weight in ordered:
        cumulative += weight / total
        if not low_found and cumulative >= alpha - _EPS:
            low, low_found = value, True
        if cumulative >= 1 - alpha - _EPS:
            high = value
            break
    return round(low, 4), round(high, 4)


def _check(actual: Sequence[bool], *predictions: Sequence[bool]) -> None:
    for predicted in predictions:
        if len(predicted) != len(actual):
            raise ValueError(f"{len(actual)} labels but {len(predicted)} predictions")


def f1_interval(actual: Sequence[bool], predicted: Sequence[bool], *, level: float = 0.95, seed: int = 0,
                exact_max: int = EXACT_MAX, resamples: int = RESAMPLES) -> tuple[float, float] | None:
    """The ``level`` stratified-bootstrap interval of the F1 of ``predicted`` against ``actual`` (see the module
    doc); None without a positive."""
    _check(actual, predicted)
    positives: Counter[Kind] = Counter((bool(y),) for a, y in zip(actual, predicted, strict=True) if a)
    negatives: Counter[Kind] = Counter((bool(y),) for a, y in zip(actual, predicted, strict=True) if not a)
    if not positives:
        return None

    def value(pos: dict[tuple[bool, ...], int], neg: dict[tuple[bool, ...], int]) -> float:
        tp, fn, fp = pos.get((True,), 0), pos.get((False,), 0), neg.get((True,), 0)
        return f1_of(tp, fp, fn) or 0.0

    return _percentiles(_distribution(positives, negatives, exact_max=exact_max, resamples=resamples, seed=seed,
                                      value=value), level)


def f1_difference_interval(actual: Sequence[bool], first: Sequence[bool], second: Sequence[bool], *,
                           level: float = 0.95, seed: int = 0, exact_max: int = EXACT_MAX,
                           resamples: int = RESAMPLES) -> tuple[float, float] | None:
    """The ``level`` paired stratified-bootstrap interval of ``F1(first) - F1(second)`` on the same queries (see
    the module doc); None without a positive."""
    _check(actual, first, second)
    rows = list(zip(actual, first, second, strict=True))
    positives: Counter[Kind] = Counter((bool(a), bool(b)) for y, a, b in rows if y)
    negatives: Counter[Kind] = Counter((bool(a), bool(b)) for y, a, b in rows if not y)
    if not positives:
        return None

    def value(pos: dict[tuple[bool, ...], int], neg: dict[tuple[bool, ...], int]) -> float:
        result = 0.0
        for side, sign in ((0, 1.0), (1, -1.0)):
            tp = sum(c for k, c in pos.items() if k[side])
            fn = sum(c for k, c in pos.items() if not k[side])
            fp = sum(c for k, c in neg.items() if k[side])
            result += sign * (f1_of(tp, fp, fn) or 0.0)
        return result

    return _percentiles(_distribution(positives, negatives, exact_max=exact_max, resamples=resamples, seed=seed,
                                      value=value), level)
