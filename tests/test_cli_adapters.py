"""The MCP, custom and LangChain examples end to end through ``python -m eval_skills eval``."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


def cli(*args: object, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "eval_skills", *map(str, args)], cwd=cwd, capture_output=True,
                          text=True, timeout=timeout, env=os.environ.copy())


@pytest.mark.parametrize(("skill", "tasks"), [("units", 8), ("slugify", 6), ("roman", 6)])
def test_each_example_passes_its_own_benchmark(tmp_path, skill, tasks):
    if skill == "roman":
        pytest.importorskip("langchain_core")
    out = cli("eval", "--skills", EXAMPLES / "skills" / skill, "--benchmark", EXAMPLES / "benchmarks" / f"{skill}.json",
              "--json", "--store", tmp_path / "s.db", "--output-dir", tmp_path / "r", "--exit-on-fail",
              "--min-completion", "1", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    [report] = json.loads(out.stdout)["reports"]
    assert report["skillId"] == skill and report["summary"]["completionRate"] == 1.0
    assert [r["status"] for r in report["taskResults"]] == ["pass"] * tasks
    with sqlite3.connect(tmp_path / "s.db") as db:
        assert db.execute("select count(*) from task_results where status = 'pass'").fetchone()[0] == tasks


def test_dry_run_of_the_mcp_example_lists_its_tools_and_writes_nothing(tmp_path):
    out = cli("eval", "--skills", EXAMPLES / "skills" / "units", "--benchmark", EXAMPLES / "benchmarks" / "units.json",
              "--dry-run", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert "  MCP server python3 server.py (protocol 2026-07-28) has 1 tool: convert" in lines
    assert "  tool 'convert' found: Convert a value between units of length, mass or temperature." in lines
    assert "  the inputData of all 8 tasks fit its input schema" in lines
    assert list(tmp_path.iterdir()) == []


def test_a_custom_skill_that_prints_and_never_returns_keeps_json_pure_and_the_run_ends(tmp_path):
    folder = tmp_path / "noisy"
    folder.mkdir()
    (folder / "noisy.py").write_text(
        "import threading, time\nprint('importing noisy')\n"
        "def run(data):\n"
        "    print('working on', data)\n"
        "    threading.Thread(target=lambda: print('from a thread of its own')).start()\n"
        "    if data.get('hang'):\n"
        "        time.sleep(3600)\n"
        "    return {'result': data['text']}\n")
    (folder / "skill.json").write_text(json.dumps({"id": "noisy", "name": "N", "version": "1.0.0",
                                                   "adapterType": "custom", "entrypoint": "noisy:run"}))
    (tmp_path / "tasks.json").write_text(json.dumps([
        {"id": "ok", "inputData": {"text": "a"}, "expectedOutput": {"value": "a"}},
        {"id": "hang", "inputData": {"text": "b", "hang": True}, "expectedOutput": {"value": "b"}}]))
    began = time.perf_counter()
    out = cli("eval", "--skills", folder, "--tasks", tmp_path / "tasks.json", "--timeout", "300", "--json",
              "--no-store", "--output-dir", tmp_path / "r", cwd=tmp_path, timeout=60)
    assert out.returncode == 0, out.stderr
    assert time.perf_counter() - began < 30
    [report] = json.loads(out.stdout)["reports"]  # nothing the skill printed is on stdout
    statuses = {r["taskId"]: (r["status"], r["error"]) for r in report["taskResults"]}
    assert statuses["ok"] == ("pass", None)
    assert statuses["hang"][0] == "timeout"
    assert statuses["hang"][1].startswith("did not return within 0.3s; printed: working on {'text': 'b', 'hang': True}")
    assert "importing noisy" not in out.stderr and "working on" not in out.stderr


def test_a_custom_module_that_fails_to_import_is_one_line_and_writes_nothing(tmp_path):
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "broken.py").write_text("import json\nraise ImportError('needs the model weights in ./weights')\n")
    (folder / "skill.json").write_text(json.dumps({"id": "broken", "name": "B", "version": "1.0.0",
                                                   "adapterType": "custom", "entrypoint": "broken:run"}))
    for dry_run in ([], ["--dry-run"]):
        out = cli("eval", "--skills", folder, *dry_run, "--output-dir", tmp_path / "r", "--store", tmp_path / "s.db",
                  cwd=tmp_path)
        assert out.returncode == 2
        assert out.stderr.splitlines() == [
            f"error: {folder / 'skill.json'}: $.entrypoint: module 'broken' failed to import: ImportError: needs the "
            "model weights in ./weights (at broken.py:2)"]
        assert not (tmp_path / "r").exists() and not (tmp_path / "s.db").exists()
