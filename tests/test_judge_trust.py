"""How far to trust the judge: the summary as a pure function against figures worked by hand, and end to end:
a real paired iteration, a reviewer's marks posted to the real review server, then `eval-skills regrade
--agreement-only` and the page's Benchmark tab."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from paired_data import ASSERTIONS
from regrade_data import make_iteration, regrade
from viewer_server import TOKEN, page_client, served

from eval_skills.formats.workspace import BenchmarkRun, Expectation, Feedback
from eval_skills.stats.judge_trust import judge_trust, marks_by_run, trust_sentence

WRITE = {"X-Review-Token": TOKEN, "Content-Type": "application/json"}


def run(case: int, arm: str, grades: dict[str, bool], checks: dict[str, bool] | None = None) -> BenchmarkRun:
    expectations = [Expectation.model_validate({"text": t, "passed": p, "graded_by": "judge"})
                    for t, p in grades.items()]
    expectations += [Expectation.model_validate({"text": t, "passed": p, "graded_by": "assertion engine"})
                     for t, p in (checks or {}).items()]
    return BenchmarkRun(eval_id=case, configuration=arm, run_number=1, expectations=expectations)


def test_trust_summary_worked_by_hand():
    runs = [run(1, "with_skill", {"a": True, "b": True}, {"c": True}),
            run(1, "without_skill", {"a": False, "b": True}, {"c": False}),
            run(2, "with_skill", {"a": True, "b": False}),
            run(2, "without_skill", {"a": True, "b": False})]
    # people: the judge was wrong on "a" of case 1 without the skill (it passed), right everywhere else marked
    marks = {"eval-1-with_skill-run-1": {"a": True, "b": True}, "eval-1-without_skill-run-1": {"a": True},
             "eval-2-with_skill-run-1": {"a": True}, "eval-2-without_skill-run-1": {"b": False}}
    trust = judge_trust(runs, marks, arms=["with_skill", "without_skill"])
    # pairs (judge, people): TT, TT, FT, TT, FF -> agree 4 of 5; judge T 3/5, people T 4/5;
    # pe = .6*.8 + .4*.2 = .56; kappa = (.8 - .56) / .44 = 0.5454...
    assert trust["marks"] == 5 and trust["overall"]["agree"] == 4
    assert trust["overall"]["kappa"] == pytest.approx(0.24 / 0.44)
    assert trust["disagreements"] == [{"run_id": "eval-1-without_skill-run-1", "eval_id": 1,
                                       "configuration": "without_skill", "run_number": 1, "assertion": "a",
                                       "judge": False, "people": True}]
    assert (trust["assertions"][0]["eval_id"], trust["assertions"][0]["assertion"]) == ("1", "a")  # first
    # judge: case 1 with 3/3, without 1/3 -> +2/3; case 2: 1/2 - 1/2 = 0; delta 1/3
    # people: case 1 without 2/3 -> +1/3; case 2 the same: 0; delta 1/6
    assert trust["delta"]["judge"]["estimate"] == pytest.approx(round(1 / 3, 4))
    assert trust["delta"]["people"]["estimate"] == pytest.approx(round(1 / 6, 4))
    assert trust["delta"]["corrected"] == 1
    # deciding: case 1's "a" (1 vs 0) and case 2's "a"? no (1 vs 1); case 1 "b" (1 vs 1) no; case 2 "b" no
    assert trust["deciding"]["assertions"] == 1 and trust["deciding"]["n"] == 2
    assert trust["low"] is False  # too few marks to warn
    assert trust_sentence(trust) is None


def test_marks_by_run_leaves_out_malformed_marks():
    feedback = Feedback.model_validate({"reviews": [
        {"run_id": "r1", "feedback": "", "grade_marks": [{"text": "a", "passed": True}, {"text": "b"},
                                                         "junk", {"text": 3, "passed": False}]},
        {"run_id": "r2", "feedback": "ok", "grade_marks": "not a list"}]})
    assert marks_by_run(feedback) == {"r1": {"a": True}}


def test_marks_posted_to_the_review_server_say_how_far_to_trust_the_judge(tmp_path: Path) -> None:
    _, workspace, iteration = make_iteration(tmp_path, cases=(1, 2, 3, 4, 5))
    from eval_skills.viewer import open_workspace_source

    with served(open_workspace_source(workspace)) as url, page_client(url, timeout=10) as client:
        html = client.get("/api/case/1").json()["html"]
        assert html.count('class="grade-mark"') == 4  # the judge's two grades in each arm; not the checks
        posted = 0
        for case in range(1, 6):
            for arm in ("with_skill", "without_skill"):
                grades = json.loads((iteration / f"eval-{case}" / arm / "run-1" / "grading.json").read_text())
                for e in grades["expectations"]:
                    if e["graded_by"] != "judge":
                        continue
                    # the reviewer finds the judge right on "42 EUR" and wrong on every "VAT amount"
                    reply = client.post("/api/grade-mark", headers=WRITE, json={
                        "run_id": f"eval-{case}-{arm}-run-1", "text": e["text"], "judge_passed": e["passed"],
                        "right": e["text"] == ASSERTIONS[0], "grading_version": None})
                    assert reply.status_code == 200, reply.text
                    posted += 1
        assert posted == 20
        assert client.post("/api/status", headers=WRITE, json={"status": "complete"}).json()["status"] == "complete"
        # taking a mark back, and marking it again (a changed mark reopens the review)
        body = {"run_id": "eval-1-with_skill-run-1", "text": ASSERTIONS[0], "judge_passed": True}
        back = client.post("/api/grade-mark", headers=WRITE, json={**body, "right": None}).json()
        assert [m["text"] for m in back["marks"]] == [ASSERTIONS[1]] and back["status"] == "in_progress"
        client.post("/api/grade-mark", headers=WRITE, json={**body, "right": True})
        # refused: no token, a run that does not exist, a wrong shape
        assert client.post("/api/grade-mark", headers={"Content-Type": "application/json"},
                           json={**body, "right": True}).status_code == 403
        assert client.post("/api/grade-mark", headers=WRITE, json={**body, "run_id": "eval-9-x-run-1",
                                                                    "right": True}).status_code == 404
        assert client.post("/api/grade-mark", headers=WRITE, json={**body, "right": "yes"}).status_code == 400
        tab = client.get("/api/tab/benchmark").json()["html"]
        assert '<b class="trust-marks">20</b>' in tab and "agrees poorly" in tab
        assert "+55.0 pp" in tab and "+95.0 pp" in tab
        assert client.get("/api/feedback").json()["marks"]["eval-1-with_skill-run-1"]

    feedback = json.loads((iteration / "feedback.json").read_text())
    Feedback.model_validate(feedback)
    for review in feedback["reviews"]:  # skill-creator's keys stay as they were; the marks are an added field
        assert {"run_id", "feedback", "timestamp"} <= set(review)
        assert isinstance(review["feedback"], str)
    marks = {r["run_id"]: r["grade_marks"] for r in feedback["reviews"]}
    vat = next(m for m in marks["eval-1-with_skill-run-1"] if m["text"] == ASSERTIONS[1])
    assert vat["judge_passed"] is True and vat["right"] is False and vat["passed"] is False

    out = regrade(workspace, "--agreement-only", "--no-store", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "judge against people: 20 marks, agreement 0.50" in out.stdout
    bench = json.loads((iteration / "benchmark.json").read_text())
    trust = bench["judge_trust"]
    assert trust["marks"] == 20 and trust["overall"]["agree"] == 10
    # the deciding assertions: both on cases 1-4 (1 vs 0 in each), "42 EUR" on case 5 (1 vs 0); 18 marks,
    # 10 agreeing; judge and people each pass 9: pe = .5, kappa = (10/18 - .5) / .5 = 1/9
    assert trust["deciding"]["n"] == 18 and trust["deciding"]["kappa"] == pytest.approx(1 / 9)
    assert trust["low"] is True
    assert "agrees poorly with the people who checked it" in bench["verdict"]
    assert "with their corrections the delta is +55.0 pp" in bench["verdict"]
    # with the corrections: cases 1-4 with 3/4, without 1/4 (+0.5); case 5 with 4/4, without 1/4 (+0.75)
    assert trust["delta"]["people"]["estimate"] == pytest.approx(0.55)
    assert trust["delta"]["judge"]["estimate"] == pytest.approx(0.95)
    assert {a["assertion"] for a in trust["assertions"][:5]} == {ASSERTIONS[1]}  # disagreements first
    md = (iteration / "benchmark.md").read_text()
    assert "## How far to trust the judge" in md and "agrees poorly" in md
