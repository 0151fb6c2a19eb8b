"""The train/test split of ``routing --optimize``: stratified, seeded, fixed for the whole optimisation.

Each class (``should_trigger`` true, false) gives ``round(n x holdout)`` of its ``n`` queries to the test set, at
least 1 and at most ``n - 1``, so both sets hold both classes. Within a class the test places are shared among
its ``invocation_type`` groups in proportion to their sizes (largest remainders first, ties broken by the seeded
order), and each group's queries are shuffled by a source seeded with ``seed``: the same file, holdout and seed
always give the same split.

A class with fewer than 2 queries cannot be in both sets: :func:`split_queries` refuses it with the counts
(an InputError), before any run.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import InputError
from ..formats.agentskills import RoutingQuery

__all__ = ["Split", "split_queries"]


@dataclass(frozen=True)
class Split:
    """The 1-based indices (the routing file's order) of the train and of the test queries, each sorted."""

    train: tuple[int, ...]
    test: tuple[int, ...]
    seed: int
    holdout: float

    def counts(self, queries: Sequence[RoutingQuery]) -> dict[str, dict[str, int]]:
        """``{"train": {"should_trigger": n, "should_not_trigger": m}, "test": {...}}``."""
        return {name: {"should_trigger": sum(queries[i - 1].should_trigger for i in part),
                       "should_not_trigger": sum(not queries[i - 1].should_trigger for i in part)}
                for name, part in (("train", self.train), ("test", self.test))}

    def to_json(self, queries: Sequence[RoutingQuery]) -> dict[str, Any]:
        return {"seed": self.seed, "holdout": self.holdout, "train": list(self.train), "test": list(self.test),
                "counts": self.counts(queries), "stratified_by": ["should_trigger", "invocation_type"]}


def _shares(sizes: dict[str | None, int], total: int, order: list[str | None]) -> dict[str | None, int]:
    """``total`` places shared among groups in proportion to ``sizes`` (largest remainders, then ``order``)."""
    whole = sum(sizes.values())
    exact = {key: total * size / whole for key, size in sizes.items()}
    shares = {key: math.floor(value) for key, value in exact.items()}
    left = total - sum(shares.values())
    rank = sorted(sizes, key=lambda key: (-(exact[key] - shares[key]), order.index(key)))
    for key in rank[:left]:
        shares[key] += 1
    return shares


def _describe(queries: Sequence[RoutingQuery], wanted: dict[bool, int]) -> str:
    parts = []
    for cls, label in ((True, "should trigger"), (False, "should not trigger")):
        n = sum(q.should_trigger == cls for q in queries)
        test = wanted.get(cls, 0)
        parts.append(f"{n} {label} ({n - test} train, {test} test)")
    return "; ".join(parts)


def split_queries(queries: Sequence[RoutingQuery], holdout: float, seed: int, *, file: str | None = None) -> Split:
    """The split (see the module doc); InputError when a class would miss from train or test."""
    if not 0 < holdout < 1:
        raise InputError(f"--holdout must be between 0 and 1 (both excluded), not {holdout}", field="--holdout")
    rng = random.Random(f"routing-split:{seed}")
    wanted: dict[bool, int] = {}
    for cls in (True, False):
        n = sum(q.should_trigger == cls for q in queries)
        wanted[cls] = min(max(round(n * holdout), 1), n - 1) if n >= 2 else min(n, round(n * holdout))
    for cls, label in ((True, "true"), (False, "false")):
        n = sum(q.should_trigger == cls for q in queries)
        if n < 2:
            where = "train and the test sets" if n == 0 else "test set" if wanted[cls] == 0 else "train set"
            raise InputError(f"the train/test split leaves the queries with should_trigger {label} out of the "
                             f"{where}: {_describe(queries, wanted)}", file=file, field="should_trigger",
                             hint="--optimize needs at least 2 queries that should trigger and 2 that should not")
    test: list[int] = []
    for cls in (True, False):
        groups: dict[str | None, list[int]] = {}
        for index, q in enumerate(queries, start=1):
            if q.should_trigger == cls:
                groups.setdefault(q.invocation_type, []).append(index)
        order = sorted(groups, key=lambda key: (key is None, key or ""))
        for key in order:
            rng.shuffle(groups[key])
        tie_order = order[:]
        rng.shuffle(tie_order)
        shares = _shares({key: len(groups[key]) for key in order}, wanted[cls], tie_order)
        for key in order:
            test += groups[key][:shares[key]]
    chosen = set(test)
    train = tuple(i for i in range(1, len(queries) + 1) if i not in chosen)
    return Split(train=train, test=tuple(sorted(chosen)), seed=seed, holdout=holdout)
