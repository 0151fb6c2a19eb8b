"""Grade an iteration's saved runs again, with the current assertions or another judge, without running an agent.

:func:`run_regrade` is the library entry point of ``eval-skills regrade``; it prints nothing. Everything that
can be wrong is found before anything is written (:mod:`.regrade_check`: a case whose prompt or fixture files
changed is refused; a verdict that must be asked with no judge given is refused). Then each finished run is
graded into a new grading version N (``grading.vN.json`` in its folder, written as it finishes, with its store
rows): a judge verdict whose assertion, response, expected output and judge are unchanged is taken from the
earlier version that has it (``reused_from``); only the others go to the judge; the assertion engine's checks
run again (they are cheap and exact). An added assertion is graded on every run, a removed one is dropped.
Ctrl-C keeps what finished; ``resume=True`` finishes the version. Once every run has its grade, the version
becomes the latest: ``grading.json``, ``benchmark.json`` and ``benchmark.md`` are rewritten from it (each also
kept as ``.vN``), with how far to trust the judge (:mod:`eval_skills.stats.judge_trust`).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._version import __version__
from ..errors import InputError
from ..formats.grading import GRADING_VERSIONS_FILE, GradingVersion, GradingVersions, versioned_name
from ..formats.workspace import Benchmark, Expectation, Grading, run_dir
from ..judges import Judge
from .grading import execution_metrics, grade_run, judge_info, summarize
from .iteration import hold_iteration, now
from .plan import Case, PairedPlan, PlannedRun, load_plan
from .record import RunRecord, load_grading, load_run, write_grading, write_json
from .regrade_check import check_cases, keep_first_version, load_versions, open_iteration, version_record
from .regrade_report import build_regraded_benchmark, refresh_trust
from .resume import judge_identity, same_judge

__all__ = ["RegradeOutcome", "RegradeSettings", "run_regrade"]


@dataclass(frozen=True)
class RegradeSettings:
    workspace: Path
    iteration: int | None = None  # None: the latest
    evals_path: Path | None = None  # None: the evals file the iteration ran
    resume: bool = False
    concurrency: int = 4
    agreement_only: bool = False  # grade nothing: refresh how far to trust the judge from feedback.json's marks


@dataclass
class RegradeOutcome:
    iteration: Path
    number: int
    version: int
    interrupted: bool = False
    benchmark: Benchmark | None = None
    graded: int = 0
    reused: int = 0
    asked: int = 0
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)


@dataclass
class _Job:
    planned: PlannedRun
    record: RunRecord
    reuse: dict[str, tuple[Expectation, int, dict[str, Any] | None]]  # text -> (verdict, version, judge info)
    ask: list[str]


def _grading_file(folder: Path, version: GradingVersion, versions: GradingVersions) -> Path:
    path = folder / versioned_name("grading.json", version.version)
    if not path.exists() and version.version == versions.current:
        return folder / "grading.json"  # version 1 before the first regrade kept it as .v1
    return path


def _reusable(folder: Path, case: Case, versions: GradingVersions, target: int,
              judge: dict[str, Any] | None) -> dict[str, tuple[Expectation, int, dict[str, Any] | None]]:
    """The judge verdicts of earlier versions (the newest first, and of the target version itself on resume)
    whose judge and expected output equal this version's: by assertion text."""
    found: dict[str, tuple[Expectation, int, dict[str, Any] | None]] = {}
    for version in sorted(versions.versions, key=lambda v: -v.version):
        if version.version > target or judge is None or not same_judge(version.judge, judge):
            continue
        if version.expected_outputs.get(case.key, case.case.expected_output) != case.case.expected_output:
            continue
        grading = load_grading(folder, _grading_file(folder, version, versions).name)
        if grading is None:
            continue
        info = (grading.model_extra or {}).get("judge")
        for e in grading.expectations:
            if (e.model_extra or {}).get("graded_by") == "judge" and e.passed is not None:
                found.setdefault(e.text, (e, int((e.model_extra or {}).get("reused_from") or version.version), info))
    return found


def _done(folder: Path, version: int) -> bool:
    grading = load_grading(folder, versioned_name("grading.json", version))
    return grading is not None and all(e.passed is not None for e in grading.expectations)


async def _grade(job: _Job, judge: Judge | None, version: int) -> tuple[Grading, dict[str, Any] | None]:
    case, record = job.planned.case, job.record
    subset = dataclasses.replace(case, case=case.case.model_copy(update={"assertions": job.ask}))
    grading, judgement = await grade_run(subset, record, judge if job.ask else None)
    if grading.error is not None:
        return grading, None
    asked = [e for e in grading.expectations if (e.model_extra or {}).get("graded_by") == "judge"]
    checks = [e for e in grading.expectations if (e.model_extra or {}).get("graded_by") != "judge"]
    answers = dict(zip(job.ask, asked, strict=True))
    judged: list[Expectation] = []
    reused_info: dict[str, Any] | None = None
    for text in case.assertions:
        if text in answers:
            judged.append(answers[text])
            continue
        verdict, source, info = job.reuse[text]
        judged.append(Expectation.model_validate({**verdict.model_dump(), "reused_from": source}))
        reused_info = reused_info or info
    expectations = judged + checks
    fields: dict[str, Any] = {"expectations": expectations, "summary": summarize(expectations),
                              "execution_metrics": execution_metrics(record), "grading_version": version}
    info = judge_info(judgement) if judgement is not None else None
    if info is not None or reused_info is not None:
        fields["judge"] = {**(reused_info or {}), **(info or {}), "reused": len(case.assertions) - len(job.ask)}
    return Grading.model_validate(fields), info


