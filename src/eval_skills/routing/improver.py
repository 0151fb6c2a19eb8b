"""The improver of ``routing --optimize``: a model, behind any judge backend, that proposes a new description.

It is sent an ``improve`` request (:class:`~eval_skills.judges.ImproveRequest`): the skill's body, the current
description, the *train* queries that description got wrong (missed triggers, false triggers, with their
trigger rates) and the descriptions tried before with their *train* figures only. Nothing of the test set is
ever sent. Its reply is checked (:func:`check_description`):

- whitespace runs become one space, and one pair of quotes around the whole text is dropped;
- at most 1024 characters, not empty, no angle brackets (skill validators refuse them), and valid as a
  ``SKILL.md`` frontmatter description;
- not a description tried before (compared without case and spacing);
- quoting no query of the test set: a test query of 3 words or more whose words all appear in a row in the
  description (words compared without case and punctuation), or, for a query longer than 8 words, 8 of its
  words in a row.

A refused reply is asked again once, the request then saying why (never which test query was quoted: that
would tell the model the test set). A second refusal, or a judge error, gives no description.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..formats.agentskills import MAX_DESCRIPTION, frontmatter_problems, parse_frontmatter
from ..formats.optimize_results import ImproverAttempt
from ..judges import ImproveRequest, ImproveVerdict, Judge
from .rewrite_description import render_scalar

__all__ = ["QUOTE_MIN_WORDS", "QUOTE_WINDOW", "Proposal", "check_description", "normalize", "propose",
           "quotes_query"]

QUOTE_MIN_WORDS = 3  # a test query shorter than this is never counted as quoted
QUOTE_WINDOW = 8  # words in a row of a longer query that count as quoting it
ASKS = 2  # a refused description is asked again once


@dataclass
class Proposal:
    """What the improver gave: a checked ``description`` (None when it gave none), every reply, and the error."""

    description: str | None
    attempts: list[ImproverAttempt] = field(default_factory=list)
    error: str | None = None
    reasoning: str = ""


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text.casefold())


def normalize(text: str) -> str:
    """Whitespace runs as one space, ends stripped, one pair of enclosing quotes dropped."""
    text = " ".join(text.split())
    for quote in ('"', "'", "\u201c\u201d"):
        first, last = quote[0], quote[-1]
        if len(text) >= 2 and text[0] == first and text[-1] == last:
            text = text[1:-1].strip()
            break
    return text


def quotes_query(description: str, query: str) -> bool:
    """Whether ``description`` quotes ``query`` (see the module doc)."""
    words = _words(query)
    if len(words) < QUOTE_MIN_WORDS:
        return False
    text = f" {' '.join(_words(description))} "
    size = min(len(words), QUOTE_WINDOW)
    return any(f" {' '.join(words[i:i + size])} " in text for i in range(len(words) - size + 1))


def _key(text: str) -> str:
    return " ".join(text.casefold().split())


def check_description(text: str, tried: Sequence[str], test_queries: Sequence[str]) -> tuple[str, str | None]:
    """``(the normalized description, why it is refused or None)``."""
    description = normalize(text)
    if not description:
        return description, "the description is empty"
    if len(description) > MAX_DESCRIPTION:
        return description, f"the description is {len(description)} characters long, at most {MAX_DESCRIPTION}"
    if "<" in description or ">" in description:
        return description, "the description holds angle brackets (< or >), which skill validators refuse"
    meta, _ = parse_frontmatter(f"---\nname: skill\ndescription: {render_scalar(description)}\n---\n",
                                file="SKILL.md")
    problems = [p for p in frontmatter_problems(meta, None)[0] if p.startswith("description")]
    if problems or meta.get("description") != description:
        why = problems[0] if problems else "it reads back differently"
        return description, f"the description is not valid in a frontmatter ({why})"
    for number, before in enumerate(tried, start=1):
        if _key(before) == _key(description):
            return description, f"the description repeats candidate {number}, tried before"
    if any(quotes_query(description, q) for q in test_queries):
        return description, ("the description quotes, word for word, a request kept aside to test it (the request "
                             "is not shown): name the kind of request in your own words instead")
    return description, None


async def propose(judge: Judge, request: ImproveRequest, *, tried: Sequence[str],
                  test_queries: Sequence[str]) -> Proposal:
    """Ask ``judge`` for a description, check it, and ask once more when it is refused."""
    attempts: list[ImproverAttempt] = []
    refused: list[str] = []
    for _ in range(ASKS):
        asked = request.model_copy(update={"refused": list(refused)})
        judgement = await judge.judge(asked)
        if not isinstance(judgement.verdict, ImproveVerdict):
            error = judgement.error or "the improver gave no description"
            attempts.append(ImproverAttempt(error=error))
            return Proposal(None, attempts, error=f"the improver failed: {error}")
        description, problem = check_description(judgement.verdict.description, tried, test_queries)
        attempts.append(ImproverAttempt(description=description, refused=problem,
                                        reasoning=judgement.verdict.reasoning))
        if problem is None:
            return Proposal(description, attempts, reasoning=judgement.verdict.reasoning)
        refused.append(problem)
    return Proposal(None, attempts, error="the improver's descriptions were refused twice: " + "; ".join(refused))
