"""The review page's server over real HTTP on 127.0.0.1: fragments, files, feedback writes and refusals."""

from __future__ import annotations

import json
import os
import re
from html import unescape
from pathlib import Path
from urllib.parse import quote

import pytest
from review_data import HOSTILE, make_workspace
from viewer_server import TOKEN, page_client, served

from eval_skills.errors import InputError
from eval_skills.viewer import open_workspace_source, render_page

WRITE = {"X-Review-Token": TOKEN, "Content-Type": "application/json"}


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory):
    return make_workspace(tmp_path_factory.mktemp("ws") / "support-triage-workspace", cases=3, runs=2)


@pytest.fixture(scope="module")
def site(workspace):
    with served(open_workspace_source(workspace.root)) as url, page_client(url, timeout=10) as client:
        yield client


def feedback_on_disk(workspace) -> dict:
    return json.loads((workspace.iteration / "feedback.json").read_text())


def test_page_and_fragments_carry_a_strict_policy(site, workspace):
    page = site.get("/")
    assert page.status_code == 200
    csp = page.headers["content-security-policy"]
    assert "default-src 'none'" in csp and "script-src 'self'" in csp and "connect-src 'self'" in csp
    assert "http" not in csp and "unsafe" not in csp
    assert page.headers["x-content-type-options"] == "nosniff"
    # every script and style the page loads is the server's own
    assert 'src="assets/viewer.js"' in page.text and "https://" not in page.text.split("<main>")[0]
    for name in ("viewer.js", "viewer.css", "highlight.css"):
        assert site.get(f"/assets/{name}").status_code == 200
    case = site.get(f"/api/case/{quote(workspace.cases[0])}")
    assert case.status_code == 200 and "content-security-policy" in case.headers
    html = case.json()["html"]
    for run_id in workspace.run_ids[:4]:
        assert f'data-run="{run_id}"' in html


def test_case_fragment_shows_the_run_files(site, workspace):
    key = workspace.cases[0]
    html = site.get(f"/api/case/{key}").json()["html"]
    timing = json.loads((workspace.iteration / f"eval-{key}" / "with_skill" / "run-1" / "timing.json").read_text())
    assert f"{timing['total_tokens']:,} tokens" in html
    assert f"{timing['total_duration_seconds']:.1f} s" in html
    assert "<h1>Answer to case 1</h1>" in html  # Markdown rendered
    assert '<pre class="hl"><code><span class="k">def</span>' in html  # code highlighted
    assert "Review the attached support request 1" in html  # the prompt from eval_metadata.json
    assert "Customer 1 asks for a refund after 40 days." in html  # the fixture file from inputs/
    assert "Too long last time." in html  # the previous iteration's feedback on this run
    assert "The <strong>with_skill</strong> answer, run 1, iteration 1." in html  # and its response


def test_error_run_is_shown_with_its_reason(site, workspace):
    key = workspace.error_run.split("-")[1]
    html = site.get(f"/api/case/{key}").json()["html"]
    assert "agent timed out after 600 s" in html and "error run" in html


def test_unknown_case_and_tab_are_404(site):
    assert site.get("/api/case/999").status_code == 404
    assert site.get("/api/case/..").status_code == 404
    assert site.get("/api/tab/nothing").status_code == 404


def test_files_are_served_only_from_inside_the_workspace(site, workspace, tmp_path):
    ref = "iteration-2/eval-1/with_skill/run-1/outputs/plan.json"
    ok = site.get(f"/files/{ref}")
    assert ok.status_code == 200 and ok.headers["content-disposition"].startswith("attachment")
    assert ok.headers["content-security-policy"] == "default-src 'none'; sandbox"
    secret = tmp_path / "secret.txt"
    secret.write_text("secret")
    (workspace.root / "link-out").symlink_to(secret)
    for bad in ("../secret.txt", "%2e%2e/%2e%2e/etc/passwd", "link-out", quote(str(secret)),
                "iteration-2/../../secret.txt", "iteration-2/eval-1/with_skill/run-1/outputs/missing"):
        response = site.get(f"/files/{bad}")
        assert response.status_code == 404, bad
        assert "secret" not in response.text


