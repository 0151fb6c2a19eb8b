"""The review page against a hostile local user and hostile workspace files, over real HTTP on 127.0.0.1."""

from __future__ import annotations

import json
import os
import socket
import threading
from pathlib import Path

import httpx
import pytest
from review_data import make_workspace
from viewer_server import TOKEN, page_client, served

from eval_skills._atomic import write_atomic
from eval_skills.masking import cut, environ_secrets, mask, secret_values
from eval_skills.viewer import open_workspace_source

KEY = 'sk-test-"quoted"\\slash-0123456789abcdefghijklmnop'


@pytest.fixture
def made(tmp_path):
    return make_workspace(tmp_path / "ws", cases=1, runs=1, iterations=1, routing=False)


def test_every_request_needs_the_token(made):
    with served(open_workspace_source(made.root)) as url:
        port = int(url.rsplit(":", 1)[1].strip("/"))
        for path in ("/", "/assets/viewer.js", "/api/feedback", "/api/case/1", "/files/iteration-1/feedback.json"):
            assert httpx.get(url.rstrip("/") + path).status_code == 403, path
            assert httpx.get(url.rstrip("/") + path, headers={"Authorization": "token wrong"}).status_code == 403
        assert httpx.post(url + "api/feedback", json={}, headers={"X-Review-Token": TOKEN}).status_code == 403
        opened = httpx.get(f"{url}?token={TOKEN}")
        assert opened.status_code == 303 and opened.headers["location"] == "/"
        cookie = opened.headers["set-cookie"]
        assert cookie.startswith(f"eval-skills-review-{port}={TOKEN};") and "HttpOnly" in cookie
        assert "SameSite=Strict" in cookie
        with httpx.Client(base_url=url, cookies={f"eval-skills-review-{port}": TOKEN}) as browser:
            assert browser.get("/").status_code == 200
        with httpx.Client(base_url=url, cookies={"eval-skills-review-1": TOKEN}) as other:
            assert other.get("/").status_code == 403  # another server's cookie


def test_a_body_past_the_limit_is_refused_while_it_is_read(made):
    with served(open_workspace_source(made.root)) as url:
        port = int(url.rsplit(":", 1)[1].strip("/"))
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(b"POST /api/feedback HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                         + f"Authorization: token {TOKEN}\r\nX-Review-Token: {TOKEN}\r\n".encode()
                         + b"Transfer-Encoding: chunked\r\n\r\n")
            chunk = b"x" * 65536
            for _ in range(40):  # 2.5 MB of a body that never ends: a server buffering it would never answer
                sock.sendall(b"%x\r\n" % len(chunk) + chunk + b"\r\n")
            assert sock.recv(200).startswith(b"HTTP/1.1 413")


def test_no_500_for_deep_json_long_paths_or_deep_transcript_lines(made):
    transcript = made.iteration / "eval-1" / "with_skill" / "run-1" / "transcript.jsonl"
    with transcript.open("a") as handle:
        handle.write('{"type": "message", "role": "user", "text": ' + "[" * 5000 + "]" * 5000 + "}\n")
    with served(open_workspace_source(made.root)) as url, page_client(url) as client:
        write = {"X-Review-Token": TOKEN, "Content-Type": "application/json"}
        deep = client.post("/api/feedback", content="[" * 100_000 + "]" * 100_000, headers=write)
        assert deep.status_code == 400
        for path in ("/api/case/", "/api/detail/", "/files/", "/api/tab/"):
            assert 400 <= client.get(path + "a" * 5000).status_code < 500, path
        case = client.get("/api/case/1")
        assert case.status_code == 200 and "not a transcript event" in case.json()["html"]


