"""`eval-skills eval` end to end: real processes, real store, real report files."""

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CALCULATOR = ROOT / "examples" / "skills" / "calculator"
MISBEHAVE = Path(__file__).parent / "skills" / "misbehave.py"


def cli(*args, cwd: Path, env=None, timeout=120):
    return subprocess.run([sys.executable, "-m", "eval_skills", *map(str, args)], cwd=cwd, capture_output=True,
                          text=True, timeout=timeout, env={**os.environ, **(env or {})})


def chaos_skill(tmp_path: Path, persistent: bool, name="chaos") -> Path:
    folder = tmp_path / name
    folder.mkdir()
    shutil.copy(MISBEHAVE, folder / "misbehave.py")
    (folder / "skill.json").write_text(json.dumps({
        "id": name, "name": "Chaos", "version": "0.1.0", "adapterType": "subprocess",
        "entrypoint": "python3 misbehave.py"}))
    (folder / "adapter.config.json").write_text(json.dumps({"persistent": persistent}))
    return folder


def chaos_tasks(tmp_path: Path, behaviours) -> Path:
    # misbehave.py echoes its input: each task passes when its own marker comes back
    tasks = [{"id": f"{i:02d}-{do}", "inputData": {"do": do, "marker": f"marker-{i:02d}-end"},
              "expectedOutput": {"type": "contains", "keywords": [f"marker-{i:02d}-end"]}}
             for i, do in enumerate(behaviours)]
    path = tmp_path / "chaos-tasks.json"
    path.write_text(json.dumps(tasks))
    return path


