"""`eval-skills routing` as a user runs it: real processes, a command agent running the fake agent, real files."""

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
from fakes import FAKE_AGENT
from test_routing import QUERIES, SCRIPT, write_skill

AGENT = ["--agent-cmd", f"python {FAKE_AGENT} --prompt-file {{prompt_file}}", "--agent-output", "events"]


def cli_args(*args):
    return [sys.executable, "-m", "eval_skills", "routing", *map(str, args)]


def cli(*args, cwd: Path, env=None, timeout=120):
    return subprocess.run(cli_args(*args), cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})


@pytest.fixture
def setup(tmp_path):
    skill = write_skill(tmp_path / "invoice-check", "Checks invoice totals, VAT and due dates. Use when asked to "
                        "check an invoice.", QUERIES)
    write_skill(tmp_path / "others" / "receipt-scan", "Reads scanned receipts. Use for receipts.")
    home = tmp_path / "home"
    write_skill(home / ".agents" / "skills" / "receipt-scan", "The user's own copy.")
    env = {"HOME": str(home), "FAKE_AGENT_JSON": json.dumps({**SCRIPT, "log": str(tmp_path / "runs.jsonl")})}
    return skill, env


def test_run_writes_results_and_min_f1_gates(tmp_path, setup):
    skill, env = setup
    out = cli("--skill-path", skill, "--distractors", tmp_path / "others", *AGENT, "--min-f1", "0.7",
              "--store", tmp_path / "s.db", cwd=tmp_path, env=env)
    # F1 = 2*3 / (2*3 + 2 + 1) = 0.6667 (see test_routing.py), below 0.7
    assert out.returncode == 1, out.stderr
    assert "quality gate failed: F1 0.6667 is below 0.7" in out.stderr
    assert "1 of 9 runs were errors" in out.stderr
    assert "home/.agents/skills/receipt-scan is installed at user level too" in out.stderr
    assert "precision 0.6000  recall 0.7500  f1 0.6667  accuracy 0.6250" in out.stdout
    assert "  unspecified: 1 query, precision" in out.stdout
    assert "  explicit: 2 queries," in out.stdout  # its third query is the error run's: unscored
    folder = tmp_path / "invoice-check-workspace" / "routing-1"  # beside the skill by default
    assert f"results: {folder}" in out.stdout
    saved = json.loads((folder / "routing_results.json").read_text())
    assert saved["metrics"]["by_invocation_type"]["implicit"]["recall"] == 0.5
    assert (folder / "routing.md").is_file() and (folder / "query-9" / "run-1" / "transcript.jsonl").is_file()
    with sqlite3.connect(tmp_path / "s.db") as db:
        assert db.execute("SELECT status, f1 FROM routing_tests").fetchall() == [("finished", 0.6667)]
        assert db.execute("SELECT COUNT(*) FROM routing_runs").fetchone()[0] == 9

    out = cli("--skill-path", skill, "--distractors", tmp_path / "others", *AGENT, "--min-f1", "0.6", "--json",
              "--no-store", "--workspace", tmp_path / "ws", cwd=tmp_path, env=env)
    assert out.returncode == 0, out.stderr
    printed = json.loads(out.stdout)
    saved = json.loads((tmp_path / "ws" / "routing-1" / "routing_results.json").read_text())
    assert printed == {"passed": True, **saved}
    assert printed["metrics"]["f1"] == 0.6667 and printed["queries"][4]["distractors_invoked"] == {"receipt-scan": 1}


