"""JavaScript custom scorers written for the original eval-skills, run by a real Node.js worker process."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from eval_skills.errors import InputError, ScorerError
from eval_skills.formats.benchmark import load_tasks_file
from eval_skills.formats.skill import load_skill
from eval_skills.scoring.scorers import ScoringContext  # registers the Node.js workers
from eval_skills.scoring.workers import ScorerWorkers
from eval_skills.tool_skills.plan import build_plan

SCORERS = Path(__file__).parent / "original" / "scorers"
needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="Node.js is not installed")


def bench(tmp_path: Path, scorer: str, outputs: list[Any]) -> Path:
    shutil.copy(SCORERS / scorer, tmp_path / scorer)
    tasks = [{"id": f"t{i}", "inputData": {"out": out},
              "expectedOutput": {"type": "custom", "value": "needle", "customScorerPath": scorer}}
             for i, out in enumerate(outputs)]
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(tasks))
    return path


def echo_skill(tmp_path: Path) -> Path:
    folder = tmp_path / "echo"
    folder.mkdir()
    (folder / "skill.py").write_text(
        "import json, sys\n"
        "for line in sys.stdin:\n"
        "    req = json.loads(line)\n"
        "    print(json.dumps({'jsonrpc': '2.0', 'id': req['id'], 'result': req['params']['out']}), flush=True)\n")
    (folder / "skill.json").write_text(json.dumps({"id": "echo", "version": "1.0.0", "adapterType": "subprocess",
                                                   "entrypoint": "python3 skill.py"}))
    (folder / "adapter.config.json").write_text(json.dumps({"persistent": True}))
    return folder


def cli(*args: Any, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "eval_skills", *map(str, args)], cwd=cwd, capture_output=True,
                          text=True, timeout=120, env={**os.environ, **(env or {})})


def run_eval(tmp_path: Path, tasks: Path) -> dict[str, Any]:
    out = cli("eval", "--skills", echo_skill(tmp_path), "--tasks", tasks, "--no-store", "--format", "json",
              "--output-dir", tmp_path / "r", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    (path,) = (tmp_path / "r").glob("*.json")
    (report,) = json.loads(path.read_text())
    return report


@needs_node
def test_an_es_module_scorer_scores_each_task_in_one_persistent_worker(tmp_path):
    report = run_eval(tmp_path, bench(tmp_path, "keyword.js", [{"result": "a needle"}, "hay", {"n": "needle"}]))
    results = report["taskResults"]
    assert [(r["status"], r["score"]) for r in results] == [("pass", 1), ("fail", 0), ("pass", 1)]
    assert results[1]["reason"].startswith("missing needle")
    pids = {r["reason"].rsplit("pid ", 1)[1] for r in results}
    assert len(pids) == 1  # one worker for the file, kept for the run


@needs_node
def test_verdicts_are_read_as_the_original_reads_them(tmp_path):
    kinds = ["true", "false", "big", "half", "negative", "passed-only", "failed-only", "nan", "string", "throw",
             "missing", "score-only", "score-out"]
    report = run_eval(tmp_path, bench(tmp_path, "verdicts.cjs", [{"kind": k} for k in kinds]))
    got = {r["taskId"]: (r["status"], r["score"]) for r in report["taskResults"]}
    assert [got[f"t{i}"] for i in range(7)] == [("pass", 1), ("fail", 0), ("pass", 1), ("fail", 0.5), ("fail", 0),
                                                ("pass", 1), ("fail", 0)]
    errors = {r["taskId"]: r["error"] for r in report["taskResults"] if r["status"] == "error"}
    assert set(errors) == {"t7", "t8", "t9", "t10", "t12"}
    assert got["t11"] == ("fail", 0.8) and "returned score 5" in errors["t12"]
    assert "returned NaN" in errors["t7"] and "returned string" in errors["t8"]
    assert errors["t9"] == "custom scorer verdicts.cjs threw Error: scorer bug" and "returned null" in errors["t10"]
    assert errors["t7"] == ("custom scorer verdicts.cjs returned NaN; expected a boolean, a number or "
                            "{passed, score, reason}")
    assert next(r for r in report["taskResults"] if r["taskId"] == "t6")["reason"] == "not good"


@needs_node
def test_a_scorer_that_never_returns_is_stopped_at_its_deadline_and_replaced():
    assert ScoringContext().timeout_s == 5.0  # the default deadline; this test uses a short one
    workers = ScorerWorkers(SCORERS / "verdicts.cjs", name="verdicts.cjs", timeout=1.0, max_workers=4)
    try:
        assert workers.max_workers == 1  # one persistent Node.js worker per scorer file
        workers.check()
        assert workers.call({"kind": "true"}, {}, {}) is True
        started = time.monotonic()
        with pytest.raises(ScorerError, match=r"did not return within 1s \(its process was stopped\)"):
            workers.call({"kind": "spin"}, {}, {})
        assert time.monotonic() - started >= 1.0  # it had its deadline (ending at all shows it was stopped)
        assert workers.call({"kind": "half"}, {}, {}) == 0.5  # a fresh worker takes the next call
    finally:
        workers.close()


@needs_node
@pytest.mark.parametrize("scorer,problem", [
    ("broken.mjs", "broken.mjs failed to load: SyntaxError"),
    ("nothing.mjs", "nothing.mjs failed to load: Error: exports no function"),
])
def test_a_scorer_that_cannot_be_used_stops_the_run_before_it_starts(tmp_path, scorer, problem):
    tasks = bench(tmp_path, scorer, ["x"])
    skill = load_skill(echo_skill(tmp_path))
    with pytest.raises(InputError) as info:
        build_plan([skill], load_tasks_file(tasks), runs=1, default_evaluator="exact", base_dir=tmp_path)
    line = info.value.line()
    assert "$[0].expectedOutput" in line and problem in line and "\n" not in line


def test_without_node_a_javascript_scorer_is_one_clear_line(tmp_path):
    tasks = bench(tmp_path, "keyword.js", ["x"])
    out = cli("eval", "--skills", echo_skill(tmp_path), "--tasks", tasks, "--no-store", cwd=tmp_path,
              env={"PATH": str(tmp_path / "no-such-bin")})
    assert out.returncode == 2 and out.stderr.count("\n") == 1
    assert "keyword.js is a JavaScript scorer and needs Node.js, but node is not on PATH" in out.stderr
    assert not (tmp_path / "reports").exists()


@needs_node
def test_a_scorer_path_relative_to_the_current_folder_works_as_in_the_original(tmp_path):
    (tmp_path / "scorers").mkdir()
    shutil.copy(SCORERS / "keyword.js", tmp_path / "scorers" / "keyword.js")
    (tmp_path / "benchmarks").mkdir()
    (tmp_path / "benchmarks" / "b.json").write_text(json.dumps({"id": "b", "tasks": [
        {"id": "t", "inputData": {"out": "needle"},
         "expectedOutput": {"type": "custom", "value": "needle", "customScorerPath": "./scorers/keyword.js"}}]}))
    out = cli("eval", "--skills", echo_skill(tmp_path), "--benchmark", "benchmarks/b.json", "--no-store",
              "--format", "json", "--output-dir", tmp_path / "r", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    (path,) = (tmp_path / "r").glob("*.json")
    assert json.loads(path.read_text())[0]["taskResults"][0]["status"] == "pass"


@needs_node
def test_a_javascript_scorer_has_the_scorer_deadline_and_prints_nothing_to_stdout(tmp_path):
    tasks = bench(tmp_path, "verdicts.cjs", [{"kind": "spin"}, {"kind": "true"}])
    out = cli("eval", "--skills", echo_skill(tmp_path), "--tasks", tasks, "--no-store", "--format", "json",
              "--output-dir", tmp_path / "r", "--scorer-timeout", "1000", "--concurrency", "1", "--json",
              cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    (report,) = json.loads(out.stdout)["reports"]  # pure JSON: the scorer's worker never writes to our stdout
    results = {r["taskId"]: r for r in report["taskResults"]}
    assert results["t0"]["status"] == "error"
    assert results["t0"]["error"] == "custom scorer verdicts.cjs did not return within 1s (its process was stopped)"
    assert results["t1"]["status"] == "pass"  # a fresh worker after the stopped one


@needs_node
def test_an_absolute_scorer_path_inside_the_current_folder_works_as_in_the_original(tmp_path):
    (tmp_path / "scorers").mkdir()
    scorer = tmp_path / "scorers" / "keyword.js"
    shutil.copy(SCORERS / "keyword.js", scorer)
    (tmp_path / "benchmarks").mkdir()
    (tmp_path / "benchmarks" / "b.json").write_text(json.dumps({"id": "b", "tasks": [
        {"id": "t", "inputData": {"out": "needle"},
         "expectedOutput": {"type": "custom", "value": "needle", "customScorerPath": str(scorer)}}]}))
    skill = echo_skill(tmp_path)
    out = cli("eval", "--skills", skill, "--benchmark", "benchmarks/b.json", "--no-store",
              "--format", "json", "--output-dir", tmp_path / "r", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    (path,) = (tmp_path / "r").glob("*.json")
    assert json.loads(path.read_text())[0]["taskResults"][0]["status"] == "pass"
    outside = cli("eval", "--skills", skill, "--benchmark", tmp_path / "benchmarks" / "b.json",
                  "--no-store", cwd=tmp_path / "benchmarks")  # the same file, now outside both folders
    assert outside.returncode == 2 and f"customScorerPath '{scorer}' leaves the benchmark's folder" in outside.stderr


def test_a_scorer_path_from_the_current_folder_must_stay_inside_it(tmp_path):
    here = tmp_path / "project"
    (here / "benchmarks").mkdir(parents=True)
    shutil.copy(SCORERS / "keyword.js", tmp_path / "keyword.js")  # outside the current folder
    (here / "benchmarks" / "b.json").write_text(json.dumps({"id": "b", "tasks": [
        {"id": "t", "inputData": {"out": "needle"},
         "expectedOutput": {"type": "custom", "value": "needle", "customScorerPath": "../keyword.js"}}]}))
    out = cli("eval", "--skills", echo_skill(tmp_path), "--benchmark", "benchmarks/b.json", "--no-store",
              cwd=here)
    assert out.returncode == 2 and out.stderr.count("\n") == 1
    assert "customScorerPath '../keyword.js' leaves the benchmark's folder" in out.stderr
