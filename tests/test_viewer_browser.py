"""The review page in a real browser: Debian's Chromium driven by Playwright, against ``eval-skills view``.

One browser for the module; the servers are real ``eval-skills view`` processes on workspaces written by
``review_data``. Every number checked on the page is read from the workspace's files. A screenshot of each
view is saved under ``tests/artifacts/viewer/``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from review_data import HOSTILE, make_reports, make_store, make_workspace
from viewer_server import base, served, view_process, with_token

CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = Path(__file__).resolve().parent / "artifacts" / "viewer"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]
# every violation of the page's Content-Security-Policy, and every dialog, is recorded here
WATCH = """
window.__violations = [];
document.addEventListener('securitypolicyviolation', e => window.__violations.push(e.violatedDirective));
window.alert = () => { window.__pwned = 'alert'; };
"""

if not os.access(CHROMIUM, os.X_OK):
    pytest.skip(f"{CHROMIUM} is not installed (apt-get install -y chromium); browser tests skipped",
                allow_module_level=True)
playwright_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install "
                                                                   "'.[test]'); browser tests skipped")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with playwright_api.sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def artifacts() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory):
    return make_workspace(tmp_path_factory.mktemp("browser") / "support-triage-workspace", cases=4, runs=2)


@pytest.fixture(scope="module")
def site(workspace) -> Iterator[str]:
    with view_process(workspace.root) as (url, _):
        yield url


@pytest.fixture
def page(browser, site) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.add_init_script(WATCH)
    page.requests = []
    page.on("request", lambda request: page.requests.append(request.url))
    page.errors = []
    page.on("pageerror", lambda error: page.errors.append(str(error)))
    yield page
    assert page.errors == []
    context.close()


def open_case(page: Any, url: str) -> None:
    page.goto(url)
    page.wait_for_selector("#case article")


def wait_case(page: Any, key: str) -> None:
    """Wait until the case shown is ``key`` (any characters: no selector is built from it)."""
    page.wait_for_function("k => { const a = document.querySelector('#case article'); "
                           "return a !== null && a.dataset.case === k; }", arg=key)


def page_cases(page: Any) -> list[str]:
    return page.evaluate("JSON.parse(document.getElementById('review-config').textContent).cases")


def read(path: Path) -> Any:
    return json.loads(path.read_text())


def check_legend(page: Any, names: list[str]) -> None:
    """The case list's legend names whose each badge is, in the badges' order, and the colours."""
    legend = page.locator("#case-legend")
    assert legend.is_visible() and legend.evaluate("d => d.open")
    assert legend.locator(".legend-columns li").all_inner_texts() == names
    for link in page.locator(".case-link").all():
        titles = link.locator(".mark").evaluate_all("els => els.map(e => e.title)")
        assert [t.split(": ")[0] for t in titles] == names  # each badge is the one the legend names there
    colours = legend.locator(".legend-colours .mark").evaluate_all("els => els.map(e => e.classList[1])")
    assert colours == ["good", "mid", "bad", "na"]
    first = page.locator(".case-link").first.bounding_box()
    assert legend.bounding_box()["y"] + legend.bounding_box()["height"] <= first["y"]  # above the list


def test_outputs_side_by_side_match_the_run_files(page, site, workspace, artifacts):
    open_case(page, site)
    key = workspace.cases[0]
    assert page.inner_text("#case .case-id") == key
    case_dir = workspace.iteration / f"eval-{key}"
    assert "Review the attached support request 1" in page.inner_text("#case .prompt")
    for k in (1, 2):
        cells = {}
        for arm in workspace.arms:
            run = case_dir / arm / f"run-{k}"
            cell = page.locator(f'.run[data-run="eval-{key}-{arm}-run-{k}"]')
            timing, grading = read(run / "timing.json"), read(run / "grading.json")
            assert cell.locator(".tokens").inner_text() == f"{timing['total_tokens']:,} tokens"
            assert cell.locator(".time").inner_text() == f"{timing['total_duration_seconds']:.1f} s"
            s = grading["summary"]
            assert cell.locator(".badge.score").inner_text() == f"{s['passed']}/{s['total']} passed"
            verdicts = cell.locator(".expectation").evaluate_all("els => els.map(e => e.classList[1])")
            assert verdicts == ["pass" if e["passed"] else "fail" for e in grading["expectations"]]
            response = cell.locator(".response").first
            assert response.locator("h1").inner_text() == f"Answer to case {key}"
            assert f"The {arm} answer, run {k}, iteration 2." in response.inner_text()
            assert response.locator("pre.hl span.k").first.inner_text() == "def"  # highlighted code
            cells[arm] = cell.bounding_box()
        with_box, without_box = cells["with_skill"], cells["without_skill"]
        assert with_box["y"] == without_box["y"] and with_box["x"] + with_box["width"] <= without_box["x"]
    check_legend(page, ["with skill", "without skill"])
    assert "mean pass rate" in page.inner_text("#case-legend .legend-meaning")
    page.screenshot(path=str(artifacts / "outputs.png"))
    transcript = page.locator(".run .transcript").first
    assert not transcript.evaluate("d => d.open")  # folded
    transcript.locator("summary").click()
    assert "Review the attached support request 1" in transcript.inner_text()
    previous = page.locator(f'.run[data-run="{workspace.run_ids[0]}"] .previous')
    previous.locator("summary").click()
    assert "Too long last time." in previous.inner_text() and "iteration 1." in previous.inner_text()
    origin = base(site).rstrip("/")
    assert all(u.startswith((origin, "data:")) for u in page.requests), page.requests  # nothing left the machine


def test_error_run_and_keyboard_navigation(page, site, workspace):
    open_case(page, site)
    keys = workspace.cases
    page.keyboard.press("ArrowRight")
    page.wait_for_selector(f'#case article[data-case="{keys[1]}"]')
    assert page.inner_text("#position") == f"Case 2 of {len(keys)}"
    error = page.locator(f'.run[data-run="{workspace.error_run}"]')
    assert "agent timed out after 600 s" in error.inner_text() and error.locator(".badge.err").count() == 1
    page.keyboard.press("j")
    page.wait_for_selector(f'#case article[data-case="{keys[2]}"]')
    page.keyboard.press("ArrowLeft")
    page.wait_for_selector(f'#case article[data-case="{keys[1]}"]')
    page.keyboard.press("k")
    page.keyboard.press("ArrowLeft")  # already at the first case: stays
    page.wait_for_selector(f'#case article[data-case="{keys[0]}"]')
    page.locator("textarea[data-run]").first.click()
    page.keyboard.press("ArrowRight")  # typing in a feedback box does not navigate
    page.wait_for_timeout(200)
    assert page.get_attribute("#case article", "data-case") == keys[0]
    page.reload()  # the case is in the address
    page.wait_for_selector(f'#case article[data-case="{keys[0]}"]')
    page.click("#tab-benchmark")
    page.evaluate("k => { location.hash = '#case=' + encodeURIComponent(k); }", keys[2])  # a link to a case
    page.wait_for_selector(f'#case article[data-case="{keys[2]}"]')
    assert page.inner_text("#position") == f"Case 3 of {len(keys)}" and page.is_visible("#panel-outputs")
    page.evaluate("() => { location.hash = '#case=%E0%A4%A'; }")  # a broken address changes nothing
    page.wait_for_timeout(200)
    assert page.get_attribute("#case article", "data-case") == keys[2]
    page.goto("about:blank")
    page.goto(site + "#case=%E0%A4%A")  # opened with a broken address: the first case, no script error
    page.wait_for_selector(f'#case article[data-case="{keys[0]}"]')


def test_benchmark_numbers_match_benchmark_json(page, site, workspace, artifacts):
    bench = read(workspace.iteration / "benchmark.json")
    open_case(page, site)
    page.click("#tab-benchmark")
    page.wait_for_selector("#run-summary")
    summary = bench["run_summary"]
    for index, arm in enumerate(workspace.arms):
        cell = page.locator('#run-summary tr[data-metric="Pass rate"] td').nth(index)
        stat = summary[arm]["pass_rate"]
        assert cell.locator(".mean").inner_text() == f"{stat['mean'] * 100:.1f}%"
        assert cell.locator(".sd").inner_text() == f"{stat['stddev'] * 100:.1f}%"
        tokens = page.locator('#run-summary tr[data-metric="Tokens"] td').nth(index)
        assert tokens.locator(".mean").inner_text() == f"{round(summary[arm]['tokens']['mean']):,}"
    assert page.inner_text('#run-summary tr[data-metric="Pass rate"] td.delta') == \
        f"{summary['delta']['pass_rate'] * 100:+.1f} pp"
    errors = page.locator("#run-summary td.errors").all_inner_texts()
    assert errors == ["8 (0 errors)", "8 (1 errors)"]
    d = bench["statistics"]["pass_rate_delta"]
    assert page.inner_text("#delta-estimate .ci") == f"[{d['ci_low'] * 100:+.1f} pp, {d['ci_high'] * 100:+.1f} pp]"
    assert page.inner_text("#delta-estimate .p-value") == f"p = {d['p_value']:.4f}"
    ab = bench["comparison"]
    assert [page.inner_text(f"#ab-summary .{k}") for k in ("wins", "ties", "losses")] == \
        [str(ab["wins"]), str(ab["ties"]), str(ab["losses"])]
    assert page.locator("#pass-rate-chart rect.bar").count() == len(workspace.cases) * len(workspace.arms)
    width = float(page.locator("#pass-rate-chart rect.bar").first.get_attribute("width"))
    rates = [r["result"]["pass_rate"] for r in bench["runs"]
             if str(r["eval_id"]) == workspace.cases[0] and r["configuration"] == "with_skill"]
    assert width == pytest.approx(sum(rates) / len(rates) * 420, abs=0.1)
    grid = page.locator("#assertion-grid tbody tr")
    assert grid.count() == len(workspace.cases) * 3
    expected = []
    for arm in workspace.arms:
        for k in (1, 2):
            entry = next(r for r in bench["runs"] if str(r["eval_id"]) == workspace.cases[0]
                         and r["configuration"] == arm and r["run_number"] == k)
            expected.append("✓" if entry["expectations"][0]["passed"] else "✗")
    assert grid.first.locator("td.cell").all_inner_texts() == expected
    assert page.locator("#non-discriminating tbody tr").count() == len(bench["non_discriminating"])
    page.screenshot(path=str(artifacts / "benchmark.png"), full_page=True)


def test_routing_view(page, site, workspace, artifacts):
    results = read(workspace.root / "routing-1" / "routing_results.json")
    open_case(page, site)
    page.click("#tab-routing")
    page.wait_for_selector("#routing-metrics")
    metrics = results["metrics"]
    for name in ("precision", "recall", "f1", "accuracy"):
        assert page.inner_text(f"#routing-metrics tr.overall .{name}") == f"{metrics[name] * 100:.1f}%"
    rows = page.locator("#routing-queries tbody tr")
    assert rows.count() == len(results["queries"])
    for index, query in enumerate(results["queries"]):
        row = rows.nth(index)
        assert query["query"] in row.locator(".query").inner_text()
        assert row.locator(".rate-value").inner_text() == f"{query['trigger_rate'] * 100:.1f}%"
        # triggers over the runs without error, as the rate is computed
        assert row.locator(".triggers").inner_text() == f"{query['triggers']} / {query['runs'] - query['errors']}"
        assert row.locator(".verdict").inner_text() == ("pass" if query["passed"] else "fail")
    # query 3's run 2 timed out: shown as such with its reason, never as "not triggered"
    error_run = page.locator('tr[data-query="3"] li.routing-run[data-run="2"]')
    assert error_run.locator(".run-state").inner_text() == "timed out"
    assert error_run.locator(".run-error").inner_text() == results["queries"][2]["run_results"][1]["error"]
    assert page.locator('tr[data-query="3"] li.routing-run .run-state').all_inner_texts() == \
        ["not triggered", "timed out", "not triggered"]
    # query 2 has no run_results: its three run folders are found, transcripts only
    assert page.locator('tr[data-query="2"] li.routing-run .run-state').all_inner_texts() == ["transcript only"] * 3
    # a transcript is fetched when unfolded
    transcript = page.locator('tr[data-query="1"] li.routing-run[data-run="2"] details.lazy')
    assert transcript.locator(".events").count() == 0
    transcript.locator("summary").click()
    transcript.locator(".ev-skill").wait_for()
    assert "Done with query 1, run 2." in transcript.inner_text()
    page.screenshot(path=str(artifacts / "routing.png"), full_page=True)


def test_feedback_is_saved_to_disk_and_loads_back(page, site, workspace, artifacts):
    open_case(page, site)
    run = workspace.run_ids[1]
    box = page.locator(f'textarea[data-run="{run}"]')
    box.fill("The answer misses the refund deadline.")
    page.wait_for_selector(f'.fb-state[data-run="{run}"]:text("(saved)")')
    reviews = {r["run_id"]: r for r in read(workspace.iteration / "feedback.json")["reviews"]}
    assert reviews[run]["feedback"] == "The answer misses the refund deadline." and reviews[run]["timestamp"]
    page.locator("#next").click()  # a second case, a second review
    page.wait_for_selector(f'#case article[data-case="{workspace.cases[1]}"]')
    other = f"eval-{workspace.cases[1]}-without_skill-run-1"
    page.locator(f'textarea[data-run="{other}"]').type("Good.")
    page.locator("#prev").click()  # leaving the case saves at once
    page.wait_for_selector(f'#case article[data-case="{workspace.cases[0]}"]')
    page.wait_for_function("() => document.getElementById('save-state').textContent.includes('All feedback saved')")
    saved = {r["run_id"]: r["feedback"] for r in read(workspace.iteration / "feedback.json")["reviews"]}
    assert saved[other] == "Good."
    page.reload()
    page.wait_for_selector("#case article")
    assert page.locator(f'textarea[data-run="{run}"]').input_value() == "The answer misses the refund deadline."
    page.click("#mark-complete")
    page.wait_for_selector("#review-status:text('review complete')")
    assert read(workspace.iteration / "feedback.json")["status"] == "complete"
    page.locator(f'textarea[data-run="{run}"]').scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "feedback.png"))
    page.click("#mark-complete")
    page.wait_for_selector("#review-status:text('review in progress')")
    assert read(workspace.iteration / "feedback.json")["status"] == "in_progress"


def assert_nothing_ran(page: Any) -> None:
    assert page.evaluate("window.__pwned") is None
    assert page.evaluate("window.__violations") == []
    assert page.locator("[onerror]").count() == 0
    assert page.locator("script").count() in (2, 3)  # the page's own: config, (data,) viewer.js


def open_every_detail(page: Any) -> None:
    """Unfold every ``<details>`` and wait until those loaded on demand have their content."""
    page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    page.wait_for_function("() => [...document.querySelectorAll('details[data-detail]')]"
                           ".every(d => d.dataset.loaded === 'yes')")


def test_injected_script_never_runs(browser, tmp_path, artifacts):
    made = make_workspace(tmp_path / "ws", cases=2, runs=1, iterations=1, hostile=True)
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.add_init_script(WATCH)
    from eval_skills.viewer import open_workspace_source

    with served(open_workspace_source(made.root)) as url:
        page.goto(with_token(url))
        page.wait_for_selector("#case article")
        keys = page_cases(page)
        assert sorted(keys) == sorted(made.cases)
        for index, key in enumerate(keys):
            page.click(f'.case-link[data-index="{index}"]')
            wait_case(page, key)
            page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
            assert_nothing_ran(page)
            if "<" in key:
                assert page.inner_text("#case .case-id") == key
                response = page.locator(".run.arm-with_skill .response").first.inner_text()
                assert "<script>window.__pwned = 1</script>" in response  # shown as text
                page.screenshot(path=str(artifacts / "injection.png"), full_page=True)
        for tab in ("benchmark", "routing"):
            page.click(f"#tab-{tab}")
            page.wait_for_selector(f"#panel-{tab} > div")
            assert_nothing_ran(page)
        open_every_detail(page)  # the routing runs' transcripts, fetched as they unfold
        assert_nothing_ran(page)
        assert HOSTILE.split(">")[0] in page.inner_text("#panel-routing")
    context.close()


def test_static_page_works_offline_and_downloads_feedback(browser, tmp_path, workspace, artifacts):
    from eval_skills.viewer import open_workspace_source, write_static

    hostile = make_workspace(tmp_path / "ws", cases=2, runs=1, iterations=1, hostile=True)
    feedback = hostile.iteration / "feedback.json"
    earlier = json.loads(feedback.read_text())
    earlier["reviews"].append({"run_id": "eval-gone-with_skill-run-1", "feedback": "kept",
                               "timestamp": "2026-01-02T03:04:05+00:00", "reviewer": "ana"})
    feedback.write_text(json.dumps(earlier))
    out = write_static(open_workspace_source(hostile.root), tmp_path / "review.html")
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
    page = context.new_page()
    page.add_init_script(WATCH)
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto(out.as_uri())
    page.wait_for_selector("#case article")
    keys = page_cases(page)
    page.keyboard.press("ArrowRight")
    wait_case(page, keys[1])
    page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    assert_nothing_ran(page)
    page.locator(".run.arm-with_skill textarea").first.fill("Offline review.")
    run = f"eval-{keys[1]}-with_skill-run-1"
    page.click("#tab-benchmark")
    page.wait_for_selector("#run-summary")
    page.click("#tab-routing")
    page.wait_for_selector("#routing-queries")
    open_every_detail(page)  # the runs' transcripts are in the page too
    assert "Done with query 3, run 3." in page.inner_text('tr[data-query="3"] li.routing-run[data-run="3"]')
    assert_nothing_ran(page)
    page.click("#tab-outputs")
    with page.expect_download() as download:
        page.click("#download-feedback")
    saved = json.loads(Path(download.value.path()).read_text())
    assert download.value.suggested_filename == "feedback.json"
    assert {r["run_id"]: r["feedback"] for r in saved["reviews"]}[run] == "Offline review."
    assert [r["run_id"] for r in saved["reviews"]][-1] == "eval-gone-with_skill-run-1"  # a review of a run gone
    assert saved["reviews"][-1] == earlier["reviews"][-1]  # untouched: its time and every field kept
    stamps = {r["run_id"]: r["timestamp"] for r in saved["reviews"]}
    before = {r["run_id"]: r.get("timestamp") for r in earlier["reviews"]}
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", stamps[run])  # stamped when downloaded, as served
    assert {k: v for k, v in stamps.items() if k != run} == {k: before.get(k) for k in stamps if k != run}
    assert sorted(r["run_id"] for r in saved["reviews"][:-1]) == sorted(hostile.run_ids)
    assert saved["status"] == "in_progress"
    with page.expect_download() as download:
        page.click("#mark-complete")
    assert json.loads(Path(download.value.path()).read_text())["status"] == "complete"
    assert all(u.startswith(("file:", "data:", "blob:")) for u in requests), requests
    assert_nothing_ran(page)
    page.screenshot(path=str(artifacts / "static.png"))
    context.close()


def test_tool_skill_reports_side_by_side(browser, tmp_path, artifacts):
    report = make_reports(tmp_path / "reports", hostile=True)
    store = tmp_path / "s.db"
    old, new = make_store(store)
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.add_init_script(WATCH)
    from eval_skills.viewer import from_report_files

    with served(from_report_files([report])) as url:
        page.goto(with_token(url))
        page.wait_for_selector("#case article")
        assert page.locator(".arm-head").all_inner_texts() == ["alpha 1.0.0", "beta 2.0.0"]
        check_legend(page, ["alpha 1.0.0", "beta 2.0.0"])
        assert_nothing_ran(page)
        page.keyboard.press("ArrowRight")
        page.wait_for_selector('#case article[data-case="task-1"]')
        statuses = page.locator(".tool-run .badge.status").all_inner_texts()
        data = json.loads(report.read_text())
        expected = [next(r["status"] for r in rep["taskResults"] if r["taskId"] == "task-1" and r["runId"] == k)
                    for k in (1, 2) for rep in data]
        assert statuses == expected
        page.screenshot(path=str(artifacts / "tool-outputs.png"))
        assert page.locator("#download-feedback, #mark-complete, textarea").count() == 0
    with view_process(store, "--evaluation", old[:8], "--evaluation", new) as (url, _):
        page.goto(url)
        page.wait_for_selector("#case article")
        heads = page.locator(".arm-head").all_inner_texts()
        assert heads[0].startswith(old[:8]) and heads[0].endswith("alpha 1.0.0")
        assert heads[1].startswith(new[:8]) and heads[1].endswith("alpha 1.1.0")
        page.click("#tab-benchmark")
        page.wait_for_selector("#tool-summary")
        assert page.locator('#tool-summary tr[data-metric="completion"] td').all_inner_texts() == ["33.3%", "100.0%"]
        page.screenshot(path=str(artifacts / "tool-compare.png"), full_page=True)
    context.close()
    shutil.rmtree(tmp_path / "reports", ignore_errors=True)


def test_routing_written_by_the_routing_command(page, tmp_path, artifacts):
    """``eval-skills routing`` with the fake agent, then ``eval-skills view`` on the workspace it wrote: every
    figure of the Routing tab is read from that routing_results.json, every run's transcript is found."""
    from fakes import FAKE_AGENT
    from test_routing import QUERIES, SCRIPT, write_skill

    queries = [*QUERIES, {"query": f"check invoice {HOSTILE}", "should_trigger": True, "invocation_type": "hostile"}]
    skill = write_skill(tmp_path / "invoice-check", "Checks invoice totals, VAT and due dates. Use when asked to "
                        "check an invoice.", queries)
    write_skill(tmp_path / "others" / "receipt-scan", "Reads scanned receipts. Use for receipts.")
    # query 2 ("validate this invoice VAT") misses in its second run: a rate of 1/2, a Wilson interval
    script = {**SCRIPT, "state_dir": str(tmp_path / "state"),
              "cases": [{"match": "VAT", "runs": [2], "trigger": "no such words"}, *SCRIPT["cases"]]}
    workspace = tmp_path / "ws"
    out = subprocess.run(
        [sys.executable, "-m", "eval_skills", "routing", "--skill-path", skill, "--distractors", tmp_path / "others",
         "--agent-cmd", f"python {FAKE_AGENT} --prompt-file {{prompt_file}}", "--agent-output", "events",
         "--runs", "2", "--workspace", workspace, "--no-store", "--json"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
        env={**os.environ, "FAKE_AGENT_JSON": json.dumps(script)})
    assert out.returncode == 0, out.stderr
    results = read(workspace / "routing-1" / "routing_results.json")
    queries_by_index = {q["index"]: q for q in results["queries"]}
    assert queries_by_index[2]["trigger_rate"] == 0.5 and queries_by_index[7]["errors"] == 2  # as planned

    with view_process(workspace) as (url, _):
        page.goto(url)
        page.wait_for_selector("#routing-metrics")  # a routing-only workspace opens on its Routing tab
        assert page.inner_text("h1") == "Review: invoice-check"
        m = results["metrics"]
        for name in ("precision", "recall", "f1", "accuracy"):
            assert page.inner_text(f"#routing-metrics tr.overall .{name}") == f"{m[name] * 100:.1f}%"
        for name in ("tp", "fp", "fn", "tn", "queries", "unscored"):
            assert page.inner_text(f"#routing-metrics tr.overall .{name}") == str(m[name])
        types = page.locator("#routing-metrics tr.by-type th").all_inner_texts()
        assert types == sorted(m["by_invocation_type"])
        for row, name in zip(page.locator("#routing-metrics tr.by-type").all(), types, strict=True):
            assert row.locator(".f1").inner_text() == \
                ("n/a" if m["by_invocation_type"][name]["f1"] is None else
                 f"{m['by_invocation_type'][name]['f1'] * 100:.1f}%")
        facts = dict(zip(page.locator(".routing dl.facts dt").all_inner_texts(),
                         page.locator(".routing dl.facts dd").all_inner_texts(), strict=True))
        assert facts["distractor skills"] == "receipt-scan" and facts["runs per query"] == "2"
        assert facts["runs in error"] == str(results["metadata"]["error_runs"]) == "2"

        rows = page.locator("#routing-queries tbody tr")
        assert rows.count() == len(queries)
        for query in results["queries"]:
            row = page.locator(f'#routing-queries tr[data-query="{query["index"]}"]')
            assert row.locator(".query-text").inner_text() == query["query"]
            rate = query["trigger_rate"]
            assert row.locator(".rate-value").inner_text() == ("n/a" if rate is None else f"{rate * 100:.1f}%")
            ci = query["trigger_rate_ci"]
            assert row.locator(".ci-values").all_inner_texts() == \
                ([] if ci is None else [f"[{ci[0] * 100:.1f}%, {ci[1] * 100:.1f}%]"])
            assert row.locator(".triggers").inner_text() == f"{query['triggers']} / {query['runs'] - query['errors']}"
            assert row.locator(".errors").inner_text() == str(query["errors"])
            verdict = "n/a" if query["passed"] is None else "pass" if query["passed"] else "fail"
            assert row.locator(".verdict").inner_text() == verdict
            assert row.locator(".distractors").inner_text() == \
                ", ".join(f"{k} ×{v}" for k, v in query["distractors_invoked"].items())
            states = row.locator(".run-state").all_inner_texts()
            assert states == ["error" if r["triggered"] is None else "triggered" if r["triggered"] else
                              "not triggered" for r in query["run_results"]]
            errors = row.locator(".run-error").all_inner_texts()
            assert errors == [r["error"] for r in query["run_results"] if r["error"]]
        assert "crashed on purpose" in page.inner_text('tr[data-query="7"] .run-error >> nth=0')
        # the Wilson interval of 1 in 2 runs, by hand: centre 0.5, half-width 1.96 sqrt(0.125 + 0.2401) / 2.9208
        assert queries_by_index[2]["trigger_rate_ci"] == [0.0945, 0.9055]
        assert page.inner_text('tr[data-query="2"] .ci-values') == f"[{0.0945 * 100:.1f}%, {0.9055 * 100:.1f}%]"
        assert page.locator("details.lazy .events").count() == 0  # no transcript loaded before it is unfolded
        open_every_detail(page)
        assert page.locator("details.lazy").count() == 2 * len(queries)  # every run's transcript was found
        invoked = page.locator('tr[data-query="2"] li.routing-run[data-run="1"] .ev-skill').inner_text()
        assert "invoice-check" in invoked
        assert "receipt-scan" in page.inner_text('tr[data-query="5"] li.routing-run[data-run="1"] .events')
        assert_nothing_ran(page)
        page.screenshot(path=str(artifacts / "routing-from-the-command.png"), full_page=True)
        origin = base(url).rstrip("/")
        assert all(u.startswith((origin, "data:")) for u in page.requests), page.requests
    served_tab = page.inner_text("#panel-routing")

    static = tmp_path / "routing.html"  # the same in one file, every transcript inside
    out = subprocess.run([sys.executable, "-m", "eval_skills", "view", workspace, "--static", static],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    page.goto(static.as_uri())
    page.wait_for_selector("#routing-metrics")
    open_every_detail(page)
    assert page.inner_text("#panel-routing") == served_tab
    assert page.locator("#download-feedback, #mark-complete, textarea").count() == 0  # routing takes no feedback
    assert_nothing_ran(page)


EVERYWHERE = HOSTILE + ' "><svg onload="window.__pwned=9"> {{7*7}} ${7*7} [x](javascript:window.__pwned=8)'


def poison_everything(root: Path, iteration: Path) -> str:
    """Hostile text in every file the page reads beyond what ``make_workspace(hostile=True)`` writes: feedback
    of both iterations, tool inputs, assertion texts, case names, an arm folder's name, benchmark.json's
    metadata and notes, and every field of routing_results.json. Returns the hostile arm's name."""
    arm = 'x"><img src=x onerror="window.__pwned=5">'
    for case in sorted(iteration.glob("eval-*")):
        shutil.copytree(case / "with_skill", case / arm)
        run = case / arm / "run-1"
        events = [{"type": "tool_call", "id": "c1", "name": EVERYWHERE, "input": {"cmd": EVERYWHERE},
                   "result": {"out": EVERYWHERE}, "is_error": True},
                  {"type": "skill", "skill": EVERYWHERE, "detected_by": EVERYWHERE},
                  {"type": "message", "role": EVERYWHERE, "text": EVERYWHERE},
                  {"type": "final", "text": EVERYWHERE}]
        (run / "transcript.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
        meta = read(case / "eval_metadata.json")
        meta.update(eval_name=EVERYWHERE, assertions=[EVERYWHERE], expected_output=EVERYWHERE)
        (case / "eval_metadata.json").write_text(json.dumps(meta))
        grading = read(run / "grading.json")
        for e in grading["expectations"]:
            e.update(text=EVERYWHERE, evidence=EVERYWHERE)
        (run / "grading.json").write_text(json.dumps(grading))
    for folder in (root / "iteration-1", iteration):
        feedback = read(folder / "feedback.json")
        for review in feedback["reviews"]:
            review["feedback"] = EVERYWHERE + "</textarea><script>window.__pwned=7</script>"
        (folder / "feedback.json").write_text(json.dumps(feedback))
    bench = read(iteration / "benchmark.json")
    bench["metadata"].update(agent=EVERYWHERE, model=EVERYWHERE)
    bench["notes"] = [EVERYWHERE]
    bench["non_discriminating"][0].update(assertion=EVERYWHERE, kind=EVERYWHERE)
    (iteration / "benchmark.json").write_text(json.dumps(bench))
    routing = root / "routing-1" / "routing_results.json"
    results = read(routing)
    results["metadata"].update(skill_name=EVERYWHERE, agent=EVERYWHERE, description=EVERYWHERE,
                               distractors=[{"name": EVERYWHERE, "path": EVERYWHERE}], extra=EVERYWHERE)
    for query in results["queries"]:
        query.update(invocation_type=EVERYWHERE, distractors_invoked={EVERYWHERE: 1})
        for record in query["run_results"]:
            record.update(skills_invoked=[EVERYWHERE], error=EVERYWHERE)
    results["metrics"]["undefined"] = {"precision": EVERYWHERE}
    results["metrics"]["by_invocation_type"] = {EVERYWHERE: results["metrics"]["by_invocation_type"]["explicit"]}
    routing.write_text(json.dumps(results))
    return arm


def test_hostile_text_in_every_file_runs_nothing(browser, tmp_path):
    made = make_workspace(tmp_path / "ws", cases=2, runs=1, iterations=2, hostile=True)
    arm = poison_everything(made.root, made.iteration)
    static = tmp_path / "review.html"
    out = subprocess.run([sys.executable, "-m", "eval_skills", "view", made.root, "--static", static],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.add_init_script(WATCH)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    with view_process(made.root) as (url, _):
        for address in (url, static.as_uri()):
            page.goto(address)
            page.wait_for_selector("#case article")
            for index, key in enumerate(page_cases(page)):
                page.click(f'.case-link[data-index="{index}"]')
                wait_case(page, key)
                open_every_detail(page)
                assert_nothing_ran(page)
                # earlier feedback comes back into its box as text
                assert page.locator("textarea[data-run]").first.input_value().startswith(EVERYWHERE)
                texts = page.evaluate("r => [...document.querySelectorAll('.run')].filter(e => e.dataset.run === r)"
                                      ".map(e => e.querySelector('.exp-text').textContent)", f"eval-{key}-{arm}-run-1")
                assert texts == [EVERYWHERE]  # the hostile arm's run, its assertion shown as text
                if address == url and index == 0:  # feedback on the hostile arm's run is saved under its id
                    run = f"eval-{key}-{arm}-run-1"
                    at = page.evaluate("r => [...document.querySelectorAll('textarea[data-run]')]"
                                       ".findIndex(e => e.dataset.run === r)", run)
                    page.locator("textarea[data-run]").nth(at).fill("Reviewed.")
                    page.wait_for_function("() => document.getElementById('save-state').textContent"
                                           ".includes('All feedback saved')")
                    saved = {r["run_id"]: r["feedback"] for r in read(made.iteration / "feedback.json")["reviews"]}
                    assert saved[run] == "Reviewed."
            for tab in ("benchmark", "routing"):
                page.click(f"#tab-{tab}")
                page.wait_for_selector(f"#panel-{tab} > div")
                open_every_detail(page)
                assert_nothing_ran(page)
            assert EVERYWHERE in page.inner_text("#routing-metrics")
    assert errors == []
    context.close()


def test_a_real_evaluation_of_five_skills_and_the_store(page, tmp_path, artifacts):
    """``eval-skills eval`` of the five example skills, then ``eval-skills view`` of its report and of the store
    holding it and a second evaluation: every run sits in its skill's column, as the report says."""
    examples = Path(__file__).resolve().parents[1] / "examples" / "skills"
    names = ["calculator", "roman", "slugify", "capitals", "units"]
    common = [sys.executable, "-m", "eval_skills", "eval", "--benchmark", "coding-easy", "--store", tmp_path / "s.db",
              "--output-dir", tmp_path / "reports", "--json"]
    out = subprocess.run([*common, "--skills", *[examples / n for n in names], "--runs", "2"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr
    report_file = next((tmp_path / "reports").glob("*.json"))
    report = read(report_file)
    heads = [f"{r['skillId']} {r['skillVersion']}" for r in report]
    assert sorted(h.split()[0] for h in heads) == sorted(names)
    with view_process(report_file) as (url, _):
        page.goto(url)
        page.wait_for_selector("#case article")
        assert page.locator(".arm-head").all_inner_texts() == heads
        # five pass-rate marks beside each task: its name still shows whole (the marks go below)
        assert page.evaluate("() => [...document.querySelectorAll('.case-key')]"
                             ".every(e => e.scrollWidth <= e.clientWidth)")
        for key in ("math_001", "reverse_003"):
            page.goto(f"{url}#case={key}")
            page.reload()
            wait_case(page, key)
            head_boxes = [h.bounding_box() for h in page.locator(".arm-head").all()]
            runs = page.locator(".tool-run")
            assert runs.count() == 2 * len(report)
            for index in range(runs.count()):
                run, column = runs.nth(index), index % len(report)
                box = run.bounding_box()
                assert box["x"] == head_boxes[column]["x"] and box["width"] == head_boxes[column]["width"]
                assert run.locator(".column-name").inner_text() == heads[column]
                entry = next(r for r in report[column]["taskResults"] if r["taskId"] == key
                             and r["runId"] == index // len(report) + 1)
                assert run.locator(".badge.status").inner_text() == entry["status"]
        page.screenshot(path=str(artifacts / "tool-five-skills.png"))
        page.click("#tab-benchmark")
        page.wait_for_selector("#tool-summary")
        assert page.locator('#tool-summary tr[data-metric="completion"] td').all_inner_texts() == \
            [f"{r['summary']['completionRate'] * 100:.1f}%" for r in report]
    out = subprocess.run([*common, "--skills", examples / "calculator"], cwd=tmp_path, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    import sqlite3

    with sqlite3.connect(tmp_path / "s.db") as db:
        first, second = [row[0] for row in db.execute("SELECT id FROM evaluations ORDER BY started_at")]
    with view_process(tmp_path / "s.db", "--evaluation", first[:8], "--evaluation", "latest") as (url, _):
        page.goto(url)
        page.wait_for_selector("#case article")
        columns = page.locator(".arm-head").all_inner_texts()
        assert len(columns) == 6 and columns[0].startswith(first[:8]) and columns[5].startswith(second[:8])
        assert columns[5].endswith("calculator 1.0.0")
        runs = page.locator(".tool-run")  # math_001: run 1 of six columns, then run 2 of the first five
        assert runs.count() == 11 and runs.nth(5).locator(".column-name").inner_text() == columns[5]
        assert runs.nth(5).bounding_box()["x"] == page.locator(".arm-head").nth(5).bounding_box()["x"]
        assert runs.nth(5).locator(".badge.status").inner_text() == "pass"
