"""Routing tests end to end in the library: real fake-agent processes, real files, a real store.

The fake agent uses a skill only when it is installed in its workspace and the query matches its trigger, so
every figure below follows from the queries: each expected value is worked out by hand in the comments.
"""

import asyncio
import json
import sqlite3
from pathlib import Path

import pytest
from fakes import fake_agent

from eval_skills.errors import InputError
from eval_skills.formats.routing_results import RoutingResults
from eval_skills.routing import RunSettings, load_plan, run_routing
from eval_skills.store import Store
from eval_skills.store.routing import get_routing_runs, list_routing_tests

QUERIES = [
    {"query": "check the invoice total", "should_trigger": True, "invocation_type": "explicit"},  # TP
    {"query": "validate this invoice VAT", "should_trigger": True, "invocation_type": "implicit"},  # TP
    {"query": "is the due date on this bill right?", "should_trigger": True, "invocation_type": "implicit"},  # FN
    {"query": "write a poem about invoices", "should_trigger": False, "invocation_type": "negative"},  # FP
    {"query": "scan this receipt", "should_trigger": False, "invocation_type": "negative"},  # TN, distractor
    {"query": "what is the weather", "should_trigger": False},  # TN, no type
    {"query": "crash on this invoice", "should_trigger": True, "invocation_type": "explicit"},  # error
    {"query": "double-check invoice numbers", "should_trigger": True, "invocation_type": "explicit"},  # TP
    {"query": "invoice template in Word", "should_trigger": False, "invocation_type": "negative"},  # FP
]
SCRIPT = {"skill": "invoice-check", "trigger": "invoice",
          "cases": [{"match": "crash", "mode": "crash"},
                    {"match": "receipt", "skill": "receipt-scan", "trigger": "receipt"}]}


def write_skill(folder: Path, description: str, queries=None) -> Path:
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\nname: {folder.name}\ndescription: {description}\n---\n# {folder.name}\n")
    if queries is not None:
        (folder / "evals").mkdir()
        (folder / "evals" / "routing.json").write_text(json.dumps(queries))
    return folder


@pytest.fixture
def skills(tmp_path):
    skill = write_skill(tmp_path / "invoice-check", "Checks invoice totals, VAT and due dates. Use when asked to "
                        "check an invoice.", QUERIES)
    distractor = write_skill(tmp_path / "others" / "receipt-scan", "Reads scanned receipts. Use for receipts.")
    return skill, distractor


def run(plan, agent, tmp_path, **settings):
    return asyncio.run(run_routing(plan, agent, RunSettings(**{"concurrency": 4, "timeout_s": 20, **settings}),
                                   workspace=tmp_path / "ws", store_path=tmp_path / "s.db"))


