"""GAIA and ToolBench: the gaia scorer's normalisation, and the converters end to end on small files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from clirun import run

from eval_skills.formats.benchmark import Task
from eval_skills.scoring.gaia import normalize_number_str, normalize_str, question_scorer
from eval_skills.scoring.scorers import ScoringContext, get_scorer


@pytest.mark.parametrize("answer, truth, correct", [
    ("17", "17", True), ("$1,234.50", "1234.5", True), ("45%", "45", True), (" 3.0 ", "3", True),
    ("three", "3", False), ("17 apples", "17", False),
    ("apple, banana; cherry", "Apple,Banana,Cherry", True),   # lists: spaces and case do not count
    ("apple,banana", "apple, banana, cherry", False),         # ... but the length does
    ("1,2,3", "1, 2, 3.0", True),                             # numeric elements compare as numbers
    ("b.c, d", "b.c, d", True), ("bc, d", "b.c, d", False),   # punctuation kept inside list elements
    ("Paris.", "paris", True), ("New  York!", "new york", True), ("St. Louis", "Saint Louis", False),
])
def test_gaia_question_scorer(answer: str, truth: str, correct: bool) -> None:
    assert question_scorer(answer, truth)[0] is correct


def test_normalisers_by_hand() -> None:
    assert normalize_number_str("$1,000") == 1000.0 and normalize_number_str("n/a") == float("inf")
    assert normalize_str(" A-b C ") == "abc" and normalize_str(" A-b C ", remove_punct=False) == "a-bc"


def test_gaia_scorer_reads_the_answer_key() -> None:
    scorer = get_scorer("gaia")
    task = Task.model_validate({"id": "t", "expectedOutput": {"type": "gaia", "value": "1000"}})
    score = scorer({"result": "$1,000"}, task, {}, ScoringContext())
    assert score.passed and score.value == 1.0 and "numbers" in score.reason
    miss = scorer({"answer": "999"}, task, {}, ScoringContext())
    assert not miss.passed and "'999'" in miss.reason


GAIA_LINES = [
    {"task_id": "a1", "Question": "How many legs has a spider?", "Level": 1, "Final answer": "8", "file_name": ""},
    {"task_id": "a2", "Question": "List the primary colours.", "Level": "1", "Final answer": "red, yellow, blue",
     "file_name": "colours.png"},
    {"task_id": "a3", "Question": "Capital of France?", "Level": 1, "Final answer": "Paris", "file_name": ""},
    {"task_id": "b1", "Question": "Hard one", "Level": 2, "Final answer": "x", "file_name": ""},
    {"task_id": "c1", "Question": "Hidden", "Level": 1, "Final answer": "?", "file_name": ""},
]
ANSWERS = {"spider": "eight", "colours": "Red; Yellow; Blue", "France": "Paris."}  # one wrong on purpose


def answering_skill(root: Path) -> Path:
    folder = root / "oracle"
    folder.mkdir()
    (folder / "skill.json").write_text(json.dumps({"id": "oracle", "name": "Oracle", "version": "1.0.0",
                                                   "adapterType": "subprocess", "entrypoint": "python3 skill.py"}))
    (folder / "skill.py").write_text(
        "import json, sys\nANSWERS = " + json.dumps(ANSWERS) + "\nfor line in sys.stdin:\n"
        "    r = json.loads(line)\n    q = json.dumps(r['params'])\n"
        "    a = next((v for k, v in ANSWERS.items() if k in q), '')\n"
        "    print(json.dumps({'jsonrpc': '2.0', 'id': r['id'], 'result': {'answer': a}}), flush=True)\n")
    (folder / "adapter.config.json").write_text('{"persistent": true}')
    return folder


def test_gaia_import_then_eval(tmp_path: Path) -> None:
    data = tmp_path / "gaia"
    data.mkdir()
    (data / "metadata.jsonl").write_text("\n".join(json.dumps(line) for line in GAIA_LINES) + "\n")
    (data / "colours.png").write_bytes(b"\x89PNG")
    out = run("benchmarks", "import", "gaia", data / "metadata.jsonl", "--benchmarks-dir", tmp_path / "benchmarks")
    assert out.exit_code == 0, out.output
    assert "3 tasks (1 records without an answer skipped)" in out.stdout
    bench = json.loads((tmp_path / "benchmarks" / "gaia-v1.json").read_text())
    assert [t["id"] for t in bench["tasks"]] == ["a1", "a2", "a3"]  # level 1 only, "?" skipped
    assert bench["tasks"][1]["inputData"] == {"question": "List the primary colours.", "file": "colours.png",
                                              "filePath": str((data / "colours.png").resolve())}
    assert bench["tasks"][0]["evaluator"] == {"type": "gaia"} and bench["tasks"][0]["tags"] == ["gaia", "level-1"]
    again = run("benchmarks", "import", "gaia", data / "metadata.jsonl", "--benchmarks-dir", tmp_path / "benchmarks")
    assert again.exit_code == 2 and "--force" in again.stderr
    listed = json.loads(run("benchmarks", "list", "--benchmarks-dir", tmp_path / "benchmarks",
                            "--json").stdout)["benchmarks"]
    gaia = next(b for b in listed if b["id"] == "gaia-v1")
    assert gaia["tasks"] == 3 and gaia["scorers"] == ["gaia"]

    skill = answering_skill(tmp_path)
    result = run("eval", "--skills", skill, "--benchmark", "gaia-v1", "--benchmarks-dir", tmp_path / "benchmarks",
                 "--json", "--no-store", "--output-dir", tmp_path / "r", cwd=tmp_path)
    assert result.exit_code == 0, result.output
    (report,) = json.loads(result.stdout)["reports"]
    statuses = {t["taskId"]: t["status"] for t in report["taskResults"]}
    assert statuses == {"a1": "fail", "a2": "pass", "a3": "pass"}  # "eight" is not the number 8
    both = run("benchmarks", "import", "gaia", data / "metadata.jsonl", "--level", "1,2", "--output",
               tmp_path / "all.json")
    assert both.exit_code == 0, both.output
    levels = json.loads((tmp_path / "all.json").read_text())
    assert [t["id"] for t in levels["tasks"]] == ["a1", "a2", "a3", "b1"]


@pytest.mark.parametrize("lines, message", [
    ([{"task_id": "x", "Level": 1, "Final answer": "1"}], "line 1: record has no 'Question'"),
    ([{"task_id": "x", "Question": "q", "Level": 1, "Final answer": "1", "file_name": "../../etc/passwd"}],
     "leaves the data set's folder"),
    ([{"task_id": "x", "Question": "q", "Level": 1, "Final answer": "?"}], "no GAIA task"),
])
def test_gaia_bad_input(tmp_path: Path, lines: list[dict[str, object]], message: str) -> None:
    (tmp_path / "m.jsonl").write_text("\n".join(map(json.dumps, lines)))
    out = run("benchmarks", "import", "gaia", tmp_path / "m.jsonl", "--output", tmp_path / "out.json")
    assert out.exit_code == 2 and message in out.stderr and "m.jsonl" in out.stderr
    assert not (tmp_path / "out.json").exists()
    (tmp_path / "m.jsonl").write_text('{"task_id": 1}\nnot json\n')
    broken = run("benchmarks", "import", "gaia", tmp_path / "m.jsonl", "--output", tmp_path / "out.json")
    assert broken.exit_code == 2 and "m.jsonl: line 2: invalid JSON" in broken.stderr


def test_toolbench_import_then_eval(tmp_path: Path) -> None:
    queries = [
        {"query_id": 7, "query": "What's the weather in Paris?", "api_list": [
            {"category_name": "Weather", "tool_name": "open_weather", "api_name": "current_weather",
             "api_description": "Weather now", "required_parameters": [{"name": "city", "type": "STRING"}],
             "optional_parameters": [], "method": "GET"}],
         "relevant APIs": [["open_weather", "current_weather"]]},
        {"query_id": 8, "query": "Convert 5 USD to EUR", "api_list": [
            {"category_name": "Finance", "tool_name": "fx", "api_name": "convert", "required_parameters": []}],
         "relevant APIs": [["fx", "convert"], ["fx", "rates"]]},
        {"query_id": 9, "query": "No answer", "api_list": [], "relevant APIs": []},
    ]
    (tmp_path / "G1_query.json").write_text(json.dumps(queries))
    out = run("benchmarks", "import", "toolbench", tmp_path / "G1_query.json", "--output", tmp_path / "tb.json")
    assert out.exit_code == 0, out.output
    bench = json.loads((tmp_path / "tb.json").read_text())
    assert bench["id"] == "toolbench-lite" and [t["id"] for t in bench["tasks"]] == ["q7", "q8"]
    first = bench["tasks"][0]
    assert first["expectedOutput"] == {"type": "contains", "keywords": ["current_weather"]}
    assert first["inputData"]["apis"][0]["requiredParameters"] == [{"name": "city", "type": "STRING"}]
    assert first["tags"] == ["toolbench", "G1", "Weather"]
    skill = tmp_path / "picker"
    skill.mkdir()
    (skill / "skill.json").write_text(json.dumps({"id": "picker", "name": "P", "version": "1.0.0",
                                                  "adapterType": "subprocess", "entrypoint": "python3 s.py"}))
    (skill / "s.py").write_text(  # names the first API it is offered
        "import json, sys\nr = json.loads(sys.stdin.readline())\napis = r['params']['apis']\n"
        "print(json.dumps({'jsonrpc': '2.0', 'id': r['id'], 'result': {'result': 'call ' + apis[0]['api']}}))\n")
    result = run("eval", "--skills", skill, "--benchmark", tmp_path / "tb.json", "--json", "--no-store",
                 "--output-dir", tmp_path / "r", cwd=tmp_path)
    (report,) = json.loads(result.stdout)["reports"]
    assert {t["taskId"]: (t["status"], t["score"]) for t in report["taskResults"]} == {
        "q7": ("pass", 1.0), "q8": ("fail", 0.5)}  # one of the two relevant APIs named
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"query": "q"}]))
    refused = run("benchmarks", "import", "toolbench", bad, "--output", tmp_path / "x.json")
    assert refused.exit_code == 2 and "query_id" in refused.stderr and not (tmp_path / "x.json").exists()


def test_a_benchmark_file_that_does_not_load_is_listed_with_its_problem_once(tmp_path: Path) -> None:
    folder = tmp_path / "benchmarks"
    folder.mkdir()
    (folder / "broken.json").write_text("{bad")
    listed = json.loads(run("benchmarks", "list", "--benchmarks-dir", folder, "--json").stdout)["benchmarks"]
    entry = next(b for b in listed if b["id"] == "broken")
    assert entry["source"] == str(folder / "broken.json")
    assert entry["problem"].startswith("invalid JSON at line 1 column 2") and str(folder) not in entry["problem"]
    text = run("benchmarks", "list", "--benchmarks-dir", folder, env={"COLUMNS": "200"}).stdout
    assert text.count("broken.json") == 1
