"""What is checked before anything runs: one line, exit 2, nothing written, `--dry-run` included."""

import json
import sqlite3
import stat
import sys
from pathlib import Path

import pytest
from test_cli_eval import CALCULATOR, chaos_skill, cli


def write(path: Path, content) -> Path:
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return path


def skill_with(tmp_path: Path, name: str, manifest: dict, config: dict | None = None) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    write(folder / "skill.json", {"id": name, "name": name, "version": "1.0.0", **manifest})
    if config is not None:
        write(folder / "adapter.config.json", config)
    return folder


def cases(tmp_path: Path) -> list[tuple[list, str]]:
    good = chaos_skill(tmp_path, False, "good")

    def task_file(name: str, evaluator: dict, expected: dict | None = None) -> Path:
        return write(tmp_path / name, [{"id": "a", "inputData": {"do": "ok"}, "evaluator": evaluator,
                                        "expectedOutput": expected or {"keywords": ["x"], "value": "x",
                                                                       "pattern": "x"}}])

    lower = task_file("lower.json", {"type": "contains", "casesensitive": False})
    typo = write(tmp_path / "typo.json", {"id": "b", "tasks": [
        {"id": "a", "evaluator": {"type": "contains", "passTreshold": 0.5}, "expectedOutput": {"keywords": ["x"]}}]})
    high = task_file("high.json", {"type": "contains", "passThreshold": "high"})
    flags = task_file("flags.json", {"type": "regex", "flags": 128})
    expected_flags = write(tmp_path / "eflags.json", [{"id": "a", "expectedOutput": {
        "type": "regex", "pattern": "x", "flags": 128}}])
    ref = write(tmp_path / "ref.json", [{"id": "a", "expectedOutput": {
        "type": "json_schema", "schema": {"$ref": "#/definitions/missing"}}}])
    remote = write(tmp_path / "remote.json", [{"id": "a", "expectedOutput": {
        "type": "json_schema", "schema": {"properties": {"x": {"$ref": "https://example.com/s.json"}}}}}])
    input_ref = skill_with(tmp_path, "input-ref", {"adapterType": "subprocess", "entrypoint": "python3 x.py",
                                                   "inputSchema": {"$ref": "#/$defs/nope"}})
    missing = skill_with(tmp_path, "missing-program", {"adapterType": "subprocess",
                                                       "entrypoint": "no-such-program-4242 --serve"})
    not_exec = skill_with(tmp_path, "not-executable", {"adapterType": "subprocess", "entrypoint": "./run.sh"})
    write(not_exec / "run.sh", "#!/bin/sh\necho hi\n")
    bad_start = skill_with(tmp_path, "bad-start", {"adapterType": "http", "entrypoint": "http://127.0.0.1:9/x"},
                           {"start": "python3 'server.py"})
    no_store = write(tmp_path / "not-a-store.db", "these are notes, not a database\n" * 100)
    foreign = tmp_path / "foreign.db"
    with sqlite3.connect(foreign) as db:
        db.execute("create table customers (id integer)")
    write(tmp_path / "README.md", "# my skill\n")
    return [
        (["--skills", good, "--tasks", lower], "lower.json: $[0].evaluator.casesensitive: unknown field"),
        (["--skills", good, "--benchmark", typo], "typo.json: $.tasks[0].evaluator.passTreshold: unknown field"),
        (["--skills", good, "--tasks", high],
         "high.json: $[0].evaluator.passThreshold: Input should be a valid number"),
        (["--skills", good, "--tasks", flags], "flags.json: $[0].evaluator.flags: regex flags 128 hold flags other"),
        (["--skills", good, "--tasks", expected_flags], "eflags.json: $[0].expectedOutput: regex flags 128 hold"),
        (["--skills", good, "--tasks", ref], "ref.json: $[0].expectedOutput: invalid JSON Schema: $ref "
                                             "'#/definitions/missing' does not resolve"),
        (["--skills", good, "--tasks", remote], "remote.json: $[0].expectedOutput: invalid JSON Schema: $ref "
                                                "'https://example.com/s.json' does not resolve (remote references"),
        (["--skills", input_ref],  # broken whatever its draft: refused even without --strict-input
         "input-ref/skill.json: $.inputSchema: invalid JSON Schema: $ref '#/$defs/nope'"),
        (["--skills", missing], "missing-program/skill.json: $.entrypoint: cannot start 'no-such-program-4242': "
                                "program not found on PATH"),
        (["--skills", not_exec], "not-executable/skill.json: $.entrypoint: cannot start './run.sh':"),
        (["--skills", bad_start], "bad-start/adapter.config.json: $.start: cannot split the start command"),
        (["--skills", good, "--store", no_store], "not-a-store.db: cannot open (file is not a database)"),
        (["--skills", good, "--store", foreign], "foreign.db: is a SQLite database of another program"),
        (["--skills", good, "--tasks", lower, "--benchmark", "coding-easy"],
         "--tasks and --benchmark cannot be used together"),
        (["--skills", good, "--format", ""], "--format: --format needs at least one format (use one or more of: "
                                             "json, markdown, html, csv, junit)"),
        (["--skills", tmp_path / "README.md"], "README.md: is not a skill.json (invalid JSON at line 1 column 1"),
        (["--skills", good, "--benchmark", ".."], "--benchmark: '..' is not a benchmark id"),
    ]


