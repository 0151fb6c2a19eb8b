"""JUnit XML of fixture checks, paired runs and routing tests (``--format junit``), as :mod:`.junit` is of
tool-skill evaluations: one ``testcase`` per fixture task, per assertion of a ``with_skill`` run, per routing
query, plus one per quality gate; a failure carries its reason; every text is XML-safe (control characters
and lone surrogates replaced, see :func:`.junit.xml_text`).

They read the JSON each command writes (``fixtures --json``, ``benchmark.json``, ``routing_results.json``),
so a saved file renders the same.

Paired runs: a baseline arm that fails is what the delta measures, not a fault, so its runs are counted in
the suite's properties and only its error runs (the agent failed) are test cases.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ._format import HTML_TEXT_LIMIT, mapping, num, text
from .junit import xml_text

__all__ = ["JUnitCase", "JUnitSuite", "fixtures_junit", "paired_junit", "render_suites", "routing_junit"]


@dataclass(frozen=True, slots=True)
class JUnitCase:
    name: str
    classname: str
    seconds: float = 0.0
    failure: str | None = None  # the reason it failed
    error: str | None = None  # the reason it could not be judged
    skipped: str | None = None
    output: str = ""


@dataclass
class JUnitSuite:
    name: str
    cases: list[JUnitCase] = field(default_factory=list)
    properties: dict[str, Any] = field(default_factory=dict)


def _first(reason: str) -> str:
    line = next((part.strip() for part in reason.splitlines() if part.strip()), "")
    return xml_text(line, 500)


def _suite(suite: JUnitSuite) -> ET.Element:
    cases = suite.cases
    node = ET.Element("testsuite", {
        "name": xml_text(suite.name), "tests": str(len(cases)),
        "failures": str(sum(c.failure is not None for c in cases)),
        "errors": str(sum(c.failure is None and c.error is not None for c in cases)),
        "skipped": str(sum(c.failure is None and c.error is None and c.skipped is not None for c in cases)),
        "time": f"{sum(c.seconds for c in cases):.3f}"})
    if suite.properties:
        props = ET.SubElement(node, "properties")
        for name, value in suite.properties.items():
            ET.SubElement(props, "property", {"name": xml_text(name), "value": xml_text(value)})
    for c in cases:
        case = ET.SubElement(node, "testcase", {"classname": xml_text(c.classname), "name": xml_text(c.name),
                                                "time": f"{c.seconds:.3f}"})
        for tag, reason in (("failure", c.failure), ("error", c.error), ("skipped", c.skipped)):
            if reason is not None:
                child = ET.SubElement(case, tag, {"message": _first(reason) or tag, "type": tag})
                child.text = xml_text(reason, HTML_TEXT_LIMIT)
                break
        if c.output:
            ET.SubElement(case, "system-out").text = xml_text(c.output, HTML_TEXT_LIMIT)
    return node


def render_suites(suites: Sequence[JUnitSuite], name: str = "eval-skills") -> str:
    """The suites as one JUnit XML document (``<testsuites>``), ending in a newline."""
    root = ET.Element("testsuites", {"name": xml_text(name)})
    for suite in suites:
        root.append(_suite(suite))
    for key in ("tests", "failures", "errors", "skipped"):
        root.set(key, str(sum(int(s.get(key) or 0) for s in root)))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _quote(value: Any) -> str:
    import json

    return json.dumps(value, ensure_ascii=False) if isinstance(value, str) else text(value)


def fixtures_junit(report: dict[str, Any]) -> str:
    """``fixtures --json``'s report: a suite per skill, a case per task (its failed checks, or its missing
    file, as the failure), and a case per problem with the fixtures (an error when checking worked examples;
    skipped, as it does not count, when scoring answers)."""
    suites = []
    examples = report.get("mode") == "examples"
    problems = [mapping(p) for p in report.get("problems") or []]
    for skill in report.get("skills") or []:
        name = text(skill.get("skill"))
        suite = JUnitSuite(f"fixtures.{name}", properties={"score": skill.get("score"), "passed": skill.get("passed"),
                                                           "total": skill.get("total")})
        for task in skill.get("tasks") or []:
            failed = [c for c in task.get("checks") or [] if not c.get("passed")]
            if task.get("missing"):
                reason: str | None = f"missing file {text(task.get('file'))}"
            elif failed:
                reason = "\n".join(f"{text(c.get('kind'))} {_quote(c.get('value'))}: {text(c.get('evidence'))}"
                                   for c in failed)
            else:
                reason = None
            suite.cases.append(JUnitCase(text(task.get("id")), f"fixtures.{name}", failure=reason,
                                         output=f"file {text(task.get('file'))}"))
        for p in problems:
            if p.get("skill") == skill.get("skill"):
                label = text(p.get("kind")) + (f" ({text(p.get('task'))})" if p.get("task") else "")
                message = text(p.get("message"))
                suite.cases.append(JUnitCase(f"fixture problem: {label}", f"fixtures.{name}",
                                             error=message if examples else None,
                                             skipped=None if examples else f"not counted: {message}"))
        suites.append(suite)
    gate = JUnitSuite("fixtures", properties={"min_score": report.get("min_score")})
    overall = mapping(report.get("overall"))
    verdict = f"overall score {text(overall.get('score'))}, min score {text(report.get('min_score'))}"
    gate.cases.append(JUnitCase("overall score", "fixtures", failure=None if report.get("ok") else
                                f"FAIL: {verdict}", output=verdict))
    return render_suites([*suites, gate])


def _gate_case(classname: str, passed: bool, verdict: str, failures: Sequence[str]) -> JUnitCase:
    return JUnitCase("quality gates", classname, failure=None if passed else "; ".join(failures) or verdict,
                     output=verdict)


def paired_junit(benchmark: dict[str, Any], *, skill: str, passed: bool, failures: Sequence[str] = ()) -> str:
    """``benchmark.json``: a suite per arm. ``with_skill``: a case per assertion of each run (its evidence as
    the failure's text), or one error case for a run that failed. The baseline arm: error runs only. Then
    one case for the quality gates, with the verdict."""
    runs = [mapping(r) for r in benchmark.get("runs") or []]
    summary = mapping(benchmark.get("run_summary"))
    arms = list(dict.fromkeys(text(r.get("configuration")) for r in runs)) or ["with_skill"]
    suites = []
    for arm in arms:
        classname = f"paired.{skill}.{arm}"
        rate = mapping(mapping(summary.get(arm)).get("pass_rate")).get("mean")
        suite = JUnitSuite(classname, properties={"pass_rate": rate, "runs": mapping(summary.get(arm)).get("runs")})
        for run in (r for r in runs if text(r.get("configuration")) == arm):
            where = f"eval {text(run.get('eval_id'))} run {text(run.get('run_number'))}"
            result = mapping(run.get("result"))
            seconds = num(result.get("time_seconds")) or 0.0
            if result.get("pass_rate") is None and (result.get("errors") or result.get("error")):
                suite.cases.append(JUnitCase(where, classname, seconds,
                                             error=text(result.get("error")) or "the agent run failed"))
                continue
            if arm != "with_skill":
                continue
            for e in (mapping(x) for x in run.get("expectations") or []):
                if e.get("passed") is None:
                    outcome = {"error": f"not graded: {text(e.get('evidence'))}"}
                elif e.get("passed"):
                    outcome = {}
                else:
                    outcome = {"failure": text(e.get("evidence")) or "failed"}
                suite.cases.append(JUnitCase(f"{where}: {text(e.get('text'))}", classname, seconds,
                                             output=text(e.get("evidence")), **outcome))
        suites.append(suite)
    verdict = text(benchmark.get("verdict"))
    delta = mapping(summary.get("delta")).get("pass_rate")
    gate = JUnitSuite(f"paired.{skill}", properties={"pass_rate_delta": delta})
    gate.cases.append(_gate_case(f"paired.{skill}", passed, verdict, failures))
    return render_suites([*suites, gate])


def routing_junit(results: dict[str, Any], *, passed: bool, failures: Sequence[str] = ()) -> str:
    """``routing_results.json``: a case per query (routed wrongly: a failure; every run an error: an error),
    then one case for the quality gates, with the metrics."""
    meta = mapping(results.get("metadata"))
    skill = text(meta.get("skill_name"))
    classname = f"routing.{skill}"
    metrics = mapping(results.get("metrics"))
    suite = JUnitSuite(classname, properties={k: metrics.get(k) for k in ("precision", "recall", "f1", "accuracy")})
    for q in (mapping(x) for x in results.get("queries") or []):
        should = bool(q.get("should_trigger"))
        runs = [mapping(r) for r in q.get("run_results") or []]
        seconds = sum(num(r.get("duration_s")) or 0.0 for r in runs)
        name = f"query {text(q.get('index'))} ({'should' if should else 'should not'} trigger): {text(q.get('query'))}"
        counted = (num(q.get("runs")) or 0) - (num(q.get("errors")) or 0)
        said = f"triggered in {text(q.get('triggers'))} of {counted:g} runs"
        if q.get("passed") is False:
            suite.cases.append(JUnitCase(name, classname, seconds, failure=f"{said}; it "
                                         f"{'should' if should else 'should not'} trigger"))
        elif q.get("passed") is None:
            first = next((text(r.get("error")) for r in runs if r.get("error")), "no run finished without error")
            suite.cases.append(JUnitCase(name, classname, seconds, error=first))
        else:
            suite.cases.append(JUnitCase(name, classname, seconds, output=said))
    verdict = ", ".join(f"{k} {text(metrics.get(k))}" for k in ("precision", "recall", "f1", "accuracy"))
    suite.cases.append(_gate_case(classname, passed, verdict, failures))
    return render_suites([suite])
