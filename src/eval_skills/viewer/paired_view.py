"""The review page of a paired-run workspace: the case list, and per case the prompt, the fixture files,
the arms' runs side by side with their grades, transcript, tokens and time, and the previous iteration's
response. The Benchmark and Routing tabs are in ``benchmark_view`` and ``routing_view``."""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path
from typing import Any

from ..formats.workspace import (
    INPUTS_DIR,
    Grading,
    MessageEvent,
    Timing,
)
from .arms import arm_label, mean_pass_rates, run_error
from .benchmark_view import benchmark_context
from .feedback import FEEDBACK_FILE, FeedbackFile, load_feedback
from .files import OpenFile, inside, list_files, open_below
from .iteration import IterationData
from .optimize_view import has_optimize, optimize_context
from .render import rate_class, templates
from .routing_view import DETAIL_PREFIX, routing_context, routing_detail, routing_detail_refs, routing_results
from .skill_creator import (
    eval_metadata,
    prompt_from_transcript,
    read_comparisons,
    run_extras,
    skipped_outputs,
)
from .source import CaseEntry, Mark, Tab, file_view
from .workspace import CaseRef, RunRef, Workspace, arm_order, scan_case, unreadable_folders

__all__ = ["WorkspaceSource"]

RUN_FILES_PREFIX = "run-files/"  # the files a run's agent made: run-files/<case key>/<arm>/<run number>
_RUN_FILES = re.compile(r"([^/\\\0]+)/([^/\\\0]+)/(\d{1,9})")


