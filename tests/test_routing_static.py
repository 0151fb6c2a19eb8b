"""The description check (`routing --static`): key terms, overlap per query, flags and frontmatter rules."""

from pathlib import Path

import pytest

from eval_skills.errors import InputError
from eval_skills.formats.agentskills import RoutingQuery
from eval_skills.routing.static import key_terms, static_check, stem


def skill(tmp_path: Path, frontmatter: str, name: str = "pdf-merge") -> Path:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "SKILL.md").write_text(f"---\n{frontmatter}\n---\nbody\n")
    return folder


def q(text: str, should: bool, kind: str | None = None) -> RoutingQuery:
    return RoutingQuery(query=text, should_trigger=should, invocation_type=kind)


def test_stems_and_key_terms():
    assert [stem(w) for w in ("files", "filing", "merged", "merging", "merge", "running", "pdfs", "queries",
                              "classes", "status", "feed")] == [
        "fil", "fil", "merg", "merg", "merg", "run", "pdf", "query", "class", "status", "feed"]
    # function words and the usual "use when the user asks" words are not key terms; each term once, in order
    assert key_terms("Use when the user asks to merge PDF files, or merging PDFs.") == ["merg", "pdf", "fil"]
    assert key_terms("") == []


def test_flags_and_overlap(tmp_path):
    folder = skill(tmp_path, "name: pdf-merge\ndescription: Merges PDF files into one document. Use when the user "
                             "wants to combine or merge PDFs.")
    report = static_check(folder, [
        q("merge these two PDFs", True),  # shares merg, pdf of (merg, pdf): 1.0 ("two" is no key term)
        q("stitch my scans together", True),  # shares nothing: flagged
        q("summarise this PDF document", False),  # shares pdf, document of (summaris, pdf, document): flagged
        q("what's the weather", False),  # shares nothing: fine
        q("convert the PDF to text", False),  # shares pdf of (convert, pdf, text): 1/3, but pdf is in the name
        q("print the document list", False),  # shares document of (print, document, list): 1/3, fine
    ])
    assert report.ok and report.errors == []
    assert report.key_terms == ["pdf", "merg", "fil", "document", "combin"]
    got = [(r.shared, r.overlap, r.flag is not None) for r in report.queries]
    assert got == [(["merg", "pdf"], 1.0, False), ([], 0.0, True), (["pdf", "document"], 0.6667, True),
                   ([], 0.0, False), (["pdf"], 0.3333, True), (["document"], 0.3333, False)]
    assert "shares no key term" in report.queries[1].flag
    assert "should not trigger but shares 2 key terms" in report.queries[2].flag
    assert report.queries[4].flag.endswith("shares 1 key term with the name or description (pdf)")
    summary = report.summary()
    # should trigger: (1 + 0) / 2; should not: (0.6667 + 0 + 0.3333 + 0.3333) / 4
    assert summary == {"queries": 6, "flagged": 3, "should_trigger_sharing_nothing": 1,
                       "should_not_trigger_lookalikes": 2, "mean_overlap_should_trigger": 0.5,
                       "mean_overlap_should_not_trigger": 0.3333}
    assert report.to_json()["ok"] is True and len(report.to_json()["queries"]) == 6


def test_half_of_a_short_query_is_a_lookalike(tmp_path):
    folder = skill(tmp_path, "name: pdf-merge\ndescription: Merges PDF files. Use when asked to merge PDFs.")
    (only,) = static_check(folder, [q("print files", False)]).queries  # fil is not a term of the name
    assert only.shared == ["fil"] and only.overlap == 0.5 and only.flag is not None


def test_frontmatter_rules_and_description_advice_are_listed_not_raised(tmp_path):
    folder = skill(tmp_path, "name: PDF_Merge\ndescription: PDFs.\ndisable-model-invocation: true", name="other")
    report = static_check(folder, [q("merge PDFs", True)])
    assert not report.ok
    assert any("must be lowercase" in e for e in report.errors)
    assert any("must equal the skill's folder name" in e for e in report.errors)
    text = " ".join(report.warnings)
    assert "1 words" in text and "does not say when to use" in text and "disable-model-invocation" in text
    assert "outside the Agent Skills specification: disable-model-invocation" in text
    long = skill(tmp_path, "name: long\ndescription: " + "word " * 300, name="long")
    assert any("at most 1024" in e for e in static_check(long, []).errors)


def test_unreadable_skill_md_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="no SKILL.md"):
        static_check(tmp_path, [])
    folder = skill(tmp_path, "name: [unclosed")
    with pytest.raises(InputError, match="invalid YAML"):
        static_check(folder, [])
