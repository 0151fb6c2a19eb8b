"""Workspaces and reports for the review page's tests and bench, written in the documented shapes.

``make_workspace`` writes what ``eval-skills paired`` and ``eval-skills routing`` write (see
``eval_skills.formats.workspace``): iterations of cases x arms x runs with ``outputs/response.md``,
``grading.json``, ``timing.json``, ``transcript.jsonl``, per case ``eval_metadata.json``, ``inputs/`` and
``comparison.json``, per iteration ``benchmark.json`` and ``feedback.json``, and a ``routing-1`` folder.
Every file goes through the format models, so a shape that drifts from them fails here first.
``make_reports`` and ``make_store`` write tool-skill evaluations: a report file and a SQLite store.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eval_skills.formats.routing_results import (
    RoutingMetrics,
    RoutingOverall,
    RoutingQueryResult,
    RoutingResults,
    RoutingRunRecord,
)
from eval_skills.formats.workspace import (
    ABSummary,
    ArmSummary,
    Benchmark,
    BenchmarkRun,
    BenchmarkStatistics,
    Comparison,
    DeltaEstimate,
    EvalMetadata,
    Expectation,
    Feedback,
    FinalEvent,
    Grading,
    GradingSummary,
    MessageEvent,
    NonDiscriminating,
    PassAtK,
    Review,
    RunResult,
    SkillEvent,
    Stat,
    Timing,
    ToolCallEvent,
    UsageEvent,
    run_id,
)

HOSTILE = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">'
ASSERTIONS = ["The response names the refund exception.", "The response cites the evidence.",
              "The response is polite."]


@dataclass
class MadeWorkspace:
    root: Path
    iteration: Path
    cases: list[str]
    arms: list[str]
    runs: int
    error_run: str | None = None  # the run id of the error run
    run_ids: list[str] = field(default_factory=list)


def _write(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if hasattr(data, "model_dump"):
        data = data.model_dump(mode="json")
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def passes(c: int, arm: str, k: int, j: int) -> bool:
    """Whether assertion j passes in run k of arm for case c: the skill helps with the first two."""
    if j == 2:
        return True
    if arm == "with_skill":
        return (c + k + j) % 5 != 0
    return (c * 3 + k + j) % 3 == 0


def response_text(key: str, arm: str, k: int, iteration: int, hostile: bool) -> str:
    text = (f"# Answer to case {key}\n\nThe **{arm}** answer, run {k}, iteration {iteration}.\n\n"
            f"- refund exception 4.2\n- evidence: order #{k}\n\n```python\ndef refund_{k}():\n    return {k}\n```\n")
    return text + (f"\nInjected: {HOSTILE} and [a link](javascript:alert(1)) ![pic](http://example.com/x.png)\n"
                   if hostile else "")


def _stat(values: list[float]) -> Stat:
    if not values:
        return Stat(mean=None, stddev=None, min=None, max=None)
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return Stat(mean=round(statistics.fmean(values), 4), stddev=round(sd, 4), min=round(min(values), 4),
                max=round(max(values), 4))


def make_iteration(root: Path, n: int, *, cases: int, runs: int, arms: tuple[str, ...], hostile: bool = False,
                   error_run: bool = True, transcript_events: int = 6) -> MadeWorkspace:
    iteration = root / f"iteration-{n}"
    keys = [str(c + 1) for c in range(cases)]
    if hostile:
        keys[0] = "q<img src=x onerror=\"window.__pwned=3\">'&"
    made = MadeWorkspace(root=root, iteration=iteration, cases=keys, arms=list(arms), runs=runs)
    bench_runs: list[BenchmarkRun] = []
    for c, key in enumerate(keys):
        case_dir = iteration / f"eval-{key}"
        prompt = f"Review the attached support request {key} and propose the next action."
        if hostile and c == 0:
            prompt += " " + HOSTILE
        _write(case_dir / "eval_metadata.json",
               EvalMetadata(eval_id=int(key) if key.isdigit() else key, prompt=prompt,
                            expected_output="Identifies the refund exception and escalates it.",
                            files=["evals/files/request.txt"], assertions=ASSERTIONS))
        (case_dir / "inputs").mkdir(parents=True, exist_ok=True)
        (case_dir / "inputs" / "request.txt").write_text(
            f"Customer {key} asks for a refund after 40 days." + (f" {HOSTILE}" if hostile else ""), encoding="utf-8")
        comparisons = []
        for k in range(1, runs + 1):
            for arm in arms:
                rdir = case_dir / arm / f"run-{k}"
                rid = run_id(key, arm, k)
                made.run_ids.append(rid)
                is_error = error_run and c == 1 and arm != "with_skill" and k == runs
                tokens = 1000 + 100 * c + 10 * k + (500 if arm == "with_skill" else 0)
                seconds = round(10 + c + k * 0.5 + (2 if arm == "with_skill" else 0), 1)
                _write(rdir / "timing.json", Timing(total_tokens=tokens, duration_ms=int(seconds * 1000),
                                                    total_duration_seconds=seconds, token_measurement="measured"))
                events: list[Any] = [MessageEvent(role="user", text=prompt)]
                if arm == "with_skill":
                    events.append(SkillEvent(skill="support-triage", detected_by="Skill tool call"))
                for e in range(max(0, transcript_events - 4)):
                    events.append(ToolCallEvent(id=f"t{e}", name="Read", input={"file_path": "request.txt"},
                                                result=f"Customer {key} asks for a refund." +
                                                (f" {HOSTILE}" if hostile else "")))
                events.append(UsageEvent(input_tokens=tokens - 200, output_tokens=200, total_tokens=tokens))
                text = response_text(key, arm, k, n, hostile and c == 0 and arm == "with_skill")
                if is_error:
                    made.error_run = rid
                    lines = [m.model_dump_json() for m in events[:2]]
                    (rdir).mkdir(parents=True, exist_ok=True)
                    (rdir / "transcript.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
                    _write(rdir / "grading.json", Grading(expectations=[], summary=GradingSummary(
                        passed=0, failed=0, total=0, pass_rate=None), error="agent timed out after 600 s"))
                    bench_runs.append(BenchmarkRun(eval_id=key, configuration=arm, run_number=k, result=RunResult(
                        pass_rate=None, time_seconds=seconds, tokens=tokens, errors=1)))
                    continue
                events.append(FinalEvent(text=text))
                (rdir / "outputs").mkdir(parents=True, exist_ok=True)
                (rdir / "outputs" / "response.md").write_text(text, encoding="utf-8")
                (rdir / "outputs" / "plan.json").write_text(json.dumps({"case": key, "arm": arm}), encoding="utf-8")
                if hostile and c == 0:
                    (rdir / "outputs" / "<img src=x onerror=alert(1)>.txt").write_text(HOSTILE, encoding="utf-8")
                (rdir / "transcript.jsonl").write_text(
                    "\n".join(m.model_dump_json() for m in events) + "\n", encoding="utf-8")
                exps = []
                for j, assertion in enumerate(ASSERTIONS):
                    ok = passes(c, arm, k, j)
                    evidence = f"{'Found' if ok else 'Did not find'} it in the response of run {k}."
                    if hostile and c == 0:
                        evidence += " " + HOSTILE
                    exps.append(Expectation(text=assertion, passed=ok, evidence=evidence))
                passed = sum(e.passed is True for e in exps)
                summary = GradingSummary(passed=passed, failed=len(exps) - passed, total=len(exps),
                                         pass_rate=round(passed / len(exps), 4))
                _write(rdir / "grading.json", Grading(expectations=exps, summary=summary))
                bench_runs.append(BenchmarkRun(
                    eval_id=int(key) if key.isdigit() else key, configuration=arm, run_number=k,
                    result=RunResult(pass_rate=summary.pass_rate, passed=passed, failed=summary.failed, total=3,
                                     time_seconds=seconds, tokens=tokens, tool_calls=transcript_events - 4),
                    expectations=exps))
            if len(arms) > 1:
                order = {"A": arms[0], "B": arms[1]} if (c + k) % 2 else {"A": arms[1], "B": arms[0]}
                winner = "A" if order["A"] == "with_skill" else "B"
                comparisons.append(Comparison(run_number=k, order=order, winner=winner, winner_arm="with_skill",
                                              reasoning="The skill's answer names the exception." +
                                              (f" {HOSTILE}" if hostile else "")))
        _write(case_dir / "comparison.json", {"comparisons": [x.model_dump(mode="json") for x in comparisons]})
    _write(iteration / "benchmark.json", benchmark(bench_runs, arms, keys, runs))
    _write(iteration / "feedback.json", Feedback(reviews=[Review(run_id=r) for r in made.run_ids]))
    return made


def benchmark(runs: list[BenchmarkRun], arms: tuple[str, ...], keys: list[str], n_runs: int) -> Benchmark:
    summary: dict[str, Any] = {}
    for arm in arms:
        good = [r for r in runs if r.configuration == arm and not r.result.errors]
        summary[arm] = ArmSummary(pass_rate=_stat([r.result.pass_rate or 0.0 for r in good]),
                                  time_seconds=_stat([r.result.time_seconds or 0.0 for r in good]),
                                  tokens=_stat([float(r.result.tokens or 0) for r in good])).model_dump()
    base = arms[1] if len(arms) > 1 else arms[0]
    summary["delta"] = {m: round(summary[arms[0]][m]["mean"] - summary[base][m]["mean"], 4)
                        for m in ("pass_rate", "time_seconds", "tokens")}
    non_disc = [NonDiscriminating(eval_id=k, assertion=ASSERTIONS[2], kind="always_pass",
                                  counts={a: {"passed": n_runs, "runs": n_runs} for a in arms}) for k in keys[:2]]
    return Benchmark(
        metadata={"skill_name": "support-triage", "timestamp": "2026-01-15T10:30:00Z", "agent": "claude-code",
                  "model": "a-model", "judge": "command", "seed": 7, "runs_per_configuration": n_runs,
                  "evals_run": keys},
        runs=runs, run_summary=summary,
        statistics=BenchmarkStatistics(
            pass_rate_delta=DeltaEstimate(estimate=summary["delta"]["pass_rate"], ci_low=0.1234, ci_high=0.5678,
                                          p_value=0.0312, cases=len(keys), note="A note on the estimate."),
            pass_at_k={a: PassAtK(k=n_runs, pass_at_k=0.9, pass_hat_k=0.4) for a in arms}),
        non_discriminating=non_disc, comparison=ABSummary(wins=len(keys) * n_runs - 1, ties=1, losses=0),
        notes=["Assertion 3 passes everywhere."])


def make_routing(root: Path, n: int = 1, hostile: bool = False) -> Path:
    folder = root / f"routing-{n}"

    def record(run: int, triggered: bool | None, error: str | None = None) -> RoutingRunRecord:
        return RoutingRunRecord(run=run, status="ok" if triggered is not None else "timeout",
                                triggered=triggered, skills_invoked=["support-triage"] if triggered else [],
                                error=error, duration_s=1.5)

    error = "timed out after 300 s" + (f" {HOSTILE}" if hostile else "")
    queries = [
        RoutingQueryResult(index=1, query="Triage this refund request", should_trigger=True,
                           invocation_type="explicit", runs=3, triggers=3, errors=0, trigger_rate=1.0,
                           trigger_rate_ci=(0.4385, 1.0), passed=True,
                           run_results=[record(k, True) for k in (1, 2, 3)]),
        # no run_results (an older file): its runs are found as folders
        RoutingQueryResult(index=2, query="Is this support ticket urgent?", should_trigger=True,
                           invocation_type="implicit", runs=3, triggers=1, errors=0, trigger_rate=0.3333,
                           trigger_rate_ci=(0.0615, 0.7923), passed=False, distractors_invoked={"ticket-summary": 2}),
        RoutingQueryResult(index=3, query="Write a haiku about autumn" + (f" {HOSTILE}" if hostile else ""),
                           should_trigger=False, invocation_type="negative", runs=3, triggers=0, errors=1,
                           trigger_rate=0.0, trigger_rate_ci=(0.0, 0.6576), passed=True,
                           run_results=[record(1, False), record(2, None, error), record(3, False)]),
    ]
    metrics = RoutingOverall(precision=1.0, recall=0.5, f1=0.6667, accuracy=0.6667, tp=1, fp=0, fn=1, tn=1,
                             queries=3,
                             by_invocation_type={"explicit": RoutingMetrics(precision=1.0, recall=1.0, f1=1.0,
                                                                            accuracy=1.0, tp=1, queries=1)})
    _write(folder / "routing_results.json", RoutingResults(metadata={"skill_name": "support-triage", "runs": 3},
                                                           queries=queries, metrics=metrics))
    for i, q in enumerate(queries, 1):
        for k in range(1, q.runs + 1):
            events: list[Any] = [MessageEvent(role="user", text=q.query)]
            if k <= q.triggers:
                events.append(SkillEvent(skill="support-triage"))
            events.append(FinalEvent(text=f"Done with query {i}, run {k}."))
            path = folder / f"query-{i}" / f"run-{k}" / "transcript.jsonl"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("\n".join(e.model_dump_json() for e in events) + "\n", encoding="utf-8")
    return folder


def make_workspace(root: Path, *, cases: int = 3, runs: int = 2, arms: tuple[str, ...] = ("with_skill",
                   "without_skill"), iterations: int = 2, routing: bool = True, hostile: bool = False,
                   transcript_events: int = 6) -> MadeWorkspace:
    """A workspace with ``iterations`` iterations (the last one returned) and, if asked, routing results."""
    root.mkdir(parents=True, exist_ok=True)
    made = None
    for n in range(1, iterations + 1):
        made = make_iteration(root, n, cases=cases, runs=runs, arms=arms, hostile=hostile,
                              transcript_events=transcript_events)
    assert made is not None
    if iterations > 1:  # earlier feedback, shown beside the run it was about
        first = made.run_ids[0]
        _write(root / f"iteration-{iterations - 1}" / "feedback.json",
               Feedback(reviews=[Review(run_id=first, feedback="Too long last time.")], status="complete"))
    if routing:
        make_routing(root, hostile=hostile)
    return made


# ---- tool-skill evaluations --------------------------------------------------------------------------


def task_results(skill: str, tasks: int, runs: int, good: bool, hostile: bool = False) -> list[Any]:
    from eval_skills.results import TaskResult, Usage

    results = []
    for t in range(tasks):
        for k in range(1, runs + 1):
            ok = good or (t + k) % 2 == 0
            output: Any = {"result": f"**{skill}** answer to task-{t}, run {k}"}
            if hostile and t == 0:
                output = {"result": f"{HOSTILE}", "extra": HOSTILE}
            results.append(TaskResult(
                task_id=f"task-{t}", skill_id=skill, run_id=k, status="pass" if ok else "fail",
                score=1.0 if ok else 0.0, latency_ms=12.5 + t + k, output=output, scorer_type="contains",
                reason=("found" if ok else "not found") + (f" {HOSTILE}" if hostile else ""),
                usage=Usage(prompt_tokens=10, completion_tokens=5, total_tokens=15)))
    return results


def report_for(skill: str, version: str, results: list[Any], benchmark_id: str = "custom") -> dict[str, Any]:
    passed = sum(r.status == "pass" for r in results)
    return {"skillId": skill, "skillVersion": version, "skillName": skill, "benchmarkId": benchmark_id,
            "benchmarkVersion": "1.0.0", "timestamp": "2026-01-15T10:30:00.000Z",
            "runs": max(r.run_id for r in results),
            "summary": {"totalTasks": len(results), "passed": passed, "failed": len(results) - passed, "errors": 0,
                        "timeouts": 0, "completionRate": round(passed / len(results), 4), "partialScore": 0.5,
                        "errorRate": 0.0, "consistencyScore": None, "compositeScore": 0.75},
            "latency": {"p50Ms": 13.0, "p95Ms": 15.5, "p99Ms": 15.5},
            "tokenCost": {"promptTokens": 10 * len(results), "completionTokens": 5 * len(results),
                          "totalTokens": 15 * len(results)},
            "taskResults": [r.to_json() for r in results]}


def make_reports(folder: Path, *, tasks: int = 3, runs: int = 2, hostile: bool = False) -> Path:
    """A report file with two skills evaluated on the same tasks."""
    from eval_skills.reports import write_reports

    reports = [report_for("alpha", "1.0.0", task_results("alpha", tasks, runs, True, hostile)),
               report_for("beta", "2.0.0", task_results("beta", tasks, runs, False))]
    return write_reports(reports, ["json"], folder, timestamp="2026-01-15T10-30-00-000Z")[0]


def make_store(path: Path, *, tasks: int = 3, runs: int = 1) -> tuple[str, str]:
    """A store with two finished evaluations of skill ``alpha`` (the older failing some tasks); their ids."""
    from eval_skills.store.sqlite import Store

    ids = []
    with Store.open(path) as store:
        for version, good in (("1.0.0", False), ("1.1.0", True)):
            results = task_results("alpha", tasks, runs, good)
            eid = store.begin_evaluation(benchmark_id="custom", benchmark_version="1.0.0", config={"runs": runs},
                                         tool_version="0.1.0")
            store.add_results(eid, results)
            store.finish_evaluation(eid, status="finished", reports=[report_for("alpha", version, results)])
            ids.append(eid)
    return ids[0], ids[1]
