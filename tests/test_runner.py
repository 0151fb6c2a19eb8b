"""The scheduler with the in-process FakeAdapter: concurrency, timeouts, retries, cancellation."""

import asyncio
import json
from pathlib import Path

import pytest

from eval_skills.adapters.fake import FakeAdapter
from eval_skills.errors import SkillCrashed, SkillRpcError, SkillTimeout
from eval_skills.formats.benchmark import Benchmark
from eval_skills.formats.skill import load_skill
from eval_skills.results import Invocation, Usage
from eval_skills.tool_skills.plan import build_plan
from eval_skills.tool_skills.runner import RunSettings, execute


def make_skill(tmp_path: Path, skill_id="echo", input_schema=None):
    folder = tmp_path / skill_id
    folder.mkdir()
    manifest = {"id": skill_id, "name": skill_id, "version": "1.0.0", "adapterType": "custom",
                "entrypoint": "in-process"}
    if input_schema:
        manifest["inputSchema"] = input_schema
    (folder / "skill.json").write_text(json.dumps(manifest))
    return load_skill(folder)


def bench(n=5, **task_extra):
    return Benchmark.model_validate({"id": "b", "tasks": [
        {"id": f"t{i}", "inputData": {"x": str(i)}, "expectedOutput": {"type": "exact", "value": str(i)},
         **task_extra} for i in range(n)]})


def run(plan, responder, **settings):
    adapters = {}

    def factory(skill):
        adapters[skill.id] = FakeAdapter(responder)
        return adapters[skill.id]

    outcome = asyncio.run(execute(plan, RunSettings(**settings), factory))
    return outcome, adapters


def test_every_item_runs_once_and_is_scored(tmp_path):
    plan = build_plan([make_skill(tmp_path)], bench(6), runs=2, default_evaluator="exact")
    outcome, adapters = run(plan, lambda inp: {"result": inp["x"] if inp["x"] != "3" else "wrong"})
    assert len(outcome.results) == 12
    assert sorted((r.run_id, r.task_id) for r in outcome.results) == sorted(
        (run_id, f"t{i}") for run_id in (1, 2) for i in range(6))
    failed = [r for r in outcome.results if r.status == "fail"]
    assert {r.task_id for r in failed} == {"t3"} and len(failed) == 2
    assert adapters["echo"].started and adapters["echo"].closed


def test_concurrency_is_bounded(tmp_path):
    plan = build_plan([make_skill(tmp_path)], bench(20), runs=1, default_evaluator="exact")
    live = 0
    peak = 0

    async def responder(inp):
        nonlocal live, peak
        live += 1
        peak = max(peak, live)
        await asyncio.sleep(0.01)
        live -= 1
        return {"result": inp["x"]}

    outcome, _ = run(plan, responder, concurrency=3)
    assert peak == 3
    assert all(r.status == "pass" for r in outcome.results)


def test_timeout_is_a_timeout_not_an_error_and_task_timeout_wins(tmp_path):
    b = Benchmark.model_validate({"id": "b", "tasks": [
        {"id": "slow", "inputData": {"x": "1"}, "expectedOutput": {"value": "1"}, "timeoutMs": 50},
        {"id": "fast", "inputData": {"x": "2"}, "expectedOutput": {"value": "2"}}]})
    plan = build_plan([make_skill(tmp_path)], b, runs=1, default_evaluator="exact")

    async def responder(inp):
        if inp["x"] == "1":
            await asyncio.sleep(5)
        return {"result": inp["x"]}

    outcome, _ = run(plan, responder, timeout_ms=3000)
    by_id = {r.task_id: r for r in outcome.results}
    assert by_id["slow"].status == "timeout" and by_id["slow"].latency_ms < 2000
    assert by_id["fast"].status == "pass"


def test_retries_apply_to_errors_but_not_to_rpc_errors(tmp_path):
    plan = build_plan([make_skill(tmp_path)], bench(2), runs=1, default_evaluator="exact")
    calls = {"t0": 0, "t1": 0}

    def responder(inp):
        key = f"t{inp['x']}"
        calls[key] += 1
        if key == "t0" and calls[key] < 3:
            raise SkillCrashed("flaky")
        if key == "t1":
            raise SkillRpcError("no such operation", code=-32601)
        return {"result": inp["x"]}

    outcome, _ = run(plan, responder, retries=2, backoff_ms=1)
    by_id = {r.task_id: r for r in outcome.results}
    assert by_id["t0"].status == "pass" and by_id["t0"].attempts == 3
    assert by_id["t0"].error is None  # the earlier attempts' error is not the result's
    assert by_id["t1"].status == "error" and by_id["t1"].attempts == 1 and calls["t1"] == 1
    assert "no such operation" in by_id["t1"].error


