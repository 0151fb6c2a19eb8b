"""Outputs no other reply can hold reach every adapter's results one way: a custom function's lone surrogates and
deep nesting are read like a subprocess reply's, and every output a skill may send (nested up to 256 levels)
reads back from our own report files in `report convert`, `report diff`, `select` and `view`. Real processes,
real store, real files."""

import json
import sqlite3
from pathlib import Path

from test_cli_eval import cli
from test_hardening_cli import only_report, tasks_file

FUNCTIONS = '''
def fn(data):
    kind = data["kind"]
    if kind == "surrogate":
        return {"result": "a\\ud800b", "\\udc00key": 1}
    if kind == "deep":
        value = "x"
        for _ in range(900):
            value = [value]
        return {"result": value}
    return {"result": "ok"}
'''


def test_a_custom_functions_surrogates_and_deep_nesting_are_read_like_any_reply(tmp_path):
    skill = tmp_path / "fn"
    skill.mkdir()
    (skill / "skill.json").write_text(json.dumps({"id": "fn", "version": "1.0.0", "adapterType": "custom",
                                                  "entrypoint": "mod:fn"}))
    (skill / "mod.py").write_text(FUNCTIONS)
    tasks = tasks_file(tmp_path, [{"id": kind, "inputData": {"kind": kind},
                                   "expectedOutput": {"type": "exact", "value": "ok"}}
                                  for kind in ("surrogate", "deep", "ok")])
    out = cli("eval", "--skills", skill, "--tasks", tasks, "--format", "json", "markdown", "html", "csv", "junit",
              "--output-dir", tmp_path / "r", "--store", tmp_path / "s.db", cwd=tmp_path)
    assert out.returncode == 0, out.stderr  # the store's writer took every row
    (report,) = json.loads(only_report(tmp_path / "r", ".json").read_text(encoding="utf-8"))
    results = {r["taskId"]: r for r in report["taskResults"]}
    assert results["surrogate"]["status"] == "fail"
    assert results["surrogate"]["output"] == {"result": "a\ufffdb", "\ufffdkey": 1}
    assert results["surrogate"]["reason"] == "expected 'ok', got 'a\ufffdb'"
    assert (results["deep"]["status"], results["deep"]["error"]) == (
        "error", "returned a value that is not usable JSON: nested deeper than 256 levels")
    assert results["ok"]["status"] == "pass"
    for suffix in (".md", ".html", ".csv", ".xml"):
        assert "a\ufffdb" in only_report(tmp_path / "r", suffix).read_text(encoding="utf-8"), suffix
    with sqlite3.connect(tmp_path / "s.db") as db:
        rows = dict(db.execute("select task_id, status from task_results").fetchall())
        (status,), = db.execute("select status from evaluations").fetchall()
    assert rows == {"surrogate": "fail", "deep": "error", "ok": "pass"} and status == "finished"


DEEP_SKILL = '''
import json, sys
for line in sys.stdin:
    request = json.loads(line)
    depth = request["params"]["depth"]
    sys.stdout.write('{"jsonrpc":"2.0","id":%d,"result":{"result":%s"x"%s}}\\n'
                     % (request["id"], "[" * depth, "]" * depth))
    sys.stdout.flush()
'''


def test_every_output_a_skill_may_send_reads_back_from_our_own_reports(tmp_path):
    skill = tmp_path / "deep"
    skill.mkdir()
    (skill / "skill.json").write_text(json.dumps({"id": "deep", "version": "1.0.0", "adapterType": "subprocess",
                                                  "entrypoint": "python3 skill.py"}))
    (skill / "adapter.config.json").write_text(json.dumps({"persistent": True}))
    (skill / "skill.py").write_text(DEEP_SKILL)
    tasks = tasks_file(tmp_path, [{"id": f"d{depth}", "inputData": {"depth": depth},
                                   "expectedOutput": {"type": "contains", "keywords": ["x"]}} for depth in (3, 254)])
    out = cli("eval", "--skills", skill, "--tasks", tasks, "--format", "json", "--output-dir", tmp_path / "r",
              "--store", tmp_path / "s.db", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    report = only_report(tmp_path / "r", ".json")
    assert [r["status"] for r in json.loads(report.read_text())[0]["taskResults"]] == ["pass", "pass"]
    for fmt in ("markdown", "html", "csv", "junit", "json"):
        converted = cli("report", "convert", "--input", report, "--format", fmt, "--output", tmp_path / f"c.{fmt}",
                        cwd=tmp_path)
        assert converted.returncode == 0, converted.stderr
        text = (tmp_path / f"c.{fmt}").read_text(encoding="utf-8")
        assert ("2 passed" if fmt == "markdown" else "d254") in text, fmt  # Markdown lists only what failed
    diff = cli("report", "diff", report, report, "--json", cwd=tmp_path)
    assert diff.returncode == 0, diff.stderr
    selected = cli("select", "--from", skill, "--reports", report, "--json", cwd=tmp_path)
    assert selected.returncode == 0, selected.stderr
    assert [s["skillId"] for s in json.loads(selected.stdout)["selected"]] == ["deep"]
    for target in (report, tmp_path / "s.db"):
        page = tmp_path / f"{Path(target).suffix[1:]}.html"
        viewed = cli("view", target, "--static", page, cwd=tmp_path)
        assert viewed.returncode == 0, viewed.stderr
        assert "d254" in page.read_text(encoding="utf-8")