def test_bad_input_is_one_line_exit_2_before_any_agent_runs(tmp_path, setup):
    skill, env = setup
    bad = {"empty.json": "[]", "malformed.json": '[{"query": "x", "should_trigger": true,}',
           "missing.json": '[{"query": "x"}]', "negatives.json": '[{"query": "x", "should_trigger": false}]',
           "yes.json": '[{"query": "x", "should_trigger": "yes"}]', "object.json": '{"query": "x"}',
           "string.json": '[{"query": "x", "should_trigger": true}, "y"]',
           "blank.json": '[{"query": "x", "should_trigger": true}, {"query": " \\n ", "should_trigger": true}]'}
    for name, text in bad.items():
        (tmp_path / name).write_text(text)
    runs = {
        "empty": (["--routing", tmp_path / "empty.json"], "empty.json: $: has no queries"),
        "malformed": (["--routing", tmp_path / "malformed.json"], "malformed.json: invalid JSON at line 1"),
        "missing": (["--routing", tmp_path / "missing.json"], "missing.json: $[0].should_trigger: required field"),
        "yes": (["--routing", tmp_path / "yes.json"], "yes.json: $[0].should_trigger: Input should be a valid boolean"),
        "not a list": (["--routing", tmp_path / "object.json"], "object.json: $: expected a JSON array"),
        "blank query": (["--routing", tmp_path / "blank.json"], "blank.json: $[1].query: the query is blank"),
        "a string for a query": (["--routing", tmp_path / "string.json"], "string.json: $[1]: expected a JSON "
                                 "object"),
        "static blank query": (["--static", "--routing", tmp_path / "blank.json"], "$[1].query: the query is blank"),
        "workspace inside the skill": (["--workspace", skill / "results"], "results: --workspace: is inside the "
                                       "skill folder"),
        "static bad file": (["--static", "--routing", tmp_path / "missing.json"], "should_trigger: required"),
        "min-f1 without positives": (["--routing", tmp_path / "negatives.json", "--min-f1", "0.5"],
                                     "no query has should_trigger true"),
        "static with min-f1": (["--static", "--min-f1", "0.5"], "--min-f1 needs agent runs"),
        "min-f1 nan": (["--min-f1", "nan"], "'nan' is not a finite number"),  # a gate that never fails
        "timeout nan": (["--timeout", "nan"], "'nan' is not a finite number"),  # every run an error
        "no such distractor": (["--distractors", tmp_path / "nowhere"], "distractor folder not found"),
        "no such program": (["--agent-cmd", "no-such-agent-xyz {prompt}"], "not found"),
        "unknown agent": (["--agent", "nope"], "unknown agent 'nope'"),
        "text output": (["--agent-cmd", f"python {FAKE_AGENT} --prompt-file {{prompt_file}}"],
                        "--agent-output: a command agent read as plain text reports no skill invocations"),
        "static without a skill": (["--static", "--skill-path", tmp_path / "nothing"], "nothing: no SKILL.md"),
    }
    procs = {}
    for key, (args, _) in runs.items():
        agent = [] if any(a in args for a in ("--agent-cmd", "--agent")) else AGENT
        skill_arg = [] if "--skill-path" in args else ["--skill-path", skill]
        procs[key] = subprocess.Popen(cli_args(*skill_arg, *agent, *args, "--store", tmp_path / "s.db"),
                                      cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                      env={**os.environ, **env})
    for key, proc in procs.items():
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 2, (key, err)
        assert len(err.strip().splitlines()) == 1 and err.startswith("error: "), (key, err)
        assert runs[key][1] in err, (key, err)
        assert out == "", key
    assert not (tmp_path / "runs.jsonl").exists()  # no agent ran
    assert not (tmp_path / "invoice-check-workspace").exists() and not (tmp_path / "s.db").exists()
    assert not (skill / "results").exists()


def test_a_copy_of_the_skill_among_the_distractors_is_skipped(tmp_path, setup):
    # ~/.agents/skills often holds an installed copy of the very skill under test
    skill, env = setup
    user_skills = Path(env["HOME"]) / ".agents" / "skills"
    write_skill(user_skills / "invoice-check", "The installed copy.")
    out = cli("--skill-path", skill, "--distractors", user_skills, *AGENT, "--no-store", "--workspace",
              tmp_path / "ws", "--json", cwd=tmp_path, env=env)
    assert out.returncode == 0, out.stderr
    assert (f"warning: {user_skills / 'invoice-check'} is named 'invoice-check' like the skill under test (a copy "
            "of it?): not installed as a distractor") in out.stderr
    results = json.loads(out.stdout)
    assert [d["name"] for d in results["metadata"]["distractors"]] == ["receipt-scan"]
    runs = [json.loads(line) for line in (tmp_path / "runs.jsonl").read_text().splitlines()]
    assert {tuple(r["skills_present"]) for r in runs} == {("invoice-check", "receipt-scan")}
    assert results["queries"][4]["distractors_invoked"] == {"receipt-scan": 1}


