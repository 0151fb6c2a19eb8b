"""A tiny HTTP skill server for the http adapter's ``start`` tests.

    python3 http_server.py --port N [--exit-code C] [--no-listen]

Writes its pid to $PID_FILE when set; answers GET /health and POST /invoke (echoing the input).
"""

import argparse
import json
import os
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Handler(BaseHTTPRequestHandler):
    def _send(self, status, body):
        payload = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def do_GET(self):  # noqa: N802
        self._send(200 if self.path == "/health" else 404, {"status": "ok"})

    def do_POST(self):  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self._send(200, {"result": body["input"], "pid": os.getpid(), "cwd": os.getcwd()})

    def log_message(self, format, *args):  # noqa: A002
        pass


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--exit-code", type=int)
    parser.add_argument("--no-listen", action="store_true")
    args = parser.parse_args()
    if os.environ.get("PID_FILE"):
        with open(os.environ["PID_FILE"], "w") as handle:
            handle.write(str(os.getpid()))
    if args.exit_code is not None:
        sys.stderr.write("http_server: failing on purpose\n")
        sys.exit(args.exit_code)
    if args.no_listen:
        time.sleep(60)
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    server.serve_forever()


if __name__ == "__main__":
    main()
