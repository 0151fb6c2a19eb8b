"""A stand-in for an agent, for the offline walkthrough. It is NOT an agent and runs no model.

It replays answers written by hand (answers.json): when the commit-subject skill is installed in its
workspace (``.agents/skills/commit-subject/SKILL.md``) and the prompt is about a commit, it reads the skill's
SKILL.md (and says so, as a real agent's transcript would) and replays the answer prepared "with the skill";
otherwise it replays the answer prepared "without the skill". It prints the ``events`` format of eval-skills,
one JSON object per line, so run it as::

    eval-skills paired ... --agent-cmd "python3 stand_in_agent.py --prompt-file {prompt_file}" --agent-output events

What it shows is how eval-skills runs, grades, compares and reports; it says nothing about any real agent.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

SKILL = "commit-subject"
SKILL_MD = Path(".agents/skills") / SKILL / "SKILL.md"
ANSWERS = Path(__file__).with_name("answers.json")


def emit(event: dict) -> None:
    print(json.dumps(event), flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompt-file", required=True)
    args = parser.parse_args()
    prompt = Path(args.prompt_file).read_text(encoding="utf-8")
    answers = json.loads(ANSWERS.read_text(encoding="utf-8"))
    uses_skill = SKILL_MD.is_file() and "commit" in prompt.lower()
    if uses_skill:
        emit({"type": "tool_call", "id": "read-1", "name": "Read", "input": {"file_path": str(SKILL_MD)}})
        emit({"type": "tool_call", "id": "read-1", "name": "Read",
              "result": SKILL_MD.read_text(encoding="utf-8"), "is_error": False})
        emit({"type": "skill", "skill": SKILL, "detected_by": "reported by the agent", "tool_call_id": "read-1"})
    arm = "with_skill" if uses_skill else "without_skill"
    answer = next((entry[arm] for key, entry in answers.items() if not key.startswith("_") and key in prompt),
                  "Could you tell me more about the change?")
    emit({"type": "final", "text": f"```\n{answer}\n```" if uses_skill else answer})
    return 0


if __name__ == "__main__":
    sys.exit(main())
