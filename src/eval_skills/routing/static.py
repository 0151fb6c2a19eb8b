"""The description check (``routing --static``): what can be said of routing from ``SKILL.md`` alone, no agent.

An agent decides to load a skill from its name and description, so this check looks at those:

- the frontmatter against the Agent Skills rules (:func:`~eval_skills.formats.agentskills.frontmatter_problems`),
  every problem listed rather than the first raised;
- the description's length (at most 1024 characters; very short ones give the agent little to match), whether
  it says when to use the skill, and a ``disable-model-invocation: true`` that stops model-chosen invocation;
- for each query, the key terms it shares with the name and description: lowercase words without common
  function words, reduced to a crude stem (``merging``, ``merged`` and ``merge`` are one term). A query that
  should trigger but shares no term is flagged, and so is one that should not trigger but shares a term of the
  skill's name, two terms or more, or at least half of its own terms.

It is a lexical heuristic: it cannot see synonyms, paraphrase, the agent's own judgement or the other skills
competing for a query. It finds descriptions that are missing the words their users type; only agent runs
measure routing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..formats.agentskills import MAX_DESCRIPTION, SKILL_MD, RoutingQuery, frontmatter_problems, parse_frontmatter
from ..formats.skill_files import read_text_file
from .plan import skill_folder

__all__ = ["MIN_WORDS", "QueryOverlap", "StaticReport", "key_terms", "static_check", "stem"]

MIN_WORDS = 10  # a description shorter than this gives the agent little to match
LOOKALIKE_SHARED, LOOKALIKE_SHARE = 2, 0.5  # a should-not query sharing this many terms, or this share, is flagged

_STOPWORD_TEXT = """
a about above after again against all also am an and any are as at be because been before being below between
both but by can could did do does doing down during each either etc even ever every for from further had has have
having he her here hers him his how however i if in into is it its itself just let like may me might more most
must my no nor not now of off on once only or other our ours out over own per please same shall she should so
some such than that the their them then there these they this those through to too under until up upon us very
via was we were what whatever when whenever where whether which while who whom whose why will with within
without would yet you your yours
use used uses using user users ask asks asked want wants need needs help helps skill skills task tasks
thing things something anything way ways get gets make makes do does done able
one two three four five six seven eight nine ten
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())

_WORD = re.compile(r"[^\W_]+")


