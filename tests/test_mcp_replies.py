"""What an MCP server sends is untrusted, as any skill's reply: a hand-written server (tests/skills/raw_mcp_server.py)
sends lone surrogates, bytes that are not UTF-8, nesting 100,000 deep, NaN, or exits while a detached descendant
holds its stdout. Each is that one task's exact result, read one way everywhere; the other tasks run."""

import json
import sys
import time
from pathlib import Path

from procs import wait_gone
from test_cli_eval import cli
from test_hardening_cli import tasks_file

RAW_SERVER = Path(__file__).parent / "skills" / "raw_mcp_server.py"


def raw_skill(tmp_path: Path) -> Path:
    folder = tmp_path / "raw"
    folder.mkdir()
    (folder / "skill.json").write_text(json.dumps({
        "id": "raw", "version": "1.0.0", "adapterType": "mcp", "entrypoint": f"{sys.executable} {RAW_SERVER}",
        "metadata": {"toolName": "act"}}))
    return folder


def test_stdio_replies_are_read_like_any_reply_and_a_leftover_cannot_hold_a_call(tmp_path):
    pid_file = tmp_path / "leftover.pid"
    behaviours = ["surrogate", "badutf8", "deep", "nan", "ok", "deepnoid", "ok", "detach", "ok"]
    tasks = tasks_file(tmp_path, [{"id": f"{i}-{do}", "inputData": {"do": do, "pid_file": str(pid_file)},
                                   "expectedOutput": {"type": "exact", "value": "ok"}}
                                  for i, do in enumerate(behaviours)])
    started = time.monotonic()
    out = cli("eval", "--skills", raw_skill(tmp_path), "--tasks", tasks, "--concurrency", "1", "--timeout", "20000",
              "--json", "--format", "json", "csv", "--output-dir", tmp_path / "r", "--store", tmp_path / "s.db",
              cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert time.monotonic() - started < 15  # no call waited for its timeout
    assert wait_gone(int(pid_file.read_text()))
    (report,) = json.loads(out.stdout)
    results = [(r["status"], r["output"], r["error"]) for r in report["taskResults"]]
    unusable = "a reply that is not usable JSON: "
    assert results == [
        ("fail", "lone \ufffd surrogate", None),
        ("fail", "bad \ufffd\ufffd bytes", None),
        ("error", None, unusable + "nested deeper than 256 levels"),
        ("error", None, unusable + "NaN is not a JSON number"),
        ("pass", "ok", None),
        ("error", None, "the MCP server broke the protocol: " + unusable + "nested deeper than 256 levels"
                        " while the call was in flight; stderr was empty"),
        ("pass", "ok", None),  # on a fresh server
        ("error", None, "the MCP server exited with code 0 while the call was in flight; stderr was empty"),
        ("pass", "ok", None),
    ]
