"""Report writers: real files in tmp_path, every format, escaping of untrusted text."""

from __future__ import annotations

import csv
import io
import json
import re
import subprocess
import sys
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from eval_skills.errors import InputError
from eval_skills.reports import (
    CSV_COLUMNS,
    FORMATS,
    load_report_file,
    make_timestamp,
    render_csv,
    render_html,
    render_markdown,
    write_reports,
)
from eval_skills.results import TaskResult, Usage

XSS = "<script>alert(1)</script>"
XSS_ESCAPED = "&lt;script&gt;alert(1)&lt;/script&gt;"


def task(task_id: str, status: str = "pass", **kw: Any) -> dict[str, Any]:
    fields: dict[str, Any] = dict(task_id=task_id, skill_id="skill-1", run_id=1, status=status,
                                  score=1.0 if status == "pass" else 0.0, latency_ms=100.0,
                                  output={"result": "42"}, scorer_type="exact",
                                  reason="matched" if status == "pass" else "expected 42")
    fields.update(kw)
    return TaskResult(**fields).to_json()


def make_report(skill: str = "skill-1", tasks: list[dict[str, Any]] | None = None,
                **extra: Any) -> dict[str, Any]:
    report: dict[str, Any] = {
        "skillId": skill, "skillVersion": "1.0.0", "skillName": "Skill One", "benchmarkId": "bench-1",
        "benchmarkVersion": "2.0", "timestamp": "2026-11-29T19:46:15.123Z", "runs": 1,
        "summary": {"completionRate": 0.8, "partialScore": 0.75, "errorRate": 0.1, "consistencyScore": None,
                    "compositeScore": 0.8512, "totalTasks": 10, "passed": 8, "failed": 1, "errors": 1,
                    "timeouts": 0},
        "latency": {"p50Ms": 100, "p95Ms": 250.5, "p99Ms": 300},
        "tokenCost": {"promptTokens": 1000, "completionTokens": 500, "totalTokens": 1500},
        "taskResults": tasks if tasks is not None else [
            task("task-1", usage=Usage(10, 5, 15)),
            task("task-2", "fail", reason="expected 42 | got 41\nsecond line"),
            task("task-3", "error", output=None, error="boom", reason=""),
        ],
    }
    report.update(extra)
    return report


def hostile_report() -> dict[str, Any]:
    return make_report(
        skill="evil-skill",
        tasks=[task("t-out", "fail", skill_id="evil-skill", output={"result": XSS}, reason=XSS),
               task("t-err", "error", skill_id="evil-skill", output=XSS, error=XSS)])


def only_the_filter_script(page: str) -> bool:
    """The page's one script is the shipped filter, and the CSP allows it by hash and nothing else."""
    from eval_skills.reports.html import filter_script

    source, digest = filter_script()
    scripts = re.findall(r"<script[^>]*>(.*?)</script>", page, re.S)
    csp = re.search(r'Content-Security-Policy" content="([^"]+)"', page)
    return scripts == [source] and csp is not None and f"script-src {digest}" in csp.group(1) \
        and "unsafe-inline" not in csp.group(1).split("script-src")[1]


def test_formats_constant() -> None:
    assert FORMATS == ("json", "markdown", "html", "csv", "junit")


def test_all_formats_share_one_timestamp(tmp_path: Path) -> None:
    out = tmp_path / "new" / "reports"
    paths = write_reports([make_report()], FORMATS, out)
    assert [p.suffix for p in paths] == [".json", ".md", ".html", ".csv", ".xml"]
    stems = {p.stem for p in paths}
    assert len(stems) == 1
    (stem,) = stems
    assert re.fullmatch(r"eval-result-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z", stem)
    assert sorted(p.name for p in out.iterdir()) == sorted(p.name for p in paths)  # no temp files left
    for path in paths:
        assert path.stat().st_size > 0


def test_timestamp_format_and_given_timestamp(tmp_path: Path) -> None:
    when = datetime(2026, 11, 29, 19, 46, 15, 123456, tzinfo=UTC)
    assert make_timestamp(when) == "2026-11-29T19-46-15-123Z"
    paths = write_reports([make_report()], ["json", "md"], tmp_path, timestamp="2026-11-29T19:46:15.123Z")
    assert [p.name for p in paths] == ["eval-result-2026-11-29T19-46-15-123Z.json",
                                       "eval-result-2026-11-29T19-46-15-123Z.md"]


def test_same_millisecond_gets_a_suffix_and_never_overwrites(tmp_path: Path) -> None:
    stamp = "2026-11-29T19-46-15-123Z"
    first = write_reports([make_report()], ["json", "csv"], tmp_path, timestamp=stamp)
    first_text = first[0].read_text(encoding="utf-8")
    second = write_reports([make_report(skill="other")], ["json", "csv"], tmp_path, timestamp=stamp)
    third = write_reports([make_report()], ["csv"], tmp_path, timestamp=stamp)
    assert [p.name for p in second] == [f"eval-result-{stamp}_1.json", f"eval-result-{stamp}_1.csv"]
    assert [p.name for p in third] == [f"eval-result-{stamp}_2.csv"]
    assert first[0].read_text(encoding="utf-8") == first_text
    names = sorted(p.name for p in tmp_path.glob("*.json"))
    assert names == [first[0].name, second[0].name]  # still sorted oldest first


