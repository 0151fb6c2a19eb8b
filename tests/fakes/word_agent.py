"""A stand-in agent that picks a skill by the words of the installed descriptions, for tests (no model).

Run it as a ``command`` agent with ``--agent-output events``, in the run's workspace (its current folder)::

    python word_agent.py --prompt-file {prompt_file}

It reads every skill installed under ``skills_dir`` (``<name>/SKILL.md``, the frontmatter read with PyYAML),
takes the *words* of each description and of the prompt (lowercase runs of 4 letters or more, a final ``s``
dropped, common words left out) and uses the skill whose description shares the most words with the prompt,
when it shares at least ``min_shared`` (ties: the first name in order). So what it does follows from the
description installed in its workspace, and nothing else: change the description, change the decision.

The script is JSON in ``WORD_AGENT_JSON`` (every key optional): ``skills_dir`` (default ``.agents/skills``),
``min_shared`` (default 1), ``usage`` (a usage event's fields, printed when given), ``log`` (a file to which
each run appends one JSON line: prompt, the descriptions it saw, the skill it used), ``delay`` (seconds it
thinks after logging, before it answers: a test can interrupt runs in flight).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from pathlib import Path

import yaml

COMMON = frozenset([
    "this", "that", "with", "when", "what", "which", "your", "from", "into", "have", "about", "them", "they",
    "their", "there", "here", "these", "those", "will", "would", "should", "could", "some", "more", "most", "such",
    "only", "also", "than", "then", "very", "just", "like", "make", "made", "does", "done", "using", "used", "uses",
    "skill", "help", "please", "want", "need", "user", "request", "asked", "ask"])


def words(text: str) -> set[str]:
    found = set()
    for word in re.findall(r"[a-z]{4,}", text.lower()):
        word = word[:-1] if len(word) > 4 and word.endswith("s") else word
        if word not in COMMON:
            found.add(word)
    return found


def description(skill_md: Path) -> str:
    text = skill_md.read_text(encoding="utf-8")
    parts = text.split("---", 2)
    try:
        meta = yaml.safe_load(parts[1]) if len(parts) == 3 else {}
    except yaml.YAMLError:
        return ""
    value = meta.get("description") if isinstance(meta, dict) else None
    return value if isinstance(value, str) else ""


def emit(event: dict) -> None:
    print(json.dumps(event), flush=True)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--prompt-file")
    parser.add_argument("--prompt")
    args = parser.parse_args()
    prompt = Path(args.prompt_file).read_text() if args.prompt_file else args.prompt or sys.stdin.read()
    script = json.loads(os.environ.get("WORD_AGENT_JSON") or "{}")
    root = Path(script.get("skills_dir", ".agents/skills"))
    seen = {}
    if root.is_dir():
        for folder in sorted(root.iterdir()):
            if (folder / "SKILL.md").is_file():
                seen[folder.name] = description(folder / "SKILL.md")
    asked = words(prompt)
    scores = {name: len(asked & words(text)) for name, text in seen.items()}
    best = max(scores.values(), default=0)
    chosen = next((n for n in sorted(scores) if scores[n] == best), None) \
        if best >= int(script.get("min_shared", 1)) else None
    if script.get("log"):
        with open(script["log"], "a") as log:
            log.write(json.dumps({"prompt": prompt, "descriptions": seen, "used": chosen}) + "\n")
    time.sleep(float(script.get("delay", 0)))
    emit({"type": "message", "role": "assistant", "text": "Reading the request."})
    if chosen is not None:
        path = root / chosen / "SKILL.md"
        emit({"type": "tool_call", "id": "call_1", "name": "Read", "input": {"file_path": str(path)}})
        emit({"type": "tool_call", "id": "call_1", "name": "Read", "result": path.read_text()[:200]})
        emit({"type": "skill", "skill": chosen, "detected_by": "reported by the agent", "tool_call_id": "call_1"})
    if "usage" in script:
        emit({"type": "usage", **script["usage"]})
    emit({"type": "final", "text": f"answered with {chosen or 'no skill'}"})
    return 0


if __name__ == "__main__":
    sys.exit(main())
