"""Reading agent output: the events and text parsers, line splitting, raw stdout, and workspace snapshots."""

from __future__ import annotations

import gc
import json
import os
from pathlib import Path

import pytest

from eval_skills.agents import PARSERS, ParseContext, RawOutput, TokenUsage, create_parser
from eval_skills.agents.process import LineSplitter
from eval_skills.agents.workdir import changed_files, check_subdir, snapshot
from eval_skills.errors import InputError
from eval_skills.formats.workspace import UsageEvent


def parse(name: str, lines: list[str | bytes]):
    parser = create_parser(name, ParseContext())
    raw = RawOutput()
    for line in lines:
        data = line.encode() if isinstance(line, str) else line
        raw.write(data + b"\n")
        parser.feed(data)
    return parser, parser.finish(raw)


def test_events_parser_reads_every_event_type_in_order() -> None:
    lines = [json.dumps(e) for e in (
        {"type": "message", "text": "thinking"},
        {"type": "tool_call", "id": "t1", "name": "Bash", "input": {"command": "ls"}},
        {"type": "skill", "skill": "pdf", "tool_call_id": "t1"},
        {"type": "tool_call", "id": "t1", "name": "Bash", "result": "a.txt", "is_error": True},
        {"type": "usage", "input_tokens": 10, "output_tokens": 2, "cache_write_tokens": 3, "cost_usd": 0.5},
        {"type": "usage", "input_tokens": 1, "output_tokens": 1, "total_tokens": 100},
        {"type": "final", "text": "first"},
        {"type": "final", "text": "the answer", "extra_key": 1},
    )]
    parser, out = parse("events", ["", *lines, "   "])
    assert [e.type for e in out.transcript] == ["message", "tool_call", "skill", "usage", "usage", "final", "final"]
    call = out.transcript[1]
    assert (call.input, call.result, call.is_error) == ({"command": "ls"}, "a.txt", True)
    assert out.transcript[2].detected_by == "reported by the agent"
    assert out.response == "the answer"
    usage = out.usage
    assert (usage.input_tokens, usage.output_tokens, usage.cache_write_tokens) == (11, 3, 3)
    assert usage.total_tokens == 15 + 100 and usage.cost_usd == 0.5 and usage.measurement == "measured"
    assert parser.warnings() == []


def test_events_parser_notes_bad_lines_and_keeps_going() -> None:
    bad = ["not json", "{\"type\": \"final\"}", "[1]", "{\"type\": \"usage\", \"input_tokens\": \"many\"}",
           b"\xff\xfe{", "{\"text\": \"no type\"}"]
    parser, out = parse("events", [*bad, '{"type": "final", "text": "ok"}'])
    assert out.response == "ok" and out.usage is None and len(out.transcript) == 1
    assert parser.problem_count == 6
    warnings = parser.warnings()
    assert warnings[0] == "events output: line 1 is not JSON: 'not json'"
    assert "line 2 is not an event (final.text: Field required)" in warnings[1]
    assert "line 4 is not an event (usage.input_tokens:" in warnings[3]
    assert "Unable to extract tag" in warnings[5]


@pytest.mark.parametrize("line", [
    {"type": "usage", "input_tokens": -1000, "output_tokens": 5},
    {"type": "usage", "output_tokens": 5, "total_tokens": -7},
    {"type": "usage", "output_tokens": 5, "cost_usd": -3.5},
    {"type": "skill", "skill": ""},
    {"type": "skill", "skill": "  "},
])
def test_events_with_negative_usage_or_a_blank_skill_are_warnings_not_counted(line: dict) -> None:
    parser, out = parse("events", [json.dumps(line), '{"type": "final", "text": "ok"}'])
    assert out.usage is None and [e.type for e in out.transcript] == ["final"]
    assert parser.problem_count == 1 and "line 1 is not an event" in parser.warnings()[0]


def test_problems_are_bounded() -> None:
    parser, _ = parse("events", ["garbage"] * 50)
    assert parser.problem_count == 50 and len(parser.problems) == 20
    assert parser.warnings()[-1] == "events output: 30 more unreadable lines"


