"""The HTML report in a real browser (Debian's chromium, headless): it renders its charts and tables, its
filter works under its own Content-Security-Policy, nothing from a skill runs, and it fetches nothing.

The screenshot is kept in tests/artifacts/ (not committed) for a person to look at.
"""

from __future__ import annotations

import shutil
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from eval_skills.reports import write_reports
from eval_skills.results import TaskResult

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).parent / "artifacts"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]

pytestmark = pytest.mark.skipif(not CHROMIUM.exists() or shutil.which("chromium") is None,
                                reason="needs Debian's chromium at /usr/bin/chromium (apt-get install chromium)")


class Trap(BaseHTTPRequestHandler):
    hits: list[str] = []

    def do_GET(self) -> None:
        Trap.hits.append(self.path)
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


def hostile_reports(port: int) -> list[dict[str, Any]]:
    leak = f'<img src="http://127.0.0.1:{port}/img"><script>alert("xss")</script>'
    evil = '"><svg onload=alert(1)>'

    def result(task: str, status: str, score: float, latency: float, tags: list[str], **kw: Any) -> dict[str, Any]:
        data = TaskResult(task, kw.pop("skill", "calculator"), 1, status, score, latency, scorer_type="exact",  # type: ignore[arg-type]
                          **kw).to_json()
        return {**data, "tags": tags}

    calc = [result(f"t-{i}", "pass" if i % 4 else "fail", 1.0 if i % 4 else 0.0, 10.0 + i, ["math"],
                   output={"result": str(i)}, reason="exact match" if i % 4 else f"expected {i}") for i in range(12)]
    calc.append(result("t-evil", "error", 0.0, 99.0, ["string"], output={"result": leak}, error=leak))
    bad = [result("x-1", "timeout", 0.0, 3000.0, ["math"], skill=evil, error=f"timed out {leak}"),
           result("x-2", "pass", 1.0, 120.0, [], skill=evil, output=leak, reason=leak)]

    def report(skill: str, tasks: list[dict[str, Any]], completion: float, composite: float,
               lat: tuple[float, float, float]) -> dict[str, Any]:
        return {"skillId": skill, "skillVersion": "1.0.0", "benchmarkId": "coding-easy", "runs": 1,
                "timestamp": "2026-11-29T19:46:15.123Z",
                "summary": {"completionRate": completion, "partialScore": completion, "errorRate": 0.1,
                            "consistencyScore": None, "compositeScore": composite, "totalTasks": len(tasks)},
                "latency": {"p50Ms": lat[0], "p95Ms": lat[1], "p99Ms": lat[2]}, "taskResults": tasks}

    return [report("calculator", calc, 9 / 13, 0.81, (15.0, 21.0, 99.0)),
            report(evil, bad, 0.5, 0.42, (120.0, 3000.0, 3000.0))]


def test_html_report_in_chromium(tmp_path: Path) -> None:
    sync_api = pytest.importorskip("playwright.sync_api", reason="needs the test extra: pip install '.[test]'")
    server = ThreadingHTTPServer(("127.0.0.1", 0), Trap)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        (page_file,) = write_reports(hostile_reports(server.server_port), ["html"], tmp_path)
        requests: list[str] = []
        dialogs: list[str] = []
        console_errors: list[str] = []
        with sync_api.sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, headless=True)
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.on("request", lambda r: requests.append(r.url))
            page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            page.on("console", lambda m: console_errors.append(m.text) if m.type == "error" else None)
            page.goto(page_file.as_uri())
            page.wait_for_load_state("load")

            # charts: three inline SVGs, bars drawn to scale
            assert page.locator("svg.chart").count() == 3
            widths = page.locator("svg.chart").nth(0).locator("rect.bar").evaluate_all(
                "els => els.map(e => e.getBBox().width)")
            assert widths == pytest.approx([420 * 9 / 13, 420 * 0.5], abs=0.2)
            assert page.locator("svg.chart").nth(2).locator("rect.bar").count() == 6  # P50/P95/P99 x 2 skills
            # per-tag table and the task table
            assert page.locator("table.tags").count() == 2
            rows = page.locator("#tasks tbody tr")
            assert rows.count() == 15
            # the filter (the page's one script, allowed by its hash) works
            assert page.locator("#filters").is_visible()
            assert page.inner_text("#filter-count") == "15 of 15 task results shown"
            page.select_option("#filter-status", "fail")
            assert page.inner_text("#filter-count") == "3 of 15 task results shown"
            visible = page.locator("#tasks tbody tr:visible").all()
            assert all(row.get_attribute("data-status") == "fail" for row in visible)
            page.select_option("#filter-status", "")
            page.fill("#filter-text", "t-evil")
            assert page.locator("#tasks tbody tr:visible").count() == 1
            page.fill("#filter-text", "")
            page.select_option("#filter-skill", '"><svg onload=alert(1)>')
            assert page.locator("#tasks tbody tr:visible").count() == 2
            page.select_option("#filter-skill", "")
            # what the skill printed is shown as text, not run
            assert '<script>alert("xss")</script>' in page.inner_text("#tasks")
            assert page.locator("#tasks img").count() == 0 and page.locator("svg[onload]").count() == 0
            ARTIFACTS.mkdir(exist_ok=True)
            shot = ARTIFACTS / "html-report.png"
            page.screenshot(path=str(shot), full_page=True)
            browser.close()
        assert dialogs == []
        assert console_errors == []  # no CSP violation: the filter script ran, nothing else tried to
        assert [u for u in requests if not u.startswith(("file:", "data:"))] == []
        assert Trap.hits == []
        assert shot.stat().st_size > 20_000
    finally:
        server.shutdown()
