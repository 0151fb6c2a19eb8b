"""Scorers for tool-skill tasks, registered by name: the registry and every built-in scorer.

Import this module (not :mod:`.registry` alone) to have the built-ins registered. See :mod:`.registry` for
how to add one, :mod:`.builtin` for exact/contains/regex/json_schema, :mod:`.gaia` for GAIA's answer
normalisation, :mod:`.custom` for user files (Python, or JavaScript through :mod:`.node`).
"""

from __future__ import annotations

from . import builtin, custom, gaia, llm_judge, node  # noqa: F401 - registers the scorers and the Node.js workers
from .custom import custom_scorer_path, verdict_score
from .registry import (
    DEFAULT_SCORER_TIMEOUT_S,
    SCORERS,
    NoOptions,
    Scorer,
    ScoringContext,
    SearchedTexts,
    answer_of,
    as_text,
    get_scorer,
    scorer,
    scorer_type_of,
    searched_texts,
)
from .schemas import schema_problem, schema_validator

__all__ = ["DEFAULT_SCORER_TIMEOUT_S", "SCORERS", "NoOptions", "Scorer", "ScoringContext", "SearchedTexts",
           "answer_of", "as_text", "custom_scorer_path", "get_scorer", "schema_problem", "schema_validator", "scorer",
           "scorer_type_of", "searched_texts", "verdict_score"]
