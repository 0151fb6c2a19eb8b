"""Two iterations of one workspace, case by case (``paired --compare-iterations A B``): before and after.

Only comparable iterations are compared. Each iteration records its conditions (``paired_config.json``
``conditions``: the agent, its CLI's version and the model, the judge, digests of the test set, the fixture files
and the grading rule); when the model, the agent CLI's version, the test set, the fixture files or the grading rule
differ, the comparison is refused, naming what differs, unless the caller allows that difference, and then every
output says it. The skill itself is what is expected to change. For iterations written before conditions were
recorded, the evals digest (cases, assertions and fixtures together) stands in for the last three; before the
CLI's version was recorded, it is not compared.

The statistics are the paired ones of an iteration, with cases as pairs: per case, the mean pass rate of a
configuration's runs in B minus in A; the interval by inverting the sign-flip test, and its p-value.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..formats._load import load_model, read_json
from ..formats.grading import GRADING_VERSIONS_FILE, GradingVersions
from ..formats.workspace import Benchmark, BenchmarkRun
from ..stats import sign_flip_test
from ..stats.intervals import sign_flip_interval
from .iteration import CONFIG_FILE
from .resume import same_judge

__all__ = ["CONDITIONS", "compare_iterations", "differences"]

CONDITIONS = {"model": "the agent or its model", "agent-version": "the version of the agent's CLI",
              "test-set": "the test set (case ids, prompts, expected outputs)",
              "fixtures": "the fixture files", "grading": "the grading rule (the assertions, the judge)"}


def _load(workspace: Path, number: int) -> tuple[dict[str, Any], Benchmark]:
    folder = workspace / f"iteration-{number}"
    if not (folder / "benchmark.json").is_file():
        raise InputError("has no benchmark.json", file=str(folder), field="--compare-iterations",
                         hint="name two finished iterations of this workspace")
    config = read_json(folder / CONFIG_FILE)
    if not isinstance(config, dict):
        raise InputError("is not an object", file=str(folder / CONFIG_FILE))
    if (folder / GRADING_VERSIONS_FILE).is_file():  # graded again: the rule is the one of the version it holds
        versions = load_model(GradingVersions, folder / GRADING_VERSIONS_FILE)
        held = versions.get(versions.current)
        if held is not None:
            config = {**config, "judge": held.judge, "grading_version": held.version,
                      "conditions": {**(config.get("conditions") or {}), "grading": held.grading,
                                     "judge": held.judge}}
    return config, load_model(Benchmark, folder / "benchmark.json")


def differences(a: dict[str, Any], b: dict[str, Any]) -> dict[str, str]:
    """Which of :data:`CONDITIONS` differ between two iterations' configs, each with what it was and is."""
    ca, cb = a.get("conditions") or {}, b.get("conditions") or {}
    found: dict[str, str] = {}
    for key in ("agent", "model"):
        if a.get(key) != b.get(key):
            found["model"] = f"{key} was {a.get(key) or 'the default'}, now {b.get(key) or 'the default'}"
    if "agent_version" in ca and "agent_version" in cb and ca["agent_version"] != cb["agent_version"]:
        found["agent-version"] = (f"the agent's CLI was {ca['agent_version'] or 'of an unknown version'}, now "
                                  f"{cb['agent_version'] or 'of an unknown version'}")
    if ca and cb:
        for name, key in (("test-set", "test_set"), ("fixtures", "fixtures"), ("grading", "grading")):
            if ca.get(key) != cb.get(key):
                found[name] = f"{CONDITIONS[name]} changed"
                if name == "grading" and a.get("grading_version", 1) != b.get("grading_version", 1):
                    found[name] += (f" (grading version {a.get('grading_version', 1)} against "
                                    f"{b.get('grading_version', 1)})")
    elif a.get("evals_digest") != b.get("evals_digest"):
        found["test-set"] = "the evals file or its fixture files changed"
    if not same_judge(a.get("judge"), b.get("judge")):
        found["grading"] = "the judge (its backend, model or prompt version) changed"
    return found


