"""Listing benchmarks (built-in and user folders) and writing converted ones."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._atomic import write_atomic
from ..errors import InputError
from ..formats._load import validate
from ..formats.benchmark import (
    Benchmark,
    benchmark_files,
    builtin_benchmark_ids,
    find_benchmark_file,
    load_benchmark_file,
    resolve_benchmark,
)

__all__ = ["PLACEHOLDERS", "BenchmarkInfo", "list_benchmarks", "write_benchmark"]

# ids the original tool listed as placeholders, and how to make them real
PLACEHOLDERS = {"gaia-v1": "eval-skills benchmarks import gaia metadata.jsonl",
                "toolbench-lite": "eval-skills benchmarks import toolbench G1_query.json"}


@dataclass
class BenchmarkInfo:
    id: str
    source: str  # "built-in", a file path, or "not imported"
    name: str = ""
    domain: str = ""
    tasks: int | None = None
    scorers: tuple[str, ...] = ()
    problem: str | None = None  # why the file could not be read, or how to import a placeholder

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "source": self.source, "name": self.name, "domain": self.domain,
                "tasks": self.tasks, "scorers": list(self.scorers), "problem": self.problem}


def _info(benchmark: Benchmark, source: str) -> BenchmarkInfo:
    kinds = dict.fromkeys((t.evaluator.type if t.evaluator else t.expectedOutput.type) or "default"
                          for t in benchmark.tasks)
    return BenchmarkInfo(benchmark.id, source, benchmark.name, benchmark.domain, len(benchmark.tasks),
                         tuple(sorted(kinds)))


def list_benchmarks(folders: Sequence[Path] = ()) -> list[BenchmarkInfo]:
    """Built-ins first, then each folder's ``<name>.json``, ``<name>/benchmark.json`` and
    ``definitions/<name>.json`` files (a file that does not load is listed with its problem, and one that
    ``--benchmark ID`` would not find, because another file there has its name or its id, says to give its
    path), then the placeholders not yet imported."""
    out = [_info(resolve_benchmark(ref), "built-in") for ref in builtin_benchmark_ids()]
    for folder in folders:
        for path in benchmark_files(Path(folder)):
            name = path.stem if path.name != "benchmark.json" else path.parent.name
            try:
                info = _info(load_benchmark_file(path), str(path))
            except InputError as exc:
                # the source column already names the file: the problem says only what is wrong there
                same_file = exc.file == str(path)
                problem = InputError(exc.problem, field=exc.field, hint=exc.hint).line() if same_file else exc.line()
                out.append(BenchmarkInfo(name, str(path), problem=problem))
                continue
            try:
                found = find_benchmark_file(Path(folder), info.id)
            except InputError:
                found = None
            if found is None or found.resolve() != path.resolve():
                info.problem = f"--benchmark {info.id} finds another file: run it with --benchmark {path}"
            out.append(info)
    known = {info.id for info in out if info.problem is None}
    for ref, how in PLACEHOLDERS.items():
        if ref not in known:
            out.append(BenchmarkInfo(ref, "not imported", problem=f"import it: {how}"))
    return out


def write_benchmark(data: dict[str, Any], target: Path, *, force: bool = False) -> Path:
    """Validate a benchmark dict and write it to ``target`` (never replacing a file unless ``force``)."""
    validate(Benchmark, data, str(target))
    if target.exists() and not force:
        raise InputError("already exists", file=str(target), hint="pass --force to replace it, or --output")
    target.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(target, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    return target
