"""The capitals tool skill: a small HTTP server (standard library only) answering country facts.

    POST /invoke  {"skillId", "version", "input": {...}}  ->  {"result": "<answer>", ...}
    GET  /health                                          ->  {"status": "ok"}

``input`` is one of:
    {"country": "France"}                          -> "Paris"
    {"country": "France", "field": "currency"}     -> "Euro"       (field: capital, continent, currency)
    {"capital": "Paris"}                           -> "France"
    {"question": "What is the capital of Japan?"}  -> "Tokyo"      (also "Which country has the capital ...")

An unknown country or capital is HTTP 404 with a JSON error; a malformed request is HTTP 400.
Usage: python3 server.py [--port 18765] [--host 127.0.0.1]; the data is countries.json beside this file.
"""

import argparse
import json
import re
import unicodedata
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

FIELDS = ("capital", "continent", "currency")
DATA = json.loads((Path(__file__).parent / "countries.json").read_text(encoding="utf-8"))


def _key(name):
    """Case-, accent- and punctuation-insensitive form of a name."""
    text = unicodedata.normalize("NFKD", str(name)).encode("ascii", "ignore").decode().lower()
    text = re.sub(r"[^a-z0-9 ]+", " ", text)
    return " ".join(word for word in text.split() if word != "the")


BY_COUNTRY = {_key(row["country"]): row for row in DATA}
BY_CAPITAL = {_key(row["capital"]): row for row in DATA}
ALIASES = {"usa": "united states", "us": "united states", "united states of america": "united states",
           "uk": "united kingdom", "great britain": "united kingdom", "britain": "united kingdom",
           "korea": "south korea", "republic of korea": "south korea"}


class NotFound(LookupError):
    pass


def country(name):
    key = _key(name)
    row = BY_COUNTRY.get(ALIASES.get(key, key))
    if row is None:
        raise NotFound(f"unknown country: {name}")
    return row


def answer(data):
    if not isinstance(data, dict):
        raise ValueError("input must be an object")
    question = data.get("question")
    if isinstance(question, str):
        text = question.strip().rstrip("?").strip()
        match = re.search(r"(capital|continent|currency) (?:city )?(?:of|in|for) (.+)$", text, re.I)
        if match:
            data = {"country": match.group(2), "field": match.group(1).lower()}
        else:
            match = re.search(r"(?:country|nation) (?:has|with) (?:the )?capital (?:city )?(.+)$", text, re.I)
            if not match:
                raise ValueError("cannot understand the question; ask for the capital, continent or "
                                 "currency of a country, or which country has a given capital")
            data = {"capital": match.group(1)}
    if "capital" in data and "country" not in data:
        row = BY_CAPITAL.get(_key(data["capital"]))
        if row is None:
            raise NotFound(f"unknown capital: {data['capital']}")
        return {"result": row["country"], "country": row["country"], "capital": row["capital"]}
    if "country" not in data:
        raise ValueError("give 'country', 'capital' or 'question'")
    field = data.get("field", "capital")
    if field not in FIELDS:
        raise ValueError(f"field must be one of {', '.join(FIELDS)}")
    row = country(data["country"])
    return {"result": row[field], "country": row["country"], "field": field}


class Handler(BaseHTTPRequestHandler):
    server_version = "capitals/1.0"

    def _send(self, status, body):
        payload = json.dumps(body, ensure_ascii=False).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def do_GET(self):  # noqa: N802 - the http.server naming
        if self.path.rstrip("/") in ("", "/health"):
            self._send(200, {"status": "ok", "countries": len(DATA)})
        else:
            self._send(404, {"error": f"no such path: {self.path}"})

    def do_POST(self):  # noqa: N802
        if self.path.rstrip("/") != "/invoke":
            self._send(404, {"error": f"no such path: {self.path}"})
            return
        try:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"null")
            if not isinstance(body, dict) or "input" not in body:
                raise ValueError('the body must be {"skillId", "version", "input"}')
            self._send(200, answer(body["input"]))
        except NotFound as exc:
            self._send(404, {"error": str(exc)})
        except ValueError as exc:
            self._send(400, {"error": str(exc)})

    def log_message(self, format, *args):  # noqa: A002 - quiet: eval-skills keeps only the tail
        pass


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=18765)
    parser.add_argument("--host", default="127.0.0.1")
    args = parser.parse_args()
    server = ThreadingHTTPServer((args.host, args.port), Handler)
    server.daemon_threads = True
    print(f"capitals: listening on http://{args.host}:{server.server_port}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
