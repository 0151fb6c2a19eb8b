"""`eval-skills paired` through the real Codex and OpenCode CLIs under ``--sandbox bwrap``, against the scripted model
on 127.0.0.1: each CLI starts in its private home (its configuration made for the run: Codex's own CODEX_HOME beside
its TMPDIR, OpenCode's opencode.json), finds the skill where it discovers project skills, runs its tools (Codex's
own sandbox nested in bwrap), and gives the pass rates the script implies (e2e_scenarios.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from agent_clis import MODELS, require_cli
from e2e_scenarios import SKILL, eval_skills, first_requests, invoice_skill, runs, script_invoice
from fakes.model_server import ModelServer, skill_listed

from eval_skills.sandbox.bwrap import bwrap_probe


def _bwrap_problem() -> str | None:
    found = shutil.which("bwrap")
    return "bubblewrap (bwrap) is not installed" if found is None else bwrap_probe(found, False)


pytestmark = [pytest.mark.e2e,
              pytest.mark.skipif(_bwrap_problem() is not None, reason=f"bwrap cannot run here: {_bwrap_problem()}")]


@pytest.mark.parametrize("cli", ["codex", "opencode"])
def test_paired_under_bwrap(cli: str, tmp_path: Path) -> None:
    require_cli(cli)
    skill, _ = invoice_skill(tmp_path)
    with ModelServer() as model:
        script_invoice(model, cli)
        out = eval_skills("paired", "--skill-path", skill, "--model", MODELS[cli], "--concurrency", 2,
                          "--timeout", 240, "--no-compare", "--no-store", "--json", "--sandbox", "bwrap",
                          cli=cli, server=model, cwd=tmp_path, home=tmp_path / "home")
        assert out.returncode == 0, out.stderr
        firsts = first_requests(model)
    bench = json.loads(out.stdout)
    found = runs(tmp_path / f"{SKILL}-workspace" / "iteration-1")
    assert all(run["status"] == "ok" for run in found.values()), {k: r["error"] for k, r in found.items()}
    summary = bench["run_summary"]
    assert summary["with_skill"]["pass_rate"]["mean"] == 0.5, found
    assert summary["without_skill"]["pass_rate"]["mean"] == 0.0
    assert len(firsts) == 4 and sum(skill_listed(SKILL)(call) for call in firsts) == 2
    assert found[("1", "with_skill")]["skills_invoked"] == [SKILL]
    assert bench["metadata"]["isolation"]["sandbox"] == "bwrap"
    assert bench["metadata"]["baseline_clean"] is True
