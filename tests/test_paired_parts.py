"""The parts of a paired evaluation on their own: SelfTune checks, the run order and A/B labels, the statistics
on hand-made records, the executor interface with another backend, and the local executor's folders."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from fakes import FAKE_JUDGE, fake_agent
from paired_data import V1_ANSWER, V2_ANSWER, invoice_skill

from eval_skills.agents import TokenUsage, create_agent
from eval_skills.errors import InputError
from eval_skills.formats.workspace import Expectation, FinalEvent, Grading, GradingSummary, ToolCallEvent
from eval_skills.judges import create_judge
from eval_skills.paired import (
    LocalExecutor,
    OutputFile,
    PairedSettings,
    Progress,
    RunOutput,
    RunSpec,
    ab_order,
    load_plan,
    read_bundle,
    run_paired,
)
from eval_skills.paired.grading import TRANSCRIPT_VALUE_LIMIT, _for_judge
from eval_skills.paired.plan import selftune_check
from eval_skills.paired.record import RunRecord
from eval_skills.paired.summary import delta_estimate, non_discriminating, pass_at_k, verdict_sentence
from eval_skills.scoring.assertions import run_check

# ---- SelfTune checks ------------------------------------------------------------------------------------


def test_selftune_json_path_key_equals_expected_form() -> None:
    answer = 'Done.\n```json\n{"status": "ok", "count": 3, "weird key": "x"}\n```'
    status = selftune_check({"type": "json_path", "value": "status=ok"}, file="f", field="x")
    assert (status.check.value, status.check.expected, status.text) == ("$.status", "ok", 'json_path "status=ok"')
    assert run_check(status.check, answer).passed
    count = selftune_check({"type": "json_path", "value": "count=3"}, file="f", field="x")
    assert count.check.expected == 3 and run_check(count.check, answer).passed
    assert not run_check(selftune_check({"type": "json_path", "value": "count=4"}, file="f", field="x").check,
                         answer).passed
    weird = selftune_check({"type": "json_path", "value": "weird key=x", "description": "The key is x"},
                           file="f", field="x")
    assert weird.check.value == '$["weird key"]' and weird.text == "The key is x"
    assert run_check(weird.check, answer).passed
    # a JSONPath stays a JSONPath, and an explicit expected value is kept
    path = selftune_check({"type": "json_path", "value": "$.count", "expected": 3}, file="f", field="x")
    assert (path.check.value, path.check.expected, path.text) == ("$.count", 3, 'json_path "$.count" = 3')
    tool = selftune_check({"type": "tool_called", "value": "Read", "args": "SKILL.md"}, file="f", field="x")
    assert tool.text == 'tool_called "Read" with "SKILL.md"'
    calls = [{"name": "Read", "input": {"file_path": ".agents/skills/x/SKILL.md"}}]
    assert run_check(tool.check, "no text", calls).passed and not run_check(tool.check, "Read SKILL.md", []).passed
    with pytest.raises(InputError, match="f: x: unknown check kind 'nope'"):
        selftune_check({"type": "nope", "value": "v"}, file="f", field="x")


# ---- the plan -------------------------------------------------------------------------------------------


def test_runs_interleave_the_arms_and_ab_labels_come_from_the_seed(tmp_path: Path) -> None:
    skill, old, _ = invoice_skill(tmp_path)
    plan = load_plan(skill, baseline_path=old, runs=3, seed=11)
    order = list(plan.order())
    assert len(order) == plan.total == 8 * 2 * 3
    for first, second in zip(order[::2], order[1::2], strict=True):  # both arms of a case side by side
        assert (first.case.key, first.number) == (second.case.key, second.number) and first.arm != second.arm
    assert [p.number for p in order] == sorted(p.number for p in order)  # run 1 of every case, then run 2...
    firsts = [p.arm for p in order[::2]]
    assert 0 < firsts.count("with_skill") < len(firsts)  # neither arm always goes first
    assert order == list(load_plan(skill, baseline_path=old, runs=3, seed=11).order())
    orders = [ab_order(11, str(k), n, plan.arms)["A"] for k in range(1, 50) for n in (1, 2)]
    assert 30 < orders.count("with_skill") < 68 and orders == [ab_order(11, str(k), n, plan.arms)["A"]
                                                               for k in range(1, 50) for n in (1, 2)]
    assert plan.bundles["old_skill"][0].name == "invoice-check"  # the old copy is installed under the same name
    assert not any("baseline skill is named" in w for w in plan.warnings)
    (old / "SKILL.md").write_text((old / "SKILL.md").read_text().replace("name: invoice-check", "name: invoice-v1"))
    renamed = load_plan(skill, baseline_path=old)  # another name in its frontmatter: installed as the skill, said
    assert renamed.bundles["old_skill"][0].name == "invoice-check"
    assert "the baseline skill is named 'invoice-v1', not 'invoice-check'; it is installed as 'invoice-check' so " \
           "both arms see the same folder name" in renamed.warnings
    invoice, terms = b"Invoice 7: 35 EUR + 7 EUR VAT\n", b"Payment in 30 days\n"
    assert plan.cases[0].files == {"evals/files/invoice.txt": invoice, "evals/files/notes/terms.txt": terms}
    # in a run's folder each file is at its path relative to the skill and, again, by its name at the root
    assert plan.cases[0].placed == {"evals/files/invoice.txt": invoice, "invoice.txt": invoice,
                                    "evals/files/notes/terms.txt": terms, "terms.txt": terms}


def test_a_skill_bundle_is_data_without_evals(tmp_path: Path) -> None:
    skill, _, _ = invoice_skill(tmp_path)
    (skill / "scripts" / "__pycache__").mkdir(parents=True)
    (skill / "scripts" / "__pycache__" / "x.pyc").write_bytes(b"\0")
    (skill / "scripts" / "total.py").write_text("print(42)")
    bundle = read_bundle(skill)
    assert sorted(bundle.files) == ["SKILL.md", "scripts/total.py"]
    assert bundle.name == "invoice-check" and len(bundle.digest) == 64
    (skill / "scripts" / "total.py").write_text("print(43)")
    assert read_bundle(skill).digest != bundle.digest


# ---- statistics on hand-made records --------------------------------------------------------------------


def record(case: str, arm: str, number: int, passed: list[bool | None] | None) -> RunRecord:
    """A run of ``case``; ``passed`` None makes it an error run."""
    grading = None
    if passed is not None:
        expectations = [Expectation(text=f"a{i}", passed=p) for i, p in enumerate(passed)]
        ok, bad = sum(p is True for p in passed), sum(p is False for p in passed)
        grading = Grading(expectations=expectations, summary=GradingSummary(
            passed=ok, failed=bad, total=ok + bad, pass_rate=ok / (ok + bad) if ok + bad else None))
    return RunRecord(run_id=f"eval-{case}-{arm}-run-{number}", case_key=case, arm=arm, number=number,
                     status="ok" if passed is not None else "error", error=None if passed is not None else "boom",
                     response="r" if passed is not None else None, transcript=[], outputs={}, duration_s=1.0,
                     tokens=10, token_measurement="measured", tool_calls=0, grading=grading)


def test_statistics_on_hand_made_runs(tmp_path: Path) -> None:
    skill, _, _ = invoice_skill(tmp_path)
    evals = json.loads((skill / "evals" / "evals.json").read_text())
    for case in evals["evals"]:
        case.update(assertions=["a0", "a1"], selftune_assertions=[])
    evals["evals"] = evals["evals"][:3]
    (skill / "evals" / "evals.json").write_text(json.dumps(evals))
    plan = load_plan(skill, runs=3, seed=5)
    T, F, N = True, False, None
    W, B = "with_skill", "without_skill"
    runs = [
        # case 1: the skill passes a0 always and a1 in 2 of 3 runs; the baseline passes a0 once, never a1
        record("1", W, 1, [T, T]), record("1", W, 2, [T, T]), record("1", W, 3, [T, F]),
        record("1", B, 1, [T, F]), record("1", B, 2, [F, F]), record("1", B, 3, [F, F]),
        # case 2: a judge error in one run (a1 ungraded) and an error run in the baseline
        record("2", W, 1, [T, N]), record("2", W, 2, [T, T]), record("2", W, 3, [T, T]),
        record("2", B, 1, [T, T]), record("2", B, 2, None), record("2", B, 3, [T, F]),
        # case 3: only the baseline passes a1
        record("3", W, 1, [F, F]), record("3", W, 2, [F, F]), record("3", W, 3, [F, F]),
        record("3", B, 1, [F, T]), record("3", B, 2, [F, T]), record("3", B, 3, [F, F]),
    ]
    records = {r.run_id: r for r in runs}
    # per case: mean pass rate with the skill minus the baseline's, over graded runs
    # case 1: (1 + 1 + .5)/3 - (.5 + 0 + 0)/3 = 2/3; case 2: (1 + 1 + 1)/3 - (1 + .5)/2 = .25;
    # case 3: 0 - (.5 + .5 + 0)/3 = -1/3
    d = delta_estimate(plan, records)
    assert d.model_extra["case_deltas"] == {"1": 0.6667, "2": 0.25, "3": -0.3333}
    assert d.estimate == round((2 / 3 + 0.25 - 1 / 3) / 3, 4) == 0.1944
    # |sum| >= 7/12 for (+,+,+), (+,+,-), (+,-,-) and their mirrors: 6 of the 8 sign patterns
    assert d.p_value == 0.75
    assert "no p-value below 0.05" in d.note
    # pass@3 / pass^3: a run passes when every expectation passed; case 2's judge-error run cannot tell
    k = pass_at_k(plan, records)
    assert (k["with_skill"].pass_at_k, k["with_skill"].pass_hat_k, k["with_skill"].model_extra["cases"]) == (
        0.5, 0.0, 2)  # case 1: 2 of 3 pass -> 1 and 0; case 3: none -> 0 and 0; case 2 has 2 countable runs
    assert (k["without_skill"].pass_at_k, k["without_skill"].pass_hat_k) == (0.0, 0.0)  # cases 1 and 3
    kinds = {(str(n.eval_id), n.assertion): n.kind for n in non_discriminating(plan, records)}
    assert kinds == {("1", "a0"): "flaky", ("1", "a1"): "flaky", ("2", "a0"): "always_pass", ("2", "a1"): "flaky",
                     ("3", "a0"): "always_fail", ("3", "a1"): "only_without_skill"}
    counts = {(str(n.eval_id), n.assertion): n.counts for n in non_discriminating(plan, records)}
    assert counts[("2", "a1")] == {"with_skill": {"passed": 2, "runs": 2}, "without_skill": {"passed": 1, "runs": 2}}


def test_cases_with_a_delta_of_0_count_toward_the_smallest_p_value(tmp_path: Path) -> None:
    skill, _, _ = invoice_skill(tmp_path)
    evals = json.loads((skill / "evals" / "evals.json").read_text())
    for case in evals["evals"]:
        case.update(assertions=["a0"], selftune_assertions=[])
    (skill / "evals" / "evals.json").write_text(json.dumps(evals))
    plan = load_plan(skill, runs=1, seed=0)
    keys = [case.key for case in plan.cases]
    assert len(keys) == 8
    # cases 1-3: the skill passes, the baseline fails (delta 1); cases 4-8: both pass (delta 0)
    runs = [record(k, arm, 1, [arm == "with_skill" or i >= 3]) for i, k in enumerate(keys)
            for arm in ("with_skill", "without_skill")]
    d = delta_estimate(plan, {r.run_id: r for r in runs})
    # flipping a 0 changes nothing: |sum| >= 3 only when the three 1s share a sign, 2 x 2^5 of the 2^8 patterns
    assert (d.cases, d.p_value, d.model_extra["min_p_value"]) == (8, 0.25, 0.25)
    assert "Only 3 of the 8 cases differ between the arms" in d.note and "the smallest is 0.25" in d.note
    runs = [record(k, arm, 1, [arm == "with_skill"]) for k in keys for arm in ("with_skill", "without_skill")]
    d = delta_estimate(plan, {r.run_id: r for r in runs})
    assert (d.p_value, d.model_extra["min_p_value"], d.note) == (2 / 2 ** 8, 2 / 2 ** 8, "")


def test_the_verdict_sentence(tmp_path: Path) -> None:
    from eval_skills.formats.workspace import DeltaEstimate

    def sentence(estimate, low, high, cases, baseline="without_skill"):
        return verdict_sentence(DeltaEstimate(estimate=estimate, ci_low=low, ci_high=high, p_value=0.01,
                                              cases=cases), baseline)

    assert sentence(0.3, 0.1, 0.5, 8) == ("The skill raises the pass rate by +30.0 pp (95% interval +10.0 to "
                                          "+50.0 pp, p = 0.01, 8 cases) against the runs without the skill.")
    assert sentence(-0.3, -0.5, -0.1, 8, "old_skill").startswith(
        "The skill lowers the pass rate against the previous version of the skill: -30.0 pp")
    assert sentence(0.1, -0.1, 0.3, 8).startswith("No clear difference") and "includes 0" in sentence(
        0.1, -0.1, 0.3, 8)
    assert sentence(0.5, 0.4, 0.6, 5).startswith("Too little data to say: the pass-rate delta")
    ties = DeltaEstimate(estimate=0.375, ci_low=0.125, ci_high=0.625, p_value=0.25, cases=8, min_p_value=0.25)
    assert verdict_sentence(ties, "without_skill").endswith(
        "and with fewer than 6 cases that differ between the arms no p-value can fall below 0.05.")
    assert verdict_sentence(DeltaEstimate(cases=0), "without_skill").startswith("Too little data to say: no case")


# ---- the executor interface -----------------------------------------------------------------------------


class ElsewhereExecutor:
    """Another backend behind the executor interface: it holds the specs it is given and "runs" them on a
    pretend remote machine, from the spec's data alone, answering in the reverse order of the specs."""

    def __init__(self) -> None:
        self.specs: list[RunSpec] = []

    async def run(self, specs: Iterator[RunSpec]) -> AsyncIterator[RunOutput]:
        self.specs = list(specs)
        for spec in reversed(self.specs):
            skill_md = b"".join(b.files.get("SKILL.md", b"") for b in spec.skills)
            answer = V2_ANSWER if b"version 2" in skill_md else V1_ANSWER if skill_md else "plain"
            yield RunOutput(run_id=spec.run_id, status="ok", response=answer,
                            transcript=[ToolCallEvent(name="Read"), FinalEvent(text=answer)],
                            files=[OutputFile("notes.md", "created", 4, b"done")], duration_s=1.5, error=None,
                            usage=TokenUsage(total_tokens=100), started_at="t0", finished_at="t1")


