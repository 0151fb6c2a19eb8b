"""A tool skill that misbehaves on request, for end-to-end tests. Speaks JSON-RPC on stdin/stdout.

inputData {"do": ...}: ok, crash, exit3, hang, nonjson, rpcerror, huge, closeout, slowok.
Works one-shot (one request then EOF) and persistent (one request per line).
"""

import json
import os
import sys
import time


def answer(req):
    do = req["params"].get("do")
    rid = req["id"]
    if do == "crash":
        raise RuntimeError("chaos: crashed on purpose")
    if do == "exit3":
        sys.stderr.write("chaos: giving up\n")
        sys.stderr.flush()
        os._exit(3)
    if do == "hang":
        time.sleep(3600)
    if do == "nonjson":
        sys.stdout.write("this is not json\n")
        sys.stdout.flush()
        return
    if do == "rpcerror":
        reply = {"jsonrpc": "2.0", "id": rid, "error": {"code": -32000, "message": "chaos: refused"}}
    elif do == "huge":
        sys.stdout.write("x" * (50 * 1024 * 1024) + "\n")
        sys.stdout.flush()
        return
    elif do == "closeout":
        sys.stdout.flush()
        os.close(1)
        time.sleep(3600)
    else:
        if do == "slowok":
            time.sleep(0.2)
        reply = {"jsonrpc": "2.0", "id": rid, "result": {"result": req["params"].get("value", "ok")}}
    print("log: handling", rid, flush=True)
    print(json.dumps(reply), flush=True)


for line in sys.stdin:
    if line.strip():
        answer(json.loads(line))
