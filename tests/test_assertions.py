"""The shared assertion engine: every kind, its evidence, and bad checks as InputError."""

from __future__ import annotations

import re

import pytest

from eval_skills.errors import InputError
from eval_skills.scoring.assertions import (
    ALIASES,
    CHECKS,
    MISSING,
    Check,
    CheckResult,
    check_from_mapping,
    parse_json_answer,
    regex_flags,
    run_check,
    run_checks,
    validate_check,
)

ANSWER = "Use stripe.PaymentIntent.create(amount=2000)\nthen confirm it.\nNo legacy calls.\n"


def test_registry_covers_every_kind_and_the_tasks_json_aliases() -> None:
    assert set(CHECKS) == {"contains", "not_contains", "regex", "json_path", "tool_called", "tool_not_called"}
    assert ALIASES == {"must_include": "contains", "must_not_include": "not_contains"}


# -- contains / not_contains -----------------------------------------------------------------------


def test_contains_reports_line_and_column() -> None:
    result = run_check(Check("contains", "confirm"), ANSWER)
    assert result == CheckResult("contains", "confirm", True, "found at line 2, column 6")


def test_contains_is_case_sensitive_and_says_why_it_failed() -> None:
    result = run_check(Check("contains", "paymentintent"), ANSWER)
    assert not result.passed
    assert "case-sensitive" in result.evidence and "line 1" in result.evidence
    assert "not found" in run_check(Check("contains", "Refund"), ANSWER).evidence


def test_aliases_keep_the_kind_the_task_file_used() -> None:
    included = run_check(Check("must_include", "amount"), ANSWER)
    excluded = run_check(Check("must_not_include", "legacy"), ANSWER)
    assert (included.kind, included.passed) == ("must_include", True)
    assert (excluded.kind, excluded.passed) == ("must_not_include", False)
    assert excluded.evidence == "found at line 3, column 4"


def test_not_contains_passes_when_absent() -> None:
    result = run_check(Check("not_contains", "charges.create"), ANSWER)
    assert result.passed and result.evidence == "absent"


def test_empty_answer_fails_contains_with_a_reason() -> None:
    result = run_check(Check("contains", "x"), "")
    assert not result.passed and "empty" in result.evidence


# -- regex -----------------------------------------------------------------------------------------


def test_regex_match_and_no_match() -> None:
    hit = run_check(Check("regex", r"amount=\d+"), ANSWER)
    assert hit.passed and "'amount=2000'" in hit.evidence and "line 1" in hit.evidence
    miss = run_check(Check("regex", r"amount=\d{5}"), ANSWER)
    assert not miss.passed and "no match" in miss.evidence


@pytest.mark.parametrize("flags", ["i", "I", "IGNORECASE", ["ignorecase"], "re.IGNORECASE", re.IGNORECASE])
def test_regex_ignorecase_flag_spellings(flags: object) -> None:
    assert not run_check(Check("regex", "NO LEGACY"), ANSWER).passed
    assert run_check(Check("regex", "NO LEGACY", flags=flags), ANSWER).passed  # type: ignore[arg-type]


def test_regex_multiline_dotall_verbose_flags() -> None:
    assert not run_check(Check("regex", "^then"), ANSWER).passed
    assert run_check(Check("regex", "^then", flags="m"), ANSWER).passed
    assert not run_check(Check("regex", "2000.*confirm"), ANSWER).passed
    assert run_check(Check("regex", "2000.*confirm", flags="s"), ANSWER).passed
    assert run_check(Check("regex", "amount = 2000  # spaces ignored", flags="x"), "amount=2000").passed
    assert regex_flags("ims") == re.I | re.M | re.S
    assert regex_flags("IGNORECASE|MULTILINE") == re.I | re.M
    assert regex_flags(["DOTALL", "x"]) == re.S | re.X
    assert regex_flags(None) == 0


def test_bad_regex_and_bad_flag_are_input_errors() -> None:
    with pytest.raises(InputError, match="invalid regular expression"):
        run_check(Check("regex", "(unclosed"), ANSWER)
    with pytest.raises(InputError, match="unknown regex flag 'q'"):
        run_check(Check("regex", "x", flags="q"), ANSWER)


# -- json_path -------------------------------------------------------------------------------------

JSON_ANSWER = '{"order": {"id": 7, "paid": true, "items": [{"sku": "a", "qty": 2}, {"sku": "b", "qty": 1}]}}'


def test_json_path_expected_value() -> None:
    assert run_check(Check("json_path", "$.order.id", expected=7), JSON_ANSWER).passed
    wrong = run_check(Check("json_path", "$.order.id", expected=8), JSON_ANSWER)
    assert not wrong.passed and "none equals 8" in wrong.evidence and "first: 7" in wrong.evidence


def test_json_path_any_match_may_equal_expected() -> None:
    result = run_check(Check("json_path", "$.order.items[*].sku", expected="b"), JSON_ANSWER)
    assert result.passed and "match 2 of 2" in result.evidence


def test_json_path_true_is_not_one() -> None:
    assert run_check(Check("json_path", "$.order.paid", expected=True), JSON_ANSWER).passed
    assert not run_check(Check("json_path", "$.order.paid", expected=1), JSON_ANSWER).passed
    assert not run_check(Check("json_path", "$.order.items[1].qty", expected=True), JSON_ANSWER).passed


def test_json_path_expected_none_is_a_value_not_existence() -> None:
    assert run_check(Check("json_path", "$.x", expected=None), '{"x": null}').passed
    assert not run_check(Check("json_path", "$.x", expected=None), '{"x": 0}').passed


