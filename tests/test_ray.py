"""``--executor ray`` on a local Ray cluster (a head and two worker nodes, 2 CPUs each): paired, routing and eval give
what the local executor gives; a worker node lost mid-run, Ctrl-C and --resume. Real processes: the fake agent, a
persistent tool skill, the CLI in a subprocess (the driver). Marked ``ray`` (``pytest -m ray``): a cluster takes
seconds to start and about 750 MiB."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fakes import FAKE_AGENT
from paired_data import agent_args, invoice_skill, paired
from procs import wait_gone
from test_routing import QUERIES, SCRIPT, write_skill

ray_cluster = pytest.importorskip("ray_cluster")

pytestmark = pytest.mark.ray
MISBEHAVE = Path(__file__).parent / "skills" / "misbehave.py"


@pytest.fixture(scope="module")
def cluster():
    with ray_cluster.local_cluster(workers=2) as running:
        yield running


def on_ray(cluster, *names: str) -> list[str]:
    args = ["--executor", "ray", "--ray-address", cluster.address]
    for name in names:
        args += ["--ray-env", name]
    return args


def small_skill(root: Path, cases: int, **script):
    skill, _, script_file = invoice_skill(root)
    evals = json.loads((skill / "evals" / "evals.json").read_text())
    evals["evals"] = evals["evals"][:cases]
    for case in evals["evals"]:
        case["selftune_assertions"] = [{"type": "contains", "value": "VAT amount"}]
        case["assertions"] = []
    (skill / "evals" / "evals.json").write_text(json.dumps(evals))
    data = json.loads(script_file.read_text())
    data.update(cases=[], **script)
    script_file.write_text(json.dumps(data))
    return skill, script_file


def run_rows(db: Path) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return sorted(conn.execute("SELECT run_id, status FROM paired_runs").fetchall())


def shape(bench: dict) -> dict:
    """What a benchmark says, without its times and paths."""
    return {"runs": sorted((r["eval_id"], r["configuration"], r["run_number"], r["result"]["pass_rate"])
                           for r in bench["runs"]),
            "pass_rates": {arm: bench["run_summary"][arm]["pass_rate"] for arm in ("with_skill", "without_skill")},
            "delta": bench["statistics"]["pass_rate_delta"], "complete": bench["metadata"]["complete"]}


def files_of(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): p.read_text() for p in sorted(folder.rglob("grading.json"))}


def test_paired_on_ray_equals_local(tmp_path, cluster):
    skill, script = small_skill(tmp_path, 3)
    common = ["--skill-path", skill, *agent_args(script), "--no-compare", "--runs", 2, "--seed", 7]
    local = paired(*common, "--workspace", tmp_path / "local", "--store", tmp_path / "local.db", cwd=tmp_path,
                   script_file=script)
    assert local.returncode == 0, local.stderr
    remote = paired(*common, "--workspace", tmp_path / "ray", "--store", tmp_path / "ray.db",
                    *on_ray(cluster, "FAKE_AGENT_CONFIG"), cwd=tmp_path, script_file=script, timeout=300)
    assert remote.returncode == 0, remote.stderr
    read = [json.loads((tmp_path / w / "iteration-1" / "benchmark.json").read_text()) for w in ("local", "ray")]
    assert shape(read[0]) == shape(read[1])
    assert read[1]["run_summary"]["with_skill"]["pass_rate"]["mean"] == 1.0
    assert read[1]["run_summary"]["without_skill"]["pass_rate"]["mean"] == 0.0
    assert files_of(tmp_path / "local" / "iteration-1") == files_of(tmp_path / "ray" / "iteration-1")
    assert run_rows(tmp_path / "local.db") == run_rows(tmp_path / "ray.db") and len(run_rows(tmp_path / "ray.db")) == 12
    # the runs happened on the nodes: the agent's log names folders of the nodes' workers, never the driver's cwd
    runs = [json.loads(line) for line in (tmp_path / "agent-log.jsonl").read_text().splitlines()]
    assert len(runs) == 24 and all("eval-skills-paired-" in run["cwd"] for run in runs)


def test_routing_on_ray_equals_local(tmp_path, cluster):
    skill = write_skill(tmp_path / "invoice-check", "Checks invoice totals, VAT and due dates. Use when asked to "
                        "check an invoice.", QUERIES)
    write_skill(tmp_path / "others" / "receipt-scan", "Reads scanned receipts. Use for receipts.")
    env = {**os.environ, "FAKE_AGENT_JSON": json.dumps(SCRIPT)}
    agent = ["--agent-cmd", f"{sys.executable} {FAKE_AGENT} --prompt-file {{prompt_file}}", "--agent-output",
             "events"]
    results = []
    for name, extra in (("local", []), ("ray", on_ray(cluster, "FAKE_AGENT_JSON"))):
        out = subprocess.run([sys.executable, "-m", "eval_skills", "routing", "--skill-path", str(skill),
                              "--distractors", str(tmp_path / "others"), *agent, "--runs", "2", "--workspace",
                              str(tmp_path / name), "--store", str(tmp_path / f"{name}.db"), "--json", *extra],
                             cwd=tmp_path, capture_output=True, text=True, env=env, timeout=300)
        assert out.returncode == 0, out.stderr
        results.append(json.loads(out.stdout))
        with sqlite3.connect(tmp_path / f"{name}.db") as db:
            assert db.execute("SELECT COUNT(*) FROM routing_runs").fetchone()[0] == 18
    assert results[0]["metrics"] == results[1]["metrics"]
    assert [(q["query"], q["triggers"], q["errors"]) for q in results[0]["queries"]] == \
           [(q["query"], q["triggers"], q["errors"]) for q in results[1]["queries"]]
    local_runs = sorted(p.relative_to(tmp_path / "local" / "routing-1").as_posix()
                        for p in (tmp_path / "local").rglob("result.json"))
    ray_runs = sorted(p.relative_to(tmp_path / "ray" / "routing-1").as_posix()
                      for p in (tmp_path / "ray").rglob("result.json"))
    assert local_runs == ray_runs and len(ray_runs) == 18


def test_a_worker_node_lost_mid_run_is_retried_elsewhere_and_recorded_once(tmp_path, cluster):
    skill, script = small_skill(tmp_path, 4, delay=3)
    proc = subprocess.Popen([sys.executable, "-m", "eval_skills", "paired", "--skill-path", str(skill),
                             *agent_args(script), "--no-compare", "--runs", "2", "--store", str(tmp_path / "s.db"),
                             *on_ray(cluster, "FAKE_AGENT_CONFIG")], cwd=tmp_path, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "FAKE_AGENT_CONFIG": str(script)})
    log = tmp_path / "agent-log.jsonl"
    deadline = time.time() + 120
    while time.time() < deadline and not (log.exists() and log.read_text().count("\n") >= 6):
        time.sleep(0.05)  # every slot of the three nodes holds a run (each takes 3 s)
    victim = cluster.worker_nodes and sorted(cluster.worker_nodes, key=id)[-1]
    cluster.remove_node(victim, allow_graceful=False)
    try:
        _, err = proc.communicate(timeout=300)
    finally:
        cluster.add_node(**ray_cluster.NODE)  # the next tests get their cluster back
        cluster.wait_for_nodes()
    assert proc.returncode == 0, err
    bench = json.loads((tmp_path / "invoice-check-workspace" / "iteration-1" / "benchmark.json").read_text())
    assert bench["metadata"]["complete"] is True and len(bench["runs"]) == 16
    assert bench["run_summary"]["with_skill"]["pass_rate"]["mean"] == 1.0
    rows = run_rows(tmp_path / "s.db")
    assert len(rows) == 16 and len({run_id for run_id, _ in rows}) == 16 and {s for _, s in rows} == {"ok"}
    assert log.read_text().count("\n") > 16  # the lost node's runs were started again on the others


def test_ctrl_c_stops_the_runs_on_the_nodes_and_resume_finishes(tmp_path, cluster):
    skill, script = small_skill(tmp_path, 3)
    hang_script = tmp_path / "hang.json"
    hang_script.write_text(json.dumps({**json.loads(script.read_text()), "mode": "hang", "detach_child": True}))
    common = ["--skill-path", skill, *agent_args(script), "--no-compare", "--store", tmp_path / "s.db"]
    proc = subprocess.Popen([sys.executable, "-m", "eval_skills", "paired", *map(str, common),
                             *on_ray(cluster, "FAKE_AGENT_CONFIG")], cwd=tmp_path, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "FAKE_AGENT_CONFIG": str(hang_script)})
    deadline = time.time() + 120
    while time.time() < deadline and len(_agents(hang_script, proc.pid)) < 12:  # 6 agents, 6 detached children
        time.sleep(0.1)
    started = _agents(hang_script, proc.pid)
    assert len(started) == 12, proc.poll()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "interrupted:" in err and "--resume --iteration 1" in err
    assert all(wait_gone(pid, 10) for pid in started), "an agent (or its detached child) outlived the interrupt"
    with sqlite3.connect(tmp_path / "s.db") as db:
        assert db.execute("SELECT status FROM paired_iterations").fetchone() == ("interrupted",)

    out = paired(*common, "--resume", *on_ray(cluster, "FAKE_AGENT_CONFIG"), cwd=tmp_path, script_file=script,
                 timeout=300)
    assert out.returncode == 0, out.stderr
    bench = json.loads((tmp_path / "invoice-check-workspace" / "iteration-1" / "benchmark.json").read_text())
    assert bench["metadata"]["complete"] is True and bench["metadata"]["resumed"] is True and len(bench["runs"]) == 6
    assert len(run_rows(tmp_path / "s.db")) == 6


def _agents(script: Path, driver: int) -> list[int]:
    """The processes running with this agent script (the agents on the nodes and their children), not the driver."""
    mark = f"FAKE_AGENT_CONFIG={script}".encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == driver:
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as handle:
                if mark in handle.read().split(b"\0"):
                    found.append(int(entry))
        except OSError:
            continue
    return [pid for pid in found if not wait_gone(pid, 0)]


def chaos_skill(root: Path) -> Path:
    folder = root / "chaos"
    folder.mkdir()
    (folder / "misbehave.py").write_text(MISBEHAVE.read_text())
    (folder / "skill.json").write_text(json.dumps({"id": "chaos", "name": "Chaos", "version": "0.1.0",
                                                   "adapterType": "subprocess",
                                                   "entrypoint": "python3 misbehave.py"}))
    (folder / "adapter.config.json").write_text(json.dumps({"persistent": True}))
    return folder


def test_eval_of_a_persistent_skill_in_shards_equals_local(tmp_path, cluster):
    skill = chaos_skill(tmp_path)
    tasks = [{"id": f"{i:02d}", "inputData": {"do": do, "marker": f"marker-{i:02d}-end"},
              "expectedOutput": {"type": "contains", "keywords": [f"marker-{i:02d}-end" if i % 4 else "absent"]}}
             for i, do in enumerate(["ok", "ok", "rpcerror", "ok", "ok", "nonjson", "ok", "ok", "ok", "ok"])]
    (tmp_path / "tasks.json").write_text(json.dumps(tasks))
    reports = []
    for name, extra in (("local", []), ("ray", [*on_ray(cluster), "--shard-tasks", "3"])):
        out = subprocess.run([sys.executable, "-m", "eval_skills", "eval", "--skills", str(skill), "--tasks",
                              str(tmp_path / "tasks.json"), "--runs", "2", "--format", "json", "--output-dir",
                              str(tmp_path / name), "--store", str(tmp_path / f"{name}.db"), *extra],
                             cwd=tmp_path, capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr
        (report,) = json.loads(next((tmp_path / name).glob("*.json")).read_text())
        reports.append(report)
        with sqlite3.connect(tmp_path / f"{name}.db") as db:
            assert db.execute("SELECT COUNT(*) FROM task_results").fetchone()[0] == 20

    def results(report: dict) -> list[tuple]:
        return sorted((r["taskId"], r["runId"], r["status"], r["score"], r["error"] is None)
                      for r in report["taskResults"])

    assert results(reports[0]) == results(reports[1])
    for key in ("completionRate", "errorRate", "partialScore"):
        assert reports[0]["summary"][key] == reports[1]["summary"][key]
    assert {"pass", "fail", "error"} <= {r["status"] for r in reports[1]["taskResults"]}


def test_paired_through_claude_code_on_ray_equals_local(tmp_path, cluster):
    """The real Claude Code on the nodes, against the scripted model: its environment (home, the model's URL and
    key) given to the runs with --ray-env."""
    from agent_clis import MODELS, cli_env, require_cli
    from e2e_scenarios import eval_skills, script_invoice
    from e2e_scenarios import invoice_skill as claude_skill
    from fakes.model_server import ModelServer

    require_cli("claude")
    skill, _ = claude_skill(tmp_path)
    benches = []
    for name in ("local", "ray"):
        with ModelServer() as model:
            script_invoice(model, "claude")
            names = sorted(cli_env("claude", model, tmp_path / "home"))
            out = eval_skills("paired", "--skill-path", skill, "--model", MODELS["claude"], "--concurrency", 2,
                              "--timeout", 240, "--no-compare", "--no-store", "--json", "--workspace", tmp_path / name,
                              *(on_ray(cluster, *names) if name == "ray" else []), cli="claude", server=model,
                              cwd=tmp_path, home=tmp_path / "home")
        assert out.returncode == 0, out.stderr
        benches.append(json.loads(out.stdout))
    assert shape(benches[0]) == shape(benches[1])
    assert benches[1]["run_summary"]["with_skill"]["pass_rate"]["mean"] == 0.5
    assert {r["result"].get("errors") for r in benches[1]["runs"]} == {0}


def test_a_node_without_the_agent_program_is_named_before_any_run(tmp_path, cluster):
    """The agent's program is on the driver's PATH only: the nodes (started with the tests' PATH) lack it. A driver
    without it is no problem: the runs happen on the nodes."""
    skill, script = small_skill(tmp_path, 2)
    tools = tmp_path / "tools"
    tools.mkdir()
    program = tools / "my-agent"
    program.write_text(f"#!/bin/sh\nexec {sys.executable} {FAKE_AGENT} \"$@\"\n")
    program.chmod(0o755)
    env = {**os.environ, "PATH": f"{tools}{os.pathsep}{os.environ['PATH']}", "FAKE_AGENT_CONFIG": str(script)}
    out = subprocess.run([sys.executable, "-m", "eval_skills", "paired", "--skill-path", str(skill), "--agent-cmd",
                          "my-agent --prompt-file {prompt_file}", "--agent-output", "events", "--no-compare",
                          "--store", str(tmp_path / "s.db"), *on_ray(cluster, "FAKE_AGENT_CONFIG")], cwd=tmp_path,
                         capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 2, out.stderr
    (line,) = out.stderr.strip().splitlines()
    assert "--executor ray: on Ray node " in line and "my-agent" in line
    assert not (tmp_path / "invoice-check-workspace").exists() and not (tmp_path / "agent-log.jsonl").exists()
    python = Path(sys.executable).name
    out = subprocess.run([sys.executable, "-m", "eval_skills", "paired", "--skill-path", str(skill), "--agent-cmd",
                          f"{python} {FAKE_AGENT} --prompt-file {{prompt_file}}", "--agent-output", "events",
                          "--no-compare", "--no-store", *on_ray(cluster, "FAKE_AGENT_CONFIG")], cwd=tmp_path,
                         capture_output=True, text=True, env={**env, "PATH": str(tools)}, timeout=300)
    assert out.returncode == 0, out.stderr  # not on the driver's PATH, on the nodes': the runs happen there


def test_the_sandbox_and_the_timeout_apply_on_the_node(tmp_path, cluster):
    skill, script = small_skill(tmp_path, 1, mode="hang")
    out = paired("--skill-path", skill, *agent_args(script), "--no-compare", "--no-store", "--timeout", 3,
                 "--sandbox", "bwrap", "--sandbox-bind", tmp_path, "--sandbox-bind", f"{sys.base_prefix}:ro",
                 *on_ray(cluster, "FAKE_AGENT_CONFIG"),
                 cwd=tmp_path, script_file=script, timeout=300)
    assert out.returncode == 1 and "nothing measured: every agent run failed" in out.stderr, out.stderr
    runs = [json.loads(p.read_text()) for p in (tmp_path / "invoice-check-workspace").rglob("timing.json")]
    assert len(runs) == 2 and {run["status"] for run in runs} == {"timeout"}
    assert all(run["error"].startswith("timed out after 3 s") for run in runs)
    assert all(run["total_duration_seconds"] < 10 for run in runs)  # stopped by the task, not waited out
    assert {run["isolation"]["sandbox"] for run in runs} == {"bwrap"}  # as each node ran it


def test_eval_shards_of_a_lost_node_are_sent_again_and_each_result_recorded_once(tmp_path, cluster):
    skill = chaos_skill(tmp_path)
    tasks = [{"id": f"{i:02d}", "inputData": {"do": "slow", "seconds": 0.5, "marker": f"marker-{i:02d}-end"},
              "expectedOutput": {"type": "contains", "keywords": [f"marker-{i:02d}-end"]}} for i in range(36)]
    (tmp_path / "tasks.json").write_text(json.dumps(tasks))
    db = tmp_path / "s.db"
    proc = subprocess.Popen([sys.executable, "-m", "eval_skills", "eval", "--skills", str(skill), "--tasks",
                             str(tmp_path / "tasks.json"), "--format", "json", "--output-dir", str(tmp_path / "r"),
                             "--store", str(db), *on_ray(cluster), "--shard-tasks", "3"], cwd=tmp_path, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def stored() -> int:
        try:
            with sqlite3.connect(db) as conn:
                return conn.execute("SELECT COUNT(*) FROM task_results").fetchone()[0]
        except sqlite3.Error:
            return 0

    deadline = time.time() + 120
    while time.time() < deadline and stored() < 3:  # shards are in flight on every node
        time.sleep(0.05)
    victim = sorted(cluster.worker_nodes, key=id)[0]
    cluster.remove_node(victim, allow_graceful=False)
    try:
        _, err = proc.communicate(timeout=300)
    finally:
        cluster.add_node(**ray_cluster.NODE)
        cluster.wait_for_nodes()
    assert proc.returncode == 0, err
    (report,) = json.loads(next((tmp_path / "r").glob("*.json")).read_text())
    assert report["summary"]["completionRate"] == 1.0 and len(report["taskResults"]) == 36
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT task_id, run_id, status FROM task_results").fetchall()
    assert len(rows) == 36 and len({(t, r) for t, r, _ in rows}) == 36 and {s for *_, s in rows} == {"pass"}


def test_ctrl_c_stops_eval_shards_and_their_skills_on_the_nodes(tmp_path, cluster):
    skill = chaos_skill(tmp_path)
    pids = tmp_path / "pids"
    pids.mkdir()
    tasks = [{"id": f"{i:02d}", "inputData": {"do": "hang", "pid_file": str(pids / f"{i:02d}")},
              "expectedOutput": {"type": "contains", "keywords": ["never"]}} for i in range(4)]
    tasks += [{"id": "99", "inputData": {"do": "ok", "marker": "done"},
               "expectedOutput": {"type": "contains", "keywords": ["done"]}}]
    (tmp_path / "tasks.json").write_text(json.dumps(tasks))
    proc = subprocess.Popen([sys.executable, "-m", "eval_skills", "eval", "--skills", str(skill), "--tasks",
                             str(tmp_path / "tasks.json"), "--timeout", "100000", "--format", "json",
                             "--output-dir", str(tmp_path / "r"), "--store", str(tmp_path / "s.db"),
                             *on_ray(cluster), "--shard-tasks", "1"], cwd=tmp_path, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.time() + 120
    while time.time() < deadline and len(list(pids.iterdir())) < 4:  # every hanging skill has started
        time.sleep(0.05)
    time.sleep(0.5)
    started = [int(pid) for path in pids.iterdir() for pid in path.read_text().split()]
    assert len(started) == 8, proc.poll()  # four skill processes, each with a child
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "interrupted:" in err
    assert all(wait_gone(pid, 10) for pid in started), "a skill (or its child) outlived the interrupt"
    with sqlite3.connect(tmp_path / "s.db") as db:
        assert db.execute("SELECT status FROM evaluations").fetchone() == ("interrupted",)
        assert db.execute("SELECT task_id, status FROM task_results").fetchall() == [("99", "pass")]


def test_the_token_budget_stops_starting_runs_as_locally(tmp_path, cluster):
    skill, script = small_skill(tmp_path, 3, usage={"input_tokens": 100, "output_tokens": 50})
    common = ["--skill-path", skill, *agent_args(script), "--no-compare", "--no-store", "--budget-tokens", 400,
              "--concurrency", 1]
    benches = []
    for name, extra in (("local", []), ("ray", on_ray(cluster, "FAKE_AGENT_CONFIG"))):
        out = paired(*common, "--workspace", tmp_path / name, *extra, cwd=tmp_path, script_file=script, timeout=300)
        assert out.returncode == 0, out.stderr
        assert "--budget-tokens reached: 3 runs not started" in out.stderr
        benches.append(json.loads((tmp_path / name / "iteration-1" / "benchmark.json").read_text()))
    assert [b["metadata"]["cut_short"] for b in benches] == ["budget", "budget"]
    assert benches[0]["metadata"]["tokens_used"] == benches[1]["metadata"]["tokens_used"] == 450
    assert len(benches[0]["runs"]) == len(benches[1]["runs"]) == 3
