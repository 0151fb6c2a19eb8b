"""The parsers on the real CLIs' output, recorded running them against the scripted model (tests/data/agents/
*.real-cli-<version>.jsonl): the model invoked the skill, had the CLI write notes.txt, then answered; the usage
is what the scripted model sent (e2e_scenarios.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from e2e_scenarios import ANSWER_USAGE, INVOKE_USAGE, NEW, SKILL, SKILLS_SUBDIR, WRITE_USAGE

from eval_skills.agents import ParseContext, RawOutput, create_parser
from eval_skills.formats.workspace import SkillEvent, ToolCallEvent

DATA = Path(__file__).parent / "data" / "agents"
RECORDINGS = {"claude": "claude-stream-json-skill-write.real-cli-2.1.197.jsonl",
              "codex": "codex-exec-json-skill-write.real-cli-0.171.0.jsonl",
              "opencode": "opencode-run-json-skill-write.real-cli-1.18.33.jsonl"}


@pytest.mark.parametrize("cli", sorted(RECORDINGS))
def test_a_real_recording_reads_as_the_run_it_was(cli: str) -> None:
    data = (DATA / RECORDINGS[cli]).read_bytes()
    parser = create_parser(cli, ParseContext((SKILL,), SKILLS_SUBDIR[cli], Path("/tmp/run/ws")))
    raw = RawOutput()
    raw.write(data)
    for line in data.split(b"\n"):
        parser.feed(line)
    parsed = parser.finish(raw)
    assert parsed.error is None and parsed.response == NEW
    assert [e.skill for e in parsed.transcript if isinstance(e, SkillEvent)] == [SKILL]
    assert len([e for e in parsed.transcript if isinstance(e, ToolCallEvent)]) == 2
    usage = parsed.usage
    sent = [INVOKE_USAGE, WRITE_USAGE, ANSWER_USAGE]
    assert (usage.input_tokens, usage.output_tokens, usage.cache_read_tokens) == (
        sum(u.input for u in sent), sum(u.output for u in sent), sum(u.cache_read for u in sent))
    assert usage.cache_write_tokens == (sum(u.cache_write for u in sent) if cli == "claude" else 0)