def test_every_metric_against_hand_computed_values(tmp_path, skills):
    skill, distractor = skills
    log = tmp_path / "runs.jsonl"
    plan = load_plan(skill, distractors=[distractor.parent])
    outcome = run(plan, fake_agent({**SCRIPT, "log": str(log)}), tmp_path)
    results = outcome.results
    q = {r.index: r for r in results.queries}

    # per query: the crash is an error, never a "did not trigger"
    assert [(q[i].triggers, q[i].errors, q[i].trigger_rate, q[i].passed) for i in range(1, 10)] == [
        (1, 0, 1.0, True), (1, 0, 1.0, True), (0, 0, 0.0, False), (1, 0, 1.0, False), (0, 0, 0.0, True),
        (0, 0, 0.0, True), (0, 1, None, None), (1, 0, 1.0, True), (1, 0, 1.0, False)]
    assert all(r.runs == 1 and r.trigger_rate_ci is None for r in results.queries)  # one run: no interval
    assert q[7].run_results[0].status == "error" and q[7].run_results[0].triggered is None
    assert "crashed on purpose" in q[7].run_results[0].error
    assert q[5].distractors_invoked == {"receipt-scan": 1} and q[5].run_results[0].skills_invoked == ["receipt-scan"]

    # overall, over the 8 queries with a rate: TP 3 (1, 2, 8), FP 2 (4, 9), FN 1 (3), TN 2 (5, 6)
    m = results.metrics
    assert (m.tp, m.fp, m.fn, m.tn, m.queries, m.unscored) == (3, 2, 1, 2, 8, 1)
    # precision 3/5, recall 3/4, F1 6/9, accuracy 5/8
    assert (m.precision, m.recall, m.f1, m.accuracy) == (0.6, 0.75, 0.6667, 0.625)
    assert m.undefined == {}

    by = m.by_invocation_type
    assert sorted(by) == ["explicit", "implicit", "negative", "unspecified"]
    # explicit: 1 and 8 both TP (7 is unscored): everything 1.0
    assert (by["explicit"].precision, by["explicit"].recall, by["explicit"].f1, by["explicit"].accuracy,
            by["explicit"].unscored) == (1.0, 1.0, 1.0, 1.0, 1)
    # implicit: 2 TP, 3 FN: precision 1/1, recall 1/2, F1 2/3, accuracy 1/2
    assert (by["implicit"].precision, by["implicit"].recall, by["implicit"].f1, by["implicit"].accuracy) == (
        1.0, 0.5, 0.6667, 0.5)
    # negative: 4 and 9 FP, 5 TN: precision 0/2, no positive so no recall, F1 0/(0+2+0), accuracy 1/3
    neg = by["negative"]
    assert (neg.precision, neg.recall, neg.f1, neg.accuracy) == (0.0, None, 0.0, 0.3333)
    assert neg.undefined == {"recall": "no query is should_trigger true"}
    # unspecified: 6 TN alone: nothing to find and nothing found
    un = by["unspecified"]
    assert (un.precision, un.recall, un.f1, un.accuracy) == (None, None, None, 1.0)
    assert set(un.undefined) == {"precision", "recall", "f1"}

    # each run had a fresh workspace holding the skill and the distractor, and nothing else
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(lines) == 9 and len({line["cwd"] for line in lines}) == 9
    assert all(line["skills_present"] == ["invoice-check", "receipt-scan"] for line in lines)
    assert not any(Path(line["cwd"]).exists() for line in lines)  # removed after the run

    # files: results, report, a transcript per run, the raw output of the run in error
    folder = tmp_path / "ws" / "routing-1"
    assert outcome.folder == folder
    on_disk = RoutingResults.model_validate_json((folder / "routing_results.json").read_text())
    assert on_disk.metrics.f1 == 0.6667 and on_disk.metadata["error_runs"] == 1
    assert on_disk.metadata["distractors"][0]["name"] == "receipt-scan"
    events = [json.loads(line) for line in (folder / "query-1" / "run-1" / "transcript.jsonl").read_text().splitlines()]
    assert [e["skill"] for e in events if e["type"] == "skill"] == ["invoice-check"]
    crash = json.loads((folder / "query-7" / "run-1" / "result.json").read_text())
    assert crash["status"] == "error" and crash["triggered"] is None and "crashed on purpose" in crash["error"]
    assert "Looking at the task" in (folder / "query-7" / "run-1" / "stdout.txt").read_text()
    assert not (folder / "query-1" / "run-1" / "stdout.txt").exists()  # raw output is kept for errors only
    report = (folder / "routing.md").read_text()
    assert "| f1 | 0.6667 |" in report and "## Runs in error (1)" in report and "receipt-scan x1" in report

    # the store: one test, one row per run
    with Store.open(tmp_path / "s.db") as store:
        (test,) = list_routing_tests(store)
        assert (test["status"], test["skill_name"], test["f1"], test["accuracy"]) == (
            "finished", "invoice-check", 0.6667, 0.625)
        assert test["metrics"]["by_invocation_type"]["implicit"]["recall"] == 0.5
        rows = get_routing_runs(store, test["id"])
    assert len(rows) == 9
    crash = next(r for r in rows if r["query_index"] == 7)
    assert crash["status"] == "error" and crash["triggered"] is None
    assert sum(1 for r in rows if r["triggered"]) == 5

    # a second test gets the next folder
    again = run(plan, fake_agent(SCRIPT), tmp_path)
    assert again.folder.name == "routing-2"


