"""A rule-based stand-in for an LLM judge, for tests: a ``--judge-cmd`` program (request JSON on stdin,
reply JSON on stdout).

Rules:
- grade: an assertion passes when every phrase in double quotes in it appears (case-insensitive) in the
  response or one of the outputs; an assertion without a quoted phrase fails ("nothing to check").
- compare: each arm scores one point per word of ``expected_output`` (4 letters or more, case-insensitive)
  found in its response and outputs; more points wins, equal points is "TIE".
- score: the share of the rubric's quoted phrases found in ``output`` (as text); no phrase: 0.5.

``FAKE_JUDGE_MODE`` (environment) changes the behaviour: ``malformed`` (prose, never JSON),
``malformed-once`` (prose on the first attempt, a good reply when asked again: it reads
``EVAL_SKILLS_JUDGE_ATTEMPT``), ``missing`` (one expectation too few), ``wrong`` (a reply of the wrong shape),
``fenced`` (the good reply inside a ```json block with text around it), ``crash`` (exit 1 with a message on
stderr), ``hang`` (sleeps for ever). ``FAKE_JUDGE_DELAY`` (seconds) makes it think that long before
answering. ``FAKE_JUDGE_LOG`` names a file to which each call appends one JSON line: the request's kind, the
attempt and the model (``EVAL_SKILLS_JUDGE_MODEL``); with ``FAKE_JUDGE_LOG_SIZES`` set, also the length of
each response it was shown (``response_chars``: one number for a grade, ``[A, B]`` for a compare).
"""

from __future__ import annotations

import json
import os
import re
import sys
import time


def found(phrase: str, texts: list[str]) -> bool:
    return any(phrase.lower() in text.lower() for text in texts)


def grade(request: dict) -> dict:
    texts = [request["response"], *request.get("outputs", {}).values()]
    expectations = []
    for assertion in request["assertions"]:
        phrases = re.findall(r'"([^"]+)"', assertion)
        missing = [p for p in phrases if not found(p, texts)]
        passed = bool(phrases) and not missing
        evidence = ("nothing to check: no quoted phrase" if not phrases else
                    f"missing {missing[0]!r}" if missing else "found " + ", ".join(repr(p) for p in phrases))
        expectations.append({"text": assertion, "passed": passed, "evidence": evidence})
    return {"expectations": expectations}


def compare(request: dict) -> dict:
    words = {w.lower() for w in re.findall(r"[A-Za-z]{4,}", request.get("expected_output", ""))}
    points = {}
    for arm in ("A", "B"):
        texts = [request[arm]["response"], *request[arm].get("outputs", {}).values()]
        points[arm] = sum(found(w, texts) for w in words)
    winner = "TIE" if points["A"] == points["B"] else max(points, key=points.__getitem__)
    return {"winner": winner, "reasoning": f"A matched {points['A']} words, B matched {points['B']}"}


def score(request: dict) -> dict:
    phrases = re.findall(r'"([^"]+)"', request["rubric"])
    output = request.get("output")
    text = output if isinstance(output, str) else json.dumps(output)
    if not phrases:
        return {"score": 0.5, "reason": "no quoted phrase in the rubric"}
    hits = sum(found(p, [text]) for p in phrases)
    return {"score": hits / len(phrases), "reason": f"{hits} of {len(phrases)} phrases found"}


def main() -> int:
    request = json.loads(sys.stdin.read())
    mode = os.environ.get("FAKE_JUDGE_MODE", "")
    attempt = int(os.environ.get("EVAL_SKILLS_JUDGE_ATTEMPT", "1"))
    if os.environ.get("FAKE_JUDGE_LOG"):
        with open(os.environ["FAKE_JUDGE_LOG"], "a") as log:
            line = {"kind": request["kind"], "attempt": attempt, "model": os.environ.get("EVAL_SKILLS_JUDGE_MODEL")}
            if os.environ.get("FAKE_JUDGE_LOG_SIZES"):
                line["response_chars"] = (len(request["response"]) if "response" in request else
                                          [len(request[arm]["response"]) for arm in ("A", "B")] if "A" in request
                                          else None)
            log.write(json.dumps(line) + "\n")
    time.sleep(float(os.environ.get("FAKE_JUDGE_DELAY") or 0))
    if mode == "crash":
        print("the fake judge crashed on purpose", file=sys.stderr)
        return 1
    if mode == "hang":
        time.sleep(600)
    if mode == "malformed" or (mode == "malformed-once" and attempt == 1):
        print("I think the response is quite good overall.")
        return 0
    reply = {"grade": grade, "compare": compare, "score": score}[request["kind"]](request)
    if mode == "missing" and "expectations" in reply:
        reply["expectations"] = reply["expectations"][:-1]
    if mode == "wrong":
        reply = {"verdict": "yes"}
    text = json.dumps(reply)
    print(f"Here is my verdict:\n```json\n{text}\n```\nThanks." if mode == "fenced" else text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
