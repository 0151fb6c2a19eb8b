"""The SQLite results store: migrations, schema, durability, concurrency, errors. Real files, no mocks."""

from __future__ import annotations

import datetime as dt
import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from eval_skills.errors import HarnessError, InputError
from eval_skills.results import TaskResult, Usage
from eval_skills.store import MIGRATIONS, OUTPUT_LIMIT, TRUNCATED_KEY, Store, migrate


def result(task: str = "t1", skill: str = "skill-a", run: int = 1, **kw: object) -> TaskResult:
    fields: dict[str, object] = dict(task_id=task, skill_id=skill, run_id=run, status="pass", score=1.0,
                                     latency_ms=12.3456, output={"result": "42"}, scorer_type="exact",
                                     reason="matched")
    fields.update(kw)
    return TaskResult(**fields)  # type: ignore[arg-type]


def begin(store: Store, benchmark: str = "bench") -> str:
    return store.begin_evaluation(benchmark_id=benchmark, benchmark_version="1.0",
                                  config={"concurrency": 4, "timeoutMs": 1000}, tool_version="0.1.0")


def report(skill: str, completion: float, composite: float = 0.5) -> dict[str, object]:
    return {"skillId": skill, "skillVersion": "1.2.0", "skillName": skill, "benchmarkId": "bench",
            "summary": {"completionRate": completion, "compositeScore": composite},
            "taskResults": [result(skill=skill).to_json()]}


def run_python(code: str, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args], capture_output=True,
                          text=True, timeout=timeout)


# ---- migrations and schema ----------------------------------------------------------------------


def test_migrations_are_numbered_in_order() -> None:
    names = [fn.__name__ for fn in MIGRATIONS]
    assert names[0] == "m001_initial"
    numbers = [int(name[1:4]) for name in names]
    assert numbers == sorted(set(numbers))  # applied in the order of their numbers, each number once
    assert all(name[4] == "_" for name in names)


NEWEST = int(MIGRATIONS[-1].__name__[1:4])


