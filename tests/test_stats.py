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
