"""The custom adapter: Python functions called in-process, on worker threads, with the statuses of the others."""

from __future__ import annotations

import asyncio
import json
import re
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from eval_skills.adapters import create_adapter
from eval_skills.adapters.custom import CustomAdapter
from eval_skills.errors import InputError
from eval_skills.formats.benchmark import Benchmark
from eval_skills.formats.skill import load_skill
from eval_skills.results import TaskResult, Usage
from eval_skills.tool_skills.evaluation import evaluate
from eval_skills.tool_skills.plan import build_plan
from eval_skills.tool_skills.runner import RunSettings

FUNCTIONS = '''
import asyncio, json, sys, time

def echo(data):
    return {"result": data.get("text")}

async def aecho(data):
    await asyncio.sleep(0.01)
    return {"result": data.get("text")}

def act(data):
    do = data["do"]
    if do == "echo":
        return {"result": data.get("text")}
    if do == "print":
        print("hello from the skill")
        print("to stderr", file=sys.stderr)
        return {"result": "printed"}
    if do == "raise":
        print("about to fail")
        raise ValueError("bad input " + data.get("text", ""))
    if do == "exit":
        sys.exit(3)
    if do == "set":
        return {1, 2}
    if do == "nan":
        return float("nan")
    if do == "sleep":
        time.sleep(data["seconds"])
        return {"result": "slept"}
    if do == "spin":
        while True:
            pass
    if do == "mutate":
        data["text"] = "changed"
        return {"result": "mutated"}
    if do == "usage":
        return {"result": "x", "usage": {"prompt_tokens": 5, "completion_tokens": 2}}
    if do == "cancelled":
        raise asyncio.CancelledError()
    raise KeyError(do)

async def aact(data):
    if data["do"] == "block":
        time.sleep(data["seconds"])  # blocks its own loop, on its own worker
    else:
        await asyncio.sleep(data["seconds"])
    return {"result": "done"}

NOT_CALLABLE = 42
'''