def test_feedback_is_saved_for_existing_runs_only(site, workspace):
    run = workspace.run_ids[1]
    before = feedback_on_disk(workspace)
    reply = site.post("/api/feedback", headers=WRITE, json={"run_id": run, "feedback": "Misses the deadline."})
    assert reply.status_code == 200 and reply.json()["ok"]
    after = feedback_on_disk(workspace)
    saved = {r["run_id"]: r for r in after["reviews"]}
    assert saved[run]["feedback"] == "Misses the deadline." and saved[run]["timestamp"]
    assert len(after["reviews"]) == len(before["reviews"]) == len(workspace.run_ids)
    assert site.get("/api/feedback").json()["texts"][run] == "Misses the deadline."

    for bad in ({"run_id": "eval-9-with_skill-run-1", "feedback": "x"}, {"run_id": "../../x", "feedback": "x"}):
        assert site.post("/api/feedback", headers=WRITE, json=bad).status_code == 404
    assert feedback_on_disk(workspace) == after


def test_writes_need_the_token_json_and_our_origin(site, workspace):
    body = json.dumps({"run_id": workspace.run_ids[0], "feedback": "forged"})
    refused = [
        site.post("/api/feedback", content=body, headers={"Content-Type": "application/json"}),
        site.post("/api/feedback", content=body, headers={**WRITE, "X-Review-Token": "guess"}),
        site.post("/api/feedback", content=body, headers={"X-Review-Token": TOKEN, "Content-Type": "text/plain"}),
        site.post("/api/feedback", content=body, headers={**WRITE, "Origin": "http://evil.example"}),
        site.post("/api/feedback", content=body, headers={**WRITE, "Host": "evil.example"}),
        site.post("/api/feedback", content="[1]", headers=WRITE),
    ]
    assert [r.status_code for r in refused] == [403, 403, 415, 403, 400, 400]
    assert "forged" not in (workspace.iteration / "feedback.json").read_text()


def test_status_complete_and_reopened(site, workspace):
    assert site.post("/api/status", headers=WRITE, json={"status": "complete"}).json()["status"] == "complete"
    assert feedback_on_disk(workspace)["status"] == "complete"
    assert site.post("/api/status", headers=WRITE, json={"status": "done"}).status_code == 400
    site.post("/api/feedback", headers=WRITE, json={"run_id": workspace.run_ids[0], "feedback": "one more"})
    assert feedback_on_disk(workspace)["status"] == "in_progress"  # a change reopens the review


def test_benchmark_and_routing_tabs(site, workspace):
    bench = json.loads((workspace.iteration / "benchmark.json").read_text())
    html = site.get("/api/tab/benchmark").json()["html"]
    mean = bench["run_summary"]["with_skill"]["pass_rate"]["mean"]
    assert f"{mean * 100:.1f}%" in html
    assert f'{bench["run_summary"]["delta"]["pass_rate"] * 100:+.1f} pp' in html
    assert html.count('<rect class="bar ') == len(workspace.cases) * 2
    routing = site.get("/api/tab/routing").json()["html"]
    assert "Is this support ticket urgent?" in routing and "ticket-summary ×2" in routing