def _jobs(plan: PairedPlan, folder: Path, versions: GradingVersions, target: int, judge: dict[str, Any] | None,
          resume: bool) -> tuple[list[_Job], dict[str, RunRecord], list[Path]]:
    jobs: list[_Job] = []
    records: dict[str, RunRecord] = {}
    run_folders: list[Path] = []
    for planned in plan.order():
        where = run_dir(folder, planned.case.key, planned.arm, planned.number)
        record = load_run(where, run_id=planned.run_id, case_key=planned.case.key, arm=planned.arm,
                          number=planned.number)
        if record is None:
            continue
        records[planned.run_id] = record
        run_folders.append(where)
        if resume and (not record.ok or _done(where, target)):
            continue
        reuse = _reusable(where, planned.case, versions, target, judge) if record.ok else {}
        ask = [t for t in planned.case.assertions if t not in reuse] if record.ok else []
        jobs.append(_Job(planned, record, reuse, ask))
    return jobs, records, run_folders


def _target(versions: GradingVersions, resume: bool, record: GradingVersion, folder: Path) -> GradingVersion:
    latest = versions.latest
    assert latest is not None
    unfinished = latest.status != "finished"
    if resume:
        if not unfinished:
            raise InputError(f"no unfinished regrade to resume (version {latest.version} is finished)",
                             file=str(folder / GRADING_VERSIONS_FILE), field="--resume",
                             hint="leave out --resume to grade a new version")
        if latest.grading != record.grading or not same_judge(latest.judge, record.judge):
            raise InputError(f"cannot resume version {latest.version}: its assertions or judge were others",
                             file=str(folder / GRADING_VERSIONS_FILE), field="--resume",
                             hint="resume with the evals file and judge it was started with")
        return latest
    if unfinished:
        raise InputError(f"version {latest.version} of this iteration's grades was not finished",
                         file=str(folder / GRADING_VERSIONS_FILE), field="--resume",
                         hint="pass --resume to finish it first")
    return record.model_copy(update={"version": latest.version + 1})


async def run_regrade(settings: RegradeSettings, *, judge: Judge | None, store_path: Path | None = None,
                      stop: asyncio.Event | None = None) -> RegradeOutcome:
    """Grade (or, with ``settings.resume``, finish grading) a new version of an iteration; see the module doc."""
    number, folder, config = open_iteration(settings.workspace, settings.iteration)
    with hold_iteration(folder):  # one process grades or runs an iteration at a time
        return await _regrade(settings, number, folder, config, judge=judge, store_path=store_path, stop=stop)


