"""`eval-skills routing` through the real CLIs: the skill and two distractors installed where each CLI discovers
them, the scripted model invoking the skill for the invoice queries only (never a distractor)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agent_clis import CLIS, MODELS, require_cli
from e2e_scenarios import SKILL, eval_skills, invoice_skill, write_skill
from fakes.model_server import Answer, ModelServer, made, prompt_has, skill_call, skill_listed, tooled

pytestmark = pytest.mark.e2e

QUERIES = [  # (query, should trigger, scripted to invoke)
    ("Check the invoice in invoice.txt", True, True),
    ("What is the VAT on invoice 7?", True, False),  # a miss: the model answers without the skill
    ("Rename my photos by date", False, False),
]


@pytest.mark.parametrize("cli", CLIS)
def test_routing_with_distractors(cli: str, tmp_path: Path) -> None:
    require_cli(cli)
    skill, _ = invoice_skill(tmp_path)
    others = tmp_path / "others"
    for name in ("photo-rename", "csv-summary"):
        folder = write_skill(others / name, "OTHER")
        (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: The {name} skill.\n---\nbody\n")
    (skill / "evals" / "routing.json").write_text(json.dumps(
        [{"query": q, "should_trigger": should} for q, should, _ in QUERIES]))
    with ModelServer() as model:
        invoke = skill_call(cli, SKILL)
        model.rule(tooled() & prompt_has("invoice.txt") & skill_listed(SKILL) & ~made(invoke),
                   Answer(tools=(invoke,)), name="invoke")
        model.rule(tooled(), Answer("Done."), name="answer")
        out = eval_skills("routing", "--skill-path", skill, "--distractors", others, "--model", MODELS[cli],
                          "--concurrency", 2, "--timeout", 240, "--no-store", "--json", cli=cli, server=model,
                          cwd=tmp_path, home=tmp_path / "home")
        assert out.returncode == 0, out.stderr
        firsts = [c for c in model.agent_calls() if not c.tool_calls]

    # every run listed the skill and both distractors
    assert len(firsts) == 3
    assert all(skill_listed(name)(c) for c in firsts for name in (SKILL, "photo-rename", "csv-summary"))
    folder = tmp_path / f"{SKILL}-workspace" / "routing-1"
    results = {}
    for path in folder.glob("query-*/run-1/result.json"):
        record = json.loads(path.read_text())
        results[record["query"]] = record
    assert {q: (r["status"], r["triggered"], r["distractors_invoked"]) for q, r in results.items()} == {
        q: ("ok", invoked, []) for q, _, invoked in QUERIES}
    metrics = json.loads(out.stdout)["metrics"]
    assert (metrics["precision"], metrics["recall"]) == (1.0, 0.5)
