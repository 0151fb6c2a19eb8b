"""Stopping a paired design early without breaking its error rate: pure functions.

The runs come in rounds (run 1 of every case and arm, then run 2, ...). After round ``k`` of at most ``K`` the
interval of the delta is computed at the level ``1 - alpha_k``, where ``alpha_k`` is what a Lan-DeMets
spending function of the Pocock type, ``alpha * ln(1 + (e - 1) t)``, spends between ``t = (k - 1) / K`` and
``t = k / K``. The ``alpha_k`` add up to ``alpha``, so by the union bound every interval of every round covers
the true delta at once with chance at least ``1 - alpha``, however the rounds depend on each other and whenever
the design stops: a verdict read at the round it stopped keeps its error rate. Pocock's shape spends early,
which is what lets a large lift stop after few rounds; the price is a wider interval at the last round than a
fixed design of ``K`` rounds would give.
"""

from __future__ import annotations

import math

__all__ = ["look_levels", "spent", "stop_reason"]


def spent(t: float, alpha: float = 0.05) -> float:
    """The error rate spent by information fraction ``t`` (0 to 1)."""
    if not 0 <= t <= 1:
        raise ValueError("the information fraction lies between 0 and 1")
    return alpha * math.log(1 + (math.e - 1) * t)


def look_levels(looks: int, alpha: float = 0.05) -> list[float]:
    """The error rate of each of ``looks`` equally spaced looks; they add up to ``alpha``."""
    if looks < 1:
        raise ValueError("at least one look")
    return [spent(k / looks, alpha) - spent((k - 1) / looks, alpha) for k in range(1, looks + 1)]


def stop_reason(low: float, high: float, target: float | None) -> str | None:
    """Why the verdict can no longer change at an interval ``[low, high]``: ``"lift"`` (it lies above 0),
    ``"harm"`` (below 0), ``"within_target"`` (inside ``(-target, target)``: no lift larger than the target),
    else None."""
    if low > 0:
        return "lift"
    if high < 0:
        return "harm"
    if target is not None and -target < low and high < target:
        return "within_target"
    return None