def test_a_broken_skill_in_a_folder_of_distractors_is_skipped_unless_named(tmp_path, setup):
    # one broken skill in ~/.agents/skills must not block a test that installs all of them
    skill, env = setup
    user_skills = Path(env["HOME"]) / ".agents" / "skills"
    broken = user_skills / "half-done"
    broken.mkdir()
    (broken / "SKILL.md").write_text("---\nname: half-done\n---\n# no description yet\n")
    out = cli("--skill-path", skill, "--distractors", user_skills, *AGENT, "--no-store", "--workspace",
              tmp_path / "ws", "--json", cwd=tmp_path, env=env)
    assert out.returncode == 0, out.stderr
    assert (f"warning: {broken} is not a valid skill, not installed as a distractor: {broken / 'SKILL.md'}: "
            "frontmatter.description:") in out.stderr
    assert [d["name"] for d in json.loads(out.stdout)["metadata"]["distractors"]] == ["receipt-scan"]
    runs = [json.loads(line) for line in (tmp_path / "runs.jsonl").read_text().splitlines()]
    assert {tuple(r["skills_present"]) for r in runs} == {("invoice-check", "receipt-scan")}
    (tmp_path / "runs.jsonl").unlink()
    out = cli("--skill-path", skill, "--distractors", broken, *AGENT, "--no-store", "--workspace", tmp_path / "ws2",
              cwd=tmp_path, env=env)  # named on its own: the user's mistake to fix
    assert out.returncode == 2 and out.stderr.startswith(f"error: {broken / 'SKILL.md'}: frontmatter.description:")
    assert not (tmp_path / "runs.jsonl").exists() and not (tmp_path / "ws2").exists()


def test_a_test_whose_every_run_failed_measured_nothing_and_exits_1(tmp_path, setup):
    skill, env = setup
    env = {**env, "FAKE_AGENT_JSON": json.dumps({"mode": "exit", "exit_code": 7})}  # a broken agent command
    out = cli("--skill-path", skill, *AGENT, "--no-store", cwd=tmp_path, env=env)
    assert out.returncode == 1, out.stderr
    folder = tmp_path / "invoice-check-workspace" / "routing-1"
    assert (f"nothing measured: every agent run failed (9 error runs; the first: the agent exited with code 7; "
            f"stderr was empty); see {folder / 'routing.md'}") in out.stderr
    results = json.loads((folder / "routing_results.json").read_text())  # the results are written all the same
    assert results["metrics"]["unscored"] == 9 and results["metrics"]["f1"] is None


def test_static_check_runs_no_agent(tmp_path, setup):
    skill, env = setup
    out = cli("--skill-path", skill, "--static", cwd=tmp_path, env=env)
    assert out.returncode == 0, out.stderr
    assert "no agent ran" in out.stdout and "key terms: invoic, check, total, vat, due, dat" in out.stdout
    assert "  3. [should] shares 2 (0.50) 'is the due date on this bill right?'\n" in out.stdout  # due, dat
    out = cli("--skill-path", skill, "--static", "--json", cwd=tmp_path, env=env)
    report = json.loads(out.stdout)
    flags = {q["query"]: q["flag"] for q in report["queries"]}
    # 1 of its 3 terms (writ, poem, invoic) is shared, and it is a term of the skill's name
    assert "shares 1 key term with the name or description (invoic)" in flags["write a poem about invoices"]
    assert flags["what is the weather"] is None and flags["check the invoice total"] is None
    assert not (tmp_path / "runs.jsonl").exists() and not (tmp_path / "invoice-check-workspace").exists()
    broken = write_skill(tmp_path / "Broken", "Too short.", QUERIES)
    out = cli("--skill-path", broken, "--static", cwd=tmp_path, env=env)
    assert out.returncode == 1 and "must be lowercase" in out.stdout
    assert "description check failed" in out.stderr


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_interrupt_keeps_finished_runs(tmp_path, signum, code):
    queries = [{"query": f"invoice number {i}", "should_trigger": True} for i in range(40)]
    skill = write_skill(tmp_path / "invoice-check", "Checks invoices. Use when asked to.", queries)
    env = {"FAKE_AGENT_JSON": json.dumps({"skill": "invoice-check", "delay": 0.2})}
    proc = subprocess.Popen(cli_args("--skill-path", skill, *AGENT, "--concurrency", "1", "--store",
                                     tmp_path / "s.db"), cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, **env})
    deadline, done = time.time() + 30, 0
    while time.time() < deadline and done < 2:
        time.sleep(0.1)
        try:
            with sqlite3.connect(tmp_path / "s.db") as db:
                done = db.execute("SELECT COUNT(*) FROM routing_runs").fetchone()[0]
        except sqlite3.Error:
            pass
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == code, err
    results = json.loads((tmp_path / "invoice-check-workspace" / "routing-1" / "routing_results.json").read_text())
    finished = results["metadata"]["finished_runs"]
    assert 2 <= finished < 40 and results["metadata"]["interrupted"] is True
    assert results["metadata"]["in_progress"] is False and results["metadata"]["finished_at"]
    assert f"interrupted: {finished} of 40 runs finished" in err
    assert "Traceback" not in err and "never retrieved" not in err, err  # the runs cancelled end quietly
    with sqlite3.connect(tmp_path / "s.db") as db:
        assert db.execute("SELECT status FROM routing_tests").fetchone()[0] == "interrupted"
        assert db.execute("SELECT COUNT(*) FROM routing_runs").fetchone()[0] == finished


