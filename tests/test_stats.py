import math

import pytest

from eval_skills.results import TaskResult, Usage
from eval_skills.stats import (
    bootstrap_ci,
    composite_score,
    min_two_sided_p,
    nearest_rank,
    pass_at_k_task,
    pass_hat_k_task,
    sample_summary,
    sign_flip_test,
    skill_summary,
    wilson_interval,
)


def r(status, score, latency, run_id=1, usage=None):
    return TaskResult("t", "s", run_id, status, score, latency, usage=usage)


def test_nearest_rank_percentiles():
    values = sorted(float(v) for v in range(1, 101))
    assert nearest_rank(values, 50) == 50
    assert nearest_rank(values, 95) == 95
    assert nearest_rank(values, 99) == 99
    assert nearest_rank([7.0], 99) == 7.0
    assert nearest_rank([1.0, 2.0, 3.0, 4.0], 50) == 2.0
    assert nearest_rank([], 50) == 0.0


def test_summary_metrics_follow_the_seed_formulas():
    results = [r("pass", 1, 100), r("fail", 0.5, 200), r("error", 0, 300), r("timeout", 0, 1000)]
    out = skill_summary(results, runs=1, latency_budget_ms=2000)
    s = out["summary"]
    assert s["completionRate"] == 0.25
    assert s["partialScore"] == pytest.approx(0.375)
    assert s["errorRate"] == 0.5
    assert s["consistencyScore"] is None
    assert (s["passed"], s["failed"], s["errors"], s["timeouts"]) == (1, 1, 1, 1)
    assert out["latency"] == {"p50Ms": 200, "p95Ms": 1000, "p99Ms": 1000}
    # 0.5*0.25 + 0.2*(1 - 1000/2000) + 0.3*(1 - 0.5)
    assert s["compositeScore"] == 0.375
    assert out["tokenCost"] is None


def test_consistency_is_one_minus_population_stddev_of_run_completion():
    results = [r("pass", 1, 1, 1), r("pass", 1, 1, 1), r("pass", 1, 1, 2), r("fail", 0, 1, 2)]
    s = skill_summary(results, runs=2, latency_budget_ms=1000)["summary"]
    # run rates 1.0 and 0.5 -> pstdev 0.25
    assert s["consistencyScore"] == 0.75


def test_latency_norm_is_clamped_and_rounding_is_4_decimals():
    assert composite_score(1.0, 0.0, 5000, 1000) == pytest.approx(0.8)
    s = skill_summary([r("pass", 1, 1), r("pass", 1, 1), r("fail", 0, 1)], runs=1, latency_budget_ms=1000)
    assert s["summary"]["completionRate"] == 0.6667


def test_token_cost_sums_known_usage():
    out = skill_summary([r("pass", 1, 1, usage=Usage(1, 2, 3)), r("pass", 1, 1), r("pass", 1, 1, usage=Usage(4, 5, 9))],
                        runs=1, latency_budget_ms=100)
    assert out["tokenCost"] == {"promptTokens": 5, "completionTokens": 7, "totalTokens": 12}


def test_no_results_means_no_metrics_rather_than_zeros():
    out = skill_summary([], runs=2, latency_budget_ms=1000)
    assert out["summary"]["completionRate"] is None and out["summary"]["compositeScore"] is None
    assert out["summary"]["totalTasks"] == 0 and out["latency"]["p95Ms"] is None


def test_tasks_that_never_reached_the_skill_stay_out_of_the_percentiles():
    # latencies 100, 200, 300 and two tasks that never ran: P50 is the 2nd of 3 (not the 3rd of 5)
    results = [r("pass", 1, 100), r("pass", 1, 200), r("fail", 0, 300), r("error", 0, None), r("error", 0, None)]
    out = skill_summary(results, runs=1, latency_budget_ms=1000)
    assert out["latency"] == {"p50Ms": 200, "p95Ms": 300, "p99Ms": 300}
    # composite: 0.5 x 2/5 + 0.2 x (1 - 300/1000) + 0.3 x (1 - 2/5) = 0.2 + 0.14 + 0.18
    assert out["summary"]["compositeScore"] == pytest.approx(0.52)


def test_no_latency_at_all_makes_the_latency_term_zero():
    results = [r("error", 0, None), r("error", 0, None)]
    out = skill_summary(results, runs=1, latency_budget_ms=1000)
    assert out["latency"] == {"p50Ms": None, "p95Ms": None, "p99Ms": None}
    assert out["summary"]["compositeScore"] == 0.0  # not 0.2: no speed is shown, none is rewarded
    assert composite_score(1.0, 0.0, None, 1000) == pytest.approx(0.8)


def test_consistency_needs_two_finished_runs():
    # run 1 finished (2 of 2 tasks, 1 passed), run 2 stopped after one task: no consistency
    partial = [r("pass", 1, 10, 1), r("fail", 0, 10, 1), r("pass", 1, 10, 2)]
    assert skill_summary(partial, runs=2, latency_budget_ms=100, tasks_per_run=2)["summary"]["consistencyScore"] is None
    # runs 1 and 2 finished (rates 0.5 and 1.0), run 3 partial and left out: 1 - pstdev(0.5, 1.0) = 0.75
    three = [r("pass", 1, 10, 1), r("fail", 0, 10, 1), r("pass", 1, 10, 2), r("pass", 1, 10, 2),
             r("fail", 0, 10, 3)]
    summary = skill_summary(three, runs=3, latency_budget_ms=100, tasks_per_run=2)["summary"]
    assert summary["consistencyScore"] == 0.75


