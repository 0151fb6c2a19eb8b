"""The review page in a real browser: Debian's Chromium driven by Playwright, against ``eval-skills view``.

One browser for the module; the servers are real ``eval-skills view`` processes on workspaces written by
``review_data``. Every number checked on the page is read from the workspace's files. A screenshot of each
view is saved under ``tests/artifacts/viewer/``.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from review_data import HOSTILE, make_reports, make_store, make_workspace
from viewer_server import served, view_process

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
    page.screenshot(path=str(artifacts / "outputs.png"))
    transcript = page.locator(".run .transcript").first
    assert not transcript.evaluate("d => d.open")  # folded
    transcript.locator("summary").click()
    assert "Review the attached support request 1" in transcript.inner_text()
    previous = page.locator(f'.run[data-run="{workspace.run_ids[0]}"] .previous')
    previous.locator("summary").click()
    assert "Too long last time." in previous.inner_text() and "iteration 1." in previous.inner_text()
    origin = site.rstrip("/")
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
        assert row.locator(".triggers").inner_text() == f"{query['triggers']} / {query['runs']}"
        assert row.locator(".verdict").inner_text() == ("pass" if query["passed"] else "fail")
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


def test_injected_script_never_runs(browser, tmp_path, artifacts):
    made = make_workspace(tmp_path / "ws", cases=2, runs=1, iterations=1, hostile=True)
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.add_init_script(WATCH)
    from eval_skills.viewer import open_workspace_source

    with served(open_workspace_source(made.root)) as url:
        page.goto(url)
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
        assert HOSTILE.split(">")[0] in page.inner_text("#panel-routing")
    context.close()


def test_static_page_works_offline_and_downloads_feedback(browser, tmp_path, workspace, artifacts):
    from eval_skills.viewer import open_workspace_source, write_static

    hostile = make_workspace(tmp_path / "ws", cases=2, runs=1, iterations=1, hostile=True)
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
    page.click("#tab-outputs")
    with page.expect_download() as download:
        page.click("#download-feedback")
    saved = json.loads(Path(download.value.path()).read_text())
    assert download.value.suggested_filename == "feedback.json"
    assert {r["run_id"]: r["feedback"] for r in saved["reviews"]}[run] == "Offline review."
    assert sorted(r["run_id"] for r in saved["reviews"]) == sorted(hostile.run_ids) and saved["status"] == "in_progress"
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
        page.goto(url)
        page.wait_for_selector("#case article")
        assert page.locator(".arm-head").all_inner_texts() == ["alpha 1.0.0", "beta 2.0.0"]
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
