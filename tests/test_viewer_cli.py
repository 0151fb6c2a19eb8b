"""``eval-skills view``: what it accepts, one-line errors with exit 2, the static page, serving and stopping."""

from __future__ import annotations

import json
import re
import signal
import socket
import subprocess
import sys
from html.parser import HTMLParser

import httpx
import pytest
from click.testing import CliRunner, Result
from review_data import make_reports, make_store, make_workspace
from viewer_server import base, token_of, view_process

from eval_skills.cli import cli


def run(*args: object) -> Result:
    return CliRunner().invoke(cli, ["view", *map(str, args)])


def one_line_error(result: Result, *expected: str) -> None:
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    for text in expected:
        assert text in lines[0], lines[0]


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory):
    return make_workspace(tmp_path_factory.mktemp("cli") / "support-triage-workspace", cases=2, runs=1)


def test_bad_targets_are_one_line_errors(tmp_path, workspace):
    one_line_error(run(tmp_path / "missing"), "missing: not found")
    (tmp_path / "empty").mkdir()
    one_line_error(run(tmp_path / "empty"), "holds no iteration-<n> or routing-<n> folder")
    one_line_error(run(workspace.root, "--iteration", 9), "has no iteration-9", "iterations here: 1, 2")
    one_line_error(run(workspace.root, "--evaluation", "latest"), "--evaluation")
    report = make_reports(tmp_path / "reports")
    one_line_error(run(report, "--iteration", 1), "--iteration applies to a workspace folder")
    one_line_error(run(report, "--evaluation", "x"), "--evaluation applies to a results store")
    bad = tmp_path / "bad.json"
    bad.write_text("{oops")
    one_line_error(run(bad), "bad.json", "invalid JSON at line 1")
    one_line_error(run(report, "--benchmark", "no-such-benchmark"), "unknown benchmark 'no-such-benchmark'")
    store = tmp_path / "s.db"
    make_store(store)
    one_line_error(run(store, "--evaluation", "abcdef"), "no evaluation with id 'abcdef'")
    one_line_error(run(store, report), "give one results store, alone")


def test_broken_feedback_file_stops_before_serving(tmp_path):
    made = make_workspace(tmp_path / "ws", cases=1, runs=1, iterations=1, routing=False)
    (made.iteration / "feedback.json").write_text('{"reviews": "none"}')
    one_line_error(run(made.root), "feedback.json: $.reviews")
    assert (made.iteration / "feedback.json").read_text() == '{"reviews": "none"}'


