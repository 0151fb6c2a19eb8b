"""``optimize.md``: the split, every candidate's train and test figures, the per-query trigger rates, the winner
and how sure it is. Text from the skill, the queries and the improver is untrusted: it is written inside code
spans or escaped, so it cannot add Markdown structure (or HTML) to the report."""

from __future__ import annotations

from ..formats.optimize_results import OptimizeCandidate, OptimizeResults
from ..formats.routing_results import RoutingMetrics

__all__ = ["render_optimize_markdown", "rate", "stop_line"]


def rate(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4f}"


def _cell(text: str) -> str:
    """Untrusted text for a table cell: one line, no pipe, no HTML, no Markdown markup."""
    text = " ".join(str(text).split())
    for char, escaped in (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ("|", "&#124;")):
        text = text.replace(char, escaped)
    for char in "\\`*_[]#!~":
        text = text.replace(char, "\\" + char)
    return text


def _figures(m: RoutingMetrics | None) -> str:
    if m is None:
        return "– | – | –"
    return f"{rate(m.precision)} | {rate(m.recall)} | {rate(m.f1)}"


def stop_line(results: OptimizeResults) -> str:
    meta = results.metadata
    if meta.get("state") == "running":
        return "in progress"
    if meta.get("interrupted"):
        return "interrupted (finish with --resume)"
    reason, detail = meta.get("stop_reason"), meta.get("stop_detail")
    return f"{reason}: {detail}" if detail else str(reason or "–")


def _status(c: OptimizeCandidate, winner: int | None) -> str:
    return c.status + (" (winner)" if c.number == winner else "")


def render_optimize_markdown(results: OptimizeResults) -> str:
    meta, split = results.metadata, results.split
    winner = results.winner.number if results.winner else None
    counts = split.counts
    lines = [f"# Description optimisation: {_cell(str(meta.get('skill_name', '?')))}", "",
             f"- agent: {_cell(str(meta.get('agent')))}, model {_cell(str(meta.get('model') or 'default'))}, "
             f"{meta.get('runs')} run(s) per query",
             f"- improver: {_cell(str((meta.get('improver') or {}).get('backend')))}, model "
             f"{_cell(str((meta.get('improver') or {}).get('model') or 'default'))}",
             f"- split (seed {split.seed}, holdout {split.holdout}): train {len(split.train)} queries "
             f"({counts.get('train', {}).get('should_trigger', '?')} should trigger), test {len(split.test)} "
             f"({counts.get('test', {}).get('should_trigger', '?')} should trigger)",
             f"- stopped: {_cell(stop_line(results))}; agent tokens used: {meta.get('tokens_used', 0)}", "",
             "## Candidates", "",
             "| # | origin | chars | train precision | train recall | train F1 | test precision | test recall | "
             "test F1 | test F1 95% interval | status |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for c in results.candidates:
        ci = f"[{c.test_f1_ci[0]:.4f}, {c.test_f1_ci[1]:.4f}]" if c.test_f1_ci else "–"
        lines.append(f"| {c.number} | {c.origin} | {len(c.description)} | {_figures(c.train)} | "
                     f"{_figures(c.test)} | {ci} | {_status(c, winner)} |")
    lines += ["", "## Descriptions", ""]
    for c in results.candidates:
        lines.append(f"{c.number}. {_cell(c.description)}")
        for attempt in c.improver:
            if attempt.refused:
                lines.append(f"   - refused first: {_cell(attempt.description or '')} ({_cell(attempt.refused)})")
    columns = " | ".join(f"cand. {c.number}" for c in results.candidates)
    lines += ["", "## Trigger rates per query", "", f"| # | set | should trigger | query | {columns} |",
              "|---|---|---|---|" + "---|" * len(results.candidates)]
    rates = {c.number: {q.index: q for q in c.queries} for c in results.candidates}
    for q in results.queries:
        cells = []
        for c in results.candidates:
            row = rates[c.number].get(q.index)
            mark = "" if row is None or row.passed is not False else " ✗"
            cells.append("–" if row is None or row.trigger_rate is None else f"{row.trigger_rate:.2f}{mark}")
        lines.append(f"| {q.index} | {q.set} | {'yes' if q.should_trigger else 'no'} | {_cell(q.query)} | "
                     + " | ".join(cells) + " |")
    lines += ["", "## Winner", ""]
    w = results.winner
    if w is None:
        lines.append("No finished candidate has a held-out F1 yet.")
    else:
        lines.append(f"Candidate {w.number}: {_cell(w.why)}.")
        if w.difference is not None:
            ci = f"[{w.difference_ci[0]:+.4f}, {w.difference_ci[1]:+.4f}]" if w.difference_ci else "n/a"
            lines.append("")
            lines.append(f"Held-out F1 {rate(w.test_f1)} against the original's {rate(w.original_test_f1)}: "
                         f"difference {w.difference:+.4f}, 95% paired bootstrap interval {ci}"
                         + (" (above 0: the winner is better)" if w.sure else ""))
        if w.warning:
            lines += ["", f"Warning: {_cell(w.warning)}."]
    return "\n".join(lines) + "\n"