CASES = 17


@pytest.mark.parametrize("case", range(CASES))
@pytest.mark.parametrize("dry_run", [[], ["--dry-run"]], ids=["run", "dry-run"])
def test_problems_are_one_line_exit_2_and_nothing_is_written(tmp_path, dry_run, case):
    every = cases(tmp_path)
    assert len(every) == CASES
    for args, expected in every[case:case + 1]:
        before = sorted(p.name for p in tmp_path.iterdir())
        store = [] if "--store" in args else ["--store", tmp_path / "s.db"]
        out = cli("eval", *args, *dry_run, "--output-dir", tmp_path / "r", *store, cwd=tmp_path)
        assert out.returncode == 2, (args, out.stdout, out.stderr)
        lines = out.stderr.strip().splitlines()
        assert len(lines) == 1 and expected in lines[0], (args, out.stderr)
        assert "Traceback" not in out.stderr
        assert sorted(p.name for p in tmp_path.iterdir()) == before, args  # no report folder, no store
    assert not stat.S_IXUSR & (tmp_path / "not-executable" / "run.sh").stat().st_mode


def test_a_store_of_another_program_is_left_as_it_was(tmp_path):
    foreign = tmp_path / "foreign.db"
    with sqlite3.connect(foreign) as db:
        db.execute("create table customers (id integer)")
    before = foreign.read_bytes()
    out = cli("eval", "--skills", CALCULATOR, "--store", foreign, "--output-dir", tmp_path / "r", cwd=tmp_path)
    assert out.returncode == 2 and foreign.read_bytes() == before