def custom_skill(folder: Path, entrypoint: str, source: str = FUNCTIONS, module: str = "tools",
                 config: dict[str, Any] | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{module}.py").write_text(textwrap.dedent(source))
    (folder / "skill.json").write_text(json.dumps({
        "id": folder.name, "name": "Custom", "version": "1.0.0", "adapterType": "custom", "entrypoint": entrypoint}))
    if config is not None:
        (folder / "adapter.config.json").write_text(json.dumps(config))
    return folder


def tasks(*specs: tuple[str, Any], timeout_ms: int | None = None) -> Benchmark:
    return Benchmark.model_validate({"id": "b", "tasks": [
        {"id": task_id, "inputData": data, "expectedOutput": {"type": "exact", "value": str(data.get("text", "done"))},
         **({"timeoutMs": timeout_ms} if timeout_ms else {})} for task_id, data in specs]})


def run(folders: list[Path], benchmark: Benchmark, *, runs: int = 1, concurrency: int = 4,
        ) -> dict[tuple[str, str, int], TaskResult]:
    plan = build_plan([load_skill(f) for f in folders], benchmark, runs=runs, default_evaluator="exact")
    outcome = asyncio.run(evaluate(plan, RunSettings(concurrency=concurrency, timeout_ms=5000)))
    return {(r.skill_id, r.task_id, r.run_id): r for r in outcome.results}


def test_sync_and_async_functions_answer_with_their_own_latency(tmp_path):
    sync = custom_skill(tmp_path / "sync", "tools:echo")
    async_ = custom_skill(tmp_path / "async", "tools:aecho")
    results = run([sync, async_], tasks(("a", {"text": "one"}), ("b", {"text": "two"})))
    assert {key: r.status for key, r in results.items()} == {
        ("sync", "a", 1): "pass", ("sync", "b", 1): "pass", ("async", "a", 1): "pass", ("async", "b", 1): "pass"}
    assert results[("async", "a", 1)].output == {"result": "one"}
    assert results[("async", "a", 1)].latency_ms >= 10  # its own time: it sleeps 10 ms
    assert results[("sync", "a", 1)].latency_ms < 10


def test_failures_are_task_errors_with_their_reason(tmp_path):
    folder = custom_skill(tmp_path / "acts", "tools:act")
    results = run([folder], tasks(("raise", {"do": "raise", "text": "x"}), ("exit", {"do": "exit"}),
                                  ("set", {"do": "set"}), ("nan", {"do": "nan"}), ("unknown", {"do": "what"}),
                                  ("cancelled", {"do": "cancelled"}), ("ok", {"do": "echo", "text": "fine"})))
    errors = {key[1]: r.error for key, r in results.items()}
    line = FUNCTIONS.splitlines().index('        raise ValueError("bad input " + data.get("text", ""))') + 1
    assert errors["raise"] == f"raised ValueError: bad input x (at tools.py:{line}); printed: about to fail"
    assert errors["exit"] == f"called sys.exit(3) (at tools.py:{line + 2})"
    assert errors["set"].startswith("returned a value that is not JSON (set): Object of type set is not JSON")
    assert errors["nan"].startswith("returned a value that is not JSON (float): Out of range float values")
    assert errors["unknown"].startswith("raised KeyError: 'what'")
    assert errors["cancelled"].startswith("raised CancelledError")  # its own, not the harness's
    assert errors["ok"] is None and results[("acts", "ok", 1)].status == "pass"
    assert all(results[("acts", t, 1)].status == "error" for t in ("raise", "exit", "set", "nan", "unknown"))


def test_each_call_gets_its_own_copy_of_the_input(tmp_path):
    folder = custom_skill(tmp_path / "mutating", "tools:act")
    benchmark = Benchmark.model_validate({"id": "b", "tasks": [
        {"id": "m", "inputData": {"do": "mutate", "text": "orig"}, "expectedOutput": {"value": "mutated"}}]})
    results = run([folder], benchmark, runs=3)
    assert [results[("mutating", "m", i)].status for i in (1, 2, 3)] == ["pass"] * 3
    assert benchmark.tasks[0].inputData == {"do": "mutate", "text": "orig"}


def test_usage_in_a_returned_dict_is_the_token_usage(tmp_path):
    folder = custom_skill(tmp_path / "usage", "tools:act")
    results = run([folder], tasks(("u", {"do": "usage", "text": "x"})))
    assert results[("usage", "u", 1)].usage == Usage(5, 2, 7)


def test_calls_that_never_return_are_timeouts_and_do_not_stall_other_skills(tmp_path):
    slow = custom_skill(tmp_path / "slow", "tools:act")
    fast = custom_skill(tmp_path / "fast", "tools:echo")
    blocking = custom_skill(tmp_path / "blocking", "tools:aact")
    before = threading.active_count()
    began = time.perf_counter()
    results = run([slow, fast, blocking], tasks(
        ("sleep", {"do": "sleep", "seconds": 60, "text": "done"}), ("spin", {"do": "spin", "text": "done"}),
        ("block", {"do": "block", "seconds": 60}), ("await", {"do": "await", "seconds": 60}),
        *((f"e{i}", {"do": "echo", "text": f"e{i}"}) for i in range(4)), timeout_ms=500), concurrency=8)
    elapsed = time.perf_counter() - began
    for task_id in ("sleep", "spin"):
        assert results[("slow", task_id, 1)].status == "timeout"
        assert results[("slow", task_id, 1)].error == "did not return within 0.5s"
    for task_id in ("block", "await"):
        assert results[("blocking", task_id, 1)].status == "timeout"
    assert all(results[("fast", f"e{i}", 1)].status == "pass" for i in range(4))
    assert max(results[("fast", f"e{i}", 1)].latency_ms for i in range(4)) < 100
    assert elapsed < 10
    # the busy loop and the awaiting coroutine are stopped; only the calls stuck in time.sleep keep a thread
    deadline = time.monotonic() + 3
    while threading.active_count() - before > 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert threading.active_count() - before <= 2


def test_modules_of_two_skills_with_the_same_names_do_not_collide(tmp_path):
    first = custom_skill(tmp_path / "first", "tools:run", "from helpers import NAME\ndef run(data):\n"
                                                          "    return {'result': NAME}\n")
    (first / "helpers.py").write_text("NAME = 'first'\n")
    second = custom_skill(tmp_path / "second", "tools:run", "from helpers import NAME\ndef run(data):\n"
                                                            "    return {'result': NAME}\n")
    (second / "helpers.py").write_text("NAME = 'second'\n")
    benchmark = Benchmark.model_validate({"id": "b", "tasks": [{"id": "n", "inputData": {},
                                                                 "expectedOutput": {"value": "first"}}]})
    results = run([first, second], benchmark)
    assert results[("first", "n", 1)].output == {"result": "first"}
    assert results[("second", "n", 1)].output == {"result": "second"}
    assert str(first) not in sys.path and str(second) not in sys.path
    assert "tools" not in sys.modules and "helpers" not in sys.modules


def test_an_installed_module_may_be_named(tmp_path):
    folder = tmp_path / "stdlib"
    folder.mkdir()
    (folder / "skill.json").write_text(json.dumps({"id": "stdlib", "name": "S", "version": "1.0.0",
                                                   "adapterType": "custom", "entrypoint": "os.path:basename"}))
    benchmark = Benchmark.model_validate({"id": "b", "tasks": [{"id": "n", "inputData": "/a/b/c.txt",
                                                                 "expectedOutput": {"value": "c.txt"}}]})
    assert run([folder], benchmark)[("stdlib", "n", 1)].status == "pass"


@pytest.mark.parametrize(("entrypoint", "source", "message"), [
    ("tools", FUNCTIONS, "entrypoint 'tools' is not module:attribute"),
    ("tools:nope", FUNCTIONS, "tools has no attribute 'nope'"),
    ("tools:NOT_CALLABLE", FUNCTIONS, "tools:NOT_CALLABLE is not callable (it is a int)"),
    ("nowhere:run", FUNCTIONS, "module 'nowhere' not found: neither nowhere.py in the skill's folder nor an installed"),
    ("tools:run", "def run(:\n", "module 'tools' failed to import: SyntaxError: "),
    # a SyntaxError names its own file and line; no "(at <frozen importlib._bootstrap>:...)" after it
    ("tools:run", "\ndef run(d)\n    return d\n",
     r"failed to import: SyntaxError: expected ':' \(tools\.py, line 2\)$"),
    # an error raised inside the standard library is placed in the skill's code that called it
    ("tools:run", "import json\n\ndef load():\n    return json.loads('{bad')\n\nCONFIG = load()\n",
     r"failed to import: JSONDecodeError: .* \(at tools\.py:4\)$"),
    ("tools:run", "import missing_dependency_xyz\n", "module 'tools' failed to import: ModuleNotFoundError: No module "
                                                     "named 'missing_dependency_xyz'"),
    ("tools:run", "print('loading')\nraise RuntimeError('no model file')\n",
     "module 'tools' failed to import: RuntimeError: no model file (at tools.py:2)"),
])
def test_what_cannot_be_called_is_an_input_error_naming_the_entrypoint(tmp_path, capsys, entrypoint, source, message):
    folder = custom_skill(tmp_path / "bad", entrypoint, source)

    async def main() -> list[str]:
        adapter = create_adapter(load_skill(folder))
        try:
            return await adapter.preflight()
        finally:
            await adapter.close()

    with pytest.raises(InputError) as info:
        asyncio.run(main())
    assert info.value.file == str(folder.resolve() / "skill.json") and info.value.field == "$.entrypoint"
    assert message in info.value.problem or re.search(message, info.value.problem), info.value.problem
    assert "loading" not in capsys.readouterr().out


def test_a_module_that_hangs_on_import_is_an_input_error_after_start_timeout(tmp_path):
    folder = custom_skill(tmp_path / "hangs", "tools:run", "import time\ntime.sleep(2)\n",
                          config={"startTimeoutMs": 300})

    async def main() -> None:
        adapter = create_adapter(load_skill(folder))
        try:
            await adapter.preflight()
        finally:
            await adapter.close()

    with pytest.raises(InputError, match="did not finish importing within 0.3s"):
        asyncio.run(main())


def test_preflight_notes_and_stdout_stay_ours(tmp_path, capsys):
    folder = custom_skill(tmp_path / "printer", "tools:act", "print('imported')\n" + FUNCTIONS)

    async def main() -> tuple[list[str], Any, Any]:
        adapter = create_adapter(load_skill(folder))
        assert isinstance(adapter, CustomAdapter)
        try:
            notes = await adapter.preflight()
            print("ours")
            printed = await adapter.invoke({"do": "print"}, 5)
            with pytest.raises(Exception, match=r"bad input \(at tools.py:\d+\); printed: about to fail$") as err:
                await adapter.invoke({"do": "raise", "text": ""}, 5)
            return notes, printed.output, err.value
        finally:
            await adapter.close()

    notes, output, _ = asyncio.run(main())
    assert notes == [f"calls tools:act (a function from {folder.resolve() / 'tools.py'})"]
    assert output == {"result": "printed"}
    out, err = capsys.readouterr()
    assert out == "ours\n"
    assert "hello from the skill" not in err and "to stderr" not in err
    assert sys.stdout is not None and type(sys.stdout).__name__ != "_Router"


def test_an_interrupt_while_modules_import_stops_with_nothing_written(tmp_path):
    folder = custom_skill(tmp_path / "slow-import", "tools:run",
                          "import time\ntime.sleep(1)\ndef run(d):\n    return d\n")
    plan = build_plan([load_skill(folder)], tasks(("a", {"text": "x"})), runs=1, default_evaluator="exact")

    async def main() -> Any:
        stop = asyncio.Event()
        asyncio.get_running_loop().call_later(0.2, stop.set)
        return await evaluate(plan, RunSettings(), store_path=tmp_path / "s.db", output_dir=tmp_path / "r",
                              formats=["json"], stop=stop)

    began = time.perf_counter()
    outcome = asyncio.run(main())
    assert outcome.interrupted and outcome.results == [] and outcome.report_files == []
    assert time.perf_counter() - began < 0.9
    assert not (tmp_path / "s.db").exists() and not (tmp_path / "r").exists()
