"""The review page (``eval-skills view``): paired-run and routing workspaces, and tool-skill evaluations.

``open_workspace_source`` and ``tool_source_*`` build what the page shows; ``serve`` serves it on 127.0.0.1
and ``write_static`` writes it as one self-contained file.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from .page import render_page, write_static
from .paired_view import WorkspaceSource
from .source import Source
from .tool_view import ToolSource, from_report_files, from_store
from .workspace import open_workspace

__all__ = ["Source", "ToolSource", "WorkspaceSource", "from_report_files", "from_store", "open_workspace_source",
           "render_page", "serve", "write_static"]


def serve(source: Source, *, port: int = 0, ready: Callable[[str], None] | None = None) -> int | None:
    """Serve the page on 127.0.0.1 until SIGINT or SIGTERM, and return that signal's number (the web stack is
    imported only for this)."""
    from .server import serve as serve_page

    return serve_page(source, port=port, ready=ready)


def open_workspace_source(path: Path, iteration: int | None = None,
                          grading_version: int | None = None) -> WorkspaceSource:
    """The page of the workspace at ``path`` (its latest iteration unless ``iteration`` is given; its latest
    grading version unless ``grading_version`` is given)."""
    from .grading_view import VersionedWorkspaceSource, grading_versions

    workspace = open_workspace(path, iteration)
    if grading_version is not None or grading_versions(workspace.iteration_path) is not None:
        return VersionedWorkspaceSource(workspace, grading_version)
    return WorkspaceSource(workspace)
