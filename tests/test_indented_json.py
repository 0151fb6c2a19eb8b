"""dumps_indented writes exactly what json.dumps(indent=2) writes."""

import json
import math
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from eval_skills.formats.indented_json import dumps_indented, dumps_indented_utf8

FINITE = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text()
FINITE_VALUES = st.recursive(FINITE, lambda inner: st.lists(inner, max_size=4) | st.tuples(inner, inner)
                             | st.dictionaries(st.text() | st.integers(), inner, max_size=4), max_leaves=30)
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


@settings(max_examples=400, deadline=None)
@given(FINITE_VALUES)
def test_the_utf8_writer_gives_the_same_text_as_the_standard_library(value):
    assert dumps_indented_utf8(value, default=str) == json.dumps(value, indent=2, ensure_ascii=False, default=str)


class Half(float):  # numpy's float64 is a float subclass too
    pass


class Count(int):
    pass


class Name(str):
    pass


class Rows(dict):  # type: ignore[type-arg]
    pass


def test_the_utf8_writer_on_what_orjson_refuses_or_writes_otherwise():
    cases = [
        {"small": [1e-05, 6.25e-06, -0.00001234], "big": 1e16, "tiny": 5e-324},  # floats orjson writes otherwise
        {1: "int key", "x": {2.5: True, None: 1}},  # keys that are not strings
        {"n": 2**64, "m": -(2**63) - 1, "k": 10**30},  # integers over 64 bits
        {"control": "".join(map(chr, range(32))) + "\x7f\u2028é😀", "quote": '"\\/'},
        {"path": Path("/tmp/x"), "rows": [{"p": Path("a")}, [Path("b"), {}, []]], "t": (1, "a")},
        [[[[[[[[[[]]]]]]]]]] * 2,
        {"score": Half(0.5), "n": Count(3), "name": Name("x"), "rows": Rows(a=[1.25, Half(2.0)])},  # subclasses
        {"s": {Name("k"): 1}},
    ]
    deep: list[object] = []
    for _ in range(300):  # past orjson's nesting limit
        deep = [deep]
    for value in [*cases, deep]:
        assert dumps_indented_utf8(value, default=str) == json.dumps(value, indent=2, ensure_ascii=False, default=str)


def test_the_utf8_writer_writes_nan_and_infinities_as_null():
    assert json.loads(dumps_indented_utf8({"a": math.nan, "b": [math.inf, -math.inf], "c": 1.5})) == {
        "a": None, "b": [None, None], "c": 1.5}
