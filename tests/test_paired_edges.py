"""`eval-skills paired` on designs made to catch what a user meets: pass rates in thirds, error runs in one arm
only, a judge that fails, an agent that fails everywhere, hostile text, a judge interrupted while comparing,
SelfTune's own check forms. Real processes: the fake agent and fake judge programs; every number is worked out
by hand in the comments."""

from __future__ import annotations

import itertools
import json
from fractions import Fraction
from pathlib import Path
from typing import Any

from fakes import FAKE_AGENT, FAKE_JUDGE
from paired_data import paired

SKILL = """---
name: tally
description: Counts and names what a request asks for. Use it for tallies.
---
# Tally ({version})

Answer with every word the request needs.
"""
CHECKS = [{"type": "contains", "value": w} for w in ("alpha", "beta", "gamma")]


def make_skill(root: Path, cases: dict[str, dict[str, Any]], *, version: str = "new") -> tuple[Path, Path]:
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
    script.write_text(json.dumps({"skill": "tally", "usage": {"input_tokens": 10, "output_tokens": 5},
                                  "log": str(root / "agent-log.jsonl"), "cases": script_cases}))
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
    out = paired("--skill-path", skill, *AGENT, *JUDGE, "--no-store", "--json", cwd=tmp_path, script_file=script)
    assert out.returncode == 0, out.stderr
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
