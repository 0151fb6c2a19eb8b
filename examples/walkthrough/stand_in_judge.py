"""A stand-in for an LLM judge, for the offline walkthrough. It is NOT a model: it applies fixed rules.

eval-skills runs it as a ``--judge-cmd`` program: one request as JSON on stdin, one verdict as JSON on stdout.

- grade: an assertion passes when every phrase it quotes in double quotes appears in the response (or an
  output file), matching case; an assertion that quotes nothing fails, saying there was nothing to check.
- compare: each side gets a point per word of the expected output (4 letters or more) found in its response;
  more points wins, the same number is a tie.
- score: the share of the rubric's quoted phrases found in the output (0.5 when it quotes none).
"""

from __future__ import annotations

import json
import re
import sys


def texts_of(side: dict) -> list[str]:
    return [side.get("response") or "", *(side.get("outputs") or {}).values()]


def grade(request: dict) -> dict:
    texts = texts_of(request)
    expectations = []
    for assertion in request["assertions"]:
        phrases = re.findall(r'"([^"]+)"', assertion)
        missing = [p for p in phrases if not any(p in t for t in texts)]
        if not phrases:
            expectations.append({"text": assertion, "passed": False, "evidence": "nothing to check: no quoted phrase"})
        else:
            expectations.append({"text": assertion, "passed": not missing,
                                 "evidence": f"missing {missing[0]!r}" if missing else "found every quoted phrase"})
    return {"expectations": expectations}


def compare(request: dict) -> dict:
    words = {w.lower() for w in re.findall(r"[A-Za-z]{4,}", request.get("expected_output") or "")}
    points = {}
    for side in ("A", "B"):
        text = " ".join(texts_of(request[side])).lower()
        points[side] = sum(word in text for word in words)
    winner = "TIE" if points["A"] == points["B"] else max(points, key=points.__getitem__)
    return {"winner": winner, "reasoning": f"A matched {points['A']} words of the expected output, B {points['B']}"}


def score(request: dict) -> dict:
    phrases = re.findall(r'"([^"]+)"', request.get("rubric") or "")
    output = request.get("output")
    text = output if isinstance(output, str) else json.dumps(output)
    if not phrases:
        return {"score": 0.5, "reason": "the rubric quotes no phrase"}
    found = sum(p in text for p in phrases)
    return {"score": found / len(phrases), "reason": f"{found} of {len(phrases)} quoted phrases found"}


def main() -> int:
    request = json.load(sys.stdin)
    handlers = {"grade": grade, "compare": compare, "score": score}
    print(json.dumps(handlers[request["kind"]](request)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
