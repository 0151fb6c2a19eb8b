"""The Optimize tab of the review page: candidates side by side, per-query rates, each description's word diff
against the original, and every text from optimize.json escaped."""

from __future__ import annotations

import json
from pathlib import Path

from eval_skills.formats.optimize_results import (
    CandidateQuery,
    ImproverAttempt,
    OptimizeCandidate,
    OptimizeQuery,
    OptimizeResults,
    OptimizeSplit,
    OptimizeWinner,
)
from eval_skills.formats.routing_results import RoutingMetrics
from eval_skills.viewer import open_workspace_source, render_page
from eval_skills.viewer.optimize_view import word_diff

HOSTILE = '<script>alert("x")</script>'


def write_optimize(folder: Path) -> None:
    m = RoutingMetrics(precision=1.0, recall=0.5, f1=0.6667, accuracy=0.75)
    queries = [OptimizeQuery(index=1, query=f"check {HOSTILE}", should_trigger=True, set="train"),
               OptimizeQuery(index=2, query="weather", should_trigger=False, set="test")]
    rows = [CandidateQuery(index=1, set="train", should_trigger=True, runs=2, triggers=1, trigger_rate=0.5,
                           passed=True),
            CandidateQuery(index=2, set="test", should_trigger=False, runs=2, triggers=2, trigger_rate=1.0,
                           passed=False)]
    results = OptimizeResults(
        metadata={"skill_name": "x", "state": "finished", "stop_reason": "iterations", "tokens_used": 10},
        split=OptimizeSplit(seed=0, holdout=0.4, train=[1], test=[2]), queries=queries,
        candidates=[
            OptimizeCandidate(number=1, origin="original", description="Checks invoices.", folder="candidate-1",
                              status="finished", train=m, test=m, queries=rows),
            OptimizeCandidate(number=2, origin="improver", description=f"Checks bills {HOSTILE} and invoices.",
                              folder="candidate-2", status="finished", train=m, test=m, queries=rows,
                              improver=[ImproverAttempt(description=f"leak {HOSTILE}", refused="quotes a query"),
                                        ImproverAttempt(description="ok")])],
        winner=OptimizeWinner(number=2, why=f"best {HOSTILE}", test_f1=0.6667, original_test_f1=0.5,
                              difference=0.1667, difference_ci=(-0.2, 0.5), beats_original=True,
                              warning=f"too small {HOSTILE}"))
    folder.mkdir(parents=True)
    (folder / "optimize.json").write_text(json.dumps(results.model_dump(mode="json")))


def test_the_optimize_tab_shows_candidates_rates_and_diffs_escaped(tmp_path: Path) -> None:
    write_optimize(tmp_path / "ws" / "routing-1")
    source = open_workspace_source(tmp_path / "ws")
    assert [t.name for t in source.tabs()] == ["optimize"]
    html = source.tab_html("optimize", static=True) or ""
    assert "<script>" not in html and HTML_ESCAPED in html
    assert html.count("&lt;script&gt;") == 5  # in the query, the diff, the refused reply, the why, the warning
    assert 'data-candidate="2"' in html and "<span class=\"badge good\">winner</span>" in html
    assert "Checks <ins>bills &lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; and </ins>invoices." in html
    assert '<td class="fail">100.0%</td>' in html and "+16.7 pp" in html and "[-20.0 pp, +50.0 pp]" in html
    page = render_page(source, static=True)  # the tab travels in a JSON block: no "<" in it is raw
    assert "alert(" in page and "<script>alert" not in page


HTML_ESCAPED = "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;"


def test_word_diff() -> None:
    assert word_diff("Checks invoice totals.", "Checks invoice totals and dates.") == [
        ("same", "Checks invoice "), ("removed", "totals."), ("added", "totals and dates.")]
    assert word_diff("a b", "a b") == [("same", "a b")]
