"""Cases a user meets beyond the documented examples, each run as a real ``eval-skills`` process: wrong types
in a strategy or a setting, odd report files, ``--json`` on every command, the importers' hints, and bad
input that must stop before anything is written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from clirun import process


def skill(root: Path, skill_id: str, tags: list[str] | None = None) -> Path:
    folder = root / skill_id
    folder.mkdir(parents=True)
    (folder / "skill.json").write_text(json.dumps({
        "id": skill_id, "name": skill_id, "version": "1.0.0", "tags": tags or [], "adapterType": "subprocess",
        "entrypoint": "python3 skill.py"}))
    (folder / "skill.py").write_text("")  # the script the entrypoint names (checked before anything runs)
    return folder


def report(skill_id: str, completion: float | None, composite: float = 0.5,
           results: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"skillId": skill_id, "skillVersion": "1.0.0", "benchmarkId": "b", "timestamp": "2026-01-01T00:00:00Z",
            "summary": {"completionRate": completion, "errorRate": 0.0, "compositeScore": composite},
            "latency": {"p50Ms": 1.0, "p95Ms": 2.0, "p99Ms": 3.0}, "taskResults": results or []}


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    """skills/ with two skills and reports/r.json with a report of each."""
    skill(tmp_path / "skills", "alpha")
    skill(tmp_path / "skills", "beta")
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "r.json").write_text(json.dumps([report("alpha", 0.9, 0.8), report("beta", 0.5)]))
    return tmp_path


def one_line_exit_2(result: Any, *names: str) -> None:
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    for name in names:
        assert name in result.stderr, result.stderr


@pytest.mark.parametrize("content, key", [
    ("topK: true\n", "$.topK"),
    ('filters:\n  minCompletionRate: "0.8"\n', "$.filters.minCompletionRate"),
])
def test_a_strategy_value_of_the_wrong_type_is_refused_not_converted(project: Path, content: str, key: str) -> None:
    (project / "s.yaml").write_text(content)
    out = process("select", "--from", "skills", "--reports", "reports/r.json", "--strategy", "s.yaml",
                  "--output", "out.json", cwd=project)
    one_line_exit_2(out, "s.yaml", key)
    assert not (project / "out.json").exists()


def test_a_strategy_with_empty_keys_is_the_default_strategy(project: Path) -> None:
    # every line under filters: commented out leaves "filters:" empty (null in YAML); so does "sortBy:"
    (project / "s.yaml").write_text("filters:\n#  minCompletionRate: 0.8\nsortBy:\ntopK: 1\n")
    out = process("select", "--from", "skills", "--reports", "reports/r.json", "--strategy", "s.yaml", cwd=project)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert [s["skillId"] for s in doc["selected"]] == ["alpha"]
    assert doc["strategy"]["sortBy"] == "compositeScore" and doc["strategy"]["filters"]["minCompletionRate"] is None


def test_config_set_refuses_a_boolean_for_a_number_and_keeps_text_settings_as_typed(tmp_path: Path) -> None:
    env = {"EVAL_SKILLS_HOME": str(tmp_path / "home")}
    user_file = tmp_path / "home" / "config.yaml"
    assert process("config", "set", "concurrency", "8", cwd=tmp_path, env=env).returncode == 0
    before = user_file.read_text()
    one_line_exit_2(process("config", "set", "concurrency", "true", cwd=tmp_path, env=env), "concurrency")
    assert user_file.read_text() == before  # nothing written
    assert process("config", "set", "benchmark", "2024", cwd=tmp_path, env=env).returncode == 0
    got = process("config", "get", "benchmark", "--json", cwd=tmp_path, env=env)
    assert json.loads(got.stdout)["value"] == "2024"  # the id "2024", not refused as a number
    # a config file holding a value of the wrong type is refused with the file and the key
    (tmp_path / "eval-skills.config.yaml").write_text("runs: yes\n")
    one_line_exit_2(process("eval", "--skills", "nowhere", "--dry-run", cwd=tmp_path, env=env),
                    "eval-skills.config.yaml", "$.runs")


def test_a_report_from_another_tool_with_odd_values_renders_in_every_format(tmp_path: Path) -> None:
    """Tags that are lists or objects, and integers too big for a float, are shown as n/a or left out."""
    huge = "1" + "0" * 400
    (tmp_path / "odd.json").write_text(
        '[{"skillId": "odd", "runs": ' + huge + ', "summary": {"completionRate": ' + huge + '}, "taskResults": '
        '[{"taskId": "t1", "status": "pass", "score": 1, "tags": [[1], {"a": 1}, "math", 2]}]}]')
    for fmt in ("markdown", "html", "junit"):
        out = process("report", "convert", "--input", "odd.json", "--format", fmt, "--output", f"odd.{fmt}",
                      cwd=tmp_path)
        assert out.returncode == 0, out.stderr
    markdown = (tmp_path / "odd.markdown").read_text()
    assert "| math |" in markdown and "| 2 |" in markdown and "[1]" not in markdown.split("## Results by tag")[-1]
    diff = process("report", "diff", "odd.json", "odd.json", "--json", cwd=tmp_path)
    assert diff.returncode == 0 and json.loads(diff.stdout)["skills"][0]["metrics"]["completionRate"]["a"] is None


@pytest.mark.parametrize("content, problem", [
    ("[]", "holds no skill report"),
    ('[{"skillId": "a", "runs": ' + "9" * 5000 + "}]", "holds an integer longer than 4300 digits"),
    ("[" * 100_000 + "]" * 100_000, "nested deeper than 264 levels"),
])
def test_a_file_that_is_not_a_report_is_one_line_and_nothing_written(tmp_path: Path, content: str,
                                                                      problem: str) -> None:
    (tmp_path / "r.json").write_text(content)
    out = process("report", "convert", "--input", "r.json", "--format", "html", cwd=tmp_path)
    one_line_exit_2(out, "r.json", problem)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]


def test_a_path_the_system_refuses_is_one_line_not_a_traceback(project: Path) -> None:
    long_name = "a" * 300  # longer than a file name may be
    for args in (("create", "--name", long_name, "--output-dir", "skills"),
                 ("report", "convert", "--input", "reports/r.json", "--output", long_name)):
        out = process(*args, cwd=project)
        one_line_exit_2(out)
        assert "Traceback" not in out.stderr and "File name too long" in out.stderr, out.stderr
    assert sorted(p.name for p in (project / "skills").iterdir()) == ["alpha", "beta"]


def toolbench_file(path: Path) -> Path:
    """Two ToolBench G1 queries in the upstream shape (G1_query.json), one without relevant APIs."""
    api = {"category_name": "Data", "tool_name": "TheClique", "api_name": "Songkick concert",
           "api_description": "Concert info", "required_parameters": [{"name": "id", "type": "STRING",
                                                                       "description": "", "default": "1"}],
           "optional_parameters": [], "method": "GET", "template_response": {"a": "str"}}
    path.write_text(json.dumps([
        {"api_list": [api], "query": "Find concerts", "relevant APIs": [["TheClique", "Songkick concert"]],
         "query_id": 588},
        {"api_list": [], "query": "Nothing to call", "relevant APIs": [], "query_id": "589"}]))
    return path


def test_json_is_json_on_the_commands_that_write_files(tmp_path: Path) -> None:
    env = {"EVAL_SKILLS_HOME": str(tmp_path / "home")}
    init = json.loads(process("--json", "init", "--dir", "p", cwd=tmp_path).stdout)
    assert init["created"][0].endswith("eval-skills.config.yaml") and len(init["created"]) == 4
    created = json.loads(process("create", "--name", "calc", "--from-template", "python_script", "--output-dir",
                                 "p/skills", "--json", cwd=tmp_path).stdout)
    assert created["template"] == "python_script" and "skill.py" in created["files"]
    assert created["next"].startswith("eval-skills eval --skills ")
    (tmp_path / "r.json").write_text(json.dumps([report("alpha", 1.0)]))
    converted = json.loads(process("report", "convert", "--input", "r.json", "--format", "xml", "--json",
                                   cwd=tmp_path).stdout)
    assert converted == {"passed": True, "input": "r.json", "format": "junit", "output": "r.xml"}
    assert (tmp_path / "r.xml").is_file()
    setting = json.loads(process("config", "set", "format", "[json, html]", "--json", cwd=tmp_path, env=env).stdout)
    assert setting["value"] == ["json", "html"] and setting["file"] == str(tmp_path / "home" / "config.yaml")
    imported = json.loads(process("benchmarks", "import", "toolbench", toolbench_file(tmp_path / "G1_query.json"),
                                  "--benchmarks-dir", "b", "--json", cwd=tmp_path).stdout)
    assert imported["tasks"] == 1 and imported["skipped"] == 1 and imported["id"] == "toolbench-lite"


def test_an_imported_benchmark_written_under_another_name_is_run_by_its_path(tmp_path: Path) -> None:
    toolbench_file(tmp_path / "G1_query.json")
    out = process("benchmarks", "import", "toolbench", "G1_query.json", "--output", "tb.json", cwd=tmp_path)
    assert out.returncode == 0 and "1 queries without relevant APIs skipped" in out.stdout
    command = out.stdout.splitlines()[-1].removeprefix("run it: ").split()
    assert command[-2:] == ["--benchmark", "tb.json"]  # "toolbench-lite" would not find tb.json
    skill(tmp_path / "skills", "alpha")
    words = [w.replace("SKILL", "skills/alpha") for w in command[1:]]
    dry = process(*words, "--dry-run", cwd=tmp_path)  # the printed command works as written
    assert dry.returncode == 0 and "benchmark toolbench-lite 1.0.0: 1 tasks" in dry.stdout, dry.stderr
    listed = json.loads(process("benchmarks", "list", "--benchmarks-dir", ".", "--json", cwd=tmp_path).stdout)
    entry = next(b for b in listed["benchmarks"] if b["source"] == "tb.json")
    # in a benchmarks folder, its id finds it whatever its file name (as the original finds benchmarks)
    assert entry["id"] == "toolbench-lite" and entry["problem"] is None
    by_id = process(*words[:-1], "toolbench-lite", "--benchmarks-dir", ".", "--dry-run", cwd=tmp_path)
    assert by_id.returncode == 0 and "benchmark toolbench-lite 1.0.0: 1 tasks" in by_id.stdout, by_id.stderr
    (tmp_path / "tb2.json").write_text((tmp_path / "tb.json").read_text())  # two files of that id: give a path
    listed = json.loads(process("benchmarks", "list", "--benchmarks-dir", ".", "--json", cwd=tmp_path).stdout)
    entry = next(b for b in listed["benchmarks"] if b["source"] == "tb2.json")
    assert "run it with --benchmark tb2.json" in entry["problem"]
    one_line_exit_2(process("benchmarks", "import", cwd=tmp_path), "Missing command")


def test_a_store_that_cannot_be_opened_stops_eval_and_run_before_anything_is_written(tmp_path: Path) -> None:
    skill(tmp_path / "skills", "alpha")
    (tmp_path / "notes.db").write_text("not a database")
    for args in (("eval", "--skills", "skills/alpha"), ("run", "--skills-dir", "skills")):
        out = process(*args, "--store", "notes.db", "--output-dir", "out", cwd=tmp_path)
        one_line_exit_2(out, "notes.db", "not a database")
        assert not (tmp_path / "out").exists()  # the report folder is made only once the store is open


def test_select_from_a_folder_or_list_without_skills_is_an_error(project: Path) -> None:
    (project / "empty").mkdir()
    (project / "none.json").write_text("[]")
    for source in ("empty", "none.json"):
        one_line_exit_2(process("select", "--from", source, "--reports", "reports/r.json", "--output", "o.json",
                                cwd=project), source)
    assert not (project / "o.json").exists()


def test_an_option_taking_several_values_given_none_is_an_error_not_ignored(project: Path) -> None:
    # "--reports ./reports/none-*.json" where the glob matched nothing (nullglob) leaves the option alone at
    # the end; it must not silently fall back to the store
    out = process("select", "--from", "skills", "--output", "out.json", "--reports", cwd=project)
    one_line_exit_2(out, "'--reports' requires at least one value")
    assert not (project / "out.json").exists()


def test_the_regression_gate_fails_a_skill_with_no_completion_rate_in_the_new_report(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text(json.dumps([report("alpha", 0.8), report("beta", 0.5)]))
    # beta's new run finished no task (interrupted, or every call hung): its rate is null, not better
    (tmp_path / "b.json").write_text(json.dumps([report("alpha", 0.8), report("beta", None)]))
    out = process("report", "diff", "a.json", "b.json", "--fail-on-regression", "0.5", cwd=tmp_path)
    assert out.returncode == 1, out.stderr
    assert "beta (no completion rate in b.json)" in out.stderr and "alpha" not in out.stderr
    same = process("report", "diff", "a.json", "a.json", "--fail-on-regression", "0", cwd=tmp_path)
    assert same.returncode == 0, same.stderr


def test_help_of_every_command_loads_no_heavy_dependency(tmp_path: Path) -> None:
    """``eval-skills <cmd> --help`` stays fast: pydantic, asyncio and the rest load only when a command runs;
    and it shows the defaults as the documentation writes them."""
    code = """
