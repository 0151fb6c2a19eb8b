"""`eval-skills paired` writes a workspace, `eval-skills view` serves it, Chromium shows it: what the page shows
is read back and compared with the files the paired run wrote (grades with their evidence, tokens, time, error
runs, the previous iteration, the benchmark's numbers), a review typed in the page lands in that iteration's
feedback.json under the run id paired gave the run, and hostile text from the agent never runs."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from paired_data import paired
from test_paired_edges import AGENT, JUDGE, make_skill
from test_viewer_browser import ARGS, CHROMIUM, WATCH, assert_nothing_ran, playwright_api
from viewer_server import view_process

HOSTILE = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">'


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two iterations of the skill ``tally``: case 1 answered with hostile markup by the skill; case 2's baseline
    crashes, its stderr hostile too; a judged assertion and checks in both. A review of iteration 1 is saved."""
    root = tmp_path_factory.mktemp("paired-review")
    skill, script = make_skill(root, {
        "one": {"with": f"alpha beta gamma {HOSTILE}", "without": "alpha",
                "assertions": ['It names "gamma"']},
        "two": {"with": "alpha beta", "without": "x", "mode": "crash", "stderr": HOSTILE}})
    for iteration in (1, 2):
        out = paired("--skill-path", skill, *AGENT, *JUDGE, "--runs", 2, "--no-store", cwd=root,
                     script_file=script)
        assert out.returncode == 0, out.stderr
        if iteration == 1:
            path = root / "tally-workspace" / "iteration-1" / "feedback.json"
            feedback = json.loads(path.read_text())
            review = next(r for r in feedback["reviews"] if r["run_id"] == "eval-1-with_skill-run-2")
            review.update(feedback="Too much markup.", timestamp="2026-01-01T00:00:00Z")
            path.write_text(json.dumps(feedback))
    return root / "tally-workspace"


@pytest.fixture(scope="module")
def page(workspace: Path) -> Iterator[Any]:
    with view_process(workspace) as (url, _), playwright_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.add_init_script(WATCH)
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(url)
        page.wait_for_selector("#case article")
        yield page
        assert errors == []
        browser.close()


def read(path: Path) -> Any:
    return json.loads(path.read_text())


def test_the_page_shows_what_paired_wrote(page: Any, workspace: Path) -> None:
    iteration = workspace / "iteration-2"
    runs = sorted(p.parent for p in iteration.rglob("timing.json"))
    assert len(runs) == 8
    for case, key in ((0, "1"), (1, "2")):
        page.click(f'.case-link[data-index="{case}"]')
        page.wait_for_function("k => document.querySelector('#case article')?.dataset.case === k", arg=key)
        page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
        assert_nothing_ran(page)
        meta = read(iteration / f"eval-{key}" / "eval_metadata.json")
        assert meta["prompt"] in page.inner_text("#case .prompt")
        for run in (r for r in runs if r.parent.parent.name == f"eval-{key}"):
            arm, number = run.parent.name, int(run.name.removeprefix("run-"))
            run_id = f"eval-{key}-{arm}-run-{number}"
            cell = page.locator(f'.run[data-run="{run_id}"]')
            timing = read(run / "timing.json")
            about = "≈" if timing["token_measurement"] == "estimated" else ""
            assert cell.locator(".tokens").inner_text() == f"{about}{timing['total_tokens']:,} tokens"
            assert cell.locator(".time").inner_text() == f"{timing['total_duration_seconds']:.1f} s"
            if timing["status"] != "ok":  # an error run: no grading.json, its reason from timing.json
                assert not (run / "grading.json").exists()
                assert cell.locator(".badge.err").inner_text() == "error run"
                assert "exited with code 1" in cell.locator(".run-error").inner_text()
                assert HOSTILE in cell.locator(".run-error").inner_text()  # as text
                continue
            grading = read(run / "grading.json")
            s = grading["summary"]
            assert cell.locator(".badge.score").inner_text() == f"{s['passed']}/{s['total']} passed"
            shown = cell.locator(".expectation")
            assert shown.count() == len(grading["expectations"])
            for index, expectation in enumerate(grading["expectations"]):
                item = shown.nth(index)
                assert item.locator(".exp-text").inner_text() == expectation["text"]
                assert item.locator(".evidence").inner_text() == expectation["evidence"]
                assert item.get_attribute("class").split()[1] == ("pass" if expectation["passed"] else "fail")
            response = (run / "outputs" / "response.md").read_text()
            assert cell.locator(".response").first.inner_text().strip() == response.strip()
            previous = cell.locator(".previous")
            old = workspace / "iteration-1" / run.relative_to(iteration) / "outputs" / "response.md"
            assert old.read_text().strip() in previous.locator(".response").inner_text()
            if run_id == "eval-1-with_skill-run-2":
                assert previous.locator(".prev-feedback").inner_text() == "Feedback then: Too much markup."


