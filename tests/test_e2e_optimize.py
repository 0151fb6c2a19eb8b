"""`eval-skills routing --optimize` through a real CLI: the scripted model invokes the skill for invoice requests,
and for ledger requests only when the description it is shown mentions ledgers; a scripted command improver
proposes a description that does. Split (seed 0, holdout 0.5): train 1, 3, 6; test 2, 4, 5, 7.

    original   train: 1 hit, 3 missed -> F1 2/3      test: 2 hit, 4 missed -> F1 2/3
    candidate 2 (mentions ledgers): every query right -> train perfect, the loop stops; test F1 1
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from agent_clis import CLIS, MODELS, require_cli
from e2e_scenarios import SKILL, eval_skills, invoice_skill
from fakes.model_server import Answer, ModelServer, made, mentions, prompt_has, skill_call, skill_listed, tooled

pytestmark = pytest.mark.e2e

IMPROVER = Path(__file__).parent / "fakes" / "fake_improver.py"
QUERIES = [("Check the invoice in invoice.txt", True), ("Is invoice 7 correct?", True),
           ("Review the billing ledger for March", True), ("Reconcile the ledger of supplier 4", True),
           ("Rename my photos by date", False), ("Summarize this article", False), ("Plan a trip to Rome", False)]
BETTER = "Checks invoices and ledgers: totals, VAT amounts, supplier balances. Use it for invoices and ledgers."


@pytest.mark.parametrize("cli", CLIS)
def test_optimize_with_a_real_cli(cli: str, tmp_path: Path) -> None:
    require_cli(cli)
    skill, _ = invoice_skill(tmp_path)
    (skill / "evals" / "routing.json").write_text(json.dumps([{"query": q, "should_trigger": s} for q, s in QUERIES]))
    improver = {"replies": [BETTER], "log": str(tmp_path / "improver.jsonl")}
    with ModelServer() as model:
        invoke = skill_call(cli, SKILL)
        # phrases of the queries only (a CLI may list the skills in a user message too)
        invoices = prompt_has("invoice.txt") | prompt_has("invoice 7")
        ledgers = (prompt_has("billing ledger") | prompt_has("ledger of supplier")) & mentions("ledgers")
        wanted = invoices | ledgers
        model.rule(tooled() & skill_listed(SKILL) & wanted & ~made(invoke), Answer(tools=(invoke,)), name="invoke")
        model.rule(tooled(), Answer("Done."), name="answer")
        out = eval_skills("routing", "--skill-path", skill, "--model", MODELS[cli], "--optimize", "--holdout", 0.5,
                          "--improver-cmd", f"{sys.executable} {IMPROVER}", "--concurrency", 2, "--timeout", 240,
                          "--no-store", "--json", "--write", cli=cli, server=model, cwd=tmp_path,
                          home=tmp_path / "home", env={"FAKE_IMPROVER_JSON": json.dumps(improver)})
        assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["split"]["test"] == [2, 4, 5, 7]
    # on a failure, what each candidate's runs did and what the CLI said (seen once under load: the first
    # candidate's train runs found no trigger)
    assert [(c["train"]["f1"], c["test"]["f1"]) for c in result["candidates"]] == [(0.6667, 0.6667), (1.0, 1.0)], (
        json.dumps(result["candidates"])[:4000], out.stderr[-2000:])
    assert result["metadata"]["stop_reason"] == "train_perfect" and result["winner"]["number"] == 2
    request = json.loads((tmp_path / "improver.jsonl").read_text().splitlines()[0])
    assert [q["query"] for q in request["missed"]] == ["Review the billing ledger for March"]
    assert f"description: \"{BETTER}\"\n" in (skill / "SKILL.md").read_text()  # quoted: it holds ": "