def test_another_executor_needs_no_change_to_grading_statistics_or_store(tmp_path: Path) -> None:
    skill, old, _ = invoice_skill(tmp_path)
    plan = load_plan(skill, baseline_path=old, runs=1, seed=3)
    executor = ElsewhereExecutor()
    judge = create_judge("command", command=[sys.executable, str(FAKE_JUDGE)])
    seen: list[Progress] = []
    outcome = asyncio.run(run_paired(plan, PairedSettings(workspace=tmp_path / "ws"), executor=executor,
                                     judge=judge, store_path=tmp_path / "s.db", on_progress=seen.append))
    assert (seen[-1].done, seen[-1].total, seen[-1].errors, seen[-1].tokens, seen[-1].grading) == (16, 16, 0, 1600, 0)
    assert [p.done for p in seen] == sorted(p.done for p in seen)
    spec = executor.specs[0]
    assert isinstance(spec.files["invoice.txt"], bytes) and "evals/evals.json" not in spec.skills[0].files
    assert [s.run_id for s in executor.specs] == [p.run_id for p in plan.order()]
    bench = outcome.benchmark
    # v2 passes every assertion but case 6's "section 14" (4/5); v1 also misses the VAT amount
    assert bench.run_summary["with_skill"]["pass_rate"]["mean"] == round((7 + 0.8) / 8, 4)
    assert bench.run_summary["old_skill"]["pass_rate"]["mean"] == round((7 * 0.75 + 0.6) / 8, 4)
    assert bench.comparison.wins == 8 and bench.statistics.pass_rate_delta.cases == 8
    run = outcome.iteration / "eval-1" / "with_skill" / "run-1"
    assert (run / "outputs" / "notes.md").read_text() == "done"
    assert json.loads((run / "timing.json").read_text())["total_tokens"] == 100