def stem(word: str) -> str:
    """A crude English stem: plural, ``-ing``, ``-ed`` and a final ``e`` removed (``files`` and ``filing`` are
    ``fil``); words of three letters or fewer are kept whole."""
    if len(word) <= 3:
        return word
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith("sses"):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    for suffix in ("ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "lsz":
                word = word[:-1]  # running -> run
            break
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    return word


def key_terms(text: str) -> list[str]:
    """The key terms of ``text`` in first-seen order, each once (see the module doc)."""
    terms = (stem(w) for w in _WORD.findall(text.lower()) if w not in STOPWORDS and (len(w) > 1 or w.isdigit()))
    return list(dict.fromkeys(terms))


@dataclass
class QueryOverlap:
    index: int
    query: str
    should_trigger: bool
    invocation_type: str | None
    terms: list[str]
    shared: list[str]
    overlap: float | None  # shared / the query's own terms; None for a query without terms
    flag: str | None = None


@dataclass
class StaticReport:
    skill_name: str | None
    skill_path: str
    description: str
    description_chars: int
    description_words: int
    key_terms: list[str]
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    queries: list[QueryOverlap] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """No frontmatter rule is broken (flags and warnings are advice)."""
        return not self.errors

    @property
    def flagged(self) -> list[QueryOverlap]:
        return [q for q in self.queries if q.flag]

    def summary(self) -> dict[str, Any]:
        def mean(values: list[float]) -> float | None:
            return round(sum(values) / len(values), 4) if values else None

        def overlaps(should: bool) -> list[float]:
            return [q.overlap for q in self.queries if q.should_trigger is should and q.overlap is not None]

        return {"queries": len(self.queries), "flagged": len(self.flagged),
                "should_trigger_sharing_nothing": sum(1 for q in self.queries if q.should_trigger and not q.shared),
                "should_not_trigger_lookalikes": sum(1 for q in self.flagged if not q.should_trigger),
                "mean_overlap_should_trigger": mean(overlaps(True)),
                "mean_overlap_should_not_trigger": mean(overlaps(False))}

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        return {**data, "ok": self.ok, "summary": self.summary()}


PLACEHOLDER = re.compile(r"\b(TODO|TBD|FIXME)\b|lorem ipsum")  # what a template leaves for its author to write


def _description_warnings(meta: dict[str, Any], description: str, words: int) -> list[str]:
    warnings = []
    placeholder = PLACEHOLDER.search(description) if description else None
    if placeholder:
        warnings.append(f"description: still a placeholder ({placeholder.group(0)!r}): write what the skill does "
                        "and when to use it; no agent will choose it from this text")
    if description and words < MIN_WORDS:
        warnings.append(f"description: {words} words; the agent picks a skill from its description alone, so say "
                        "what the skill does and when to use it, with the words users type")
    if description and not re.search(r"\b(when|whenever|if|use (it |this )?(for|to))\b", description.lower()):
        warnings.append("description: does not say when to use the skill (e.g. 'Use when ...')")
    if meta.get("disable-model-invocation") is True:
        warnings.append("disable-model-invocation is true: the agent never invokes the skill on its own, so no "
                        "query can trigger it")
    return warnings


def _overlap(index: int, query: RoutingQuery, described: set[str], named: set[str]) -> QueryOverlap:
    terms = key_terms(query.query)
    shared = [t for t in terms if t in described]
    share = round(len(shared) / len(terms), 4) if terms else None
    flag = None
    if query.should_trigger and not shared:
        flag = "should trigger but shares no key term with the name or description"
    elif not query.should_trigger and shared and (len(shared) >= LOOKALIKE_SHARED or (share or 0) >= LOOKALIKE_SHARE
                                                  or named.intersection(shared)):
        flag = (f"should not trigger but shares {len(shared)} key term{'s' if len(shared) > 1 else ''} with the "
                f"name or description ({', '.join(shared)})")
    return QueryOverlap(index, query.query, query.should_trigger, query.invocation_type, terms, shared, share, flag)


def static_check(folder: Path, queries: Sequence[RoutingQuery]) -> StaticReport:
    """Check ``<folder>/SKILL.md`` and each query (see the module doc). Only an unreadable ``SKILL.md`` or
    frontmatter that is not YAML raises (InputError); rule violations are listed in ``errors``."""
    folder = skill_folder(folder)
    path = folder / SKILL_MD
    if not path.is_file():
        raise InputError(f"no {SKILL_MD} in this folder", file=str(folder), hint="pass the folder of an Agent Skill")
    text = read_text_file(path)  # a FIFO, a device, a huge file: refused, never read
    meta, _ = parse_frontmatter(text, file=str(path))
    errors, warnings = frontmatter_problems(meta, folder.resolve())
    name = meta.get("name") if isinstance(meta.get("name"), str) else None
    given = meta.get("description")
    description = given.strip() if isinstance(given, str) else ""
    words = len(description.split())
    if len(description) > MAX_DESCRIPTION * 0.9 and len(description) <= MAX_DESCRIPTION:
        warnings.append(f"description: {len(description)} characters, close to the limit of {MAX_DESCRIPTION}")
    warnings += _description_warnings(meta, description, words)
    terms = key_terms(f"{name or ''} {description}")
    described, named = set(terms), set(key_terms(name or ""))
    return StaticReport(name, str(folder), description, len(description), words, terms, errors, warnings,
                        [_overlap(i, q, described, named) for i, q in enumerate(queries, start=1)])
