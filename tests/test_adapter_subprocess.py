"""The subprocess adapter against real programs (tests/skills/misbehave.py and the calculator example)."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest
from procs import wait_gone

from eval_skills.adapters import create_adapter
from eval_skills.adapters._process import BASE_ENV_KEYS
from eval_skills.adapters.subprocess import SubprocessAdapter
from eval_skills.errors import InputError, SkillCrashed, SkillProtocolError, SkillRpcError, SkillTimeout
from eval_skills.formats.skill import AdapterConfig, Skill, SkillManifest, load_skill
from eval_skills.results import Usage

HERE = Path(__file__).parent
SKILLS = HERE / "skills"
CALCULATOR = HERE.parent / "examples" / "skills" / "calculator"
T = TypeVar("T")
MODES = pytest.mark.parametrize("persistent", [False, True], ids=["one-shot", "persistent"])


def make_skill(*, persistent: bool = False, root: Path = SKILLS, entrypoint: str = "python3 misbehave.py",
               **config: Any) -> Skill:
    manifest = SkillManifest(id="misbehave", name="Misbehave", version="1.0.0", adapterType="subprocess",
                             entrypoint=entrypoint)
    return Skill(manifest=manifest, path=root / "skill.json",
                 adapter=AdapterConfig(persistent=persistent, **config))


def run_with(skill: Skill, body: Callable[[SubprocessAdapter], Awaitable[T]], **options: Any) -> T:
    async def main() -> T:
        adapter = SubprocessAdapter(skill, **options)
        try:
            await adapter.start()
            return await body(adapter)
        finally:
            await adapter.close()

    return asyncio.run(main())


def call(persistent: bool, params: dict[str, Any], timeout: float = 10.0) -> Any:
    async def body(adapter: SubprocessAdapter) -> Any:
        return await adapter.invoke(params, timeout)

    return run_with(make_skill(persistent=persistent), body)


# -- answers ---------------------------------------------------------------------------------------

@MODES
def test_answers_with_log_lines_before_the_reply(persistent: bool) -> None:
    result = call(persistent, {"do": "ok", "value": [1, "two"]})
    assert result.output["echo"] == {"do": "ok", "value": [1, "two"]}
    assert result.usage is None


@MODES
def test_usage_beside_the_result(persistent: bool) -> None:
    assert call(persistent, {"do": "usage"}).usage == Usage(11, 7, 18)


def test_one_shot_takes_the_last_reply_line() -> None:
    assert call(False, {"do": "tworeplies"}).output == "second"


def test_one_shot_skill_that_replies_but_never_exits_times_out_saying_so() -> None:
    with pytest.raises(SkillTimeout, match="replied but did not end its output within 0.5s"):
        call(False, {"do": "linger"}, timeout=0.5)


def test_persistent_skips_replies_with_other_ids() -> None:
    result = call(True, {"do": "stale"})
    assert result.output["id"] == 1


@MODES
def test_healthcheck(persistent: bool) -> None:
    async def body(adapter: SubprocessAdapter) -> bool:
        return await adapter.healthcheck(5)

    assert run_with(make_skill(persistent=persistent), body) is True
    assert run_with(make_skill(persistent=persistent, command="python3", args=["misbehave.py", "rpcerror"]),
                    body) is False
    assert run_with(make_skill(persistent=persistent, command="python3", args=["misbehave.py", "crash"]),
                    body) is False


# -- failures --------------------------------------------------------------------------------------

@MODES
def test_a_skill_that_raises_is_a_crash_with_stderr(persistent: bool) -> None:
    with pytest.raises(SkillCrashed) as info:
        call(persistent, {"do": "crash"})
    assert "exited with code 1" in str(info.value)
    assert "RuntimeError: boom on purpose" in str(info.value)


@MODES
def test_non_zero_exit_is_a_crash_with_the_code(persistent: bool) -> None:
    with pytest.raises(SkillCrashed, match="exited with code 3.*giving up"):
        call(persistent, {"do": "exit3"})


def test_non_json_output_is_a_protocol_error() -> None:
    with pytest.raises(SkillProtocolError, match="no JSON-RPC reply; last output: .*but not a reply"):
        call(False, {"do": "nonjson"})


def test_persistent_non_json_output_times_out_naming_the_output() -> None:
    with pytest.raises(SkillTimeout, match="no reply within 0.5s; last output"):
        call(True, {"do": "nonjson"}, timeout=0.5)


@MODES
def test_json_rpc_error_is_not_retryable(persistent: bool) -> None:
    with pytest.raises(SkillRpcError) as info:
        call(persistent, {"do": "rpcerror"})
    assert info.value.retryable is False
    assert info.value.code == -32001
    assert "refused on purpose" in str(info.value)


def test_persistent_error_with_null_id_is_the_answer() -> None:
    with pytest.raises(SkillRpcError, match="parse error"):
        call(True, {"do": "nullid"})


@MODES
def test_timeout_kills_the_whole_process_group(persistent: bool, tmp_path: Path) -> None:
    pid_file = tmp_path / "pids"

    async def body(adapter: SubprocessAdapter) -> Any:
        started = time.monotonic()
        with pytest.raises(SkillTimeout, match=r"no reply within 1s"):
            await adapter.invoke({"do": "hang", "pid_file": str(pid_file)}, 1.0)
        assert time.monotonic() - started < 3
        return await adapter.invoke({"do": "ok"}, 10)  # persistent: a new process

    after = run_with(make_skill(persistent=persistent), body)
    skill_pid, grandchild_pid = map(int, pid_file.read_text().split())
    assert wait_gone(skill_pid) and wait_gone(grandchild_pid)
    assert after.output["pid"] != skill_pid


@MODES
def test_closing_stdout_early_does_not_hang(persistent: bool) -> None:
    started = time.monotonic()
    with pytest.raises(SkillProtocolError, match="closed its stdout"):
        call(persistent, {"do": "closeout"}, timeout=20)
    assert time.monotonic() - started < 5


def test_missing_program_is_a_crash_naming_it() -> None:
    skill = make_skill(command="no-such-program-4242")
    with pytest.raises(SkillCrashed, match="no-such-program-4242"):
        asyncio.run(create_adapter(skill).invoke({}, 5))
    with pytest.raises(SkillCrashed, match="no-such-program-4242"):
        run_with(skill, lambda adapter: asyncio.sleep(0))


# -- persistent mode -------------------------------------------------------------------------------

def test_persistent_process_is_reused_and_restarted_after_dying() -> None:
    async def body(adapter: SubprocessAdapter) -> list[Any]:
        first = await adapter.invoke({"do": "ok"}, 10)
        second = await adapter.invoke({"do": "ok"}, 10)
        with pytest.raises(SkillCrashed, match="exited with code 5"):
            await adapter.invoke({"do": "die"}, 10)
        assert adapter.pid is None
        third = await adapter.invoke({"do": "ok"}, 10)
        return [first.output, second.output, third.output]

    first, second, third = run_with(make_skill(persistent=True), body)
    assert first["pid"] == second["pid"] != third["pid"]
    assert first["id"] < second["id"] < third["id"]


def test_persistent_calls_are_serialised() -> None:
    async def body(adapter: SubprocessAdapter) -> list[Any]:
        calls = [adapter.invoke({"do": "slow", "seconds": 0.01, "n": n}, 10) for n in range(20)]
        return list(await asyncio.gather(*calls))

    results = run_with(make_skill(persistent=True), body)
    assert [r.output["echo"]["n"] for r in results] == list(range(20))
    assert len({r.output["pid"] for r in results}) == 1


def test_close_ends_the_persistent_process() -> None:
    async def main() -> int:
        adapter = SubprocessAdapter(make_skill(persistent=True))
        await adapter.start()
        pid = adapter.pid
        assert pid is not None
        await adapter.close()
        await adapter.close()
        return pid

    assert wait_gone(asyncio.run(main()))


# -- environment, folder, command ------------------------------------------------------------------

@MODES
def test_child_environment_is_clean(persistent: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SECRET_TOKEN", "hunter2")
    monkeypatch.setenv("PASS_ME", "passed")
    skill = make_skill(persistent=persistent, passEnv=["PASS_ME", "NOT_SET_ANYWHERE"], env={"LITERAL": "yes"})

    async def body(adapter: SubprocessAdapter) -> Any:
        return await adapter.invoke({"do": "ok"}, 10)

    env = run_with(skill, body).output["env"]
    assert "SECRET_TOKEN" not in env and "hunter2" not in json.dumps(env)
    assert env["PASS_ME"] == "passed" and env["LITERAL"] == "yes"
    allowed = {*BASE_ENV_KEYS, "PASS_ME", "LITERAL", "PYTHONUNBUFFERED", "LC_CTYPE"}
    assert set(env) <= allowed, set(env) - allowed


def test_cwd_is_the_skill_folder_when_named_by_its_skill_json(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "my skill"
    folder.mkdir()
    (folder / "misbehave.py").write_text((SKILLS / "misbehave.py").read_text())
    (folder / "skill.json").write_text(json.dumps({
        "id": "in-a-folder", "name": "In a folder", "version": "0.1.0", "adapterType": "subprocess",
        "entrypoint": "python3 misbehave.py"}))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    skill = load_skill(Path("..") / "my skill" / "skill.json")

    async def body(adapter: SubprocessAdapter) -> Any:
        return await adapter.invoke({"do": "ok"}, 10)

    result = run_with(skill, body)
    assert Path(result.output["cwd"]) == folder.resolve()


@pytest.mark.parametrize("name", ["python", "python3", "python3.11"])
def test_python_means_the_running_interpreter(name: str) -> None:
    adapter = SubprocessAdapter(make_skill(command=name, args=["misbehave.py"]))
    assert adapter.argv == [sys.executable, "misbehave.py"]


def test_the_interpreter_really_runs_the_skill() -> None:
    assert call(False, {"do": "ok"}).output["exe"] == sys.executable


def test_other_programs_are_found_on_path() -> None:
    reply = json.dumps({"jsonrpc": "2.0", "id": 1, "result": "from sh"})
    skill = make_skill(command="sh", args=["-c", f"read line; echo 'a log line'; echo '{reply}'"])
    adapter = SubprocessAdapter(skill)
    assert Path(adapter.argv[0]).name == "sh" and Path(adapter.argv[0]).is_absolute()
    assert asyncio.run(adapter.invoke({}, 10)).output == "from sh"


def test_command_with_spaces_and_no_args_is_split() -> None:
    adapter = SubprocessAdapter(make_skill(command="python3 misbehave.py ok"))
    assert adapter.argv == [sys.executable, "misbehave.py", "ok"]
    with pytest.raises(InputError, match=r"\$\.entrypoint"):
        SubprocessAdapter(make_skill(entrypoint="python3 'misbehave.py"))


# -- the calculator example ------------------------------------------------------------------------

CALCULATIONS = [
    ({"expression": "2 + 3 * 4"}, "14"),
    ({"expression": "(2 + 3) * 4"}, "20"),
    ({"expression": "10 - 4 - 3"}, "3"),
    ({"expression": "2 ** 10"}, "1024"),
    ({"expression": "5!"}, "120"),
    ({"expression": "0!"}, "1"),
    ({"expression": "10!"}, "3628800"),
    ({"expression": "3! + 2"}, "8"),
    ({"expression": "100/4"}, "25.0"),
    ({"expression": "7 / 2"}, "3.5"),
    ({"expression": "-3 + 5"}, "2"),
    ({"operation": "reverse", "text": "hello"}, "olleh"),
    ({"operation": "reverse", "text": ""}, ""),
    ({"operation": "is_palindrome", "text": "racecar"}, "true"),
    ({"operation": "is_palindrome", "text": "A man, a plan, a canal: Panama"}, "true"),
    ({"operation": "is_palindrome", "text": "hello"}, "false"),
]


@MODES
def test_calculator_example(persistent: bool) -> None:
    skill = load_skill(CALCULATOR)
    assert skill.adapter.persistent is True
    skill = Skill(manifest=skill.manifest, path=skill.path,
                  adapter=skill.adapter.model_copy(update={"persistent": persistent}))

    async def body(adapter: SubprocessAdapter) -> list[Any]:
        assert await adapter.healthcheck()
        with pytest.raises(SkillRpcError, match="division by zero"):
            await adapter.invoke({"expression": "1/0"}, 5)
        with pytest.raises(SkillRpcError, match="not allowed"):
            await adapter.invoke({"expression": "__import__('os').system('true')"}, 5)
        return [(await adapter.invoke(inp, 5)).output for inp, _ in CALCULATIONS]

    outputs = run_with(skill, body)
    assert outputs == [{"result": expected} for _, expected in CALCULATIONS]


# -- persistent mode: pipelined requests -----------------------------------------------------------

def test_pipelined_latency_counts_only_the_time_the_skill_spent() -> None:
    async def body(adapter: SubprocessAdapter) -> list[Any]:
        calls = [adapter.invoke({"do": "slow", "seconds": 0.2, "n": n}, 10) for n in range(4)]
        return list(await asyncio.gather(*calls))

    started = time.monotonic()
    results = run_with(make_skill(persistent=True), body)
    elapsed = time.monotonic() - started
    assert elapsed >= 0.8  # the skill answers one request at a time
    latencies = [r.latency_ms for r in results]
    assert all(150 <= ms < 400 for ms in latencies), latencies  # not 200, 400, 600, 800


def test_requests_queued_behind_a_timeout_go_to_a_fresh_process(tmp_path: Path) -> None:
    async def body(adapter: SubprocessAdapter) -> list[Any]:
        hang = adapter.invoke({"do": "hang", "pid_file": str(tmp_path / "pids")}, 1.0)
        after = [adapter.invoke({"do": "ok", "n": n}, 1.0) for n in range(3)]
        return list(await asyncio.gather(hang, *after, return_exceptions=True))

    hang, *after = run_with(make_skill(persistent=True), body)
    assert isinstance(hang, SkillTimeout)
    skill_pid = int((tmp_path / "pids").read_text().split()[0])
    assert [r.output["echo"]["n"] for r in after] == [0, 1, 2]
    assert {r.output["pid"] for r in after} != {skill_pid} and len({r.output["pid"] for r in after}) == 1


def test_requests_queued_behind_a_crash_go_to_a_fresh_process() -> None:
    async def body(adapter: SubprocessAdapter) -> list[Any]:
        first = adapter.invoke({"do": "ok"}, 10)
        die = adapter.invoke({"do": "die"}, 10)
        after = [adapter.invoke({"do": "ok", "n": n}, 10) for n in range(3)]
        return list(await asyncio.gather(first, die, *after, return_exceptions=True))

    first, die, *after = run_with(make_skill(persistent=True), body)
    assert isinstance(die, SkillCrashed) and "code 5" in str(die)
    assert all(not isinstance(r, BaseException) for r in after), after
    assert {r.output["pid"] for r in after} != {first.output["pid"]}


def test_timeouts_of_queued_requests_count_only_their_own_time() -> None:
    async def body(adapter: SubprocessAdapter) -> list[Any]:
        calls = [adapter.invoke({"do": "hang"}, 0.5) for _ in range(3)]
        return list(await asyncio.gather(*calls, return_exceptions=True))

    errors = run_with(make_skill(persistent=True), body)
    assert all(isinstance(e, SkillTimeout) for e in errors), errors
    latencies = [e.latency_ms for e in errors]
    assert all(480 <= ms < 900 for ms in latencies), latencies  # not 500, 1000, 1500


def test_each_request_keeps_its_own_timeout_whatever_the_requests_before_it_had() -> None:
    # a long timeout answered in time, then a short one that hangs: the short one ends on its own clock;
    # a short timeout answered in time, then a longer one that hangs: it is not ended at the first one's deadline
    async def body(adapter: SubprocessAdapter) -> list[Any]:
        out: list[Any] = []
        for first, second in ((30.0, 0.4), (0.3, 1.0)):
            calls = [adapter.invoke({"do": "ok"}, first), adapter.invoke({"do": "hang"}, second)]
            started = time.monotonic()
            out.append((await asyncio.gather(*calls, return_exceptions=True), time.monotonic() - started))
        return out

    (short, short_wall), (longer, longer_wall) = run_with(make_skill(persistent=True), body)
    assert not isinstance(short[0], BaseException) and isinstance(short[1], SkillTimeout), short
    assert 380 <= short[1].latency_ms < 2000 and short_wall < 10, (short[1].latency_ms, short_wall)
    assert not isinstance(longer[0], BaseException) and isinstance(longer[1], SkillTimeout), longer
    assert longer[1].latency_ms >= 980 and "within 1s" in str(longer[1]), (longer[1].latency_ms, longer[1])


def test_one_shot_reply_counts_when_a_leftover_child_holds_stdout(tmp_path: Path) -> None:
    script = tmp_path / "leaves_child.py"
    script.write_text(
        "import json, subprocess, sys\n"
        "req = json.loads(sys.stdin.readline())\n"
        "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(30)'])  # inherits stdout\n"
        "print(json.dumps({'jsonrpc': '2.0', 'id': req['id'], 'result': {'result': 'done'}}), flush=True)\n")
    skill = make_skill(root=tmp_path, entrypoint="python3 leaves_child.py")
    started = time.monotonic()
    result = asyncio.run(create_adapter(skill).invoke({}, 10))
    assert result.output == {"result": "done"}
    assert time.monotonic() - started < 3