class WorkspaceSource(IterationData):
    """Everything the page shows of one workspace (one iteration, and the latest routing results)."""

    def __init__(self, workspace: Workspace) -> None:
        super().__init__(workspace)
        iteration = workspace.iteration_path
        self.feedback = (FeedbackFile(iteration / FEEDBACK_FILE, self.run_ids) if iteration is not None
                         else None)
        bench = self.benchmark()[0]
        name = bench.metadata.get("skill_name") if bench else None
        if not name and workspace.routing is not None:
            routing = routing_results(self)[0]
            name = routing.metadata.get("skill_name") if routing else None
        self.title = str(name or self.root.name.removesuffix("-workspace"))
        self.facts: list[tuple[str, str]] = [("workspace", str(self.root))]
        self.warnings: list[str] = unreadable_folders(iteration) if iteration is not None else []
        self.mark_meaning = "the mean pass rate of the case's runs (the share of assertions passed)"
        if workspace.iteration is not None:
            self.facts.append(("iteration", f"{workspace.iteration} of {len(workspace.iterations)}"))
        if workspace.routing is not None:
            self.facts.append(("routing", f"routing-{workspace.routing} ({len(workspace.routings)} in all)"))
        if bench:
            for key in ("agent", "model", "judge"):
                if bench.metadata.get(key):
                    self.facts.append((key, str(bench.metadata[key])))

    def file(self, ref: str) -> OpenFile | None:
        """A regular file below the workspace named by its path relative to it, opened (None when it leaves
        the workspace, passes through a symlink or is no regular file)."""
        return open_below(self.root, ref)

    # ---- the case list ---------------------------------------------------------------------------

    def cases(self) -> list[CaseEntry]:
        bench, _ = self.benchmark()
        rates = mean_pass_rates(self.bench_runs(bench.runs)) if bench else {}
        entries = []
        for case in self.scan(runs=False):
            marks = []
            for arm in case.arms:
                rate = rates.get(case.key, {}).get(arm)
                text = "–" if rate is None else f"{rate * 100:.0f}%"
                marks.append(Mark(text, rate_class(rate), f"{arm_label(arm)}: mean pass rate {text}", arm_label(arm)))
            entries.append(CaseEntry(case.key, case.key, marks))
        return entries

    def tabs(self) -> list[Tab]:
        tabs = []
        if self.ws.iteration is not None:
            tabs += [Tab("outputs", "Outputs"), Tab("benchmark", "Benchmark")]
        if self.ws.routing is not None:
            if has_optimize(self):
                tabs.append(Tab("optimize", "Optimize"))
            else:
                tabs.append(Tab("routing", "Routing"))
        return tabs

    def tab_html(self, name: str, *, static: bool) -> str | None:
        if name == "benchmark" and self.ws.iteration is not None:
            return str(templates().get_template("benchmark.html.j2").render(**benchmark_context(self)))
        if name == "optimize" and self.ws.routing is not None:
            return str(templates().get_template("optimize.html.j2").render(**optimize_context(self)))
        if name == "routing" and self.ws.routing is not None:
            return str(templates().get_template("routing.html.j2").render(**routing_context(self)))
        return None

    def detail_html(self, ref: str, *, static: bool) -> str | None:
        if ref.startswith(DETAIL_PREFIX) and self.ws.routing is not None:
            return routing_detail(self, ref.removeprefix(DETAIL_PREFIX))
        if ref.startswith(RUN_FILES_PREFIX):
            return self.run_files_html(ref.removeprefix(RUN_FILES_PREFIX), static=static)
        return None

    def case_folder(self, key: str) -> Path | None:
        """The folder of the case ``key``: ``eval-<key>``, else a folder named ``key`` (None: no such case)."""
        iteration = self.ws.iteration_path
        if iteration is None or not key or any(c in key for c in "/\\\0") or key in (".", ".."):
            return None
        for folder in (iteration / f"eval-{key}", iteration / key):
            readable = folder.is_dir() and not folder.is_symlink() and inside(self.root, folder)
            if readable and (folder.name.startswith("eval-") or any(c.key == key for c in self.scan(runs=False))):
                return folder
        return None

    def run_files_html(self, ref: str, *, static: bool) -> str | None:
        """The files a run's agent made (``ref``: ``<case key>/<arm>/<run number>``); None when no such run."""
        match = _RUN_FILES.fullmatch(ref)
        case_dir = self.case_folder(match.group(1)) if match is not None else None
        if match is None or case_dir is None or match.group(2) in (".", ".."):
            return None
        run = next((r for r in scan_case(case_dir).runs
                    if r.arm == match.group(2) and r.number == int(match.group(3))), None)
        if run is None or not inside(self.root, run.path):
            return None
        folder = run.path
        timing, _ = self.read.model(folder / "timing.json", Timing)
        outputs, more = list_files(folder / "outputs", self.root, skip=skipped_outputs(timing))
        return str(templates().get_template("run_files.html.j2").render(
            items=[file_view(f, static=static) for f in outputs], more=more))

    def detail_refs(self) -> list[str]:
        return routing_detail_refs(self) if self.ws.routing is not None else []

    # ---- one case --------------------------------------------------------------------------------

    def case_html(self, key: str, *, static: bool) -> str | None:
        folder = self.case_folder(key)
        if folder is None:
            return None
        case = scan_case(folder)
        context = self.case_context(case, static=static)
        return str(templates().get_template("case.html.j2").render(**context))

    def case_context(self, case: CaseRef, *, static: bool) -> dict[str, Any]:
        meta, problems = eval_metadata(self.read, case.path, [r.path for r in case.runs])
        fixtures, more = list_files(case.path / INPUTS_DIR, self.root)
        comparisons, found = read_comparisons(self.read, case.path)
        problems += found
        previous = self._previous_feedback()
        arms = case.arms
        rows: dict[int, dict[str, dict[str, Any]]] = defaultdict(dict)
        for run in case.runs:
            rows[run.number][run.arm] = self.run_context(run, previous, static=static)
        prompt = meta.prompt if meta and meta.prompt else self._prompt_from_transcripts(rows)
        return {
            "key": case.key, "meta": meta, "prompt": prompt, "problems": problems,
            "fixtures": [file_view(f, static=static) for f in fixtures], "fixtures_more": more,
            "arms": [(arm, arm_label(arm)) for arm in sorted(arms, key=arm_order)],
            "rows": [(number, [rows[number].get(arm) for arm in arms]) for number in sorted(rows)],
            "comparisons": comparisons,
            "feedback": self.feedback is not None, "arm_label": arm_label,
        }

    @staticmethod
    def _prompt_from_transcripts(rows: dict[int, dict[str, dict[str, Any]]]) -> str:
        for cells in rows.values():
            for cell in cells.values():
                for event in cell["events"]:
                    if isinstance(event, MessageEvent) and event.role == "user":
                        return event.text
                if prompt_from_transcript(cell.get("transcript_md")):
                    return prompt_from_transcript(cell.get("transcript_md"))
        return ""

    def _previous_feedback(self) -> dict[str, str]:
        previous = self.ws.previous_path
        if previous is None:
            return {}
        try:
            data = load_feedback(previous / FEEDBACK_FILE)
        except Exception:  # a broken earlier file only hides its texts
            return {}
        return {review.run_id: review.feedback for review in data.reviews if review.feedback}

    def run_context(self, run: RunRef, previous_feedback: dict[str, str], *, static: bool) -> dict[str, Any]:
        base, problems = run.path, []
        response, problem = self.read.text(base / "outputs" / "response.md")
        problems += [problem] if problem else []
        timing, problem = self.read.model(base / "timing.json", Timing)
        problems += [problem] if problem else []
        extras = run_extras(self.read, base, timing)
        problems += extras.pop("extra_problems")
        outputs, more = list_files(base / "outputs", self.root, skip=skipped_outputs(timing))
        # served, the files are read and highlighted when their fold is opened (a run may hold 100 big ones)
        detail = None if static else f"{RUN_FILES_PREFIX}{run.case_key}/{run.arm}/{run.number}"
        grading, problem = self.read.model(base / self.grading_file, Grading)
        problems += [problem] if problem else []
        events, event_problems = self.read.transcript(base / "transcript.jsonl")
        problems += event_problems
        error = run_error(grading, timing)
        context: dict[str, Any] = {
            "run_id": run.run_id, "arm": run.arm, "number": run.number, "response": response,
            "outputs": [file_view(f, static=static) for f in outputs] if static else [], "outputs_more": more,
            "outputs_count": len(outputs), "outputs_detail": detail,
            "grading": grading, "timing": timing, "events": events, "problems": problems,
            "error": error, "previous": None, **extras,
        }
        previous = self.ws.previous_path
        if previous is not None:
            old = previous / base.relative_to(self.ws.iteration_path or base)
            old_response, _ = self.read.text(old / "outputs" / "response.md")
            old_feedback = previous_feedback.get(run.run_id, "")
            if old_response is not None or old_feedback:
                context["previous"] = {"iteration": previous.name.removeprefix("iteration-"),
                                       "response": old_response, "feedback": old_feedback}
        return context

    grading_file = "grading.json"  # a run's grades as the page shows them (viewer.grading_view: another version)