def test_json_round_trip(tmp_path: Path) -> None:
    reports = [make_report(extraKey={"kept": True}), make_report(skill="skill-2", tokenCost=None)]
    reports[0]["taskResults"][0]["output"] = {"text": "héllo ✓"}
    (path,) = write_reports(reports, ["json"], tmp_path)
    text = path.read_text(encoding="utf-8")
    assert "héllo ✓" in text and text.startswith('[\n  {\n    "skillId"')
    loaded = json.loads(text)
    assert loaded == reports
    assert set(loaded[0]["taskResults"][0]) == {
        "taskId", "skillId", "runId", "status", "score", "latencyMs", "output", "error", "scorerType",
        "reason", "usage", "attempts"}
    assert load_report_file(path) == reports


def test_load_report_file(tmp_path: Path) -> None:
    single = tmp_path / "single.json"
    single.write_text(json.dumps(make_report()), encoding="utf-8")
    assert load_report_file(single) == [make_report()]

    broken = tmp_path / "broken.json"
    broken.write_text('[{"skillId": "x",', encoding="utf-8")
    with pytest.raises(InputError, match="broken.json: invalid JSON"):
        load_report_file(broken)
    with pytest.raises(InputError, match="file not found"):
        load_report_file(tmp_path / "missing.json")

    cases = (("42", r"\$"), ("[1]", r"\$\[0\]"), ('[{"skillId": "a"}, {"x": 1}]', r"\$\[1\]\.skillId"),
             ('{"skillId": 3}', r"\$\.skillId"))
    for content, where in cases:
        bad = tmp_path / "bad.json"
        bad.write_text(content, encoding="utf-8")
        with pytest.raises(InputError, match=f"bad.json: {where}"):
            load_report_file(bad)


def test_markdown_numbers_and_failures() -> None:
    md = render_markdown([make_report(), make_report(skill="skill-2", tokenCost=None,
                                                     summary={"consistencyScore": 0.95})])
    assert md.startswith("# eval-skills Report\n")
    assert "bench-1 2.0" in md
    row = next(line for line in md.splitlines() if line.startswith("| skill-1 |"))
    cells = [c.strip() for c in row.strip("|").split(" | ")]
    assert cells == ["skill-1", "1.0.0", "80.0%", "75.0%", "10.0%", "n/a", "100.0", "250.5", "300.0",
                     "0.8512", "1,500"]
    row2 = next(line for line in md.splitlines() if line.startswith("| skill-2 |"))
    assert "95.0%" in row2 and row2.rstrip().endswith("| n/a | n/a |")  # no composite, no tokens
    assert "10 tasks, 1 run(s): 8 passed, 1 failed, 1 errors, 0 timeouts." in md
    # the failing and erroring tasks are listed with why; the passing one is not
    assert "| task-2 | 1 | fail | 0.0000 | expected 42 \\| got 41<br>second line |  |" in md
    assert "| task-3 | 1 | error | 0.0000 |  | boom |" in md
    assert "| task-1 |" not in md
    for line in md.splitlines():
        if line.startswith("| task-"):  # every task row has exactly six unescaped cells
            assert len(re.split(r"(?<!\\)\|", line)) == 8


def test_markdown_escapes_html_and_handles_empty() -> None:
    md = render_markdown([hostile_report()])
    assert XSS not in md and XSS_ESCAPED in md
    assert "No skills were evaluated." in render_markdown([])
    assert "All tasks passed." in render_markdown([make_report(tasks=[task("ok")])])


def test_html_escapes_untrusted_text(tmp_path: Path) -> None:
    report = hostile_report()
    report["skillId"] = "<b>evil</b>"
    page = render_html([report])
    assert "<script>alert" not in page and only_the_filter_script(page)
    assert "<b>evil</b>" not in page and "&lt;b&gt;evil&lt;/b&gt;" in page
    # from an output (inside JSON text), from a reason and from an error
    assert page.count(XSS_ESCAPED) >= 3
    assert "&#34;result&#34;:&#34;&lt;script&gt;" in page  # the JSON output, escaped
    (path,) = write_reports([report], ["html"], tmp_path)
    text = path.read_text(encoding="utf-8")
    assert "<script>alert" not in text and XSS_ESCAPED in text


