import pytest

from eval_skills.results import TaskResult, Usage
from eval_skills.stats import composite_score, nearest_rank, skill_summary


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
