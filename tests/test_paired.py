"""`eval-skills paired` end to end with the fake agent program (better with the newer skill installed) and the
fake judge program: every number is checked against the values worked out by hand in paired_data.py."""

from __future__ import annotations

import itertools
import json
import math
import sqlite3
import statistics
from pathlib import Path

from paired_data import (
    ASSERTIONS,
    CHECK_TEXTS,
    V1_ANSWER,
    V2_ANSWER,
    agent_args,
    invoice_skill,
    judge_args,
    paired,
)

from eval_skills.formats.workspace import Benchmark, Grading


def exact_sign_flip_p(deltas: list[float]) -> float:
    """The two-sided sign-flip p-value by brute force: the share of the 2^n sign patterns whose |sum| is at
    least the observed |sum|."""
    observed = abs(sum(deltas))
    hits = sum(abs(sum(s * d for s, d in zip(signs, deltas, strict=True))) >= observed - 1e-12
               for signs in itertools.product((1, -1), repeat=len(deltas)))
    return hits / 2 ** len(deltas)


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_old_skill_baseline_end_to_end(tmp_path: Path) -> None:
    skill, old, script = invoice_skill(tmp_path)
    judge_log = tmp_path / "judge-log.jsonl"
    out = paired("--skill-path", skill, "--baseline-skill-path", old, *agent_args(script), *judge_args(),
                 "--runs", 2, "--concurrency", 4, "--seed", 7, "--store", tmp_path / "s.db", "--json",
                 cwd=tmp_path, script_file=script, judge_log=judge_log)
    assert out.returncode == 0, out.stderr
    printed = json.loads(out.stdout)
    assert printed.pop("passed") is True
    bench = Benchmark.model_validate(printed)
    iteration = tmp_path / "invoice-check-workspace" / "iteration-1"
    assert json.loads((iteration / "benchmark.json").read_text()) == printed
    meta = bench.metadata
    assert (meta["skill_name"], meta["baseline"], meta["configurations"]) == (
        "invoice-check", "old_skill", ["with_skill", "old_skill"])
    assert meta["runs_per_configuration"] == 2 and meta["seed"] == 7 and meta["complete"] is True
    assert meta["evals_run"] == [1, 2, 3, 4, 5, 6, 7, 8] and meta["missing_runs"] == []

    # per-case deltas, the estimate over cases, and the exact sign-flip p-value (worked out by hand: 14/64)
    delta = bench.statistics.pass_rate_delta
    extra = delta.model_extra
    assert extra["case_deltas"] == {"1": 0.25, "2": 0.25, "3": 0.25, "4": 0.25, "5": -0.25, "6": 0.0, "8": 0.125}
    assert extra["left_out"] == ["7"] and delta.cases == 7
    assert delta.estimate == 0.125
    deltas = [0.25, 0.25, 0.25, 0.25, -0.25, 0.0, 0.125]
    assert delta.p_value == 0.21875 == exact_sign_flip_p(deltas)
    assert delta.ci_low <= 0.125 <= delta.ci_high and delta.confidence == 0.95
    assert "left out" in delta.note

    # pooled run summary (error runs left out), delta from the unrounded means
    with_rates = [1.0] * 8 + [0.75] * 2 + [0.8] * 2 + [1.0] * 2 + [1.0, 0.75]
    old_rates = [0.75] * 8 + [1.0] * 2 + [0.8] * 2 + [0.75] * 2
    summary = bench.run_summary
    for arm, rates in (("with_skill", with_rates), ("old_skill", old_rates)):
        assert summary[arm]["pass_rate"] == {"mean": round(statistics.fmean(rates), 4),
                                             "stddev": round(statistics.stdev(rates), 4),
                                             "min": min(rates), "max": max(rates)}
    assert summary["with_skill"]["pass_rate"]["mean"] == 0.9281 and summary["old_skill"]["pass_rate"]["mean"] == 0.7929
    assert summary["delta"]["pass_rate"] == round(statistics.fmean(with_rates) - statistics.fmean(old_rates), 4)
    assert summary["delta"]["pass_rate"] == 0.1353 and summary["delta"]["tokens"] is not None
    assert summary["with_skill"]["tokens"]["mean"] == 15 and summary["old_skill"]["time_seconds"]["mean"] > 0

    # error runs: counted per arm, shown, left out of the statistics, never failures
    assert (summary["with_skill"]["runs"], summary["with_skill"]["errors"]) == (16, 0)
    assert (summary["old_skill"]["runs"], summary["old_skill"]["errors"], summary["old_skill"]["graded"]) == (16, 2, 14)
    errors = [r for r in bench.runs if r.result.errors]
    assert [(str(r.eval_id), r.configuration) for r in errors] == [("7", "old_skill")] * 2
    assert all(r.result.pass_rate is None and r.result.failed == 0 for r in errors)
    broken = iteration / "eval-7" / "old_skill" / "run-1"
    assert not (broken / "grading.json").exists()  # an error run is not graded: skill-creator's tools skip it
    timing = json.loads((broken / "timing.json").read_text())
    assert timing["status"] == "error" and "exited with code 3" in timing["error"]

    # pass@k and pass^k with k = 2, a run passing when all its expectations pass
    pk = bench.statistics.pass_at_k
    assert (pk["with_skill"].k, pk["with_skill"].pass_at_k, pk["with_skill"].pass_hat_k) == (2, 0.75, 0.625)
    assert (pk["old_skill"].pass_at_k, pk["old_skill"].pass_hat_k) == (round(1 / 7, 4), round(1 / 7, 4))
    assert pk["with_skill"].model_extra["cases"] == 8 and pk["old_skill"].model_extra["cases"] == 7

    # blind A/B after unblinding: cases 1-4 and one flaky run win, 5 loses, 6 and the other flaky run tie
    ab = bench.comparison
    assert (ab.wins, ab.ties, ab.losses) == (9, 3, 2)
    assert ab.model_extra["not_compared"] == 2 and ab.model_extra["errors"] == 0
    orders = set()
    for case in range(1, 9):
        for c in json.loads((iteration / f"eval-{case}" / "comparison.json").read_text())["comparisons"]:
            orders.add(c["order"]["A"])
            if c["winner"] in ("A", "B"):
                assert c["winner_arm"] == c["order"][c["winner"]]
            if case in (1, 2, 3, 4):
                assert c["winner_arm"] == "with_skill"
            if case == 5:
                assert c["winner_arm"] == "old_skill"
    assert orders == {"with_skill", "old_skill"}  # the labels are shuffled

    # assertions that do not tell the arms apart, computed in code
    found = {(str(n.eval_id), n.assertion, n.kind): n.counts for n in bench.non_discriminating}
    always = [ASSERTIONS[0], *CHECK_TEXTS]
    expected = {(str(c), text, "always_pass") for c in (1, 2, 3, 4, 5, 8) for text in always}
    expected |= {("6", text, "always_pass") for text in [*ASSERTIONS, *CHECK_TEXTS]}
    expected |= {("6", 'It cites "section 14"', "always_fail"), ("5", ASSERTIONS[1], "only_without_skill"),
                 ("8", ASSERTIONS[1], "flaky")}
    assert set(found) == expected
    assert found[("8", ASSERTIONS[1], "flaky")] == {"with_skill": {"passed": 1, "runs": 2},
                                                    "old_skill": {"passed": 0, "runs": 2}}
    assert found[("5", ASSERTIONS[1], "only_without_skill")] == {"with_skill": {"passed": 0, "runs": 2},
                                                                 "old_skill": {"passed": 2, "runs": 2}}

    # the run folders: response, transcript, timing, grading with evidence from the judge and the engine
    run = iteration / "eval-1" / "with_skill" / "run-1"
    assert (run / "outputs" / "response.md").read_text() == V2_ANSWER
    assert (iteration / "eval-1" / "old_skill" / "run-2" / "outputs" / "response.md").read_text() == V1_ANSWER
    events = lines(run / "transcript.jsonl")
    assert [e["type"] for e in events][-2:] == ["usage", "final"] and any(e["type"] == "skill" for e in events)
    raw = [json.loads(line) for line in (run / "stdout.txt").read_text().splitlines()]  # kept beside the record
    assert raw[-1] == {"type": "final", "text": V2_ANSWER} and len(raw) >= len(events) - 1
    timing = json.loads((run / "timing.json").read_text())
    assert timing["total_tokens"] == 15 and timing["token_measurement"] == "measured" and timing["status"] == "ok"
    grading = Grading.model_validate_json((run / "grading.json").read_text())
    assert [e.text for e in grading.expectations] == ASSERTIONS + CHECK_TEXTS
    assert [e.model_extra["graded_by"] for e in grading.expectations] == ["judge", "judge", "assertion engine",
                                                                          "assertion engine"]
    assert grading.expectations[3].evidence.startswith("call 1 of")  # from the recorded tool calls
    assert grading.summary.model_dump() == {"passed": 4, "failed": 0, "total": 4, "pass_rate": 1.0, "ungraded": 0}
    meta_case = json.loads((iteration / "eval-6" / "eval_metadata.json").read_text())
    assert meta_case["assertions"] == [*ASSERTIONS, 'It cites "section 14"', *CHECK_TEXTS]
    assert sorted(p.relative_to(iteration / "eval-1" / "inputs").as_posix()
                  for p in (iteration / "eval-1" / "inputs").rglob("*.txt")) == ["evals/files/invoice.txt",
                                                                                 "evals/files/notes/terms.txt"]
    feedback = json.loads((iteration / "feedback.json").read_text())
    assert len(feedback["reviews"]) == 32 and feedback["status"] == "in_progress"
    assert {r["feedback"] for r in feedback["reviews"]} == {""}
    assert "eval-7-old_skill-run-2" in {r["run_id"] for r in feedback["reviews"]}
    md = (iteration / "benchmark.md").read_text()
    assert bench.model_extra["verdict"] in md and f"{delta.ci_low * 100:+.1f} to {delta.ci_high * 100:+.1f} pp" in md

    # every run in a fresh folder outside the workspace, the fixture files at their path relative to the skill
    # (as a prompt naming "evals/files/invoice.txt" expects) and again at its root by file name
    log = lines(tmp_path / "agent-log.jsonl")
    assert len(log) == 32 and len({entry["cwd"] for entry in log}) == 32
    assert all(entry["listing"] == ["evals/files/invoice.txt", "evals/files/notes/terms.txt", "invoice.txt",
                                    "terms.txt"] for entry in log)
    assert all(entry["skill_installed"] for entry in log)  # the old copy is installed under the skill's name
    assert not any(entry["cwd"].startswith(str(tmp_path)) for entry in log)

    # every run and verdict is a row in the store
    with sqlite3.connect(tmp_path / "s.db") as db:
        assert db.execute("SELECT COUNT(*), SUM(status = 'error') FROM paired_runs").fetchone() == (32, 2)
        kinds = dict(db.execute("SELECT kind, COUNT(*) FROM paired_verdicts GROUP BY kind").fetchall())
        assert kinds == {"grade": 30, "checks": 30, "compare": 16}
        assert db.execute("SELECT status, iteration FROM paired_iterations").fetchone() == ("finished", 1)
        rate = db.execute("SELECT pass_rate FROM paired_runs WHERE run_id = 'eval-5-with_skill-run-1'").fetchone()
        assert rate == (0.75,)

    # the same results and seed give the same interval: resuming the finished iteration runs and asks nothing
    agent_calls, judge_calls = len(log), len(lines(judge_log))
    again = paired("--skill-path", skill, "--baseline-skill-path", old, *agent_args(script), *judge_args(),
                   "--runs", 2, "--seed", 7, "--resume", "--store", tmp_path / "s.db", "--json", cwd=tmp_path,
                   script_file=script, judge_log=judge_log)
    assert again.returncode == 0, again.stderr
    redone = Benchmark.model_validate(json.loads(again.stdout))
    assert redone.statistics == bench.statistics and redone.run_summary == bench.run_summary
    assert len(lines(tmp_path / "agent-log.jsonl")) == agent_calls and len(lines(judge_log)) == judge_calls
    assert redone.metadata["resumed"] is True


