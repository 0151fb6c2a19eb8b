"""What the page asks of whatever it shows (a paired-run workspace, tool-skill reports): a list of cases,
one HTML fragment per case and per tab, pieces loaded when unfolded, and where feedback goes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol
from urllib.parse import quote

from .feedback import FeedbackFile
from .files import FileEntry, OpenFile

__all__ = ["CaseEntry", "Mark", "Source", "Tab", "file_view"]


@dataclass(frozen=True, slots=True)
class Mark:
    """A small badge beside a case in the list (``css``: good, mid, bad, na, err)."""

    text: str
    css: str
    title: str = ""
    column: str = ""  # what it is a mark of (an arm, a skill): the case list's legend names each


@dataclass(slots=True)
class CaseEntry:
    key: str
    label: str
    marks: list[Mark] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Tab:
    name: str
    title: str


class Source(Protocol):
    title: str
    facts: list[tuple[str, str]]
    feedback: FeedbackFile | None

    def cases(self) -> list[CaseEntry]: ...

    def tabs(self) -> list[Tab]: ...

    def case_html(self, key: str, *, static: bool) -> str | None: ...

    def tab_html(self, name: str, *, static: bool) -> str | None: ...

    def file(self, ref: str) -> OpenFile | None:
        """The file ``ref`` below what is shown, opened once (None: there is none to serve)."""
        ...

    def detail_html(self, ref: str, *, static: bool) -> str | None:
        """A piece loaded when the reader unfolds it (a routing run's transcript); None when there is none."""
        ...

    def detail_refs(self) -> list[str]:
        """Every piece :meth:`detail_html` can give (a static page holds them all)."""
        ...


def file_url(entry: FileEntry) -> str:
    """The served address of a file; a name that is not UTF-8 keeps its bytes (the server reads them back)."""
    return "files/" + quote(entry.ref, errors="surrogateescape")


def file_view(entry: FileEntry, *, static: bool) -> dict[str, object]:
    """What a template needs to show one file: highlighted text, an image, or a download link."""
    from .render import highlight

    view: dict[str, object] = {"name": entry.rel, "size": entry.size, "kind": "binary", "url": None,
                               "html": None, "problem": None}
    if entry.image_type:
        view["kind"] = "image"
        view["url"] = entry.data_uri() if static else file_url(entry)
        return view
    text, problem = entry.text()
    view["problem"] = problem
    if text is not None:
        view["kind"] = "text"
        view["html"] = highlight(text, filename=entry.path.name)
    elif not static:
        view["url"] = file_url(entry)
    return view