def test_port_in_use_is_an_input_error(workspace):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        one_line_error(run(workspace.root, "--port", port), f"cannot listen on 127.0.0.1:{port}", "--port")


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def test_static_page_is_self_contained(tmp_path, workspace):
    out = tmp_path / "sub" / "review.html"
    result = run(workspace.root, "--static", out)
    assert result.exit_code == 0, result.output
    assert f"Wrote {out}" in result.output and "2 cases" in result.output
    assert "'Download feedback.json' button" in result.output
    html = out.read_text()
    parser = _Tags()
    parser.feed(html)
    for tag, attrs in parser.tags:
        for name in ("src", "href"):
            value = attrs.get(name)
            assert value is None or value.startswith(("data:", "#")), (tag, attrs)
    csp = next(a["content"] for t, a in parser.tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy")
    assert csp and "default-src 'none'" in csp and "connect-src 'none'" in csp
    data = json.loads(re.search(r'<script type="application/json" id="review-data">(.*?)</script>', html, re.S)[1])
    assert sorted(data["cases"]) == sorted(workspace.cases) and sorted(data["tabs"]) == ["benchmark", "routing"]
    config = json.loads(re.search(r'id="review-config">(.*?)</script>', html, re.S)[1])
    assert config["mode"] == "static" and config["token"] is None
    assert config["feedback"]["runIds"] == workspace.run_ids


def test_static_page_of_reports_and_store(tmp_path):
    report = make_reports(tmp_path)
    result = run(report, "--static", tmp_path / "r.html")
    assert result.exit_code == 0 and "3 cases" in result.output
    assert "feedback" not in result.output  # a tool-skill page takes no feedback
    store = tmp_path / "s.db"
    make_store(store)
    result = run(store, "--evaluation", "latest", "--static", tmp_path / "s.html")
    assert result.exit_code == 0, result.output


def test_serves_until_interrupted(workspace):
    with view_process(workspace.root) as (url, proc):
        assert proc.stdout is not None
        assert f"Feedback is saved to {workspace.iteration / 'feedback.json'}" in proc.stdout.readline()
        assert httpx.get(url, follow_redirects=True).status_code == 200
        proc.send_signal(signal.SIGINT)
        assert proc.wait(10) == 130
    for signum, code in ((signal.SIGINT, 130), (signal.SIGTERM, 143)):
        for wait in (False, True):  # at once (the server still starting), and once it serves
            with view_process(workspace.root) as (url, proc):
                if wait:
                    assert httpx.get(url, follow_redirects=True).status_code == 200
                proc.send_signal(signum)
                assert proc.wait(10) == code  # an exit code, as every command gives, never a death by signal
                assert proc.stderr is not None and proc.stderr.read() == "Stopped.\n"  # no warning, no traceback


def test_json_says_what_was_written_or_where_it_serves(tmp_path, workspace):
    out = tmp_path / "r.html"
    result = run(workspace.root, "--static", out, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == {"passed": True, "output": str(out), "bytes": out.stat().st_size,
                                         "cases": 2}
    for target, feedback in ((workspace.root, str(workspace.iteration / "feedback.json")),
                             (make_reports(tmp_path), None)):
        proc = subprocess.Popen([sys.executable, "-m", "eval_skills", "view", str(target), "--json"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            assert proc.stdout is not None
            said = json.loads(proc.stdout.readline())
            assert said["feedback"] == feedback
            assert re.fullmatch(r"http://127\.0\.0\.1:\d+/\?token=[\w-]{40,}", said["url"])
            assert httpx.get(said["url"], follow_redirects=True).status_code == 200
            proc.send_signal(signal.SIGINT)
            assert proc.wait(10) == 130 and proc.stdout.read() == ""  # one JSON line on stdout, nothing else
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait()


def page_config(url: str) -> dict:
    page = httpx.get(url, follow_redirects=True).text
    found = re.search(r'<script type="application/json" id="review-config">(.*?)</script>', page)
    assert found
    return json.loads(found.group(1))


def test_feedback_outlives_the_server(tmp_path):
    made = make_workspace(tmp_path / "ws", cases=2, runs=1, iterations=1, routing=False)
    run_id = made.run_ids[1]
    with view_process(made.root) as (url, proc):
        token = page_config(url)["token"]
        auth = {"X-Review-Token": token, "Authorization": f"token {token_of(url)}"}
        reply = httpx.post(f"{base(url)}api/feedback", json={"run_id": run_id, "feedback": "Misses the deadline."},
                           headers=auth)
        assert reply.status_code == 200, reply.text
        assert httpx.post(f"{base(url)}api/status", json={"status": "complete"}, headers=auth).status_code == 200
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 143
    with view_process(made.root) as (url, _):  # a new server, a new token, the same reviews
        config = page_config(url)
        assert config["token"] != token
        assert config["feedback"]["texts"] == {run_id: "Misses the deadline."}
        assert config["feedback"]["status"] == "complete"


def test_a_store_of_paired_or_routing_runs_only_points_at_their_workspace(tmp_path):
    from eval_skills.store.paired import PairedStore
    from eval_skills.store.routing import begin_routing, finish_routing
    from eval_skills.store.sqlite import Store

    empty = tmp_path / "empty.db"
    Store.open(empty).close()
    one_line_error(run(empty), "holds no evaluations yet")  # neither kind: as before
    routed = tmp_path / "routed.db"
    with Store.open(routed) as store:
        test = begin_routing(store, skill_name="s", agent=None, model=None, config={}, tool_version=None)
        finish_routing(store, test, status="finished", metrics=None,
                       results_path=str(tmp_path / "my skill-workspace" / "routing-2" / "routing_results.json"))
    one_line_error(run(routed), "only paired or routing runs",
                   f"eval-skills view '{tmp_path / 'my skill-workspace'}'")
    paired = tmp_path / "paired.db"
    with Store.open(paired) as store:
        PairedStore(store).begin_iteration(workspace=str(tmp_path / "ws"), iteration=1, skill_name="s", config={},
                                           tool_version=None)
    one_line_error(run(paired, "--evaluation", "latest"), "only paired or routing runs",
                   f"eval-skills view {tmp_path / 'ws'}")