def test_retries_exhausted_keep_the_last_error(tmp_path):
    plan = build_plan([make_skill(tmp_path)], bench(1), runs=1, default_evaluator="exact")

    def responder(inp):
        raise SkillCrashed("always broken")

    outcome, _ = run(plan, responder, retries=1, backoff_ms=1)
    (result,) = outcome.results
    assert result.status == "error" and result.attempts == 2 and result.error == "always broken"


def _schema_plan(tmp_path, strict):
    schema = {"type": "object", "properties": {"x": {"type": "string", "maxLength": 1}}, "required": ["x"]}
    b = Benchmark.model_validate({"id": "b", "tasks": [
        {"id": "ok", "inputData": {"x": "1"}, "expectedOutput": {"value": "1"}},
        {"id": "bad", "inputData": {"x": "12"}, "expectedOutput": {"value": "12"}}]})
    return build_plan([make_skill(tmp_path, input_schema=schema)], b, runs=1, default_evaluator="exact",
                      strict_input=strict)


def test_input_schema_mismatch_is_sent_anyway_with_a_warning(tmp_path):
    outcome, adapters = run(_schema_plan(tmp_path, strict=False), lambda inp: {"result": inp["x"]})
    by_id = {r.task_id: r for r in outcome.results}
    assert by_id["ok"].status == "pass" and "warnings" not in by_id["ok"].to_json()
    bad = by_id["bad"]
    assert bad.status == "pass" and bad.error is None
    (warning,) = bad.to_json()["warnings"]
    assert "inputSchema" in warning and "$.x" in warning
    assert sorted(adapters["echo"].calls, key=str) == [{"x": "1"}, {"x": "12"}]


def test_strict_input_makes_a_mismatch_the_task_error_and_other_tasks_run(tmp_path):
    outcome, adapters = run(_schema_plan(tmp_path, strict=True), lambda inp: {"result": inp["x"]})
    by_id = {r.task_id: r for r in outcome.results}
    assert by_id["ok"].status == "pass"
    assert by_id["bad"].status == "error" and "inputSchema" in by_id["bad"].error
    assert adapters["echo"].calls == [{"x": "1"}]


def test_a_scorer_that_raises_is_a_task_error(tmp_path):
    (tmp_path / "bad_scorer.py").write_text("def score(o, e, t):\n    raise RuntimeError('scorer bug')\n")
    b = Benchmark.model_validate({"id": "b", "tasks": [
        {"id": "c", "inputData": {}, "expectedOutput": {"customScorerPath": "bad_scorer.py"},
         "evaluator": {"type": "custom"}},
        {"id": "e", "inputData": {"x": "1"}, "expectedOutput": {"value": "1"}}]})
    plan = build_plan([make_skill(tmp_path)], b, runs=1, default_evaluator="exact", base_dir=tmp_path)
    outcome, _ = run(plan, lambda inp: {"result": inp.get("x")})
    by_id = {r.task_id: r for r in outcome.results}
    assert by_id["c"].status == "error" and "scorer bug" in by_id["c"].error
    assert by_id["e"].status == "pass"


def test_a_scorer_failing_after_a_retried_timeout_is_an_error_not_a_timeout(tmp_path):
    (tmp_path / "bad_scorer.py").write_text("def score(o, e, t):\n    raise RuntimeError('scorer bug')\n")
    b = Benchmark.model_validate({"id": "b", "tasks": [
        {"id": "c", "inputData": {}, "expectedOutput": {"customScorerPath": "bad_scorer.py"},
         "evaluator": {"type": "custom"}}]})
    plan = build_plan([make_skill(tmp_path)], b, runs=1, default_evaluator="exact", base_dir=tmp_path)
    calls = []

    def responder(inp):
        calls.append(inp)
        if len(calls) == 1:
            raise SkillTimeout("no reply within 1s")
        return {"result": "answered"}

    outcome, _ = run(plan, responder, retries=1, backoff_ms=1)
    (result,) = outcome.results
    assert (result.status, result.attempts) == ("error", 2)  # the skill answered the retry: its status is not kept
    assert result.error == "custom scorer bad_scorer.py raised RuntimeError: scorer bug"


def test_usage_is_carried_to_the_result(tmp_path):
    plan = build_plan([make_skill(tmp_path)], bench(1), runs=1, default_evaluator="exact")
    outcome, _ = run(plan, lambda inp: Invocation({"result": "0"}, Usage(3, 4, 7)))
    assert outcome.results[0].usage == Usage(3, 4, 7)


