"""Binary classification metrics: pure functions of a confusion matrix, each None (never a silent 0) when
its denominator is empty, with the reason said by :func:`undefined_reasons`.

With ``tp``, ``fp``, ``fn``, ``tn`` the true/false positives/negatives:

- precision = tp / (tp + fp): undefined when nothing was predicted positive;
- recall = tp / (tp + fn): undefined when there is no positive case;
- F1 = 2 tp / (2 tp + fp + fn), the harmonic mean of precision and recall written with counts: undefined only
  when there is no positive case and nothing was predicted positive (then there is nothing to find and nothing
  was found). When there are positives but nothing was predicted positive, precision is undefined and F1 is 0:
  every positive was missed;
- accuracy = (tp + tn) / n: undefined when there is no case.

Values are rounded to 4 decimals, like every headline metric.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

__all__ = ["Confusion", "accuracy", "classification_metrics", "confusion", "f1", "precision", "recall",
           "undefined_reasons"]


@dataclass(frozen=True)
class Confusion:
    """Counts of a binary classification."""

    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0

    @property
    def n(self) -> int:
        return self.tp + self.fp + self.fn + self.tn

    @property
    def positives(self) -> int:
        return self.tp + self.fn

    @property
    def predicted_positives(self) -> int:
        return self.tp + self.fp


def confusion(pairs: Iterable[tuple[bool, bool]]) -> Confusion:
    """The confusion matrix of ``(actual, predicted)`` pairs, ``True`` being the positive class."""
    tp = fp = fn = tn = 0
    for actual, predicted in pairs:
        if actual and predicted:
            tp += 1
        elif predicted:
            fp += 1
        elif actual:
            fn += 1
        else:
            tn += 1
    return Confusion(tp, fp, fn, tn)


def _ratio(top: int, bottom: int) -> float | None:
    return round(top / bottom, 4) if bottom else None


def precision(c: Confusion) -> float | None:
    return _ratio(c.tp, c.tp + c.fp)


def recall(c: Confusion) -> float | None:
    return _ratio(c.tp, c.tp + c.fn)


def f1(c: Confusion) -> float | None:
    return _ratio(2 * c.tp, 2 * c.tp + c.fp + c.fn)


def accuracy(c: Confusion) -> float | None:
    return _ratio(c.tp + c.tn, c.n)


def undefined_reasons(c: Confusion, *, positive: str = "positive", predicted: str = "predicted positive",
                      unit: tuple[str, str] = ("case", "cases")) -> dict[str, str]:
    """Why each undefined metric of ``c`` is undefined, in words (``positive`` and ``predicted`` name the
    positive class and the positive prediction in the caller's terms, ``unit`` what is counted, singular and
    plural)."""
    one, many = unit
    reasons: dict[str, str] = {}
    if c.n == 0:
        return {name: f"no {many}" for name in ("precision", "recall", "f1", "accuracy")}
    if c.predicted_positives == 0:
        reasons["precision"] = f"no {one} was {predicted}"
    if c.positives == 0:
        reasons["recall"] = f"no {one} is {positive}"
        if c.predicted_positives == 0:
            reasons["f1"] = f"no {one} is {positive} and none was {predicted}"
    return reasons


def classification_metrics(c: Confusion, *, positive: str = "positive", predicted: str = "predicted positive",
                           unit: tuple[str, str] = ("case", "cases")) -> dict[str, Any]:
    """``{precision, recall, f1, accuracy, tp, fp, fn, tn, undefined: {metric: reason}}``."""
    return {"precision": precision(c), "recall": recall(c), "f1": f1(c), "accuracy": accuracy(c),
            "tp": c.tp, "fp": c.fp, "fn": c.fn, "tn": c.tn,
            "undefined": undefined_reasons(c, positive=positive, predicted=predicted, unit=unit)}