import sys
from eval_skills.cli import main
paths = [[name] for name in ("init", "create", "find", "eval", "select", "run", "report", "config", "history",
                             "benchmarks")] + [["report", "convert"], ["report", "diff"], ["config", "set"],
         ["benchmarks", "list"], ["benchmarks", "import", "gaia"], ["benchmarks", "import", "toolbench"]]
loaded = {}
for path in paths:
    try:
        main([*path, "--help"])
    except SystemExit:
        pass
    heavy = [m for m in ("pydantic", "asyncio", "httpx", "jsonschema", "rich", "jinja2", "yaml", "sqlite3", "mcp")
             if m in sys.modules]
    if heavy:
        loaded[" ".join(path)] = heavy
        break
print(loaded, file=sys.stderr)
"""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert out.returncode == 0 and out.stderr.strip() == "{}", out.stderr[-2000:]
    # the defaults read as the documentation's tables write them
    for shown in ("[default: ./skills]", "[default: ./reports]", "[default: ./eval-skills.db]", "[default: .]"):
        assert shown in " ".join(out.stdout.split()), shown


def test_select_warns_when_it_ranks_reports_of_different_benchmarks(project: Path) -> None:
    other = report("beta", 0.9)
    other["benchmarkId"] = "other-bench"
    (project / "reports" / "s.json").write_text(json.dumps([other]))  # a glob picks up both files
    mixed = process("select", "--from", "skills", "--reports", "reports/r.json", "reports/s.json", cwd=project)
    assert mixed.returncode == 0 and json.loads(mixed.stdout)["selected"][1]["benchmarkId"] == "other-bench"
    assert "different benchmarks (b, other-bench)" in mixed.stderr
    same = process("select", "--from", "skills", "--reports", "reports/r.json", cwd=project)
    assert same.returncode == 0 and same.stderr == ""


def test_a_skill_evaluated_only_in_an_interrupted_run_is_not_called_never_evaluated(project: Path) -> None:
    from eval_skills.store import Store

    with Store.open(project / "s.db") as store:
        for status, reports in (("finished", [report("alpha", 0.9)]), ("interrupted", [report("beta", 0.2)])):
            eid = store.begin_evaluation(benchmark_id="b", benchmark_version="1", config={}, tool_version="t")
            store.finish_evaluation(eid, status=status, reports=reports)
    found = {f["id"]: f for f in json.loads(process("find", "--store", "s.db", "--json", cwd=project).stdout)["skills"]}
    assert found["alpha"]["completionRate"] == 0.9 and found["alpha"]["unfinishedEvaluation"] is None
    assert found["beta"]["evaluated"] is False and found["beta"]["unfinishedEvaluation"] == "interrupted"
    table = process("find", "--store", "s.db", cwd=project, env={"COLUMNS": "200"}).stdout
    assert "no finished evaluation (interrupted)" in table and "never evaluated" not in table
    selection = json.loads(process("select", "--from", "skills", "--store", "s.db", cwd=project).stdout)
    assert selection["excluded"] == [{"skillId": "beta", "path": str(project / "skills" / "beta" / "skill.json"),
                                      "reason": "no finished evaluation (the latest was interrupted)"}]


def test_verbose_eval_logs_its_settings_plan_and_results_on_stderr(tmp_path: Path) -> None:
    from clirun import CALCULATOR

    (tmp_path / "eval-skills.config.yaml").write_text("concurrency: 2\n")
    out = process("-vv", "eval", "--skills", CALCULATOR, "--json", "--no-store", "--output-dir", "r", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["reports"][0]["skillId"] == "calculator"  # stdout stays pure JSON
    assert "settings: concurrency 2, timeout 30000 ms" in out.stderr and "(config: concurrency=2)" in out.stderr
    assert "benchmark coding-easy 1.0.0: 20 tasks (built-in)" in out.stderr
    assert "calculator / math_001 run 1: pass" in out.stderr  # -vv: one line per task result
    quiet = process("eval", "--skills", CALCULATOR, "--json", "--no-store", "--output-dir", "r", cwd=tmp_path)
    assert quiet.returncode == 0 and quiet.stderr == ""


def test_gaia_import_without_the_attachments_says_so_and_gives_no_path_that_does_not_exist(tmp_path: Path) -> None:
    # GAIA's validation metadata.jsonl in its upstream shape; only one of the two attachments was copied
    lines = [{"task_id": "c61d22de", "Question": "What is in the sheet?", "Level": 1, "Final answer": "8, 12",
              "file_name": "c61d22de.xlsx", "Annotator Metadata": {"Steps": "1. Open it", "Number of steps": "1"}},
             {"task_id": "17b5a6a3", "Question": "How many?", "Level": "1", "Final answer": "34689",
              "file_name": "17b5a6a3.png", "file_path": "2023/validation/17b5a6a3.png"},
             {"task_id": "04a04a9b", "Question": "No file", "Level": 1, "Final answer": "x", "file_name": ""}]
    (tmp_path / "metadata.jsonl").write_text("\n".join(map(json.dumps, lines)) + "\n")
    (tmp_path / "17b5a6a3.png").write_bytes(b"\x89PNG")
    out = process("benchmarks", "import", "gaia", "metadata.jsonl", "--output", "g.json", cwd=tmp_path)
    assert out.returncode == 0 and "1 attachment(s) are not beside metadata.jsonl (c61d22de.xlsx)" in out.stderr
    tasks = {t["id"]: t["inputData"] for t in json.loads((tmp_path / "g.json").read_text())["tasks"]}
    assert tasks["c61d22de"] == {"question": "What is in the sheet?", "file": "c61d22de.xlsx"}
    assert tasks["17b5a6a3"]["filePath"] == str((tmp_path / "17b5a6a3.png").resolve())
    assert tasks["04a04a9b"] == {"question": "No file"}


def test_report_diff_notes_a_skill_compared_across_different_benchmarks(tmp_path: Path) -> None:
    moved = report("alpha", 0.9)
    moved["benchmarkId"] = "web-search-basic"
    (tmp_path / "a.json").write_text(json.dumps([report("alpha", 0.8), report("beta", 0.5)]))
    (tmp_path / "b.json").write_text(json.dumps([moved, report("beta", 0.5)]))
    out = process("report", "diff", "a.json", "b.json", "--output", "d.md", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    text = (tmp_path / "d.md").read_text()
    assert "Note: different benchmarks, so the numbers are not comparable: alpha (b → web-search-basic)" in text
    assert "beta (" not in text
    doc = json.loads(process("report", "diff", "a.json", "b.json", "--json", cwd=tmp_path).stdout)
    assert [(s["benchmarkA"], s["benchmarkB"]) for s in doc["skills"]] == [("b", "web-search-basic"), ("b", "b")]


@pytest.mark.parametrize("version", ["1.0[/]", "[blink]1.0"])
def test_find_and_select_tables_show_markup_as_written(tmp_path: Path, version: str) -> None:
    """A skill version that looks like rich markup: shown as it is in every table ("[blink]1.0" was shown as
    "1.0", and "1.0[/]" ended the command with a traceback)."""
    folder = skill(tmp_path / "skills", "marked")
    manifest = json.loads((folder / "skill.json").read_text())
    (folder / "skill.json").write_text(json.dumps({**manifest, "version": version}))
    found = process("find", "--skills-dir", "skills", cwd=tmp_path)
    assert found.returncode == 0, found.stderr
    assert version in found.stdout
    (tmp_path / "r.json").write_text(json.dumps([{**report("marked", 0.9, 0.8), "skillVersion": version}]))
    chosen = process("select", "--from", "skills", "--reports", "r.json", cwd=tmp_path)
    assert chosen.returncode == 0, chosen.stderr
    assert version in chosen.stdout


@pytest.mark.parametrize("args", [["eval", "--min-completion", "nan"], ["run", "--min-completion", "nan"],
                                  ["find", "--min-completion", "nan"], ["select", "--min-completion", "nan"],
                                  ["report", "diff", "a.json", "b.json", "--fail-on-regression", "nan"]])
def test_nan_is_no_threshold(tmp_path: Path, args: list[str]) -> None:
    """nan passes every range check (every comparison with it is false): a gate that could never fail."""
    out = process(*args, cwd=tmp_path)
    one_line_exit_2(out, "is not a finite number")


@pytest.mark.parametrize("debug, traceback", [("0", False), ("", False), ("1", True)])
def test_eval_skills_debug_0_is_off(tmp_path: Path, debug: str, traceback: bool) -> None:
    (tmp_path / "r.json").write_text("[]")
    out = process("report", "convert", "--input", "r.json", "--format", "html", cwd=tmp_path,
                  env={"EVAL_SKILLS_DEBUG": debug})
    assert ("Traceback" in out.stderr) is traceback, out.stderr
    assert out.returncode == (1 if traceback else 2)  # the traceback is Python's own exit
