"""The verdict cache in the SQLite store: the same request twice asks the judge once, across store sessions;
errors are never cached; a damaged entry is asked again."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path

from fakes import fake_judge
from fakes.openai_server import FakeOpenAI, completion

from eval_skills.judges import GradeRequest, ScoreRequest, create_judge
from eval_skills.store import Store, VerdictStore

GRADE = GradeRequest(prompt="Summarise", response='The total is "42 EUR".', assertions=['It says "42 EUR"'])


def ask(judge, request):
    return asyncio.run(judge.judge(request))


def calls(log: Path) -> int:
    return len(log.read_text().splitlines()) if log.exists() else 0


def test_grading_the_same_output_twice_asks_once(tmp_path: Path) -> None:
    log = tmp_path / "judge.jsonl"
    with Store.open(tmp_path / "s.db") as store:
        judge = fake_judge(log=log, cache=VerdictStore(store))
        first, second = ask(judge, GRADE), ask(judge, GRADE)
        other = ask(judge, GRADE.model_copy(update={"response": "no total"}))
        assert len(VerdictStore(store)) == 2
    assert (first.cached, second.cached, other.cached) == (False, True, False)
    assert first.verdict == second.verdict and second.expectations(GRADE.assertions)[0].passed is True
    assert not other.verdict.expectations[0].passed
    assert calls(log) == 2
    with Store.open(tmp_path / "s.db") as store:  # a later session finds it too
        again = ask(fake_judge(log=log, cache=VerdictStore(store)), GRADE)
    assert again.cached and calls(log) == 2


def test_errors_are_not_cached_and_damaged_entries_are_replaced(tmp_path: Path) -> None:
    log = tmp_path / "judge.jsonl"
    with Store.open(tmp_path / "s.db") as store:
        cache = VerdictStore(store)
        failed = ask(fake_judge(mode="malformed", log=log, cache=cache), GRADE)
        assert not failed.ok and len(cache) == 0
        judge = fake_judge(log=log, cache=cache)
        key = judge.cache_key(GRADE)
        cache.put(key, {"expectations": "not a list"})  # a stale shape
        fixed = ask(judge, GRADE)
        assert fixed.ok and not fixed.cached and cache.get(key) == fixed.verdict.model_dump(mode="json")
    db = sqlite3.connect(tmp_path / "s.db")
    db.execute("UPDATE judge_cache SET verdict_json = 'garbage'")
    db.commit()
    db.close()
    with Store.open(tmp_path / "s.db") as store:
        assert VerdictStore(store).get(key) is None
        assert ask(fake_judge(log=log, cache=VerdictStore(store)), GRADE).ok
    assert calls(log) == 2 + 1 + 1


def test_a_model_judge_hit_sends_nothing(tmp_path: Path) -> None:
    with FakeOpenAI() as api, Store.open(tmp_path / "s.db") as store:
        api.script(completion(json.dumps({"score": 0.9, "reason": "good"})))
        request = ScoreRequest(rubric="r", output="o")
        judge = create_judge("openai", model="m", base_url=api.url, cache=VerdictStore(store))
        first, second = ask(judge, request), ask(judge, request)
        other_model = create_judge("openai", model="m2", base_url=api.url, cache=VerdictStore(store))
        api.script(completion(json.dumps({"score": 0.1, "reason": "bad"})))
        third = ask(other_model, request)
    assert (first.verdict.score, second.verdict.score, third.verdict.score) == (0.9, 0.9, 0.1)
    assert second.cached and second.prompt_version == "score-2" and len(api.chat_requests()) == 2


def test_paired_runs_use_the_cache_unless_refused(tmp_path: Path) -> None:
    """`eval-skills paired` twice on the same deterministic agent: the second iteration's grades come from the
    store; with --no-judge-cache the judge is asked again."""
    from paired_data import agent_args, judge_args, paired
    from test_paired_cli import small_skill

    skill, _, script = small_skill(tmp_path, 2, judged=True)
    judge_log = tmp_path / "judge-log.jsonl"
    common = ["--skill-path", skill, *agent_args(script), *judge_args(), "--no-compare", "--store", tmp_path / "s.db"]

    def grades() -> int:
        return sum(1 for line in judge_log.read_text().splitlines() if json.loads(line)["kind"] == "grade")

    first = paired(*common, cwd=tmp_path, script_file=script, judge_log=judge_log)
    assert first.returncode == 0, first.stderr
    asked = grades()
    with sqlite3.connect(tmp_path / "s.db") as db:
        cached = db.execute("SELECT COUNT(*) FROM judge_cache").fetchone()[0]
    assert asked >= 1 and 1 <= cached <= asked
    second = paired(*common, cwd=tmp_path, script_file=script, judge_log=judge_log)
    assert second.returncode == 0, second.stderr
    assert grades() == asked  # nobody asked
    third = paired(*common, "--no-judge-cache", cwd=tmp_path, script_file=script, judge_log=judge_log)
    assert third.returncode == 0, third.stderr
    assert grades() - asked >= asked  # every run graded anew (at least the distinct ones of the first time)
