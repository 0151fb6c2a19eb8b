"""``routing.md``: the metrics, the queries, what failed and which runs were errors, for a person to read.

Queries, error messages and skill names are untrusted text: in table cells ``|`` is escaped, line breaks
become spaces and ``<``, ``>``, ``&`` are entities, so a Markdown renderer shows them as text.
"""

from __future__ import annotations

from ..formats.routing_results import RoutingMetrics, RoutingQueryResult, RoutingResults

__all__ = ["fmt_rate", "render_markdown"]

ERROR_CHARS = 300


def _cell(text: object) -> str:
    value = " ".join(str(text).split())
    value = value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return value.replace("|", "\\|").replace("`", "\\`")


def fmt_rate(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4f}"


def _metric_rows(m: RoutingMetrics) -> list[str]:
    rows = []
    for name in ("precision", "recall", "f1", "accuracy"):
        value = getattr(m, name)
        why = m.undefined.get(name)
        rows.append(f"| {name} | {fmt_rate(value)} | {_cell(why) if why else ''} |")
    return rows


def _rate(q: RoutingQueryResult) -> str:
    text = fmt_rate(q.trigger_rate)
    if q.trigger_rate_ci is not None:
        text += f" [{q.trigger_rate_ci[0]:.4f}, {q.trigger_rate_ci[1]:.4f}]"
    return text


def _verdict(q: RoutingQueryResult) -> str:
    return "n/a" if q.passed is None else ("pass" if q.passed else "FAIL")


def render_markdown(results: RoutingResults) -> str:
    meta, m = results.metadata, results.metrics
    lines = [f"# Routing test: {_cell(meta.get('skill_name', ''))}", ""]
    agent = meta.get("agent") or "?"
    model = f", model {_cell(meta['model'])}" if meta.get("model") else ""
    distractors = ", ".join(_cell(d["name"]) for d in meta.get("distractors", [])) or "none"
    lines += [f"Agent {_cell(agent)}{model}; {len(results.queries)} queries x {meta.get('runs', 1)} runs; "
              f"distractor skills: {distractors}.",
              f"Runs: {meta.get('finished_runs', 0)} of {meta.get('planned_runs', 0)} finished, "
              f"{meta.get('error_runs', 0)} errors.", ""]
    if meta.get("in_progress"):
        lines += ["**Not finished** when this was written (still running, or stopped without a chance to finish): "
                  "the figures cover the runs finished by then.", ""]
    elif meta.get("interrupted"):
        lines += ["**Interrupted**: the figures cover the runs that finished.", ""]
    lines += ["Positive class: should trigger. Prediction: trigger rate at least 0.5. "
              f"Queries counted: {m.queries} (true positives {m.tp}, false positives {m.fp}, "
              f"false negatives {m.fn}, true negatives {m.tn}); without a finished run: {m.unscored}.", "",
              "| metric | value | note |", "|---|---:|---|", *_metric_rows(m), ""]
    if m.by_invocation_type:
        lines += ["## By invocation type", "", "| type | queries | precision | recall | f1 | accuracy |",
                  "|---|---:|---:|---:|---:|---:|"]
        for name, g in m.by_invocation_type.items():
            lines.append(f"| {_cell(name)} | {g.queries} | {fmt_rate(g.precision)} | {fmt_rate(g.recall)} | "
                         f"{fmt_rate(g.f1)} | {fmt_rate(g.accuracy)} |")
        lines.append("")
    ci = " (95% Wilson interval)" if meta.get("runs", 1) > 1 else ""
    lines += ["## Queries", "",
              f"| # | query | should trigger | type | triggers / runs | errors | trigger rate{ci} | result | "
              "distractors invoked |", "|---:|---|---|---|---:|---:|---|---|---|"]
    for q in results.queries:
        invoked = ", ".join(f"{_cell(k)} x{v}" for k, v in q.distractors_invoked.items())
        lines.append(f"| {q.index} | {_cell(q.query)} | {'yes' if q.should_trigger else 'no'} | "
                     f"{_cell(q.invocation_type or '')} | {q.triggers} / {q.runs - q.errors} | {q.errors} | "
                     f"{_rate(q)} | {_verdict(q)} | {invoked} |")
    failed = [q for q in results.queries if q.passed is False]
    if failed:
        lines += ["", f"## Failed queries ({len(failed)})", ""]
        for q in failed:
            want = "should trigger" if q.should_trigger else "should not trigger"
            lines.append(f"- {q.index}. {_cell(q.query)}: {want}, triggered in {q.triggers} of "
                         f"{q.runs - q.errors} runs")
    errors = [(q, r) for q in results.queries for r in q.run_results if r.triggered is None]
    if errors:
        lines += ["", f"## Runs in error ({len(errors)}): neither triggered nor not", ""]
        for q, r in errors:
            text = r.error or r.status
            text = text if len(text) <= ERROR_CHARS else text[:ERROR_CHARS] + "..."
            seen = f" (skills invoked before it: {', '.join(map(_cell, r.skills_invoked))})" if r.skills_invoked \
                else ""
            lines.append(f"- query {q.index} run {r.run}: {r.status}: {_cell(text)}{seen}")
    return "\n".join(lines) + "\n"
