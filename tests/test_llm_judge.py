"""The llm_judge scorer through `eval-skills eval`: a real skill process, the fake judge program (or a model judge
behind a fake OpenAI server), the verdict cache in the store, and the checks before anything runs."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from fakes import FAKE_JUDGE
from fakes.openai_server import FakeOpenAI, Reply, Request, completion
from test_cli_eval import chaos_skill, cli

from eval_skills.cli import cli as main_cli
from eval_skills.formats.benchmark import Task
from eval_skills.judges import create_judge
from eval_skills.scoring.scorers import ScoringContext, get_scorer
from eval_skills.tool_skills.judging import JudgeForScoring

JUDGE = ["--judge-cmd", f"{sys.executable} {FAKE_JUDGE}"]
ECHO = """\
import json, sys
for line in sys.stdin:
    request = json.loads(line)
    print(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": {"result": request["params"]["text"]}}),
          flush=True)
"""


def echo_skill(tmp_path: Path) -> Path:
    """A skill that answers its input's text, the same every time (so the same output is judged twice)."""
    folder = tmp_path / "echo"
    folder.mkdir()
    (folder / "echo.py").write_text(ECHO)
    (folder / "skill.json").write_text(json.dumps({"id": "echo", "name": "Echo", "version": "1.0.0",
                                                   "adapterType": "subprocess", "entrypoint": "python3 echo.py"}))
    (folder / "adapter.config.json").write_text(json.dumps({"persistent": True}))
    return folder


def tasks_file(tmp_path: Path, tasks: list[dict]) -> Path:
    """Tasks whose output holds the task's text (both skills used here send it back)."""
    path = tmp_path / "judged-tasks.json"
    path.write_text(json.dumps([{"inputData": {"do": "ok", **t.pop("input", {})}, **t} for t in tasks]))
    return path


TASKS = [
    # the fake judge scores the share of the rubric's quoted phrases found in the output
    {"id": "paris", "input": {"text": "The capital of France is Paris."},
     "expectedOutput": {"type": "llm_judge", "rubric": 'Names "Paris" as the capital'}},
    {"id": "half", "input": {"text": "Paris, not Lyon"}, "evaluator": {"type": "llm_judge", "passThreshold": 0.5},
     "expectedOutput": {"rubric": 'Says "Paris" and "Berlin"'}},
    {"id": "strict-half", "input": {"text": "Paris, not Lyon"},
     "evaluator": {"type": "llm_judge", "passThreshold": 0.75},
     "expectedOutput": {"rubric": 'Says "Paris" and "Berlin"'}},
    {"id": "original-form", "input": {"text": "Rome"},
     "expectedOutput": {"type": "llm_judge", "judgePrompt": 'Is the answer "Madrid"?', "value": "Madrid"}},
]


def results(tmp_path: Path, db: str = "s.db") -> dict[str, dict]:
    with sqlite3.connect(tmp_path / db) as conn:
        rows = conn.execute("SELECT task_id, status, score, reason, error FROM task_results").fetchall()
    return {r[0]: {"status": r[1], "score": r[2], "reason": r[3], "error": r[4]} for r in rows}


def judge_calls(log: Path) -> int:
    return len(log.read_text().splitlines()) if log.exists() else 0