def test_stop_event_keeps_what_finished(tmp_path):
    plan = build_plan([make_skill(tmp_path)], bench(50), runs=1, default_evaluator="exact")
    finished = []

    async def main():
        stop = asyncio.Event()

        async def responder(inp):
            if len(finished) >= 5:
                stop.set()
            await asyncio.sleep(0.005)
            return {"result": inp["x"]}

        adapter = FakeAdapter(responder)
        outcome = await execute(plan, RunSettings(concurrency=2), lambda s: adapter,
                                on_result=finished.append, stop=stop)
        return outcome, adapter

    outcome, adapter = asyncio.run(main())
    assert outcome.interrupted
    assert 5 <= len(outcome.results) < 50
    assert outcome.results == finished
    assert adapter.closed


def test_adapter_that_cannot_start_turns_its_tasks_into_errors(tmp_path):
    plan = build_plan([make_skill(tmp_path, "a"), make_skill(tmp_path, "b")], bench(2), runs=1,
                      default_evaluator="exact")

    class Broken(FakeAdapter):
        async def start(self):
            raise SkillCrashed("server exited with code 3")

    def factory(skill):
        return Broken(lambda i: None) if skill.id == "a" else FakeAdapter(lambda i: {"result": i["x"]})

    outcome = asyncio.run(execute(plan, RunSettings(), factory))
    status = {(r.skill_id, r.task_id): (r.status, r.error) for r in outcome.results}
    assert status[("a", "t0")][0] == "error" and "code 3" in status[("a", "t0")][1]
    assert status[("b", "t0")] == ("pass", None)


def test_unknown_scorer_in_a_task_names_the_task_field(tmp_path):
    from eval_skills.errors import UnknownScorerError

    b = Benchmark.model_validate({"id": "b", "tasks": [{"id": "x", "evaluator": {"type": "fuzzy"}}]})
    with pytest.raises(UnknownScorerError) as info:
        build_plan([make_skill(tmp_path)], b, runs=1, default_evaluator="exact", benchmark_file="bench.json")
    assert "bench.json: $.tasks[0].evaluator.type" in info.value.line()


def test_custom_scorer_path_may_not_leave_the_benchmark_folder(tmp_path):
    from eval_skills.errors import InputError

    inner = tmp_path / "inner"
    inner.mkdir()
    (tmp_path / "evil.py").write_text("def score(o, e, t): return True\n")
    b = Benchmark.model_validate({"id": "b", "tasks": [
        {"id": "x", "evaluator": {"type": "custom"}, "expectedOutput": {"customScorerPath": "../evil.py"}}]})
    with pytest.raises(InputError, match="leaves the benchmark"):
        build_plan([make_skill(tmp_path)], b, runs=1, default_evaluator="exact", base_dir=inner)


def test_timeout_precedence_task_then_user_then_skill_then_default():
    settings = RunSettings(timeout_ms=30_000)
    assert settings.timeout_for(None, None) == 30_000
    assert settings.timeout_for(None, 5_000) == 5_000
    assert RunSettings(timeout_override_ms=500).timeout_for(None, 5_000) == 500
    assert RunSettings(timeout_override_ms=500).timeout_for(2_000, 5_000) == 2_000


def test_interrupt_while_skills_start_records_nothing_and_stops_them(tmp_path):
    plan = build_plan([make_skill(tmp_path)], bench(3), runs=1, default_evaluator="exact")

    class SlowStart(FakeAdapter):
        async def start(self):
            await asyncio.sleep(30)

    adapter = SlowStart(lambda i: {"result": i["x"]})

    async def main():
        stop = asyncio.Event()
        asyncio.get_running_loop().call_later(0.1, stop.set)
        return await execute(plan, RunSettings(), lambda s: adapter, stop=stop)

    outcome = asyncio.run(asyncio.wait_for(main(), 5))
    assert outcome.interrupted and outcome.results == []
    assert adapter.closed and adapter.calls == []


def test_composite_latency_budget_follows_the_timeout_the_tasks_ran_with(tmp_path):
    from eval_skills.results import TaskResult
    from eval_skills.tool_skills.aggregate import build_reports

    plan = build_plan([make_skill(tmp_path)], bench(1), runs=1, default_evaluator="exact")
    results = [TaskResult("t0", "echo", 1, "pass", 1.0, 500.0)]
    default = build_reports(plan, results, timestamp="t", default_timeout_ms=1000)
    overridden = build_reports(plan, results, timestamp="t", default_timeout_ms=1000, timeout_override_ms=5000)
    # 0.5 + 0.2 * (1 - 500/1000) + 0.3 and 0.5 + 0.2 * (1 - 500/5000) + 0.3
    assert default[0]["summary"]["compositeScore"] == 0.9
    assert overridden[0]["summary"]["compositeScore"] == 0.98
