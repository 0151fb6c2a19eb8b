"""A judge is untrusted too: `llm_judge` tasks of `eval-skills eval` asking a real judge program that leaves a
detached descendant holding its stdout, or replies with a lone surrogate or nesting 100,000 deep. Each task gets
its exact result; nothing waits for the judge's timeout; the store and `--json` take every reply."""

import json
import sqlite3
import time

from procs import wait_gone
from test_cli_eval import cli
from test_hardening_cli import tasks_file

JUDGE = '''
import json, os, subprocess, sys
request = json.load(sys.stdin)
mode = request["output"]["mode"]
if mode == "detach":  # a verdict, then exit 0 while a descendant in its own session holds stdout
    child = subprocess.Popen(["setsid", "sleep", "780"])
    with open(os.environ["PID_FILE"], "w") as handle:
        handle.write(str(child.pid))
    print(json.dumps({"score": 1, "reason": "fine"}), flush=True)
elif mode == "surrogate":
    print('{"score": 0.25, "reason": "lone \\\\ud800 surrogate"}')
elif mode == "deep":
    print('{"score": 1, "reason": ' + "[" * 100000 + "]" * 100000 + "}")
'''

ECHO = "def echo(data):\n    return data\n"


def test_a_judges_leftovers_surrogates_and_deep_replies_are_each_one_tasks_result(tmp_path):
    skill = tmp_path / "echo"
    skill.mkdir()
    (skill / "skill.json").write_text(json.dumps({"id": "echo", "version": "1.0.0", "adapterType": "custom",
                                                  "entrypoint": "mod:echo"}))
    (skill / "mod.py").write_text(ECHO)
    (tmp_path / "judge.py").write_text(JUDGE)
    tasks = tasks_file(tmp_path, [{"id": mode, "inputData": {"mode": mode}, "evaluator": {"type": "llm_judge"},
                                   "expectedOutput": {"rubric": "is it good"}}
                                  for mode in ("detach", "surrogate", "deep")])
    pid_file = tmp_path / "leftover.pid"
    started = time.monotonic()
    out = cli("eval", "--skills", skill, "--tasks", tasks, "--judge-cmd", "python3 judge.py", "--json",
              "--format", "json", "--output-dir", tmp_path / "r", "--store", tmp_path / "s.db", cwd=tmp_path,
              env={"PID_FILE": str(pid_file)})
    assert out.returncode == 0, out.stderr
    assert time.monotonic() - started < 30  # the judge's timeout (120 s) was never waited for
    assert wait_gone(int(pid_file.read_text()))
    (report,) = json.loads(out.stdout)["reports"]
    results = {r["taskId"]: (r["status"], r["error"], r["reason"]) for r in report["taskResults"]}
    assert results["detach"] == ("pass", None, "fine [judge command, prompt external]")
    assert results["surrogate"] == ("fail", None, "lone \ufffd surrogate [judge command, prompt external]")
    status, error, _ = results["deep"]
    assert status == "error"
    assert error.startswith("scorer llm_judge failed: judge error: the reply is not usable JSON: nested deeper than")
    with sqlite3.connect(tmp_path / "s.db") as db:
        stored = {task: (status, reason) for task, status, reason in
                  db.execute("select task_id, status, reason from task_results")}
        (evaluation,), = db.execute("select status from evaluations").fetchall()
    assert stored["surrogate"] == ("fail", "lone \ufffd surrogate [judge command, prompt external]")
    assert evaluation == "finished"