def test_llm_judge_tasks_scored_by_a_judge_program_and_cached(tmp_path: Path) -> None:
    skill = echo_skill(tmp_path)
    tasks = tasks_file(tmp_path, [dict(t) for t in TASKS])
    log = tmp_path / "judge.jsonl"
    common = ["eval", "--skills", skill, "--tasks", tasks, *JUDGE, "--store", tmp_path / "s.db",
              "--output-dir", tmp_path / "reports", "--format", "json"]
    out = cli(*common, cwd=tmp_path, env={"FAKE_JUDGE_LOG": str(log)})
    assert out.returncode == 0, out.stderr
    got = results(tmp_path)
    assert (got["paris"]["status"], got["paris"]["score"]) == ("pass", 1.0)
    assert (got["half"]["status"], got["half"]["score"]) == ("pass", 0.5)  # 0.5 >= the default threshold
    assert (got["strict-half"]["status"], got["strict-half"]["score"]) == ("fail", 0.5)
    assert (got["original-form"]["status"], got["original-form"]["score"]) == ("fail", 0.0)
    assert got["paris"]["reason"] == "1 of 1 phrases found [judge command, prompt external]"
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    # half and strict-half ask the same: one verdict serves both (unless both were asked at once)
    assert {c["kind"] for c in calls} == {"score"} and len(calls) in (3, 4)
    first = len(calls)

    again = cli(*common, cwd=tmp_path, env={"FAKE_JUDGE_LOG": str(log)})
    assert again.returncode == 0, again.stderr
    assert judge_calls(log) == first  # every verdict came from the store
    with sqlite3.connect(tmp_path / "s.db") as conn:
        reasons = [r[0] for r in conn.execute("SELECT reason FROM task_results WHERE task_id = 'paris'")]
    assert reasons[-1].endswith("[judge command, prompt external, cached]")
    fresh = cli(*common, "--no-judge-cache", cwd=tmp_path, env={"FAKE_JUDGE_LOG": str(log)})
    assert fresh.returncode == 0 and judge_calls(log) == first + 4


def test_a_judge_error_is_the_tasks_error_never_a_fail(tmp_path: Path) -> None:
    skill = chaos_skill(tmp_path, persistent=False)
    tasks = tasks_file(tmp_path, [dict(TASKS[0])])
    out = cli("eval", "--skills", skill, "--tasks", tasks, *JUDGE, "--store", tmp_path / "s.db",
              "--output-dir", tmp_path / "reports", cwd=tmp_path, env={"FAKE_JUDGE_MODE": "malformed"})
    assert out.returncode == 0, out.stderr
    row = results(tmp_path)["paris"]
    assert row["status"] == "error" and row["error"].startswith(
        "scorer llm_judge failed: judge error: the reply is not a JSON object")


@pytest.mark.parametrize(("task", "args", "message"), [
    ({"id": "t", "evaluator": {"type": "llm_judge", "passThreshold": 2}, "expectedOutput": {"rubric": "r"}}, JUDGE,
     "$[0].evaluator.passThreshold: Input should be less than or equal to 1"),
    ({"id": "t", "evaluator": {"type": "llm_judge", "model": "x"}, "expectedOutput": {"rubric": "r"}}, JUDGE,
     "$[0].evaluator.model: unknown field"),
    ({"id": "t", "expectedOutput": {"type": "llm_judge", "rubric": "r"}}, [], "the openai judge needs a model"),
    ({"id": "t", "expectedOutput": {"type": "llm_judge", "rubric": "r"}}, ["--judge-model", "m"],
     "the openai judge needs a key: set EVAL_SKILLS_LLM_KEY or OPENAI_API_KEY"),
    ({"id": "t", "expectedOutput": {"type": "llm_judge", "rubric": "r"}}, ["--judge-cmd", "no-such-judge-xyz"],
     "no-such-judge-xyz"),
])
def test_bad_judge_settings_stop_before_anything_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, task: dict,
                                                      args: list, message: str) -> None:
    skill = chaos_skill(tmp_path, persistent=False)
    tasks = tasks_file(tmp_path, [task])
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.chdir(tmp_path)
    for name, value in {"HOME": str(home), "EVAL_SKILLS_HOME": str(home), "OPENAI_API_KEY": "",
                        "EVAL_SKILLS_LLM_KEY": ""}.items():
        monkeypatch.setenv(name, value)
    out = CliRunner().invoke(main_cli, ["eval", "--skills", str(skill), "--tasks", str(tasks), *args, "--store",
                                        str(tmp_path / "s.db"), "--output-dir", str(tmp_path / "reports")])
    assert out.exit_code == 2 and message in out.stderr, out.stderr
    assert len(out.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "s.db").exists() and not (tmp_path / "reports").exists()


