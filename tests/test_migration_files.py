"""A migrating user's files through every command, as real processes: report files of the original shape in
``view`` and ``report diff``, numbers written the way a Python skill writes them, the original's strategy,
config, benchmark folder, OpenAPI skills and llm_judge tasks. Each value expected here is worked out by hand
from how the original eval-skills (TypeScript) computes it."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from clirun import process as cli
from original_shapes import create_from_openapi, create_skill, init_project
from test_migration_cli import ORIGINAL, only_report, server  # noqa: F401 - server is a fixture

from eval_skills.scoring.json_text import as_text, js_number

# a skill that answers with the raw JSON text it is given (``{"raw": "25.0"}`` -> ``"result": 25.0``), the way a
# Python skill's json.dumps writes numbers
RAW_SKILL = """\
import json, sys
request = json.loads(sys.stdin.read())
print('{"jsonrpc": "2.0", "result": %s, "id": %d}' % (request["params"]["raw"], request["id"]))
"""


def raw_skill(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "skill.py").write_text(RAW_SKILL)
    (folder / "skill.json").write_text(json.dumps({"id": "raw", "name": "Raw", "version": "0.1.0",
                                                   "adapterType": "subprocess", "entrypoint": "python3 skill.py",
                                                   "metadata": {}}))
    return folder


def original_report(folder: Path, benchmark_id: str = "web-search-basic") -> Path:
    """A report file as the original writes it: no benchmarkVersion, no attempts, no counts, no runId, no
    output, error or reason where it has none."""
    data = json.loads((ORIGINAL / "report.json").read_text())
    data[0]["benchmarkId"] = benchmark_id
    data[0]["taskResults"] = [{k: v for k, v in r.items() if k != "output"} if r["taskId"] == "coding_002" else r
                              for r in data[0]["taskResults"]]
    path = folder / "eval-result-original.json"
    path.write_text(json.dumps(data, indent=2))
    return path


def test_view_shows_a_report_of_the_original_without_guessing_its_benchmark(tmp_path):
    report = original_report(tmp_path)
    out = cli("view", report, "--static", tmp_path / "page.html", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    page = (tmp_path / "page.html").read_text()
    for task in ("coding_001", "coding_002", "coding_003", "coding_004"):
        assert task in page
    assert "JSON-RPC error -32000: boom" in page and "Expected \\u0026#34;120\\u0026#34; but got" in page
    # our built-in web-search-basic (same id, other tasks) is not shown as the benchmark this report ran
    assert "web-search-basic 1.0.0" not in page
    # a report of ours that ran the built-in still shows it
    ours = tmp_path / "ours"
    out = cli("eval", "--skills", ORIGINAL / "calculator", "--benchmark", "coding-easy", "--no-store", "--format",
              "json", "--output-dir", ours, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    (path,) = ours.glob("*.json")
    assert json.loads(path.read_text())[0]["evaluatorMetadata"]["benchmarkSource"] == "built-in"
    assert cli("view", path, "--static", tmp_path / "ours.html", cwd=tmp_path).returncode == 0
    assert "coding-easy 1.0.0" in (tmp_path / "ours.html").read_text()


def test_report_diff_says_when_a_benchmark_version_differs_or_is_unknown(tmp_path):
    before = original_report(tmp_path, "coding-easy")
    after = tmp_path / "after.json"
    data = json.loads(before.read_text())
    after.write_text(json.dumps([{**data[0], "benchmarkVersion": "1.0.0"}]))
    out = cli("report", "diff", before, after, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "one report does not say which version of its benchmark ran" in out.stdout
    assert "may not be comparable: calculator" in out.stdout
    newer = tmp_path / "newer.json"
    newer.write_text(json.dumps([{**data[0], "benchmarkVersion": "1.1.0"}]))
    out = cli("report", "diff", after, newer, cwd=tmp_path)
    assert "different benchmarks, so the numbers are not comparable: calculator (coding-easy 1.0.0 → coding-easy " \
           "1.1.0)" in out.stdout
    same = cli("report", "diff", after, after, cwd=tmp_path)
    assert "Note:" not in same.stdout


def test_numbers_compare_as_json_numbers_as_the_original_compares_them(tmp_path):
    """The original compares String(x) of JavaScript numbers: 25.0 on the wire is 25. Each verdict below is
    the original's: String(25) === "25"; String(1e-7) is "1e-7"; JSON.stringify({"a": 1.0}) is '{"a":1}'."""
    skill = raw_skill(tmp_path / "raw")
    cases = [("exact", "25.0", "25", True), ("exact", '{"result": 25.0}', 25, True),
             ("exact", '{"result": 1e2}', "100", True), ("exact", "1.5e-07", "1.5e-7", True),
             ("exact", "-0.0", "0", True), ("exact", "null", "null", True), ("exact", "0.1", "0.1", True),
             ("exact", "25.5", "25", False), ("exact", "12345678901234567890", "12345678901234567890", True),
             ("contains", '{"a": 1.0}', ["1.0"], False), ("contains", '{"a": 1.0}', ['"a":1'], True),
             ("contains", "null", ["null"], True), ("regex", '{"result": 2.50}', ["2\\.5\\b"], True),
             ("regex", '{"result": 2.50}', ["2\\.50"], False)]
    tasks = []
    for number, (kind, raw, want, _) in enumerate(cases):
        expected: dict[str, Any] = {"type": kind}
        expected[{"exact": "value", "contains": "keywords", "regex": "patterns"}[kind]] = want
        tasks.append({"id": f"t{number}", "inputData": {"raw": raw}, "expectedOutput": expected})
    (tmp_path / "tasks.json").write_text(json.dumps(tasks))
    out = cli("eval", "--skills", skill, "--tasks", tmp_path / "tasks.json", "--no-store", "--format", "json",
              "--output-dir", tmp_path / "r", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    (report,) = only_report(tmp_path / "r")
    verdicts = {r["taskId"]: r["status"] == "pass" for r in report["taskResults"]}
    assert verdicts == {f"t{n}": passed for n, (_, _, _, passed) in enumerate(cases)}, report["taskResults"]


@pytest.mark.parametrize(("value", "text"), [
    (25.0, "25"), (100.0, "100"), (0.1, "0.1"), (1.5e-7, "1.5e-7"), (1e-5, "0.00001"), (1e-6, "0.000001"),
    (1e-7, "1e-7"), (1e21, "1e+21"), (1e16, "10000000000000000"), (1e20, "100000000000000000000"), (-0.0, "0"),
    (-2.5, "-2.5"), (1.234e-6, "0.000001234"), (5e-324, "5e-324"), (1.7976931348623157e308, "1.7976931348623157e+308"),
    (123456789012345678901234.0, "1.2345678901234569e+23")])
def test_js_number_writes_what_javascript_writes(value, text):
    # each text is what Node's String(x) prints for the same double
    assert js_number(value) == text


def test_as_text_writes_json_as_javascript_would():
    assert as_text({"a": 1.0, "b": [2.5, 1e-7, None, True], "c": "x 1.0"}) == \
        '{"a":1,"b":[2.5,1e-7,null,true],"c":"x 1.0"}'
    assert as_text(None) == "null" and as_text("25.0") == "25.0" and as_text(7) == "7"
    assert as_text({"k": "café \u2028"}) == '{"k":"café \u2028"}'


def test_a_strategy_with_top_k_0_keeps_every_skill(tmp_path):
    init_project(tmp_path)
    for name in ("one", "two"):
        create_skill(tmp_path / "skills", name, "python_script")
    reports = [{**json.loads((ORIGINAL / "report.json").read_text())[0], "skillId": name} for name in ("one", "two")]
    (tmp_path / "reports.json").write_text(json.dumps(reports))
    (tmp_path / "strategy.yaml").write_text("filters:\n  minCompletionRate: 0.5\nsortBy: compositeScore\n"
                                            "order: desc\ntopK: 0\n")
    out = cli("select", "--from", "skills", "--reports", "reports.json", "--strategy", "strategy.yaml", "--json",
              cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert [s["skillId"] for s in json.loads(out.stdout)["selected"]] == ["one", "two"]
    out = cli("select", "--from", "skills", "--reports", "reports.json", "--top-k", "0", "--json", cwd=tmp_path)
    assert out.returncode == 0 and len(json.loads(out.stdout)["selected"]) == 2
    (tmp_path / "strategy.yaml").write_text("topK: -1\n")
    out = cli("select", "--from", "skills", "--reports", "reports.json", "--strategy", "strategy.yaml", cwd=tmp_path)
    assert out.returncode == 2 and "$.topK" in out.stderr


def test_config_get_and_set_take_the_originals_default_formats(tmp_path):
    home = tmp_path / "home"
    init_project(tmp_path)
    run: dict[str, Any] = {"cwd": tmp_path, "env": {"EVAL_SKILLS_HOME": str(home)}}
    out = cli("config", "get", "defaultFormats", "--json", **run)
    assert out.returncode == 0 and json.loads(out.stdout)["value"] == ["json", "markdown"], out.stderr
    out = cli("config", "set", "defaultFormats", "[json, html]", **run)
    assert out.returncode == 0, out.stderr
    assert "format:\n- json\n- html\n" in (home / "config.yaml").read_text()
    out = cli("config", "set", "defaultFormat", "[json]", **run)  # a misspelling is still refused
    assert out.returncode == 2 and "unknown config key 'defaultFormat'" in out.stderr


def test_benchmarks_are_found_by_id_as_the_original_finds_them(tmp_path):
    init_project(tmp_path)
    definitions = tmp_path / "benchmarks" / "definitions"
    definitions.mkdir()
    (definitions / "api-integration.json").write_text((ORIGINAL / "definitions" / "api-integration.json").read_text())
    renamed = json.loads((ORIGINAL / "coding-easy.json").read_text())
    (tmp_path / "benchmarks" / "my-tasks.json").write_text(json.dumps({**renamed, "id": "easy-sums"}))
    for ref, tasks in (("api-integration", 3), ("easy-sums", 12)):
        out = cli("eval", "--skills", ORIGINAL / "calculator", "--benchmark", ref, "--dry-run", "--json", cwd=tmp_path)
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout)["benchmark"]["tasks"] == tasks
    listing = cli("benchmarks", "list", "--json", cwd=tmp_path)
    rows = {row["id"]: row for row in json.loads(listing.stdout)["benchmarks"]}
    assert rows["api-integration"]["problem"] is None and rows["easy-sums"]["problem"] is None
    (tmp_path / "benchmarks" / "again.json").write_text(json.dumps({**renamed, "id": "easy-sums"}))
    out = cli("eval", "--skills", ORIGINAL / "calculator", "--benchmark", "easy-sums", "--dry-run", cwd=tmp_path)
    assert out.returncode == 2 and "2 benchmarks in benchmarks have the id 'easy-sums'" in out.stderr


def test_a_skill_made_from_an_openapi_spec_runs_with_its_version_and_method(tmp_path, server):  # noqa: F811
    url = f"http://127.0.0.1:{server.server_address[1]}"
    skill = create_from_openapi(tmp_path, "weather", server_url=url, api_version="v1")
    out = cli("eval", "--skills", skill, "--benchmark", skill / "tests" / "basic.eval.json", "--no-store",
              "--format", "json", "--output-dir", tmp_path / "r", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    (report,) = only_report(tmp_path / "r")
    assert report["skillVersion"] == "v1" and report["summary"]["completionRate"] == 1.0
    assert server.requests[-1] == ("GET", "/weather", {})
    (skill / "skill.json").write_text((skill / "skill.json").read_text().replace('"v1"', '"v 1"'))
    out = cli("eval", "--skills", skill, "--benchmark", skill / "tests" / "basic.eval.json", "--dry-run", cwd=tmp_path)
    assert out.returncode == 2 and "$.version" in out.stderr


JUDGE_LOG = """\
import json, os, sys
request = json.load(sys.stdin)
with open(os.environ["JUDGE_LOG"], "a") as log:
    log.write(json.dumps(request) + "\\n")
print(json.dumps({"score": 0.7, "reason": "fine"}))
"""


def test_llm_judge_tasks_of_the_original_reach_the_judge_with_their_prompt_and_default_rubric(tmp_path):
    skill = create_skill(tmp_path, "asked", "python_script")
    (tmp_path / "judge.py").write_text(JUDGE_LOG)
    tasks = [{"id": "no-rubric", "inputData": {"query": "x"}, "expectedOutput": {"type": "llm_judge", "value": "X"},
              "evaluator": {"type": "llm_judge"}},
             *json.loads((ORIGINAL / "definitions" / "judged.json").read_text())["tasks"]]
    (tmp_path / "tasks.json").write_text(json.dumps(tasks))
    log = tmp_path / "judge.log"
    out = cli("eval", "--skills", skill, "--tasks", tmp_path / "tasks.json", "--no-store", "--format", "json",
              "--output-dir", tmp_path / "r", "--judge-cmd", f"{sys.executable} judge.py", "--no-judge-cache",
              cwd=tmp_path, env={"JUDGE_LOG": str(log)})
    assert out.returncode == 0, out.stderr
    requests = {r["rubric"]: r for r in map(json.loads, log.read_text().splitlines())}
    # the original asks "Evaluate the quality of the output." when a task has no judgePrompt
    assert requests["Evaluate the quality of the output."]["expected"] == "X"
    weather = requests["The answer must use the weather tool correctly."]
    assert weather["task"] == "Use the weather tool for Paris." and weather["input"] is None
    assert requests["Is the answer correct and concise?"]["task"] is None
    (report,) = only_report(tmp_path / "r")
    assert {r["status"] for r in report["taskResults"]} == {"pass"}  # 0.7 >= 0.5, the original's threshold


def test_report_convert_prints_on_stdout_with_output_dash(tmp_path):
    report = original_report(tmp_path, "coding-easy")
    out = cli("report", "convert", "--input", report, "--format", "markdown", "--output", "-", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("# eval-skills Report") and "4 tasks, 1 run(s): 2 passed" in out.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["eval-result-original.json"]


def test_select_takes_the_skills_the_originals_select_wrote(tmp_path):
    """The original's ``select --output`` writes the selected skills' skill.json objects, each with the
    ``rootPath`` of its folder."""
    init_project(tmp_path)
    folders = [create_skill(tmp_path / "skills", name, "python_script") for name in ("one", "two")]
    written = [{**json.loads((f / "skill.json").read_text()), "rootPath": str(f)} for f in folders]
    (tmp_path / "selected.json").write_text(json.dumps(written, indent=2))
    reports = [{**json.loads((ORIGINAL / "report.json").read_text())[0], "skillId": name} for name in ("one", "two")]
    (tmp_path / "reports.json").write_text(json.dumps(reports))
    out = cli("select", "--from", "selected.json", "--reports", "reports.json", "--json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert [s["path"] for s in json.loads(out.stdout)["selected"]] == [str(f / "skill.json") for f in folders]