def test_migrations_recorded_and_idempotent(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "folder" / "results.db"
    with Store.open(path) as store:
        assert store.schema_version() == NEWEST
    assert path.exists()
    db = sqlite3.connect(path)
    rows = db.execute("SELECT name, applied_at FROM _migrations ORDER BY rowid").fetchall()
    assert [name for name, _ in rows] == [fn.__name__ for fn in MIGRATIONS]
    for _, applied_at in rows:
        assert dt.datetime.fromisoformat(applied_at).tzinfo is not None
    assert migrate(db) == []  # applying again does nothing
    db.close()
    with Store.open(path) as store:  # reopening neither fails nor re-applies
        assert store.schema_version() == NEWEST
    db = sqlite3.connect(path)
    assert db.execute("SELECT COUNT(*) FROM _migrations").fetchone()[0] == len(MIGRATIONS)
    db.close()


def test_pragmas(tmp_path: Path) -> None:
    with Store.open(tmp_path / "s.db") as store:
        db = store._db
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert db.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
        assert db.execute("PRAGMA foreign_keys").fetchone()[0] == 1
        assert db.execute("PRAGMA busy_timeout").fetchone()[0] >= 5000


def test_final_schema(tmp_path: Path) -> None:
    with Store.open(tmp_path / "s.db"):
        pass
    db = sqlite3.connect(tmp_path / "s.db")
    tables = [r[0] for r in db.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")]
    schema = {t: [(c[1], c[2], c[3], c[5]) for c in db.execute(f"PRAGMA table_info({t})")] for t in tables}
    indexes = sorted(r[0] for r in db.execute(
        "SELECT name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_%'"))
    db.close()
    # (name, type, notnull, primary-key position)
    assert schema == {
        "_migrations": [("name", "TEXT", 0, 1), ("applied_at", "TEXT", 1, 0)],
        "evaluations": [
            ("id", "TEXT", 0, 1), ("started_at", "TEXT", 1, 0), ("finished_at", "TEXT", 0, 0),
            ("status", "TEXT", 1, 0), ("benchmark_id", "TEXT", 0, 0), ("benchmark_version", "TEXT", 0, 0),
            ("config_json", "TEXT", 1, 0), ("tool_version", "TEXT", 0, 0), ("error", "TEXT", 0, 0),
            ("pid", "INTEGER", 0, 0), ("host", "TEXT", 0, 0)],
        "judge_cache": [("key", "TEXT", 0, 1), ("verdict_json", "TEXT", 1, 0), ("created_at", "TEXT", 1, 0)],
        "skill_reports": [
            ("evaluation_id", "TEXT", 1, 1), ("skill_id", "TEXT", 1, 2), ("skill_version", "TEXT", 0, 0),
            ("report_json", "TEXT", 1, 0), ("completion_rate", "REAL", 0, 0),
            ("composite_score", "REAL", 0, 0)],
        "task_results": [
            ("id", "INTEGER", 0, 1), ("evaluation_id", "TEXT", 1, 0), ("skill_id", "TEXT", 1, 0),
            ("task_id", "TEXT", 1, 0), ("run_id", "INTEGER", 1, 0), ("status", "TEXT", 1, 0),
            ("score", "REAL", 0, 0), ("latency_ms", "REAL", 0, 0), ("error", "TEXT", 0, 0),
            ("scorer_type", "TEXT", 0, 0), ("reason", "TEXT", 0, 0), ("output_json", "TEXT", 0, 0),
            ("usage_json", "TEXT", 0, 0), ("attempts", "INTEGER", 0, 0), ("extra_json", "TEXT", 0, 0),
            ("finished_at", "TEXT", 1, 0)],
        "paired_iterations": [
            ("id", "TEXT", 0, 1), ("workspace", "TEXT", 1, 0), ("iteration", "INTEGER", 1, 0),
            ("skill_name", "TEXT", 1, 0), ("started_at", "TEXT", 1, 0), ("finished_at", "TEXT", 0, 0),
            ("status", "TEXT", 1, 0), ("config_json", "TEXT", 1, 0), ("summary_json", "TEXT", 0, 0),
            ("tool_version", "TEXT", 0, 0)],
        "paired_runs": [
            ("iteration_id", "TEXT", 1, 1), ("run_id", "TEXT", 1, 2), ("eval_id", "TEXT", 1, 0),
            ("arm", "TEXT", 1, 0), ("run_number", "INTEGER", 1, 0), ("status", "TEXT", 1, 0),
            ("error", "TEXT", 0, 0), ("response", "TEXT", 0, 0), ("duration_s", "REAL", 0, 0),
            ("total_tokens", "INTEGER", 0, 0), ("token_measurement", "TEXT", 0, 0), ("usage_json", "TEXT", 0, 0),
            ("tool_calls", "INTEGER", 0, 0), ("skills_invoked_json", "TEXT", 0, 0), ("passed", "INTEGER", 0, 0),
            ("failed", "INTEGER", 0, 0), ("total", "INTEGER", 0, 0), ("ungraded", "INTEGER", 0, 0),
            ("pass_rate", "REAL", 0, 0), ("started_at", "TEXT", 0, 0), ("finished_at", "TEXT", 1, 0)],
        "paired_verdicts": [
            ("id", "INTEGER", 0, 1), ("iteration_id", "TEXT", 1, 0), ("subject", "TEXT", 1, 0),
            ("kind", "TEXT", 1, 0), ("backend", "TEXT", 0, 0), ("model", "TEXT", 0, 0),
            ("prompt_version", "TEXT", 0, 0), ("verdict_json", "TEXT", 0, 0), ("error", "TEXT", 0, 0),
            ("attempts", "INTEGER", 0, 0), ("cached", "INTEGER", 0, 0), ("duration_s", "REAL", 0, 0),
            ("finished_at", "TEXT", 1, 0)],
        "routing_tests": [
            ("id", "TEXT", 0, 1), ("started_at", "TEXT", 1, 0), ("finished_at", "TEXT", 0, 0),
            ("status", "TEXT", 1, 0), ("skill_name", "TEXT", 1, 0), ("agent", "TEXT", 0, 0),
            ("model", "TEXT", 0, 0), ("config_json", "TEXT", 1, 0), ("metrics_json", "TEXT", 0, 0),
            ("f1", "REAL", 0, 0), ("accuracy", "REAL", 0, 0), ("results_path", "TEXT", 0, 0),
            ("tool_version", "TEXT", 0, 0)],
        "routing_runs": [
            ("id", "INTEGER", 0, 1), ("routing_id", "TEXT", 1, 0), ("query_index", "INTEGER", 1, 0),
            ("query", "TEXT", 1, 0), ("should_trigger", "INTEGER", 1, 0), ("invocation_type", "TEXT", 0, 0),
            ("run_number", "INTEGER", 1, 0), ("status", "TEXT", 1, 0), ("triggered", "INTEGER", 0, 0),
            ("skills_invoked_json", "TEXT", 1, 0), ("error", "TEXT", 0, 0), ("duration_s", "REAL", 0, 0),
            ("usage_json", "TEXT", 0, 0), ("finished_at", "TEXT", 1, 0)],
    }
    assert indexes == ["evaluations_started_at", "paired_runs_eval", "routing_runs_test", "routing_tests_skill",
                       "skill_reports_skill", "task_results_evaluation", "task_results_skill_task"]


# ---- writing and reading ------------------------------------------------------------------------


def test_round_trip(tmp_path: Path) -> None:
    with Store.open(tmp_path / "s.db") as store:
        ev = begin(store)
        first = result("t1", usage=Usage(10, 5, 15))
        second = result("t2", status="fail", score=0.0, output=None, error=None, reason="expected 42")
        store.add_result(ev, first)
        store.add_result(ev, second)
        rows = store.get_results(ev)
        assert [r["taskId"] for r in rows] == ["t1", "t2"]
        for row, original in zip(rows, (first, second), strict=True):
            finished = row.pop("finishedAt")
            assert finished.endswith("Z")
            expected = original.to_json()
            assert row.pop("latencyMs") == pytest.approx(expected.pop("latencyMs"), abs=1e-3)
            assert row == {k: v for k, v in expected.items() if k != "latencyMs"}

        listed = store.list_evaluations()
        assert len(listed) == 1
        item = listed[0]
        assert item["id"] == ev and item["status"] == "running" and item["finished_at"] is None
        assert item["benchmark_id"] == "bench" and item["benchmark_version"] == "1.0"
        assert item["config"] == {"concurrency": 4, "timeoutMs": 1000}
        assert item["tool_version"] == "0.1.0"
        assert (item["result_count"], item["passed"], item["skills"]) == (2, 1, ["skill-a"])

        store.finish_evaluation(ev, status="finished", reports=[report("skill-a", 0.5)])
        got = store.get_evaluation(ev)
        assert got is not None and got["status"] == "finished" and got["finished_at"]
        assert store.get_evaluation("0" * 32) is None

        reports = store.get_reports(ev)
        assert [r["skillId"] for r in reports] == ["skill-a"]
        assert [t["taskId"] for t in reports[0]["taskResults"]] == ["t1", "t2"]
        raw = store._db.execute("SELECT report_json FROM skill_reports").fetchone()[0]
        assert "taskResults" not in json.loads(raw)  # results live in task_results, once


def test_outputs_that_are_not_json_and_huge_outputs(tmp_path: Path) -> None:
    class Odd:
        def __str__(self) -> str:
            return "odd-object"

    loop: list[object] = []
    loop.append(loop)
    with Store.open(tmp_path / "s.db") as store:
        ev = begin(store)
        store.add_result(ev, result("odd", output={"when": dt.date(2026, 1, 2), "what": Odd()}))
        store.add_result(ev, result("loop", output=loop))
        store.add_result(ev, result("tuple-keys", output={(1, 2): "x"}))
        store.add_result(ev, result("huge", output="x" * (50 * 1024 * 1024), error="e" * 1_000_000))
        rows = {r["taskId"]: r for r in store.get_results(ev)}
        assert rows["odd"]["output"] == {"when": "2026-01-02", "what": "odd-object"}
        assert rows["loop"]["output"] == "[[...]]"
        assert rows["tuple-keys"]["output"] == "{(1, 2): 'x'}"
        huge = rows["huge"]["output"]
        assert huge[TRUNCATED_KEY] is True and huge["originalChars"] == 50 * 1024 * 1024 + 2
        assert len(huge["head"]) == OUTPUT_LIMIT
        assert len(rows["huge"]["error"]) < 200_000 and "more characters not stored" in rows["huge"]["error"]
        stored = store._db.execute("SELECT MAX(LENGTH(output_json)) FROM task_results").fetchone()[0]
        assert stored < 1.1 * OUTPUT_LIMIT
    assert (tmp_path / "s.db").stat().st_size < 5 * 1024 * 1024


def test_secrets_in_config_are_not_stored(tmp_path: Path) -> None:
    config = {"concurrency": 2, "maxTokens": 100, "apiKey": "sk-live-123", "apiKeyEnv": "MY_KEY",
              "judge": {"headers": {"Authorization": "Bearer abc"}, "token": "t0k"}}
    with Store.open(tmp_path / "s.db") as store:
        store.begin_evaluation(benchmark_id="b", benchmark_version=None, config=config, tool_version="x")
        assert store.list_evaluations()[0]["config"] == {
            "concurrency": 2, "maxTokens": 100, "apiKey": "[redacted]", "apiKeyEnv": "MY_KEY",
            "judge": {"headers": {"Authorization": "[redacted]"}, "token": "[redacted]"}}
    raw = b"".join(p.read_bytes() for p in tmp_path.iterdir())  # the db, and any -wal left behind
    assert b"sk-live-123" not in raw and b"Bearer abc" not in raw


def test_a_batch_of_any_size_is_written_whole_and_in_order(tmp_path: Path) -> None:
    # a batch is cut into INSERTs of several rows each: every size must come back row for row
    with Store.open(tmp_path / "s.db") as store:
        ev = begin(store)
        sizes = [1, 3, 4, 5, 17, 64, 65, 87, 150]
        made = [[result(f"b{size}-{i}", run=i % 3 + 1, score=i / 7, latency_ms=None if i % 5 else i + 0.5,
                        output={"result": f"é{i}"}, status="pass" if i % 2 else "fail", attempts=i % 4 + 1,
                        error=None if i % 2 else f"e{i}", usage=Usage(i, 1, i + 1) if i % 3 == 0 else None)
                 for i in range(size)] for size in sizes]
        for batch in made:
            store.add_results(ev, batch)
        stored = store.get_results(ev)
        expected = [item for batch in made for item in batch]
        assert len(stored) == sum(sizes) == len(expected)
        for row, want in zip(stored, expected, strict=True):
            assert row.pop("finishedAt").endswith("Z")
            assert row == want.to_json()


def test_batched_add_results(tmp_path: Path) -> None:
    with Store.open(tmp_path / "s.db") as store:
        ev = begin(store)
        store.add_results(ev, [result(f"t{i}") for i in range(10)])
        assert len(store.get_results(ev)) == 10
        with pytest.raises(HarnessError, match="no evaluation"):
            store.add_results("nope", [result("t1")])
        with pytest.raises(HarnessError, match="no evaluation"):
            store.add_result("nope", result("t1"))
        with pytest.raises(HarnessError, match="no evaluation"):
            store.finish_evaluation("nope", status="finished", reports=[])
        with pytest.raises(ValueError):
            store.finish_evaluation(ev, status="running", reports=[])
        assert len(store.get_results(ev)) == 10


def test_history_and_listing_newest_first(tmp_path: Path) -> None:
    with Store.open(tmp_path / "s.db") as store:
        ids = []
        for rate, bench in ((0.5, "bench"), (0.7, "other"), (0.9, "bench")):
            ev = begin(store, bench)
            store.add_result(ev, result())
            store.finish_evaluation(ev, status="finished", reports=[report("skill-a", rate, rate / 2),
                                                                     report("skill-b", 1 - rate)])
            ids.append(ev)
        unfinished = begin(store)
        assert [e["id"] for e in store.list_evaluations()] == [unfinished, *reversed(ids)]
        assert [e["id"] for e in store.list_evaluations(limit=2)] == [unfinished, ids[2]]

        history = store.skill_history("skill-a")
        assert [h["evaluation_id"] for h in history] == list(reversed(ids))
        assert [h["completion_rate"] for h in history] == [0.9, 0.7, 0.5]
        assert history[0]["composite_score"] == pytest.approx(0.45)
        assert history[0]["skill_version"] == "1.2.0" and history[0]["status"] == "finished"
        same_benchmark = store.skill_history("skill-a", benchmark_id="bench")
        assert [h["completion_rate"] for h in same_benchmark] == [0.9, 0.5]
        assert len(store.skill_history("skill-a", limit=1)) == 1
        assert store.skill_history("nobody") == []

        assert store.resolve_evaluation("latest") == unfinished
        assert store.resolve_evaluation(ids[0][:12].upper()) == ids[0]
        with pytest.raises(InputError, match="no evaluation"):
            store.resolve_evaluation("0" * 32)
        for bad in ("drop table", "", "%"):
            with pytest.raises(InputError, match="not an evaluation id"):
                store.resolve_evaluation(bad)
        for twin in ("abcd1", "abcd2"):
            store._db.execute("INSERT INTO evaluations (id, started_at, status)"
                              " VALUES (?, '2020', 'running')", (twin + "0" * 27,))
        with pytest.raises(InputError, match="more than one"):
            store.resolve_evaluation("abcd")
        assert store.resolve_evaluation("abcd2") == "abcd2" + "0" * 27


# ---- durability and concurrency -----------------------------------------------------------------

KILLED_WRITER = """
    import os, signal, sys
    from pathlib import Path
    from eval_skills.results import TaskResult
    from eval_skills.store import Store

    store = Store.open(Path(sys.argv[1]))
    ev = store.begin_evaluation(benchmark_id="b", benchmark_version="1", config={}, tool_version="0")
    print(ev, flush=True)
    for i in range(50):
        store.add_result(ev, TaskResult(task_id=f"t{i}", skill_id="s", run_id=1, status="pass",
                                        score=1.0, latency_ms=1.0, output={"i": i}))
    os.kill(os.getpid(), signal.SIGKILL)
"""


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_results_survive_a_killed_process(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    proc = run_python(KILLED_WRITER, str(path))
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    ev = proc.stdout.strip()
    with Store.open(path) as store:
        rows = store.get_results(ev)
        assert [r["output"]["i"] for r in rows] == list(range(50))
        # its process is gone: it will never finish, so it reads as failed, saying why
        evaluation = store.get_evaluation(ev)
        assert evaluation is not None and evaluation["status"] == "failed"
        assert evaluation["error"] == "the process running it ended before finishing it"


CONCURRENT_WRITER = """
    import sys, time
    from pathlib import Path
    from eval_skills.results import TaskResult
    from eval_skills.store import Store

    path, go, name = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
    while not go.exists():
        time.sleep(0.001)
    with Store.open(path) as store:  # a new file: every process races to migrate it
        ev = store.begin_evaluation(benchmark_id=name, benchmark_version="1", config={}, tool_version="0")
        for i in range(200):
            store.add_result(ev, TaskResult(task_id=f"t{i}", skill_id=name, run_id=1, status="pass",
                                            score=1.0, latency_ms=1.0))
        store.finish_evaluation(ev, status="finished",
                                reports=[{"skillId": name, "summary": {"completionRate": 1.0}}])
"""


def test_concurrent_writer_processes_all_land(tmp_path: Path) -> None:
    path, go = tmp_path / "new" / "s.db", tmp_path / "go"
    names = [f"writer{i}" for i in range(4)]
    procs = [subprocess.Popen([sys.executable, "-c", textwrap.dedent(CONCURRENT_WRITER), str(path), str(go),
                               name], stderr=subprocess.PIPE, text=True) for name in names]
    go.touch()
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    with Store.open(path) as store:
        evaluations = store.list_evaluations()
        assert sorted(e["benchmark_id"] for e in evaluations) == names
        for e in evaluations:
            assert e["status"] == "finished" and e["result_count"] == 200
            assert e["skills"] == [e["benchmark_id"]]
            assert store.skill_history(e["benchmark_id"])[0]["completion_rate"] == 1.0
        assert store._db.execute("SELECT COUNT(*) FROM _migrations").fetchone()[0] == len(MIGRATIONS)


def test_threads_sharing_one_store_and_threads_with_their_own(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    errors: list[BaseException] = []
    shared = Store.open(path)
    ev = begin(shared)

    def write(store: Store, skill: str, own: bool) -> None:
        try:
            for i in range(100):
                store.add_result(ev, result(f"t{i}", skill=skill))
            if own:
                store.close()
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(shared, f"shared{i}", False)) for i in range(3)]
    threads += [threading.Thread(target=write, args=(Store.open(path), f"own{i}", True)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(shared.get_results(ev)) == 500
    shared.close()


# ---- errors ---------------------------------------------------------------------------------------


def one_line_naming(exc: pytest.ExceptionInfo[HarnessError], path: Path) -> None:
    message = str(exc.value)
    assert "\n" not in message and str(path) in message


def test_not_a_database(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    path.write_bytes(b"this is not a database, it is a text file\n" * 200)
    with pytest.raises(HarnessError) as exc:
        Store.open(path)
    one_line_naming(exc, path)
    assert "not a database" in str(exc.value)


def test_folder_in_the_way_and_file_in_the_way(tmp_path: Path) -> None:
    folder = tmp_path / "a-folder"
    folder.mkdir()
    with pytest.raises(HarnessError) as exc:
        Store.open(folder)
    one_line_naming(exc, folder)
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    with pytest.raises(HarnessError) as exc:
        Store.open(blocker / "s.db")
    one_line_naming(exc, blocker / "s.db")


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root can write anywhere")
def test_unwritable_folder(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        with pytest.raises(HarnessError) as exc:
            Store.open(locked / "s.db")
        one_line_naming(exc, locked / "s.db")
    finally:
        locked.chmod(0o700)


def test_closed_store_is_a_harness_error(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "s.db")
    ev = begin(store)
    store.close()
    with pytest.raises(HarnessError, match="s.db"):
        store.add_result(ev, result())
