"""The page of an iteration graded more than once (``eval-skills regrade``): the latest grading version, or the
one asked for (``eval-skills view --grading-version N``), read from its ``.vN`` files."""

from __future__ import annotations

from pathlib import Path

from ..errors import InputError
from ..formats.grading import GRADING_VERSIONS_FILE, GradingVersions, versioned_name
from ..formats.workspace import Benchmark
from .paired_view import WorkspaceSource
from .workspace import Workspace

__all__ = ["VersionedWorkspaceSource", "grading_versions"]


def grading_versions(iteration: Path | None) -> GradingVersions | None:
    """The iteration's ``grading_versions.json`` (None: never graded again, or unreadable)."""
    if iteration is None or not (iteration / GRADING_VERSIONS_FILE).is_file():
        return None
    try:
        return GradingVersions.model_validate_json((iteration / GRADING_VERSIONS_FILE).read_bytes())
    except (OSError, ValueError):
        return None


class VersionedWorkspaceSource(WorkspaceSource):
    """A workspace page showing grading version ``grading_version`` of its iteration (None: the latest)."""

    def __init__(self, workspace: Workspace, grading_version: int | None = None) -> None:
        iteration = workspace.iteration_path
        versions = grading_versions(iteration)
        if grading_version and (versions is None or versions.get(grading_version) is None):
            raise InputError(f"has no grading version {grading_version}", file=str(iteration),
                             field="--grading-version",
                             hint="grading_versions.json lists the versions (eval-skills regrade makes them)")
        self.grading_version = grading_version
        if grading_version:
            self.grading_file = versioned_name("grading.json", grading_version)
        super().__init__(workspace)
        if versions is not None:
            shown = grading_version or versions.current
            self.facts.append(("grading version", f"{shown} of {len(versions.versions)} (eval-skills view "
                                                  "--grading-version N shows another)"))

    def benchmark(self) -> tuple[Benchmark | None, str | None]:
        path = self.ws.iteration_path
        if not self.grading_version or path is None:
            return super().benchmark()
        found: tuple[Benchmark | None, str | None] = self.cached(
            path / versioned_name("benchmark.json", self.grading_version), Benchmark)
        return found