def test_broken_files_are_problems_on_the_page_not_crashes(tmp_path):
    made = make_workspace(tmp_path / "ws", cases=2, runs=1, iterations=1, routing=False)
    run = made.iteration / "eval-1" / "with_skill" / "run-1"
    (run / "grading.json").write_text("{not json")
    (run / "timing.json").write_text(json.dumps({"duration_ms": "soon"}))
    with (run / "transcript.jsonl").open("a") as handle:
        handle.write("garbage\n" + json.dumps({"type": "alien"}) + "\n")
    (made.iteration / "benchmark.json").unlink()
    with served(open_workspace_source(made.root)) as url, page_client(url) as client:
        html = client.get("/api/case/1").json()["html"]
        assert "iteration-1/eval-1/with_skill/run-1/grading.json: invalid JSON at line 1" in html
        assert "timing.json: $.duration_ms" in html
        assert "transcript.jsonl: line 7 is not a transcript event" in html
        assert "2 lines in all are not transcript events" in html
        bench = client.get("/api/tab/benchmark").json()["html"]
        assert "benchmark.json is missing" in bench
        assert bench.count('<rect class="bar ') == 4  # still charted from the grading files
        (made.iteration / "benchmark.json").write_text("[1, 2")
        bench = client.get("/api/tab/benchmark").json()["html"]
        assert "iteration-1/benchmark.json: invalid JSON" in bench and "benchmark.json cannot be read" in bench
        assert "is missing" not in bench and bench.count('<rect class="bar ') == 4


def test_names_and_text_that_are_not_utf8_are_shown_and_served(tmp_path):
    made = make_workspace(tmp_path / "ws", cases=1, runs=1, iterations=1, routing=False)
    outputs = made.iteration / "eval-1" / "with_skill" / "run-1" / "outputs"
    os.makedirs(outputs, exist_ok=True)
    (outputs / os.fsdecode(b"text-\xff.txt")).write_text("a text file")
    (outputs / os.fsdecode(b"blob-\xfe.bin")).write_bytes(b"\0\x01binary")
    (outputs / "latin1.csv").write_bytes("naïve;crème brûlée\n".encode("latin-1"))
    (outputs / "utf16.txt").write_bytes("zwölf Äpfel".encode("utf-16"))
    (outputs / "utf8-bom.md").write_bytes("\ufeffgrüße".encode("utf-8"))
    grading = made.iteration / "eval-1" / "with_skill" / "run-1" / "grading.json"
    grading.write_text(grading.read_text().replace('"evidence": "', '"evidence": "\\udc80 lone '))
    with served(open_workspace_source(made.root)) as url, page_client(url) as client:
        response = client.get("/api/case/1")
        assert response.status_code == 200
        html = response.json()["html"]
        assert 'data-detail="run-files/1/with_skill/1"' in html and "a text file" not in html  # loaded when opened
        html += client.get("/api/detail/run-files/1/with_skill/1").json()["html"]
        assert "text-\ufffd.txt" in html and "blob-\ufffd.bin" in html and "\ufffd lone" in html
        # text in other encodings is shown as text, not offered as a binary download
        assert "crème brûlée" in html and "latin1.csv: not UTF-8, shown as Windows-1252" in html
        assert "zwölf Äpfel" in html and "utf16.txt: UTF-16 text" in html
        assert "grüße" in html and "utf8-bom.md: " not in html
        assert "outputs/latin1.csv" not in html and "outputs/utf16.txt" not in html
        link = "files/iteration-1/eval-1/with_skill/run-1/outputs/blob-%FE.bin"
        assert f'href="{link}"' in html
        download = client.get("/" + link)
        assert download.status_code == 200 and download.content == b"\0\x01binary"
        assert download.headers["content-disposition"] == "attachment; filename*=UTF-8''blob-%EF%BF%BD.bin"


