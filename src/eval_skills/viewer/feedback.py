"""An iteration's ``feedback.json``: read at start, and rewritten whole on each change.

Writes go to a temporary file in the same folder (created exclusively: see :mod:`eval_skills._atomic`), then
replace the file, so a reader never sees half a file and a crash never loses the earlier reviews. Each change
reads the file again and writes it under an exclusive lock on the iteration folder (``flock``), so two pages on
one iteration, in one process or two, never lose each other's reviews. Reviews of runs that no longer exist
are kept as they were; a change is accepted only for a run that exists.

A reviewer's marks on the judge's grades go in an added field of a review, ``grade_marks`` (skill-creator's
viewer reads ``run_id``, ``feedback`` and ``timestamp`` and leaves the rest alone): one per assertion, ``{"text",
"judge_passed", "right", "passed", "grading_version", "timestamp"}``, where ``passed`` is the person's grade (the
judge's when it was right, the other one when it was wrong).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from .._atomic import write_atomic
from ..errors import InputError
from ..formats._load import read_json, validate
from ..formats.untrusted import clean_text, clean_value
from ..formats.workspace import Feedback, Review, review_time

__all__ = ["FEEDBACK_FILE", "FEEDBACK_LIMIT", "FeedbackFile", "UnknownRunError", "load_feedback"]

FEEDBACK_FILE = "feedback.json"
FEEDBACK_LIMIT = 100_000  # characters of one review
MARK_TEXT_LIMIT = 10_000  # characters of the assertion a mark names
STATUSES = ("in_progress", "complete")


class UnknownRunError(KeyError):
    """A feedback write for a run that the iteration does not hold."""


def _now() -> str:
    return review_time()


def load_feedback(path: Path) -> Feedback:
    """The file's reviews (an empty Feedback when there is none). InputError when it is broken, so nobody's
    reviews are overwritten by mistake."""
    if not path.exists():
        return Feedback()
    if not path.is_file():
        raise InputError("is not a regular file", file=str(path), hint="remove it, or replace it with a feedback.json")
    # lone surrogates ("\\udc80" escapes) become U+FFFD: the file must be writable back as UTF-8
    return validate(Feedback, clean_value(read_json(path)), str(path))


def _stamp(path: Path) -> tuple[int, int, int] | None:
    """What tells a changed file: its inode, size and modification time (None when it does not exist)."""
    try:
        info = path.stat()
    except OSError:
        return None
    return info.st_ino, info.st_size, info.st_mtime_ns


class FeedbackFile:
    """The reviews of one iteration. ``run_ids`` returns the runs that exist now (it is asked again when a
    write names a run it did not know, so runs that finish while the page is open can be reviewed)."""

    def __init__(self, path: Path, run_ids: Callable[[], Iterable[str]]) -> None:
        self.path = path
        self._run_ids = run_ids
        self._known = set(run_ids())
        self._lock = threading.Lock()
        self._data = load_feedback(path)
        self._stamp = _stamp(path)

    def run_ids(self) -> list[str]:
        """The runs of the iteration now, in the page's order."""
        return list(self._run_ids())

    @property
    def status(self) -> str:
        return self._data.status

    def texts(self) -> dict[str, str]:
        """run id -> feedback text, for the runs that have some (as the file holds them now)."""
        # broken since: what was last read is shown; writes are refused until it is fixed
        with self._lock, contextlib.suppress(InputError):
            self._reload()
        return {review.run_id: review.feedback for review in self._data.reviews if review.feedback}

    def reviews(self) -> dict[str, dict[str, Any]]:
        """run id -> its review as the file holds it (a static page writes back the untouched ones unchanged)."""
        return {review.run_id: review.model_dump(mode="json") for review in self._data.reviews}

    def _reload(self) -> None:
        """Read the file again when something else changed it (another page, eval-skills paired), so a write
        keeps what that wrote. InputError when it is no longer valid."""
        stamp = _stamp(self.path)
        if stamp != self._stamp:
            self._data = load_feedback(self.path)
            self._stamp = stamp

    @contextlib.contextmanager
    def _exclusive(self) -> Iterator[None]:
        """This page's lock, and an exclusive ``flock`` on the iteration folder (other pages, other processes),
        with the file read again inside it: what is then written keeps every review written before."""
        with self._lock:
            fd = os.open(self.path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                stamp = _stamp(self.path)
                self._data = load_feedback(self.path)  # always: a stamp can look the same after a change
                self._stamp = stamp
                yield
            finally:
                os.close(fd)  # releases the flock

    def _check(self, run: str) -> None:
        if run not in self._known:
            self._known = set(self._run_ids())
            if run not in self._known:
                raise UnknownRunError(run)

    def set(self, run: str, text: str) -> Review:
        """Save ``text`` as the review of ``run`` (UnknownRunError when no such run exists); a lone surrogate
        in it is kept as U+FFFD."""
        text = clean_text(text)
        if len(text) > FEEDBACK_LIMIT:
            raise InputError(f"feedback longer than {FEEDBACK_LIMIT:,} characters", field="feedback")
        with self._exclusive():
            self._check(run)
            data = self._with_every_run()
            review = next(r for r in data.reviews if r.run_id == run)
            review.feedback, review.timestamp = text, _now()
            if data.status == "complete":
                data.status = "in_progress"  # a changed review reopens it
            self._write(data)
            return review

    def marks(self) -> dict[str, list[dict[str, Any]]]:
        """run id -> its marks on the judge's grades, as the file holds them now."""
        with self._lock, contextlib.suppress(InputError):
            self._reload()
        found = {}
        for review in self._data.reviews:
            marks = (review.model_extra or {}).get("grade_marks")
            if isinstance(marks, list) and marks:
                found[review.run_id] = [m for m in marks if isinstance(m, dict)]
        return found

    def set_mark(self, run: str, text: str, judge_passed: bool, right: bool | None,
                 grading_version: int | None = None) -> list[dict[str, Any]]:
        """Mark the judge's grade ``judge_passed`` of assertion ``text`` on ``run`` right or wrong (None: take the
        mark back); the run's marks as saved."""
        text = clean_text(text)
        if not text or len(text) > MARK_TEXT_LIMIT:
            raise InputError(f"the assertion of a mark is 1 to {MARK_TEXT_LIMIT:,} characters", field="text")
        with self._exclusive():
            self._check(run)
            data = self._with_every_run()
            review = next(r for r in data.reviews if r.run_id == run)
            extra = review.model_extra if review.model_extra is not None else {}
            marks = [m for m in extra.get("grade_marks") or [] if isinstance(m, dict) and m.get("text") != text]
            if right is not None:
                marks.append({"text": text, "judge_passed": judge_passed, "right": right,
                              "passed": judge_passed if right else not judge_passed,
                              "grading_version": grading_version, "timestamp": _now()})
            setattr(review, "grade_marks", marks)  # noqa: B010 - an extra field of the model
            if data.status == "complete":
                data.status = "in_progress"  # a changed mark reopens the review, as a changed text does
            self._write(data)
            return marks

    def set_status(self, status: str) -> None:
        if status not in STATUSES:
            raise InputError(f"status must be one of {', '.join(STATUSES)}", field="status")
        with self._exclusive():
            data = self._with_every_run()
            data.status = status  # type: ignore[assignment]
            self._write(data)

    def _with_every_run(self) -> Feedback:
        """A copy of the reviews with an empty one added for each run that has none (as paired writes it)."""
        data = self._data.model_copy(deep=True)
        known = {review.run_id for review in data.reviews}
        data.reviews += [Review(run_id=r, feedback="", timestamp=_now()) for r in sorted(self._known - known)]
        return data

    def _write(self, data: Feedback) -> None:
        text = json.dumps(data.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n"
        write_atomic(self.path, text)
        self._data, self._stamp = data, _stamp(self.path)