def test_a_model_judge_from_the_config(tmp_path: Path) -> None:
    skill = echo_skill(tmp_path)
    tasks = tasks_file(tmp_path, [dict(TASKS[0])])
    with FakeOpenAI() as api:
        api.script(completion(json.dumps({"score": 0.8, "reason": "names Paris"})))
        (tmp_path / "eval-skills.config.yaml").write_text(
            f"llm:\n  provider: openai\n  model: judge-m\n  baseUrl: {api.url}\n  temperature: 0\n")
        out = cli("eval", "--skills", skill, "--tasks", tasks, "--store", tmp_path / "s.db",
                  "--output-dir", tmp_path / "reports", cwd=tmp_path, env={"OPENAI_API_KEY": ""})
        assert out.returncode == 0, out.stderr
        body = api.chat_requests()[0]
    row = results(tmp_path)["paris"]
    assert (row["status"], row["score"]) == ("pass", 0.8)
    assert row["reason"] == "names Paris [judge openai/judge-m, prompt score-2]"
    assert body["model"] == "judge-m" and body["temperature"] == 0
    user = body["messages"][1]["content"]
    assert "<rubric>\nNames \"Paris\" as the capital\n</rubric>" in user and "The capital of France is Paris." in user


def test_a_key_the_judge_quotes_back_reaches_no_report_and_not_the_store(tmp_path: Path) -> None:
    """A proxy that quotes the key it was sent (in an error, in a reply): the tasks' results say ``***``."""
    key = "sk-qa-" + "7" * 24
    skill = echo_skill(tmp_path)
    tasks = tasks_file(tmp_path, [dict(TASKS[0]), dict(TASKS[3])])

    def quote_the_key(request: Request) -> Reply:
        said = request.headers["authorization"]
        if "Paris" in json.dumps(request.body):
            return Reply(400, {"error": {"message": f"bad request from {said}", "type": "invalid_request_error"}})
        return completion(json.dumps({"score": 0.1, "reason": f"you sent {said}"}))

    with FakeOpenAI(key=key) as api:
        api.handler = quote_the_key
        (tmp_path / "eval-skills.config.yaml").write_text(f"llm:\n  model: judge-m\n  baseUrl: {api.url}\n")
        out = cli("eval", "--skills", skill, "--tasks", tasks, "--store", tmp_path / "s.db", "--output-dir",
                  tmp_path / "reports", "--format", "json,markdown,html,csv,junit", cwd=tmp_path,
                  env={"EVAL_SKILLS_LLM_KEY": key})
    assert out.returncode == 0, out.stderr
    got = results(tmp_path)
    assert got["paris"]["error"].endswith("the judge answered 400: Error code: 400 - bad request from Bearer ***")
    assert got["original-form"]["reason"].startswith("you sent Bearer *** [judge openai/judge-m")
    assert key not in out.stdout + out.stderr
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert len(files) > 4 and not [p for p in files if key.encode() in p.read_bytes()]


def test_the_scorer_is_given_its_judge_from_above(tmp_path: Path) -> None:
    """Scoring knows no judge backend: the judge comes in the scoring context's services, and the scorer awaits
    it on the event loop, for as long as the judge may take."""
    import asyncio

    task = Task.model_validate({"id": "t", "inputData": {"q": 1}, "expectedOutput": {
        "type": "llm_judge", "rubric": 'Contains "yes"', "value": "yes"}})
    judge = JudgeForScoring(create_judge("command", command=[sys.executable, str(FAKE_JUDGE)], timeout=30))
    ctx = ScoringContext(services={"judge": judge})
    scorer = get_scorer("llm_judge")
    assert scorer.is_async and scorer.timeout_s(ctx) == 2 * 30 + 5  # two attempts, each the judge's timeout
    assert scorer.timeout_s(ScoringContext()) == ScoringContext().timeout_s  # no judge: the scoring deadline
    assert asyncio.run(scorer.score({"result": "yes indeed"}, task, {}, ctx)).passed
    assert not asyncio.run(scorer.score({"result": "no"}, task, {"passThreshold": 0.1}, ctx)).passed
    with pytest.raises(Exception, match="no judge to ask"):
        asyncio.run(scorer.score("yes", task, {}, ScoringContext()))