def test_names_holding_bidi_overrides_or_controls_are_shown_escaped(tmp_path):
    made = make_workspace(tmp_path / "ws", cases=1, runs=1, iterations=1, routing=False)
    outputs = made.iteration / "eval-1" / "with_skill" / "run-1" / "outputs"
    (outputs / "rtl\u202egnp.exe").write_bytes(b"MZ\0\0 not a picture")
    (made.iteration / "eval-1" / "inputs" / "bell\x07\u2066.txt").write_text("fixture")
    with served(open_workspace_source(made.root)) as url, page_client(url) as client:
        html = client.get("/api/case/1").json()["html"]
        html += client.get("/api/detail/run-files/1/with_skill/1").json()["html"]
        link = "files/iteration-1/eval-1/with_skill/run-1/outputs/rtl%E2%80%AEgnp.exe"
        assert f'href="{link}"' in html
        download = client.get("/" + link)  # saved under the name shown, never as rtlexe.png
        assert download.headers["content-disposition"] == "attachment; filename*=UTF-8''rtl%5Cu202egnp.exe"
    assert "<code>rtl\\u202egnp.exe</code>" in html and "<code>bell\\x07\\u2066.txt</code>" in html
    assert "\u202e" not in html and "\x07" not in html and "\u2066" not in html
    (made.iteration / "eval-1").rename(made.iteration / "eval-r\u202eab")  # a case id is a folder name
    with served(open_workspace_source(made.root)) as url, page_client(url) as client:
        shown = client.get("/").text + client.get("/api/tab/benchmark").json()["html"]
        shown += client.get("/api/case/" + quote("r\u202eab", safe="")).json()["html"]
    # only attributes and the page's data (never shown) keep the name as it is
    shown = re.sub(r'data-[a-z]+="[^"]*"|<script type="application/json".*?</script>', "", shown, flags=re.S)
    assert "\u202e" not in shown and shown.count("r\\u202eab") >= 5


def test_injected_markup_is_escaped_in_every_fragment(tmp_path):
    made = make_workspace(tmp_path / "ws", cases=2, runs=1, iterations=1, hostile=True)
    with served(open_workspace_source(made.root)) as url, page_client(url) as client:
        page = client.get("/").text
        fragments = [client.get(f"/api/case/{quote(k, safe='')}").json()["html"] for k in made.cases]
        fragments += [client.get(f"/api/tab/{t}").json()["html"] for t in ("benchmark", "routing")]
        details = [unescape(ref) for ref in re.findall(r'data-detail="([^"]+)"', "".join(fragments))]
        files = [client.get("/api/detail/" + "/".join(quote(p, safe="") for p in ref.split("/"))).json()["html"]
                 for ref in details if ref.startswith("run-files/")]  # every run's files, loaded when opened
        assert "&lt;img src=x onerror=alert(1)&gt;.txt" in "".join(files)
        fragments += files
    for html in [page, *fragments]:
        assert "<script>window" not in html and "<img src=x" not in html and 'href="javascript' not in html
    hostile_case = fragments[made.cases.index(next(k for k in made.cases if "<" in k))]
    assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt;" in hostile_case  # shown, as text
    assert HOSTILE not in "".join(fragments)


def test_feedback_write_is_atomic_and_keeps_unknown_reviews(tmp_path):
    made = make_workspace(tmp_path / "ws", cases=1, runs=1, iterations=1, routing=False)
    path = made.iteration / "feedback.json"
    path.write_text(json.dumps({"reviews": [{"run_id": "eval-gone-with_skill-run-1", "feedback": "old"}],
                                "status": "in_progress", "reviewer": "ana"}))
    source = open_workspace_source(made.root)
    assert source.feedback is not None
    source.feedback.set(made.run_ids[0], "new")
    data = json.loads(path.read_text())
    assert data["reviewer"] == "ana"
    assert {r["run_id"]: r["feedback"] for r in data["reviews"]} == {
        "eval-gone-with_skill-run-1": "old", made.run_ids[0]: "new", made.run_ids[1]: ""}
    assert not [p for p in os.listdir(made.iteration) if p.endswith(".tmp")]


