"""``text``: the whole stdout, trimmed, is the final response (no transcript, no usage)."""

from __future__ import annotations

from ...formats.workspace import FinalEvent
from ..output import OutputParser, ParsedOutput, RawOutput

__all__ = ["TextParser"]


class TextParser(OutputParser):
    name = "text"

    def feed(self, line: bytes) -> None:
        self.lines += 1

    def finish(self, raw: RawOutput) -> ParsedOutput:
        text = raw.text().strip()
        if not text:
            return ParsedOutput()
        return ParsedOutput(transcript=[FinalEvent(text=text)], response=text)
