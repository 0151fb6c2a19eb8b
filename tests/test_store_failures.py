"""The store failing under a run: the run stops cleanly, what finished is reported, nothing stays `running`."""

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from eval_skills.errors import HarnessError
from eval_skills.results import TaskResult
from eval_skills.store import Store
from eval_skills.store.writer import ResultWriter

HERE = Path(__file__).parent


def test_any_failure_in_the_writer_thread_is_reported_not_lost(tmp_path: Path) -> None:
    with Store.open(tmp_path / "s.db") as store:
        evaluation = store.begin_evaluation(benchmark_id="b", benchmark_version="1", config={}, tool_version="t")
        seen: list[HarnessError] = []
        done = threading.Event()

        def on_error(exc: HarnessError) -> None:
            seen.append(exc)
            done.set()

        writer = ResultWriter(store, evaluation, on_error=on_error)
        writer.put(TaskResult("ok", "s", 1, "pass", 1.0, 1.0))
        # a value SQLite cannot encode (a lone surrogate; the adapters never let one through)
        writer.put(TaskResult("odd", "s", 1, "error", 0.0, 1.0, error="\ud800"))
        assert done.wait(10)
        with pytest.raises(HarnessError) as info:
            writer.close()
        assert info.value is seen[0] and len(seen) == 1
        assert str(info.value).startswith(f"results store {tmp_path / 's.db'}: saving task results failed: "
                                          "UnicodeEncodeError")
        with pytest.raises(HarnessError):
            writer.put(TaskResult("later", "s", 1, "pass", 1.0, 1.0))


HARNESS = r"""
import asyncio, json, subprocess, sys
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from eval_skills.tool_skills.evaluation import RunFailed, evaluate
from eval_skills.formats.benchmark import Benchmark
from eval_skills.formats.skill import load_skill
from eval_skills.tool_skills.plan import build_plan
from eval_skills.tool_skills.runner import RunSettings

tmp = Path(sys.argv[2])
skill = load_skill(tmp / "chaos")
benchmark = Benchmark.model_validate({"id": "b", "tasks": [
    {"id": f"t{i}", "inputData": {"do": "slow", "seconds": 0.05}, "expectedOutput": {"type": "contains",
     "keywords": ["slow"]}} for i in range(60)]})
plan = build_plan([skill], benchmark, runs=1, default_evaluator="contains")
locker = None

def on_result(result):
    global locker
    if locker is None:  # another process takes the store's write lock and keeps it
        locker = subprocess.Popen([sys.executable, "-c", LOCK, str(tmp / "s.db")], stdout=subprocess.PIPE, text=True)
        assert locker.stdout.readline().strip() == "locked"

LOCK = '''
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
time.sleep(4)
'''

async def main():
    try:
        await evaluate(plan, RunSettings(concurrency=1), store_path=tmp / "s.db", output_dir=tmp / "r",
                       formats=["json"], on_result=on_result, busy_timeout_ms=300)
    except RunFailed as exc:
        print(json.dumps({"error": str(exc), "files": [str(p) for p in exc.outcome.report_files],
                          "results": len(exc.outcome.results)}))
    finally:
        plan.close()

asyncio.run(main())
locker.wait()
"""


def test_a_store_locked_by_another_process_stops_the_run_and_keeps_what_finished(tmp_path: Path) -> None:
    from test_cli_eval import chaos_skill

    chaos_skill(tmp_path, True)
    out = subprocess.run([sys.executable, "-c", HARNESS, str(HERE), str(tmp_path)], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    failed = json.loads(out.stdout)
    assert "\n" not in failed["error"]
    assert failed["error"].startswith(f"results store {tmp_path / 's.db'}: saving task results failed: "
                                      "database is locked (another process held the store for over 0.3 s); "
                                      f"the run stopped: the {failed['results']} finished tasks are in ")
    assert 1 <= failed["results"] < 60  # stopped early, not after all 60 tasks
    (report,) = json.loads(Path(failed["files"][0]).read_text())
    assert len(report["taskResults"]) == failed["results"]
    with Store.open(tmp_path / "s.db") as store:
        (evaluation,) = store.list_evaluations()
        assert evaluation["status"] == "failed"  # never `running` forever, though it could not write its end
        assert evaluation["error"] == "the process running it ended before finishing it"
        assert 1 <= evaluation["result_count"] < failed["results"] + 1


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_while_another_process_holds_the_store_stops_at_once(tmp_path: Path, sig, code) -> None:
    """Waiting for the store's lock at the start of a run (up to 10 s) blocked the event loop: Ctrl-C was
    seen only when the wait ended, as exit 2 "database is locked". Now it is exit 130 (143) at once, and the
    store records nothing."""
    import os

    from test_cli_eval import CALCULATOR

    with Store.open(tmp_path / "s.db"):
        pass
    lock = "import sqlite3, sys, time\ndb = sqlite3.connect(sys.argv[1], isolation_level=None)\n" \
           "db.execute('BEGIN EXCLUSIVE')\nprint('locked', flush=True)\ntime.sleep(60)\n"
    locker = subprocess.Popen([sys.executable, "-c", lock, str(tmp_path / "s.db")], stdout=subprocess.PIPE, text=True)
    try:
        assert locker.stdout is not None and locker.stdout.readline().strip() == "locked"
        run = subprocess.Popen([sys.executable, "-m", "eval_skills", "eval", "--skills", str(CALCULATOR),
                                "--store", str(tmp_path / "s.db"), "--output-dir", str(tmp_path / "r"), "-v"],
                               cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "PYTHONPATH": str(HERE.parent / "src")})
        assert run.stderr is not None
        for line in run.stderr:  # the plan is logged just before the run asks for the store
            if "items:" in line:
                break
        time.sleep(1.0)
        signalled = time.monotonic()
        run.send_signal(sig)
        _, err = run.communicate(timeout=30)
        assert run.returncode == code, err
        assert time.monotonic() - signalled < 4  # not the 10 s busy timeout
        assert "database is locked" not in err
    finally:
        locker.kill()
        locker.wait()
    with Store.open(tmp_path / "s.db") as store:
        assert store.list_evaluations() == []
    assert not list((tmp_path / "r").glob("*"))


