"""Files of the original eval-skills (TypeScript) load and score as it documents; misspellings are still caught."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from original_shapes import create_skill, init_project

from eval_skills.adapters.fake import FakeAdapter
from eval_skills.config import load_config
from eval_skills.errors import InputError
from eval_skills.formats.benchmark import Benchmark, load_benchmark_file, load_tasks_file
from eval_skills.formats.skill import load_skill
from eval_skills.reports import load_report_file, render_csv, render_html, render_markdown
from eval_skills.scoring.scorers import ScoringContext, get_scorer
from eval_skills.stats import bootstrap_ci, pass_at_k, pass_at_k_task, weighted_mean
from eval_skills.tool_skills.aggregate import build_reports
from eval_skills.tool_skills.plan import build_plan
from eval_skills.tool_skills.runner import RunSettings, execute

ORIGINAL = Path(__file__).parent / "original"


def write(path: Path, data) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def error_line(fn, *args, **kwargs) -> str:
    with pytest.raises(InputError) as info:
        fn(*args, **kwargs)
    return info.value.line()


# ---- skill.json and adapter.config.json ----------------------------------------------------------


@pytest.mark.parametrize("template,adapter_type", [("python_script", "subprocess"), ("http_request", "http"),
                                                   ("mcp_tool", "mcp")])
def test_every_create_template_loads(tmp_path, template, adapter_type):
    skill = load_skill(create_skill(tmp_path, "My Skill", template))
    assert skill.id == "my_skill" and skill.manifest.adapterType == adapter_type
    assert skill.adapter.type == adapter_type
    if template == "http_request":
        assert skill.adapter.retries == 1 and skill.adapter.timeoutMs == 15000
    if template == "python_script":
        assert (skill.adapter.command, skill.adapter.args) == ("python3", ["skill.py"])


def test_adapter_type_must_agree_with_skill_json(tmp_path):
    folder = create_skill(tmp_path, "s", "python_script")
    config = json.loads((folder / "adapter.config.json").read_text())
    write(folder / "adapter.config.json", {**config, "type": "http"})
    line = error_line(load_skill, folder)
    assert line.startswith(f"{folder.resolve() / 'adapter.config.json'}: $.type: type 'http' disagrees with "
                           "adapterType 'subprocess'")
    assert "\n" not in line


def test_skill_json_as_the_original_accepts_it(tmp_path):
    f = write(tmp_path / "s" / "skill.json", {
        "id": "WebSearch_V1", "version": "1.0", "adapterType": "subprocess", "entrypoint": "python3 s.py",
        "rootPath": "/somewhere/else", "metadata": {"openapi": {"method": "GET"}, "benchmarkResults": []}})
    skill = load_skill(f)
    assert skill.id == "WebSearch_V1" and skill.manifest.name == "WebSearch_V1"
    assert skill.manifest.version == "1.0"
    assert skill.root == (tmp_path / "s").resolve()  # rootPath never moves the skill out of its folder
    write(f, {"id": "x", "version": "1.0.0", "adapterType": "http", "entrypoint": "http://h/", "metadata": [1]})
    assert load_skill(f).manifest.metadata == [1]


@pytest.mark.parametrize("file,data,field", [
    ("skill.json", {"id": "x", "version": "1.0.0", "adapterType": "subprocess", "entrypoint": "e",
                    "inputSchem": {}}, "$.inputSchem"),
    ("adapter.config.json", {"retry": 2}, "$.retry"),
    ("adapter.config.json", {"method": "FETCH"}, "$.method"),
    ("adapter.config.json", {"type": "grpc"}, "$.type"),
])
def test_misspellings_of_known_keys_are_still_refused(tmp_path, file, data, field):
    folder = tmp_path / "s"
    write(folder / "skill.json", {"id": "x", "version": "1.0.0", "adapterType": "subprocess", "entrypoint": "e"})
    write(folder / file, data)
    line = error_line(load_skill, folder)
    assert f"{file}: {field}: " in line


# ---- benchmarks and tasks ------------------------------------------------------------------------


def test_benchmark_definitions_of_the_original_load():
    api = load_benchmark_file(ORIGINAL / "definitions" / "api-integration.json")
    assert api.scoringMethod == "weighted_mean" and [t.weight for t in api.tasks] == [1, 1, 2]
    assert api.tasks[0].prompt.startswith("Extract") and api.description
    gaia = load_benchmark_file(ORIGINAL / "definitions" / "gaia-like.json")
    assert gaia.scoringMethod == "mean" and gaia.domain == "general"
    assert all(t.inputData is None and t.metadata["level"] == 1 for t in gaia.tasks)


def test_judge_prompt_and_criteria_are_the_llm_judge_rubric_and_value_the_reference():
    judged = load_benchmark_file(ORIGINAL / "definitions" / "judged.json")
    criteria, prompt = (t.expectedOutput for t in judged.tasks)
    assert criteria.rubric == "The answer must use the weather tool correctly." and not criteria.model_extra
    assert prompt.rubric == "Is the answer correct and concise?" and not prompt.model_extra
    assert prompt.value == "Paris"
    assert "judgePrompt" not in prompt.model_dump() and "criteria" not in criteria.model_dump()


def test_two_rubrics_in_one_task_are_refused(tmp_path):
    f = write(tmp_path / "b.json", [{"id": "t", "expectedOutput": {"type": "llm_judge", "rubric": "a",
                                                                   "judgePrompt": "b"}}])
    line = error_line(load_tasks_file, f)
    assert "$[0].expectedOutput" in line and "rubric and judgePrompt both name the judge's rubric" in line


def test_custom_scorer_path_on_the_evaluator_is_the_expected_outputs(tmp_path):
    f = write(tmp_path / "t.json", [{"id": "t", "expectedOutput": {"type": "custom"},
                                     "evaluator": {"type": "custom", "customScorerPath": "s.py"}}])
    (task,) = load_tasks_file(f).tasks
    assert task.expectedOutput.customScorerPath == "s.py"
    assert task.evaluator is not None and task.evaluator.options() == {}


@pytest.mark.parametrize("data,field", [
    ({"id": "b", "scoringMetod": "mean", "tasks": [{"id": "t"}]}, "$.scoringMetod"),
    ({"id": "b", "scoringMethod": "median", "tasks": [{"id": "t"}]}, "$.scoringMethod"),
    ({"id": "b", "tasks": [{"id": "t", "wieght": 2}]}, "$.tasks[0].wieght"),
    ({"id": "b", "tasks": [{"id": "t", "weight": -1}]}, "$.tasks[0].weight"),
    ({"id": "b", "tasks": [{"id": "t", "promt": "x"}]}, "$.tasks[0].promt"),
    ({"id": "b", "passAtK": 2, "tasks": [{"id": "t"}]}, "$"),
])
def test_benchmark_misspellings_are_refused(tmp_path, data, field):
    f = write(tmp_path / "b.json", data)
    line = error_line(load_benchmark_file, f)
    assert line.startswith(f"{f}: {field}")


# ---- config --------------------------------------------------------------------------------------


def test_the_config_init_writes_is_read(tmp_path):
    init_project(tmp_path)
    config = load_config(cwd=tmp_path)
    assert config.format == ["json", "markdown"] and config.outputDir == "./reports"
    assert config.concurrency == 4 and config.timeoutMs == 30000


def test_format_and_default_formats_together_are_refused(tmp_path):
    f = write(tmp_path / "eval-skills.config.yaml", "format: [html]\ndefaultFormats: [json]\n")
    line = error_line(load_config, cwd=tmp_path)
    assert str(f) in line and "format and defaultFormats both set" in line


@pytest.mark.parametrize("text, where", [
    ("defaultFormats: [pdf]\n", "$.defaultFormats: "),
    ("defaultFormats: [json, 3]\n", "$.defaultFormats[1]: "),
    ("format: [pdf]\n", "$.format: "),
])
def test_a_bad_report_format_names_the_key_the_file_uses(tmp_path, text, where):
    f = write(tmp_path / "eval-skills.config.yaml", text)
    assert f"{f}: {where}" in error_line(load_config, cwd=tmp_path)


def test_yml_and_json_project_configs_are_read_like_the_original(tmp_path):
    write(tmp_path / "eval-skills.config.json", {"defaultFormats": ["csv"], "concurrency": 2})
    assert load_config(cwd=tmp_path).format == ["csv"]
    write(tmp_path / "eval-skills.config.yml", "concurrency: 3\n")  # .yml comes before .json
    assert load_config(cwd=tmp_path).concurrency == 3
    write(tmp_path / "eval-skills.config.yml", "defaultFormat: [csv]\n")
    assert "eval-skills.config.yml: $.defaultFormat: unknown field" in error_line(load_config, cwd=tmp_path)


# ---- scoring methods and the interval, by hand ---------------------------------------------------


def test_weighted_mean_by_hand():
    assert weighted_mean([1.0, 0.0, 0.5], [1, 2, 1]) == pytest.approx(1.5 / 4)
    assert weighted_mean([1.0, 0.0], [0, 0]) is None
    assert weighted_mean([1.0, 0.0, 1.0], [1e308, 1e308, 0]) == pytest.approx(0.5)  # sums past the float range
    assert weighted_mean([1.0, 0.5], [1e-320, 3e-320]) == pytest.approx(0.625)  # weights too small to multiply


def test_pass_at_k_by_hand():
    assert pass_at_k_task(5, 2, 2) == pytest.approx(1 - 3 / 10)  # 1 - C(3,2)/C(5,2)
    assert pass_at_k_task(4, 1, 1) == pytest.approx(0.25)
    assert pass_at_k_task(5, 0, 3) == 0.0 and pass_at_k_task(5, 5, 3) == 1.0
    assert pass_at_k_task(5, 3, 3) == pytest.approx(1 - 0 / 10)  # fewer failures than k: always a pass
    assert pass_at_k({"a": [True, False, False, False, True], "b": [False] * 5}, k=2) == pytest.approx(0.35)
    assert pass_at_k({"a": [True, False]}, k=3) is None  # fewer runs than k: cannot be estimated
    with pytest.raises(ValueError):
        pass_at_k_task(2, 1, 3)


def test_bootstrap_interval_by_hand():
    assert bootstrap_ci([1.0] * 12) == {"lower": 1.0, "upper": 1.0, "mean": 1.0, "level": 0.95}
    # two scores: a resample mean is 0 (p = 1/4), 0.5 (1/2) or 1 (1/4); of 1000 sorted means the 26th is 0
    # and the 976th is 1 unless the draw is wildly off (roughly 250 of each end)
    ci = bootstrap_ci([0.0, 1.0])
    assert ci is not None and (ci["lower"], ci["upper"]) == (0.0, 1.0) and abs(ci["mean"] - 0.5) < 0.05
    scores = [0.0, 1.0, 1.0, 0.5, 1.0, 0.0, 1.0, 1.0, 0.25, 1.0]
    assert bootstrap_ci(scores) == bootstrap_ci(list(reversed(scores)))  # seeded, order-free
    one = bootstrap_ci(scores)
    assert one is not None and one["lower"] <= sum(scores) / 10 <= one["upper"] and one["level"] == 0.95
    assert bootstrap_ci([]) is None


def test_bootstrap_of_pass_fail_scores_by_hand():
    # 7 passes in 10: a resample mean is K/10 with K ~ Binomial(10, 0.7). P(K <= 3) = 0.0106 and
    # P(K <= 4) = 0.0473, so of 1000 sorted means the 26th is 0.4 (about 11 are lower, 47 at most 0.4);
    # P(K <= 9) = 1 - 0.7^10 = 0.9718, so the 976th is 0.9 or 1.0; the mean of the means is 0.7 give or take
    # 0.005 (one standard deviation).
    ci = bootstrap_ci([1.0] * 7 + [0.0] * 3)
    assert ci is not None and ci["lower"] == 0.4 and ci["upper"] in (0.9, 1.0) and abs(ci["mean"] - 0.7) < 0.02
    # the same with three values (no shortcut): 0.5 cannot move the bounds below 0.35 or above 1
    mixed = bootstrap_ci([1.0] * 7 + [0.0] * 2 + [0.5])
    assert mixed is not None and 0.35 <= mixed["lower"] < 0.75 < mixed["upper"] <= 1.0
    assert abs(mixed["mean"] - 0.75) < 0.02


# ---- aggregation end to end with the in-process adapter ------------------------------------------


def _skill(tmp_path: Path, skill_id: str = "s"):
    return load_skill(write(tmp_path / skill_id / "skill.json", {
        "id": skill_id, "version": "1.0.0", "adapterType": "custom", "entrypoint": "in-process"}))


def _run(plan, responder):
    return asyncio.run(execute(plan, RunSettings(), lambda skill: FakeAdapter(responder)))


def _reports(plan, results):
    return build_reports(plan, results, timestamp="t", default_timeout_ms=30000)


def test_weighted_mean_benchmark_sets_partial_score_and_writes_weights(tmp_path):
    bench = load_benchmark_file(ORIGINAL / "definitions" / "api-integration.json")
    plan = build_plan([_skill(tmp_path)], bench, runs=1, default_evaluator="exact")
    answers = {"json": {"result": 123}, "code": {"result": True}, "response": {"result": False}}
    outcome = _run(plan, lambda inp: answers[next(iter(inp))])
    (report,) = _reports(plan, outcome.results)
    # passes weigh 1 + 1, the failure 2: (1 + 1 + 0) / 4
    assert report["summary"]["partialScore"] == 0.5 and report["summary"]["completionRate"] == round(2 / 3, 4)
    assert [r["weight"] for r in report["taskResults"]] == [1, 1, 2]
    assert report["evaluatorMetadata"]["scoringMethod"] == "weighted_mean"
    assert report["evaluatorMetadata"]["scorers"] == ["exact"]
    assert report["summary"]["confidenceInterval"] is None  # fewer than 10 results


def test_pass_at_k_needs_enough_runs_and_is_computed_per_task(tmp_path):
    bench = Benchmark.model_validate({"id": "b", "scoringMethod": "pass_at_k", "passAtK": 2, "tasks": [
        {"id": "flaky", "inputData": {"t": "flaky"}, "expectedOutput": {"value": "ok"}},
        {"id": "never", "inputData": {"t": "never"}, "expectedOutput": {"value": "ok"}}]})
    line = error_line(build_plan, [_skill(tmp_path)], bench, runs=1, default_evaluator="exact")
    assert line.startswith("--runs: scoringMethod pass_at_k with passAtK 2 needs at least 2 runs")
    plan = build_plan([_skill(tmp_path)], bench, runs=4, default_evaluator="exact")
    calls = {"flaky": 0}

    def answer(inp):
        if inp["t"] == "never":
            return {"result": "no"}
        calls["flaky"] += 1
        return {"result": "ok" if calls["flaky"] == 1 else "no"}  # passes once in four runs

    (report,) = _reports(plan, _run(plan, answer).results)
    # flaky: 1 - C(3,2)/C(4,2) = 1 - 3/6 = 0.5; never: 0; mean 0.25
    assert report["summary"]["partialScore"] == 0.25
    assert report["evaluatorMetadata"]["k"] == 2
    # an interrupted run with a task below k runs: the estimate cannot be made
    few = [r for r in _run(plan, answer).results if not (r.task_id == "never" and r.run_id > 1)]
    (cut,) = _reports(plan, few)
    assert cut["summary"]["partialScore"] is None


def test_confidence_interval_from_ten_results(tmp_path):
    bench = Benchmark.model_validate({"id": "b", "tasks": [
        {"id": f"t{i}", "inputData": {"i": i}, "expectedOutput": {"value": "1"}} for i in range(10)]})
    plan = build_plan([_skill(tmp_path)], bench, runs=1, default_evaluator="exact")
    (report,) = _reports(plan, _run(plan, lambda inp: {"result": "1" if inp["i"] < 7 else "0"}).results)
    ci = report["summary"]["confidenceInterval"]
    assert ci == bootstrap_ci([1.0] * 7 + [0.0] * 3) and ci["lower"] < 0.7 < ci["upper"]
    assert report["summary"]["partialScore"] == 0.7  # mean: unchanged by the interval


# ---- scorers as the original documents them ------------------------------------------------------


def _score(kind: str, output, expected: dict, **options):
    task = Benchmark.model_validate({"id": "b", "tasks": [{"id": "t", "expectedOutput": expected}]}).tasks[0]
    scorer = get_scorer(kind)
    if scorer.check is not None:  # a check sees the scorer's options model, as the plan gives it
        scorer.check(task, scorer.parse_options(options), ScoringContext())
    return scorer(output, task, options, ScoringContext())


def test_contains_searches_the_json_text_of_an_object_output():
    # the python_script template's own test: its answer {"result": ...} holds the key "result"
    assert _score("contains", {"result": "Processed: test input"}, {"keywords": ["result"]}).passed
    assert _score("contains", ["alpha", {"beta": 1}], {"keywords": ["beta"]}).passed
    # the answer itself is searched too, so text that JSON escapes is found as written
    assert _score("contains", {"result": 'say "hi"\n'}, {"keywords": ['"hi"\n']}).passed
    missing = _score("contains", {"result": "x"}, {"keywords": ["x", "y"]})
    assert (missing.value, missing.passed) == (0.5, False)


def test_exact_keeps_unwrapping_the_answer():
    assert _score("exact", {"result": 123}, {"value": 123}).passed
    assert _score("exact_match", {"output": True}, {"value": True}).passed
    assert not _score("exact", {"result": "2", "note": "2"}, {"value": '{"result":"2","note":"2"}'}).passed


def test_regex_patterns_score_the_share_that_match():
    got = _score("regex", {"result": "order 42 shipped"}, {"patterns": [r"\d+", "shipped", "^cancel"]})
    assert got.value == pytest.approx(2 / 3) and not got.passed and "/^cancel/" in got.reason
    assert _score("regex", {"result": "42"}, {"patterns": [r"^\d+$", '"result"']}).passed
    with pytest.raises(Exception, match="invalid regex"):
        _score("regex", "x", {"patterns": ["("]})


def test_json_schema_asserts_formats_as_the_original_does():
    schema = {"type": "object", "properties": {"when": {"type": "string", "format": "date-time"},
                                               "site": {"type": "string", "format": "uri"},
                                               "mail": {"type": "string", "format": "email"}}}
    good = {"when": "2026-02-28T10:15:00Z", "site": "https://example.org/a", "mail": "a@example.org"}
    assert _score("json_schema", good, {"schema": schema}).passed
    for key, bad in (("when", "yesterday"), ("site", "not a uri"), ("mail", "nobody")):
        got = _score("json_schema", {**good, key: bad}, {"schema": schema})
        assert not got.passed and f"$.{key}" in got.reason


# ---- reports the original wrote ------------------------------------------------------------------


def test_a_report_in_the_original_shape_loads_with_its_numbers():
    (report,) = load_report_file(ORIGINAL / "report.json")
    summary = report["summary"]
    assert (summary["totalTasks"], summary["passed"], summary["failed"], summary["errors"],
            summary["timeouts"]) == (4, 2, 1, 1, 0)
    assert report["runs"] == 1 and all(t["runId"] == 1 for t in report["taskResults"])
    assert summary["completionRate"] == 0.5 and summary["confidenceInterval"]["upper"] == 0.75
    markdown = render_markdown([report])
    assert "4 tasks, 1 run(s): 2 passed, 1 failed, 1 errors, 0 timeouts." in markdown
    assert "Mean score 95% confidence interval (bootstrap): 0.2500 to 0.7500." in markdown
    assert "| calculator | 0.1.0 | 50.0% | 50.0% | 25.0% | 100.0% | 42.0 | 97.0 | 97.0 | 0.6000 | n/a |" in markdown
    html = render_html([report])
    assert "n/a</td>" not in html.split("Tokens")[0] and "50.0%" in html
    csv_rows = render_csv([report]).splitlines()
    assert len(csv_rows) == 5 and csv_rows[4].startswith("calculator,0.1.0,coding-easy,coding_004,1,error")


def test_our_reports_load_unchanged(tmp_path):
    ours = [{"skillId": "s", "runs": 2, "summary": {"totalTasks": 9, "passed": 1, "failed": 8, "errors": 0,
                                                     "timeouts": 0}, "taskResults": [
        {"taskId": "t", "runId": 2, "status": "pass"}]}]
    assert load_report_file(write(tmp_path / "r.json", ours)) == ours

