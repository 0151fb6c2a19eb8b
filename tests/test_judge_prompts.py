"""The judges' prompt files: each version pinned to its text, and what the rendering does with long input."""

from __future__ import annotations

import hashlib
from importlib import resources

import pytest

from eval_skills.formats.workspace import MessageEvent, ToolCallEvent
from eval_skills.judges import ArmOutput, CompareRequest, GradeRequest, ScoreRequest
from eval_skills.judges.prompts import FIELD_LIMIT, MAX_FILES, TRANSCRIPT_LIMIT, load_prompt, render, verdict_schema

# A prompt's text decides verdicts, and verdicts are cached by prompt version: a change of text needs a new
# version (edit the file's "version:" line, then this table).
PINNED = {
    "grade": ("grade-1", "439541394dbd75ea54e38120947e04e6194ed4bfd85b43c3b2f494d3c462af38"),
    "compare": ("compare-1", "a81551185360a08976d32c887ccf71c7e7a82da2da022f67d7631860e3a7989e"),
    "score": ("score-2", "6b2e4573ab3bbb79f6e390d22dc617b2c9c069a778a0ff1ca37b74c660071499"),
    "improve": ("improve-1", "e715c1596aad94894cec708aef735c3354f817bb7fc97ef26fee9d5bc38e5faa"),
}


@pytest.mark.parametrize("kind", sorted(PINNED))
def test_each_prompt_version_is_pinned_to_its_text(kind: str) -> None:
    data = (resources.files("eval_skills.judges") / "prompts" / f"{kind}.md").read_bytes()
    version, digest = PINNED[kind]
    assert load_prompt(kind).version == version
    assert hashlib.sha256(data).hexdigest() == digest, f"prompts/{kind}.md changed: give it a new version"


def test_long_fields_are_cut_and_say_so() -> None:
    request = GradeRequest(
        prompt="p", response="r" * (FIELD_LIMIT + 10),
        outputs={f"f{i:02}.md": "x" for i in range(MAX_FILES + 3)},
        transcript=[ToolCallEvent(name="Bash", input={"command": "ls " + "y" * 1000}, result="z" * 1000)] * 200
                   + [MessageEvent(text="never shown")],
        assertions=["a"])
    _, user = render(request)
    assert "r" * FIELD_LIMIT + "\n[... 10 more characters cut]" in user
    assert user.count("<file path=") == MAX_FILES + 1 and "[3 more files not shown]" in user
    transcript = user.split("<transcript>\n")[1].split("\n</transcript>")[0]
    assert len(transcript) <= TRANSCRIPT_LIMIT + 100 and "more events cut]" in transcript
    assert "never shown" not in transcript
    assert "[tool Bash] " in transcript and "..." in transcript.splitlines()[0]


def test_sections_appear_only_when_given() -> None:
    _, bare = render(GradeRequest(prompt="p", response="r", assertions=["a"]))
    assert "<expected_output>" not in bare and "<file" not in bare and "<transcript>" not in bare
    _, score = render(ScoreRequest(rubric="be right", output="yes"))
    assert score == "<rubric>\nbe right\n</rubric>\n<output>\nyes\n</output>"
    _, tasked = render(ScoreRequest(rubric="be right", task="Name the capital", output="yes"))
    assert tasked == "<rubric>\nbe right\n</rubric>\n<task>\nName the capital\n</task>\n<output>\nyes\n</output>"
    system, compare = render(CompareRequest(prompt="p", expected_output="e", A=ArmOutput(response="1"),
                                            B=ArmOutput(response="2")), problem="not JSON")
    assert system.startswith("You compare two outputs")
    assert compare.index('<output name="A">') < compare.index('<output name="B">')
    assert compare.endswith("Your previous reply could not be used: not JSON. Reply with the JSON object only, "
                            "exactly as described.")


def test_verdict_schemas_are_strict() -> None:
    for kind in ("grade", "compare", "score", "improve"):
        schema = verdict_schema(kind)
        assert schema["additionalProperties"] is False and schema["required"] == list(schema["properties"])
    assert verdict_schema("compare")["properties"]["winner"]["enum"] == ["A", "B", "TIE"]


def test_the_improve_prompt_shows_failures_and_tried_descriptions() -> None:
    from eval_skills.judges import ImproveCandidate, ImproveQuery, ImproveRequest

    request = ImproveRequest(skill_name="pdf", skill_body="# PDF", current_description="Reads PDFs.",
                             missed=[ImproveQuery(query="merge two files", trigger_rate=0.0, triggers=0, runs=3)],
                             candidates=[ImproveCandidate(description="Reads PDFs.", f1=0.5, passed=3, total=6)],
                             refused=["the description repeats candidate 1, tried before"])
    system, user = render(request)
    assert system.startswith("You improve the description of an agent skill")
    assert "Should have used the skill, did not:\n- merge two files (used in 0 of 3 runs)" in user
    assert "Used the skill, should not have" not in user
    assert '- "Reads PDFs." (train: 3 of 6 requests right, F1 0.5)' in user
    assert "- the description repeats candidate 1, tried before\nWrite another one." in user
