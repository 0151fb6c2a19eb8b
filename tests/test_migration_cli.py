"""`eval-skills eval` on a migrating user's files: skills made by the original's `create`, its config, its
benchmarks, run unchanged by real processes and real HTTP servers."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest
from original_shapes import create_skill, init_project

ORIGINAL = Path(__file__).parent / "original"


def cli(*args: Any, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "eval_skills", *map(str, args)], cwd=cwd, capture_output=True,
                          text=True, timeout=120, env=dict(os.environ))


def only_report(folder: Path) -> list[dict[str, Any]]:
    (path,) = folder.glob("eval-result-*.json")
    return json.loads(path.read_text())


def test_a_python_script_skill_passes_its_own_generated_test_with_the_init_config(tmp_path):
    init_project(tmp_path)
    create_skill(tmp_path / "skills", "my-skill", "python_script")
    out = cli("eval", "--skills", "skills/my-skill", "--benchmark", "skills/my-skill/tests/basic.eval.json",
              "--no-store", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    # defaultFormats from the config init wrote: json and markdown in ./reports
    assert sorted(p.suffix for p in (tmp_path / "reports").iterdir()) == [".json", ".md"]
    (report,) = only_report(tmp_path / "reports")
    assert report["summary"]["completionRate"] == 1.0
    assert report["taskResults"][0]["output"] == {"result": "Processed: test input"}


def test_the_original_calculator_passes_its_coding_easy_with_input_warnings(tmp_path):
    out = cli("eval", "--skills", ORIGINAL / "calculator", "--benchmark", ORIGINAL / "coding-easy.json",
              "--no-store", "--output-dir", tmp_path / "r", "--format", "json", "markdown", "html", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    (markdown,) = (tmp_path / "r").glob("*.md")
    (html,) = (tmp_path / "r").glob("*.html")
    note = ("4 task input(s) did not match the skill's inputSchema and were sent anyway "
            "(tasks coding_004, coding_005, coding_010, coding_011).")
    assert note in markdown.read_text()  # the tasks named, also those that passed
    assert note.replace("'", "&#39;") in html.read_text()
    assert "confidence interval (bootstrap): " in markdown.read_text()  # 12 results: 10 or more
    (report,) = only_report(tmp_path / "r")
    assert report["summary"]["completionRate"] == 1.0 and report["summary"]["inputWarnings"] == 4
    warned = [t["taskId"] for t in report["taskResults"] if t.get("warnings")]
    assert warned == ["coding_004", "coding_005", "coding_010", "coding_011"]  # the string tasks
    assert "$: 'expression' is a required property" in report["taskResults"][3]["warnings"][0]
    assert "task inputs that do not match the skill's inputSchema were sent anyway (calculator 4)" in out.stderr
    strict = cli("eval", "--skills", ORIGINAL / "calculator", "--benchmark", ORIGINAL / "coding-easy.json",
                 "--no-store", "--output-dir", tmp_path / "strict", "--format", "json", "--strict-input",
                 cwd=tmp_path)
    assert strict.returncode == 0, strict.stderr
    (report,) = only_report(tmp_path / "strict")
    assert report["summary"]["passed"] == 8 and report["summary"]["errors"] == 4
    assert "sent anyway" not in strict.stderr


def test_tasks_without_input_data_send_no_params(tmp_path):
    """The create skeleton reads params with a {} default: "params": null would make every task an error."""
    skill = create_skill(tmp_path, "echo", "python_script")
    out = cli("eval", "--skills", skill, "--benchmark", ORIGINAL / "definitions" / "gaia-like.json",
              "--no-store", "--output-dir", tmp_path / "r", "--format", "json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    (report,) = only_report(tmp_path / "r")
    assert [(t["status"], t["output"]) for t in report["taskResults"]] == [
        ("fail", {"result": "Processed: "})] * 2


class _Server(ThreadingHTTPServer):
    requests: list[tuple[str, str, Any]]
    versions: list[str | None]
    fail_first: int


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def _answer(self, body: Any) -> None:
        self.server.requests.append((self.command, self.path, body))
        self.server.versions.append(self.headers.get("X-Eval-Skills-Version"))
        if self.server.fail_first > 0:
            self.server.fail_first -= 1
            status, payload = 503, {"error": "warming up"}
        else:
            text = json.dumps(body)
            status, payload = 200, {"result": f"seen {text}"}
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("x-usage-input-tokens", "7")  # the names the original reads
        self.send_header("x-usage-output-tokens", "5")
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:  # noqa: N802
        self._answer(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))

    def do_GET(self) -> None:  # noqa: N802
        self._answer(dict(parse_qsl(urlsplit(self.path).query)))

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass


@pytest.fixture
def server() -> Iterator[_Server]:
    srv = _Server(("127.0.0.1", 0), _Handler)
    srv.requests, srv.versions, srv.fail_first = [], [], 0
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()


def test_http_request_template_runs_with_its_retries_below_the_flag(tmp_path, server):
    url = f"http://127.0.0.1:{server.server_address[1]}"
    skill = create_skill(tmp_path, "web", "http_request", base_url=url)
    server.fail_first = 1  # the skill's "retries": 1 gets past one failure
    out = cli("eval", "--skills", skill, "--benchmark", skill / "tests" / "basic.eval.json", "--no-store",
              "--output-dir", tmp_path / "r", "--format", "json", "--backoff", "0", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    (report,) = only_report(tmp_path / "r")
    (result,) = report["taskResults"]
    assert (result["status"], result["attempts"]) == ("pass", 2)
    assert server.requests[-1] == ("POST", "/invoke", {"skillId": "web", "version": "0.1.0",
                                                       "input": {"query": "test input"}})
    assert server.versions[-1] and server.versions[-1][0].isdigit()
    assert result["usage"] == {"promptTokens": 7, "completionTokens": 5, "totalTokens": 12}
    assert report["tokenCost"]["totalTokens"] == 12
    server.fail_first = 1  # --retries 0 on the command line wins over the skill's own
    out = cli("eval", "--skills", skill, "--benchmark", skill / "tests" / "basic.eval.json", "--no-store",
              "--output-dir", tmp_path / "r2", "--format", "json", "--retries", "0", cwd=tmp_path)
    (report,) = only_report(tmp_path / "r2")
    assert report["taskResults"][0]["status"] == "error" and "HTTP 503" in report["taskResults"][0]["error"]


def test_an_http_task_without_input_data_sends_no_input(tmp_path, server):
    skill = create_skill(tmp_path, "web", "http_request", base_url=f"http://127.0.0.1:{server.server_address[1]}")
    (tmp_path / "tasks.json").write_text(json.dumps([{"id": "bare", "prompt": "Say hello.",
                                                      "expectedOutput": {"type": "contains", "keywords": ["seen"]}}]))
    out = cli("eval", "--skills", skill, "--tasks", tmp_path / "tasks.json", "--no-store", "--output-dir",
              tmp_path / "r", "--format", "json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert server.requests == [("POST", "/invoke", {"skillId": "web", "version": "0.1.0"})]


def test_http_method_get_sends_the_input_as_query_parameters(tmp_path, server):
    url = f"http://127.0.0.1:{server.server_address[1]}"
    skill = create_skill(tmp_path, "api", "http_request", base_url=url)
    config = json.loads((skill / "adapter.config.json").read_text())
    (skill / "adapter.config.json").write_text(json.dumps({**config, "method": "get"}))
    tasks = [{"id": "q", "inputData": {"query": "a b", "limit": 3},
              "expectedOutput": {"type": "contains", "keywords": ["a b"]}},
             {"id": "none", "expectedOutput": {"type": "contains", "keywords": ["{}"]}}]
    (tmp_path / "tasks.json").write_text(json.dumps(tasks))
    out = cli("eval", "--skills", skill, "--tasks", tmp_path / "tasks.json", "--no-store",
              "--output-dir", tmp_path / "r", "--format", "json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert sorted(server.requests, key=str) == [("GET", "/invoke", {}),
                                                ("GET", "/invoke?query=a+b&limit=3", {"query": "a b", "limit": "3"})]
    (report,) = only_report(tmp_path / "r")
    assert report["summary"]["passed"] == 2


def test_an_mcp_skill_from_create_loads_and_its_placeholder_entrypoint_is_one_line(tmp_path):
    """The template's entrypoint, mcp://localhost:8080/tools/<name>, is a placeholder the original cannot
    run either (it takes it for a command): here it is an input error naming the field, before anything runs."""
    skill = create_skill(tmp_path, "tool", "mcp_tool")
    out = cli("eval", "--skills", skill, "--benchmark", skill / "tests" / "basic.eval.json", "--no-store",
              "--output-dir", tmp_path / "r", "--dry-run", cwd=tmp_path)
    assert out.returncode == 2 and out.stderr.count("\n") == 1
    assert f"{skill / 'skill.json'}: $.entrypoint: " in out.stderr
    assert not (tmp_path / "r").exists()


def test_the_original_benchmarks_folder_layout_is_found_by_id(tmp_path):
    init_project(tmp_path)
    shutil.copy(ORIGINAL / "coding-easy.json", tmp_path / "benchmarks" / "coding-easy.json")
    out = cli("eval", "--skills", ORIGINAL / "calculator", "--dry-run", "--json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    plan = json.loads(out.stdout)
    assert plan["benchmark"] == {"id": "coding-easy", "version": "1.1.0", "tasks": 12}
    assert plan["inputMismatches"] == 4


def test_the_original_store_in_the_folder_is_left_alone_and_results_go_beside_it(tmp_path):
    """The original's ./eval-skills.db (its default name and ours) does not stop a run nobody pointed at it:
    results go to ./eval-skills-results.db, which history, find and select then read; named by --store (or the
    config's store) it is refused in one line before anything runs."""
    import sqlite3

    store = tmp_path / "eval-skills.db"
    with sqlite3.connect(store) as db:  # the tables the original's SqliteStore creates
        db.executescript("""
            CREATE TABLE skills (id TEXT PRIMARY KEY, name TEXT NOT NULL, version TEXT NOT NULL,
                                 data JSON NOT NULL, created_at DATETIME, updated_at DATETIME);
            CREATE TABLE evaluations (id TEXT PRIMARY KEY, skill_id TEXT NOT NULL, benchmark_id TEXT NOT NULL,
                                      summary JSON, timestamp DATETIME);
            CREATE TABLE task_results (eval_id TEXT NOT NULL, task_id TEXT NOT NULL, skill_id TEXT NOT NULL,
                                       run_id INTEGER NOT NULL DEFAULT 1, status TEXT NOT NULL, score REAL NOT NULL,
                                       latency_ms INTEGER NOT NULL, data JSON NOT NULL, created_at DATETIME,
                                       PRIMARY KEY (eval_id, task_id, run_id));
            INSERT INTO skills VALUES ('calculator', 'Calculator', '0.1.0', '{}', NULL, NULL);
        """)
    before = store.read_bytes()
    for flag in (["--store", store], ["-c", tmp_path / "c.yaml"]):
        (tmp_path / "c.yaml").write_text(f"store: {store}\n")
        out = cli("eval", "--skills", ORIGINAL / "calculator", "--benchmark", ORIGINAL / "coding-easy.json",
                  *flag, cwd=tmp_path)
        assert out.returncode == 2, out.stderr
        assert out.stderr.count("\n") == 1 and "eval-skills.db" in out.stderr
        assert "written by the original eval-skills (TypeScript)" in out.stderr and "--store" in out.stderr
        assert store.read_bytes() == before and not (tmp_path / "reports").exists()
    out = cli("eval", "--skills", ORIGINAL / "calculator", "--benchmark", ORIGINAL / "coding-easy.json",
              "--format", "json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "eval-skills.db is the original eval-skills' store" in out.stderr
    assert "stored as evaluation" in out.stdout and "eval-skills-results.db" in out.stdout
    assert store.read_bytes() == before and (tmp_path / "eval-skills-results.db").is_file()
    history = cli("history", "--skill", "calculator", "--json", cwd=tmp_path)
    assert history.returncode == 0, history.stderr
    assert len(json.loads(history.stdout)["evaluations"]) == 1


def test_report_convert_and_diff_show_the_numbers_of_the_originals_reports(tmp_path):
    before = json.loads((ORIGINAL / "report.json").read_text())
    after = json.loads(json.dumps(before))
    after[0]["taskResults"][3] = {**after[0]["taskResults"][3], "status": "pass", "score": 1, "error": None}
    after[0]["summary"]["completionRate"] = 0.75
    (tmp_path / "before.json").write_text(json.dumps(before))
    (tmp_path / "after.json").write_text(json.dumps(after))
    out = cli("report", "convert", "--input", tmp_path / "before.json", "--format", "markdown", "--output",
              tmp_path / "before.md", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    markdown = (tmp_path / "before.md").read_text()
    assert "4 tasks, 1 run(s): 2 passed, 1 failed, 1 errors, 0 timeouts." in markdown and "n/a tasks" not in markdown
    diff = cli("report", "diff", tmp_path / "before.json", tmp_path / "after.json", "--json", cwd=tmp_path)
    assert diff.returncode == 0, diff.stderr
    result = json.loads(diff.stdout)
    assert result["skills"][0]["metrics"]["completionRate"] == {"a": 0.5, "b": 0.75, "delta": 0.25,
                                                                "verdict": "better"}
    # the result without a runId is matched as run 1, and is not "on one side only"
    assert [(c["taskId"], c["runId"], c["change"]) for c in result["taskChanges"]] == [
        ("coding_004", "1", "newly passing")]


def test_an_invalid_input_schema_is_a_warning_unless_strict_input(tmp_path):
    """The original never reads inputSchema, so a skill whose schema is not valid JSON Schema still ran there."""
    skill = tmp_path / "calc"
    shutil.copytree(ORIGINAL / "calculator", skill)
    manifest = json.loads((skill / "skill.json").read_text())
    manifest["inputSchema"] = {"type": "object", "required": "expression"}  # required must be a list
    (skill / "skill.json").write_text(json.dumps(manifest))
    tasks = tmp_path / "t.json"
    tasks.write_text(json.dumps([{"id": "add", "inputData": {"expression": "1+1"},
                                  "expectedOutput": {"type": "exact", "value": "2"}},
                                 {"id": "none", "expectedOutput": {"type": "exact", "value": "error: invalid "
                                                                   "syntax (<string>, line 0)"}}]))
    out = cli("eval", "--skills", skill, "--tasks", tasks, "--no-store", "--output-dir", tmp_path / "r",
              "--format", "json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    (report,) = only_report(tmp_path / "r")
    results = {t["taskId"]: t for t in report["taskResults"]}
    assert results["add"]["status"] == "pass" and report["summary"]["inputWarnings"] == 1
    assert results["add"]["warnings"] == ["the skill's inputSchema cannot check inputData: invalid JSON Schema: "
                                          "'expression' is not of type 'array'"]
    assert "warnings" not in results["none"]  # no inputData: nothing to check, as before
    assert "sent anyway (calculator 1)" in out.stderr
    strict = cli("eval", "--skills", skill, "--tasks", tasks, "--no-store", "--output-dir", tmp_path / "s",
                 "--strict-input", cwd=tmp_path)
    assert strict.returncode == 2 and strict.stderr.count("\n") == 1 and not (tmp_path / "s").exists()
    assert f"{skill / 'skill.json'}: $.inputSchema: invalid JSON Schema: " in strict.stderr
