"""A scripted improver for ``routing --optimize`` tests: a ``--improver-cmd`` program (an ``improve`` request JSON
on stdin, ``{"description", "reasoning"}`` on stdout).

The script is JSON in ``FAKE_IMPROVER_JSON``: ``replies``, a list of descriptions, one per round (round ``k`` is
the request listing ``k`` candidates tried: the first lists the original);
``retry``, a list of the same length (or shorter) with the description given when the round's request says an
earlier reply was refused (``refused`` not empty); ``log``, a file to which each call appends the request it got
as one JSON line; ``hang``: true to sleep for ever (so a test can interrupt it); ``mode``: ``prose`` to reply
with text that holds no JSON object. A round past the end of ``replies`` repeats the last one.
"""

from __future__ import annotations

import json
import os
import sys
import time


def main() -> int:
    request = json.loads(sys.stdin.read())
    script = json.loads(os.environ.get("FAKE_IMPROVER_JSON") or "{}")
    if script.get("log"):
        with open(script["log"], "a") as log:
            log.write(json.dumps(request) + "\n")
    if script.get("hang"):
        time.sleep(600)
    if script.get("mode") == "prose":
        print("I think the description should mention invoices more.")
        return 0
    round_number = max(len(request.get("candidates", [])), 1)
    replies = script.get("replies") or ["a description"]
    pick = replies
    if request.get("refused") and script.get("retry"):
        pick = script["retry"]
    text = pick[min(round_number, len(pick)) - 1]
    print(json.dumps({"description": text, "reasoning": f"round {round_number}"}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
