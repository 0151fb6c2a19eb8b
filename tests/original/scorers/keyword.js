// An ES module scorer: the default export is called with (output, expected), as the original calls it.
export default function (output, expected) {
  const text = typeof output === "object" ? JSON.stringify(output) : String(output);
  console.log("scoring", text); // printing must not disturb the harness
  const found = text.includes(expected.value);
  return { passed: found, score: found ? 1 : 0, reason: `${found ? "found" : "missing"} ${expected.value} (pid ${process.pid})` };
}