class LookingExecutor(ElsewhereExecutor):
    """ElsewhereExecutor that notes which case folders the iteration holds when its first run starts, and asks
    the pipeline to stop after ``until`` runs (as Ctrl-C does)."""

    def __init__(self, workspace: Path, stop: asyncio.Event, until: int) -> None:
        super().__init__()
        self.workspace, self.stop, self.until, self.seen_at_start = workspace, stop, until, None

    async def run(self, specs: Iterator[RunSpec]) -> AsyncIterator[RunOutput]:
        self.seen_at_start = sorted(p.name for p in self.workspace.glob("iteration-*/eval-*"))
        async for out in super().run(iter([next(specs) for _ in range(self.until)])):
            yield out
        self.stop.set()


def test_case_files_come_with_their_first_run_and_unreached_cases_get_them_too(tmp_path: Path) -> None:
    """The first agent does not wait for every case's files to be written; the cases no run reached (stopped
    early) have their eval_metadata.json files and inputs all the same."""
    skill, old, _ = invoice_skill(tmp_path)
    plan = load_plan(skill, baseline_path=old, runs=1, seed=3)
    stop = asyncio.Event()
    executor = LookingExecutor(tmp_path / "ws", stop, until=3)
    judge = create_judge("command", command=[sys.executable, str(FAKE_JUDGE)])
    outcome = asyncio.run(run_paired(plan, PairedSettings(workspace=tmp_path / "ws"), executor=executor,
                                     judge=judge, stop=stop))
    assert executor.seen_at_start == []
    assert len(outcome.benchmark.runs) == 3 and outcome.interrupted
    cases = sorted(p.name for p in outcome.iteration.glob("eval-*"))
    assert cases == sorted(f"eval-{k}" for k in range(1, 9))
    for name in cases:
        meta = json.loads((outcome.iteration / name / "eval_metadata.json").read_text())
        assert f"eval-{meta['eval_id']}" == name
        for arm in plan.arms:
            assert (outcome.iteration / name / arm / "eval_metadata.json").is_file()
        assert (outcome.iteration / name / "inputs" / "evals" / "files" / "notes" / "terms.txt").read_text() \
            == "Payment in 30 days\n"


