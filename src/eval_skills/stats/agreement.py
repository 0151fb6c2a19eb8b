"""Agreement between two raters (a judge and the people who check it, or two judges): pure functions.

- :func:`wilson_interval`: the Wilson score interval of a proportion (raw agreement: the share of items both
  raters gave the same label).
- :func:`cohen_kappa`: Cohen's kappa, agreement beyond what the two raters' label rates give by chance, with a
  large-sample interval from the standard error of Fleiss, Cohen and Everitt (1969, "Large sample standard
  errors of kappa and weighted kappa", Psychological Bulletin 72(5)), which holds when kappa is not 0 (the
  simpler one of Cohen 1960 is too narrow then). Its coverage is checked by simulation in the tests.
- :func:`krippendorff_alpha`: Krippendorff's alpha for nominal labels and two coders, with missing labels (an
  item one coder did not label is left out, as the coefficient prescribes for an unpairable unit).
- :func:`agreement`: raw agreement and kappa, with their intervals, of a list of label pairs.

Labels are any hashable values (here ``True``/``False``: passed or failed).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Sequence
from statistics import NormalDist
from typing import Any

__all__ = ["agreement", "cohen_kappa", "krippendorff_alpha", "wilson_interval"]


def _z(level: float) -> float:
    return NormalDist().inv_cdf(0.5 + level / 2)


def wilson_interval(successes: int, n: int, *, level: float = 0.95) -> tuple[float, float] | None:
    """The Wilson score interval of ``successes / n`` (None when ``n`` is 0)."""
    if n <= 0:
        return None
    if not 0 <= successes <= n:
        raise ValueError("successes must be between 0 and n")
    z = _z(level)
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z / denominator * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    low = 0.0 if successes == 0 else max(0.0, centre - half)  # exactly 0 and 1 at the ends, not 1e-17 off
    return low, 1.0 if successes == n else min(1.0, centre + half)


def cohen_kappa(pairs: Sequence[tuple[Hashable, Hashable]], *, level: float = 0.95) -> dict[str, Any]:
    """Cohen's kappa of ``pairs`` (rater 1's label, rater 2's label), its standard error and interval at ``level``
    (kappa ± z·SE, kept within [-1, 1]). ``kappa`` is None when it is undefined: no pairs, or both raters gave
    one and the same label to every item (chance agreement 1)."""
    n = len(pairs)
    out: dict[str, Any] = {"n": n, "kappa": None, "se": None, "ci_low": None, "ci_high": None,
                           "observed": None, "expected": None, "confidence": level}
    if n == 0:
        return out
    cells = Counter(pairs)
    rows = Counter(a for a, _ in pairs)
    cols = Counter(b for _, b in pairs)
    labels = set(rows) | set(cols)
    p = {key: count / n for key, count in cells.items()}
    pr = {k: rows[k] / n for k in labels}
    pc = {k: cols[k] / n for k in labels}
    observed = math.fsum(p.get((k, k), 0.0) for k in labels)
    expected = math.fsum(pr[k] * pc[k] for k in labels)
    out.update(observed=observed, expected=expected)
    if expected >= 1 - 1e-12:
        return out
    kappa = (observed - expected) / (1 - expected)
    a = math.fsum(p.get((k, k), 0.0) * (1 - (pr[k] + pc[k]) * (1 - kappa)) ** 2 for k in labels)
    b = (1 - kappa) ** 2 * math.fsum(p.get((i, j), 0.0) * (pc[i] + pr[j]) ** 2
                                     for i in labels for j in labels if i != j)
    c = (kappa - expected * (1 - kappa)) ** 2
    se = math.sqrt(max(0.0, a + b - c)) / ((1 - expected) * math.sqrt(n))
    z = _z(level)
    out.update(kappa=kappa, se=se, ci_low=max(-1.0, kappa - z * se), ci_high=min(1.0, kappa + z * se))
    return out


def krippendorff_alpha(units: Sequence[tuple[Hashable | None, Hashable | None]]) -> dict[str, Any]:
    """Krippendorff's alpha (nominal) of two coders over ``units`` (coder 1's label, coder 2's label; None: not
    labelled). Units without both labels cannot be paired and are left out (``unpaired`` counts them).
    ``alpha`` is None when it is undefined (no pairable unit, or a single label value in all of them)."""
    paired = [(a, b) for a, b in units if a is not None and b is not None]
    out: dict[str, Any] = {"alpha": None, "units": len(paired), "unpaired": len(units) - len(paired)}
    if not paired:
        return out
    coincidences: Counter[tuple[Hashable, Hashable]] = Counter()
    for a, b in paired:  # two values in a unit: each ordered pair once (weight 1 / (m_u - 1) = 1)
        coincidences[(a, b)] += 1
        coincidences[(b, a)] += 1
    values: Counter[Hashable] = Counter()
    for (a, _), count in coincidences.items():
        values[a] += count
    n = sum(values.values())  # 2 per pairable unit
    disagree = sum(count for (a, b), count in coincidences.items() if a != b)
    expected = sum(values[a] * values[b] for a in values for b in values if a != b)
    if expected == 0:
        return out
    out["alpha"] = 1 - (n - 1) * disagree / expected
    return out


def agreement(pairs: Sequence[tuple[Hashable, Hashable]], *, level: float = 0.95) -> dict[str, Any]:
    """Raw agreement (the share of equal pairs) with its Wilson interval, and Cohen's kappa with its interval."""
    n = len(pairs)
    same = sum(a == b for a, b in pairs)
    interval = wilson_interval(same, n, level=level)
    kappa = cohen_kappa(pairs, level=level)
    return {"n": n, "agree": same, "raw_agreement": same / n if n else None,
            "raw_ci_low": interval[0] if interval else None, "raw_ci_high": interval[1] if interval else None,
            "kappa": kappa["kappa"], "kappa_se": kappa["se"], "kappa_ci_low": kappa["ci_low"],
            "kappa_ci_high": kappa["ci_high"], "confidence": level}
