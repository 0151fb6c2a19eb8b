"""The review page of tool-skill evaluations: per task, the outputs side by side across skills (one report
file or evaluation) or across evaluations (two report files, or two evaluations in the store).

A column is one skill of one evaluation. Outputs are untrusted: a string, or the ``result``/``output``/
``answer`` string of an object, is rendered as Markdown; anything else as highlighted JSON. When the
benchmark is known (a built-in id in the report, or ``--benchmark``) each task shows its input and expected
output too.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..formats.benchmark import Benchmark, Task, builtin_benchmark_ids, resolve_benchmark
from ..reports import load_report_file
from ..reports._format import mapping, summary_row
from .benchmark_view import bar_chart
from .feedback import FeedbackFile
from .files import OpenFile
from .render import rate_class, templates
from .source import CaseEntry, Mark, Tab

__all__ = ["Column", "ToolSource", "from_report_files", "from_store"]

ANSWER_KEYS = ("result", "output", "answer")
# what the page shows of a task result; a report file may lack any of them (the original eval-skills writes
# no ``attempts``, and leaves out ``output``, ``error`` and ``reason`` when it has none)
RESULT_KEYS = ("status", "score", "latencyMs", "usage", "error", "reason", "scorerType")


@dataclass(slots=True)
class Column:
    label: str
    report: dict[str, Any]
    results: dict[tuple[str, int], dict[str, Any]] = field(default_factory=dict)

    def runs_of(self, task: str) -> list[dict[str, Any]]:
        return [r for (t, _), r in sorted(self.results.items(), key=lambda kv: kv[0][1]) if t == task]


def _output_view(output: Any) -> dict[str, Any]:
    """How to show an output: Markdown text, and/or the whole value as JSON."""
    if isinstance(output, dict) and output.get("$truncated"):
        return {"text": None, "json": str(output.get("head", "")),
                "note": f"output cut when stored ({output.get('originalChars', '?')} characters)"}
    if isinstance(output, str):
        return {"text": output, "json": None, "note": None}
    if isinstance(output, dict):
        for key in ANSWER_KEYS:
            if isinstance(output.get(key), str):
                rest = {k: v for k, v in output.items() if k != key}
                return {"text": output[key], "json": output if rest else None, "note": None}
    return {"text": None, "json": output, "note": None}


def _cell(result: dict[str, Any]) -> dict[str, Any]:
    """A task result as the page reads it: every key it shows, None when the file has none."""
    attempts = result.get("attempts")
    return {**{key: result.get(key) for key in RESULT_KEYS}, "view": _output_view(result.get("output")),
            "attempts": attempts if isinstance(attempts, int) and not isinstance(attempts, bool) else None}


def _builtin_benchmark(reports: list[dict[str, Any]]) -> Benchmark | None:
    """The built-in benchmark the reports ran, when they all name one built-in id and its version and do not
    say they ran a file. A report that does not say where its benchmark came from may have run another
    benchmark of that id (the original eval-skills' own ``web-search-basic`` 1.0.0 has other tasks), so its
    tasks are guessed only from a matching ``benchmarkVersion``, which the original never writes."""
    runs = {(str(r.get("benchmarkId")), str(r.get("benchmarkVersion"))) for r in reports}
    sources = {mapping(r.get("evaluatorMetadata")).get("benchmarkSource") for r in reports}
    if len(runs) != 1 or not sources <= {"built-in", None}:
        return None
    ((benchmark_id, version),) = runs
    if benchmark_id not in builtin_benchmark_ids():
        return None
    benchmark = resolve_benchmark(benchmark_id)
    return benchmark if benchmark.version == version else None


def _mixed_benchmarks(columns: list[Column]) -> list[str]:
    """A warning when the columns ran different benchmarks (another id, or another version of one): their
    tasks and figures are not comparable, even where task ids match. A report that names no version (the
    original eval-skills writes none) is taken to have run any version of its id."""
    ran: dict[tuple[str, str | None], list[str]] = {}
    for column in columns:
        benchmark_id, version = column.report.get("benchmarkId"), column.report.get("benchmarkVersion")
        if benchmark_id is not None:
            ran.setdefault((str(benchmark_id), None if version is None else str(version)), []).append(column.label)
    ids = {benchmark_id for benchmark_id, _ in ran}
    versions = {(benchmark_id, version) for benchmark_id, version in ran if version is not None}
    if len(ids) < 2 and len(versions) < 2:
        return []
    which = "; ".join(f"{' '.join(p for p in key if p)} ({', '.join(labels)})" for key, labels in ran.items())
    return [f"These columns ran different benchmarks: {which}. Their tasks and figures are not comparable, "
            "even where task ids match."]


class ToolSource:
    """Tool-skill reports, each a list of SkillCompletionReport dicts labelled by where it came from."""

    feedback: FeedbackFile | None = None

    def __init__(self, evaluations: list[tuple[str, list[dict[str, Any]]]], *, benchmark: Benchmark | None = None,
                 facts: list[tuple[str, str]] | None = None) -> None:
        several = len(evaluations) > 1
        self.columns: list[Column] = []
        for label, reports in evaluations:
            for report in reports:
                name = " ".join(str(p) for p in (report.get("skillId"), report.get("skillVersion")) if p)
                column = Column(f"{label} · {name}" if several else name, report)
                for result in report.get("taskResults") or []:
                    if isinstance(result, dict):
                        number = result.get("runId")
                        run = number if isinstance(number, int) else 1
                        column.results[(str(result.get("taskId")), run)] = result
                self.columns.append(column)
        self.tasks: list[str] = list(dict.fromkeys(t for c in self.columns for (t, _) in c.results))
        if benchmark is None:
            benchmark = _builtin_benchmark([c.report for c in self.columns])
        self.benchmark_tasks: dict[str, Task] = {t.id: t for t in benchmark.tasks} if benchmark else {}
        skills = sorted({str(c.report.get("skillId")) for c in self.columns})
        self.title = ", ".join(skills) if len(skills) <= 3 else f"{len(skills)} skills"
        self.mark_meaning = "the share of the task's runs that passed"
        self.facts = facts or []
        if benchmark is not None:
            self.facts.append(("benchmark", f"{benchmark.id} {benchmark.version}"))
        self.problems = _mixed_benchmarks(self.columns)

    def detail_html(self, ref: str, *, static: bool) -> str | None:
        return None

    def detail_refs(self) -> list[str]:
        return []

    def file(self, ref: str) -> OpenFile | None:
        return None

    def tabs(self) -> list[Tab]:
        return [Tab("outputs", "Outputs"), Tab("benchmark", "Benchmark")]

    def _pass_rate(self, column: Column, task: str) -> float | None:
        runs = column.runs_of(task)
        return sum(r.get("status") == "pass" for r in runs) / len(runs) if runs else None

    def cases(self) -> list[CaseEntry]:
        entries = []
        for task in self.tasks:
            marks = []
            for column in self.columns:
                rate = self._pass_rate(column, task)
                text = "–" if rate is None else f"{rate * 100:.0f}%"
                marks.append(Mark(text, rate_class(rate), f"{column.label}: {text} of runs passed", column.label))
            entries.append(CaseEntry(task, task, marks))
        return entries

    def case_html(self, key: str, *, static: bool) -> str | None:
        if key not in self.tasks:
            return None
        numbers = sorted({n for c in self.columns for (t, n) in c.results if t == key})
        rows = []
        for n in numbers:
            cells = []
            for column in self.columns:
                result = column.results.get((key, n))
                cells.append(None if result is None else _cell(result))
            rows.append((n, cells))
        return str(templates().get_template("tool_case.html.j2").render(
            key=key, task=self.benchmark_tasks.get(key), columns=[c.label for c in self.columns], rows=rows,
            problems=self.problems))

    def tab_html(self, name: str, *, static: bool) -> str | None:
        if name != "benchmark":
            return None
        labels = [c.label for c in self.columns]
        rates = {task: {c.label: self._pass_rate(c, task) for c in self.columns} for task in self.tasks}
        numbers = {c.label: sorted({n for (_, n) in c.results}) for c in self.columns}
        grid = []
        for task in self.tasks:
            cells = []
            for column in self.columns:
                for n in numbers[column.label]:
                    result = column.results.get((task, n))
                    status = str(result.get("status")) if result else ""
                    cells.append({"status": status, "title": f"{column.label} run {n}: {status or 'no result'}"})
            grid.append((task, cells))
        return str(templates().get_template("tool_benchmark.html.j2").render(
            summaries=[(c.label, summary_row(c.report)) for c in self.columns], problems=self.problems,
            chart=bar_chart(self.tasks, labels, rates), label=str, grid=grid,
            grid_columns=[(c.label, numbers[c.label]) for c in self.columns]))


def from_report_files(paths: list[Path], benchmark: Benchmark | None = None) -> ToolSource:
    """Report files (``eval-result-*.json``): one is its skills side by side, several are compared."""
    evaluations = [(path.stem.removeprefix("eval-result-"), load_report_file(path)) for path in paths]
    return ToolSource(evaluations, benchmark=benchmark, facts=[("reports", ", ".join(str(p) for p in paths))])


def _refuse_paired_only(store: Any, store_path: Path) -> None:
    """A store holding paired or routing runs but no tool-skill evaluation: those are reviewed from their
    workspace folder, so the error names it (nothing when the store holds neither)."""
    from ..errors import InputError
    from ..store.paired import PairedStore
    from ..store.routing import list_routing_tests

    folders = [PairedStore(store).latest_workspace()]
    for test in list_routing_tests(store, limit=1):
        if test.get("results_path"):  # <workspace>/routing-<n>/routing_results.json
            folders.append(str(Path(test["results_path"]).parent.parent))
    folder = next((f for f in folders if f), None)
    if folder is not None:
        raise InputError("the results store holds no tool-skill evaluations, only paired or routing runs, which "
                         "are reviewed from their workspace folder", file=str(store_path),
                         hint=f"eval-skills view {shlex.quote(folder)}")


def from_store(store_path: Path, refs: list[str], benchmark: Benchmark | None = None) -> ToolSource:
    """Evaluations in a results store, by id, unique id prefix or ``latest``."""
    from ..errors import InputError
    from ..store.sqlite import Store

    evaluations = []
    with Store.open(store_path) as store:
        if not store.list_evaluations(1):
            _refuse_paired_only(store, store_path)
        for ref in refs:
            evaluation_id = store.resolve_evaluation(ref)
            info = store.get_evaluation(evaluation_id) or {}
            reports = store.get_reports(evaluation_id)
            if not reports:  # an interrupted evaluation: its results without the summaries
                by_skill: dict[str, list[dict[str, Any]]] = {}
                for result in store.get_results(evaluation_id):
                    by_skill.setdefault(str(result["skillId"]), []).append(result)
                if not by_skill:
                    raise InputError(f"evaluation {evaluation_id[:12]} has no task results", file=str(store_path),
                                     field="--evaluation")
                reports = [{"skillId": skill, "benchmarkId": info.get("benchmark_id"),
                            "benchmarkVersion": info.get("benchmark_version"), "taskResults": results}
                           for skill, results in by_skill.items()]
            evaluations.append((f"{evaluation_id[:8]} ({str(info.get('started_at', ''))[:16]})", reports))
    return ToolSource(evaluations, benchmark=benchmark, facts=[("store", str(store_path))])
