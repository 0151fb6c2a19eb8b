"""`eval-skills paired` through the real Claude Code, Codex and OpenCode CLIs, against a scripted model on 127.0.0.1
(the skill, the cases and the figures: e2e_scenarios.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agent_clis import CLIS, MODELS, OPENCODE_COST, require_cli
from e2e_scenarios import (
    ANSWER_USAGE,
    INVOKE_USAGE,
    NEW,
    NOTES,
    OLD,
    PLAIN,
    PLAIN_USAGE,
    SKILL,
    SKILLS_SUBDIR,
    WRITE_USAGE,
    cost,
    eval_skills,
    first_requests,
    invoice_skill,
    runs,
    script_invoice,
)
from fakes.model_server import ModelServer, skill_listed

pytestmark = pytest.mark.e2e

CLAUDE_PRICES = OPENCODE_COST  # claude-sonnet-4-5 per million tokens: 3 in, 15 out, 0.30 cache read, 3.75 cache write


def total(*usages):
    return tuple(sum(getattr(u, f) for u in usages) for f in ("input", "output", "cache_read", "cache_write"))


@pytest.mark.parametrize("cli", CLIS)
def test_paired_with_and_without_the_skill(cli: str, tmp_path: Path) -> None:
    require_cli(cli)
    skill, _ = invoice_skill(tmp_path)
    with ModelServer() as model:
        script_invoice(model, cli)
        out = eval_skills("paired", "--skill-path", skill, "--model", MODELS[cli], "--concurrency", 2,
                          "--timeout", 240, "--no-compare", "--no-store", "--json", cli=cli, server=model,
                          cwd=tmp_path, home=tmp_path / "home")
        assert out.returncode == 0, out.stderr
        firsts = first_requests(model)

    bench = json.loads(out.stdout)
    summary = bench["run_summary"]
    assert summary["with_skill"]["pass_rate"]["mean"] == 0.5
    assert summary["without_skill"]["pass_rate"]["mean"] == 0.0
    found = runs(tmp_path / f"{SKILL}-workspace" / "iteration-1")
    assert set(found) == {("1", "with_skill"), ("1", "without_skill"), ("2", "with_skill"), ("2", "without_skill")}
    assert all(run["status"] == "ok" for run in found.values()), {k: r["error"] for k, r in found.items()}
    # the skill was listed to the model in exactly the two with_skill runs, never in a baseline run
    assert len(firsts) == 4 and sum(skill_listed(SKILL)(call) for call in firsts) == 2
    # the invocation is read from the CLI's own stream, exactly where the model made it
    assert found[("1", "with_skill")]["skills_invoked"] == [SKILL]
    assert [found[k]["skills_invoked"] for k in (("2", "with_skill"), ("1", "without_skill"),
                                                 ("2", "without_skill"))] == [[], [], []]
    run = found[("1", "with_skill")]
    assert (run["_folder"] / "outputs" / "response.md").read_text() == NEW
    assert (run["_folder"] / "outputs" / "notes.txt").read_text() == NOTES  # the file the model had the CLI write
    assert [f["path"] for f in run["files"]] == ["notes.txt"]  # nothing else the CLI writes counts as the agent's
    assert (found[("1", "without_skill")]["_folder"] / "outputs" / "response.md").read_text() == PLAIN
    assert run["tool_calls"] >= 2
    transcript = [json.loads(line) for line in (run["_folder"] / "transcript.jsonl").read_text().splitlines()]
    assert any(e.get("type") == "tool_call" for e in transcript)
    # token usage: the figures the server sent, summed over the run's requests
    used = total(INVOKE_USAGE, WRITE_USAGE, ANSWER_USAGE)
    if cli != "claude":  # the OpenAI wire protocols carry no cache writes
        used = (*used[:3], 0)
    usage = run["usage"]
    assert (usage["input_tokens"], usage["output_tokens"], usage["cache_read_tokens"],
            usage["cache_write_tokens"]) == used
    assert usage["measurement"] == "measured"
    plain = found[("2", "without_skill")]["usage"]
    assert (plain["input_tokens"], plain["output_tokens"]) == (PLAIN_USAGE.input, PLAIN_USAGE.output)
    if cli == "codex":
        assert usage["cost_usd"] is None  # Codex reports no cost
    else:
        assert usage["cost_usd"] == pytest.approx(cost(used, CLAUDE_PRICES), rel=1e-9)


@pytest.mark.parametrize("cli", CLIS)
def test_paired_against_the_old_skill(cli: str, tmp_path: Path) -> None:
    require_cli(cli)
    skill, old = invoice_skill(tmp_path)
    with ModelServer() as model:
        script_invoice(model, cli)
        out = eval_skills("paired", "--skill-path", skill, "--baseline-skill-path", old, "--model", MODELS[cli],
                          "--concurrency", 2, "--timeout", 240, "--no-compare", "--no-store", "--json", cli=cli,
                          server=model, cwd=tmp_path, home=tmp_path / "home")
        assert out.returncode == 0, out.stderr
        firsts = first_requests(model)
        old_answers = len(model.answered_by("old answer"))
        calls = model.agent_calls()

    summary = json.loads(out.stdout)["run_summary"]
    assert summary["with_skill"]["pass_rate"]["mean"] == 0.5
    assert summary["old_skill"]["pass_rate"]["mean"] == 0.25
    found = runs(tmp_path / f"{SKILL}-workspace" / "iteration-1")
    assert found[("1", "old_skill")]["skills_invoked"] == [SKILL]  # installed under the skill's own name
    assert (found[("1", "old_skill")]["_folder"] / "outputs" / "response.md").read_text() == OLD
    assert found[("2", "old_skill")]["skills_invoked"] == []
    assert old_answers == 1
    assert len(firsts) == 4 and all(skill_listed(SKILL)(call) for call in firsts)  # both arms list it
    # the skill sits where the CLI discovers project skills (the CLI itself says where it loaded it from)
    assert any(f"{SKILLS_SUBDIR[cli]}/{SKILL}" in call.text for call in calls)
