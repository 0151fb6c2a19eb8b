"""The real Claude Code under ``--sandbox bwrap``, against the scripted model on 127.0.0.1: a skill of the same name in
the user's own ``~/.claude/skills`` (a temporary home set up here) is never listed to the model in a baseline run;
without a sandbox it is (so the test sees the leak it guards against)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from eval_skills.sandbox.bwrap import bwrap_probe

scenarios = pytest.importorskip("e2e_scenarios", reason="the end-to-end helpers (the scripted model server and the "
                                                        "agent CLIs) are not in this tree")
agent_clis = pytest.importorskip("agent_clis")
model_server = pytest.importorskip("fakes.model_server")


def _bwrap_problem() -> str | None:
    found = shutil.which("bwrap")
    return "bubblewrap (bwrap) is not installed" if found is None else bwrap_probe(found, False)


pytestmark = [pytest.mark.e2e,
              pytest.mark.skipif(_bwrap_problem() is not None, reason=f"bwrap cannot run here: {_bwrap_problem()}")]

USER_MARK = "USER-LEVEL-COPY-OF-THE-SKILL"


@pytest.mark.parametrize("sandbox", ["bwrap", "none"])
def test_a_same_named_user_skill_never_reaches_a_baseline_run_under_bwrap(sandbox: str, tmp_path: Path) -> None:
    agent_clis.require_cli("claude")
    skill, _ = scenarios.invoice_skill(tmp_path)
    home = tmp_path / "home"
    user_copy = home / ".claude" / "skills" / scenarios.SKILL
    user_copy.mkdir(parents=True)
    (user_copy / "SKILL.md").write_text(f"---\nname: {scenarios.SKILL}\ndescription: {USER_MARK} checks invoices. "
                                        f"Use it for invoices.\n---\n# {USER_MARK}\n")
    with model_server.ModelServer() as model:
        model.rule(model_server.always(), model_server.Answer(scenarios.PLAIN))
        out = scenarios.eval_skills("paired", "--skill-path", skill, "--model", agent_clis.MODELS["claude"],
                                    "--concurrency", 2, "--timeout", 240, "--no-compare", "--no-store", "--json",
                                    "--sandbox", sandbox, cli="claude", server=model, cwd=tmp_path, home=home)
        firsts = scenarios.first_requests(model)
        calls = model.agent_calls()
    assert out.returncode in (0, 1), out.stderr
    bench = json.loads(out.stdout)
    found = scenarios.runs(tmp_path / f"{scenarios.SKILL}-workspace" / "iteration-1")
    assert all(run["status"] == "ok" for run in found.values()), {k: r["error"] for k, r in found.items()}
    assert len(firsts) == 4
    listed = model_server.skill_listed(scenarios.SKILL)
    if sandbox == "bwrap":
        # the project skill is listed in the two with_skill runs; the user's copy is never shown, in any run
        assert sum(listed(call) for call in firsts) == 2
        assert not any(USER_MARK in call.text for call in calls)
        assert bench["metadata"]["baseline_clean"] is True
        assert bench["metadata"]["isolation"]["sandbox"] == "bwrap"
        assert "ANTHROPIC_API_KEY" in bench["metadata"]["isolation"]["variables"]
    else:  # the leak the sandbox closes: the user's copy reaches the baseline runs
        assert any(USER_MARK in call.text for call in firsts)
        assert bench["metadata"]["baseline_clean"] is False
