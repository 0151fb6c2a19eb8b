"""find, select, run and history over real skill folders, a real store and real report files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from clirun import CALCULATOR, run

from eval_skills.formats.skill import SkillManifest
from eval_skills.store import Store
from eval_skills.tool_skills.discovery import relevance


def make_skill(root: Path, skill_id: str, *, tags: list[str], description: str = "", adapter: str = "subprocess",
               name: str | None = None) -> Path:
    folder = root / skill_id
    folder.mkdir(parents=True)
    (folder / "skill.json").write_text(json.dumps({
        "id": skill_id, "name": name or skill_id, "version": "1.0.0", "description": description, "tags": tags,
        "adapterType": adapter, "entrypoint": "python3 skill.py" if adapter != "http" else "/invoke"}))
    return folder


def report(skill: str, completion: float, *, errors: float = 0.0, p95: float = 100.0, composite: float = 0.5,
           tokens: int | None = None, stamp: str = "2026-01-01T00:00:00.000Z", benchmark: str = "b") -> dict[str, Any]:
    return {"skillId": skill, "skillVersion": "1.0.0", "benchmarkId": benchmark, "timestamp": stamp,
            "summary": {"completionRate": completion, "errorRate": errors, "compositeScore": composite},
            "latency": {"p50Ms": p95 / 2, "p95Ms": p95, "p99Ms": p95},
            "tokenCost": None if tokens is None else {"totalTokens": tokens}, "taskResults": []}


def store_with(path: Path, *evaluations: tuple[str, list[dict[str, Any]]]) -> None:
    with Store.open(path) as store:
        for benchmark, reports in evaluations:
            eid = store.begin_evaluation(benchmark_id=benchmark, benchmark_version="1", config={}, tool_version="t")
            store.finish_evaluation(eid, status="finished", reports=reports)


def test_relevance_weights_computed_by_hand() -> None:
    manifest = SkillManifest(id="web_search", name="Web Search", version="1.0.0", tags=["retrieval", "api"],
                             description="Searches the web for pages", adapterType="http", entrypoint="/x")
    # web: name 3 + description 1; search: name 3 + "searches" in the description 0.5; phrase in name +3
    assert relevance(manifest, "web search") == 10.5
    # retrieval: tag 2; "api" is part of no word of the name or description, a whole tag: 2
    assert relevance(manifest, "Retrieval API") == 4.0
    assert relevance(manifest, "weather") == 0.0


def test_find_ranks_by_relevance_or_by_recorded_completion(tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    make_skill(skills, "web_search", tags=["retrieval", "api"], description="Searches the web", adapter="http")
    make_skill(skills, "news_search", tags=["retrieval"], description="Finds news articles on the web")
    make_skill(skills, "calculator", tags=["math"], description="Arithmetic")
    make_skill(skills, "untested", tags=["math"], description="Never run")
    (skills / "broken").mkdir()
    (skills / "broken" / "skill.json").write_text("{")
    store_with(tmp_path / "s.db", ("b", [report("calculator", 0.9), report("web_search", 0.5)]),
               ("b", [report("news_search", 0.7)]))

    out = run("find", "--skills-dir", skills, "--store", tmp_path / "s.db", "--json", cwd=tmp_path)
    assert out.exit_code == 0, out.output
    found = json.loads(out.stdout)["skills"]
    assert [f["id"] for f in found] == ["calculator", "news_search", "web_search", "untested"]
    assert found[0]["completionRate"] == 0.9 and found[-1]["evaluated"] is False
    assert "broken" in out.stderr  # reported and skipped

    by_query = json.loads(run("find", "-q", "web search", "--skills-dir", skills, "--store", tmp_path / "s.db",
                              "--json", cwd=tmp_path).stdout)["skills"]
    assert [f["id"] for f in by_query] == ["web_search", "news_search"]
    assert by_query[0]["relevance"] > by_query[1]["relevance"] > 0

    filtered = json.loads(run("find", "--tag", "retrieval", "api", "--adapter", "http", "--skills-dir", skills,
                              "--store", tmp_path / "s.db", "--json", cwd=tmp_path).stdout)["skills"]
    assert [f["id"] for f in filtered] == ["web_search"]
    at_least = json.loads(run("find", "--min-completion", "0.7", "--limit", "1", "--skills-dir", skills,
                              "--store", tmp_path / "s.db", "--json", cwd=tmp_path).stdout)["skills"]
    assert [f["id"] for f in at_least] == ["calculator"]
    table = run("find", "--skills-dir", skills, "--store", tmp_path / "s.db", cwd=tmp_path,
                env={"COLUMNS": "200"}).stdout
    assert "never evaluated" in table and "90.00%" in table
    assert not (tmp_path / "eval-skills.db").exists()  # looking never creates a store


def candidates(tmp_path: Path) -> tuple[Path, Path]:
    skills = tmp_path / "skills"
    make_skill(skills, "fast", tags=["production-ready"], adapter="http")
    make_skill(skills, "accurate", tags=["production-ready"])
    make_skill(skills, "flaky", tags=["production-ready"])
    make_skill(skills, "untagged", tags=[])
    make_skill(skills, "unevaluated", tags=["production-ready"])
    reports = [report("fast", 0.85, p95=50, composite=0.80, tokens=900),
               report("accurate", 0.95, p95=4000, composite=0.85, tokens=100),
               report("flaky", 0.9, errors=0.3, composite=0.9, tokens=50),
               report("untagged", 1.0, composite=1.0),
               report("accurate", 0.1, composite=0.1, stamp="2025-01-01T00:00:00.000Z")]  # older: ignored
    path = tmp_path / "eval-result.json"
    path.write_text(json.dumps(reports))
    return skills, path


def test_select_filters_ranks_and_keeps_top_k(tmp_path: Path) -> None:
    skills, reports = candidates(tmp_path)
    (tmp_path / "strategy.yaml").write_text(
        "filters:\n  minCompletionRate: 0.8\n  maxErrorRate: 0.1\n  maxLatencyP95Ms: 5000\n"
        "  adapterTypes: [http, subprocess]\n  requiredTags: [production-ready]\nsortBy: compositeScore\n"
        "order: desc\ntopK: 5\n")
    out = run("select", "--from", skills, "--reports", reports, "--strategy", tmp_path / "strategy.yaml",
              "--output", tmp_path / "selected.json", cwd=tmp_path)
    assert out.exit_code == 0, out.output
    doc = json.loads((tmp_path / "selected.json").read_text())
    assert [(s["rank"], s["skillId"]) for s in doc["selected"]] == [(1, "accurate"), (2, "fast")]
    assert doc["selected"][0]["completionRate"] == 0.95  # the newest report of the skill
    reasons = {e["skillId"]: e["reason"] for e in doc["excluded"]}
    assert reasons == {"flaky": "error rate 0.3 above 0.1", "untagged": "missing tag(s) production-ready",
                       "unevaluated": "no evaluation report"}
    # sorting by latency is ascending by default; --top-k and --min-completion override the strategy
    (tmp_path / "latency.json").write_text(json.dumps({"sortBy": "latency"}))
    doc = json.loads(run("select", "--from", skills, "--reports", reports, "--strategy", tmp_path / "latency.json",
                         "--min-completion", "0.9", "--top-k", "2", cwd=tmp_path).stdout)
    assert [s["skillId"] for s in doc["selected"]] == ["flaky", "untagged"]
    assert doc["strategy"]["filters"]["minCompletionRate"] == 0.9 and doc["strategy"]["topK"] == 2
    (tmp_path / "tokens.yaml").write_text("sortBy: tokenCost\n")
    doc = json.loads(run("select", "--from", skills, "--reports", reports, "--strategy", tmp_path / "tokens.yaml",
                         cwd=tmp_path).stdout)
    assert [s["skillId"] for s in doc["selected"]] == ["flaky", "accurate", "fast", "untagged"]  # no tokens: last


def test_select_from_a_json_list_and_from_the_store(tmp_path: Path) -> None:
    skills, _ = candidates(tmp_path)
    listing = tmp_path / "found.json"
    listing.write_text(json.dumps([{"path": "skills/fast/skill.json"}, "skills/accurate"]))
    store_with(tmp_path / "s.db", ("b", [report("fast", 0.5, composite=0.3), report("accurate", 0.8, composite=0.7)]))
    doc = json.loads(run("select", "--from", listing, "--store", tmp_path / "s.db", cwd=tmp_path).stdout)
    assert [s["skillId"] for s in doc["selected"]] == ["accurate", "fast"]


@pytest.mark.parametrize("content, message", [
    ("filters:\n  minCompletion: 0.8\n", "$.filters.minCompletion: unknown field"),
    ("sortBy: speed\n", "$.sortBy"),
    ("topK: many\n", "$.topK"),
    ("filters:\n  adapterTypes: [grpc]\n", "$.filters.adapterTypes[0]"),
    ("- a\n", "expected a mapping"),
])
def test_bad_strategy_is_one_line_exit_2(tmp_path: Path, content: str, message: str) -> None:
    skills, reports = candidates(tmp_path)
    (tmp_path / "s.yaml").write_text(content)
    out = run("select", "--from", skills, "--reports", reports, "--strategy", tmp_path / "s.yaml", "--output",
              tmp_path / "out.json", cwd=tmp_path)
    assert out.exit_code == 2 and message in out.stderr and "s.yaml" in out.stderr, out.stderr
    assert len(out.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "out.json").exists()


def test_select_bad_paths_are_exit_2(tmp_path: Path) -> None:
    skills, reports = candidates(tmp_path)
    missing = run("select", "--from", skills, "--reports", tmp_path / "nope.json", cwd=tmp_path)
    assert missing.exit_code == 2 and "nope.json" in missing.stderr
    (tmp_path / "other.json").write_text('{"hello": 1}')
    not_report = run("select", "--from", skills, "--reports", tmp_path / "other.json", cwd=tmp_path)
    assert not_report.exit_code == 2 and "other.json" in not_report.stderr
    no_store = run("select", "--from", skills, "--store", tmp_path / "none.db", cwd=tmp_path)
    assert no_store.exit_code == 2 and "--reports" in no_store.stderr
    assert not (tmp_path / "none.db").exists()
    # a --from list naming a skill that is not there: the list and the entry are named, not "--skills"
    (tmp_path / "list.json").write_text(json.dumps(["skills/fast", {"path": "skills/gone/skill.json"}]))
    gone = run("select", "--from", tmp_path / "list.json", "--reports", reports, cwd=tmp_path)
    assert gone.exit_code == 2 and len(gone.stderr.strip().splitlines()) == 1, gone.stderr
    assert f"{tmp_path / 'list.json'}: $[1]: no such skill file or folder" in gone.stderr
    assert "skills/gone/skill.json" in gone.stderr and "--skills" not in gone.stderr


def failing_skill(root: Path) -> Path:
    """A persistent skill answering every task with "nope" (a wrong answer, not an error)."""
    folder = make_skill(root, "wrong_answers", tags=["math"], description="always wrong math")
    (folder / "skill.py").write_text(
        "import json, sys\nfor line in sys.stdin:\n    r = json.loads(line)\n"
        "    print(json.dumps({'jsonrpc': '2.0', 'id': r['id'], 'result': {'result': 'nope'}}), flush=True)\n")
    (folder / "adapter.config.json").write_text('{"persistent": true}')
    return folder


def test_run_finds_evaluates_selects_and_reports_the_selected(tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    shutil.copytree(CALCULATOR, skills / "calculator")
    failing_skill(skills)
    make_skill(skills, "unrelated", tags=["web"], description="web pages")
    out = run("run", "--query", "math", "--benchmark", "coding-easy", "--skills-dir", skills, "--top-k", "3",
              "--min-completion", "0.7", "--format", "json", "markdown", "--output-dir", tmp_path / "reports",
              "--store", tmp_path / "s.db", "--json", cwd=tmp_path)
    assert out.exit_code == 0, out.output
    doc = json.loads(out.stdout)
    assert [s["skillId"] for s in doc["selected"]] == ["calculator"]
    assert doc["excluded"] == [{"skillId": "wrong_answers", "path": str(skills / "wrong_answers" / "skill.json"),
                                "reason": "completion rate 0 below 0.7"}]
    assert {r["skillId"] for r in doc["reports"]} == {"calculator", "wrong_answers"}  # "unrelated" not found
    files = sorted((tmp_path / "reports").iterdir())
    assert [f.suffix for f in files] == [".json", ".md"]
    written = json.loads(next(f for f in files if f.suffix == ".json").read_text())
    assert [r["skillId"] for r in written] == ["calculator"]  # only the selected skill's report
    history = json.loads(run("history", "--skill", "wrong_answers", "--store", tmp_path / "s.db", "--json",
                             cwd=tmp_path).stdout)["evaluations"]
    assert len(history) == 1 and history[0]["completionRate"] == 0.0  # every candidate is recorded
    # nothing selected: exit 1 with --exit-on-fail, and no report written
    gate = run("run", "-q", "wrong", "--skills-dir", skills, "--no-store", "--output-dir", tmp_path / "none",
               "--exit-on-fail", cwd=tmp_path)
    assert gate.exit_code == 1 and "no skill met the selection" in gate.stderr
    assert not list((tmp_path / "none").iterdir())
    nothing = run("run", "-q", "zebra", "--skills-dir", skills, "--no-store", cwd=tmp_path)
    assert nothing.exit_code == 2 and "no skills match" in nothing.stderr


def test_history_newest_first_with_changes(tmp_path: Path) -> None:
    store_with(tmp_path / "s.db",
               ("b1", [report("calc", 0.5, composite=0.6, p95=200, benchmark="b1")]),
               ("b2", [report("calc", 0.9, composite=0.9, benchmark="b2")]),
               ("b1", [report("calc", 0.75, composite=0.7, p95=150, benchmark="b1"), report("other", 1.0)]))
    rows = json.loads(run("history", "--skill", "calc", "--store", tmp_path / "s.db", "--json").stdout)["evaluations"]
    assert [(r["benchmarkId"], r["completionRate"]) for r in rows] == [("b1", 0.75), ("b2", 0.9), ("b1", 0.5)]
    assert rows[0]["completionChange"] == 0.25 and rows[0]["compositeChange"] == 0.1  # against b1 before it
    assert rows[0]["p95Ms"] == 150 and rows[1]["completionChange"] is None
    only = json.loads(run("history", "--skill", "calc", "--benchmark", "b2", "--store", tmp_path / "s.db",
                          "--json").stdout)["evaluations"]
    assert [r["benchmarkId"] for r in only] == ["b2"]
    table = run("history", "--skill", "calc", "--store", tmp_path / "s.db").stdout
    assert "▲ +0.2500" in table and "0.7500" in table
    missing = run("history", "--skill", "calc", "--store", tmp_path / "none.db")
    assert missing.exit_code == 2 and not (tmp_path / "none.db").exists()


def test_select_empty_filter_lists_are_no_filter(tmp_path: Path) -> None:
    """The original's strategies may hold ``adapterTypes: []`` and ``requiredTags: []``: they filter nothing."""
    skills, reports = candidates(tmp_path)
    (tmp_path / "s.json").write_text(json.dumps(
        {"filters": {"adapterTypes": [], "requiredTags": []}, "sortBy": "compositeScore", "order": "desc", "topK": 0}))
    out = run("select", "--from", skills, "--reports", reports, "--strategy", tmp_path / "s.json", cwd=tmp_path)
    assert out.exit_code == 0, out.output
    doc = json.loads(out.stdout)
    assert sorted(s["skillId"] for s in doc["selected"]) == ["accurate", "fast", "flaky", "untagged"]
    assert [e["reason"] for e in doc["excluded"]] == ["no evaluation report"]