def test_two_pages_on_one_iteration_keep_each_others_reviews(tmp_path):
    made = make_workspace(tmp_path / "ws", cases=2, runs=1, iterations=1, routing=False)
    path = made.iteration / "feedback.json"
    first, second = open_workspace_source(made.root).feedback, open_workspace_source(made.root).feedback
    assert first is not None and second is not None
    first.set(made.run_ids[0], "from the first page")
    second.set(made.run_ids[1], "from the second page")
    assert second.texts() == {made.run_ids[0]: "from the first page", made.run_ids[1]: "from the second page"}
    first.set_status("complete")
    assert second.texts() and second.status == "complete"
    saved = {r["run_id"]: r["feedback"] for r in json.loads(path.read_text())["reviews"]}
    assert saved[made.run_ids[0]] == "from the first page" and saved[made.run_ids[1]] == "from the second page"
    # a file broken since is never overwritten: the write is refused, naming it
    path.write_text("{broken")
    with pytest.raises(InputError, match="feedback.json"):
        first.set(made.run_ids[2], "lost?")
    assert path.read_text() == "{broken"
    assert first.texts()[made.run_ids[1]] == "from the second page"  # what was read last
    path.write_text("{}")
    with served(open_workspace_source(made.root)) as url, page_client(url) as client:
        path.write_text("{broken")
        refused = client.post("/api/feedback", headers=WRITE, json={"run_id": made.run_ids[0], "feedback": "x"})
        assert refused.status_code == 400 and refused.json()["error"].startswith(f"{path}: invalid JSON")


def test_feedback_holding_lone_surrogates_is_saved(tmp_path):
    made = make_workspace(tmp_path / "ws", cases=1, runs=1, iterations=1, routing=False)
    path = made.iteration / "feedback.json"
    # json.dumps writes a lone surrogate as its escape
    path.write_text(json.dumps({"reviews": [{"run_id": made.run_ids[1], "feedback": "old \udc80"}],
                                "status": "in_progress"}))
    with served(open_workspace_source(made.root)) as url, page_client(url) as client:
        assert client.get("/api/feedback").json()["texts"] == {made.run_ids[1]: "old \ufffd"}
        body = json.dumps({"run_id": made.run_ids[0], "feedback": "new \ud800 text"})
        assert client.post("/api/feedback", headers=WRITE, content=body).status_code == 200
    reviews = {r["run_id"]: r["feedback"] for r in json.loads(path.read_text(encoding="utf-8"))["reviews"]}
    assert reviews == {made.run_ids[0]: "new \ufffd text", made.run_ids[1]: "old \ufffd"}


def test_tool_reports_fragments(tmp_path):
    from review_data import make_reports

    from eval_skills.viewer import from_report_files

    report = make_reports(tmp_path, hostile=True)
    with served(from_report_files([report])) as url, page_client(url) as client:
        assert client.post("/api/feedback", headers=WRITE, json={"run_id": "x", "feedback": "y"}).status_code == 404
        html = client.get("/api/case/task-1").json()["html"]
        assert "<strong>alpha</strong> answer to task-1, run 2" in html and "beta 2.0.0" in html
        hostile = client.get("/api/case/task-0").json()["html"]
        assert "<script>" not in hostile and "&lt;script&gt;" in hostile


def test_a_task_id_holding_a_slash_opens(tmp_path):
    from review_data import make_reports

    from eval_skills.viewer import from_report_files

    report = make_reports(tmp_path, tasks=2, runs=1)
    report.write_text(report.read_text().replace('"task-1"', '"math/add <i>"'))
    with served(from_report_files([report])) as url, page_client(url) as client:
        response = client.get("/api/case/" + quote("math/add <i>", safe=""))
        assert response.status_code == 200 and "math/add &lt;i&gt;" in response.json()["html"]
        assert client.get("/api/case/math").status_code == 404


def test_index_lists_cases_in_id_order(tmp_path):
    made = make_workspace(tmp_path / "ws", cases=11, runs=1, iterations=1, routing=False)
    source = open_workspace_source(made.root)
    assert [c.key for c in source.cases()] == [str(n) for n in range(1, 12)]
    assert Path(source.feedback.path) == made.iteration / "feedback.json"


