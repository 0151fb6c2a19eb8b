"""A JSON-RPC skill that misbehaves on request, for the subprocess adapter's tests.

The behaviour is ``params["do"]`` (else the first command-line argument, else "ok"):
ok, usage, crash, exit3, hang, slow, nonjson, rpcerror, nullid, huge, hugejson, manylines, closeout,
die, stale, tworeplies, linger, deep, surrogate, nan, replyexit3, stringid, detach, detachhang, hold, answer,
bigint, unfinished, unfinisheddie, stringiddie
(replies {"result": params["value"]}).
Works one-shot (one request, then EOF) and persistent (one request per line).
"""

import json
import os
import subprocess
import sys
import time

DEFAULT = sys.argv[1] if len(sys.argv) > 1 else "ok"
out = sys.stdout
held = []  # "hold": a reply sent after the next request's, so replies come out of order


def send(message):
    out.write(json.dumps(message) + "\n")
    out.flush()


def log(text):
    out.write(text + "\n")
    out.flush()


def handle(request):
    params = request.get("params") or {}
    rid = request.get("id")
    do = params.get("do", DEFAULT) if isinstance(params, dict) else DEFAULT
    log(f"log: request {rid} do={do}")
    sys.stderr.write(f"stderr: handling {rid}\n")
    sys.stderr.flush()
    if do == "crash":
        raise RuntimeError("boom on purpose")
    if do == "exit3":
        sys.stderr.write("giving up\n")
        sys.stderr.flush()
        os._exit(3)
    if do == "die":
        os._exit(5)
    if do == "hang":
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        if "pid_file" in params:
            with open(params["pid_file"], "w") as handle_:
                handle_.write(f"{os.getpid()} {child.pid}")
        time.sleep(60)
    if do == "slow":
        time.sleep(float(params.get("seconds", 0.2)))
    if do == "nonjson":
        log("this is not json")
        log("{broken json")
        log('{"json": "but not a reply"}')
        return
    if do == "rpcerror":
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32001, "message": "refused on purpose"}})
        return
    if do == "nullid":
        send({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error"}})
        return
    if do == "huge":
        out.write("x" * (50 << 20) + "\n")
        out.flush()
    if do == "hugejson":
        out.write('{"jsonrpc": "2.0", "id": ' + str(rid) + ', "result": "' + "y" * (50 << 20) + '"}\n')
        out.flush()
    if do == "manylines":
        line = "z" * (64 << 10) + "\n"
        for _ in range(800):
            out.write(line)
        out.flush()
    if do == "closeout":
        out.close()
        os.close(1)
        time.sleep(30)
    if do == "stale":
        send({"jsonrpc": "2.0", "id": rid - 1, "result": "stale"})
        send({"jsonrpc": "2.0", "id": rid + 1000, "error": {"code": 1, "message": "someone else's"}})
    if do == "answer":
        send({"jsonrpc": "2.0", "id": rid, "result": {"result": params.get("value")}})
        return
    if do == "deep":
        out.write('{"jsonrpc": "2.0", "id": ' + str(rid) + ', "result": ' + "[" * 100000 + "]" * 100000 + "}\n")
        out.flush()
        return
    if do == "surrogate":
        send({"jsonrpc": "2.0", "id": rid, "result": {"text": "lone \ud800 surrogate", "\udfff": 1}})
        return
    if do == "nan":
        send({"jsonrpc": "2.0", "id": rid, "result": float("nan")})
        return
    if do == "replyexit3":
        send({"jsonrpc": "2.0", "id": rid, "result": {"echo": params}})
        sys.stderr.write("failed after all\n")
        sys.stderr.flush()
        os._exit(3)
    if do == "stringid":
        send({"jsonrpc": "2.0", "id": str(rid), "result": {"echo": params}})
        return
    if do in ("detach", "detachhang"):  # a descendant in a session of its own keeps stdout open
        child = subprocess.Popen(["setsid", "sleep", "780"], stdin=subprocess.DEVNULL)
        if "pid_file" in params:
            with open(params["pid_file"], "w") as handle_:
                handle_.write(str(child.pid))
        if do == "detachhang":
            time.sleep(60)
        os._exit(0)
    if do == "bigint":
        out.write('{"jsonrpc": "2.0", "id": ' + str(rid) + ', "result": ' + "9" * 5000 + "}\n")
        out.flush()
        return
    if do in ("unfinished", "unfinisheddie"):  # a reply cut off before its newline
        out.write('{"jsonrpc": "2.0", "id": ' + str(rid) + ', "result": {"half')
        out.flush()
        if do == "unfinisheddie":
            os._exit(2)
        time.sleep(60)
    if do == "stringiddie":
        send({"jsonrpc": "2.0", "id": str(rid), "result": {"echo": params}})
        os._exit(4)
    if do == "hold":
        held.append({"jsonrpc": "2.0", "id": rid, "result": {"echo": params}})
        return
    if do == "tworeplies":
        send({"jsonrpc": "2.0", "id": rid, "result": "first"})
        send({"jsonrpc": "2.0", "id": rid, "result": "second"})
        return
    reply = {"jsonrpc": "2.0", "id": rid,
             "result": {"echo": params, "id": rid, "pid": os.getpid(), "cwd": os.getcwd(),
                        "exe": sys.executable, "env": dict(os.environ)}}
    if do == "usage":
        reply["usage"] = {"prompt_tokens": 11, "completion_tokens": 7}
    send(reply)
    while held:
        send(held.pop())
    if do == "linger":
        time.sleep(30)


for raw in sys.stdin:
    if raw.strip():
        handle(json.loads(raw))
