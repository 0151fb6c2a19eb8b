"""The worker process of a Python custom scorer: ``python _pyworker.py <reply-fd> <scorer.py>``.

It speaks the scorer worker protocol (see :mod:`eval_skills.scoring.workers`): it loads the file, writes
``{"ready": true}`` (or ``{"loadError": "..."}`` and exits) to the reply descriptor, then answers each request
line read on stdin. Whatever the scorer does (``print``, ``sys.exit``, raising, returning something odd) is
turned into a reply; its output goes to this process's stdout and stderr, never into the protocol.

This file imports nothing of eval_skills, so it starts in a few milliseconds.
"""

import importlib.util
import json
import os
import signal
import sys


def _die_with_parent() -> None:
    """On Linux, be killed when the harness dies (even by SIGKILL), so no worker outlives it."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() == 1:  # the harness is already gone
        os._exit(0)


def describe(exc: BaseException) -> str:
    if isinstance(exc, SystemExit):
        return f"called sys.exit({exc.code!r})" if exc.code is not None else "called sys.exit()"
    if isinstance(exc, KeyboardInterrupt):
        return "raised KeyboardInterrupt"
    text = " ".join(str(exc).split())
    return f"raised {type(exc).__name__}: {text}" if text else f"raised {type(exc).__name__}"


def _plain(value: object) -> object:
    item = getattr(value, "item", None)  # numpy scalars and the like
    if callable(item):
        return item()
    raise TypeError(type(value).__name__)


def main() -> None:
    reply_fd, path = int(sys.argv[1]), sys.argv[2]
    replies = os.fdopen(reply_fd, "w", encoding="utf-8", errors="backslashreplace")

    def send(message: dict[str, object]) -> None:
        replies.write(json.dumps(message, default=_plain) + "\n")
        replies.flush()

    _die_with_parent()
    requests = os.fdopen(os.dup(0), "rb")  # the protocol's stdin; the scorer's stdin is empty
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    sys.stdin = open(os.devnull, encoding="utf-8")  # noqa: SIM115 - lives as long as the process
    sys.path[0] = os.path.dirname(os.path.abspath(path))  # the scorer's folder, not this one
    try:
        spec = importlib.util.spec_from_file_location("custom_scorer", path)
        if spec is None or spec.loader is None:
            send({"loadError": "is not a Python module"})
            return
        module = importlib.util.module_from_spec(spec)
        sys.modules["custom_scorer"] = module
        spec.loader.exec_module(module)
        score = getattr(module, "score", None)
    except BaseException as exc:  # noqa: BLE001 - user code: whatever it does is a reason to show
        send({"loadError": describe(exc) + " while loading"})
        return
    if not callable(score):
        send({"loadError": "has no score(output, expected, task) function"})
        return
    send({"ready": True})
    for line in requests:
        request = json.loads(line)
        rid = request.get("id")
        try:
            verdict = score(request.get("output"), request.get("expected"), request.get("task"))
        except BaseException as exc:  # noqa: BLE001
            send({"id": rid, "error": describe(exc)})
            continue
        try:
            send({"id": rid, "result": verdict})
        except Exception:  # noqa: BLE001 - not JSON: a set, an object, a cycle
            send({"id": rid, "error": f"returned a {type(verdict).__name__}; expected bool, number or "
                                      "{score, passed, reason}"})


if __name__ == "__main__":
    main()
