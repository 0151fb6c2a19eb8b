"""`eval-skills routing --optimize` as a user runs it: real processes, the word agent (it picks a skill by the words
of the description installed in its workspace), a scripted command improver per test, real files, a real store.

The queries and the split (seed 0, holdout 0.4) fix every figure:

    train  should trigger:  1 check the invoice total, 2 verify the amounts owed, 5 reconcile supplier payments,
                            6 check invoice dates
           should not:      8 poem, 10 trip, 11 article, 13 letter
    test   should trigger:  3 audit the vendor statement, 4 is this invoice correct, 7 review the billing ledger
           should not:      9 weather, 12 draft a birthday card message

The original "Checks invoice totals." triggers 1, 4 and 6 only (they share "invoice", "check" or "total").
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fakes import FAKE_AGENT

WORD_AGENT = Path(FAKE_AGENT).with_name("word_agent.py")
IMPROVER = Path(FAKE_AGENT).with_name("fake_improver.py")
QUERIES = [("check the invoice total", True), ("verify the amounts owed", True), ("audit the vendor statement", True),
           ("is this invoice correct", True), ("reconcile supplier payments", True), ("check invoice dates", True),
           ("review the billing ledger", True), ("write a poem about autumn", False),
           ("what is the weather tomorrow", False), ("plan a trip to rome", False), ("summarize this article", False),
           ("draft a birthday card message", False), ("translate this letter to french", False)]
TEST = {3, 4, 7, 9, 12}
SKILL_MD = ("---\r\nname: invoice-check\r\ndescription: >\r\n  Checks invoice\r\n  totals.\r\nlicense: MIT  # ours\r\n"
            "metadata:\r\n  description: not this one\r\n---\r\n# Invoice check\r\n\r\nAdd up the lines.\r\n")
PARTIAL = "Checks invoice totals and amounts owed."  # fixes train query 2 only
GOOD = ("Checks invoice totals and every billing record: amounts owed, supplier payments, vendor statements and "
        "ledgers.")  # fixes every miss, train and test
OVERFIT = "Checks invoice totals, amounts owed and supplier payments; also drafts messages."  # train perfect; test:
# misses 3 and 7 and falsely triggers 12 ("draft", "message"): F1 2/(2+1+2) = 0.4, below the original's 0.5
AGENT = ["--agent-cmd", f"{sys.executable} {WORD_AGENT} --prompt-file {{prompt_file}}", "--agent-output", "events"]


@pytest.fixture
def skill(tmp_path: Path) -> Path:
    folder = tmp_path / "invoice-check"
    (folder / "evals").mkdir(parents=True)
    (folder / "SKILL.md").write_bytes(SKILL_MD.encode())
    (folder / "evals" / "routing.json").write_text(json.dumps([{"query": q, "should_trigger": s} for q, s in QUERIES]))
    return folder


def env_for(tmp_path: Path, improver: dict, usage: bool = False, delay: float = 0) -> dict[str, str]:
    agent = {"log": str(tmp_path / "agent.jsonl"), "delay": delay,
             **({"usage": {"input_tokens": 90, "output_tokens": 10}} if usage else {})}
    return {**os.environ, "WORD_AGENT_JSON": json.dumps(agent),
            "FAKE_IMPROVER_JSON": json.dumps({"log": str(tmp_path / "improver.jsonl"), **improver})}


def args(skill: Path, tmp_path: Path, *more: object) -> list[str]:
    return [sys.executable, "-m", "eval_skills", "routing", "--skill-path", str(skill), *AGENT, "--optimize",
            "--improver-cmd", f"{sys.executable} {IMPROVER}", "--store", str(tmp_path / "s.db"), *map(str, more)]


def cli(skill: Path, tmp_path: Path, improver: dict, *more: object, usage: bool = False):
    return subprocess.run(args(skill, tmp_path, *more), cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env=env_for(tmp_path, improver, usage))


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def saved(tmp_path: Path, n: int = 1) -> dict:
    return json.loads((tmp_path / "invoice-check-workspace" / f"routing-{n}" / "optimize.json").read_text())


def test_a_description_that_fixes_the_missed_triggers_wins_and_is_written(tmp_path: Path, skill: Path) -> None:
    out = cli(skill, tmp_path, {"replies": [PARTIAL, GOOD]}, "--write", "--concurrency", 3)
    assert out.returncode == 0, out.stderr
    result = saved(tmp_path)
    assert result["split"]["train"] == [1, 2, 5, 6, 8, 10, 11, 13] and result["split"]["test"] == sorted(TEST)
    assert result["split"]["counts"]["test"] == {"should_trigger": 3, "should_not_trigger": 2}
    figures = [(c["origin"], c["status"], c["train"]["f1"], c["test"]["f1"]) for c in result["candidates"]]
    # original: train TP 2 FN 2 -> 4/6; test TP 1 FN 2 -> 2/4. partial: train TP 3 FN 1 -> 6/7. good: all right
    assert figures == [("original", "finished", 0.6667, 0.5), ("improver", "finished", 0.8571, 0.5),
                       ("improver", "finished", 1.0, 1.0)]
    assert result["metadata"]["stop_reason"] == "train_perfect"  # candidate 3 got every train query right
    rates = {q["index"]: q["trigger_rate"] for q in result["candidates"][0]["queries"]}
    assert rates == {i: 1.0 if i in (1, 4, 6) else 0.0 for i in range(1, 14)}
    winner = result["winner"]
    assert (winner["number"], winner["beats_original"], winner["difference"]) == (3, True, 0.5)
    # 3 held-out positives: the original's F1 2k/(k+3) over k ~ Bin(3, 1/3) resampled draws of query 4: the
    # difference is 0 with chance 1/27 > 2.5%, so the interval reaches 0 and the choice is not sure
    assert winner["difference_ci"] == [0.0, 1.0] and winner["sure"] is False
    assert "too small to tell the winner from the original" in out.stderr

    # the improver saw train failures only, and train figures only
    requests = lines(tmp_path / "improver.jsonl")
    assert [[q["query"] for q in r["missed"]] for r in requests] == [
        ["verify the amounts owed", "reconcile supplier payments"], ["reconcile supplier payments"]]
    assert all(r["false_triggers"] == [] for r in requests)
    assert requests[1]["candidates"][0] == {"description": "Checks invoice totals.", "precision": 1.0,
                                            "recall": 0.5, "f1": 0.6667, "passed": 6, "total": 8}
    sent = json.dumps(requests)
    assert not any(QUERIES[i - 1][0] in sent for i in TEST) and "test" not in sent

    # each run saw the candidate installed (the original as its file has it), the skill's folder unchanged
    seen = {line["descriptions"]["invoice-check"] for line in lines(tmp_path / "agent.jsonl")}
    assert seen == {"Checks invoice totals.\n", PARTIAL, GOOD}
    # --write changed only the description (a folded block scalar, CRLF line endings kept)
    assert skill.joinpath("SKILL.md").read_bytes() == SKILL_MD.replace(
        ">\r\n  Checks invoice\r\n  totals.", f'"{GOOD}"').encode()
    assert f"the description of candidate 3 written to {skill / 'SKILL.md'}" in out.stderr
    assert "| 3 | improver | 111 | 1.0000 | 1.0000 | 1.0000 | 1.0000 | 1.0000 | 1.0000 |" in (
        tmp_path / "invoice-check-workspace" / "routing-1" / "optimize.md").read_text()
    assert "winner: candidate 3" in out.stdout

    # every candidate is a routing test of the store, every run a row
    with sqlite3.connect(tmp_path / "s.db") as db:
        assert db.execute("SELECT status, f1 FROM routing_tests ORDER BY started_at").fetchall() == [
            ("finished", 0.6), ("finished", 0.7273), ("finished", 1.0)]  # all 13: TP 3 FN 4, TP 4 FN 3, all right
        assert db.execute("SELECT COUNT(*) FROM routing_runs").fetchone()[0] == 39


def test_a_candidate_that_fits_train_but_fails_held_out_loses(tmp_path: Path, skill: Path) -> None:
    out = cli(skill, tmp_path, {"replies": [OVERFIT]}, "--write", "--json")
    assert out.returncode == 0, out.stderr
    result = saved(tmp_path)
    printed = json.loads(out.stdout)
    assert printed["passed"] is True and printed["candidates"] == result["candidates"]
    assert [(c["train"]["f1"], c["test"]["f1"]) for c in result["candidates"]] == [(0.6667, 0.5), (1.0, 0.4)]
    assert result["metadata"]["stop_reason"] == "train_perfect"
    assert result["winner"]["number"] == 1 and result["winner"]["beats_original"] is False
    assert "the original description stays" in result["winner"]["why"]
    assert skill.joinpath("SKILL.md").read_bytes() == SKILL_MD.encode()  # nothing written
    assert "left as it is: no candidate beat the original description on the held-out set" in out.stderr


def test_a_leaking_candidate_is_refused_and_asked_again_once(tmp_path: Path, skill: Path) -> None:
    leak = "Checks invoice totals; use it to audit the vendor statement."
    out = cli(skill, tmp_path, {"replies": [leak], "retry": [GOOD]}, "--iterations", 2)
    assert out.returncode == 0, out.stderr
    requests = lines(tmp_path / "improver.jsonl")
    assert len(requests) == 2 and requests[0]["refused"] == []
    assert requests[1]["refused"] == ["the description quotes, word for word, a request kept aside to test it (the "
                                      "request is not shown): name the kind of request in your own words instead"]
    result = saved(tmp_path)
    second = result["candidates"][1]
    assert second["description"] == GOOD and [a["refused"] is not None for a in second["improver"]] == [True, False]
    seen = {line["descriptions"]["invoice-check"] for line in lines(tmp_path / "agent.jsonl")}
    assert leak not in seen  # never run

    # refused twice: the optimisation stops, and says why
    out = cli(skill, tmp_path, {"replies": [leak], "retry": [leak.upper()]}, "--iterations", 3)
    assert out.returncode == 0, out.stderr
    result = saved(tmp_path, 2)
    assert len(result["candidates"]) == 1 and result["metadata"]["stop_reason"] == "improver"
    assert "the improver's descriptions were refused twice" in out.stderr


def test_a_degenerate_split_and_stray_options_are_refused_before_any_run(tmp_path: Path, skill: Path) -> None:
    (skill / "evals" / "routing.json").write_text(json.dumps(
        [{"query": q, "should_trigger": s} for q, s in QUERIES[:8]]))  # 7 should trigger, 1 should not
    out = cli(skill, tmp_path, {})
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.strip().splitlines() == [
        f"error: {skill / 'evals' / 'routing.json'}: should_trigger: the train/test split leaves the queries with "
        "should_trigger false out of the test set: 7 should trigger (4 train, 3 test); 1 should not trigger "
        "(1 train, 0 test) (--optimize needs at least 2 queries that should trigger and 2 that should not)"]
    for more, message in ((["--holdout", "1"], "--holdout"), (["--static"], "--static: is not available with "
                          "--optimize"), (["--resume"], "holds no optimisation to resume"),
                          (["--improver", "nope"], "--improver: unknown improver 'nope'")):
        (skill / "evals" / "routing.json").write_text(json.dumps([{"query": q, "should_trigger": s}
                                                                  for q, s in QUERIES]))
        out = cli(skill, tmp_path, {}, *more)
        assert out.returncode == 2 and message in out.stderr, (more, out.stderr)
    out = cli(skill, tmp_path, {}, "--dry-run", "--iterations", 3)
    assert out.returncode == 0, out.stderr
    assert "train (8 queries, 4 should trigger): 1, 2, 5, 6, 8, 10, 11, 13" in out.stdout
    assert "test (5 queries, 3 should trigger): 3, 4, 7, 9, 12" in out.stdout
    assert "optimize: at most 3 candidates of 13 agent runs each (the original first); improver command" in out.stdout
    plain = [sys.executable, "-m", "eval_skills", "routing", "--skill-path", str(skill), *AGENT, "--write"]
    out = subprocess.run(plain, cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "--write: applies only with --optimize" in out.stderr
    assert not (tmp_path / "agent.jsonl").exists() and not (tmp_path / "improver.jsonl").exists()
    assert not (tmp_path / "invoice-check-workspace").exists()


def test_ctrl_c_then_resume_runs_nothing_twice(tmp_path: Path, skill: Path) -> None:
    proc = subprocess.Popen(args(skill, tmp_path), cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env_for(tmp_path, {"hang": True}))
    deadline = time.monotonic() + 120
    while not lines(tmp_path / "improver.jsonl") and time.monotonic() < deadline:  # candidate 1 ran: improving
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "continue with --resume" in err
    result = saved(tmp_path)
    assert result["metadata"]["state"] == "interrupted" and len(result["candidates"]) == 1
    assert len(lines(tmp_path / "agent.jsonl")) == 13

    out = cli(skill, tmp_path, {"replies": [GOOD]}, "--resume")
    assert out.returncode == 0, out.stderr
    result = saved(tmp_path)
    assert [c["status"] for c in result["candidates"]] == ["finished", "finished"]
    assert result["metadata"]["state"] == "finished" and result["winner"]["number"] == 2
    runs = lines(tmp_path / "agent.jsonl")
    assert len(runs) == 26 and {r["descriptions"]["invoice-check"] for r in runs[13:]} == {GOOD}
    out = cli(skill, tmp_path, {}, "--resume")
    assert out.returncode == 2 and "finished: nothing to resume" in out.stderr


def test_the_token_budget_stops_runs_and_resume_finishes_them(tmp_path: Path, skill: Path) -> None:
    # 100 tokens a run, one run at a time: the 5th run reaches 500, and no run starts after it
    out = cli(skill, tmp_path, {"replies": [GOOD]}, "--budget-tokens", 500, "--concurrency", 1, usage=True)
    assert out.returncode == 0, out.stderr
    assert "--budget-tokens reached" in out.stderr
    result = saved(tmp_path)
    assert result["candidates"][0]["status"] == "incomplete" and result["metadata"]["stop_reason"] == "budget"
    assert result["metadata"]["tokens_used"] == 500 and result["winner"] is None
    assert len(lines(tmp_path / "agent.jsonl")) == 5

    out = cli(skill, tmp_path, {"replies": [GOOD]}, "--resume", usage=True)
    assert out.returncode == 0, out.stderr
    result = saved(tmp_path)
    assert len(lines(tmp_path / "agent.jsonl")) == 13 + 13  # the 8 missing runs of candidate 1, then candidate 2
    assert [c["status"] for c in result["candidates"]] == ["finished", "finished"]
    assert result["metadata"]["tokens_used"] == 2600
    with sqlite3.connect(tmp_path / "s.db") as db:  # candidate 1 stayed one routing test of 13 runs
        counts = db.execute("SELECT routing_id, COUNT(*) FROM routing_runs GROUP BY routing_id").fetchall()
        assert sorted(n for _, n in counts) == [13, 13]


def test_ctrl_c_during_the_runs_keeps_the_finished_ones_for_resume(tmp_path: Path, skill: Path) -> None:
    proc = subprocess.Popen(args(skill, tmp_path, "--concurrency", 2), cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env_for(tmp_path, {"replies": [GOOD]}, delay=1.0))
    folder = tmp_path / "invoice-check-workspace" / "routing-1" / "candidate-1"
    deadline = time.monotonic() + 120
    while len(list(folder.glob("query-*/run-1/result.json"))) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    finished = len(list(folder.glob("query-*/run-1/result.json")))
    result = saved(tmp_path)
    assert result["candidates"][0]["status"] == "incomplete" and 3 <= finished < 13
    started = len(lines(tmp_path / "agent.jsonl"))  # the finished runs, and the ones killed in flight

    out = cli(skill, tmp_path, {"replies": [GOOD]}, "--resume")
    assert out.returncode == 0, out.stderr
    result = saved(tmp_path)
    assert [c["status"] for c in result["candidates"]] == ["finished", "finished"]
    assert [c["train"]["f1"] for c in result["candidates"]] == [0.6667, 1.0]
    # only the unfinished runs of candidate 1 ran again, then candidate 2's 13
    assert len(lines(tmp_path / "agent.jsonl")) == started + (13 - finished) + 13