def test_runs_over_one_give_wilson_intervals(tmp_path):
    queries = [{"query": "check the invoice", "should_trigger": True},
               {"query": "poem about an invoice", "should_trigger": False},
               {"query": "flaky invoice", "should_trigger": True},
               {"query": "broken invoice", "should_trigger": True}]
    skill = write_skill(tmp_path / "invoice-check", "Checks invoices. Use when asked to check one.", queries)
    script = {"skill": "invoice-check", "trigger": "invoice", "state_dir": str(tmp_path / "state"),
              "cases": [{"match": "check the invoice", "runs": [3], "trigger": "^$"},  # used in 2 of 3 runs
                        {"match": "poem", "runs": [2, 3], "trigger": "^$"},  # used in 1 of 3 runs
                        {"match": "flaky", "runs": [2], "mode": "crash"},  # 1 error, used in the 2 others
                        {"match": "broken", "mode": "exit"}]}  # every run an error
    outcome = run(load_plan(skill, runs=3), fake_agent(script), tmp_path)
    q = {r.index: r for r in outcome.results.queries}
    # 2/3 = 0.6667 with the Wilson interval of 2 in 3 (z = 1.96): centre 0.5731, half-width 0.3654
    assert (q[1].runs, q[1].triggers, q[1].errors, q[1].trigger_rate, q[1].passed) == (3, 2, 0, 0.6667, True)
    assert q[1].trigger_rate_ci == (0.2077, 0.9385)
    assert (q[2].triggers, q[2].trigger_rate, q[2].passed, q[2].trigger_rate_ci) == (1, 0.3333, True,
                                                                                   (0.0615, 0.7923))
    # the crash is left out of the rate: 2 of 2, interval of 2 in 2
    assert (q[3].runs, q[3].triggers, q[3].errors, q[3].trigger_rate, q[3].trigger_rate_ci) == (
        3, 2, 1, 1.0, (0.3424, 1.0))
    assert (q[4].runs, q[4].errors, q[4].trigger_rate, q[4].passed, q[4].trigger_rate_ci) == (3, 3, None, None, None)
    m = outcome.results.metrics
    # scored: 1 TP, 2 TN, 3 TP; 4 unscored
    assert (m.tp, m.fp, m.fn, m.tn, m.unscored) == (2, 0, 0, 1, 1)
    assert (m.precision, m.recall, m.f1, m.accuracy) == (1.0, 1.0, 1.0, 1.0)
    assert m.by_invocation_type == {}
    assert outcome.results.metadata["planned_runs"] == 12 and outcome.results.metadata["error_runs"] == 4


def test_a_timeout_is_an_error_and_a_skill_seen_before_a_failure_is_kept(tmp_path):
    queries = [{"query": "slow invoice", "should_trigger": True}, {"query": "quick invoice", "should_trigger": True},
               {"query": "failing invoice", "should_trigger": False}]
    skill = write_skill(tmp_path / "invoice-check", "Checks invoices.", queries)
    script = {"skill": "invoice-check", "trigger": "invoice",
              "cases": [{"match": "slow", "mode": "hang"}, {"match": "failing", "mode": "exit", "exit_code": 4}]}
    outcome = run(load_plan(skill), fake_agent(script), tmp_path, timeout_s=1.0)
    slow, quick, failing = outcome.results.queries
    assert slow.run_results[0].status == "timeout" and slow.errors == 1 and slow.trigger_rate is None
    assert "timed out after 1 s" in slow.run_results[0].error
    assert quick.trigger_rate == 1.0
    # it used the skill, then exited 4: an error, neither a trigger nor a miss, the invocation still listed
    (run_record,) = failing.run_results
    assert (run_record.status, run_record.triggered, run_record.skills_invoked) == ("error", None, ["invoice-check"])
    assert (failing.triggers, failing.errors, failing.passed) == (0, 1, None)
    m = outcome.results.metrics
    assert (m.tp, m.fp, m.fn, m.tn, m.unscored) == (1, 0, 0, 0, 2)
    assert "skills invoked before it: invoice-check" in (outcome.folder / "routing.md").read_text()


