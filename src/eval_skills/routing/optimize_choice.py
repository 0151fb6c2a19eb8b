"""Which candidate of ``routing --optimize`` wins, and how sure that is.

Only finished candidates with a held-out F1 take part. The winner has the best held-out F1; ties go to the
narrower 95% interval of that F1, then to the shorter description, then to the earlier candidate (the original
first). How sure: the winner's held-out F1 against the original's, with the 95% paired stratified-bootstrap
interval of the difference (:func:`~eval_skills.stats.f1_bootstrap.f1_difference_interval`) over the held-out
queries both scored. The winner *beats* the original when its held-out F1 is higher; the choice is *sure* when
the interval lies above 0, and otherwise a warning says the held-out set is too small to tell them apart.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..formats.optimize_results import OptimizeCandidate, OptimizeWinner
from ..stats.f1_bootstrap import f1_difference_interval, f1_interval
from .aggregate import THRESHOLD

__all__ = ["choose_winner", "test_f1_interval"]


def _predictions(candidate: OptimizeCandidate) -> dict[int, tuple[bool, bool]]:
    """Held-out query index -> (should trigger, triggered), for the queries with a rate."""
    return {q.index: (q.should_trigger, q.trigger_rate >= THRESHOLD) for q in candidate.queries
            if q.set == "test" and q.trigger_rate is not None}


def test_f1_interval(candidate: OptimizeCandidate, seed: int = 0) -> tuple[float, float] | None:
    rows = list(_predictions(candidate).values())
    return f1_interval([a for a, _ in rows], [p for _, p in rows], seed=seed)


def _width(candidate: OptimizeCandidate) -> float:
    ci = candidate.test_f1_ci
    return ci[1] - ci[0] if ci is not None else 2.0


def choose_winner(candidates: Sequence[OptimizeCandidate], *, seed: int = 0) -> OptimizeWinner | None:
    """The winner (see the module doc); None when no finished candidate has a held-out F1."""
    ranked = [c for c in candidates if c.status == "finished" and c.test is not None and c.test.f1 is not None]
    if not ranked:
        return None
    ranked.sort(key=lambda c: (-(c.test.f1 or 0.0), _width(c), len(c.description), c.number))  # type: ignore[union-attr]
    best = ranked[0]
    ties = [c for c in ranked[1:] if c.test.f1 == best.test.f1]  # type: ignore[union-attr]
    assert best.test is not None and best.test.f1 is not None
    why = f"the best held-out F1 ({best.test.f1:.4f}) of {len(ranked)} finished candidate" \
          f"{'s' if len(ranked) != 1 else ''}"
    if ties:
        narrower = [c.number for c in ties if _width(c) > _width(best)]
        longer = [c.number for c in ties if _width(c) == _width(best)]
        if narrower:
            why += f"; tied with candidate {', '.join(map(str, narrower))}, its interval is narrower"
        if longer:
            why += f"; tied with candidate {', '.join(map(str, longer))} (same interval), its description is " \
                   "shorter or earlier"
    original = next((c for c in candidates if c.origin == "original"), None)
    winner = OptimizeWinner(number=best.number, why=why, test_f1=best.test.f1)
    if original is None or original.test is None or original.status != "finished":
        winner.warning = "the original description has no held-out figures to compare with"
        return winner
    winner.original_test_f1 = original.test.f1
    if best.number == original.number:
        winner.why += "; the original description stays"
        return winner
    mine, theirs = _predictions(best), _predictions(original)
    common = sorted(set(mine) & set(theirs))
    actual = [mine[i][0] for i in common]
    winner.difference_ci = f1_difference_interval(actual, [mine[i][1] for i in common],
                                                  [theirs[i][1] for i in common], seed=seed)
    winner.difference = round(best.test.f1 - (original.test.f1 or 0.0), 4)
    winner.beats_original = original.test.f1 is None or best.test.f1 > original.test.f1
    winner.sure = winner.beats_original and winner.difference_ci is not None and winner.difference_ci[0] > 0
    if winner.beats_original and not winner.sure:
        positives = sum(actual)
        low, high = winner.difference_ci or (-1.0, 1.0)
        winner.warning = (f"the held-out set ({len(common)} queries: {positives} should trigger, "
                          f"{len(common) - positives} should not) is too small to tell the winner from the original: "
                          f"F1 difference {winner.difference:+.4f}, 95% interval [{low:+.4f}, {high:+.4f}] includes 0")
    return winner
