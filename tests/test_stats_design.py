"""The planning and stopping statistics against values computed by hand."""

from __future__ import annotations

import math

import pytest

from eval_skills.stats.design import VarianceParts, minimum_detectable_effect, plan_design, variance_parts, z_total
from eval_skills.stats.intervals import clustered_standard_error, sign_flip_interval, smallest_level
from eval_skills.stats.sequential import look_levels, spent, stop_reason


def test_sign_flip_interval_is_made_of_subset_means() -> None:
    # six values: 2^6 = 64 gaps, k = floor(0.025 x 64) = 1, so the interval runs from the smallest subset mean
    # (the smallest value) to the largest (the largest value); its coverage is 1 - 2/64
    assert sign_flip_interval([0.5, 1.0, -0.25, 0.75, 0.5, 1.0]) == (-0.25, 1.0)
    # seven values: 128 gaps, k = floor(3.2) = 3. The subset means in order start 0 (the subset {0}), then 0.5
    # six times ({0, one 1}); at the top, 63 subsets of ones only have mean 1
    assert sign_flip_interval([0, 1, 1, 1, 1, 1, 1]) == (0.5, 1.0)
    # too few values for 95%: the whole range a delta can take
    assert sign_flip_interval([1.0, 1.0]) == (-1.0, 1.0)
    assert sign_flip_interval([]) is None
    assert smallest_level(6) == 2 / 64


def test_sign_flip_interval_above_the_exact_limit_is_seeded_and_close() -> None:
    values = [0.1 * (i % 7) - 0.2 for i in range(20)]
    first = sign_flip_interval(values, seed=3)
    assert first == sign_flip_interval(values, seed=3)
    exact = sign_flip_interval(values, exact_max=20)  # 2^20 subsets, every one
    assert first is not None and exact is not None
    assert abs(first[0] - exact[0]) < 0.02 and abs(first[1] - exact[1]) < 0.02


def test_clustered_standard_error() -> None:
    # mean 0.5; per cluster the deviations add up to +1 and -1: sqrt(1 + 1) / 4
    assert clustered_standard_error([[1, 1], [0, 0]]) == pytest.approx(math.sqrt(2) / 4)
    # the same values unclustered: sqrt(4 x 0.25) / 4
    assert clustered_standard_error([[1], [1], [0], [0]]) == pytest.approx(0.25)
    assert clustered_standard_error([[1, 0], [1, 0]]) == 0.0
    assert clustered_standard_error([]) is None


def test_variance_parts_split_run_noise_from_case_differences() -> None:
    # deltas 0.5 and 0.5 (no spread); within: var([1, 0]) = 0.5 in one arm of each case, so 0.5; the noise it
    # puts in a delta is 0.5 / 2 = 0.25, more than the deltas' spread: between is 0
    parts = variance_parts([([1, 0], [0, 0]), ([1, 1], [0, 1])])
    assert parts == VarianceParts(between=0.0, within=0.5, cases=2, runs=2)
    # one run per arm: nothing to split, the whole spread counts as between-case
    single = variance_parts([([1], [0]), ([0], [0]), ([1], [1])])
    assert single is not None and single.within is None and single.between == pytest.approx(1 / 3)
    assert variance_parts([([1], [0]), ([], [1])]) is None


def test_plan_design_matches_the_textbook_figures() -> None:
    # a spread of true lifts of 0.25 (tau2 0.0625), base pass rate 0.6 (one run's variance 2 x 0.6 x 0.4 = 0.48):
    # detecting 15 points takes z^2 (0.0625 + 0.48 / r) / 0.15^2 cases, z = 1.96 + 0.8416 = 2.8016
    assert z_total() == pytest.approx(2.801585, abs=1e-6)
    at3 = plan_design(VarianceParts(between=0.0625, within=0.48, cases=20, runs=3), 0.15)
    assert at3.cases_needed == 78  # 7.8489 x 0.2225 / 0.0225 = 77.6
    at10 = plan_design(VarianceParts(between=0.0625, within=0.48, cases=20, runs=10), 0.15)
    assert at10.cases_needed == 39  # 7.8489 x 0.1105 / 0.0225 = 38.5
    # 20 cases: 20 x 0.0225 / 7.8489 = 0.0573 < 0.0625, so no number of runs is enough
    assert at3.runs_needed is None and at3.better == "cases"
    # 100 cases: room 0.28667 - 0.0625 = 0.22417, runs 0.48 / 0.22417 = 2.14 -> 3; 600 agent runs against 468
    big = plan_design(VarianceParts(between=0.0625, within=0.48, cases=100, runs=3), 0.15)
    assert (big.runs_needed, big.agent_runs_by_runs, big.agent_runs_by_cases, big.better) == (3, 600, 468, "cases")
    # the minimum detectable effect of 20 cases x 3 runs: 2.8016 x sqrt(0.2225 / 20)
    assert minimum_detectable_effect(VarianceParts(0.0625, 0.48, 20, 3), 20, 3) == pytest.approx(
        2.801585 * math.sqrt(0.2225 / 20))
    with pytest.raises(ValueError):
        plan_design(VarianceParts(0.0625, 0.48, 20, 3), 0)


def test_spending_adds_up_to_alpha() -> None:
    # Pocock-type: 0.05 ln(1 + (e - 1) t); t = 1/3: 0.05 ln(1.57276) = 0.022642
    levels = look_levels(3)
    assert levels == pytest.approx([0.022642, 0.015527, 0.011831], abs=1e-6)
    assert math.fsum(levels) == pytest.approx(0.05)
    assert spent(0) == 0 and look_levels(1) == pytest.approx([0.05])
    assert stop_reason(0.1, 0.5, None) == "lift" and stop_reason(-0.5, -0.1, 0.2) == "harm"
    assert stop_reason(-0.1, 0.15, 0.2) == "within_target" and stop_reason(-0.1, 0.25, 0.2) is None
    assert stop_reason(-0.1, 0.15, None) is None
