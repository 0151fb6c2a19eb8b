"""What the page reads of one workspace: its files, each JSON file parsed once per change, the iteration's
``benchmark.json`` and case folders, with ``benchmark.json``'s case ids mapped to those folders.

Every tab (the outputs, the Benchmark and the Routing tab) reads through an :class:`IterationData`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from ..formats.workspace import EVAL_METADATA_FILE, Benchmark, BenchmarkRun, EvalMetadata
from .files import Reader
from .workspace import CaseRef, Workspace, scan_iteration

__all__ = ["IterationData"]

_ID_PREFIX = re.compile(r"eval-(\d+)-.")


class _Cached:
    """A JSON file read into a model once per change of its size or modification time."""

    def __init__(self, reader: Reader) -> None:
        self._reader = reader
        self._seen: dict[Path, tuple[tuple[int, int], Any, str | None]] = {}

    def get(self, path: Path, model: type[BaseModel]) -> tuple[Any, str | None]:
        try:
            st = path.stat()
            stamp = (st.st_mtime_ns, st.st_size)
        except OSError:
            return None, None
        seen = self._seen.get(path)
        if seen is None or seen[0] != stamp:
            value, problem = self._reader.model(path, model)
            seen = (stamp, value, problem)
            self._seen[path] = seen
        return seen[1], seen[2]


class IterationData:
    """The files of one workspace (one iteration, and the latest routing results) as the tabs read them."""

    def __init__(self, workspace: Workspace) -> None:
        self.ws = workspace
        self.root = workspace.root
        self.read = Reader(self.root)
        self._cache = _Cached(self.read)

    # ---- reading ---------------------------------------------------------------------------------

    def cached(self, path: Path, model: type[BaseModel]) -> tuple[Any, str | None]:
        """A JSON file of the workspace as ``model``, read again only when it changed."""
        return self._cache.get(path, model)

    def benchmark(self) -> tuple[Benchmark | None, str | None]:
        path = self.ws.iteration_path
        if path is None:
            return None, None
        bench, problem = self._cache.get(path / "benchmark.json", Benchmark)
        return bench, problem

    def scan(self, *, runs: bool = True) -> list[CaseRef]:
        path = self.ws.iteration_path
        return scan_iteration(path, runs=runs) if path is not None else []

    def case_aliases(self) -> dict[str, str]:
        """``benchmark.json`` ``eval_id`` -> the case's key, where they differ: a folder ``eval-0-csv-totals``
        (key ``0-csv-totals``) or ``csv-totals`` whose ``eval_metadata.json`` says ``eval_id`` 0 is case 0's."""
        aliases: dict[str, str] = {}
        for case in self.scan(runs=False):
            numbered = _ID_PREFIX.match(case.path.name)
            if numbered and numbered.group(1) != case.key:
                aliases.setdefault(numbered.group(1), case.key)
            meta, _ = self.cached(case.path / EVAL_METADATA_FILE, EvalMetadata)
            if meta is not None and str(meta.eval_id) != case.key:
                aliases[str(meta.eval_id)] = case.key
        return aliases

    def bench_runs(self, runs: list[BenchmarkRun]) -> list[BenchmarkRun]:
        """``runs`` with each ``eval_id`` as the key of the case folder it belongs to."""
        aliases = self.case_aliases()
        if not aliases:
            return runs
        return [r.model_copy(update={"eval_id": aliases[str(r.eval_id)]}) if str(r.eval_id) in aliases else r
                for r in runs]

    def run_ids(self) -> list[str]:
        return [run.run_id for case in self.scan() for run in case.runs]
