"""Marks on the judge's grades in a real browser (Debian's Chromium driven by Playwright) against a real
``eval-skills view`` of an iteration written by the real ``eval-skills paired``: clicked, saved to feedback.json,
loaded back, counted on the Benchmark tab; and the page of an earlier grading version."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from paired_data import ASSERTIONS, judge_args
from regrade_data import make_iteration, regrade
from viewer_server import view_process

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]

if not os.access(CHROMIUM, os.X_OK):
    pytest.skip(f"{CHROMIUM} is not installed (apt-get install -y chromium); browser tests skipped",
                allow_module_level=True)
playwright_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install "
                                                                   "'.[test]'); browser tests skipped")


def test_marking_the_judge_right_and_wrong_in_the_browser(tmp_path: Path) -> None:
    skill, workspace, iteration = make_iteration(tmp_path, cases=(1, 5))
    evals = json.loads((skill / "evals" / "evals.json").read_text())
    evals["evals"][0]["assertions"].append('It mentions "VAT"')
    revised = tmp_path / "revised.json"
    revised.write_text(json.dumps(evals))
    assert regrade(workspace, "--evals", revised, *judge_args(), "--no-store", cwd=tmp_path).returncode == 0
    run = "eval-1-with_skill-run-1"
    with playwright_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            with view_process(workspace) as (url, _):
                page = browser.new_page()
                errors: list[str] = []
                page.on("pageerror", lambda e: errors.append(str(e)))
                page.goto(url)
                page.wait_for_selector("#case article")
                marks = page.locator(f'.grade-mark[data-run="{run}"]')
                assert marks.count() == 3  # the judge's three grades of version 2; no buttons on the checks
                vat = marks.nth(1)
                assert vat.get_attribute("data-text") == ASSERTIONS[1] and vat.get_attribute("data-version") == "2"
                vat.locator(".mark-wrong").click()
                vat.locator(".mark-state:text('marked wrong')").wait_for()
                marks.nth(0).locator(".mark-right").click()
                marks.nth(0).locator(".mark-state:text('marked right')").wait_for()
                reviews = {r["run_id"]: r for r in json.loads((iteration / "feedback.json").read_text())["reviews"]}
                saved = {m["text"]: m for m in reviews[run]["grade_marks"]}
                assert saved[ASSERTIONS[1]]["right"] is False and saved[ASSERTIONS[1]]["passed"] is False
                assert saved[ASSERTIONS[1]]["grading_version"] == 2
                assert saved[ASSERTIONS[0]]["right"] is True and saved[ASSERTIONS[0]]["passed"] is True
                page.reload()
                page.wait_for_selector("#case article")
                assert marks.nth(1).locator(".mark-wrong").get_attribute("aria-pressed") == "true"
                assert marks.nth(0).locator(".mark-right").get_attribute("aria-pressed") == "true"
                marks.nth(0).locator(".mark-right").click()  # pressed again: the mark is taken back
                marks.nth(0).locator(".mark-right[aria-pressed='false']").wait_for()
                page.click("#tab-benchmark")
                page.wait_for_selector("#judge-trust")
                assert page.locator(".trust-marks").inner_text() == "1"
                assert page.locator("#trust-assertions tbody tr").count() == 1
                assert errors == []
            with view_process(workspace, "--grading-version", "1") as (url, _):  # the page of version 1
                page = browser.new_page()
                page.goto(url)
                page.wait_for_selector("#case article")
                assert page.locator(f'.grade-mark[data-run="{run}"]').count() == 2
                assert 'It mentions "VAT"' not in page.locator("#case article").inner_text()
        finally:
            browser.close()
