// A CommonJS scorer returning each kind of verdict the original accepts, chosen by the output's "kind".
module.exports = async function (output) {
  await new Promise((resolve) => setTimeout(resolve, 1));
  switch (output.kind) {
    case "true": return true;
    case "false": return false;
    case "big": return 1.5;       // clamped to 1: a pass
    case "half": return 0.5;      // a partial score, not a pass
    case "negative": return -3;   // clamped to 0
    case "passed-only": return { passed: true };
    case "failed-only": return { passed: false, reason: "not good" };
    case "score-only": return { score: 0.8 };   // passed is false when not given
    case "score-out": return { passed: true, score: 5 };  // the original would take 5 as the task's score
    case "nan": return NaN;
    case "string": return "yes";
    case "throw": throw new Error("scorer bug");
    case "spin": for (;;) {}
    default: return null;
  }
};
