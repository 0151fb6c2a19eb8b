"""JUnit XML: one ``testsuite`` per skill, one ``testcase`` per task and run, so CI systems show results.

A ``fail`` is a ``<failure>`` with the scorer's reason, an ``error`` or ``timeout`` an ``<error>`` with the
error; the output follows in the element's text. Characters XML 1.0 cannot hold (control characters, lone
surrogates) are replaced with U+FFFD, so any skill output gives a well-formed file.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from typing import Any

from ._format import HTML_TEXT_LIMIT, compact_json, cut, mapping, num, tag_rows, tasks, text

__all__ = ["render_junit", "xml_text"]

_NOT_XML = re.compile("[^\u0009\u000a\u000d\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_text(value: Any, limit: int | None = None) -> str:
    body = text(value)
    if limit is not None:
        body = cut(body, limit)
    return _NOT_XML.sub("\ufffd", body)


def _seconds(latency_ms: Any) -> str:
    n = num(latency_ms)
    return f"{(n or 0.0) / 1000:.3f}"


def _suite(report: dict[str, Any]) -> ET.Element:
    results = tasks(report)
    summary = mapping(report.get("summary"))
    failures = sum(1 for t in results if t.get("status") == "fail")
    errors = sum(1 for t in results if t.get("status") not in ("pass", "fail"))
    total_ms = sum(num(t.get("latencyMs")) or 0.0 for t in results)
    suite = ET.Element("testsuite", {
        "name": xml_text(report.get("skillId")), "tests": str(len(results)), "failures": str(failures),
        "errors": str(errors), "skipped": "0", "time": _seconds(total_ms),
        "timestamp": xml_text(report.get("timestamp"))})
    props = ET.SubElement(suite, "properties")
    values = {"skillVersion": report.get("skillVersion"), "benchmarkId": report.get("benchmarkId"),
              **{key: summary.get(key) for key in ("completionRate", "partialScore", "errorRate",
                                                   "compositeScore")}}
    for tag in tag_rows(report):
        values[f"tag.{tag.get('tag')}.completionRate"] = tag.get("completionRate")
        values[f"tag.{tag.get('tag')}.partialScore"] = tag.get("partialScore")
    for name, value in values.items():
        ET.SubElement(props, "property", {"name": xml_text(name), "value": xml_text(value)})
    runs = num(report.get("runs")) or 1
    classname = ".".join(xml_text(p) for p in (report.get("skillId"), report.get("benchmarkId")) if p)
    for t in results:
        name = xml_text(t.get("taskId")) + (f" [run {xml_text(t.get('runId'))}]" if runs > 1 else "")
        case = ET.SubElement(suite, "testcase", {"classname": classname, "name": name,
                                                 "time": _seconds(t.get("latencyMs"))})
        status = t.get("status")
        output = compact_json(t.get("output"))
        if status == "fail":
            reason = xml_text(t.get("reason"), HTML_TEXT_LIMIT) or "did not pass"
            node = ET.SubElement(case, "failure", {"message": reason, "type": "fail"})
            node.text = f"score {text(t.get('score'))}: {reason}\noutput: {xml_text(output, HTML_TEXT_LIMIT)}"
        elif status != "pass":
            error = xml_text(t.get("error") or t.get("reason"), HTML_TEXT_LIMIT) or xml_text(status)
            node = ET.SubElement(case, "error", {"message": error, "type": xml_text(status) or "error"})
            node.text = error
    return suite


def render_junit(reports: Sequence[dict[str, Any]]) -> str:
    """The reports as one JUnit XML document (``<testsuites>``), UTF-8, ending in a newline."""
    root = ET.Element("testsuites", {"name": "eval-skills"})
    for report in reports:
        root.append(_suite(report))
    for key in ("tests", "failures", "errors"):
        root.set(key, str(sum(int(s.get(key) or 0) for s in root)))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
