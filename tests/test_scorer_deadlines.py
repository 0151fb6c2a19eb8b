"""A scoring deadline is the scorer's own time on one task: calls of a custom scorer that hang never make the
other tasks' calls of the same scorer late (they are not queued behind them), in Python and in JavaScript.
Real worker processes, through `eval-skills eval`."""

import json
import shutil

import pytest
from test_cli_eval import cli
from test_hardening_cli import tasks_file

PYTHON = """
import time
def score(output, expected, task):
    if task["inputData"]["k"] == "slow":
        time.sleep(30)
    return True
"""

JAVASCRIPT = """
export default function (output, expected, task) {
  const k = task.inputData.k;
  if (k === "slow") { while (true) {} }
  if (k === "nan") return { passed: true, score: NaN };
  return true;
}
"""


@pytest.mark.parametrize("suffix", [".py", ".mjs"])
def test_calls_that_hang_never_make_the_other_calls_of_their_scorer_late(tmp_path, suffix):
    if suffix == ".mjs" and shutil.which("node") is None:
        pytest.skip("node is not installed")
    (tmp_path / f"scorer{suffix}").write_text(PYTHON if suffix == ".py" else JAVASCRIPT)
    skill = tmp_path / "echo"
    skill.mkdir()
    (skill / "skill.json").write_text(json.dumps({"id": "echo", "version": "1.0.0", "adapterType": "custom",
                                                  "entrypoint": "mod:echo"}))
    (skill / "mod.py").write_text("def echo(data):\n    return data\n")
    kinds = ["slow"] * 5 + ["fast"] * 3 + (["nan"] if suffix == ".mjs" else [])
    tasks = tasks_file(tmp_path, [{"id": f"{i}-{k}", "inputData": {"k": k}, "evaluator": {"type": "custom"},
                                   "expectedOutput": {"customScorerPath": f"scorer{suffix}"}}
                                  for i, k in enumerate(kinds)])
    out = cli("eval", "--skills", skill, "--tasks", tasks, "--concurrency", "9", "--scorer-timeout", "2000", "--json",
              "--format", "json", "--output-dir", tmp_path / "r", "--no-store", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    (report,) = json.loads(out.stdout)["reports"]
    name = f"custom scorer scorer{suffix}"
    expected = {"slow": ("error", f"{name} did not return within 2s (its process was stopped)"),
                "fast": ("pass", None),
                "nan": ("error", f"{name} returned score NaN; expected a number from 0 to 1")}
    assert [(r["status"], r["error"]) for r in report["taskResults"]] == [expected[k] for k in kinds]
