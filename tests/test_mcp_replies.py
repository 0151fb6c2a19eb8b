"""What an MCP server sends is untrusted, as any skill's reply: a hand-written server (tests/skills/raw_mcp_server.py)
sends lone surrogates, bytes that are not UTF-8, nesting 100,000 deep, NaN, 20 MiB, the auth token it was sent,
or exits while a detached descendant holds its stdout; over stdio and streamable HTTP (JSON bodies and event
streams). Each is that one task's exact result, read one way everywhere, the token never shown; the other tasks
run."""

import json
import sqlite3
import sys
from pathlib import Path

import pytest
from procs import wait_gone
from test_adapter_mcp import free_port
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
    out = cli("eval", "--skills", raw_skill(tmp_path), "--tasks", tasks, "--concurrency", "1", "--timeout", "20000",
              "--json", "--format", "json", "csv", "--output-dir", tmp_path / "r", "--store", tmp_path / "s.db",
              cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert wait_gone(int(pid_file.read_text()))
    (report,) = json.loads(out.stdout)["reports"]
    results = [(r["status"], r["output"], r["error"]) for r in report["taskResults"]]
    assert "timeout" not in [r["status"] for r in report["taskResults"]]  # no call waited for its timeout
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


@pytest.mark.parametrize("mode", ["--http", "--sse"])
def test_streamable_http_replies_are_read_like_any_reply_and_never_show_the_token(tmp_path, mode):
    port = free_port()
    folder = tmp_path / "raw"
    folder.mkdir()
    (folder / "skill.json").write_text(json.dumps({
        "id": "raw", "version": "1.0.0", "adapterType": "mcp", "entrypoint": f"http://127.0.0.1:{port}/mcp",
        "metadata": {"toolName": "act"}}))
    (folder / "adapter.config.json").write_text(json.dumps({
        "start": f"{sys.executable} {RAW_SERVER} {mode} {port}", "healthPath": "/health", "authType": "bearer",
        "authTokenEnvKey": "RAW_MCP_TOKEN"}))
    behaviours = ["surrogate", "badutf8", "deep", "nan", "huge", "echoauth", "ok"]
    tasks = tasks_file(tmp_path, [{"id": f"{i}-{do}", "inputData": {"do": do},
                                   "expectedOutput": {"type": "exact", "value": "ok"}}
                                  for i, do in enumerate(behaviours)])
    out = cli("eval", "--skills", folder, "--tasks", tasks, "--concurrency", "1", "--json", "--format", "json",
              "--output-dir", tmp_path / "r", "--store", tmp_path / "s.db", cwd=tmp_path,
              env={"RAW_MCP_TOKEN": "hunter2-secret"})
    assert out.returncode == 0, out.stderr
    (report,) = json.loads(out.stdout)["reports"]
    results = [(r["status"], r["output"], r["error"]) for r in report["taskResults"]]
    assert "timeout" not in [r["status"] for r in report["taskResults"]]  # no call waited for its timeout
    unusable = "a reply that is not usable JSON: "
    assert results == [
        ("fail", "lone \ufffd surrogate", None),
        ("fail", "bad \ufffd\ufffd bytes", None),
        ("error", None, unusable + "nested deeper than 200 levels"),
        ("error", None, unusable + "NaN is not a JSON number"),
        ("error", None, unusable + ("larger than 16 MiB" if mode == "--http" else "a line larger than 16 MiB")),
        ("fail", "auth Bearer [redacted]", None),
        ("pass", "ok", None),
    ]
    with sqlite3.connect(tmp_path / "s.db") as db:
        stored = " ".join(str(row) for row in db.execute("select output_json, error, reason from task_results"))
    assert "hunter2" not in stored and "hunter2" not in out.stdout
    assert all("hunter2" not in path.read_text() for path in (tmp_path / "r").iterdir())