def _rates(runs: list[BenchmarkRun], configuration: str) -> dict[str, list[float]]:
    by_case: dict[str, list[float]] = {}
    for run in runs:
        result = run.result
        graded = result.passed + result.failed
        if run.configuration == configuration and not result.errors and result.pass_rate is not None and graded:
            by_case.setdefault(str(run.eval_id), []).append(result.passed / graded)
    return by_case


def _compare_arm(before: Benchmark, after: Benchmark, configuration: str, seed: int) -> dict[str, Any]:
    a, b = _rates(before.runs, configuration), _rates(after.runs, configuration)
    shared = [case for case in b if case in a]
    deltas = {case: math.fsum(b[case]) / len(b[case]) - math.fsum(a[case]) / len(a[case]) for case in shared}
    values = list(deltas.values())
    out: dict[str, Any] = {"configuration": configuration, "cases": len(values), "left_out": sorted(set(a) ^ set(b)),
                           "case_deltas": {k: round(v, 4) for k, v in deltas.items()}}
    if values:
        interval = sign_flip_interval(values, seed=seed)
        assert interval is not None
        out.update(estimate=round(math.fsum(values) / len(values), 4) + 0.0, ci_low=round(interval[0], 4) + 0.0,
                   ci_high=round(interval[1], 4) + 0.0, confidence=0.95, p_value=sign_flip_test(values, seed=seed))
    return out


def compare_iterations(workspace: Path, first: int, second: int, *, allow: set[str] | None = None,
                       seed: int = 0) -> dict[str, Any]:
    """The comparison of iteration ``second`` against ``first`` (see the module doc); InputError when they are
    not comparable and the difference is not in ``allow``."""
    config_a, before = _load(workspace, first)
    config_b, after = _load(workspace, second)
    differ = differences(config_a, config_b)
    refused = {k: v for k, v in differ.items() if k not in (allow or set())}
    if refused:
        names = ", ".join(refused)
        raise InputError(f"iterations {first} and {second} are not comparable: {'; '.join(refused.values())}",
                         file=str(workspace), field="--compare-iterations",
                         hint=f"compare iterations run under the same conditions, or pass --allow-different "
                              f"{names.split(', ')[0]} (for each of: {names}) to compare anyway")
    earlier = before.metadata.get("configurations") or []
    arms = [c for c in after.metadata.get("configurations") or [] if c in earlier]
    result: dict[str, Any] = {"workspace": str(workspace), "before": first, "after": second,
                              "different_conditions": differ,
                              "arms": [_compare_arm(before, after, arm, seed) for arm in arms]}
    result["verdict"] = _sentence(result)
    return result


def _sentence(result: dict[str, Any]) -> str:
    first, second = result["before"], result["after"]
    arms = result["arms"]
    if not arms or arms[0].get("estimate") is None:
        return (f"Nothing to compare: no case has graded runs of the same configuration in iterations {first} and "
                f"{second}.")
    main = arms[0]
    stated = (f"{main['estimate'] * 100:+.1f} pp (95% interval {main['ci_low'] * 100:+.1f} to "
              f"{main['ci_high'] * 100:+.1f} pp, p = {main['p_value']:.3g}, {main['cases']} cases)")
    if main["ci_low"] > 0:
        text = f"Iteration {second} raises the {main['configuration']} pass rate over iteration {first} by {stated}."
    elif main["ci_high"] < 0:
        text = f"Iteration {second} lowers the {main['configuration']} pass rate against iteration {first}: {stated}."
    else:
        text = (f"No clear difference between iterations {first} and {second} in the {main['configuration']} pass "
                f"rate: {stated}; the interval includes 0.")
    if result["different_conditions"]:
        text += " Compared although " + "; ".join(result["different_conditions"].values()) + "."
    return text