def test_html_page_is_self_contained() -> None:
    long_output = {"result": "x" * 5000}
    report = make_report(tasks=[task("long", output=long_output), task("bad", "fail")])
    page = render_html([report])
    assert page.startswith("<!DOCTYPE html>") and "<style>" in page
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page)  # no external assets
    assert "<link" not in page and only_the_filter_script(page)
    for expected in ("skill-1", "1.0.0", "80.0%", "0.8512", "1,500", "n/a", "long", "bad", "expected 42"):
        assert expected in page
    # output shown as JSON cut at 300 characters: '{"result":"' and 289 x's
    assert "x" * 289 + "… (" in page and "x" * 290 not in page
    assert "No skills were evaluated." in render_html([])


def test_csv_parses_back(tmp_path: Path) -> None:
    report = make_report()
    report["taskResults"].append(task("task-4", "fail", reason="=HYPERLINK(\"http://x\")",
                                      output={"text": 'a,"b"\nc'}))
    (path,) = write_reports([report, make_report(skill="skill-2", tasks=[])], ["csv"], tmp_path)
    with path.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert tuple(rows[0]) == CSV_COLUMNS
    assert [r["taskId"] for r in rows] == ["task-1", "task-2", "task-3", "task-4"]
    first = rows[0]
    assert (first["skillId"], first["skillVersion"], first["benchmarkId"]) == ("skill-1", "1.0.0", "bench-1")
    assert [first[k] for k in ("runId", "status", "score", "latencyMs")] == ["1", "pass", "1.0", "100.0"]
    assert json.loads(first["output"]) == {"result": "42"} and first["output"] == '{"result":"42"}'
    assert rows[1]["reason"] == "expected 42 | got 41\nsecond line"
    assert rows[2]["error"] == "boom" and rows[2]["output"] == "null"
    assert json.loads(rows[3]["output"]) == {"text": 'a,"b"\nc'}
    assert rows[3]["reason"] == "'=HYPERLINK(\"http://x\")"  # not run as a formula by a spreadsheet
    assert render_csv([]).strip() == ",".join(CSV_COLUMNS)


def test_csv_escapes_control_characters_as_the_terminal_does() -> None:
    report = make_report(tasks=[task("t\x00id", "error", error="\x1b[31mred\x1b[0m\tend\r",
                                     reason="-\u202eevil\nline", output={"text": "\x9b2J\u2028"})])
    (row,) = list(csv.DictReader(io.StringIO(render_csv([report]))))
    assert row["taskId"] == "t\\x00id"
    assert row["error"] == "\\x1b[31mred\\x1b[0m\\x09end\\x0d"
    assert row["reason"] == "'-\\u202eevil\nline"  # a line feed stays; still never a formula
    assert row["output"] == '{"text":"\\x9b2J\\u2028"}'
    assert not any(ch in "".join(row.values()) for ch in "\x00\x1b\x9b\r\t\u202e\u2028")


def test_unknown_format_writes_nothing(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="unknown report format 'pdf'") as exc:
        write_reports([make_report()], ["json", "pdf"], tmp_path / "out")
    assert "json, markdown, html, csv" in str(exc.value)
    assert not (tmp_path / "out").exists()
    assert write_reports([make_report()], [], tmp_path / "out") == []


def test_aliases_and_duplicates(tmp_path: Path) -> None:
    paths = write_reports([make_report()], ["MD", "markdown", "json"], tmp_path)
    assert [p.suffix for p in paths] == [".md", ".json"]


def test_odd_values_render_gracefully() -> None:
    odd = {"skillId": "odd", "summary": {"completionRate": "high", "compositeScore": float("nan")},
           "latency": None, "taskResults": [{"taskId": "t", "status": "weird", "output": {1, 2}}, "junk"],
           "unknown": object()}
    md = render_markdown([odd])
    assert "| odd |" in md and "n/a" in md
    assert "weird" in render_html([odd])
    assert "weird" in render_csv([odd])


def test_importing_reports_does_not_import_jinja2() -> None:
    code = "import sys, eval_skills.reports; print('jinja2' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_markdown_matches_csv_row_count() -> None:
    reports = [make_report()]
    assert len(list(csv.reader(io.StringIO(render_csv(reports))))) == 1 + len(reports[0]["taskResults"])


def test_racing_writers_in_one_millisecond_never_collide(tmp_path: Path) -> None:
    stamp = "2026-11-29T19-46-15-123Z"
    written: list[list[Path]] = []
    errors: list[BaseException] = []

    def write(i: int) -> None:
        try:
            written.append(write_reports([make_report(skill=f"s{i}")], ["json", "md"], tmp_path,
                                         timestamp=stamp))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len({paths[0].stem for paths in written}) == 8  # eight stems, each with both files
    for json_path, md_path in written:
        assert json_path.stem == md_path.stem
        skill = json.loads(json_path.read_text(encoding="utf-8"))[0]["skillId"]
        assert f"## {skill} " in md_path.read_text(encoding="utf-8")
    assert len(list(tmp_path.iterdir())) == 16