def test_local_executor_folders_outputs_and_limits(tmp_path: Path) -> None:
    skill, _, _ = invoice_skill(tmp_path)
    plan = load_plan(skill)
    agent = fake_agent({"skill": "invoice-check", "skilled_answer": "with skill",
                        "files": {"response.md": "an agent file", "big.bin": "x" * 5000, "out/report.md": "r"}})
    executor = LocalExecutor(agent, concurrency=2, scratch=tmp_path / "scratch", max_file_bytes=1000)
    (tmp_path / "scratch").mkdir()
    specs = [RunSpec(f"r{i}", "go", {"invoice.txt": b"x"}, plan.bundles["with_skill"] if i % 2 else (),
                     timeout=30) for i in range(4)]

    async def collect() -> list[RunOutput]:
        return [out async for out in executor.run(iter(specs))]

    outputs = {out.run_id: out for out in asyncio.run(collect())}
    assert sorted(outputs) == ["r0", "r1", "r2", "r3"]
    assert outputs["r1"].response == "with skill" and outputs["r0"].response.startswith("plain answer")
    files = {f.path: f for f in outputs["r1"].files}
    assert files["out/report.md"].data == b"r" and files["response.md"].data == b"an agent file"
    assert files["big.bin"].data is None and "larger than" in files["big.bin"].note
    assert list((tmp_path / "scratch").iterdir()) == []  # every run folder and the staged skills are gone
    with pytest.raises(InputError, match="concurrency"):
        LocalExecutor(create_agent("command", command="x"), concurrency=0)