async def _regrade(settings: RegradeSettings, number: int, folder: Path, config: dict[str, Any], *,
                   judge: Judge | None, store_path: Path | None, stop: asyncio.Event | None) -> RegradeOutcome:
    from ..store import Store
    from ..store.paired import PairedStore

    evals = settings.evals_path or Path(str(config.get("evals_path")))
    plan = load_plan(Path(str(config["skill_path"])), evals_path=evals, runs=int(config.get("runs") or 1),
                     seed=int(config.get("seed") or 0),
                     baseline_path=Path(config["baseline_skill_path"]) if config.get("baseline_skill_path") else None)
    check_cases(plan, folder, config)
    versions = load_versions(folder, config)
    current = versions.get(versions.current) or versions.versions[0]
    if settings.agreement_only:
        bench, files = refresh_trust(plan, folder, versions)
        return RegradeOutcome(folder, number, versions.current, benchmark=bench, files=files)
    identity = judge_identity(judge) if judge is not None else current.judge
    record = version_record(plan, 0, identity, made_by="regrade", created_at=now(), status="running",
                            evals_path=str(plan.evals_path.resolve()), based_on=current.version)
    target = _target(versions, settings.resume, record, folder)
    jobs, records, run_folders = _jobs(plan, folder, versions, target.version, identity, settings.resume)
    if judge is None:
        for job in jobs:
            if job.ask:
                raise InputError(f"case {job.planned.case.key!r}: the assertion {job.ask[0]!r} has no verdict to "
                                 "reuse and needs a judge", field="--judge",
                                 hint="give --judge-cmd or --judge (and --judge-model)")
    added = [f"{key}: {t}" for key, texts in record.assertions.items() for t in texts
             if t not in current.assertions.get(key, [])]
    removed = [f"{key}: {t}" for key, texts in current.assertions.items() for t in texts
               if t not in record.assertions.get(key, [])]
    outcome = RegradeOutcome(folder, number, target.version, added=added, removed=removed)
    stop = stop or asyncio.Event()
    store = Store.open(store_path) if store_path is not None else None
    try:
        rows = PairedStore(store) if store is not None else None
        keep_first_version(folder, versions, run_folders)
        others = [v for v in versions.versions if v.version != target.version]
        versions = GradingVersions(current=versions.current, versions=[*others, target])
        write_json(folder / GRADING_VERSIONS_FILE, versions)
        row_id = rows.begin_iteration(workspace=str(settings.workspace.resolve()), iteration=number,
                                      skill_name=plan.skill.name, config={**config, "grading_version":
                                                                          target.version},
                                      tool_version=__version__) if rows is not None else ""
        finished = await _grade_all(jobs, judge, target, folder, rows, row_id, settings.concurrency, stop,
                                    outcome)
        target.reused += outcome.reused
        target.asked += outcome.asked
        if not finished:
            target.status = "interrupted"
            write_json(folder / GRADING_VERSIONS_FILE, versions)
            if rows is not None:
                rows.finish_iteration(row_id, status="interrupted", summary={"grading_version": target.version})
            outcome.interrupted = True
            return outcome
        target.status, target.finished_at = "finished", now()
        versions.current = target.version
        for where in run_folders:
            source = where / versioned_name("grading.json", target.version)
            if source.is_file():
                shutil.copyfile(source, where / "grading.json")
            else:
                (where / "grading.json").unlink(missing_ok=True)  # an error run has no grade
        for rec, where in zip(records.values(), run_folders, strict=True):
            rec.grading = load_grading(where)
        bench, files = build_regraded_benchmark(plan, folder, records, versions, target, config)
        write_json(folder / GRADING_VERSIONS_FILE, versions)
        if rows is not None:
            rows.finish_iteration(row_id, status="finished",
                                  summary=bench.model_dump(mode="json", exclude={"runs"}))
        outcome.benchmark, outcome.files = bench, files
    finally:
        if store is not None:
            store.close()
    return outcome


async def _grade_all(jobs: list[_Job], judge: Judge | None, target: GradingVersion, folder: Path, rows: Any,
                     row_id: str, concurrency: int, stop: asyncio.Event, outcome: RegradeOutcome) -> bool:
    """Grade every job, each written as it finishes; False when ``stop`` was set first (what finished is kept)."""
    gate = asyncio.Semaphore(concurrency)

    async def one(job: _Job) -> None:
        async with gate:
            grading, info = await _grade(job, judge, target.version)
        where = run_dir(folder, job.planned.case.key, job.planned.arm, job.planned.number)
        verdicts: list[tuple[str, Any, dict[str, Any] | None]] = []
        judged = [e.model_dump() for e in grading.expectations if (e.model_extra or {}).get("graded_by") == "judge"]
        if judged:
            verdicts.append(("grade", judged, info or {"backend": (target.judge or {}).get("backend"),
                                                       "cached": True}))
        checked = [e.model_dump() for e in grading.expectations if (e.model_extra or {}).get("graded_by") != "judge"]
        if checked:
            verdicts.append(("checks", checked, {"backend": "engine"}))

        def save() -> None:
            write_grading(where, grading, versioned_name("grading.json", target.version))
            if rows is not None:
                rows.add_run(row_id, {"run_id": job.record.run_id, "eval_id": job.planned.case.key,
                                      "arm": job.planned.arm, "run_number": job.planned.number,
                                      "status": job.record.status, "error": job.record.error,
                                      "response": job.record.response, "duration_s": job.record.duration_s,
                                      "usage": job.record.extra.get("usage"), "tool_calls": job.record.tool_calls,
                                      "skills_invoked": job.record.extra.get("skills_invoked"),
                                      "started_at": job.record.extra.get("executor_start")})
                if grading.error is None:
                    rows.add_grade(row_id, job.record.run_id, grading.summary.model_dump(), verdicts)

        await asyncio.to_thread(save)
        outcome.graded += 1
        outcome.asked += len(job.ask)
        outcome.reused += len(job.planned.case.assertions) - len(job.ask) if job.record.ok else 0

    tasks = [asyncio.ensure_future(one(job)) for job in jobs]
    if not tasks:
        return not stop.is_set()
    waiter = asyncio.ensure_future(stop.wait())
    try:
        pending: set[asyncio.Future[Any]] = set(tasks)
        while pending:
            done, pending = await asyncio.wait(pending | {waiter}, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                if task is not waiter:
                    task.result()
            pending.discard(waiter)
            if waiter in done:
                return False
        return True
    finally:
        waiter.cancel()
        for task in tasks:
            task.cancel()
        with contextlib.suppress(BaseException):
            await asyncio.gather(*tasks, return_exceptions=True)
