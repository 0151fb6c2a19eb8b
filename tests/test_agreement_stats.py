"""The agreement statistics against figures computed by hand, and their intervals' error rates by simulation."""

import random

import pytest

from eval_skills.stats.agreement import agreement, cohen_kappa, krippendorff_alpha, wilson_interval

# a 2x2 table: judge (first) x people (second): TT 20, TF 5, FT 10, FF 15
TABLE = [(True, True)] * 20 + [(True, False)] * 5 + [(False, True)] * 10 + [(False, False)] * 15


def test_kappa_of_a_table_worked_by_hand():
    # po = 35/50 = 0.7; judge rates .5/.5, people .6/.4 -> pe = .5; kappa = (.7 - .5) / .5 = 0.4
    # Fleiss-Cohen-Everitt: A = .4(1 - 1.1*.6)^2 + .3(1 - .9*.6)^2 = .10972; B = .36(.1*1.1^2 + .2*.9^2) = .10188;
    # C = (.4 - .5*.6)^2 = .01; SE = sqrt(.2016) / (.5 * sqrt(50)) = 0.126996
    k = cohen_kappa(TABLE)
    assert k["observed"] == pytest.approx(0.7) and k["expected"] == pytest.approx(0.5)
    assert k["kappa"] == pytest.approx(0.4)
    assert k["se"] == pytest.approx(0.126996, abs=1e-6)
    assert k["ci_low"] == pytest.approx(0.4 - 1.959964 * 0.126996, abs=1e-5)
    assert k["ci_high"] == pytest.approx(0.4 + 1.959964 * 0.126996, abs=1e-5)


def test_kappa_perfect_chance_and_undefined():
    assert cohen_kappa([(True, True), (False, False)] * 5)["kappa"] == pytest.approx(1.0)
    # people always say the opposite: kappa -1
    assert cohen_kappa([(True, False), (False, True)] * 5)["kappa"] == pytest.approx(-1.0)
    # both raters say "passed" every time: chance agreement 1, kappa undefined (not 1, not 0)
    assert cohen_kappa([(True, True)] * 8)["kappa"] is None
    assert cohen_kappa([])["kappa"] is None


def test_wilson_interval_worked_by_hand():
    # 35 of 50: centre (.7 + z^2/100) / (1 + z^2/50) = 0.685731, half 0.123233
    low, high = wilson_interval(35, 50)
    assert low == pytest.approx(0.685731 - 0.123233, abs=1e-5)
    assert high == pytest.approx(0.685731 + 0.123233, abs=1e-5)
    assert wilson_interval(0, 10)[0] == 0.0 and wilson_interval(10, 10)[1] == 1.0
    assert wilson_interval(0, 0) is None
    with pytest.raises(ValueError):
        wilson_interval(3, 2)


def test_krippendorff_alpha_of_the_papers_example():
    # Krippendorff (2011), "Computing Krippendorff's alpha-reliability", two observers, binary data: 0.095
    a = [0, 1, 0, 0, 0, 0, 0, 0, 1, 0]
    b = [1, 1, 1, 0, 0, 1, 0, 0, 0, 0]
    # by hand: o00 = 10, o11 = 2, o01 = o10 = 4; n0 = 14, n1 = 6, n = 20; alpha = 1 - 19 * 8 / (2 * 14 * 6)
    result = krippendorff_alpha(list(zip(a, b, strict=True)))
    assert result["alpha"] == pytest.approx(1 - 19 * 8 / 168)
    assert round(result["alpha"], 3) == 0.095
    # a unit only one coder labelled cannot be paired: left out, the figure unchanged
    more = krippendorff_alpha([*zip(a, b, strict=True), (1, None), (None, 0), (None, None)])
    assert more["alpha"] == pytest.approx(result["alpha"]) and more["unpaired"] == 3 and more["units"] == 10
    assert krippendorff_alpha([(1, 1), (1, 1)])["alpha"] is None
    assert krippendorff_alpha([(1, 1), (0, 0)])["alpha"] == pytest.approx(1.0)


def test_agreement_puts_both_together():
    result = agreement(TABLE)
    assert result["n"] == 50 and result["agree"] == 35 and result["raw_agreement"] == pytest.approx(0.7)
    assert result["kappa"] == pytest.approx(0.4)
    assert result["raw_ci_low"] < 0.7 < result["raw_ci_high"]


def _draw(rng: random.Random, cells: dict[tuple[bool, bool], float], n: int) -> list[tuple[bool, bool]]:
    keys, weights = list(cells), list(cells.values())
    return rng.choices(keys, weights, k=n)


@pytest.mark.parametrize("n", [60, 200])
def test_kappa_interval_covers_the_true_kappa_95_percent_of_the_time(n):
    cells = {(True, True): 0.4, (True, False): 0.1, (False, True): 0.2, (False, False): 0.3}  # kappa 0.4
    rng = random.Random(7)
    trials, covered = 2000, 0
    for _ in range(trials):
        k = cohen_kappa(_draw(rng, cells, n))
        covered += k["kappa"] is not None and k["ci_low"] <= 0.4 <= k["ci_high"]
    assert 0.93 <= covered / trials <= 0.97


def test_wilson_interval_error_rate_by_simulation():
    # the coverage of any interval of a binomial swings with n; averaged over n from 30 to 60 it is the level
    rng = random.Random(11)
    trials, covered = 0, 0
    for n in range(30, 61):
        for _ in range(150):
            hits = sum(rng.random() < 0.8 for _ in range(n))
            low, high = wilson_interval(hits, n)
            covered += low <= 0.8 <= high
            trials += 1
    assert 0.935 <= covered / trials <= 0.965