def test_json_path_existence_and_no_match() -> None:
    found = run_check(Check("json_path", "$.order.items"), JSON_ANSWER)
    assert found.passed and "1 match" in found.evidence
    missing = run_check(Check("json_path", "$.order.customer"), JSON_ANSWER)
    assert not missing.passed and missing.evidence == "no match in the answer"


def test_json_path_filter_expression_is_real_jsonpath() -> None:
    check = Check("json_path", "$.order.items[?(@.qty > 1)].sku", expected="a")
    assert run_check(check, JSON_ANSWER).passed


def test_json_path_reads_the_first_fenced_json_block() -> None:
    text = 'Here it is:\n\n```json\n{"ok": true}\n```\n\n```json\n{"ok": false}\n```\n'
    result = run_check(Check("json_path", "$.ok", expected=True), text)
    assert result.passed and "```json block at line 3" in result.evidence
    assert parse_json_answer(text) == ({"ok": True}, "the ```json block at line 3, column 1")


def test_json_path_invalid_json_fails_with_the_reason() -> None:
    result = run_check(Check("json_path", "$.a"), "not json at all")
    assert not result.passed and "not JSON" in result.evidence and "no ```json block" in result.evidence
    broken = run_check(Check("json_path", "$.a"), "```json\n{broken\n```")
    assert not broken.passed and "block" in broken.evidence and "is not JSON" in broken.evidence


def test_json_path_on_given_data() -> None:
    result = run_check(Check("json_path", "$.a[0]", expected=1), "ignored", data={"a": [1]})
    assert result.passed and "given data" in result.evidence


def test_invalid_jsonpath_is_an_input_error() -> None:
    with pytest.raises(InputError, match="invalid JSONPath"):
        run_check(Check("json_path", "$..["), JSON_ANSWER)


# -- tool_called / tool_not_called -----------------------------------------------------------------

EVENTS = [
    {"name": "Read", "input": {"file_path": "src/app.py"}},
    {"name": "Bash", "input": {"command": "pytest -q"}},
    {"name": "Read", "input": {"file_path": "README.md"}},
]


def test_tool_called_against_events() -> None:
    hit = run_check(Check("tool_called", "Bash"), "", EVENTS)
    assert hit.passed and "call 2 of 3" in hit.evidence and "text search" not in hit.evidence
    miss = run_check(Check("tool_called", "Write"), "Write", EVENTS)  # the text does not count
    assert not miss.passed and "called: Bash, Read" in miss.evidence


def test_tool_called_with_args_substring() -> None:
    assert "call 3 of 3" in run_check(Check("tool_called", "Read", args="README"), "", EVENTS).evidence
    miss = run_check(Check("tool_called", "Read", args="setup.py"), "", EVENTS)
    assert not miss.passed and "2 call(s) to 'Read'" in miss.evidence


def test_tool_not_called_against_events() -> None:
    assert run_check(Check("tool_not_called", "Write"), "", EVENTS).passed
    assert not run_check(Check("tool_not_called", "Bash"), "", EVENTS).passed
    assert run_check(Check("tool_not_called", "Bash"), "", []).passed


def test_tool_checks_fall_back_to_text_search_and_say_so() -> None:
    called = run_check(Check("tool_called", "Bash"), "I ran Bash with pytest", None)
    assert called.passed
    assert called.evidence.startswith("text search only: the run recorded no tool calls")
    absent = run_check(Check("tool_not_called", "Write"), "I ran Bash", None)
    assert absent.passed and absent.evidence.startswith("text search only")
    present = run_check(Check("tool_not_called", "Bash"), "I ran Bash", None)
    assert not present.passed and present.evidence.startswith("text search only")


# -- building and validating checks ----------------------------------------------------------------


def test_unknown_kind_is_an_input_error_listing_the_kinds() -> None:
    with pytest.raises(InputError, match="unknown check kind 'equals'") as info:
        run_check(Check("equals", "x"), "x")
    assert info.value.hint and "json_path" in info.value.hint


def test_non_string_value_is_an_input_error() -> None:
    with pytest.raises(InputError, match="non-empty string"):
        run_check(Check("contains", ""), "x")
    with pytest.raises(InputError, match="non-empty string"):
        run_check(Check("tool_called", None), "x")


def test_check_from_mapping_accepts_type_or_kind_and_named_values() -> None:
    assert check_from_mapping({"type": "regex", "pattern": "a+", "flags": "i"}) == Check("regex", "a+", "i")
    check = check_from_mapping({"kind": "json_path", "path": "$.a", "expected": None})
    assert check.expected is None
    assert check_from_mapping({"type": "json_path", "value": "$.a"}).expected is MISSING
    assert check_from_mapping({"type": "tool_called", "tool": "Bash", "args": "pytest"}).args == "pytest"


def test_validate_check_names_file_and_field() -> None:
    with pytest.raises(InputError) as info:
        check_from_mapping({"type": "regex", "value": "("}, file="evals.json",
                           field="$.evals[0].assertions[1]")
    assert info.value.line().startswith("evals.json: $.evals[0].assertions[1]: invalid regular expression")
    with pytest.raises(InputError, match="needs a \"type\""):
        check_from_mapping({"value": "x"})
    validate_check(Check("contains", "ok"))  # no error


def test_run_checks_runs_in_order() -> None:
    results = run_checks([Check("contains", "amount"), Check("not_contains", "amount")], ANSWER)
    assert [r.passed for r in results] == [True, False]
    assert results[0].to_dict() == {"kind": "contains", "value": "amount", "passed": True,
                                    "evidence": "found at line 1, column 33"}
