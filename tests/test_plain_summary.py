"""The eval summary written without rich is the text rich writes for the same table on a plain console."""

import io

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from eval_skills.cli._eval_summary import summary_table
from eval_skills.cli._plain_summary import plain_output, plain_summary

PLAIN = st.text(st.characters(min_codepoint=33, max_codepoint=126), max_size=60)
RATE = st.none() | st.floats(min_value=0, max_value=1)
MS = st.none() | st.floats(min_value=0, max_value=1e7)


def report(skill, version, rates, latency):
    completion, partial, errors, consistency, composite = rates
    return {"skillId": skill, "skillVersion": version,
            "summary": {"completionRate": completion, "partialScore": partial, "errorRate": errors,
                        "consistencyScore": consistency, "compositeScore": composite},
            "latency": {"p50Ms": latency[0], "p95Ms": latency[1]}}


REPORTS = st.lists(st.builds(report, PLAIN, st.text(st.characters(min_codepoint=33, max_codepoint=126), max_size=20),
                             st.tuples(RATE, RATE, RATE, RATE, RATE), st.tuples(MS, MS)), min_size=1, max_size=3)


def rich_text(reports, width):
    table = summary_table(reports, width)
    out = io.StringIO()
    console = Console(file=out, width=max(width, table.width), color_system=None, force_terminal=False,
                      highlight=False, legacy_windows=False)
    console.print(table)
    return out.getvalue()


@settings(max_examples=300, deadline=None)
@given(REPORTS, st.integers(min_value=0, max_value=200))
def test_same_text_as_rich(reports, width):
    assert plain_summary(reports, width) == rich_text(reports, width)


def test_a_long_name_folds_as_rich_folds_it():
    reports = [report("a-skill-with-a-rather-long-identifier-for-a-table", "1.0.0-rc.1+build.7",
                      (1.0, 1.0, 0.0, None, 0.9998), (31.4, 31.4))]
    for width in (0, 40, 74, 80, 200):
        text = plain_summary(reports, width)
        assert text == rich_text(reports, width)
        assert len(text.splitlines()) > 3 if width < 200 else len(text.splitlines()) == 3


def test_anything_but_plain_text_is_left_to_rich():
    plain = [report("echo", "1.0", (1.0, 1.0, 0.0, None, 1.0), (1.0, 2.0))]
    assert plain_summary([report("two words", "1.0", (1.0, 1.0, 0.0, None, 1.0), (1.0, 2.0))], 80) is None
    assert plain_summary([report("échо", "1.0", (1.0, 1.0, 0.0, None, 1.0), (1.0, 2.0))], 80) is None
    assert plain_output(plain, ["  echo / t1: fail: missing: 'x'"]) is None  # rich would look for :emoji: codes
    assert plain_output(plain, ["a bell \x07"]) is None
    assert plain_output(plain, ["report: reports/eval-result-2026.json"]) is not None
