"""dumps_indented writes exactly what json.dumps(indent=2) writes."""

import json
import math
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from eval_skills.formats.indented_json import dumps_indented

SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | st.text()
KEYS = st.text() | st.integers() | st.booleans() | st.none() | st.floats(allow_nan=False)
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4) | st.tuples(inner, inner)
                      | st.dictionaries(KEYS, inner, max_size=4), max_leaves=30)


@settings(max_examples=400, deadline=None)
@given(VALUES)
def test_same_text_as_the_standard_library(value):
    for ascii_only in (True, False):
        assert dumps_indented(value, ensure_ascii=ascii_only) == json.dumps(value, indent=2, ensure_ascii=ascii_only)


def test_default_turns_objects_into_json_at_any_depth():
    value = {"path": Path("/tmp/x"), "rows": [{"p": Path("a"), "n": 1}, [Path("b"), {}]], "nan": math.nan,
             "deep": {"e": [], "f": {}, "g": [1.5, "é", None, True]}}
    assert dumps_indented(value, ensure_ascii=False, default=str) == json.dumps(
        value, indent=2, ensure_ascii=False, default=str)
    expanding = {"obj": object(), "list": [object()]}
    assert dumps_indented(expanding, default=lambda o: {"kind": "object", "n": [1, 2]}) == json.dumps(
        expanding, indent=2, default=lambda o: {"kind": "object", "n": [1, 2]})


def test_what_cannot_be_encoded_is_refused_as_by_the_standard_library():
    for bad in ({"x": object()}, {(1, 2): 3}, [{"a": {1j: 2}}]):
        try:
            json.dumps(bad, indent=2)
        except TypeError:
            pass
        else:
            raise AssertionError(bad)
        try:
            dumps_indented(bad)
        except TypeError:
            continue
        raise AssertionError(f"no TypeError for {bad!r}")