# ---- the shipped example ----------------------------------------------------------------------------------

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "agent-skills" / "release-notes"
GOOD_ANSWERS = {
    "1": "## 3.0.0 - 2025-05-14\n\n### Breaking changes\n- The v1 order endpoints are removed: call `/v2/orders`. "
         "(#412)\n\n### Added\n- Orders can be exported as CSV. (#398)\n\n### Changed\n- Updated dependencies. "
         "(#401, #407)\n\n### Fixed\n- Totals above 1,000 keep their cents. (#405)\n\n"
         '```json\n{"previous_version": "2.3.1", "next_version": "3.0.0", "bump": "major"}\n```',
    "2": "## 1.4.3 - 2025-05-14\n\n### Fixed\n- Product search matches accented letters. (#233)\n- The cart survives "
         "a session that expires during payment. (#229)\n- Prices in CHF show the right symbol. (#227)\n\n"
         '```json\n{"previous_version": "1.4.2", "next_version": "1.4.3", "bump": "patch"}\n```',
    "3": "## 0.10.0 - 2025-05-14\n\n### Security\n- Password-reset links are signed and expire after an hour "
         "(GHSA-4f3q-9x2v-qq7m). (#91)\n\n### Added\n- Admins get a weekly summary e-mail. (#85)\n\n"
         '```json\n{"previous_version": "0.9.0", "next_version": "0.10.0", "bump": "minor"}\n```',
    "4": "## 5.3.0 - 2025-05-14\n\n### Added\n- `deploy --dry-run` shows what would happen. (#481)\n- Logs of remote "
         "builds stream in real time. (#472)\n\n### Changed\n- Updated dependencies. (#479, #476)\n\n### Fixed\n"
         "- Uploads that fail with HTTP 503 are retried. (#477)\n- The progress bar fits narrow terminals. (#470)\n\n"
         '```json\n{"previous_version": "5.2.0", "next_version": "5.3.0", "bump": "minor"}\n```',
}