def test_symlinks_out_of_the_workspace_are_not_read(tmp_path):
    made = make_workspace(tmp_path / "ws", cases=1, runs=1, iterations=1, routing=False)
    secret = tmp_path / "secret.md"
    secret.write_text("TOP SECRET")
    response = made.iteration / "eval-1" / "with_skill" / "run-1" / "outputs" / "response.md"
    response.unlink()
    response.symlink_to(secret)
    (response.parent / "leak.txt").symlink_to(secret)
    with served(open_workspace_source(made.root)) as url, page_client(url) as client:
        html = client.get("/api/case/1").json()["html"]
        assert "TOP SECRET" not in html and "leak.txt" not in html
        assert "outputs/response.md: leads outside the workspace (a symlink?), not read" in html
        assert client.get("/api/case/1%00").status_code == 404


def test_fifos_in_a_workspace_are_never_opened(tmp_path):
    made = make_workspace(tmp_path / "ws", cases=1, runs=1, iterations=1, routing=False)
    run = made.iteration / "eval-1" / "with_skill" / "run-1"
    (run / "outputs" / "response.md").unlink()
    os.mkfifo(run / "outputs" / "response.md")  # opening a FIFO to read waits for a writer: for ever
    os.mkfifo(run / "outputs" / "pipe.txt")
    (run / "grading.json").unlink()
    os.mkfifo(run / "grading.json")
    with served(open_workspace_source(made.root)) as url, page_client(url, timeout=20) as client:
        html = client.get("/api/case/1").json()["html"]
        html += client.get("/api/detail/run-files/1/with_skill/1").json()["html"]
        assert "outputs/response.md: is not a regular file, not read" in html
        assert "grading.json: is not a regular file, not read" in html and "pipe.txt" not in html
        assert client.get("/files/iteration-1/eval-1/with_skill/run-1/outputs/pipe.txt").status_code == 404
    (made.iteration / "feedback.json").unlink()
    os.mkfifo(made.iteration / "feedback.json")
    with pytest.raises(InputError, match="feedback.json: is not a regular file"):
        open_workspace_source(made.root)


def test_run_files_load_on_demand_and_only_for_runs_that_exist(site, workspace):
    html = site.get("/api/detail/run-files/1/with_skill/1").json()["html"]
    plan = json.loads((workspace.iteration / "eval-1" / "with_skill" / "run-1" / "outputs" / "plan.json").read_text())
    assert "plan.json" in html and f"{plan['case']}" in html and "response.md" not in html
    for bad in ("run-files/1/with_skill/9", "run-files/../with_skill/1", "run-files/1/../1", "run-files/%2e%2e/x/1",
                "run-files/1/with_skill", "run-files/1/with_skill/1/2", "run-files/nope/with_skill/1",
                "run-files/1/%2e%2e/1", "run-files/1/inputs/1"):
        assert site.get(f"/api/detail/{bad}").status_code == 404, bad


def test_a_routing_only_workspace(tmp_path):
    from review_data import make_routing

    make_routing(tmp_path / "ws")
    source = open_workspace_source(tmp_path / "ws" / "routing-1")
    assert [t.name for t in source.tabs()] == ["routing"] and source.feedback is None
    with served(source) as url, page_client(url) as client:
        page = client.get("/").text
        assert 'id="panel-routing"' in page and 'id="panel-outputs"' not in page
        assert "Triage this refund request" in client.get("/api/tab/routing").json()["html"]
        assert client.get("/api/tab/benchmark").status_code == 404
        assert client.post("/api/status", headers=WRITE, json={"status": "complete"}).status_code == 404