def test_interrupt_keeps_the_finished_runs(tmp_path):
    queries = [{"query": f"invoice {i}", "should_trigger": True} for i in range(30)]
    skill = write_skill(tmp_path / "invoice-check", "Checks invoices.", queries)
    plan = load_plan(skill)

    async def main():
        stop = asyncio.Event()
        finished = []

        def on_run(outcome):
            finished.append(outcome)
            if len(finished) == 3:
                stop.set()

        result = await run_routing(plan, fake_agent({"skill": "invoice-check", "delay": 0.1}),
                                   RunSettings(concurrency=2, timeout_s=20), workspace=tmp_path / "ws",
                                   store_path=tmp_path / "s.db", on_run=on_run, stop=stop)
        return result, finished

    outcome, finished = asyncio.run(main())
    assert outcome.interrupted and outcome.results.metadata["interrupted"] is True
    done = outcome.results.metadata["finished_runs"]
    assert 3 <= done < 30 and done == len(finished)
    assert sum(q.runs for q in outcome.results.queries) == done
    assert outcome.results.metrics.queries == done  # one run per query: the others have no rate
    with Store.open(tmp_path / "s.db") as store:
        (test,) = list_routing_tests(store)
        assert test["status"] == "interrupted" and len(get_routing_runs(store, test["id"])) == done
    assert (outcome.folder / "routing_results.json").is_file()


def test_distractors_that_shadow_the_skill(tmp_path):
    """A distractor whose description looks like the skill's: the agent picks it instead of the skill (a miss),
    or reads both (a trigger, with the distractor counted too)."""
    queries = [{"query": "check this invoice", "should_trigger": True},  # the skill alone: TP
               {"query": "check the invoice and its receipt", "should_trigger": True},  # both: TP, distractor x2
               {"query": "look over this bill", "should_trigger": True},  # the distractor instead: FN
               {"query": "a receipt for lunch", "should_trigger": False}]  # the distractor alone: TN
    skill = write_skill(tmp_path / "invoice-check", "Checks invoices and bills. Use when asked to check one.",
                        queries)
    write_skill(tmp_path / "others" / "expense-check", "Checks invoices, bills and receipts for expense claims.")
    script = {"skill": "invoice-check", "trigger": "invoice",
              "cases": [{"match": "invoice and", "also": ["expense-check"]},
                        {"match": "bill|lunch", "also": ["expense-check"], "skill": "none", "trigger": "."}]}
    outcome = run(load_plan(skill, distractors=[tmp_path / "others"], runs=2), fake_agent(script), tmp_path)
    q = {r.index: r for r in outcome.results.queries}
    assert [(q[i].triggers, q[i].trigger_rate, q[i].passed, q[i].distractors_invoked) for i in (1, 2, 3, 4)] == [
        (2, 1.0, True, {}), (2, 1.0, True, {"expense-check": 2}), (0, 0.0, False, {"expense-check": 2}),
        (0, 0.0, True, {"expense-check": 2})]
    assert q[2].run_results[0].skills_invoked == ["expense-check", "invoice-check"]
    # over the 4 queries: TP 2 (1, 2), FN 1 (3), TN 1 (4): precision 2/2, recall 2/3, F1 4/5, accuracy 3/4
    m = outcome.results.metrics
    assert (m.tp, m.fp, m.fn, m.tn) == (2, 0, 1, 1)
    assert (m.precision, m.recall, m.f1, m.accuracy) == (1.0, 0.6667, 0.8, 0.75)
    assert "expense-check x2" in (outcome.folder / "routing.md").read_text()


def test_distractor_problems_are_input_errors(tmp_path, skills):
    skill, distractor = skills
    # a folder of skills holding the skill under test itself: it is skipped, not a clash
    plan = load_plan(skill, distractors=[tmp_path])
    assert [d.name for d in plan.distractors] == []
    plan = load_plan(skill, distractors=[tmp_path / "others", tmp_path])
    assert [d.name for d in plan.distractors] == ["receipt-scan"]
    twin = write_skill(tmp_path / "copy" / "invoice-check", "Another skill of the same name.")
    with pytest.raises(InputError, match="named 'invoice-check' like the skill under test"):
        load_plan(skill, distractors=[twin])  # given as a distractor on its own: a clash
    write_skill(tmp_path / "copy" / "receipt-scan", "Reads scanned receipts.")
    plan = load_plan(skill, distractors=[tmp_path / "copy"])  # in a folder of skills: a copy of it, skipped
    assert [d.name for d in plan.distractors] == ["receipt-scan"]
    assert plan.notes == [f"{twin} is named 'invoice-check' like the skill under test (a copy of it?): not "
                          "installed as a distractor"]
    with pytest.raises(InputError, match="two distractors are named 'receipt-scan'"):
        load_plan(skill, distractors=[distractor, tmp_path / "copy"])
    # one folder named twice, alone and in its folder of skills: one distractor, no clash
    plan = load_plan(skill, distractors=[distractor, tmp_path / "others", tmp_path / "others" / ".." / "others"])
    assert [d.folder for d in plan.distractors] == [distractor]
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="holds no SKILL.md"):
        load_plan(skill, distractors=[tmp_path / "empty"])
    with pytest.raises(InputError, match="distractor folder not found"):
        load_plan(skill, distractors=[tmp_path / "nope"])