def test_a_file_swapped_for_a_symlink_is_never_served_from_outside(made, tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("OUTSIDE SECRET")
    target = made.iteration / "eval-1" / "with_skill" / "run-1" / "outputs" / "swap.txt"
    target.write_text("inside")
    stop = threading.Event()

    def swap() -> None:
        while not stop.is_set():
            target.unlink(missing_ok=True)
            target.symlink_to(outside)
            target.unlink(missing_ok=True)
            target.write_text("inside")

    thread = threading.Thread(target=swap, daemon=True)
    with served(open_workspace_source(made.root)) as url, page_client(url) as client:
        thread.start()
        try:
            bodies = [client.get("/files/iteration-1/eval-1/with_skill/run-1/outputs/swap.txt").content
                      for _ in range(500)]
        finally:
            stop.set()
            thread.join()
    assert b"OUTSIDE" not in b"".join(bodies) and b"inside" in bodies


def test_known_secrets_are_masked_on_the_page_and_in_downloads(made, monkeypatch, tmp_path):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("DATABASE_URL", "postgres://admin:hunter2pass@db.internal/x")
    outputs = made.iteration / "eval-1" / "with_skill" / "run-1" / "outputs"
    (outputs / "env.txt").write_text(f"OPENAI_API_KEY={KEY}\nurl=postgres://admin:hunter2pass@db.internal/x\n")
    (outputs / "data.bin").write_bytes(b"\0" + KEY.encode())
    with (made.iteration / "eval-1" / "with_skill" / "run-1" / "transcript.jsonl").open("a") as handle:
        handle.write(json.dumps({"type": "message", "role": "assistant", "text": f"key {KEY}"}) + "\n")
    escaped = json.dumps(KEY)[1:-1]
    with served(open_workspace_source(made.root)) as url, page_client(url) as client:
        html = client.get("/api/case/1").json()["html"]
        html += client.get("/api/detail/run-files/1/with_skill/1").json()["html"]
        download = client.get("/files/iteration-1/eval-1/with_skill/run-1/outputs/data.bin").content
    for shown in (html, download.decode("utf-8", "replace")):
        assert "0123456789abcdefghijklmnop" not in shown and "hunter2pass" not in shown
    assert "***" in html and b"***" in download
    static = tmp_path / "r.html"
    from eval_skills.viewer import write_static

    write_static(open_workspace_source(made.root), static)
    page = static.read_text()
    assert "0123456789abcdefghijklmnop" not in page and escaped not in page


def test_the_masking_rule():
    secrets = secret_values({"MY_TOKEN": KEY, "SHORT_KEY": "abc", "PLAIN": "not a secret at all",
                             "DSN": "postgres://user:p4ssw0rd-long@host:5432/db"})
    assert KEY in secrets and "abc" not in secrets and "not a secret at all" not in secrets
    assert mask("postgres://user:p4ssw0rd-long@host:5432/db", secrets) == "postgres://***@host:5432/db"
    assert mask(json.dumps({"out": KEY}), secrets) == '{"out": "***"}'
    quoted = f"error: the key {KEY} was refused"
    for limit in range(10, len(quoted)):  # wherever the cut falls, no part of the key of 4 characters or more
        kept = cut(quoted, limit, secrets)
        assert not any(KEY[i:i + 4] in kept for i in range(len(KEY) - 3)), (limit, kept)


def test_this_process_secrets_follow_its_environment_as_it_changes(monkeypatch):
    monkeypatch.delenv("EVAL_SKILLS_PROBE_TOKEN", raising=False)
    before = environ_secrets(("given-key-1234",))
    assert "given-key-1234" in before and "probe-secret-value-1" not in before
    monkeypatch.setenv("EVAL_SKILLS_PROBE_TOKEN", "probe-secret-value-1")
    assert "probe-secret-value-1" in environ_secrets()
    monkeypatch.setenv("EVAL_SKILLS_PROBE_TOKEN", "probe-secret-value-2")  # the same size, another value
    now = environ_secrets()
    assert "probe-secret-value-2" in now and "probe-secret-value-1" not in now
    assert now == secret_values(dict(os.environ))


def test_atomic_writes_never_go_through_a_planted_link(tmp_path):
    import os

    victim = tmp_path / "victim.txt"
    victim.write_text("untouched")
    target = tmp_path / "feedback.json"
    for name in (f".{target.name}.tmp", f".{target.name}.{os.getpid()}.tmp",
                 f".{target.name}.{os.getpid()}.{threading.get_ident()}.tmp"):
        (tmp_path / name).symlink_to(victim)  # every name a predictable scheme would use
    write_atomic(target, "new")
    assert victim.read_text() == "untouched" and target.read_text() == "new" and not target.is_symlink()


def test_two_pages_never_lose_a_review(tmp_path):
    made = make_workspace(tmp_path / "ws", cases=4, runs=2, iterations=1, routing=False)
    runs = made.run_ids
    for trial in range(15):
        pages = [open_workspace_source(made.root).feedback for _ in range(2)]
        barrier = threading.Barrier(2)

        def write(index: int, pages=pages, barrier=barrier, trial=trial) -> None:
            page = pages[index]
            assert page is not None
            barrier.wait()
            for run in runs[index::2]:
                page.set(run, f"trial {trial} page {index}")

        threads = [threading.Thread(target=write, args=(i,)) for i in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        saved = {r["run_id"]: r["feedback"] for r in
                 json.loads((made.iteration / "feedback.json").read_text())["reviews"]}
        assert all(saved[run] == f"trial {trial} page {i % 2}" for i, run in enumerate(runs)), (trial, saved)


def test_paired_masks_the_files_an_agent_wrote(tmp_path, monkeypatch):
    from eval_skills.agents import RawOutput, TokenUsage
    from eval_skills.paired.executor import OutputFile, RunOutput
    from eval_skills.paired.record import write_run

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    raw = RawOutput()
    out = RunOutput(run_id="r", status="ok", response="done", error=None, transcript=[],
                    files=[OutputFile("env.txt", "created", 10, f"OPENAI_API_KEY={KEY}".encode())],
                    duration_s=1.0, usage=TokenUsage.estimate("p", "done"), started_at="", finished_at="",
                    raw_stdout=raw)
    record = write_run(tmp_path / "run-1", out, case_key="1", arm="with_skill", number=1)
    assert KEY not in record.outputs["env.txt"] and "***" in record.outputs["env.txt"]
    assert KEY not in Path(tmp_path / "run-1" / "outputs" / "env.txt").read_text()
