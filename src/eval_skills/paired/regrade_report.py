"""The reports of a grading version: ``benchmark.json`` and ``benchmark.md`` (also kept as ``.vN``) recomputed
from the version's grades, saying which version they hold, and how far to trust its judge.

- :func:`build_regraded_benchmark`: the benchmark of a finished regrade (the runs as they were, the new grades,
  the blind A/B verdicts as they were: they do not depend on the assertions);
- :func:`add_trust`: the judge's agreement with the people's marks in ``feedback.json`` (and, when an earlier
  version was graded by another judge, the two judges' agreement), added to a benchmark, with its sentence
  added to the verdict;
- :func:`refresh_trust`: the latest benchmark again with the marks as they are now (no grading).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import InputError
from ..formats._load import read_json
from ..formats.grading import GradingVersion, GradingVersions, versioned_name
from ..formats.workspace import Benchmark, Comparison, Feedback
from ..stats.judge_trust import judge_trust, judges_alpha, marks_by_run, trust_sentence
from .iteration import now
from .plan import PairedPlan
from .record import RunRecord, load_comparisons, write_json
from .report import build_benchmark, render_markdown
from .resume import same_judge
from .summary import pending_pairs, plural, verdict_sentence

__all__ = ["add_trust", "build_regraded_benchmark", "refresh_trust", "write_version"]

_GRADING_NOTES = ("with judge errors", "not graded", "Grading version", "not compared yet")


def _benchmark_of(folder: Path, version: int | None = None) -> Benchmark | None:
    path = folder / ("benchmark.json" if version is None else versioned_name("benchmark.json", version))
    try:
        return Benchmark.model_validate(read_json(path))
    except Exception:  # a missing or broken earlier benchmark: nothing to carry over
        return None


def _feedback(folder: Path) -> Feedback:
    try:
        return Feedback.model_validate(read_json(folder / "feedback.json"))
    except Exception:  # no marks yet, or a file a person broke: no marks to count
        return Feedback()


def add_trust(bench: Benchmark, plan: PairedPlan, folder: Path, versions: GradingVersions) -> Benchmark:
    """``judge_trust`` (and ``judges_agreement``) added to ``bench``, the verdict sentence extended (see the
    module doc)."""
    extra = bench.model_extra if bench.model_extra is not None else {}
    stats = bench.statistics
    verdict = verdict_sentence(stats.pass_rate_delta, plan.baseline, stats.design) \
        if stats is not None and stats.pass_rate_delta is not None else str(extra.get("verdict") or "")
    marks = marks_by_run(_feedback(folder))
    trust = judge_trust(bench.runs, marks, arms=plan.arms, seed=plan.seed)
    data = bench.model_dump(mode="json")
    data["judge_trust"] = trust
    current = versions.get(int(bench.metadata.get("grading_version") or versions.current))
    other = next((v for v in sorted(versions.versions, key=lambda v: -v.version)
                  if current is not None and v.version < current.version and v.status == "finished"
                  and not same_judge(v.judge, current.judge) and v.judge is not None), None)
    earlier = _benchmark_of(folder, other.version) if other is not None else None
    if other is not None and earlier is not None and current is not None:
        alpha = judges_alpha(earlier.runs, bench.runs)
        data["judges_agreement"] = {"versions": [other.version, current.version],
                                    "judges": [other.judge, current.judge], **alpha}
    sentence = trust_sentence(trust)
    data["verdict"] = f"{verdict} {sentence}" if sentence else verdict
    return Benchmark.model_validate(data)


def write_version(folder: Path, bench: Benchmark, plan: PairedPlan, version: int) -> list[Path]:
    """``benchmark.json`` and ``benchmark.md``, and their ``.vN`` copies."""
    text = render_markdown(bench, plan)
    files = []
    for name in ("benchmark.json", versioned_name("benchmark.json", version)):
        write_json(folder / name, bench)
        files.append(folder / name)
    for name in ("benchmark.md", versioned_name("benchmark.md", version)):
        (folder / name).write_text(text, encoding="utf-8")
        files.append(folder / name)
    return files


def _comparisons(plan: PairedPlan, folder: Path) -> dict[str, dict[int, Comparison]]:
    found: dict[str, dict[int, Comparison]] = {}
    for case in plan.cases:
        found[case.key] = {n: c for n, c in load_comparisons(folder / f"eval-{case.key}").items()
                           if c.winner is not None or "not_compared" in (c.model_extra or {})}
    return found


def _metadata(before: dict[str, Any], versions: GradingVersions, target: GradingVersion) -> dict[str, Any]:
    judge = target.judge or {}
    return {**before, "judge": judge.get("backend"), "judge_model": judge.get("model"),
            "analyzer_model": judge.get("model"), "judge_prompt_version": judge.get("grade_prompt"),
            "evals_path": target.evals_path or before.get("evals_path"), "grading_version": target.version,
            "grading_versions": len(versions.versions), "grading_made_by": target.made_by,
            "grading_judge": target.judge, "grading_rule": target.grading, "regraded_at": now()}


def build_regraded_benchmark(plan: PairedPlan, folder: Path, records: dict[str, RunRecord],
                             versions: GradingVersions, target: GradingVersion,
                             config: dict[str, Any]) -> tuple[Benchmark, list[Path]]:
    before = _benchmark_of(folder)
    old_meta = before.metadata if before is not None else {}
    compare = bool(old_meta.get("compare", True))
    comparisons = _comparisons(plan, folder) if compare else {}
    missing = [p.run_id for p in plan.order() if p.run_id not in records]
    ungraded = [r.run_id for r in records.values() if r.ok and r.grading is None]
    pending = pending_pairs(plan, records, comparisons) if compare else []
    metadata = _metadata(old_meta, versions, target)
    metadata.update(missing_runs=missing, ungraded_runs=ungraded, pending_comparisons=pending,
                    complete=not (missing or ungraded or pending))
    notes = [n for n in (before.notes if before is not None else []) if not any(s in n for s in _GRADING_NOTES)]
    notes.append(f"Grading version {target.version}: the saved runs graded again without running the agent "
                 f"({plural(target.asked, 'judge verdict')} asked, {target.reused} reused from earlier versions).")
    judge_errors = [r.run_id for r in records.values()
                    if r.ok and r.grading is not None and any(e.passed is None for e in r.grading.expectations)]
    if judge_errors:
        notes.append(f"{plural(len(judge_errors), 'run')} with judge errors: those assertions count neither as "
                     "passes nor as failures (a new eval-skills regrade asks the judge again for them).")
    bench = build_benchmark(plan, records, comparisons, metadata, notes, pending=len(pending),
                            target_delta=config.get("target_delta"))
    bench = add_trust(bench, plan, folder, versions)
    return bench, write_version(folder, bench, plan, target.version)


def refresh_trust(plan: PairedPlan, folder: Path, versions: GradingVersions) -> tuple[Benchmark, list[Path]]:
    """The latest benchmark with how far to trust the judge recomputed from the marks now in feedback.json."""
    bench = _benchmark_of(folder)
    if bench is None:
        raise InputError("has no readable benchmark.json", file=str(folder), field="--agreement-only",
                         hint="finish the iteration (eval-skills paired --resume) first")
    bench = add_trust(bench, plan, folder, versions)
    version = int(bench.metadata.get("grading_version") or versions.current)
    if version == 1 and not (folder / "grading_versions.json").is_file():
        write_json(folder / "benchmark.json", bench)
        (folder / "benchmark.md").write_text(render_markdown(bench, plan), encoding="utf-8")
        return bench, [folder / "benchmark.json", folder / "benchmark.md"]
    return bench, write_version(folder, bench, plan, version)
