"""The ``gaia`` scorer: GAIA's published answer normalisation (the leaderboard's ``question_scorer``).

- a ground truth that is a number: the answer, with ``$``, ``%`` and ``,`` removed, must be that number;
- a ground truth holding ``,`` or ``;``: a list; the answer must have as many elements (split on ``,`` and
  ``;``), each compared as a number when the truth's element is one, else as text without spaces, lowercased;
- otherwise text: both compared without white space, lowercased and without punctuation.

The answer is the output's ``result``/``output``/``answer`` key, else the whole output, as text.
"""

from __future__ import annotations

import re
import string
from typing import Any

from ..errors import ScorerError
from ..formats.benchmark import Task
from ..results import Score
from .scorers import ScoringContext, answer_of, as_text, scorer

__all__ = ["gaia", "normalize_number_str", "normalize_str", "question_scorer", "split_string"]

_PUNCTUATION = str.maketrans("", "", string.punctuation)


def _is_float(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def normalize_number_str(number: str) -> float:
    """``"$1,234.5"`` -> 1234.5; text that is not a number -> infinity (which equals no truth)."""
    for char in ("$", "%", ","):
        number = number.replace(char, "")
    try:
        return float(number)
    except ValueError:
        return float("inf")


def split_string(text: str) -> list[str]:
    return re.split(r"[,;]", text)


def normalize_str(text: str, remove_punct: bool = True) -> str:
    squeezed = re.sub(r"\s", "", text).lower()
    return squeezed.translate(_PUNCTUATION) if remove_punct else squeezed


def question_scorer(model_answer: str, ground_truth: str) -> tuple[bool, str]:
    """``(correct, how it was compared)``."""
    if _is_float(ground_truth):
        return normalize_number_str(model_answer) == float(ground_truth), "compared as numbers"
    if any(char in ground_truth for char in ",;"):
        truth, answer = split_string(ground_truth), split_string(model_answer)
        if len(truth) != len(answer):
            return False, f"expected a list of {len(truth)} elements, got {len(answer)}"
        for got, want in zip(answer, truth, strict=True):
            same = (normalize_number_str(got) == float(want) if _is_float(want)
                    else normalize_str(got, remove_punct=False) == normalize_str(want, remove_punct=False))
            if not same:
                return False, f"list element {got.strip()!r} does not match {want.strip()!r}"
        return True, "compared as lists"
    return normalize_str(model_answer) == normalize_str(ground_truth), "compared as normalised text"


def _needs_truth(task: Task, options: dict[str, Any], ctx: ScoringContext) -> None:
    if task.expectedOutput.value is None:
        raise ScorerError("gaia needs expectedOutput.value (the final answer)")


@scorer("gaia", check=_needs_truth)
def gaia(output: Any, task: Task, options: dict[str, Any], ctx: ScoringContext) -> Score:
    truth = as_text(task.expectedOutput.value)
    answer = as_text(answer_of(output))
    correct, how = question_scorer(answer, truth)
    shown = answer if len(answer) <= 80 else answer[:79] + "…"
    if correct:
        return Score(1.0, True, f"matches {truth!r} ({how})")
    return Score(0.0, False, f"expected {truth!r}, got {shown!r} ({how})")
