"""Is the skill portable? The same cases with and without the skill on several agents (``paired --agent A
--agent B ...``): one verdict per agent side by side, and for each pair of agents the agent x arm interaction
over cases, the per-case difference of the two agents' deltas, with the paired sign-flip interval and p-value.

Written beside the agents' workspaces as ``portability-<n>.json`` and ``portability-<n>.md``.
"""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path
from typing import Any

from ..formats.workspace import Benchmark
from ..stats import sign_flip_test
from ..stats.intervals import sign_flip_interval

__all__ = ["portability", "render_portability", "write_portability"]


def _delta(bench: Benchmark) -> dict[str, Any]:
    stats = bench.statistics
    d = stats.pass_rate_delta if stats else None
    if d is None:
        return {}
    return {"estimate": d.estimate, "ci_low": d.ci_low, "ci_high": d.ci_high, "p_value": d.p_value,
            "cases": d.cases, "case_deltas": (d.model_extra or {}).get("case_deltas") or {}}


def _direction(delta: dict[str, Any]) -> str:
    low, high = delta.get("ci_low"), delta.get("ci_high")
    if low is None or high is None:
        return "unknown"
    return "helps" if low > 0 else "hurts" if high < 0 else "unclear"


def portability(agents: list[tuple[str, str | None, Benchmark, Path]], seed: int = 0) -> dict[str, Any]:
    """``agents``: per agent its name, model, benchmark and iteration folder."""
    per_agent = []
    for name, model, bench, folder in agents:
        delta = _delta(bench)
        per_agent.append({"agent": name, "model": model, "iteration": str(folder), "direction": _direction(delta),
                          "verdict": (bench.model_extra or {}).get("verdict"),
                          **{k: v for k, v in delta.items() if k != "case_deltas"}})
    pairs = []
    for a, b in itertools.combinations(agents, 2):
        da, db = _delta(a[2]).get("case_deltas", {}), _delta(b[2]).get("case_deltas", {})
        shared = [case for case in da if case in db]
        values = [da[c] - db[c] for c in shared]
        pair: dict[str, Any] = {"agents": [a[0], b[0]], "cases": len(values)}
        if values:
            interval = sign_flip_interval(values, seed=seed)
            assert interval is not None
            pair.update(difference=round(math.fsum(values) / len(values), 4) + 0.0,
                        ci_low=round(interval[0], 4) + 0.0, ci_high=round(interval[1], 4) + 0.0,
                        p_value=sign_flip_test(values, seed=seed))
        pairs.append(pair)
    report: dict[str, Any] = {"agents": per_agent, "interaction": pairs}
    report["verdict"] = _sentence(report)
    return report


def _sentence(report: dict[str, Any]) -> str:
    helps = [a["agent"] for a in report["agents"] if a["direction"] == "helps"]
    hurts = [a["agent"] for a in report["agents"] if a["direction"] == "hurts"]
    if helps and hurts:
        return (f"Not portable: the skill helps on {', '.join(helps)} and hurts on {', '.join(hurts)} (each agent's "
                "95% interval excludes 0).")
    differ = [p for p in report["interaction"] if p.get("ci_low") is not None and (p["ci_low"] > 0 or p["ci_high"] < 0)]
    if differ:
        p = differ[0]
        return (f"The lift differs between agents: {p['agents'][0]} minus {p['agents'][1]} is "
                f"{p['difference'] * 100:+.1f} pp (95% interval {p['ci_low'] * 100:+.1f} to {p['ci_high'] * 100:+.1f} "
                f"pp, p = {p['p_value']:.3g}, {p['cases']} cases).")
    if helps and len(helps) == len(report["agents"]):
        return f"Portable: the skill helps on every agent ({', '.join(helps)}), and no difference between them shows."
    return ("No difference in the skill's lift between agents shows (every interval of the agent x arm "
            "interaction includes 0); see each agent's verdict.")


def render_portability(report: dict[str, Any]) -> str:
    def pp(value: Any) -> str:
        return "n/a" if value is None else f"{value * 100:+.1f} pp"

    lines = ["# Portability across agents", "", f"**Verdict.** {report['verdict']}", "",
             "| agent | model | delta | 95% interval | p | cases | the skill |", "|---|---|---|---|---|---|---|"]
    for a in report["agents"]:
        lines.append(f"| {a['agent']} | {a['model'] or 'default'} | {pp(a.get('estimate'))} | "
                     f"{pp(a.get('ci_low'))} to {pp(a.get('ci_high'))} | "
                     f"{'n/a' if a.get('p_value') is None else format(a['p_value'], '.3g')} | {a.get('cases') or 0} | "
                     f"{a['direction']} |")
    lines += ["", "## Does the lift differ between agents? (agent x arm interaction over cases)", "",
              "| agents | difference of deltas | 95% interval | p | cases |", "|---|---|---|---|---|"]
    for p in report["interaction"]:
        lines.append(f"| {p['agents'][0]} − {p['agents'][1]} | {pp(p.get('difference'))} | {pp(p.get('ci_low'))} to "
                     f"{pp(p.get('ci_high'))} | {'n/a' if p.get('p_value') is None else format(p['p_value'], '.3g')} "
                     f"| {p['cases']} |")
    return "\n".join(lines) + "\n"


def write_portability(folder: Path, report: dict[str, Any]) -> list[Path]:
    """``portability-<n>.json`` and ``.md`` in ``folder``, n the next free number."""
    folder.mkdir(parents=True, exist_ok=True)
    n = 1
    while (folder / f"portability-{n}.json").exists():
        n += 1
    paths = [folder / f"portability-{n}.json", folder / f"portability-{n}.md"]
    paths[0].write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    paths[1].write_text(render_portability(report), encoding="utf-8")
    return paths