def test_run_interrupted_ranks_nothing_and_writes_every_partial_report(tmp_path: Path) -> None:
    import signal
    import sqlite3
    import subprocess
    import sys
    import time

    skills = tmp_path / "skills"
    for name in ("slow_a", "slow_b"):
        folder = make_skill(skills, name, tags=["math"], description="slow echo")
        (folder / "skill.py").write_text(
            "import json, sys, time\nfor line in sys.stdin:\n    r = json.loads(line)\n    time.sleep(0.1)\n"
            "    print(json.dumps({'jsonrpc': '2.0', 'id': r['id'], 'result': {'result': 'ok'}}), flush=True)\n")
        (folder / "adapter.config.json").write_text('{"persistent": true}')
    tasks = tmp_path / "tasks.json"
    expected = {"type": "exact", "value": "ok"}
    tasks.write_text(json.dumps([{"id": f"t{i}", "inputData": {}, "expectedOutput": expected} for i in range(300)]))
    db = tmp_path / "s.db"
    proc = subprocess.Popen([sys.executable, "-m", "eval_skills", "run", "--skills-dir", str(skills), "--tasks",
                             str(tasks), "--concurrency", "1", "--min-completion", "0", "--format", "json",
                             "--output-dir", str(tmp_path / "r"), "--store", str(db)], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    done, deadline = 0, time.time() + 30
    while time.time() < deadline and done < 3:
        time.sleep(0.2)
        try:
            with sqlite3.connect(db) as conn:
                done = conn.execute("select count(*) from task_results").fetchone()[0]
        except sqlite3.Error:
            pass
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "no ranking: the run was interrupted" in out and "selected" not in out, out
    (written,) = [json.loads(f.read_text()) for f in (tmp_path / "r").glob("*.json")]
    assert {r["skillId"] for r in written} == {"slow_a", "slow_b"} and all(r["interrupted"] for r in written)


def test_select_never_ranks_an_interrupted_report(tmp_path: Path) -> None:
    skills, _ = candidates(tmp_path)
    path = tmp_path / "partial.json"
    path.write_text(json.dumps([{**report("fast", 1.0), "interrupted": True}, report("accurate", 0.9)]))
    doc = json.loads(run("select", "--from", skills, "--reports", path, cwd=tmp_path).stdout)
    assert [s["skillId"] for s in doc["selected"]] == ["accurate"]
    assert {"skillId": "fast", "path": str(skills / "fast" / "skill.json"),
            "reason": "its evaluation was interrupted (partial results are not ranked)"} in doc["excluded"]


@pytest.mark.parametrize("columns", ["80", "50"])
def test_find_and_benchmarks_list_fit_the_terminal_and_drop_no_column(tmp_path: Path, columns: str) -> None:
    skills = tmp_path / "a-rather-long-folder-name-for-skills"
    make_skill(skills, "a_skill_with_a_long_identifier", tags=["retrieval", "api", "production-ready"],
               description="web search")
    make_skill(skills, "short", tags=["web"], description="web search")
    width = int(columns)
    found = run("find", "-q", "web", "--skills-dir", skills, "--store", tmp_path / "none.db", cwd=tmp_path,
                env={"COLUMNS": columns})
    listed = run("benchmarks", "list", "--benchmarks-dir", tmp_path, cwd=tmp_path, env={"COLUMNS": columns})
    for out, header, last in ((found, "path", str(skills / "short")), (listed, "source", "G1_query.json")):
        assert out.exit_code == 0, out.output
        lines = out.stdout.splitlines()
        # 80 columns: within them; 50: as narrow as the columns folded allow (wider, never a column lost)
        assert max(map(len, lines)) <= (80 if width == 80 else 75), out.stdout
        row = next(i for i, line in enumerate(lines) if line.rstrip().endswith(header))  # a header may fold
        start = lines[row].index(header)
        column = "".join(line[start:].strip() for line in lines[row + 1:])
        assert last.replace(" ", "") in column.replace(" ", ""), out.stdout  # the last column whole, folded


def test_the_selection_table_fits_80_columns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    from eval_skills.cli.select_cmd import print_selection
    from eval_skills.formats.skill import load_skill
    from eval_skills.tool_skills.selection import Strategy, select_skills

    folder = make_skill(tmp_path, "a_really_long_skill_identifier_for_testing", tags=[])
    skill = load_skill(folder)
    long = {**report(skill.id, 0.9, p95=12345.6, tokens=123456), "skillVersion": "1.0.0-beta.1+build"}
    monkeypatch.delenv("COLUMNS", raising=False)  # piped: 80 columns
    print_selection(select_skills([skill], {skill.id: long}, Strategy()))
    shown = capsys.readouterr().out
    assert max(map(len, shown.splitlines())) <= 80, shown
    assert "12345.6" in shown and "123,456" in shown  # numbers are never cut
