"""`eval-skills paired` at the edges: bad input (one line, exit 2, nothing written), the quality gates, the token
budget, Ctrl-C and --resume. Real processes: the fake agent and fake judge programs."""

from __future__ import annotations

import json
import signal
import sqlite3
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from paired_data import V2_ANSWER, agent_args, invoice_skill, judge_args, paired, popen_paired
from procs import wait_gone

from eval_skills.cli import cli


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def small_skill(tmp_path: Path, cases: int, *, judged: bool = False, helps: bool = True, delay: float = 0.0):
    """``cases`` cases of the invoice skill; only the deterministic check ``contains "VAT amount"`` unless
    ``judged``. With ``helps`` the skill's answer passes and the plain answer fails; without, both pass."""
    skill, old, script = invoice_skill(tmp_path)
    evals = json.loads((skill / "evals" / "evals.json").read_text())
    evals["evals"] = evals["evals"][:cases]
    for case in evals["evals"]:
        case["selftune_assertions"] = [{"type": "contains", "value": "VAT amount"}]
        if not judged:
            case["assertions"] = []
    (skill / "evals" / "evals.json").write_text(json.dumps(evals))
    data = json.loads(script.read_text())
    data.update(cases=[], delay=delay)
    if not helps:
        data["answer"] = V2_ANSWER
    script.write_text(json.dumps(data))
    return skill, old, script


def timings(workspace: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in workspace.rglob("timing.json")}


# ---- bad input ----------------------------------------------------------------------------------------


def invoke(*args: object) -> object:
    return CliRunner().invoke(cli, ["paired", *map(str, args)])


def break_evals(skill: Path, change) -> None:
    path = skill / "evals" / "evals.json"
    evals = json.loads(path.read_text())
    changed = change(evals)  # a new document, or None when changed in place
    path.write_text(json.dumps(evals if changed is None else changed))


BAD_EVALS = {
    "no cases": (lambda e: e.update(evals=[]), "evals.json: $.evals: has no cases"),
    "outside": (lambda e: e["evals"][0].update(files=["../agent.json"]), "$.evals[0].files[0]: '../agent.json' "
                "leaves the skill folder"),
    "missing fixture": (lambda e: e["evals"][0].update(files=["evals/files/nope.txt"]), "fixture file"),
    "same name": (lambda e: e["evals"][0].update(files=["evals/files/invoice.txt", "evals/files/notes/invoice.txt"]),
                  None),
    "bad regex": (lambda e: e["evals"][0].update(selftune_assertions=[{"type": "regex", "value": "(unclosed"}]),
                  "$.evals[0].selftune_assertions[0]: invalid regular expression"),
    "unknown check": (lambda e: e["evals"][1].update(selftune_assertions=[{"type": "smells_nice", "value": "x"}]),
                      "$.evals[1].selftune_assertions[0]: unknown check kind 'smells_nice'"),
    "duplicate id": (lambda e: e["evals"][1].update(id=1), "$.evals[1].id: id 1 appears twice"),
    "id true": (lambda e: e["evals"][1].update(id=True), "$.evals[1].id: an id is a number or a text, not true"),
    "bare array": (lambda e: e["evals"], "evals.json: $: expected a JSON object, not an array (write "
                   '{"skill_name": ..., "evals": [{"id": ..., "prompt": ...}, ...]})'),
    "blank prompt": (lambda e: e["evals"][1].update(prompt=" \n"), "$.evals[1].prompt: the prompt is blank"),
    "blank expectation": (lambda e: e["evals"][0].update(expectations=e["evals"][0].pop("assertions") + [""]),
                          "$.evals[0].expectations[2]: the assertion is blank"),
    "expectations not a list": (lambda e: e["evals"][0].update(expectations="It states 42", assertions=None)
                                or e["evals"][0].pop("assertions"),
                                "$.evals[0].expectations: Input should be a valid list"),
    "id too long": (lambda e: e["evals"][0].update(id="é" * 101), "$.evals[0].id: id 'éé"),  # 202 bytes
}


@pytest.mark.parametrize("name", list(BAD_EVALS))
def test_bad_evals_are_one_line_exit_2_before_anything_runs(tmp_path: Path, monkeypatch, name: str) -> None:
    monkeypatch.chdir(tmp_path)
    skill, _, script = invoice_skill(tmp_path)
    change, message = BAD_EVALS[name]
    if name == "same name":
        (skill / "evals" / "files" / "notes" / "invoice.txt").write_text("again")
        message = "two fixture files would be copied to 'invoice.txt' in the run's folder"
    break_evals(skill, change)
    result = invoke("--skill-path", skill, *agent_args(script), *judge_args())
    assert result.exit_code == 2, result.output
    assert len(result.stderr.strip().splitlines()) == 1 and message in result.stderr
    assert not (tmp_path / "invoice-check-workspace").exists() and not (tmp_path / "eval-skills.db").exists()
    assert not (tmp_path / "agent-log.jsonl").exists()


