"""The Optimize tab of a ``routing-<n>`` folder written by ``routing --optimize``: the candidates side by side
(train and test precision, recall and F1, the held-out F1's interval, the winner and how sure), the trigger rate
of every query under every candidate (train and test marked), and each description against the original as a
word diff. Every text in ``optimize.json`` (descriptions, queries, the improver's words) is untrusted: the
template escapes it all, and the diff is a list of plain text segments, never markup.
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel

from ..formats.optimize_results import OPTIMIZE_FILE, OptimizeResults

__all__ = ["has_optimize", "optimize_context", "word_diff"]

_TOKENS = re.compile(r"\s+|[^\s]+")


class WorkspaceData(Protocol):
    """What this tab reads of the page's source: the workspace (``ws.routing_path``), its reader (``read.shown``)
    and its cached JSON files."""

    ws: Any
    read: Any

    def cached(self, path: Path, model: type[BaseModel]) -> tuple[Any, str | None]: ...


def has_optimize(src: WorkspaceData) -> bool:
    folder = src.ws.routing_path
    return folder is not None and (folder / OPTIMIZE_FILE).is_file()


def word_diff(before: str, after: str) -> list[tuple[str, str]]:
    """``after`` against ``before`` word by word: ``[(kind, text)]`` with kind ``same``, ``added`` or ``removed``."""
    a, b = _TOKENS.findall(before), _TOKENS.findall(after)
    out: list[tuple[str, str]] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            out.append(("same", "".join(a[i1:i2])))
            continue
        if i2 > i1:
            out.append(("removed", "".join(a[i1:i2])))
        if j2 > j1:
            out.append(("added", "".join(b[j1:j2])))
    return out


def optimize_context(src: WorkspaceData) -> dict[str, Any]:
    folder = src.ws.routing_path
    assert folder is not None
    results, problem = src.cached(folder / OPTIMIZE_FILE, OptimizeResults)
    problems = [problem] if problem else []
    if results is None:
        return {"results": None, "problems": problems, "folder": src.read.shown(folder)}
    original = next((c for c in results.candidates if c.origin == "original"), None)
    base = original.description if original else ""
    winner = results.winner.number if results.winner else None
    candidates = [{"c": c, "winner": c.number == winner,
                   "diff": word_diff(base, c.description) if c.origin != "original" else [],
                   "refused": [a for a in c.improver if a.refused]} for c in results.candidates]
    rates = {c.number: {q.index: q for q in c.queries} for c in results.candidates}
    rows = [{"q": q, "cells": [rates[c.number].get(q.index) for c in results.candidates]} for q in results.queries]
    meta = results.metadata
    return {"results": results, "problems": problems, "folder": src.read.shown(folder), "candidates": candidates,
            "rows": rows, "winner": results.winner, "split": results.split, "state": meta.get("state"),
            "stop_reason": meta.get("stop_reason"), "stop_detail": meta.get("stop_detail"),
            "tokens": meta.get("tokens_used")}
