"""Scorers added by registration: an async scorer that awaits a service injected from above (a real command
judge running the fake judge program), its deadline, and a plan without the service."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest
from fakes import fake_judge

from eval_skills.adapters.fake import FakeAdapter
from eval_skills.errors import InputError, ScorerError
from eval_skills.formats.benchmark import Benchmark, Task
from eval_skills.formats.skill import load_skill
from eval_skills.judges import ScoreRequest, ScoreVerdict
from eval_skills.results import Score
from eval_skills.scoring.registry import SCORERS, ScoringContext, scorer
from eval_skills.tool_skills.plan import build_plan
from eval_skills.tool_skills.runner import RunSettings, execute


def _needs_judge(task: Task, options: Any, ctx: ScoringContext) -> None:
    if "judge" not in ctx.services:
        raise ScorerError("judged needs a judge (none was given)")
    if not isinstance(task.expectedOutput.rubric, str):
        raise ScorerError("judged needs expectedOutput.rubric")


@scorer("judged", check=_needs_judge)
async def judged(output: Any, task: Task, options: Any, ctx: ScoringContext) -> Score:
    rubric = task.expectedOutput.rubric
    judgement = await ctx.services["judge"].judge(ScoreRequest(rubric=rubric, output=output))
    if not judgement.ok:
        raise ScorerError(f"the judge failed: {judgement.error}")
    verdict = judgement.verdict
    assert isinstance(verdict, ScoreVerdict)
    return Score(verdict.score, verdict.score >= 1.0, verdict.reason)


def _skill(tmp_path: Path) -> Any:
    folder = tmp_path / "echo"
    folder.mkdir()
    (folder / "skill.json").write_text(json.dumps({"id": "echo", "name": "echo", "version": "1.0.0",
                                                   "adapterType": "custom", "entrypoint": "in-process"}))
    return load_skill(folder)


def _bench() -> Benchmark:
    # the original's name of the rubric, judgePrompt, is read as rubric
    return Benchmark.model_validate({"id": "b", "tasks": [
        {"id": "both", "inputData": "Paris, France", "expectedOutput": {"judgePrompt": 'names "Paris" and "France"'}},
        {"id": "one", "inputData": "Paris", "expectedOutput": {"judgePrompt": 'names "Paris" and "France"'}},
    ]})


def _run(plan: Any) -> dict[str, Any]:
    outcome = asyncio.run(execute(plan, RunSettings(concurrency=2), lambda skill: FakeAdapter(lambda inp: inp)))
    return {r.task_id: r for r in outcome.results}


def test_an_async_scorer_awaits_the_judge_given_to_the_plan(tmp_path):
    assert SCORERS["judged"].is_async
    with build_plan([_skill(tmp_path)], _bench(), runs=1, default_evaluator="judged",
                    services={"judge": fake_judge(timeout=30)}) as plan:
        results = _run(plan)
    assert (results["both"].status, results["both"].score, results["both"].reason) == ("pass", 1.0,
                                                                                        "2 of 2 phrases found")
    assert (results["one"].status, results["one"].score) == ("fail", 0.5)


def test_an_async_scorer_past_its_deadline_is_that_tasks_error(tmp_path):
    with build_plan([_skill(tmp_path)], _bench(), runs=1, default_evaluator="judged", scorer_timeout_s=1.0,
                    services={"judge": fake_judge(mode="hang", timeout=60)}) as plan:
        started = time.monotonic()
        results = _run(plan)
    assert time.monotonic() - started < 5  # cancelled at the deadline, the judge's own timeout never reached
    assert {r.status for r in results.values()} == {"error"}
    assert results["one"].error == "scorer judged did not finish within 1s" and results["one"].latency_ms is not None


def test_a_plan_without_the_service_stops_before_anything_runs(tmp_path):
    with pytest.raises(InputError) as info:
        build_plan([_skill(tmp_path)], _bench(), runs=1, default_evaluator="judged")
    assert info.value.line().startswith("benchmark b: $.tasks[0].expectedOutput: judged needs a judge")


def test_a_plain_call_of_an_async_scorer_says_to_await_it():
    task = _bench().tasks[0]
    with pytest.raises(TypeError, match="scorer judged is async"):
        SCORERS["judged"]("x", task, {}, ScoringContext())
