// The worker that runs a JavaScript custom scorer for eval-skills, one process per scorer file.
//
//     node _jsworker.mjs <reply-fd> <scorer-file>
//
// Protocol (JSON lines): after loading the scorer it writes {"ready": true} (or {"loadError": "..."} and exits)
// to the file descriptor <reply-fd>; then for each request line on stdin, {"id", "output", "expected", "task"},
// it writes {"id", "result"} or {"id", "error"} there. What the scorer prints goes to this process's stdout and
// stderr, never into the protocol. The end of stdin means exit.
//
// The scorer is a module, ES or CommonJS, as the original eval-skills runs it: its default export (or an export
// named `score`) is called as fn(output, expected, task) and may return a promise. Its verdict is read as the
// original reads it: a boolean; a number, clamped to [0, 1] (passing at 1); an object {passed, score, reason}
// (a missing score is 1 when passed, else 0). Anything else is that task's error.

import { writeSync } from "node:fs";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";

const replyFd = Number(process.argv[2]);
const scorerPath = process.argv[3];

function send(message) {
  const data = Buffer.from(JSON.stringify(message) + "\n", "utf8");
  let offset = 0;
  while (offset < data.length) {
    offset += writeSync(replyFd, data, offset, data.length - offset);
  }
}

function describe(error) {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  try {
    return JSON.stringify(error);
  } catch {
    return String(error);
  }
}

function verdict(result) {
  if (typeof result === "boolean") return result;
  if (typeof result === "number") {
    if (Number.isNaN(result)) throw new Error("returned NaN; expected a boolean, a number or {passed, score, reason}");
    return Math.max(0, Math.min(1, result));
  }
  if (typeof result === "object" && result !== null && !Array.isArray(result)) {
    const passed = Boolean(result.passed);
    if (typeof result.score === "number" && !Number.isFinite(result.score)) {
      throw new Error(`returned score ${result.score}; expected a number from 0 to 1`);  // JSON would make it null
    }
    const out = { score: typeof result.score === "number" ? result.score : passed ? 1 : 0, passed };
    if (result.reason !== undefined && result.reason !== null) out.reason = String(result.reason);
    return out;
  }
  const kind = result === null ? "null" : Array.isArray(result) ? "an array" : typeof result;
  throw new Error(`returned ${kind}; expected a boolean, a number or {passed, score, reason}`);
}

let scorer;
try {
  const loaded = await import(pathToFileURL(scorerPath).href);
  const candidates = [loaded.default, loaded.score, loaded.default && loaded.default.score];
  scorer = candidates.find((candidate) => typeof candidate === "function");
  if (!scorer) {
    throw new Error("exports no function: write `export default function (output, expected) { ... }` " +
      "or `module.exports = function (output, expected) { ... }`");
  }
} catch (error) {
  send({ loadError: `failed to load: ${describe(error)}` });
  process.exit(0);
}
send({ ready: true });

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
  if (!line.trim()) continue;
  let request;
  try {
    request = JSON.parse(line);
  } catch (error) {
    send({ id: null, error: `received a request that is not JSON (${describe(error)})` });
    continue;
  }
  let result;
  try {
    result = await scorer(request.output, request.expected, request.task);
  } catch (error) {
    send({ id: request.id, error: `threw ${describe(error)}` });
    continue;
  }
  try {
    send({ id: request.id, result: verdict(result) });
  } catch (error) {
    send({ id: request.id, error: error instanceof Error ? error.message : describe(error) });
  }
}
process.exit(0);