def test_routing_run_transcripts_load_on_demand_and_stay_in_the_folder(tmp_path):
    from review_data import make_routing

    folder = make_routing(tmp_path / "ws", hostile=True)
    secret = tmp_path / "secret.jsonl"
    secret.write_text(json.dumps({"type": "final", "text": "TOP SECRET"}) + "\n")
    data = json.loads((folder / "routing_results.json").read_text())
    # transcript paths from the file are untrusted: these leave the routing folder
    data["queries"][0]["run_results"][0]["transcript"] = "../../secret.jsonl"
    data["queries"][0]["run_results"][1]["transcript"] = str(secret)
    data["queries"][0]["run_results"][2]["transcript"] = "query-1/run-3/transcript.jsonl"
    data["metadata"].update(in_progress=True, planned_runs=12, finished_runs=9)
    (folder / "routing_results.json").write_text(json.dumps(data))
    source = open_workspace_source(tmp_path / "ws")
    assert source.title == "support-triage"  # from the results, not the folder's name
    refs = source.detail_refs()
    assert "routing-run/1/3" in refs and "routing-run/1/1" not in refs and "routing-run/1/2" not in refs
    with served(source) as url, page_client(url) as client:
        tab = client.get("/api/tab/routing").json()["html"]
        assert "Done with query" not in tab  # no transcript in the tab itself
        assert "the figures cover the 9 of 12 runs finished then" in tab  # a test still running
        assert tab.count('data-detail="routing-run/') == 7 and tab.count("no transcript") == 2
        assert "Done with query 1, run 3." in client.get("/api/detail/routing-run/1/3").json()["html"]
        hostile = client.get("/api/detail/routing-run/3/1").json()["html"]
        assert "&lt;script&gt;" in hostile and "<script>" not in hostile
        for ref in ("routing-run/1/1", "routing-run/1/2", "routing-run/1/9", "routing-run/9/1",
                    "routing-run/..%2F..%2Fsecret/1", "routing-run/1/1/../../2", "elsewhere/1/1"):
            response = client.get(f"/api/detail/{ref}")
            assert response.status_code == 404 and "TOP SECRET" not in response.text, ref
        static = render_page(source, static=True)
        assert "TOP SECRET" not in static and "Done with query 1, run 3." in static


def test_an_interrupted_iteration(tmp_path):
    """An iteration stopped part-way: no benchmark.json nor feedback.json, a run never started, a run with a
    transcript but not graded yet, a case where only one arm started, a case with no run at all."""
    import shutil

    made = make_workspace(tmp_path / "ws", cases=4, runs=3, iterations=1, routing=False)
    it = made.iteration
    (it / "benchmark.json").unlink()
    (it / "feedback.json").unlink()
    shutil.rmtree(it / "eval-1" / "without_skill" / "run-3")
    ungraded = it / "eval-1" / "without_skill" / "run-2"
    for name in ("grading.json", "timing.json"):
        (ungraded / name).unlink()
    shutil.rmtree(ungraded / "outputs")
    shutil.rmtree(it / "eval-3" / "without_skill")
    shutil.rmtree(it / "eval-4" / "with_skill")
    shutil.rmtree(it / "eval-4" / "without_skill")
    source = open_workspace_source(made.root)
    assert [c.key for c in source.cases()] == ["1", "2", "3"]  # case 4 has no run
    with served(source) as url, page_client(url) as client:
        case = client.get("/api/case/1").json()["html"]
        assert case.count('class="badge na ungraded"') == 1 and "No run 3 in this arm." in case
        bench = client.get("/api/tab/benchmark").json()["html"]
        assert "benchmark.json is missing" in bench
        grid = bench[bench.index('id="assertion-grid"'):]
        first = grid[grid.index("<tbody>"):].split("</tr>")[0]
        # case 1, first assertion: with skill runs 1-3, then without skill runs 1-3 (run 2 not graded, no run 3)
        marks = [m.split(">", 1)[1] for m in first.split('<td class="cell ')[1:]]
        assert [m.split("<", 1)[0] for m in marks] == ["✓", "✓", "✓", "✗", "…", ""]
        assert "without skill run 2: not graded (yet)" in first
        # case 2's error run is still an error run
        assert ">E<" in grid
        assert client.post("/api/feedback", headers=WRITE,
                           json={"run_id": "eval-1-without_skill-run-2", "feedback": "no grade yet"}).status_code == 200
        assert client.post("/api/feedback", headers=WRITE,
                           json={"run_id": "eval-1-without_skill-run-3", "feedback": "x"}).status_code == 404
    saved = json.loads((it / "feedback.json").read_text())
    assert {r["run_id"]: r["feedback"] for r in saved["reviews"]}["eval-1-without_skill-run-2"] == "no grade yet"