# ---- estimators shared by every kind of evaluation (values computed by hand) --------------------------

def test_sample_summary_uses_the_sample_stddev():
    # mean 2.5; deviations 1.5, 0.5, 0.5, 1.5 -> squares sum 5; 5 / 3 -> sqrt 1.29099
    assert sample_summary([1, 2, 3, 4]) == {"mean": 2.5, "stddev": 1.291, "min": 1, "max": 4}
    assert sample_summary([0.7]) == {"mean": 0.7, "stddev": 0.0, "min": 0.7, "max": 0.7}
    assert sample_summary([]) == {"mean": None, "stddev": None, "min": None, "max": None}


def test_pass_at_k_and_pass_hat_k():
    assert pass_at_k_task(5, 2, 2) == pytest.approx(1 - 3 / 10)  # C(3,2)=3, C(5,2)=10
    assert pass_hat_k_task(5, 2, 2) == pytest.approx(1 / 10)  # C(2,2)=1
    assert pass_at_k_task(3, 0, 1) == 0.0 and pass_at_k_task(3, 3, 3) == 1.0
    assert pass_at_k_task(4, 1, 1) == pytest.approx(0.25)
    with pytest.raises(ValueError):
        pass_at_k_task(2, 1, 3)


def test_sign_flip_exact_values():
    # [1, 2, 3]: the 8 sign patterns sum to 6, 4, 2, 0, 0, -2, -4, -6; |sum| >= 6 twice -> 2/8
    assert sign_flip_test([1, 2, 3]) == 0.25
    # six equal positive deltas: only all + and all - reach |mean| 1 -> 2/64
    assert sign_flip_test([1] * 6) == pytest.approx(0.03125)
    # [0.5, 0.5, -0.5]: every pattern has |sum| >= 0.5
    assert sign_flip_test([0.5, 0.5, -0.5]) == 1.0
    assert sign_flip_test([]) is None
    assert min_two_sided_p(5) == pytest.approx(0.0625) and min_two_sided_p(6) == pytest.approx(0.03125)


def test_sign_flip_monte_carlo_is_seeded_and_close_to_exact():
    deltas = [0.5, 1, -0.25, 0.75, 1, 0.5, -0.5, 1, 0.25, 0.5, 1, 0.75, -0.25, 0.5, 1, 0.5, 0.25]
    exact = sign_flip_test(deltas, exact_max=20)
    first = sign_flip_test(deltas, seed=7, resamples=20_000)
    assert first == sign_flip_test(deltas, seed=7, resamples=20_000)
    assert first == pytest.approx(exact, abs=0.002)
    # 20 equal deltas: only the all-plus and all-minus patterns reach the observed sum (2 in 2^20), so 1000
    # random patterns find none; 20 deltas summing to 0: every pattern reaches it
    assert sign_flip_test([1.0] * 20, resamples=1000) == 1 / 1001
    assert sign_flip_test([1.0, -1.0] * 10, resamples=1000) == 1.0
    assert sign_flip_test([0.25] * 19 + [-0.5], seed=3, resamples=5000) == sign_flip_test(
        [0.25] * 19 + [-0.5], seed=3, resamples=5000)


def test_sign_flip_monte_carlo_counts_exactly_what_one_pattern_at_a_time_counts():
    # each resample is one getrandbits(n) of the seeded source, bit i flipping value i: the same count as a
    # plain loop over the patterns (values that are sums of quarters add exactly, so no rounding can differ)
    import random

    for n, seed in ((17, 1), (24, 2), (41, 3), (200, 4)):
        values = [random.Random(seed * 100 + i).choice([-1, -0.75, -0.5, -0.25, 0, 0.25, 0.5, 1])
                  for i in range(n)]
        observed, rng, hits = abs(sum(values)), random.Random(seed), 0
        for _ in range(3000):
            bits = rng.getrandbits(n)
            hits += abs(sum(-v if bits >> i & 1 else v for i, v in enumerate(values))) >= observed - 1e-9
        assert sign_flip_test(values, seed=seed, resamples=3000) == (hits + 1) / 3001


def test_bootstrap_is_seeded_and_degenerate_for_constant_values():
    values = [0.0, 0.5, 1.0, 1.0, 0.5, 0.0, 1.0]
    assert bootstrap_ci(values, seed=3) == bootstrap_ci(list(reversed(values)), seed=3)
    ci = bootstrap_ci(values)
    assert ci["lower"] <= ci["mean"] <= ci["upper"] and ci["level"] == 0.95
    assert bootstrap_ci([0.4] * 5) == {"lower": 0.4, "upper": 0.4, "mean": 0.4, "level": 0.95}
    assert bootstrap_ci([]) is None


def test_wilson_interval():
    # 8 of 10 at 95%: the textbook interval is [0.4902, 0.9433]
    assert wilson_interval(8, 10) == (0.4902, 0.9433)
    assert wilson_interval(0, 4)[0] == 0.0 and wilson_interval(4, 4)[1] == 1.0
    assert wilson_interval(0, 0) is None


def test_sample_summary_rounds_as_skill_creators_aggregator_does():
    # 0.533 / 4 is a tie at the 4th decimal; the plain sum (skill-creator's arithmetic) lands below it, an exact
    # sum above: the two tools must give the same figure for the same runs
    values = [0.176, 0.133, 0.146, 0.078]
    summary = sample_summary(values)
    assert summary["mean"] == round(sum(values) / len(values), 4) == 0.1332
    assert summary["stddev"] == round(math.sqrt(sum((v - 0.13325) ** 2 for v in values) / 3), 4)
