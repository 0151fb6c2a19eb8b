"""What ``eval-skills regrade`` checks and keeps before it grades anything: the iteration, the cases, the versions.

- :func:`open_iteration`: the iteration's folder and ``paired_config.json`` (the latest one without a number);
- :func:`check_cases`: only runs whose case is unchanged can be graded again: the evals file must hold the cases
  the iteration ran, with the prompts they ran with and the same fixture files (the copies in ``eval-<id>/inputs/``);
  the first difference is an InputError naming the case. Assertions, checks and the expected output may change:
  that is what a regrade is for;
- :func:`load_versions`: ``grading_versions.json``; an iteration never regraded has one version, the one
  ``eval-skills paired`` made, described from its config and case files;
- :func:`keep_first_version`: before the first regrade writes anything, version 1 is kept as ``.v1`` files.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..formats._load import read_json
from ..formats.grading import GRADING_VERSIONS_FILE, GradingVersion, GradingVersions, versioned_name
from ..formats.workspace import EVAL_METADATA_FILE, INPUTS_DIR, EvalMetadata, iteration_dir, next_number
from .iteration import CONFIG_FILE
from .plan import PairedPlan
from .record import write_json
from .resume import _digest

__all__ = ["BENCHMARK_FILES", "check_cases", "grading_digest", "keep_first_version", "load_versions",
           "open_iteration", "version_record"]

BENCHMARK_FILES = ("benchmark.json", "benchmark.md")


def open_iteration(workspace: Path, iteration: int | None) -> tuple[int, Path, dict[str, Any]]:
    """The iteration's number, folder and config; InputError when there is none to regrade."""
    if not workspace.is_dir():
        raise InputError("is not a folder", file=str(workspace), field="WORKSPACE",
                         hint="give the workspace eval-skills paired wrote (<skill>-workspace)")
    number = iteration if iteration is not None else next_number(workspace, "iteration") - 1
    folder = iteration_dir(workspace, number)
    if number < 1 or not (folder / CONFIG_FILE).is_file():
        raise InputError("no iteration written by eval-skills paired" if number < 1 else
                         f"iteration-{number} was not written by eval-skills paired",
                         file=str(folder if number >= 1 else workspace), field="--iteration",
                         hint="give a workspace and --iteration that eval-skills paired wrote")
    config = read_json(folder / CONFIG_FILE)
    if not isinstance(config, dict) or not isinstance(config.get("cases"), list):
        raise InputError("is not an iteration config", file=str(folder / CONFIG_FILE))
    return number, folder, config


def _saved_inputs(case_dir: Path) -> dict[str, bytes]:
    inputs = case_dir / INPUTS_DIR
    if not inputs.is_dir():
        return {}
    return {p.relative_to(inputs).as_posix(): p.read_bytes()
            for p in sorted(inputs.rglob("*")) if p.is_file() and not p.is_symlink()}


def _metadata(case_dir: Path) -> EvalMetadata | None:
    try:
        return EvalMetadata.model_validate_json((case_dir / EVAL_METADATA_FILE).read_bytes())
    except (OSError, ValueError):
        return None