def test_dry_run_shows_what_each_skill_will_run(tmp_path):
    out = cli("eval", "--skills", CALCULATOR, "--dry-run", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert f"  runs {sys.executable} skill.py in {CALCULATOR} (persistent)" in out.stdout


def test_a_utf8_byte_order_mark_is_accepted_in_every_json_file(tmp_path):
    skill = chaos_skill(tmp_path, True)
    bom = "\ufeff"
    for name in ("skill.json", "adapter.config.json"):
        (skill / name).write_text(bom + (skill / name).read_text(), encoding="utf-8")
    tasks = tmp_path / "tasks.json"
    tasks.write_text(bom + json.dumps([{"id": "a", "inputData": {"do": "ok", "m": "zz"},
                                        "expectedOutput": {"type": "contains", "keywords": ["zz"]}}]), encoding="utf-8")
    (tmp_path / "eval-skills.config.yaml").write_text(bom + "runs: 1\n", encoding="utf-8")
    out = cli("eval", "--skills", skill, "--tasks", tasks, "--json", "--no-store", "--format", "json",
              "--output-dir", tmp_path / "r", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["reports"][0]["summary"]["passed"] == 1


def test_a_local_benchmark_shadowing_a_built_in_says_so_once(tmp_path):
    (tmp_path / "benchmarks").mkdir()
    write(tmp_path / "benchmarks" / "coding-easy.json", {"id": "coding-easy", "tasks": [
        {"id": "one", "inputData": {"expression": "1+1"}, "expectedOutput": {"type": "exact", "value": "2"}}]})
    out = cli("eval", "--skills", CALCULATOR, "--dry-run", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stderr.splitlines() == [f"note: benchmark 'coding-easy' is {Path('benchmarks') / 'coding-easy.json'}, "
                                       "not the built-in benchmark of that id"]
    assert "1 tasks" in out.stdout


@pytest.mark.parametrize("args, problem, where", [
    (["-V"], "No such option", "eval-skills"),
    (["--nope"], "No such option", "eval-skills"),
    # a global option before the command is the command's: then the command's usage error, one line too
    (["--json", "eval"], "Missing option '--skills'", "eval-skills eval"),
])
def test_root_usage_errors_are_one_line(tmp_path, args, problem, where):
    out = cli(*args, cwd=tmp_path)
    assert out.returncode == 2
    (line,) = out.stderr.strip().splitlines()
    assert line.startswith(f"error: {problem}") and line.endswith(f"(see '{where} --help')")


def test_help_says_where_benchmarks_are_found_and_what_is_never_retried(tmp_path):
    out = cli("eval", "--help", cwd=tmp_path, env={"COLUMNS": "200"})
    assert out.returncode == 0
    text = " ".join(out.stdout.split())
    assert "an id of a benchmark in --benchmarks-dir" in text
    assert "JSON-RPC errors (the skill said no) and wrong answers are never retried" in text


def test_summary_table_fits_80_columns_without_cutting_numbers(tmp_path):
    skill = chaos_skill(tmp_path, True, "a-skill-with-a-rather-long-identifier-for-a-table")
    tasks = write(tmp_path / "t.json", [{"id": "a", "inputData": {"do": "ok", "m": "k"},
                                         "expectedOutput": {"type": "contains", "keywords": ["k"]}}])
    for columns, width in (("80", 80), ("", 80), ("120", 120)):  # piped and no COLUMNS: 80
        out = cli("eval", "--skills", skill, "--tasks", tasks, "--runs", "2", "--no-store", "--format", "json",
                  "--output-dir", tmp_path / "r", cwd=tmp_path, env={"COLUMNS": columns})
        assert out.returncode == 0, out.stderr
        table = out.stdout.split("report:")[0].rstrip().splitlines()
        assert max(len(line.rstrip()) for line in table) <= width
        assert "100.00%" in out.stdout and "1.0000" in out.stdout


@pytest.mark.parametrize("columns", ["0", "40", "74"])
def test_summary_table_narrower_than_its_numbers_wraps_and_cuts_nothing(tmp_path, columns):
    """Below the room every number needs, the table keeps every column whole (the terminal wraps the lines)
    and the report lines are still printed: COLUMNS=0 printed nothing at all, 40 dropped the skill column."""
    skill = chaos_skill(tmp_path, True, "a-skill-with-a-rather-long-identifier-for-a-table")
    tasks = write(tmp_path / "t.json", [{"id": "a", "inputData": {"do": "ok", "m": "k"},
                                         "expectedOutput": {"type": "contains", "keywords": ["k"]}}])
    out = cli("eval", "--skills", skill, "--tasks", tasks, "--runs", "2", "--no-store", "--format", "json",
              "--output-dir", tmp_path / "r", cwd=tmp_path, env={"COLUMNS": columns})
    assert out.returncode == 0, out.stderr
    table, reports = out.stdout.split("report:", 1)
    header, first = table.splitlines()[1:3]
    assert header.split() == ["skill", "version", "pass", "partial", "errors", "consist", "p50", "ms", "p95", "ms",
                              "composite"]
    report = json.loads((next((tmp_path / "r").glob("*.json"))).read_text())[0]
    assert first.split()[0].startswith("a-sk") and first.split()[1] == report["skillVersion"]
    assert first.split()[2:6] == ["100.00%", "1.0000", "0.00%", "1.0000"]
    assert first.split()[8] == format(report["summary"]["compositeScore"], ".4f")
    assert reports.strip().endswith(".json")