def test_the_example_skill_loads_and_a_good_answer_passes_its_checks() -> None:
    from eval_skills.formats.agentskills import load_routing

    plan = load_plan(EXAMPLE, runs=3)
    assert plan.skill.name == "release-notes" and plan.warnings == [] and len(plan.cases) == 4
    assert all(case.assertions and case.checks and case.files for case in plan.cases)
    for case in plan.cases:
        answer = GOOD_ANSWERS[case.key]
        results = [run_check(item.check, answer, []) for item in case.checks]
        assert all(r.passed for r in results), (case.key, [r.evidence for r in results])
        bad = answer.replace('"bump": "', '"bump": "x').replace("## ", "# ").replace("(#", "(PR ")
        assert not all(run_check(item.check, bad, []).passed for item in case.checks), case.key
    reverted = GOOD_ANSWERS["3"].replace("### Added", "### Removed\n- Dark mode was reverted. (#88)\n\n### Added")
    assert not all(run_check(item.check, reverted, []).passed for item in plan.cases[2].checks)
    routing = load_routing(EXAMPLE / "evals" / "routing.json")
    assert {q.should_trigger for q in routing} == {True, False}


def test_a_long_transcript_is_cut_for_the_judge() -> None:
    events = [ToolCallEvent(name=f"t{i}", result="x" * (TRANSCRIPT_VALUE_LIMIT + 10)) for i in range(300)]
    shown = _for_judge(events)
    assert len(shown) == 201 and shown[50].text == "[100 events not shown]"
    assert [e.name for e in shown[:50]] == [f"t{i}" for i in range(50)] and shown[-1].name == "t299"
    assert shown[0].result.endswith("... [10 more characters]")
    assert events[0].result == "x" * (TRANSCRIPT_VALUE_LIMIT + 10)  # the run's own transcript is untouched


def test_feedback_json_that_is_a_fifo_is_replaced_without_blocking(tmp_path: Path) -> None:
    import os
    import threading

    from eval_skills.paired.report import write_feedback

    os.mkfifo(tmp_path / "feedback.json")  # opening it to read would wait for a writer forever
    done: list[Path] = []
    worker = threading.Thread(target=lambda: done.append(write_feedback(tmp_path, ["eval-1/with_skill/run-1"])),
                              daemon=True)
    worker.start()
    worker.join(10)
    assert done, "write_feedback blocked on a FIFO"
    saved = json.loads((tmp_path / "feedback.json").read_text())
    assert [r["run_id"] for r in saved["reviews"]] == ["eval-1/with_skill/run-1"]


def test_an_unreadable_feedback_file_is_kept_aside_with_a_warning(tmp_path, caplog):
    from eval_skills.paired.report import write_feedback

    broken = '{"reviews": [{"run_id": "eval-1/with_skill/run-1", "feedback": "too long",'  # cut off mid-edit
    (tmp_path / "feedback.json").write_text(broken)
    with caplog.at_level("WARNING"):
        write_feedback(tmp_path, ["eval-1/with_skill/run-1"])
    assert (tmp_path / "feedback.json.unreadable").read_text() == broken
    saved = json.loads((tmp_path / "feedback.json").read_text())
    assert [r["run_id"] for r in saved["reviews"]] == ["eval-1/with_skill/run-1"]
    assert any("feedback.json.unreadable" in r.getMessage() for r in caplog.records)