@pytest.mark.parametrize("with_benchmark", [True, False])
def test_a_case_whose_every_run_errored_has_its_row_in_the_grid(tmp_path, with_benchmark):
    made = make_workspace(tmp_path / "ws", cases=2, runs=2, iterations=1, routing=False)
    bench = json.loads((made.iteration / "benchmark.json").read_text())
    for entry in bench["runs"]:
        if str(entry["eval_id"]) == "2":
            entry["expectations"], entry["result"] = [], {"pass_rate": None, "errors": 1}
            run = made.iteration / "eval-2" / entry["configuration"] / f"run-{entry['run_number']}"
            (run / "grading.json").write_text(json.dumps({
                "expectations": [], "summary": {"passed": 0, "failed": 0, "total": 0, "pass_rate": None},
                "error": f"agent exited with status 7 in {entry['configuration']} run {entry['run_number']}"}))
    if with_benchmark:
        (made.iteration / "benchmark.json").write_text(json.dumps(bench))
    else:
        (made.iteration / "benchmark.json").unlink()
    with served(open_workspace_source(made.root)) as url, page_client(url) as client:
        bench_html = client.get("/api/tab/benchmark").json()["html"]
    grid = bench_html[bench_html.index('id="assertion-grid"'):]
    rows = [row for row in grid.split("<tr")[3:] if 'class="case-key">2<' in row]
    assert len(rows) == 1 and "(no assertion graded)" in rows[0]
    assert rows[0].count(">E<") == 4
    assert "with skill run 2: error run: agent exited with status 7 in with_skill run 2" in rows[0]


def test_reports_of_different_benchmarks_are_compared_with_a_warning(tmp_path):
    from review_data import report_for, task_results

    from eval_skills.viewer import from_report_files

    paths = []
    for name, benchmark, version in (("a", "support", "1.0.0"), ("b", "support", "2.0.0"), ("c", "support", "1.0.0")):
        report = report_for("alpha", "1.0.0", task_results("alpha", 2, 1, True), benchmark)
        report["benchmarkVersion"] = version
        paths.append(tmp_path / f"{name}.json")
        paths[-1].write_text(json.dumps([report]))
    warning = "These columns ran different benchmarks: support 1.0.0 (a · alpha 1.0.0, c · alpha 1.0.0); " \
              "support 2.0.0 (b · alpha 1.0.0)."
    with served(from_report_files(paths)) as url, page_client(url) as client:
        assert warning in client.get("/api/tab/benchmark").json()["html"]
        assert warning in client.get("/api/case/task-0").json()["html"]
    unversioned = json.loads(paths[1].read_text())
    del unversioned[0]["benchmarkVersion"]  # as the original eval-skills writes it: any version of its id
    paths[1].write_text(json.dumps(unversioned))
    with served(from_report_files([paths[0], paths[1], paths[2]])) as url, page_client(url) as client:
        assert "different benchmarks" not in client.get("/api/tab/benchmark").json()["html"]
    unversioned[0]["benchmarkId"] = "billing"
    paths[1].write_text(json.dumps(unversioned))
    with served(from_report_files([paths[0], paths[1]])) as url, page_client(url) as client:
        assert "different benchmarks: support 1.0.0 (a · alpha 1.0.0); billing (b · alpha 1.0.0)." in \
            client.get("/api/tab/benchmark").json()["html"]