def check_cases(plan: PairedPlan, folder: Path, config: dict[str, Any]) -> None:
    """InputError naming the first case that cannot be graded again (see the module doc)."""
    ran = [str(key) for key in config["cases"]]
    now = [case.key for case in plan.cases]
    where = str(plan.evals_path)
    for key in now:
        if key not in ran:
            raise InputError(f"case {key!r} was not run in {folder.name}: there is nothing to grade",
                             file=where, field="$.evals", hint="run eval-skills paired for new cases; regrade "
                                                               "grades runs that exist")
    for key in ran:
        if key not in now:
            raise InputError(f"case {key!r} of {folder.name} is not in the evals file", file=where, field="$.evals",
                             hint="regrade with the evals file that holds every case the iteration ran")
    if config.get("arms") and list(plan.arms) != list(config["arms"]):
        raise InputError(f"the iteration's arms were {', '.join(config['arms'])}, now {', '.join(plan.arms)}",
                         file=str(folder / CONFIG_FILE), field="arms")
    for i, case in enumerate(plan.cases):
        case_dir = folder / f"eval-{case.key}"
        meta = _metadata(case_dir)
        if meta is None:
            raise InputError(f"case {case.key!r}: its {EVAL_METADATA_FILE} is missing or broken",
                             file=str(case_dir / EVAL_METADATA_FILE))
        if meta.prompt != case.case.prompt:
            raise InputError(f"case {case.key!r}: the prompt changed since its runs were made; regrading would "
                             "grade answers to another question", file=where, field=f"$.evals[{i}].prompt",
                             hint="restore the prompt, or run eval-skills paired again for the new one")
        saved = _saved_inputs(case_dir)
        if saved != case.files:
            changed = sorted(set(saved) ^ set(case.files)) or sorted(n for n in saved if saved[n] != case.files[n])
            raise InputError(f"case {case.key!r}: the fixture file {changed[0]!r} changed since its runs were made",
                             file=where, field=f"$.evals[{i}].files",
                             hint="restore the fixture files, or run eval-skills paired again")


def grading_digest(assertions: dict[str, list[str]]) -> str:
    """The digest of a grading rule's assertions, as ``paired_config.json`` ``conditions.grading`` makes it
    (``[[case key, texts], ...]`` in case order); the judge is recorded beside it."""
    value = [[key, texts] for key, texts in assertions.items()]
    return _digest(json.dumps(value, sort_keys=True, ensure_ascii=False).encode())


def version_record(plan: PairedPlan, version: int, judge: dict[str, Any] | None, **fields: Any) -> GradingVersion:
    assertions = {case.key: case.texts for case in plan.cases}
    return GradingVersion.model_validate({
        "version": version, "assertions": assertions, "judge": judge, "grading": grading_digest(assertions),
        "expected_outputs": {case.key: case.case.expected_output for case in plan.cases}, **fields})


def load_versions(folder: Path, config: dict[str, Any]) -> GradingVersions:
    path = folder / GRADING_VERSIONS_FILE
    if path.is_file():
        try:
            return GradingVersions.model_validate(read_json(path))
        except ValueError as exc:
            raise InputError(f"is broken ({str(exc).splitlines()[0]})", file=str(path),
                             hint="restore it from the .vN files, or remove it to start from version 1") from None
    assertions: dict[str, list[str]] = {}
    expected: dict[str, str] = {}
    for key in config["cases"]:
        meta = _metadata(folder / f"eval-{key}")
        assertions[str(key)] = list(meta.assertions) if meta else []
        expected[str(key)] = meta.expected_output if meta else ""
    judge = config.get("judge")
    first = GradingVersion.model_validate({
        "version": 1, "made_by": "paired", "created_at": config.get("started_at"), "status": "finished",
        "evals_path": config.get("evals_path"), "judge": judge, "assertions": assertions,
        "expected_outputs": expected,
        "grading": (config.get("conditions") or {}).get("grading") or grading_digest(assertions)})
    return GradingVersions(current=1, versions=[first])


def keep_first_version(folder: Path, versions: GradingVersions, run_folders: list[Path]) -> None:
    """Copy version 1 (``grading.json`` of each run, the benchmark) to ``.v1`` names, once, before the first
    regrade writes anything; then write ``grading_versions.json``."""
    if (folder / GRADING_VERSIONS_FILE).is_file():
        return
    for run in run_folders:
        if (run / "grading.json").is_file() and not (run / versioned_name("grading.json", 1)).exists():
            shutil.copyfile(run / "grading.json", run / versioned_name("grading.json", 1))
    for name in BENCHMARK_FILES:
        if (folder / name).is_file() and not (folder / versioned_name(name, 1)).exists():
            shutil.copyfile(folder / name, folder / versioned_name(name, 1))
    write_json(folder / GRADING_VERSIONS_FILE, versions)