def test_the_benchmark_tab_matches_benchmark_json(page: Any, workspace: Path) -> None:
    bench = read(workspace / "iteration-2" / "benchmark.json")
    page.click("#tab-benchmark")
    page.wait_for_selector("#run-summary")
    summary = bench["run_summary"]
    for index, arm in enumerate(("with_skill", "without_skill")):
        cell = page.locator('#run-summary tr[data-metric="Pass rate"] td').nth(index)
        stat = summary[arm]["pass_rate"]
        assert cell.locator(".mean").inner_text() == f"{stat['mean'] * 100:.1f}%"
        assert cell.locator(".sd").inner_text() == f"{stat['stddev'] * 100:.1f}%"
    assert page.locator("#run-summary td.errors").all_inner_texts() == [
        f"{summary[arm]['runs']} ({summary[arm]['errors']} errors)" for arm in ("with_skill", "without_skill")]
    d = bench["statistics"]["pass_rate_delta"]
    assert page.inner_text("#delta-estimate .estimate") == f"{d['estimate'] * 100:+.1f} pp"
    assert page.inner_text("#delta-estimate .p-value") == f"p = {d['p_value']:.4f}"
    design = bench["statistics"]["design"]  # the power analysis, as benchmark.json has it
    if design.get("minimum_detectable_effect") is not None:
        assert page.inner_text("#design .mde") == f"{design['minimum_detectable_effect'] * 100:+.1f} pp"
        assert page.inner_text("#design .underpowered") == (
            "underpowered" if design["underpowered"] else "powered enough")
    else:
        assert page.inner_text("#design") == design["note"]
    ab = bench["comparison"]
    assert [page.inner_text(f"#ab-summary .{k}") for k in ("wins", "ties", "losses")] == [
        str(ab["wins"]), str(ab["ties"]), str(ab["losses"])]
    grid = page.locator("#assertion-grid tbody tr")
    assert grid.count() == 4 + 3  # case 1: the judged assertion and three checks; case 2: three checks
    assert_nothing_ran(page)
    page.click("#tab-outputs")


def test_a_review_lands_in_the_iterations_feedback_json_under_pairs_run_id(page: Any, workspace: Path) -> None:
    iteration = workspace / "iteration-2"
    written = {r["run_id"] for r in read(iteration / "feedback.json")["reviews"]}
    folders = {f"{p.parent.parent.parent.name}-{p.parent.parent.name}-{p.parent.name}"
               for p in iteration.rglob("timing.json")}
    assert written == folders  # paired wrote one review per run, under the id of its folder
    page.click('.case-link[data-index="1"]')
    page.wait_for_function("() => document.querySelector('#case article')?.dataset.case === '2'")
    box = page.locator('textarea[data-run="eval-2-without_skill-run-2"]')
    box.fill("The agent crashed: check the key.")
    page.wait_for_selector('.fb-state[data-run="eval-2-without_skill-run-2"]:text("(saved)")')
    reviews = {r["run_id"]: r for r in read(iteration / "feedback.json")["reviews"]}
    assert reviews["eval-2-without_skill-run-2"]["feedback"] == "The agent crashed: check the key."
    assert set(reviews) == written  # no review under another id
    before = {r["run_id"]: r["feedback"] for r in read(workspace / "iteration-1" / "feedback.json")["reviews"]}
    assert before["eval-1-with_skill-run-2"] == "Too much markup." and before["eval-2-without_skill-run-2"] == ""