def test_text_parser_takes_the_whole_stdout() -> None:
    _, out = parse("text", ["", "  Hello", "world  ", ""])
    assert out.response == "Hello\nworld" and out.usage is None
    _, empty = parse("text", ["", "   "])
    assert empty.response is None and empty.transcript == []


def test_parsers_are_a_registry() -> None:
    assert {"text", "events"} <= set(PARSERS.names())
    with pytest.raises(InputError,
                       match="unknown agent output format 'claude-x'.*one of: claude, codex, events, opencode, text"):
        create_parser("claude-x", ParseContext())
    PARSERS.register("events-again", "eval_skills.agents.parsers.events:EventsParser")
    try:
        assert type(create_parser("events-again", ParseContext())).__name__ == "EventsParser"
    finally:
        del PARSERS.entries["events-again"]


class Collect:
    def __init__(self) -> None:
        self.lines: list[bytes] = []

    def feed(self, line: bytes) -> None:
        self.lines.append(line)


def test_line_splitter_joins_chunks_and_skips_overlong_lines() -> None:
    sink = Collect()
    splitter = LineSplitter(sink, max_line=10)  # type: ignore[arg-type]
    for chunk in (b"ab", b"c\nde", b"f\n\nlong-line-", b"that-goes-on", b"-and-on\nshort\nlast"):
        splitter.feed(chunk)
    splitter.close()
    assert sink.lines == [b"abc", b"def", b"", b"short", b"last"] and splitter.skipped == 1


def test_raw_output_spills_and_cleans_up(tmp_path: Path) -> None:
    raw = RawOutput(spill_at=10)
    raw.write(b"12345")
    assert not raw.spilled and raw.read_bytes() == b"12345"
    raw.write(b"678901")
    assert raw.spilled and raw.size == 11 and raw.read_bytes() == b"12345678901"
    spill = raw.path
    assert spill is not None and spill.exists()
    del raw
    gc.collect()
    assert not spill.exists()
    small = RawOutput()
    small.write(b"abc")
    small.save(tmp_path / "out.log")
    assert (tmp_path / "out.log").read_bytes() == b"abc"


def test_usage_sums_and_estimates() -> None:
    assert TokenUsage.from_events([]) is None
    usage = TokenUsage.from_events([UsageEvent(input_tokens=3, output_tokens=4, cache_read_tokens=2)])
    assert usage is not None and usage.total_tokens == 9 and usage.cost_usd is None
    estimate = TokenUsage.estimate("x" * 9, "y" * 4)
    assert (estimate.input_tokens, estimate.output_tokens, estimate.total_tokens) == (3, 1, 4)
    assert estimate.measurement == "estimated"


def test_snapshot_sees_content_changes_links_and_exclusions(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("same size")
    (tmp_path / "skills" / "mine").mkdir(parents=True)
    (tmp_path / "skills" / "mine" / "SKILL.md").write_text("x")
    (tmp_path / "link").symlink_to("a.txt")
    before = snapshot(tmp_path, {"skills/mine"})
    assert set(before) == {"a.txt", "link"}
    mtime = (tmp_path / "a.txt").stat().st_mtime_ns
    (tmp_path / "a.txt").write_text("SAME SIZE")
    os.utime(tmp_path / "a.txt", ns=(mtime, mtime))  # same size and time: only the content differs
    (tmp_path / "link").unlink()
    (tmp_path / "link").symlink_to("elsewhere")
    (tmp_path / "skills" / "mine" / "SKILL.md").write_text("changed")
    (tmp_path / "skills" / "new.md").write_text("n")
    changes = changed_files(before, snapshot(tmp_path, {"skills/mine"}))
    assert [(c.path, c.kind) for c in changes] == [("a.txt", "modified"), ("link", "modified"),
                                                   ("skills/new.md", "created")]


@pytest.mark.parametrize("bad", ["", "/abs", "../up", "a/../../b", "C:\\x", "./."])
def test_skills_subdir_must_stay_inside(bad: str) -> None:
    with pytest.raises(InputError):
        check_subdir(bad)


def test_skills_subdir_is_normalised() -> None:
    assert check_subdir(".claude/skills/") == ".claude/skills"
    assert check_subdir("a\\b") == "a/b"