def test_the_store_schema_holds_routing_rows(tmp_path, skills):
    skill, _ = skills
    run(load_plan(skill), fake_agent(SCRIPT), tmp_path)
    with sqlite3.connect(tmp_path / "s.db") as db:
        assert db.execute("SELECT name FROM _migrations WHERE name = 'm005_routing_runs'").fetchone()
        config = json.loads(db.execute("SELECT config_json FROM routing_tests").fetchone()[0])
        assert config["runs"] == 1 and config["distractors"] == []
        assert db.execute("SELECT COUNT(*) FROM routing_runs").fetchone()[0] == 9


def test_routing_md_shows_untrusted_text_as_text(tmp_path):
    from eval_skills.formats.agentskills import RoutingQuery, load_skill_md
    from eval_skills.routing import RoutingPlan, RunItem, RunOutcome, build_results, render_markdown

    doc = load_skill_md(write_skill(tmp_path / "invoice-check", "Checks invoices."))
    query = RoutingQuery(query="total | <script>alert(1)</script>\nnext line", should_trigger=True,
                         invocation_type="a|b")
    routing = RoutingPlan(doc, [query], tmp_path / "r.json", [], 1)
    outcome = RunOutcome(RunItem(1, query, 1), "error", None, error="boom <img src=x> | `code`")
    text = render_markdown(build_results(routing, [outcome], {"skill_name": "invoice-check"}))
    assert "<script>" not in text and "<img" not in text
    assert "total \\| &lt;script&gt;alert(1)&lt;/script&gt; next line" in text
    assert "boom &lt;img src=x&gt; \\| \\`code\\`" in text and "| a\\|b |" in text


def test_a_blank_invocation_type_is_no_type(tmp_path):
    """``""`` (or blanks) names no type: the query's type is null and it joins the queries that name none;
    "explicit " is "explicit"."""
    queries = [{"query": "check the invoice", "should_trigger": True, "invocation_type": "explicit "},  # TP
               {"query": "an invoice question", "should_trigger": True, "invocation_type": "explicit"},  # TP
               {"query": "weather today", "should_trigger": False, "invocation_type": ""},  # TN
               {"query": "invoice poem", "should_trigger": False, "invocation_type": "  "},  # FP
               {"query": "lunch plans", "should_trigger": False}]  # TN
    skill = write_skill(tmp_path / "invoice-check", "Checks invoices.", queries)
    outcome = run(load_plan(skill), fake_agent({"skill": "invoice-check", "trigger": "invoice"}), tmp_path)
    results = outcome.results
    assert [q.invocation_type for q in results.queries] == ["explicit", "explicit", None, None, None]
    groups = results.metrics.by_invocation_type
    assert sorted(groups) == ["explicit", "unspecified"]
    assert (groups["explicit"].queries, groups["explicit"].tp) == (2, 2)
    # unspecified: TN, FP, TN -> accuracy 2/3, precision 0/1
    assert (groups["unspecified"].queries, groups["unspecified"].fp, groups["unspecified"].tn) == (3, 1, 2)
    assert (groups["unspecified"].accuracy, groups["unspecified"].precision) == (0.6667, 0.0)


def test_the_skill_may_be_given_by_its_skill_md(tmp_path, skills):
    """As ``paired`` takes it: ``--skill-path skill/SKILL.md`` names the skill's folder."""
    from eval_skills.routing import static_check

    skill, _ = skills
    plan = load_plan(skill / "SKILL.md")
    assert plan.skill.folder == skill and plan.routing_file == skill / "evals" / "routing.json"
    assert static_check(skill / "SKILL.md", plan.queries).skill_name == "invoice-check"