def test_a_test_killed_outright_leaves_the_figures_of_its_finished_runs(tmp_path):
    queries = [{"query": f"invoice number {i}", "should_trigger": i % 2 == 0} for i in range(30)]
    skill = write_skill(tmp_path / "invoice-check", "Checks invoices. Use when asked to.", queries)
    (tmp_path / "scratch").mkdir()  # what the killed process cannot remove stays in the test's folder
    env = {**os.environ, "FAKE_AGENT_JSON": json.dumps({"skill": "invoice-check", "delay": 0.2}),
           "EVAL_SKILLS_SCRATCH": str(tmp_path / "scratch")}
    proc = subprocess.Popen(cli_args("--skill-path", skill, *AGENT, "--concurrency", "1", "--no-store"),
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    results_file = tmp_path / "invoice-check-workspace" / "routing-1" / "routing_results.json"
    deadline, seen = time.time() + 60, None
    while time.time() < deadline and proc.poll() is None:
        if results_file.is_file():
            seen = json.loads(results_file.read_text())  # written atomically: never half a file
            if seen["metadata"]["finished_runs"] >= 3:
                break
        time.sleep(0.05)
    proc.kill()  # SIGKILL: no chance to write anything more
    proc.communicate(timeout=30)
    assert seen is not None and seen["metadata"]["finished_runs"] >= 3
    results = json.loads(results_file.read_text())
    meta = results["metadata"]
    assert meta["in_progress"] is True and meta["finished_at"] is None and meta["interrupted"] is None
    finished = meta["finished_runs"]
    assert 3 <= finished < 30 and meta["planned_runs"] == 30
    recorded = [q for q in results["queries"] if q["runs"]]
    assert len(recorded) == finished and all(q["run_results"][0]["status"] == "ok" for q in recorded)
    # each query that finished triggered (the fake uses the skill on every query): TP for even i, FP for odd
    m = results["metrics"]
    assert (m["tp"], m["fp"], m["queries"], m["unscored"]) == ((finished + 1) // 2, finished // 2, finished,
                                                               30 - finished)
    report = (results_file.parent / "routing.md").read_text()
    # written just after the results file: the kill may land between the two, so it may hold the write before
    shown = re.search(r"Runs: (\d+) of 30 finished", report)
    assert shown is not None and 0 < int(shown.group(1)) <= finished, report
    assert "**Not finished** when this was written" in report


def test_interrupt_while_skills_are_installed_leaves_no_temporary_workspace(tmp_path):
    # a skill of 1500 files takes long enough to copy that the interrupt lands while several are copied in
    queries = [{"query": f"invoice number {i}", "should_trigger": True} for i in range(60)]
    skill = write_skill(tmp_path / "invoice-check", "Checks invoices. Use when asked to.", queries)
    (skill / "data").mkdir()
    for i in range(1500):
        (skill / "data" / f"f{i}.txt").write_text("x" * 100)
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {**os.environ, "TMPDIR": str(temp), "FAKE_AGENT_JSON": json.dumps({"skill": "invoice-check"})}
    proc = subprocess.Popen(cli_args("--skill-path", skill, *AGENT, "--concurrency", "8", "--no-store"),
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.time() + 30
    while time.time() < deadline and not any(temp.glob("eval-skills-routing-*/*/.agents")):
        time.sleep(0.02)
    time.sleep(0.3)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "Traceback" not in err, err
    assert sorted(p.name for p in temp.iterdir() if p.name.startswith("eval-skills-routing-")) == []


def test_progress_bar_on_a_terminal(tmp_path):
    import pty

    skill = write_skill(tmp_path / "invoice-check", "Checks invoices.",
                        [{"query": f"invoice {i}", "should_trigger": True} for i in range(4)])
    env = {**os.environ, "FAKE_AGENT_JSON": json.dumps({"skill": "invoice-check", "delay": 0.3}), "TERM": "xterm"}
    master, slave = pty.openpty()
    proc = subprocess.Popen(cli_args("--skill-path", skill, *AGENT, "--concurrency", "1", "--no-store"),
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=slave, env=env)
    os.close(slave)
    seen = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    proc.wait(timeout=30)
    os.close(master)
    assert proc.returncode == 0
    assert b"routing runs" in seen
    assert b"routing runs" not in proc.stdout.read()
