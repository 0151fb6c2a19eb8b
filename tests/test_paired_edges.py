"""`eval-skills paired` on designs made to catch what a user meets: pass rates in thirds, error runs in one arm
only, a judge that fails, an agent that fails everywhere, hostile text, a judge interrupted while comparing,
SelfTune's own check forms. Real processes: the fake agent and fake judge programs; every number is worked out
by hand in the comments."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from fakes import FAKE_AGENT, FAKE_JUDGE
from markdown_it import MarkdownIt
from paired_data import paired

from eval_skills.errors import InputError

SKILL = """---
name: tally
description: Counts and names what a request asks for. Use it for tallies.
---
# Tally ({version})

Answer with every word the request needs.
"""
CHECKS = [{"type": "contains", "value": w} for w in ("alpha", "beta", "gamma")]


def make_skill(root: Path, cases: dict[str, dict[str, Any]], *, version: str = "new",
               usage: bool = True) -> tuple[Path, Path]:
    """A skill ``tally`` whose case ``word`` (ids 1, 2, ... in order) has the prompt "Handle the <word> task",
    the case's ``checks`` (default CHECKS), ``assertions`` and ``expected``; and the fake agent's script:
    ``without`` is its answer without the skill, ``with`` with it, and ``mode`` / ``with_mode`` make it
    misbehave in both arms / only with the skill."""
    skill = root / "tally"
    (skill / "evals").mkdir(parents=True, exist_ok=True)
    (skill / "SKILL.md").write_text(SKILL.format(version=version))
    evals, script_cases = [], []
    for index, (word, case) in enumerate(cases.items(), 1):
        evals.append({"id": case.get("id", index), "prompt": f"Handle the {word} task",
                      "expected_output": case.get("expected", "alpha beta gamma"),
                      "assertions": case.get("assertions", []),
                      "selftune_assertions": case.get("checks", CHECKS)})
        with_skill = {"when": "# Tally", "skilled_answer": case["with"], "mode": case.get("with_mode", "ok")}
        script_cases.append({"match": rf"\b{word}\b", "answer": case["without"], "mode": case.get("mode", "ok"),
                             "stderr": case.get("stderr", ""), "skill_answers": [with_skill]})
    (skill / "evals" / "evals.json").write_text(json.dumps({"skill_name": "tally", "evals": evals}))
    script = root / "agent.json"
    usage_event = {"usage": {"input_tokens": 10, "output_tokens": 5}} if usage else {}  # else tokens estimated
    script.write_text(json.dumps({"skill": "tally", **usage_event, "log": str(root / "agent-log.jsonl"),
                                  "cases": script_cases}))
    return skill, script


AGENT = ["--agent-cmd", f"python {FAKE_AGENT} --prompt-file {{prompt_file}}", "--agent-output", "events"]
JUDGE = ["--judge-cmd", f"python {FAKE_JUDGE}"]


def exact_p(deltas: list[Fraction]) -> float:
    """The two-sided sign-flip p-value in exact arithmetic: the share of sign patterns with |sum| >= |observed|."""
    observed = abs(sum(deltas))
    hits = sum(abs(sum(s * d for s, d in zip(signs, deltas, strict=True))) >= observed
               for signs in itertools.product((1, -1), repeat=len(deltas)))
    return hits / 2 ** len(deltas)


def test_pass_rates_in_thirds_give_the_exact_p_value(tmp_path: Path) -> None:
    # three checks per case, one run: with / without the skill
    # case 1: "none" 0/3 vs "alpha" 1/3 -> -1/3;  case 2: "alpha" 1/3 vs "none" 0/3 -> +1/3;
    # case 3: "alpha" 1/3 vs "alpha beta" 2/3 -> -1/3.  Observed |sum| = 1/3, and every sign pattern of
    # (1/3, 1/3, 1/3) sums to +-1/3 or +-1, so p = 1 exactly (a sum of 4-decimal rates, -0.3334, gave 0.75)
    skill, script = make_skill(tmp_path, {"one": {"with": "none", "without": "alpha"},
                                          "two": {"with": "alpha", "without": "none"},
                                          "three": {"with": "alpha", "without": "alpha beta"}})
    (tmp_path / "eval-skills.config.yaml").write_text("store: ./results.db\n")  # the config's store is used
    out = paired("--skill-path", skill, *AGENT, *JUDGE, "--json", cwd=tmp_path, script_file=script)
    assert out.returncode == 0, out.stderr
    with sqlite3.connect(tmp_path / "results.db") as db:
        assert db.execute("SELECT COUNT(*) FROM paired_runs").fetchone() == (6,)
    assert not (tmp_path / "eval-skills.db").exists()
    bench = json.loads(out.stdout)
    d = bench["statistics"]["pass_rate_delta"]
    third = Fraction(1, 3)
    assert d["p_value"] == exact_p([-third, third, -third]) == 1.0
    assert d["case_deltas"] == {"1": -0.3333, "2": 0.3333, "3": -0.3333}
    assert d["estimate"] == round(-1 / 9, 4) == -0.1111
    summary = bench["run_summary"]
    assert summary["with_skill"]["pass_rate"]["mean"] == round(2 / 9, 4)  # 0, 1/3, 1/3
    assert summary["without_skill"]["pass_rate"]["mean"] == round(3 / 9, 4)  # 1/3, 0, 2/3
    assert summary["delta"]["pass_rate"] == round(2 / 9 - 3 / 9, 4) == -0.1111
    # the blind A/B (the fake judge counts the words of "alpha beta gamma"): 1 loss, 1 win, 1 loss
    assert (bench["comparison"]["wins"], bench["comparison"]["ties"], bench["comparison"]["losses"]) == (1, 0, 2)


def test_error_runs_leave_no_grading_json_judge_errors_one_without_pass_rate_and_resume_grades_them(
        tmp_path: Path) -> None:
    # case 1: checks only, "alpha beta gamma" 3/3 vs "alpha" 1/3; case 2: the baseline's agent crashes;
    # case 3: one judged assertion and no check, the judge answers prose (twice) the first time
    skill, script = make_skill(tmp_path, {
        "one": {"with": "alpha beta gamma", "without": "alpha",
                "checks": [{**CHECKS[0], "description": "<script>window.x = 1</script> | alpha"}, *CHECKS[1:]]},
        "two": {"with": "alpha beta", "without": "x", "mode": "crash", "stderr": "<b>bad key</b>"},
        "three": {"with": "alpha", "without": "none", "checks": [], "assertions": ['It says "alpha"']}})
    common = ["--skill-path", skill, *AGENT, *JUDGE, "--store", tmp_path / "s.db"]
    judge_log = tmp_path / "judge-log.jsonl"
    out = paired(*common, cwd=tmp_path, script_file=script, judge_mode="malformed", judge_log=judge_log)
    assert out.returncode == 0, out.stderr
    iteration = tmp_path / "tally-workspace" / "iteration-1"
    graded = sorted(p.parent.relative_to(iteration).as_posix() for p in iteration.rglob("grading.json"))
    assert graded == ["eval-1/with_skill/run-1", "eval-1/without_skill/run-1", "eval-2/with_skill/run-1",
                      "eval-3/with_skill/run-1", "eval-3/without_skill/run-1"]  # not the error run
    for path in iteration.rglob("grading.json"):  # what skill-creator's aggregate_benchmark.py reads
        summary = json.loads(path.read_text())["summary"]
        if summary["total"]:
            assert isinstance(summary["pass_rate"], float)
            assert summary["pass_rate"] == round(summary["passed"] / summary["total"], 4)
        else:  # every assertion met a judge error: no pass rate (a null would stop its aggregator)
            assert path.parent.parent.parent.name == "eval-3" and "pass_rate" not in summary
    judged = json.loads((iteration / "eval-3" / "with_skill" / "run-1" / "grading.json").read_text())
    assert judged["expectations"][0]["passed"] is None
    assert judged["expectations"][0]["evidence"].startswith("judge error: ")
    timing = json.loads((iteration / "eval-2" / "without_skill" / "run-1" / "timing.json").read_text())
    assert timing["status"] == "error" and "exited with code 1" in timing["error"]
    bench = json.loads((iteration / "benchmark.json").read_text())
    three = [r for r in bench["runs"] if r["eval_id"] == 3]
    assert [(r["result"]["ungraded"], r["result"]["pass_rate"]) for r in three] == [(1, None), (1, None)]
    assert all(r["expectations"][0]["passed"] is None and r["expectations"][0]["evidence"].startswith("judge error")
               for r in three)
    summary = bench["run_summary"]
    assert summary["with_skill"]["pass_rate"] == {"mean": round((1 + 2 / 3) / 2, 4), "stddev": round(
        (2 * (1 / 6) ** 2) ** 0.5, 4), "min": round(2 / 3, 4), "max": 1.0}  # case 1 and case 2
    assert summary["without_skill"]["pass_rate"] == {"mean": 0.3333, "stddev": 0.0, "min": 0.3333, "max": 0.3333}
    assert (summary["without_skill"]["errors"], summary["without_skill"]["judge_errors"]) == (1, 1)
    d = bench["statistics"]["pass_rate_delta"]
    assert (d["cases"], d["estimate"], d["left_out"]) == (1, 0.6667, ["2", "3"])
    assert bench["comparison"] == {"wins": 0, "ties": 0, "losses": 0, "errors": 2, "not_compared": 1, "pairs": 3,
                                   "pending": 0}
    # benchmark.md: untrusted text (an assertion, an agent's stderr) is shown as text, never as HTML
    md = (iteration / "benchmark.md").read_text()
    assert "2 runs with judge errors" in md and "1 case x 1 run per arm" not in md and "3 cases x 1 run per arm" in md
    html = MarkdownIt("commonmark").render(md)
    assert "<script" not in html and "<b>" not in html
    assert "&lt;b&gt;bad key&lt;/b&gt;" in html and "&lt;script&gt;window.x = 1&lt;/script&gt;" in html
    assert ("0 judge errors, 1 pair with an error run not compared" not in md
            and "(2 judge errors, 1 pair with an error run not compared)" in md)
    agent_calls = (tmp_path / "agent-log.jsonl").read_text().count("\n")

    # another judge model would mix two judges' grades in one benchmark
    out = paired(*common, "--resume", "--judge-model", "judge-2", cwd=tmp_path, script_file=script)
    assert out.returncode == 2
    assert out.stderr.strip().endswith("paired_config.json: judge: cannot resume: the judge was command (default "
                                       "model), prompts external/external, now command model judge-2, prompts "
                                       "external/external (resume with the same judge and judge model, or start a "
                                       "new iteration)")
    # --resume with a judge that answers: the two runs of case 3 are graded, the A/B pairs with judge errors
    # compared; no agent runs again, the error run stays an error run
    out = paired(*common, "--resume", cwd=tmp_path, script_file=script, judge_log=judge_log)
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "agent-log.jsonl").read_text().count("\n") == agent_calls == 6
    calls = [json.loads(line) for line in judge_log.read_text().splitlines()]
    resumed = [c["kind"] for c in calls if c["attempt"] == 1][-4:]
    assert sorted(resumed) == ["compare", "compare", "grade", "grade"]
    assert (iteration / "eval-3" / "with_skill" / "run-1" / "grading.json").is_file()
    assert not (iteration / "eval-2" / "without_skill" / "run-1" / "grading.json").exists()
    bench = json.loads((iteration / "benchmark.json").read_text())
    d = bench["statistics"]["pass_rate_delta"]
    # case 1: +2/3; case 3: 1 - 0 = +1; estimate 5/6; of the 4 sign patterns, 2 reach |5/3|
    assert (d["cases"], d["estimate"], d["p_value"], d["left_out"]) == (2, 0.8333, 0.5, ["2"])
    ab = bench["comparison"]
    assert (ab["wins"], ab["errors"], ab["not_compared"]) == (2, 0, 1)


def test_an_iteration_that_measured_nothing_exits_1(tmp_path: Path) -> None:
    # every agent run fails: the benchmark is written, and says so, but this is no success
    skill, script = make_skill(tmp_path, {"one": {"with": "a", "without": "b", "mode": "crash", "with_mode": "crash"}})
    out = paired("--skill-path", skill, *AGENT, "--no-compare", "--no-store", cwd=tmp_path, script_file=script)
    assert out.returncode == 1, out.stderr
    line = out.stderr.strip().splitlines()[-1]
    assert line.startswith("nothing measured: every agent run failed (2 error runs; the first: the agent exited with "
                           "code 1; stderr: ") and line.endswith("tally-workspace/iteration-1/benchmark.md")
    bench = json.loads((tmp_path / "tally-workspace" / "iteration-1" / "benchmark.json").read_text())
    for arm in ("with_skill", "without_skill"):  # no figure, rather than a figure whose mean is null
        assert [bench["run_summary"][arm][k] for k in ("pass_rate", "time_seconds", "tokens")] == [None] * 3
    assert bench["verdict"].startswith("Too little data to say: no case has graded runs in both arms")
    # a judge that never answers well, and only judged assertions: nothing graded either
    skill, script = make_skill(tmp_path / "b", {"one": {"with": "a", "without": "b", "checks": [],
                                                        "assertions": ['It says "a"']}})
    out = paired("--skill-path", skill, *AGENT, *JUDGE, "--no-compare", "--no-store", cwd=tmp_path / "b",
                 script_file=script, judge_mode="crash")
    assert out.returncode == 1, out.stderr
    assert ("nothing measured: no case has a graded run in both arms (0 error runs, 2 runs with judge errors)"
            in out.stderr)
    # only blind comparisons (no assertion anywhere) measure something: exit 0. The agent reports no usage: its
    # tokens are estimates, and every report says so
    skill, script = make_skill(tmp_path / "c", {"one": {"with": "alpha", "without": "b", "checks": []}}, usage=False)
    out = paired("--skill-path", skill, *AGENT, *JUDGE, "--no-store", cwd=tmp_path / "c", script_file=script)
    assert out.returncode == 0, out.stderr
    assert "≈" in next(line for line in out.stdout.splitlines() if "with_skill" in line)
    iteration = tmp_path / "c" / "tally-workspace" / "iteration-1"
    bench = json.loads((iteration / "benchmark.json").read_text())
    assert [bench["run_summary"][arm]["tokens_estimated"] for arm in ("with_skill", "without_skill")] == [1, 1]
    assert ("The tokens of 2 of 2 finished runs are estimates (the agent reported no usage: about 4 characters a "
            "token), not measurements: compare them with care.") in bench["notes"]
    assert "| tokens (≈ estimated) |" in (iteration / "benchmark.md").read_text()


def test_ctrl_c_while_the_judge_compares_says_what_is_left_and_resume_finishes_it(tmp_path: Path) -> None:
    skill, script = make_skill(tmp_path, {"one": {"with": "alpha beta gamma", "without": "alpha"},
                                          "two": {"with": "alpha beta", "without": "none"}})
    common = ["--skill-path", skill, *AGENT, *JUDGE, "--no-store"]
    env = {**os.environ, "FAKE_AGENT_CONFIG": str(script), "FAKE_JUDGE_DELAY": "60"}
    proc = subprocess.Popen([sys.executable, "-m", "eval_skills", "paired", *map(str, common)], cwd=tmp_path,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    iteration = tmp_path / "tally-workspace" / "iteration-1"
    deadline = time.time() + 60
    while time.time() < deadline and len(list(iteration.rglob("grading.json"))) < 4:
        time.sleep(0.05)
    time.sleep(0.5)  # every run is in and graded (checks only); the judge thinks over both comparisons
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "interrupted: 0 of 4 runs missing, 2 run pairs not compared; every finished run was kept" in err
    bench = json.loads((iteration / "benchmark.json").read_text())
    meta = bench["metadata"]
    assert (meta["complete"], meta["missing_runs"], meta["pending_comparisons"]) == (
        False, [], ["eval-1-run-1", "eval-2-run-1"])
    assert bench["comparison"]["pending"] == 2 and bench["comparison"]["pairs"] == 0
    assert "Interrupted: 0 runs missing, 2 run pairs not compared (finish with --resume)." in bench["notes"]
    md = (iteration / "benchmark.md").read_text()
    assert "2 pairs not compared yet" in md and "Not finished (interrupted):** 0 of 4 runs are missing" in md
    out = paired(*common, "--resume", cwd=tmp_path, script_file=script)
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "agent-log.jsonl").read_text().count("\n") == 4  # no agent ran again
    bench = json.loads((iteration / "benchmark.json").read_text())
    assert bench["metadata"]["complete"] is True and bench["metadata"]["pending_comparisons"] == []
    assert (bench["comparison"]["wins"], bench["comparison"]["pending"]) == (2, 0)


def test_a_huge_response_is_cut_for_the_judge_and_checked_whole(tmp_path: Path) -> None:
    huge = "x" * 300_000 + " THE-END"
    skill, script = make_skill(tmp_path, {"one": {"with": huge, "without": "short", "expected": "xxxx THE-END",
                                                  "checks": [{"type": "contains", "value": "THE-END"}],
                                                  "assertions": ['It ends with "THE-END"']}})
    judge_log = tmp_path / "judge-log.jsonl"
    out = paired("--skill-path", skill, *AGENT, *JUDGE, "--no-store", "--json", cwd=tmp_path, script_file=script,
                 judge_log=judge_log, env={"FAKE_JUDGE_LOG_SIZES": "1"})
    assert out.returncode == 0, out.stderr
    calls = {c["kind"]: c["response_chars"] for c in map(json.loads, judge_log.read_text().splitlines())
             if c["response_chars"] != len("short")}
    shown = 75_000 + 25_000 + len(f"\n\n... [{len(huge) - 100_000} characters not shown] ...\n\n")
    assert calls["grade"] == shown and sorted(calls["compare"]) == [5, shown]
    bench = json.loads(out.stdout)
    run = next(r for r in bench["runs"] if r["configuration"] == "with_skill")
    assert [e["passed"] for e in run["expectations"]] == [True, True]  # the judge saw the end; the check all of it
    response = tmp_path / "tally-workspace" / "iteration-1" / "eval-1" / "with_skill" / "run-1" / "outputs"
    assert (response / "response.md").read_text() == huge
    assert bench["comparison"]["wins"] == 1


def test_selftune_key_equals_value_reads_as_selftune_reads_it(tmp_path: Path) -> None:
    from eval_skills.paired import load_plan
    from eval_skills.paired.grading import grade_run
    from eval_skills.paired.record import RunRecord
    from eval_skills.paired.selftune import selftune_check

    checks = [{"type": "json_path", "value": v} for v in ("count=3", "ok=true", "version=2.0", "bump=minor")]
    skill, _ = make_skill(tmp_path, {"one": {"with": "", "without": "", "checks": checks}})
    case = load_plan(skill).cases[0]

    def grade(answer: str) -> list[tuple[bool | None, str]]:
        record = RunRecord(run_id="r", case_key="1", arm="with_skill", number=1, status="ok", error=None,
                           response=answer, transcript=[], outputs={}, duration_s=1.0, tokens=1,
                           token_measurement="measured", tool_calls=0)
        grading, judgement = asyncio.run(grade_run(case, record, None))
        assert judgement is None
        return [(e.passed, e.evidence) for e in grading.expectations]

    # SelfTune compares String(value) with the text after "=", and finds the object anywhere in the answer
    as_text = grade('Done. {"count": "3", "ok": "true", "version": "2.0", "bump": "minor"} Bye.')
    assert [p for p, _ in as_text] == [True] * 4
    assert as_text[0][1] == 'count is "3" in the JSON object at line 1'
    as_json = grade('Result:\n```\n{"count": 3, "ok": true, "version": 2.0, "bump": "minor"}\n```')
    assert [p for p, _ in as_json] == [True] * 4
    fenced = grade('x {"note": 1}\n```json\n{"count": 3.0, "ok": false, "version": "2", "bump": "Minor"}\n```')
    assert [p for p, _ in fenced] == [True, False, False, False]  # the ```json block wins over other objects
    assert fenced[1][1] == "ok is false in the ```json block at line 2, column 1, not 'true'"
    assert grade("no JSON here")[0] == (False, "no JSON object in the answer")
    with pytest.raises(InputError, match="f: x: json_path '=x' has no key before '='"):
        selftune_check({"type": "json_path", "value": "=x"}, file="f", field="x")
    assert grade('{"other": 1}')[3] == (False, "no key 'bump' in the answer")


def test_a_fixture_named_like_the_skills_folder_is_bad_input(tmp_path: Path) -> None:
    skill, script = make_skill(tmp_path, {"one": {"with": "alpha", "without": "beta"}})
    (skill / "evals" / "files").mkdir()
    (skill / "evals" / "files" / ".agents").write_text("a file where the agent's skills folder goes")
    evals = json.loads((skill / "evals" / "evals.json").read_text())
    evals["evals"][0]["files"] = ["evals/files/.agents"]
    (skill / "evals" / "evals.json").write_text(json.dumps(evals))
    out = paired("--skill-path", skill, *AGENT, "--no-compare", "--no-store", cwd=tmp_path, script_file=script)
    assert out.returncode == 2, out.stderr
    assert out.stderr.strip() == (
        f"error: {skill / 'evals' / 'evals.json'}: $.evals[0].files[0]: the fixture file '.agents' has the name of "
        "the folder the agent finds skills in (.agents/skills): the skill could not be installed (rename the "
        "fixture file)")
    assert not (tmp_path / "tally-workspace").exists() and not (tmp_path / "agent-log.jsonl").exists()
    out = paired("--skill-path", skill, *AGENT, "--skills-subdir", ".claude/skills", "--no-compare", "--no-store",
                 cwd=tmp_path, script_file=script)
    assert out.returncode == 0, out.stderr  # another agent's folder: no clash


def test_runs_started_at_once_into_one_workspace_get_an_iteration_each(tmp_path: Path) -> None:
    skill, script = make_skill(tmp_path, {"one": {"with": "alpha beta gamma", "without": "alpha"}})
    env = {**os.environ, "FAKE_AGENT_CONFIG": str(script)}
    procs = [subprocess.Popen([sys.executable, "-m", "eval_skills", "paired", "--skill-path", str(skill), *AGENT,
                               "--no-compare", "--no-store"], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(4)]
    outs = [proc.communicate(timeout=120) for proc in procs]
    assert [proc.returncode for proc in procs] == [0] * 4, [err for _, err in outs]
    workspace = tmp_path / "tally-workspace"
    assert sorted(p.name for p in workspace.iterdir()) == [f"iteration-{n}" for n in range(1, 5)]
    for n in range(1, 5):  # each has its own two runs, none mixed with another's
        bench = json.loads((workspace / f"iteration-{n}" / "benchmark.json").read_text())
        assert bench["metadata"]["iteration"] == n and len(bench["runs"]) == 2 and bench["metadata"]["complete"]
    assert sorted(out.split("\n")[0].split()[-1] for out, _ in outs) == ["1", "2", "3", "4"]  # "tally: iteration n"


def test_an_iteration_is_claimed_by_creating_its_config(tmp_path: Path) -> None:
    from eval_skills.paired.iteration import CONFIG_FILE, claim_iteration

    assert claim_iteration(tmp_path, None) == (1, tmp_path / "iteration-1")
    assert (tmp_path / "iteration-1" / CONFIG_FILE).is_file()
    assert claim_iteration(tmp_path, None)[0] == 2
    (tmp_path / "iteration-5").mkdir()  # made by hand, empty: --iteration 5 may use it, once
    assert claim_iteration(tmp_path, 5)[0] == 5
    with pytest.raises(InputError, match="already holds runs"):
        claim_iteration(tmp_path, 5)


def test_a_run_given_no_iteration_never_refuses_the_number_another_run_claims_meanwhile(tmp_path: Path) -> None:
    """The check before a run (no --iteration: the next free number) races a run started at the same time, which
    claims that number in between: the check must not refuse it (the run then claims the next one). Two threads,
    one claiming iterations as fast as it can, the other checking, as two `paired` processes do."""
    import threading

    from eval_skills.paired.iteration import claim_iteration, resolve_iteration

    refused: list[str] = []
    claimed = threading.Event()

    def claimer() -> None:
        for _ in range(400):
            claim_iteration(tmp_path, None)
            claimed.set()

    thread = threading.Thread(target=claimer)
    thread.start()
    claimed.wait(30)
    while thread.is_alive():
        try:
            resolve_iteration(tmp_path, None, False)
        except InputError as exc:
            refused.append(str(exc))
    thread.join()
    assert refused == [] and len(list(tmp_path.iterdir())) == 400
    with pytest.raises(InputError, match="already holds runs"):  # a number given is still refused when taken
        resolve_iteration(tmp_path, 7, False)