def test_calculator_passes_coding_easy_and_writes_everything(tmp_path):
    out = cli("eval", "--skills", CALCULATOR, "--benchmark", "coding-easy", "--format", "json", "markdown",
              "html", "csv", "--output-dir", tmp_path / "reports", "--store", tmp_path / "s.db", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    files = sorted((tmp_path / "reports").iterdir())
    assert {f.suffix for f in files} == {".json", ".md", ".html", ".csv"}
    assert len({f.stem for f in files}) == 1 and files[0].stem.startswith("eval-result-")
    (report,) = json.loads(next(f for f in files if f.suffix == ".json").read_text())
    assert report["skillId"] == "calculator" and report["benchmarkId"] == "coding-easy"
    assert report["summary"]["completionRate"] == 1.0 and report["summary"]["errorRate"] == 0
    assert len(report["taskResults"]) == 20
    first = report["taskResults"][0]
    assert set(first) >= {"taskId", "skillId", "runId", "status", "score", "latencyMs", "output", "error",
                          "scorerType", "reason", "usage"}
    with sqlite3.connect(tmp_path / "s.db") as db:
        assert db.execute("select count(*) from task_results").fetchone()[0] == 20
    assert "calculator" in out.stdout and "100.00%" in out.stdout


def test_json_flag_prints_reports_to_stdout(tmp_path):
    out = cli("eval", "--skills", CALCULATOR / "skill.json", "--runs", "2", "--json", "--format", "json",
              "--output-dir", tmp_path / "r", "--no-store", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    (report,) = json.loads(out.stdout)["reports"]
    assert report["runs"] == 2 and len(report["taskResults"]) == 40
    assert report["summary"]["consistencyScore"] == 1.0
    assert not (tmp_path / "eval-skills.db").exists()


@pytest.mark.parametrize("persistent", [False, True], ids=["one-shot", "persistent"])
def test_misbehaving_skill_is_recorded_task_by_task(tmp_path, persistent):
    behaviours = ["ok", "crash", "ok", "exit3", "nonjson", "rpcerror", "huge", "hang", "closeout", "ok"]
    skill = chaos_skill(tmp_path, persistent)
    tasks = chaos_tasks(tmp_path, behaviours)
    out = cli("eval", "--skills", skill, "--tasks", tasks, "--timeout", "2000", "--concurrency", "2", "--json",
              "--format", "json", "--output-dir", tmp_path / "r", "--store", tmp_path / "s.db", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    (report,) = json.loads(out.stdout)["reports"]
    results = {r["taskId"]: r for r in report["taskResults"]}
    assert len(results) == len(behaviours)
    for i, kind in enumerate(behaviours):
        r = results[f"{i:02d}-{kind}"]
        if kind == "ok":
            assert r["status"] == "pass", r
        elif kind == "hang":
            assert r["status"] == "timeout", r
        else:
            assert r["status"] in ("error", "timeout"), r
            assert r["error"], r
    assert results["05-rpcerror"]["status"] == "error"
    assert "refused on purpose" in results["05-rpcerror"]["error"]
    assert "code 3" in results["03-exit3"]["error"] and "giving up" in results["03-exit3"]["error"]
    assert "boom on purpose" in results["01-crash"]["error"]
    assert report["summary"]["completionRate"] == 0.3
    with sqlite3.connect(tmp_path / "s.db") as db:
        assert db.execute("select count(*) from task_results").fetchone()[0] == len(behaviours)


def bad_input_cases(tmp_path: Path):
    good = chaos_skill(tmp_path, False, "good")
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "skill.json").write_text('{"id": "broken", ')
    typed = tmp_path / "typed"
    typed.mkdir()
    (typed / "skill.json").write_text(json.dumps({"id": "typed", "name": "T", "version": "1.0.0",
                                                  "adapterType": "subprocess", "entrypoint": 42}))
    bench_bad = tmp_path / "bench-bad.json"
    bench_bad.write_text('{"id": "b", "tasks": [')
    bench_typed = tmp_path / "bench-typed.json"
    bench_typed.write_text(json.dumps({"id": "b", "tasks": [{"id": "a", "timeoutMs": "soon"}]}))
    bench_scorer = tmp_path / "bench-scorer.json"
    bench_scorer.write_text(json.dumps({"id": "b", "tasks": [{"id": "a", "evaluator": {"type": "fuzzy"}}]}))
    needs_token = tmp_path / "needs-token"
    needs_token.mkdir()
    (needs_token / "skill.json").write_text(json.dumps({"id": "needs-token", "name": "T", "version": "1.0.0",
                                                        "adapterType": "http", "entrypoint": "http://127.0.0.1:9/x"}))
    (needs_token / "adapter.config.json").write_text(json.dumps({"authType": "bearer",
                                                                 "authTokenEnvKey": "EVAL_SKILLS_TEST_UNSET"}))
    mcp = tmp_path / "mcp"
    mcp.mkdir()
    (mcp / "skill.json").write_text(json.dumps({
        "id": "mcp", "name": "M", "version": "1.0.0", "adapterType": "mcp",
        "entrypoint": "python3 -c \"import sys; sys.exit('no config file')\""}))
    mcp_tool = tmp_path / "mcp-tool"
    mcp_tool.mkdir()
    (mcp_tool / "skill.json").write_text(json.dumps({
        "id": "mcp-tool", "name": "M", "version": "1.0.0", "adapterType": "mcp", "metadata": {"toolName": "ech"},
        "entrypoint": f"python3 {MISBEHAVE.parent / 'mcp_server.py'}"}))
    def task_file(name, content):
        path = tmp_path / name
        path.write_text(content if isinstance(content, str) else json.dumps(content))
        return path

    dupes = task_file("dupes.json", [{"id": "a"}, {"id": "a"}])
    typo = task_file("typo.json", [{"id": "a", "expectedOuput": {"value": "2"}}])
    typo_inner = task_file("typo-inner.json", [{"id": "a", "expectedOutput": {"valeu": "2"}}])
    no_value = task_file("no-value.json", [{"id": "a", "expectedOutput": {"type": "exact"}}])
    bad_regex = task_file("bad-regex.json", [{"id": "a", "expectedOutput": {"type": "regex", "pattern": "(x"}}])
    no_keywords = task_file("no-keywords.json", {"tasks": [{"id": "a", "evaluator": {"type": "contains"}}]})
    (tmp_path / "broken_scorer.py").write_text("def score(:\n")
    bad_custom = task_file("bad-custom.json", [{"id": "a", "evaluator": {"type": "custom"},
                                                "expectedOutput": {"customScorerPath": "broken_scorer.py"}}])
    skill_typo = tmp_path / "skill-typo"
    skill_typo.mkdir()
    (skill_typo / "skill.json").write_text(json.dumps({"id": "t", "name": "T", "version": "1.0.0", "adapterType":
                                                       "subprocess", "entrypoint": "python3 x.py", "inputSchem": {}}))
    (tmp_path / "a-file").write_text("")
    return [
        (["--skills", good, "--tasks", dupes], "dupes.json: $[1].id: task id 'a' appears twice"),
        (["--skills", good, "--tasks", typo], "typo.json: $[0].expectedOuput: unknown field"),
        (["--skills", good, "--tasks", typo_inner], "typo-inner.json: $[0].expectedOutput.valeu: unknown field"),
        (["--skills", good, "--tasks", no_value],
         "no-value.json: $[0].expectedOutput: exact needs expectedOutput.value"),
        (["--skills", good, "--tasks", bad_regex], "bad-regex.json: $[0].expectedOutput: invalid regex '(x'"),
        (["--skills", good, "--tasks", no_keywords], "no-keywords.json: $.tasks[0].expectedOutput: contains needs"),
        (["--skills", good, "--tasks", bad_custom],
         "bad-custom.json: $[0].expectedOutput: custom scorer broken_scorer"),
        (["--skills", skill_typo], "skill.json: $.inputSchem: unknown field"),
        (["--skills", good, "--output-dir", tmp_path / "a-file"], "a-file: cannot create the report folder"),
        (["--skills", mcp], "skill.json: $.entrypoint: the MCP server did not start: the MCP server exited with "
                            "code 1; stderr: no config file"),
        (["--skills", mcp_tool], "skill.json: $.metadata.toolName: the MCP server has no tool 'ech' (its tools: "
                                 "echo, add, "),
        (["--skills", needs_token],
         "adapter.config.json: $.authTokenEnvKey: environment variable EVAL_SKILLS_TEST_UNSET"),
        (["--skills", broken], "skill.json: invalid JSON"),
        (["--skills", typed], "skill.json: $.entrypoint:"),
        (["--skills", good, "--benchmark", bench_bad], "bench-bad.json: invalid JSON"),
        (["--skills", good, "--benchmark", bench_typed], "bench-typed.json: $.tasks[0].timeoutMs:"),
        (["--skills", good, "--benchmark", "no-such-benchmark"], "unknown benchmark 'no-such-benchmark'"),
        (["--skills", good, "--benchmark", bench_scorer], "$.tasks[0].evaluator.type: unknown scorer type 'fuzzy'"),
        (["--skills", good, "--evaluator", "fuzzy"], "--evaluator: unknown scorer type 'fuzzy'"),
        (["--skills", tmp_path / "missing"], "no such file or folder"),
    ]


BAD_INPUT_CASES = 20


@pytest.mark.parametrize("case", range(BAD_INPUT_CASES))
@pytest.mark.parametrize("dry_run", [[], ["--dry-run"]], ids=["run", "dry-run"])
def test_bad_input_is_one_line_exit_2_and_writes_nothing(tmp_path, dry_run, case):
    cases = bad_input_cases(tmp_path)
    assert len(cases) == BAD_INPUT_CASES
    for args, expected in cases[case:case + 1]:
        out_dir = [] if "--output-dir" in args else ["--output-dir", tmp_path / "r"]
        out = cli("eval", *args, *dry_run, *out_dir, "--store", tmp_path / "s.db", cwd=tmp_path)
        assert out.returncode == 2, (args, out.stderr)
        lines = out.stderr.strip().splitlines()
        assert len(lines) == 1 and expected in lines[0], (args, out.stderr)
        assert "Traceback" not in out.stderr
        assert not (tmp_path / "r").exists() and not (tmp_path / "s.db").exists()


def test_dry_run_prints_the_plan_and_writes_nothing(tmp_path):
    out = cli("eval", "--skills", CALCULATOR, "--runs", "3", "--dry-run", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "1 skills x 20 tasks x 3 runs = 60 items" in out.stdout
    assert list(tmp_path.iterdir()) == []


def test_quality_gate_exits_1_below_min_completion(tmp_path):
    skill = chaos_skill(tmp_path, True)
    tasks = chaos_tasks(tmp_path, ["ok", "rpcerror"])
    common = ["eval", "--skills", skill, "--tasks", tasks, "--no-store", "--output-dir", tmp_path / "r"]
    assert cli(*common, "--exit-on-fail", "--min-completion", "0.8", cwd=tmp_path).returncode == 1
    assert cli(*common, "--exit-on-fail", "--min-completion", "0.5", cwd=tmp_path).returncode == 0
    assert cli(*common, "--min-completion", "0.8", cwd=tmp_path).returncode == 0


def test_config_file_applies_and_flags_win(tmp_path):
    (tmp_path / "eval-skills.config.yaml").write_text("runs: 2\nformat: [csv]\noutputDir: ./out\n")
    out = cli("eval", "--skills", CALCULATOR, "--json", "--no-store", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["reports"][0]["runs"] == 2
    assert [p.suffix for p in (tmp_path / "out").iterdir()] == [".csv"]
    out = cli("eval", "--skills", CALCULATOR, "--json", "--no-store", "--runs", "1", cwd=tmp_path)
    assert json.loads(out.stdout)["reports"][0]["runs"] == 1
    (tmp_path / "eval-skills.config.yaml").write_text("concurency: 2\n")
    out = cli("eval", "--skills", CALCULATOR, "--no-store", cwd=tmp_path)
    assert out.returncode == 2 and "eval-skills.config.yaml: $.concurency: unknown field" in out.stderr


def test_interrupt_keeps_what_finished(tmp_path):
    skill = chaos_skill(tmp_path, True)
    tasks = chaos_tasks(tmp_path, ["slow"] * 200)
    proc = subprocess.Popen([sys.executable, "-m", "eval_skills", "eval", "--skills", str(skill), "--tasks",
                             str(tasks), "--concurrency", "1", "--format", "json", "--output-dir",
                             str(tmp_path / "r"), "--store", str(tmp_path / "s.db")], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    db = tmp_path / "s.db"
    deadline = time.time() + 30
    done = 0
    while time.time() < deadline and done < 3:
        time.sleep(0.2)
        if db.exists():
            try:
                with sqlite3.connect(db) as conn:
                    done = conn.execute("select count(*) from task_results").fetchone()[0]
            except sqlite3.Error:
                pass
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    (report,) = json.loads(next((tmp_path / "r").glob("*.json")).read_text())
    finished = len(report["taskResults"])
    assert 3 <= finished < 200 and report["interrupted"] is True
    with sqlite3.connect(db) as conn:
        assert conn.execute("select count(*) from task_results").fetchone()[0] == finished


def test_explicit_timeout_wins_over_the_skills_own(tmp_path):
    skill = chaos_skill(tmp_path, True)
    (skill / "adapter.config.json").write_text(json.dumps({"persistent": True, "timeoutMs": 5000}))
    tasks = tmp_path / "slow.json"
    tasks.write_text(json.dumps([{"id": "slow", "inputData": {"do": "slow", "seconds": 1.5},
                                  "expectedOutput": {"keywords": ["slow"]}, "evaluator": {"type": "contains"}}]))
    common = ["eval", "--skills", skill, "--tasks", tasks, "--no-store", "--json", "--format", "json",
              "--output-dir", tmp_path / "r"]
    (report,) = json.loads(cli(*common, cwd=tmp_path).stdout)["reports"]
    assert report["taskResults"][0]["status"] == "pass"  # the skill's 5 s applies
    (report,) = json.loads(cli(*common, "--timeout", "500", cwd=tmp_path).stdout)["reports"]
    assert report["taskResults"][0]["status"] == "timeout"  # the user's 0.5 s wins


def test_custom_scorer_returning_nan_or_out_of_range_is_a_task_error(tmp_path):
    skill = chaos_skill(tmp_path, True)
    (tmp_path / "odd.py").write_text("def score(output, expected, task):\n"
                                     "    return float('nan') if expected['mode'] == 'nan' else 7\n")
    tasks = tmp_path / "odd.json"
    tasks.write_text(json.dumps([{"id": mode, "inputData": {"do": "ok"}, "evaluator": {"type": "custom"},
                                  "expectedOutput": {"customScorerPath": "odd.py", "mode": mode}}
                                 for mode in ("nan", "seven")]))
    out = cli("eval", "--skills", skill, "--tasks", tasks, "--no-store", "--json", "--format", "json",
              "--output-dir", tmp_path / "r", cwd=tmp_path)
    (report,) = json.loads(out.stdout)["reports"]
    for result in report["taskResults"]:
        assert result["status"] == "error" and "expected a number from 0 to 1" in result["error"], result


def test_usage_errors_are_one_line(tmp_path):
    out = cli("eval", "--skills", CALCULATOR, "--runs", "0", cwd=tmp_path)
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == [
        "error: Invalid value for '--runs': 0 is not in the range x>=1. (see 'eval-skills eval --help')"]


def test_config_errors_name_the_config_file(tmp_path):
    (tmp_path / "eval-skills.config.yaml").write_text("format: [json, pdf]\n")
    out = cli("eval", "--skills", CALCULATOR, "--no-store", cwd=tmp_path)
    assert out.returncode == 2
    assert "eval-skills.config.yaml: $.format: unknown report format 'pdf'" in out.stderr


def test_unknown_command_is_one_line(tmp_path):
    out = cli("evaluate", cwd=tmp_path)
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == ["error: No such command 'evaluate'. Did you mean 'eval' or 'validate'? "
                                                 "(see 'eval-skills --help')"]
