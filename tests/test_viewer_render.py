"""Untrusted text to HTML: Markdown with raw HTML disabled and sanitised, code highlighted, JSON in scripts."""

from __future__ import annotations

import base64
import hashlib
import json
import re

from eval_skills.viewer.page import script_json, static_csp
from eval_skills.viewer.render import MARKDOWN_LIMIT, SHOWN_LIMIT, highlight, markdown_html, points


def test_raw_html_in_markdown_is_text():
    html = markdown_html('Hi <script>alert(1)</script> <img src=x onerror="alert(2)"> <b>bold</b>')
    assert "<script>" not in html and "<img" not in html and "<b>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert '&lt;img src=x onerror="alert(2)"&gt;' in html  # text: the quote cannot open an attribute


def test_markdown_renders_and_keeps_only_safe_links():
    html = markdown_html("# Title\n\n**bold** [ok](https://example.org) [bad](javascript:alert(1)) "
                         "[data](data:text/html,x)\n\n| a | b |\n|---|--:|\n| 1 | 2 |\n")
    assert "<h1>Title</h1>" in html and "<strong>bold</strong>" in html and "<table>" in html
    assert '<a href="https://example.org" rel="noopener noreferrer nofollow">ok</a>' in html
    assert "javascript:" not in html.replace("[bad](javascript:alert(1))", "")
    assert 'href="data:' not in html
    assert "style=" not in html  # table alignment styles are dropped (the page's policy forbids them)


def test_images_never_load():
    html = markdown_html("![tracker](http://example.com/pixel.png)")
    assert "<img" not in html and "[image: tracker] (http://example.com/pixel.png)" in html


def test_code_is_highlighted_and_escaped():
    html = markdown_html("```python\ndef f():\n    return '<script>'\n```")
    assert '<pre class="hl"><code><span class="k">def</span>' in html and '<span class="nf">f</span>' in html
    assert "&lt;script&gt;" in html and "<script>" not in html
    by_name = highlight("x = 1 < 2", filename="calc.py")
    assert '<span class="n">x</span>' in by_name and "&lt;" in by_name
    unknown = highlight("<b>plain</b>", language="no-such-language")
    assert "<b>" not in unknown and "&lt;b&gt;plain&lt;/b&gt;" in unknown


def test_long_text_is_cut_with_a_note():
    html = markdown_html("a" * (SHOWN_LIMIT + 5))
    assert "5 more characters not shown" in html


def test_a_text_too_long_for_markdown_is_plain_text():
    assert "<strong>x</strong>" in markdown_html("**x** <b>" + "a" * (MARKDOWN_LIMIT - 20))
    html = markdown_html("**x** <b>" + "a" * MARKDOWN_LIMIT)
    assert f"{MARKDOWN_LIMIT + 9:,} characters: shown as plain text" in html
    assert '<pre class="plain">**x** &lt;b&gt;aaa' in html and "<strong>" not in html


def test_json_in_a_script_block_cannot_close_it():
    text = script_json({"x": "</script><script>alert(1)</script>", "y": "a & b \u2028"})
    assert "</" not in text and "<" not in text and "&" not in text and "\u2028" not in text
    assert json.loads(text) == {"x": "</script><script>alert(1)</script>", "y": "a & b \u2028"}


def test_static_policy_allows_exactly_the_inline_script_and_style():
    js, css = "console.log(1)", "body { color: red }"
    csp = static_csp(js, css)
    digest = base64.b64encode(hashlib.sha256(js.encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in csp
    assert re.search(r"style-src 'sha256-[^']+';", csp) and "default-src 'none'" in csp and "unsafe" not in csp


def test_points_are_signed_percentage_points():
    assert points(0.25) == "+25.0 pp" and points(-0.0312) == "-3.1 pp" and points(None) == "n/a"
