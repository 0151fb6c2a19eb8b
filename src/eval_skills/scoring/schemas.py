"""JSON Schema validators that are safe on untrusted data: checked whole before anything runs, never fetching
a remote ``$ref``, and matching ``pattern`` with a time limit.

- :func:`schema_validator` refuses a schema that is not valid for its draft, and one with a ``$ref`` that
  does not resolve (a missing ``#/definitions/x``, a remote URL: nothing is fetched), as ScorerError.
- ``format`` is asserted (``date-time``, ``uri``, ``email``, ``hostname``, ``ipv4``, ``uuid``, ...), as the
  original eval-skills' validator does.
- ``pattern`` and ``patternProperties`` are matched with the ``regex`` package and a timeout, so a
  backtracking pattern cannot freeze the harness: a match that takes too long raises TimeoutError (for a
  scorer: the task is past its deadline).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from ..errors import ScorerError
from ..formats._load import json_path
from .assertions import compile_pattern

__all__ = ["PATTERN_TIMEOUT_S", "UnresolvedRef", "schema_problem", "schema_validator"]

PATTERN_TIMEOUT_S = 5.0


def _search(pattern: str, text: str, timeout: float) -> bool:
    """True/False for a match; TimeoutError when matching takes longer than ``timeout`` (the scoring deadline)."""
    return compile_pattern(pattern, 0).search(text, timeout=timeout) is not None


@lru_cache(maxsize=64)
def _safe_class(cls: Any, timeout: float) -> Any:
    import jsonschema

    def pattern(validator: Any, patrn: str, instance: Any, schema: Any) -> Any:
        if not validator.is_type(instance, "string"):
            return
        if not _search(patrn, instance, timeout):
            yield jsonschema.ValidationError(f"{instance!r} does not match {patrn!r}")

    def pattern_properties(validator: Any, patterns: dict[str, Any], instance: Any, schema: Any) -> Any:
        if not validator.is_type(instance, "object"):
            return
        for patrn, subschema in patterns.items():
            for key, value in instance.items():
                if _search(patrn, key, timeout):
                    yield from validator.descend(value, subschema, path=key, schema_path=patrn)

    return jsonschema.validators.extend(cls, {"pattern": pattern, "patternProperties": pattern_properties})


def _unresolved_ref(validator: Any) -> str | None:
    """The first ``$ref`` of the validator's schema that does not resolve, or None."""
    import referencing.exceptions
    import referencing.jsonschema

    try:
        spec = referencing.jsonschema.specification_with(
            validator.META_SCHEMA.get("$schema", ""), default=referencing.jsonschema.DRAFT202012)
    except referencing.exceptions.CannotDetermineSpecification:  # pragma: no cover - a draft we know of
        return None
    todo: list[tuple[Any, Any]] = [(validator.schema, validator._resolver)]
    while todo:
        node, resolver = todo.pop()
        if isinstance(node, list):
            todo.extend((item, resolver) for item in node)
            continue
        if not isinstance(node, dict):
            continue
        try:
            resource = spec.create_resource(node)
            if isinstance(resource.id(), str):
                resolver = resolver.in_subresource(resource)
        except Exception:  # noqa: BLE001 - an odd "$id": not ours to judge here (check_schema did)
            pass
        ref = node.get("$ref")
        if isinstance(ref, str):
            try:
                resolver.lookup(ref)
            except referencing.exceptions.Unresolvable:
                return ref
        todo.extend((value, resolver) for value in node.values())
    return None


class UnresolvedRef(ScorerError):
    """A ``$ref`` of a schema does not resolve: the schema is broken whatever draft it was written for."""


def schema_validator(schema: Any, *, timeout: float = PATTERN_TIMEOUT_S) -> Any:
    """A validator for ``schema`` (its draft read from ``$schema``); ScorerError if the schema is invalid or a
    ``$ref`` in it does not resolve."""
    import jsonschema
    import referencing

    if not isinstance(schema, dict | bool):
        raise ScorerError("invalid JSON Schema: expected an object")
    cls = jsonschema.validators.validator_for(schema)
    try:
        cls.check_schema(schema)  # type: ignore[arg-type]
    except jsonschema.SchemaError as exc:
        raise ScorerError(f"invalid JSON Schema: {exc.message}") from None
    except Exception as exc:  # noqa: BLE001 - a schema too deep or odd to check
        raise ScorerError(f"invalid JSON Schema: {type(exc).__name__}") from None
    validator = _safe_class(cls, timeout)(schema, registry=referencing.Registry(),
                                          format_checker=cls.FORMAT_CHECKER)
    ref = _unresolved_ref(validator)
    if ref is not None:
        raise UnresolvedRef(f"invalid JSON Schema: $ref {ref!r} does not resolve (remote references are not fetched)")
    return validator


def schema_problem(validator: Any, value: Any) -> str | None:
    """``"$.path: message"`` for the most relevant error of ``value``, or None when it is valid."""
    import jsonschema

    error = jsonschema.exceptions.best_match(validator.iter_errors(value))
    return None if error is None else f"{json_path(list(error.absolute_path))}: {error.message}"
