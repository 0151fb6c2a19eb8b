"""`eval-skills eval` against hostile skills and scorers: every task gets exactly one result with its reason,
nothing hangs, nothing reaches stdout, signals keep what finished. Real processes, real store, real files."""

import csv
import io
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from procs import wait_gone
from test_cli_eval import chaos_skill, cli

EXACT = {  # behaviour -> (status, error, as a regular expression matched in full)
    "ok": ("pass", None),
    "deep": ("error", r"a reply that is not usable JSON: nested deeper than 256 levels"),
    "nan": ("error", r"a reply that is not usable JSON: NaN is not a JSON number"),
    "replyexit3": ("error", r"exited with code 3 after replying; stderr: stderr: handling \d+ \| failed after all"),
    "stringid": ("error", r"no JSON-RPC reply; a reply matched no request \(its id must be (\d+) or null\): "
                          r"'\{\"jsonrpc\": \"2.0\", \"id\": \"\1\".*"),
    "detach": ("error", r"no JSON-RPC reply; last output: 'log: request \d+ do=detach'"),
}


def tasks_file(tmp_path: Path, items: list[dict], name: str = "tasks.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(items))
    return path


def marker_tasks(tmp_path: Path, behaviours: list[str], extra: dict | None = None) -> Path:
    return tasks_file(tmp_path, [{"id": f"{i:02d}-{do}",
                                  "inputData": {"do": do, "marker": f"m{i:02d}", **(extra or {})},
                                  "expectedOutput": {"type": "contains", "keywords": [f"m{i:02d}"]}}
                                 for i, do in enumerate(behaviours)])


def only_report(folder: Path, suffix: str) -> Path:
    (path,) = folder.glob(f"*{suffix}")
    return path


def test_one_shot_misbehaviours_each_get_their_exact_result_and_the_others_run(tmp_path):
    behaviours = ["ok", "deep", "nan", "replyexit3", "stringid", "detach", "ok"]
    pid_file = tmp_path / "detached.pid"
    skill = chaos_skill(tmp_path, False)
    tasks = marker_tasks(tmp_path, behaviours, {"pid_file": str(pid_file)})
    out = cli("eval", "--skills", skill, "--tasks", tasks, "--timeout", "20000", "--json", "--format", "json", "csv",
              "markdown", "html", "--output-dir", tmp_path / "r", "--store", tmp_path / "s.db", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stderr == ""  # no noise at exit ("Event loop is closed", a traceback from a transport)
    assert wait_gone(int(pid_file.read_text()))  # adopted by the harness (a subreaper), then killed
    (report,) = json.loads(out.stdout)["reports"]
    # the detached descendant held stdout open: it did not hold the run (no call waited for its timeout)
    assert "timeout" not in [r["status"] for r in report["taskResults"]]
    results = {r["taskId"]: r for r in report["taskResults"]}
    assert sorted(results) == [f"{i:02d}-{do}" for i, do in enumerate(behaviours)]
    for task_id, result in results.items():
        status, error = EXACT[task_id[3:]]
        assert result["status"] == status, result
        if error is None:
            assert result["error"] is None, result
        else:
            assert re.fullmatch(error, result["error"]), result["error"]
        assert result["latencyMs"] is not None and result["latencyMs"] > 0
    assert results["03-replyexit3"]["output"]["echo"]["marker"] == "m03"  # the reply is kept for debugging
    with sqlite3.connect(tmp_path / "s.db") as db:
        stored = dict(db.execute("select task_id, status from task_results").fetchall())
    assert stored == {task_id: r["status"] for task_id, r in results.items()}
    rows = list(csv.DictReader(io.StringIO(only_report(tmp_path / "r", ".csv").read_text())))
    assert sorted(row["taskId"] for row in rows) == sorted(results)


def test_a_lone_surrogate_is_stored_reported_and_shown_one_way_everywhere(tmp_path):
    skill = chaos_skill(tmp_path, True)
    tasks = tasks_file(tmp_path, [{"id": "lone", "inputData": {"do": "surrogate"},
                                   "expectedOutput": {"type": "exact", "value": "x"}}])
    out = cli("eval", "--skills", skill, "--tasks", tasks, "--format", "json", "csv", "markdown", "html",
              "--output-dir", tmp_path / "r", "--store", tmp_path / "s.db", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    shown = "lone \ufffd surrogate"
    assert "evaluation" in out.stdout
    (report,) = json.loads(only_report(tmp_path / "r", ".json").read_text(encoding="utf-8"))
    (result,) = report["taskResults"]
    assert result["status"] == "fail" and result["output"] == {"text": shown, "\ufffd": 1}
    assert shown in result["reason"]
    for suffix in (".csv", ".md", ".html"):
        assert shown in only_report(tmp_path / "r", suffix).read_text(encoding="utf-8"), suffix
    with sqlite3.connect(tmp_path / "s.db") as db:
        (output_json, status), = db.execute("select output_json, status from task_results").fetchall()
        (evaluation_status,), = db.execute("select status from evaluations").fetchall()
    assert json.loads(output_json) == {"text": shown, "\ufffd": 1} and status == "fail"
    assert evaluation_status == "finished"


def test_persistent_deep_reply_fails_only_its_task(tmp_path):
    skill = chaos_skill(tmp_path, True)
    tasks = marker_tasks(tmp_path, ["ok", "deep", "ok", "ok"])
    out = cli("eval", "--skills", skill, "--tasks", tasks, "--json", "--format", "json", "--concurrency", "1",
              "--output-dir", tmp_path / "r", "--no-store", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    (report,) = json.loads(out.stdout)["reports"]
    assert [(r["status"], r["error"]) for r in report["taskResults"]] == [
        ("pass", None), ("error", "a reply that is not usable JSON: nested deeper than 256 levels"),
        ("pass", None), ("pass", None)]


# -- scorers --------------------------------------------------------------------------------------------

SCORER = """
import sys, time
def score(output, expected, task):
    mode = expected["mode"]
    print("scorer noise on stdout")
    sys.stderr.write("scorer noise on stderr\\n")
    if mode == "exit": sys.exit(4)
    if mode == "sleep": time.sleep(30)
    if mode == "nan": return float("nan")
    if mode == "set": return {1, 2}
    if mode == "raise": raise ValueError("boom")
    if mode == "die": import os; os._exit(9)
    return {"score": 1, "passed": True, "reason": "fine"}
"""


def test_custom_scorer_misbehaviours_are_task_errors_naming_the_scorer_and_stdout_stays_json(tmp_path):
    skill = chaos_skill(tmp_path, True)
    (tmp_path / "scorers").mkdir()
    (tmp_path / "scorers" / "odd.py").write_text(SCORER)
    modes = ["ok", "exit", "sleep", "nan", "set", "raise", "die", "ok"]
    tasks = tasks_file(tmp_path, [{"id": f"{i}-{mode}", "inputData": {"do": "ok"}, "evaluator": {"type": "custom"},
                                   "expectedOutput": {"customScorerPath": "scorers/odd.py", "mode": mode}}
                                  for i, mode in enumerate(modes)])
    started = time.monotonic()
    out = cli("eval", "--skills", skill, "--tasks", tasks, "--json", "--format", "json", "--scorer-timeout", "2000",
              "--output-dir", tmp_path / "r", "--no-store", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert time.monotonic() - started < 25  # the sleeping scorer (30 s) was stopped at its deadline
    (report,) = json.loads(out.stdout)["reports"]  # nothing the scorer printed is on stdout
    assert "scorer noise" not in out.stderr
    name = "custom scorer scorers/odd.py"
    died = f"{name} exited with code 9 while scoring; its output: "
    results = report["taskResults"]
    noise = results[6]["error"].removeprefix(died)  # the worker's last lines (earlier calls' too, when it ran them)
    assert "scorer noise on stdout" in noise and "scorer noise on stderr" in noise, results[6]["error"]
    assert [(r["taskId"], r["status"], died + "..." if r["error"] and r["error"].startswith(died) else r["error"])
            for r in results] == [
        ("0-ok", "pass", None),
        ("1-exit", "error", f"{name} called sys.exit(4)"),
        ("2-sleep", "error", f"{name} did not return within 2s (its process was stopped)"),
        ("3-nan", "error", f"{name} returned score nan; expected a number from 0 to 1"),
        ("4-set", "error", f"{name} returned a set; expected bool, number or {{score, passed, reason}}"),
        ("5-raise", "error", f"{name} raised ValueError: boom"),
        ("6-die", "error", died + "..."),
        ("7-ok", "pass", None)]
    assert report["taskResults"][0]["reason"] == "fine"


@pytest.mark.parametrize(("source", "expected"), [
    ("import sys\nsys.exit(1)\n", "custom scorer s.py called sys.exit(1) while loading"),
    ("import time\ntime.sleep(60)\n", "custom scorer s.py did not load within 0.5s"),
    ("raise ImportError('no numpy here')\n", "custom scorer s.py raised ImportError: no numpy here while loading"),
    ("def score(:\n", "custom scorer s.py raised SyntaxError:"),
    ("print('hello')\nscore = 3\n", "custom scorer s.py has no score(output, expected, task) function"),
])
def test_a_custom_scorer_that_cannot_load_stops_the_run_before_anything_runs(tmp_path, source, expected):
    skill = chaos_skill(tmp_path, True)
    (tmp_path / "s.py").write_text(source)
    tasks = tasks_file(tmp_path, [{"id": "a", "evaluator": {"type": "custom"},
                                   "expectedOutput": {"customScorerPath": "s.py"}}])
    out = cli("eval", "--skills", skill, "--tasks", tasks, "--scorer-timeout", "500", "--output-dir", tmp_path / "r",
              "--store", tmp_path / "s.db", cwd=tmp_path)
    assert out.returncode == 2, out.stderr
    (line,) = out.stderr.strip().splitlines()
    assert line.startswith(f"error: {tasks}: $[0].expectedOutput: {expected}"), line
    assert out.stdout == ""
    assert not (tmp_path / "r").exists() and not (tmp_path / "s.db").exists()


def test_catastrophic_regex_is_stopped_at_the_scorer_deadline(tmp_path):
    skill = chaos_skill(tmp_path, True)
    pattern = r"^(?:(a+)(?:\1)*)+$"
    tasks = tasks_file(tmp_path, [
        {"id": "redos", "inputData": {"do": "answer", "value": "a" * 40 + "b"},
         "expectedOutput": {"type": "regex", "pattern": pattern}},
        {"id": "fine", "inputData": {"do": "answer", "value": "aaaa"},
         "expectedOutput": {"type": "regex", "pattern": pattern}}])
    started = time.monotonic()
    out = cli("eval", "--skills", skill, "--tasks", tasks, "--json", "--format", "json", "--scorer-timeout", "1500",
              "--output-dir", tmp_path / "r", "--no-store", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert time.monotonic() - started < 15
    (report,) = json.loads(out.stdout)["reports"]
    redos, fine = report["taskResults"]
    assert redos["status"] == "error"
    assert redos["error"] == "scorer regex did not finish within 1.5s"
    assert fine["status"] == "pass"


def test_scoring_never_counts_in_a_skills_latency_or_timeout(tmp_path):
    skill = chaos_skill(tmp_path, True)
    (tmp_path / "slow.py").write_text("import time\ndef score(output, expected, task):\n    time.sleep(1.0)\n"
                                      "    return True\n")
    items = [{"id": f"slow-scored-{i}", "inputData": {"do": "ok"}, "evaluator": {"type": "custom"},
              "expectedOutput": {"customScorerPath": "slow.py"}} for i in range(4)]
    items += [{"id": f"plain-{i}", "inputData": {"do": "ok", "m": f"x{i}"},
               "expectedOutput": {"type": "contains", "keywords": [f"x{i}"]}} for i in range(8)]
    tasks = tasks_file(tmp_path, items)
    out = cli("eval", "--skills", skill, "--tasks", tasks, "--json", "--format", "json", "--timeout", "800",
              "--concurrency", "4", "--output-dir", tmp_path / "r", "--no-store", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    (report,) = json.loads(out.stdout)["reports"]
    assert [r["status"] for r in report["taskResults"]] == ["pass"] * 12  # a 1 s scorer, a 0.8 s timeout
    assert max(r["latencyMs"] for r in report["taskResults"]) < 300


# -- signals ----------------------------------------------------------------------------------------------

def start_cli(tmp_path: Path, *args) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "eval_skills", "eval", *map(str, args)], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_for_rows(db: Path, count: int, seconds: float = 30) -> None:
    deadline = time.time() + seconds
    while time.time() < deadline:
        time.sleep(0.1)
        if db.exists():
            try:
                with sqlite3.connect(db) as conn:
                    if conn.execute("select count(*) from task_results").fetchone()[0] >= count:
                        return
            except sqlite3.Error:
                pass
    raise AssertionError(f"fewer than {count} results in {db}")


def test_sigterm_is_143_and_keeps_what_finished(tmp_path):
    skill = chaos_skill(tmp_path, True)
    tasks = marker_tasks(tmp_path, ["slow"] * 100)
    proc = start_cli(tmp_path, "--skills", skill, "--tasks", tasks, "--concurrency", "1", "--format", "json",
                     "--output-dir", tmp_path / "r", "--store", tmp_path / "s.db")
    wait_for_rows(tmp_path / "s.db", 3)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 143, err
    (report,) = json.loads(only_report(tmp_path / "r", ".json").read_text())
    finished = len(report["taskResults"])
    assert 3 <= finished < 100 and report["interrupted"] is True
    with sqlite3.connect(tmp_path / "s.db") as db:
        assert db.execute("select count(*) from task_results").fetchone()[0] == finished
        assert db.execute("select status from evaluations").fetchone()[0] == "interrupted"


def test_ctrl_c_does_not_wait_for_a_slow_scorer(tmp_path):
    skill = chaos_skill(tmp_path, True)
    (tmp_path / "slow.py").write_text("import time\ndef score(output, expected, task):\n"
                                      "    time.sleep(0.2 if task['id'] == 'first' else 60)\n    return True\n")
    tasks = tasks_file(tmp_path, [{"id": name, "inputData": {"do": "ok"}, "evaluator": {"type": "custom"},
                                   "expectedOutput": {"customScorerPath": "slow.py"}} for name in ("first", "second")])
    proc = start_cli(tmp_path, "--skills", skill, "--tasks", tasks, "--concurrency", "1", "--scorer-timeout", "120000",
                     "--format", "json", "--output-dir", tmp_path / "r", "--store", tmp_path / "s.db")
    wait_for_rows(tmp_path / "s.db", 1)
    time.sleep(0.3)
    started = time.monotonic()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert time.monotonic() - started < 5
    (report,) = json.loads(only_report(tmp_path / "r", ".json").read_text())
    assert [r["taskId"] for r in report["taskResults"]] == ["first"]


@pytest.mark.parametrize(("signum", "code", "said"), [(signal.SIGINT, 130, "interrupted"),
                                                      (signal.SIGTERM, 143, "terminated")])
def test_a_signal_while_a_custom_scorer_is_imported_keeps_its_exit_code_and_leaves_no_worker(tmp_path, signum, code,
                                                                                            said):
    skill = chaos_skill(tmp_path, True)
    pid_file = tmp_path / "worker.pid"
    (tmp_path / "hangs.py").write_text(f"import os, time\nopen({str(pid_file)!r}, 'w').write(str(os.getpid()))\n"
                                       "time.sleep(120)\ndef score(o, e, t):\n    return True\n")
    tasks = tasks_file(tmp_path, [{"id": "a", "evaluator": {"type": "custom"},
                                   "expectedOutput": {"customScorerPath": "hangs.py"}}])
    proc = start_cli(tmp_path, "--skills", skill, "--tasks", tasks, "--scorer-timeout", "120000",
                     "--output-dir", tmp_path / "r", "--store", tmp_path / "s.db")
    deadline = time.time() + 30
    while not pid_file.exists() or not pid_file.read_text():
        assert time.time() < deadline and proc.poll() is None
        time.sleep(0.05)
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == code, err
    assert err.strip().splitlines() == [said]
    assert wait_gone(int(pid_file.read_text()))
    assert not (tmp_path / "r").exists() and not (tmp_path / "s.db").exists()


# -- resources ---------------------------------------------------------------------------------------------

def test_a_low_open_file_limit_lowers_concurrency_and_no_task_pays_for_it(tmp_path):
    import resource

    skill = chaos_skill(tmp_path, False)
    tasks = marker_tasks(tmp_path, ["ok"] * 120)

    def low_limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))

    out = subprocess.run([sys.executable, "-m", "eval_skills", "eval", "--skills", str(skill), "--tasks", str(tasks),
                          "--concurrency", "100", "--json", "--format", "json", "--output-dir", str(tmp_path / "r"),
                          "--store", str(tmp_path / "s.db")], cwd=tmp_path, capture_output=True, text=True,
                         timeout=300, preexec_fn=low_limit)
    assert out.returncode == 0, out.stderr
    notes = [line for line in out.stderr.splitlines() if "lowered" in line]
    assert len(notes) == 1 and re.fullmatch(r"note: --concurrency 100 lowered to \d+: the open-file limit allows no "
                                            r"more \(raise it with ulimit -n\)", notes[0]), out.stderr
    (report,) = json.loads(out.stdout)["reports"]
    assert report["summary"]["passed"] == 120 and report["summary"]["errors"] == 0


# -- tasks that never ran ------------------------------------------------------------------------------------

def test_tasks_that_never_reached_the_skill_have_no_latency(tmp_path):
    folder = tmp_path / "never"
    folder.mkdir()
    (folder / "skill.json").write_text(json.dumps({
        "id": "never", "name": "N", "version": "1.0.0", "adapterType": "http", "entrypoint": "/invoke",
        "inputSchema": {"type": "object", "required": ["q"]}}))
    (folder / "adapter.config.json").write_text(json.dumps({
        "baseUrl": "http://127.0.0.1:9", "start": [sys.executable, "-c", "raise SystemExit(7)"]}))
    tasks = tasks_file(tmp_path, [{"id": "t1", "inputData": {"q": "x"}, "expectedOutput": {"value": "y"}},
                                  {"id": "t2", "inputData": {}, "expectedOutput": {"value": "y"}}])
    out = cli("eval", "--skills", folder, "--tasks", tasks, "--json", "--format", "json", "--output-dir",
              tmp_path / "r", "--store", tmp_path / "s.db", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    (report,) = json.loads(out.stdout)["reports"]
    assert [r["latencyMs"] for r in report["taskResults"]] == [None, None]
    assert report["taskResults"][0]["error"].startswith("skill did not start: exited with code 7 before answering")
    assert report["latency"] == {"p50Ms": None, "p95Ms": None, "p99Ms": None}
    assert report["summary"]["compositeScore"] == 0.0  # 0.5 x 0 + 0.2 x 0 (no latency) + 0.3 x (1 - 1)
    with sqlite3.connect(tmp_path / "s.db") as db:
        assert db.execute("select latency_ms from task_results").fetchall() == [(None,), (None,)]


def test_no_process_is_left_behind(tmp_path):
    skill = chaos_skill(tmp_path, True)
    pid_file = tmp_path / "pids"
    tasks = marker_tasks(tmp_path, ["hang", "ok"], {"pid_file": str(pid_file)})
    out = cli("eval", "--skills", skill, "--tasks", tasks, "--timeout", "1000", "--no-store", "--format", "json",
              "--output-dir", tmp_path / "r", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert all(wait_gone(int(pid)) for pid in pid_file.read_text().split())
    assert os.path.exists(tmp_path / "r")


def test_what_a_skill_or_scorer_sends_reaches_the_terminal_as_text_never_as_escape_sequences(tmp_path):
    """A scorer's output quoted in the one-line load error, and a skill's JSON-RPC error in the -vv log, are
    shown with their control characters escaped: a terminal never obeys them, and one line stays one line."""
    (tmp_path / "esc.py").write_text('print("\\x1b[2J\\x1b]0;pwned\\x07hello\\nline2", flush=True)\n'
                                     "import os\nos._exit(3)\n")
    scored = tasks_file(tmp_path, [{"id": "a", "inputData": {"do": "ok"}, "evaluator": {"type": "custom"},
                                    "expectedOutput": {"customScorerPath": "esc.py"}}], "scored.json")
    skill = tmp_path / "rude"
    skill.mkdir()
    (skill / "skill.json").write_text(json.dumps({"id": "rude", "version": "1", "adapterType": "subprocess",
                                                  "entrypoint": "python3 rude.py"}))
    (skill / "rude.py").write_text("import json, sys\nrequest = json.loads(sys.stdin.readline())\n"
                                   "print(json.dumps({'jsonrpc': '2.0', 'id': request['id'], 'error': "
                                   "{'code': -1, 'message': 'no\\x1b[31m red\\x1b]0;pwned\\x07\\u202e!'}}))\n")
    out = cli("eval", "--skills", skill, "--tasks", scored, "--no-store", "--json", cwd=tmp_path)
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and "\x1b" not in out.stderr and "\x07" not in out.stderr
    assert "its output: \\x1b[2J\\x1b]0;pwned\\x07hello | line2" in out.stderr
    plain = tasks_file(tmp_path, [{"id": "b", "inputData": {}, "expectedOutput": {"value": "x"}}], "plain.json")
    out = cli("eval", "--skills", skill, "--tasks", plain, "--no-store", "--json", "-vv", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "JSON-RPC error -1: no\\x1b[31m red\\x1b]0;pwned\\x07\\u202e!" in out.stderr
    assert not re.search("[\x00-\x09\x0b-\x1f\x7f\u202e]", out.stderr)
    (report,) = json.loads(out.stdout)["reports"]  # the reports keep what was sent, as it was
    assert report["taskResults"][0]["error"] == "JSON-RPC error -1: no\x1b[31m red\x1b]0;pwned\x07\u202e!"


@pytest.mark.parametrize("version", ["1.0[/]", "[blink]1.0"])
def test_a_version_that_looks_like_markup_is_shown_as_written(tmp_path, version):
    """The summary table showed "[blink]1.0" as "1.0", and "1.0[/]" ended the run with a traceback (rich markup);
    a report folder named like markup was not shown as it is either."""
    skill = tmp_path / "marked"
    skill.mkdir()
    (skill / "skill.json").write_text(json.dumps({"id": "marked", "version": version, "adapterType": "subprocess",
                                                  "entrypoint": "python3 answer.py"}))
    (skill / "answer.py").write_text("import json, sys\nrequest = json.loads(sys.stdin.readline())\n"
                                     "print(json.dumps({'jsonrpc': '2.0', 'id': request['id'], 'result': 'x'}))\n")
    plain = tasks_file(tmp_path, [{"id": "b", "inputData": {}, "expectedOutput": {"value": "x"}}])
    out = cli("eval", "--skills", skill, "--tasks", plain, "--no-store", "--format", "json",
              "--output-dir", tmp_path / "[bold]r", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[2].split()[:3] == ["marked", version, "100.00%"]
    assert f"report: {tmp_path / '[bold]r'}" in " ".join(out.stdout.split())
