"""What an iteration was started with, and whether it may go on: ``paired_config.json``.

- :func:`iteration_config` is what ``paired_config.json`` records at the start (digests of the skill, the
  baseline and the evals with their fixture files, the arms, runs, seed, agent, model and judge, and the
  :func:`conditions` a before-and-after comparison needs equal);
- :func:`check_resume` refuses a resume that does not match it;
- :func:`judge_identity` is how a judge is recorded, :func:`same_judge` whether two recorded judges are one.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..formats._load import read_json
from ..judges import Judge
from .iteration import CONFIG_FILE, PairedSettings, now
from .plan import PairedPlan

__all__ = ["check_resume", "conditions", "iteration_config", "judge_identity", "same_judge"]

_MUST_MATCH = ("skill_digest", "baseline_digest", "evals_digest", "arms", "runs", "seed", "agent", "model",
               "adaptive", "target_delta")


def _digest(*parts: bytes) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(hashlib.sha256(part).digest())
    return digest.hexdigest()


def judge_identity(judge: Judge | None) -> dict[str, Any] | None:
    """What decides a verdict besides the request: a resumed iteration must be judged by the same. ``identity``
    is a digest of the judge's own identity (a command judge's command line and the files it names)."""
    if judge is None:
        return None
    own = json.dumps(judge.identity(), sort_keys=True, ensure_ascii=False, default=str).encode()
    return {"backend": judge.backend, "model": judge.model, "grade_prompt": judge.prompt_version("grade"),
            "compare_prompt": judge.prompt_version("compare"), "identity": hashlib.sha256(own).hexdigest()[:16]}


def same_judge(a: dict[str, Any] | None, b: dict[str, Any] | None) -> bool:
    """Whether two recorded judges are one (``identity`` counts when both have it: older records have none)."""
    if not a or not b:
        return not a and not b
    keys = (set(a) | set(b)) - ({"identity"} if "identity" not in a or "identity" not in b else set())
    return all(a.get(k) == b.get(k) for k in keys)


def iteration_config(plan: PairedPlan, settings: PairedSettings, judge: Judge | None = None) -> dict[str, Any]:
    evals = plan.evals_path.read_bytes()
    fixtures = [data for case in plan.cases for _, data in sorted(case.files.items())]
    baseline = plan.bundles[plan.baseline]
    return {"skill_name": plan.skill.name, "skill_path": str(plan.skill_path.resolve()),
            "skill_digest": plan.bundles[plan.arms[0]][0].digest,
            "baseline_skill_path": str(plan.baseline_path.resolve()) if plan.baseline_path else None,
            "baseline_digest": baseline[0].digest if baseline else None,
            "evals_path": str(plan.evals_path.resolve()), "evals_digest": _digest(evals, *fixtures),
            "arms": list(plan.arms), "runs": plan.runs, "seed": plan.seed, "cases": [c.key for c in plan.cases],
            "agent": settings.agent.get("agent"), "model": settings.model, "judge": judge_identity(judge),
            "timeout": settings.timeout, "sandbox": (settings.agent.get("isolation") or {}).get("sandbox", "none"),
            "max_turns": settings.max_turns, "adaptive": settings.adaptive, "target_delta": settings.target_delta,
            "conditions": conditions(plan, settings, judge), "started_at": now()}


def conditions(plan: PairedPlan, settings: PairedSettings, judge: Judge | None = None) -> dict[str, Any]:
    """What a before-and-after comparison needs equal (``paired --compare-iterations``): the agent, the version
    its CLI reports, the model asked for, the judge (backend, model, prompt versions), and digests of the test
    set (ids, prompts, expected outputs, fixture names), of the fixture files' bytes, of the grading rule (every
    case's assertions and checks) and of the skill."""
    def text_digest(value: Any) -> str:
        return _digest(json.dumps(value, sort_keys=True, ensure_ascii=False).encode())

    cases = [c.case for c in plan.cases]
    return {
        "agent": settings.agent.get("agent"), "agent_version": settings.agent.get("agent_version"),
        "model": settings.model, "judge": judge_identity(judge),
        "test_set": text_digest([[c.id, c.prompt, c.expected_output, c.files] for c in cases]),
        "fixtures": _digest(*(data for case in plan.cases for _, data in sorted(case.files.items()))),
        "grading": text_digest([[c.key, c.texts] for c in plan.cases]),
        "skill": plan.bundles[plan.arms[0]][0].digest}


def check_resume(folder: Path, config: dict[str, Any]) -> dict[str, Any]:
    saved = read_json(folder / CONFIG_FILE)
    if not isinstance(saved, dict):
        raise InputError("is not an object", file=str(folder / CONFIG_FILE))
    for key in _MUST_MATCH:
        if saved.get(key) != config.get(key):
            what = {"skill_digest": "the skill changed", "baseline_digest": "the baseline skill changed",
                    "evals_digest": "the evals or their fixture files changed"}.get(
                key, f"{key} was {saved.get(key)!r}, now {config.get(key)!r}")
            raise InputError(f"cannot resume: {what} since the iteration started", file=str(folder / CONFIG_FILE),
                             field=key, hint="resume with the same skill, evals and settings, or start a new "
                                             "iteration")
    if saved.get("sandbox", "none") != config.get("sandbox", "none"):  # runs of two isolations are not comparable
        raise InputError(f"cannot resume: the runs so far had --sandbox {saved.get('sandbox', 'none')}, now "
                         f"{config.get('sandbox', 'none')}", file=str(folder / CONFIG_FILE), field="sandbox",
                         hint="resume with the same --sandbox, or start a new iteration")
    before, now_ = saved.get("judge"), config.get("judge")
    if before and now_ and not same_judge(before, now_):  # grades of two judges in one benchmark are not comparable
        raise InputError(f"cannot resume: the judge was {_judge_text(before)}, now {_judge_text(now_)}",
                         file=str(folder / CONFIG_FILE), field="judge",
                         hint="resume with the same judge and judge model, or start a new iteration")
    return saved


def _judge_text(judge: dict[str, Any]) -> str:
    model = f" model {judge.get('model')}" if judge.get("model") else " (default model)"
    return f"{judge.get('backend')}{model}, prompts {judge.get('grade_prompt')}/{judge.get('compare_prompt')}"
