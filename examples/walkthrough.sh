#!/usr/bin/env bash
# The offline walkthrough of instruction skills: paired, view and routing on a bundled skill, with no model
# and no key. Run it from anywhere: bash examples/walkthrough.sh [OUTPUT-FOLDER] (default ./walkthrough-output).
set -euo pipefail
here="$(cd "$(dirname "$0")/walkthrough" && pwd)"
out="${1:-walkthrough-output}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
python="${PYTHON:-python3}"
agent="$python $here/stand_in_agent.py --prompt-file {prompt_file}"
judge="$python $here/stand_in_judge.py"

cat <<'NOTE'
The agent and the judge in this walkthrough are stand-ins, not a real agent or model: the agent replays
answers written by hand (examples/walkthrough/answers.json), better ones when the skill is installed, and
the judge checks quoted phrases. The figures below show how eval-skills measures a skill, not how good the
skill is. For real figures, give --agent claude (or codex, opencode, openai) and --judge anthropic or openai.
NOTE

echo
echo "== 1. paired: every eval case run with and without the skill, graded, compared blind"
eval-skills paired --skill-path "$here/commit-subject" --workspace "$out/commit-subject-workspace" \
  --agent-cmd "$agent" --agent-output events --judge-cmd "$judge" \
  --runs 2 --store "$out/eval-skills.db"

echo
echo "== 2. view: the review page, written as one self-contained file (without --static it is served)"
eval-skills view "$out/commit-subject-workspace" --static "$out/review.html"

echo
echo "== 3. routing: does the agent reach for the skill when it should, and only then?"
eval-skills routing --skill-path "$here/commit-subject" --workspace "$out/commit-subject-workspace" \
  --agent-cmd "$agent" --agent-output events --runs 2 --store "$out/eval-skills.db"

echo
echo "Open $out/review.html in a browser; benchmark.md and routing.md are in $out/commit-subject-workspace/."
