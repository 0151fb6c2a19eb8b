"""A skill that misbehaves is one task's result with its exact status and reason, whatever it does.

Real programs (tests/skills/misbehave.py) against the subprocess adapter; the CLI-level consequences (the other
tasks run, reports and store hold every result) are in test_hardening_cli.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from procs import gone, wait_gone
from test_adapter_subprocess import MODES, call, make_skill, run_with

from eval_skills.adapters.subprocess import SubprocessAdapter
from eval_skills.errors import SkillCrashed, SkillProtocolError, SkillTimeout
from eval_skills.procs import Child


def test_one_shot_reply_nested_100000_deep_is_a_protocol_error() -> None:
    with pytest.raises(SkillProtocolError) as info:
        call(False, {"do": "deep"})
    assert str(info.value) == "a reply that is not usable JSON: nested deeper than 256 levels"


def test_persistent_reply_nested_100000_deep_fails_its_task_and_the_next_runs() -> None:
    async def body(adapter: SubprocessAdapter) -> list[Any]:
        deep = adapter.invoke({"do": "deep"}, 10)
        after = adapter.invoke({"do": "ok", "n": 1}, 10)
        return list(await asyncio.gather(deep, after, return_exceptions=True))

    deep, after = run_with(make_skill(persistent=True), body)
    assert isinstance(deep, SkillProtocolError)
    assert str(deep) == "a reply that is not usable JSON: nested deeper than 256 levels"
    assert after.output["echo"] == {"do": "ok", "n": 1}


@MODES
def test_a_lone_surrogate_becomes_the_replacement_character(persistent: bool) -> None:
    result = call(persistent, {"do": "surrogate"})
    assert result.output == {"text": "lone \ufffd surrogate", "\ufffd": 1}
    json.dumps(result.output, ensure_ascii=False).encode("utf-8")  # encodable everywhere now


@MODES
def test_nan_in_a_reply_is_a_protocol_error(persistent: bool) -> None:
    with pytest.raises(SkillProtocolError) as info:
        call(persistent, {"do": "nan"})
    assert str(info.value) == "a reply that is not usable JSON: NaN is not a JSON number"


def test_one_shot_reply_then_exit_code_3_is_an_error_keeping_the_reply() -> None:
    with pytest.raises(SkillCrashed) as info:
        call(False, {"do": "replyexit3", "marker": "kept"})
    assert str(info.value).startswith("exited with code 3 after replying; stderr: ")
    assert "failed after all" in str(info.value)
    assert info.value.output == {"echo": {"do": "replyexit3", "marker": "kept"}}


def test_one_shot_reply_with_a_null_id_counts() -> None:
    skill = make_skill(entrypoint="python3 -c \"import json,sys; sys.stdin.readline(); "
                                  "print(json.dumps({'jsonrpc':'2.0','id':None,'result':'fine'}))\"")
    result = run_with(skill, lambda adapter: adapter.invoke({}, 10))
    assert result.output == "fine"


def test_one_shot_reply_with_another_id_is_not_a_reply_and_is_named() -> None:
    with pytest.raises(SkillProtocolError) as info:
        call(False, {"do": "stringid"})
    assert str(info.value).startswith("no JSON-RPC reply; a reply matched no request (its id must be 1 or null): "
                                      "'{\"jsonrpc\": \"2.0\", \"id\": \"1\"")


def test_persistent_reply_with_the_id_as_a_string_times_out_naming_it() -> None:
    with pytest.raises(SkillTimeout) as info:
        call(True, {"do": "stringid"}, timeout=1.0)
    message = str(info.value)
    assert message.startswith("no reply within 1s; last output: 'log: request 1 do=stringid'; a reply matched no "
                              "request (ids must be the request's number): '{\"jsonrpc\": \"2.0\", \"id\": \"1\"")


def test_persistent_reply_with_the_id_as_a_string_then_exit_is_a_crash_naming_it() -> None:
    with pytest.raises(SkillCrashed) as info:
        call(True, {"do": "stringiddie"}, timeout=5.0)
    message = str(info.value)
    assert message.startswith("exited with code 4 before replying; stderr: stderr: handling 1; a reply matched no "
                              "request (ids must be the request's number): '{\"jsonrpc\": \"2.0\", \"id\": \"1\""), \
        message


@MODES
def test_a_reply_holding_a_5000_digit_integer_is_refused_in_plain_words(persistent: bool) -> None:
    with pytest.raises(SkillProtocolError) as info:
        call(persistent, {"do": "bigint"})
    assert str(info.value) == "a reply that is not usable JSON: holds an integer longer than 4300 digits"


@MODES
def test_a_timeout_quotes_the_line_the_skill_did_not_finish(persistent: bool) -> None:
    with pytest.raises(SkillTimeout) as info:
        call(persistent, {"do": "unfinished"}, timeout=1.0)
    assert str(info.value) == ("no reply within 1s; last output: 'log: request 1 do=unfinished'; an unfinished line "
                               "(no newline yet): '{\"jsonrpc\": \"2.0\", \"id\": 1, \"result\": {\"half'")


def test_an_unfinished_line_is_not_output_a_deadline_waits_for(tmp_path: Path) -> None:
    # a deadline waits (up to 0.2 s) for a reply that has already arrived; half a line is not one
    async def main() -> list[bool]:
        seen = []
        for text in ("half a line", "a whole line\n"):
            program = f"import sys, time; sys.stdout.write({text!r}); sys.stdout.flush(); time.sleep(30)"
            child = await Child.start([sys.executable, "-c", program], cwd=tmp_path, env=dict(os.environ))
            try:
                for _ in range(500):  # until asyncio has read it from the pipe
                    await asyncio.sleep(0.01)
                    if child.unread_output():
                        break
                seen.append(child.output_pending())
            finally:
                await child.kill()
        return seen

    assert asyncio.run(main()) == [False, True]


def test_persistent_out_of_order_replies_get_their_real_latency() -> None:
    async def body(adapter: SubprocessAdapter) -> list[Any]:
        held = asyncio.ensure_future(adapter.invoke({"do": "hold"}, 10))
        await asyncio.sleep(0.3)  # the held reply comes after the next request's reply
        after = await adapter.invoke({"do": "ok"}, 10)
        return [await held, after]

    held, after = run_with(make_skill(persistent=True), body)
    assert held.output["echo"] == {"do": "hold"}
    assert 300 <= held.latency_ms < 2000, held.latency_ms  # it waited for the next request
    assert 0 < after.latency_ms < 1000, after.latency_ms  # answered out of order: not 0.0


def test_a_reply_read_in_the_same_turn_as_its_timer_does_not_fail_the_next_request() -> None:
    async def body(adapter: SubprocessAdapter) -> list[Any]:
        await adapter.invoke({"do": "ok"}, 10)  # the process is up
        first = asyncio.ensure_future(adapter.invoke({"do": "slow", "seconds": 0.1}, 0.3))
        second = asyncio.ensure_future(adapter.invoke({"do": "ok", "n": 2}, 10))
        await asyncio.sleep(0.05)
        time.sleep(0.6)  # block the loop: the reply and the timer are both due when it wakes up
        return list(await asyncio.gather(first, second, return_exceptions=True))

    first, second = run_with(make_skill(persistent=True), body)
    assert not isinstance(second, BaseException), second
    assert second.output["echo"] == {"do": "ok", "n": 2}
    assert not isinstance(first, BaseException) and first.output["echo"]["do"] == "slow"


def test_one_shot_detached_descendant_holding_stdout_cannot_hold_the_task(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    started = time.monotonic()
    try:
        with pytest.raises(SkillProtocolError) as info:
            call(False, {"do": "detach", "pid_file": str(pid_file)}, timeout=30)
        assert time.monotonic() - started < 5
        assert str(info.value) == "no JSON-RPC reply; last output: 'log: request 1 do=detach'"
    finally:  # the orphan is reaped by us only where this process became a subreaper (an in-process CLI run)
        if pid_file.exists():
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid_file.read_text()), signal.SIGKILL)


@MODES
def test_a_deadline_holds_while_a_detached_descendant_keeps_stdout_open(persistent: bool, tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    started = time.monotonic()
    with pytest.raises(SkillTimeout) as info:
        call(persistent, {"do": "detachhang", "pid_file": str(pid_file)}, timeout=1.0)
    assert time.monotonic() - started < 4
    assert str(info.value) == "no reply within 1s; last output: 'log: request 1 do=detachhang'"
    assert wait_gone(int(pid_file.read_text()))  # found below the skill by parent links, and killed


def test_persistent_skill_exiting_while_a_descendant_holds_stdout_is_a_crash(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    started = time.monotonic()
    try:
        with pytest.raises(SkillCrashed) as info:
            call(True, {"do": "detach", "pid_file": str(pid_file)}, timeout=30)
        assert time.monotonic() - started < 5
        assert str(info.value) == "exited with code 0 before replying; stderr: stderr: handling 1"
    finally:
        if pid_file.exists() and not gone(int(pid_file.read_text())):
            os.kill(int(pid_file.read_text()), signal.SIGKILL)


# -- memory: each case in a fresh process, so one case's high-water mark cannot hide another's ----------

MEMORY_CASE = r"""
import asyncio, resource, sys
sys.path.insert(0, sys.argv[1])
from test_adapter_subprocess import call
from eval_skills.errors import SkillProtocolError
persistent, do = sys.argv[2] == "persistent", sys.argv[3]
call(persistent, {"do": "ok"})  # warm up: imports and one process
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    result = call(persistent, {"do": do})
    outcome = "ok" if result.output["echo"] == {"do": do} else "wrong"
except SkillProtocolError as exc:
    outcome = str(exc)
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before, outcome)
"""


@pytest.mark.parametrize("persistent", ["one-shot", "persistent"])
@pytest.mark.parametrize(("do", "expected"), [("huge", "reply line larger than 16777216 bytes"),
                                              ("hugejson", "reply line larger than 16777216 bytes"),
                                              ("manylines", "ok"), ("deep", "a reply that is not usable JSON: nested")])
def test_memory_stays_bounded_whatever_the_skill_prints(persistent: str, do: str, expected: str) -> None:
    out = subprocess.run([sys.executable, "-c", MEMORY_CASE, str(Path(__file__).parent), persistent, do],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    grown_kib, outcome = out.stdout.strip().split(" ", 1)
    assert outcome.startswith(expected), outcome
    assert int(grown_kib) < 40 * 1024, grown_kib  # 50 MB written; at most a 16 MiB line buffer kept