def test_without_skill_judge_errors_and_too_little_data(tmp_path: Path) -> None:
    skill, _, script = invoice_skill(tmp_path)
    evals = json.loads((skill / "evals" / "evals.json").read_text())
    evals["evals"] = evals["evals"][:2]
    (skill / "evals" / "evals.json").write_text(json.dumps(evals))
    out = paired("--skill-path", skill, *agent_args(script), *judge_args(), "--no-store", "--json",
                 cwd=tmp_path, script_file=script, judge_mode="malformed")
    assert out.returncode == 0, out.stderr
    printed = json.loads(out.stdout)
    assert printed.pop("passed") is True
    bench = Benchmark.model_validate(printed)
    assert bench.metadata["baseline"] == "without_skill"
    # the judge never gave a verdict: its assertions are ungraded, the checks still count
    run = Grading.model_validate_json((tmp_path / "invoice-check-workspace" / "iteration-1" / "eval-1" /
                                       "without_skill" / "run-1" / "grading.json").read_text())
    assert [e.passed for e in run.expectations] == [None, None, False, False]
    assert run.expectations[0].evidence.startswith("judge error: ")
    assert run.summary.model_dump() == {"passed": 0, "failed": 2, "total": 2, "pass_rate": 0.0, "ungraded": 2}
    summary = bench.run_summary
    assert summary["with_skill"]["judge_errors"] == 2 and summary["with_skill"]["errors"] == 0
    assert summary["with_skill"]["pass_rate"]["mean"] == 1.0 and summary["without_skill"]["pass_rate"]["mean"] == 0.0
    assert bench.comparison.model_extra["errors"] == 2 and bench.comparison.wins == 0
    delta = bench.statistics.pass_rate_delta
    assert (delta.estimate, delta.p_value, delta.cases) == (1.0, 0.5, 2)
    assert "no p-value below 0.05 is possible" in delta.note
    assert bench.model_extra["verdict"].startswith("Too little data to say")
    # two cases cannot bound the delta at 95%: the interval is the whole range
    assert "95% interval -100.0 to +100.0 pp" in bench.model_extra["verdict"]
    assert bench.statistics.pass_at_k == {}  # one run per arm
    assert any("judge errors" in note for note in bench.notes)
    assert not (tmp_path / "eval-skills.db").exists()  # --no-store

    # --resume asks the judge again where it gave no verdict, with the runs' transcripts read back
    out = paired("--skill-path", skill, *agent_args(script), *judge_args(), "--no-store", "--json", "--resume",
                 cwd=tmp_path, script_file=script)
    assert out.returncode == 0, out.stderr
    printed = json.loads(out.stdout)
    assert printed.pop("passed") is True
    bench = Benchmark.model_validate(printed)
    assert bench.run_summary["with_skill"]["judge_errors"] == 0 and bench.comparison.wins == 2
    run = Grading.model_validate_json((tmp_path / "invoice-check-workspace" / "iteration-1" / "eval-2" /
                                       "with_skill" / "run-1" / "grading.json").read_text())
    assert [e.passed for e in run.expectations] == [True, True, True, True]  # tool_called "Read" from the transcript
    assert len((tmp_path / "agent-log.jsonl").read_text().splitlines()) == 4  # no run was repeated


def test_exact_p_value_helper_matches_a_hand_count() -> None:
    # five deltas of 0.25 (one negative), a zero and 0.125: |2T + u| >= 7 for 14 of the 64 patterns
    assert exact_sign_flip_p([0.25, 0.25, 0.25, 0.25, -0.25, 0.0, 0.125]) == 14 / 64
    assert math.isclose(exact_sign_flip_p([1.0, 1.0]), 0.5)