def test_bad_skill_options_and_workspace_are_exit_2(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    skill, old, script = invoice_skill(tmp_path)
    common = [*agent_args(script), *judge_args()]

    def check(args: list[object], message: str) -> None:
        result = invoke(*args)
        assert result.exit_code == 2 and message in result.stderr, (result.output, result.stderr)
        assert len(result.stderr.strip().splitlines()) == 1

    check(["--skill-path", tmp_path / "nowhere", *common], "no SKILL.md in this folder")
    (tmp_path / "misnamed").mkdir()
    (tmp_path / "misnamed" / "SKILL.md").write_text((skill / "SKILL.md").read_text())
    check(["--skill-path", tmp_path / "misnamed", *common], "frontmatter.name: 'invoice-check' must equal the "
                                                            "skill's folder name 'misnamed'")
    check(["--skill-path", skill, "--evals", tmp_path / "none.json", *common], "none.json: evals file not found")
    check(["--skill-path", skill, "--baseline-skill-path", tmp_path, *common], "--baseline-skill-path")
    (tmp_path / "feedback.json").write_text('{"reviews": [{"feedback": "no run id"}]}')
    check(["--skill-path", skill, "--feedback", tmp_path / "feedback.json", *common], "feedback.json: $.reviews[0]"
                                                                                     ".run_id")
    check(["--skill-path", skill, "--agent-cmd", "no-such-agent-xyz {prompt}", *judge_args()], "not found")
    check(["--skill-path", skill, "--resume", *common], "no iteration to resume")
    check(["--skill-path", skill, "--workspace", skill / "runs", *common], "--workspace: is inside the skill folder")
    taken = tmp_path / "invoice-check-workspace" / "iteration-1"
    taken.mkdir(parents=True)
    (taken / "notes.txt").write_text("mine")
    check(["--skill-path", skill, "--iteration", 1, *common], "iteration-1: --iteration: already holds runs")
    check(["--skill-path", skill, "--resume", *common], "iteration-1 was not started by eval-skills paired")
    for option, value in [("--min-delta", "nan"), ("--min-delta-ci", "nan"), ("--min-delta", "inf"),
                          ("--timeout", "nan"), ("--timeout", "inf")]:  # nan passes every comparison
        check(["--skill-path", skill, option, value, *common], f"'{value}' is not a finite number")
    assert sorted(p.name for p in taken.iterdir()) == ["notes.txt"] and not (tmp_path / "eval-skills.db").exists()
    assert not (tmp_path / "agent-log.jsonl").exists()


# ---- gates and budget ---------------------------------------------------------------------------------


def test_min_delta_gates_and_a_baseline_that_is_not_clean(tmp_path: Path) -> None:
    skill, _, script = small_skill(tmp_path, 2, helps=False)
    common = ["--skill-path", skill, *agent_args(script), "--no-compare", "--no-store"]
    home = tmp_path / "home"  # the same skill installed at user level: every run may load it
    (home / ".agents" / "skills" / "invoice-check").mkdir(parents=True)
    (home / ".agents" / "skills" / "invoice-check" / "SKILL.md").write_text((skill / "SKILL.md").read_text())
    out = paired(*common, "--min-delta", 0.1, cwd=tmp_path, script_file=script, env={"HOME": str(home)})
    assert out.returncode == 1, out.stderr
    assert "quality gate failed: pass-rate delta +0.0000 is below --min-delta +0.1" in out.stderr
    assert "warning: A skill named 'invoice-check' is installed at user level" in out.stderr
    bench = json.loads((tmp_path / "invoice-check-workspace" / "iteration-1" / "benchmark.json").read_text())
    assert bench["statistics"]["pass_rate_delta"]["estimate"] == 0.0 and bench["comparison"] is None
    assert bench["metadata"]["baseline_clean"] is False and any("not clean" in n for n in bench["notes"])
    out = paired(*common, "--min-delta", 0, cwd=tmp_path, script_file=script)
    assert out.returncode == 0, out.stderr  # the gate holds at the bound
    out = paired(*common, "--min-delta-ci", -1, cwd=tmp_path, script_file=script)
    assert out.returncode == 0, out.stderr  # two cases cannot bound the delta: the interval is [-1, 1]
    helps, _, script = small_skill(tmp_path / "b", 6)
    out = paired("--skill-path", helps, *agent_args(script), "--no-compare", "--no-store", "--min-delta", 0.9,
                 "--min-delta-ci", 1.5, cwd=tmp_path, script_file=script)
    assert out.returncode == 1
    assert out.stderr.strip().endswith("the interval's lower bound +1.0000 is below --min-delta-ci +1.5")


def test_budget_stops_starting_runs_and_resume_finishes(tmp_path: Path) -> None:
    skill, _, script = small_skill(tmp_path, 4)
    common = ["--skill-path", skill, *agent_args(script), "--no-compare", "--store", tmp_path / "s.db",
              "--concurrency", 1]
    given = tmp_path / "old-feedback.json"
    given.write_text(json.dumps({"reviews": [{"run_id": "eval-1-with_skill-run-1", "feedback": "too terse",
                                              "timestamp": "2025-01-01T00:00:00Z"}], "status": "complete"}))
    out = paired(*common, "--budget-tokens", 40, "--feedback", given, cwd=tmp_path, script_file=script)
    assert out.returncode == 0, out.stderr
    assert "--budget-tokens reached: 5 runs not started" in out.stderr
    iteration = tmp_path / "invoice-check-workspace" / "iteration-1"
    bench = json.loads((iteration / "benchmark.json").read_text())
    meta = bench["metadata"]
    assert (meta["complete"], meta["cut_short"], meta["tokens_used"]) == (False, "budget", 45)
    assert len(meta["missing_runs"]) == 5 and len(bench["runs"]) == 3 and len(lines(tmp_path / "agent-log.jsonl")) == 3
    assert any(note.startswith("Cut short by --budget-tokens 40") for note in bench["notes"])
    assert "Not finished (budget):** 5 of 8 runs are missing" in (iteration / "benchmark.md").read_text()
    feedback = json.loads((iteration / "feedback.json").read_text())
    assert feedback["status"] == "in_progress"  # the given review was complete, these runs are not reviewed yet
    reviews = feedback["reviews"]
    assert reviews[0] == {"run_id": "eval-1-with_skill-run-1", "feedback": "too terse",
                          "timestamp": "2025-01-01T00:00:00Z"}
    assert len(reviews) == 3 and {r["feedback"] for r in reviews[1:]} == {""}  # one per finished run
    with sqlite3.connect(tmp_path / "s.db") as db:
        assert db.execute("SELECT status FROM paired_iterations").fetchone() == ("cut_short",)
    # the skill changed since: resuming would mix two versions
    original = (skill / "SKILL.md").read_text()
    (skill / "SKILL.md").write_text(original + "\nOne more rule.\n")
    out = paired(*common, "--resume", cwd=tmp_path, script_file=script)
    assert out.returncode == 2 and "cannot resume: the skill changed since the iteration started" in out.stderr
    (skill / "SKILL.md").write_text(original)
    kept = timings(tmp_path / "invoice-check-workspace")
    out = paired(*common, "--resume", cwd=tmp_path, script_file=script)
    assert out.returncode == 0, out.stderr
    bench = json.loads((iteration / "benchmark.json").read_text())
    assert bench["metadata"]["complete"] is True and len(bench["runs"]) == 8
    assert len(lines(tmp_path / "agent-log.jsonl")) == 8  # the three finished runs were not run again
    reviews = json.loads((iteration / "feedback.json").read_text())["reviews"]
    assert len(reviews) == 8 and reviews[0]["feedback"] == "too terse"  # the reviews so far are kept
    assert all(path.read_bytes() == data for path, data in kept.items())
    with sqlite3.connect(tmp_path / "s.db") as db:
        assert db.execute("SELECT COUNT(*) FROM paired_runs").fetchone() == (8,)
        assert db.execute("SELECT COUNT(*), status FROM paired_iterations").fetchone() == (1, "finished")


# ---- Ctrl-C and resume --------------------------------------------------------------------------------


def test_interrupt_keeps_finished_runs_and_resume_asks_nothing_twice(tmp_path: Path) -> None:
    skill, _, script = small_skill(tmp_path, 4, judged=True, delay=0.6)
    judge_log = tmp_path / "judge-log.jsonl"
    common = ["--skill-path", skill, *agent_args(script), *judge_args(), "--store", tmp_path / "s.db",
              "--concurrency", 2]
    workspace = tmp_path / "invoice-check-workspace"
    proc = popen_paired(*common, cwd=tmp_path, script_file=script, judge_log=judge_log)
    deadline = time.time() + 60
    while time.time() < deadline and len(list(workspace.rglob("grading.json"))) < 2:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "interrupted:" in err and "--resume --iteration 1" in err
    iteration = workspace / "iteration-1"
    bench = json.loads((iteration / "benchmark.json").read_text())
    finished = timings(workspace)
    graded = {p: p.read_bytes() for p in workspace.rglob("grading.json")}
    assert 2 <= len(finished) < 8 and len(graded) >= 2
    assert bench["metadata"]["cut_short"] == "interrupted" and bench["metadata"]["complete"] is False
    assert len(bench["metadata"]["missing_runs"]) == 8 - len(finished) == 8 - len(bench["runs"])
    with sqlite3.connect(tmp_path / "s.db") as db:
        assert db.execute("SELECT status FROM paired_iterations").fetchone() == ("interrupted",)
        assert db.execute("SELECT COUNT(*) FROM paired_runs").fetchone() == (len(finished),)
    compared = sum(len(json.loads(p.read_text())["comparisons"]) for p in iteration.rglob("comparison.json"))
    agent_calls, judge_calls = len(lines(tmp_path / "agent-log.jsonl")), len(lines(judge_log))
    with sqlite3.connect(tmp_path / "s.db") as db:  # every verdict the judge gave, saved in a file or not yet
        (cached,) = db.execute("SELECT COUNT(*) FROM judge_cache").fetchone()
    assert cached >= len(graded) + compared

    out = paired(*common, "--resume", cwd=tmp_path, script_file=script, judge_log=judge_log)
    assert out.returncode == 0, out.stderr
    bench = json.loads((iteration / "benchmark.json").read_text())
    assert bench["metadata"]["complete"] is True and len(bench["runs"]) == 8 and bench["metadata"]["resumed"]
    assert all(path.read_bytes() == data for path, data in finished.items())  # finished runs not run again
    assert all(path.read_bytes() == data for path, data in graded.items())  # graded runs not judged again
    assert len(lines(tmp_path / "agent-log.jsonl")) - agent_calls == 8 - len(finished)
    # 8 grades and 4 comparisons in all: the judge is asked once for each verdict it had not given before (one
    # given just before the interruption, not yet in a file, comes from the cache)
    assert len(lines(judge_log)) - judge_calls == 12 - cached
    assert bench["comparison"]["wins"] + bench["comparison"]["ties"] + bench["comparison"]["losses"] == 4
    assert bench["run_summary"]["with_skill"]["pass_rate"]["mean"] == 1.0
    assert bench["run_summary"]["without_skill"]["pass_rate"]["mean"] == 0.0


def test_a_resume_of_an_iteration_still_running_is_refused(tmp_path: Path) -> None:
    skill, _, script = small_skill(tmp_path, 2)
    gate = tmp_path / "gate"  # the agent's runs wait for it: the first paired runs until the test opens it
    script.write_text(json.dumps({**json.loads(script.read_text()), "wait_for": str(gate)}))
    common = ["--skill-path", skill, *agent_args(script), "--no-compare", "--no-store", "--concurrency", 1]
    iteration = tmp_path / "invoice-check-workspace" / "iteration-1"
    proc = popen_paired(*common, cwd=tmp_path, script_file=script)
    deadline = time.time() + 120
    log = tmp_path / "agent-log.jsonl"
    while time.time() < deadline and not (log.exists() and b"\n" in log.read_bytes()) and proc.poll() is None:
        time.sleep(0.05)  # the first run has started: the first paired holds the iteration
    out = paired(*common, "--resume", cwd=tmp_path, script_file=script)
    still_running = proc.poll() is None
    gate.touch()
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert still_running and out.returncode == 2, out.stderr
    assert out.stderr.strip() == (f"error: {iteration}: --resume: another eval-skills paired "
                                  "is running this iteration (wait for it to finish, or stop it first)")
    assert len(lines(tmp_path / "agent-log.jsonl")) == 4  # the refused one ran nothing
    out = paired(*common, "--resume", cwd=tmp_path, script_file=script)  # the lock went with the first
    assert out.returncode == 0, out.stderr


def test_sigterm_stops_the_agents_in_flight_exit_143(tmp_path: Path) -> None:
    skill, _, script = small_skill(tmp_path, 1)
    pids = tmp_path / "pids.txt"
    data = json.loads(script.read_text())
    data.update(mode="hang", spawn_child=True, pid_file=str(pids))
    script.write_text(json.dumps(data))
    proc = popen_paired("--skill-path", skill, *agent_args(script), "--no-compare", "--no-store", "--concurrency", 1,
                        cwd=tmp_path, script_file=script)
    deadline = time.time() + 30
    while time.time() < deadline and len(pids.read_text().split() if pids.exists() else []) < 2:
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 143, err
    assert all(wait_gone(int(pid)) for pid in pids.read_text().split())  # the agent and its child
    bench = json.loads((tmp_path / "invoice-check-workspace" / "iteration-1" / "benchmark.json").read_text())
    assert bench["runs"] == [] and len(bench["metadata"]["missing_runs"]) == 2
    assert bench["verdict"].startswith("Too little data to say: no case")