@pytest.fixture
def read_only_folder(tmp_path: Path):
    """A folder holding a store, then made read-only: a read-only tmpfs when we may mount one, else a folder
    without write permission (which root ignores, so then there is nothing to test)."""
    folder = tmp_path / "ro"
    folder.mkdir()
    mounted = os.geteuid() == 0 and subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(folder)],
                                                   capture_output=True).returncode == 0
    if not mounted and os.geteuid() == 0:
        pytest.skip("root without mount: no folder it cannot write")
    Store.open(folder / "s.db").close()
    if mounted:
        subprocess.run(["mount", "-o", "remount,ro", str(folder)], check=True)
    else:
        folder.chmod(0o555)
        (folder / "s.db").chmod(0o444)
    try:
        yield folder
    finally:
        if mounted:
            subprocess.run(["umount", str(folder)], check=True)
        else:
            folder.chmod(0o755)


def test_a_store_that_cannot_be_written_is_one_line_before_anything_runs(tmp_path: Path, read_only_folder) -> None:
    from test_cli_eval import chaos_skill, chaos_tasks, cli

    skill, tasks = chaos_skill(tmp_path, False), chaos_tasks(tmp_path, ["ok"])
    why = (f"{read_only_folder} is on a read-only file system" if os.statvfs(read_only_folder).f_flag & os.ST_RDONLY
           else None)
    for store, says in [(read_only_folder / "s.db", "cannot write to it"),
                        (read_only_folder / "new" / "s.db", "cannot create it")]:
        for dry in ([], ["--dry-run"]):
            out = cli("eval", "--skills", skill, "--tasks", tasks, "--store", store, "--output-dir", tmp_path / "r",
                      *dry, cwd=tmp_path)
            assert out.returncode == 2, out.stderr
            line = f"error: results store {store}: {says} ({why or f'{read_only_folder} is not writable'})"
            assert out.stderr.strip() == line, out.stderr
            assert not (tmp_path / "r").exists()


def test_paired_rows_are_committed_in_groups_in_order_and_a_failure_stops_the_writer(tmp_path: Path) -> None:
    from eval_skills.store.paired import PairedStore
    from eval_skills.store.writer import GroupWriter

    with Store.open(tmp_path / "s.db") as store:
        rows = PairedStore(store)
        iteration = rows.begin_iteration(workspace=str(tmp_path), iteration=1, skill_name="s", config={},
                                         tool_version="t")
        writer = GroupWriter(store, lambda batch: rows.add_rows(iteration, batch), what="saving paired runs")
        for n in range(1, 41):  # each grade right behind its run: in one batch or the next, never before it
            run = {"run_id": f"r{n}", "eval_id": 1, "arm": "with_skill", "run_number": n, "status": "ok",
                   "response": f"answer {n}", "duration_s": 0.1, "usage": {"total_tokens": n}}
            writer.put(("add_run", (run,), {}))
            writer.put(("add_grade", (f"r{n}", {"passed": n % 2, "failed": 1 - n % 2, "total": 1,
                                                "pass_rate": float(n % 2)}, [("checks", [{"n": n}], None)]), {}))
        writer.put(("add_verdict", ("eval-1-run-1", "compare", {"winner": "A"}), {"judge": {"backend": "command"}}))
        writer.close()
        assert writer.written == 81
        found = rows.runs(iteration)
        assert [r["run_id"] for r in sorted(found, key=lambda r: r["run_number"])] == [f"r{n}" for n in range(1, 41)]
        assert all(r["pass_rate"] == float(int(r["run_id"][1:]) % 2) for r in found)
        verdicts = rows.verdicts(iteration)
        assert [v["kind"] for v in verdicts] == ["checks"] * 40 + ["compare"]
        assert verdicts[-1]["verdict"] == {"winner": "A"} and verdicts[-1]["backend"] == "command"

        seen: list[HarnessError] = []
        failing = GroupWriter(store, lambda batch: rows.add_rows(iteration, batch), what="saving paired runs",
                              on_error=seen.append)
        failing.put(("add_run", ({"run_id": "odd", "eval_id": 1, "arm": "a", "run_number": 1,
                                  "status": "error", "error": "\ud800"},), {}))  # SQLite cannot encode it
        with pytest.raises(HarnessError) as info:
            failing.close()
        assert info.value is seen[0]
        assert str(info.value).startswith(f"results store {tmp_path / 's.db'}: saving paired runs failed: "
                                          "UnicodeEncodeError")
        assert len(rows.runs(iteration)) == 40  # the failed batch left nothing half written


def test_a_writer_lingers_as_long_as_it_is_told_for_the_rest_of_a_batch(tmp_path: Path) -> None:
    """Rows that come 20 ms apart share a commit when the writer lingers half a second (paired rows come a few
    per run), and every one is committed by close."""
    from eval_skills.store.writer import GroupWriter

    batches: list[list[int]] = []
    with Store.open(tmp_path / "s.db") as store:
        writer = GroupWriter(store, batches.append, linger=0.5)
        for n in range(3):
            writer.put(n)
            time.sleep(0.02)
        writer.close()
    assert batches == [[0, 1, 2]] and writer.written == 3
