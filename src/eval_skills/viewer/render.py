"""Turning untrusted text into safe HTML: Markdown, highlighted code, and the page's templates.

Everything shown on the review page came from an agent, a skill, a judge or a fixture, so none of it is
trusted. Markdown is parsed by markdown-it-py with raw HTML disabled (``<script>`` stays text), images are
shown as text (a picture would be a request leaving the machine), and the result is sanitised by nh3 with
a short allow-list of tags and attributes. Code is highlighted by Pygments, whose output escapes the code.
The templates autoescape every value; only the output of :func:`markdown_html` and :func:`highlight` is
marked safe, and both are sanitised or escaped here.
"""

from __future__ import annotations

import json
import math
from functools import lru_cache
from pathlib import Path
from typing import Any

from markupsafe import Markup, escape

from ..formats.untrusted import shown_text

__all__ = ["HIGHLIGHT_LIMIT", "MARKDOWN_LIMIT", "SHOWN_LIMIT", "highlight", "highlight_css", "markdown_html",
           "templates"]

SHOWN_LIMIT = 200_000  # characters of one text shown; the rest is cut with a note
MARKDOWN_LIMIT = 30_000  # characters of a text rendered as Markdown; a longer one is shown as plain text (parsing
# Markdown takes about 0.3 s per 100,000 characters: a case of huge responses would take seconds to open)
HIGHLIGHT_LIMIT = 100_000  # characters of code highlighted; longer code is shown as plain text

_TAGS = {"a", "abbr", "b", "blockquote", "br", "code", "dd", "del", "details", "div", "dl", "dt", "em", "h1",
         "h2", "h3", "h4", "h5", "h6", "hr", "i", "kbd", "li", "ol", "p", "pre", "s", "span", "strong", "sub",
         "summary", "sup", "table", "tbody", "td", "th", "thead", "tr", "ul"}
_ATTRIBUTES = {"*": {"class"}, "a": {"href", "title"}, "ol": {"start"}}
_URL_SCHEMES = {"http", "https", "mailto"}


def _cut(text: str, limit: int) -> tuple[str, int]:
    return (text, 0) if len(text) <= limit else (text[:limit], len(text) - limit)


@lru_cache(maxsize=256)
def _lexer(language: str = "", suffix: str = "") -> Any:
    """A Pygments lexer by language name, else by file name suffix, else plain text (lexers are reused)."""
    from pygments.lexers import TextLexer, get_lexer_by_name, get_lexer_for_filename
    from pygments.util import ClassNotFound

    try:
        if language:
            return get_lexer_by_name(language.lower(), stripnl=False)
        if suffix:
            return get_lexer_for_filename(f"file{suffix}", stripnl=False)
    except ClassNotFound:
        pass
    return TextLexer(stripnl=False)


@lru_cache(maxsize=1)
def _formatter() -> Any:
    from pygments.formatters import HtmlFormatter

    return HtmlFormatter(nowrap=True)


def _highlight_inner(code: str, language: str = "", filename: str = "") -> str:
    """Pygments spans (escaped code) without the wrapping ``<pre>``."""
    if len(code) > HIGHLIGHT_LIMIT:
        return str(escape(code))
    from pygments import highlight as pyg_highlight

    suffix = Path(filename).suffix.lower() if filename and not language else ""
    return pyg_highlight(code, _lexer(language[:40], suffix[:20]), _formatter())


def highlight(code: str, *, language: str = "", filename: str = "") -> Markup:
    """``code`` as a highlighted ``<pre class="hl">`` block (by ``language``, else by ``filename``)."""
    code, more = _cut(code, SHOWN_LIMIT)
    note = f'<p class="cut">… {more:,} more characters not shown</p>' if more else ""
    return Markup(f'<pre class="hl"><code>{_highlight_inner(code, language, filename)}</code></pre>{note}')


def _fence(code: str, language: str, _attrs: str) -> str:
    return f'<pre class="hl"><code>{_highlight_inner(code, language)}</code></pre>'


def _image_as_text(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
    token = tokens[idx]
    alt = "".join(child.content for child in token.children or [])
    return str(escape(f"[image: {alt}] ({token.attrGet('src') or ''})"))


@lru_cache(maxsize=1)
def _markdown() -> Any:
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False, "highlight": _fence})
    md.enable(["table", "strikethrough"])
    md.add_render_rule("image", _image_as_text)
    return md


def sanitize(html: str) -> str:
    import nh3

    return nh3.clean(html, tags=_TAGS, attributes=_ATTRIBUTES, url_schemes=_URL_SCHEMES,
                     link_rel="noopener noreferrer nofollow", strip_comments=True)


def markdown_html(text: str) -> Markup:
    """Untrusted Markdown as sanitised HTML (raw HTML in it shows as text); a text longer than
    ``MARKDOWN_LIMIT`` characters as plain text, saying so."""
    text, more = _cut(text or "", SHOWN_LIMIT)
    if len(text) + more > MARKDOWN_LIMIT:
        html = (f'<p class="cut">{len(text) + more:,} characters: shown as plain text, not rendered as '
                f'Markdown</p><pre class="plain">{escape(text)}</pre>')
    else:
        html = sanitize(_markdown().render(text))
    if more:
        html += f'<p class="cut">… {more:,} more characters not shown</p>'
    return Markup(html)


def warm_up() -> None:
    """Load what the first case needs (parsers, lexers, templates), so the first view pays none of it."""
    markdown_html("# warm\n\n```python\nx = 1\n```\n")
    highlight("{}", language="json")
    for name in ("page.html.j2", "case.html.j2", "benchmark.html.j2", "routing.html.j2", "routing_run.html.j2",
                 "run_files.html.j2", "tool_case.html.j2", "tool_benchmark.html.j2"):
        templates().get_template(name)


@lru_cache(maxsize=1)
def highlight_css() -> str:
    """The Pygments colours for ``pre.hl`` blocks."""
    from pygments.formatters import HtmlFormatter

    return str(HtmlFormatter(style="default").get_style_defs(".hl"))


# ---- template filters ---------------------------------------------------------------------------


def _num(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def pct(value: Any, places: int = 1) -> str:
    """A rate as a percentage: ``0.8333`` -> ``83.3%``."""
    num = _num(value)
    return "n/a" if num is None else f"{num * 100:.{places}f}%"


def points(value: Any, places: int = 1) -> str:
    """A difference of rates in percentage points, signed: ``0.25`` -> ``+25.0 pp``."""
    num = _num(value)
    return "n/a" if num is None else f"{num * 100:+.{places}f} pp"


def fixed(value: Any, places: int = 1, signed: bool = False) -> str:
    num = _num(value)
    if num is None:
        return "n/a"
    return f"{num:+,.{places}f}" if signed else f"{num:,.{places}f}"


def number(value: Any) -> str:
    """A count with thousands separators (``12,345``); n/a when missing."""
    num = _num(value)
    return "n/a" if num is None else f"{round(num):,}"


def clip(value: Any, limit: int = 20_000) -> str:
    """Text cut at ``limit`` characters, saying how much was left out."""
    text = "" if value is None else str(value)
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text) - limit:,} more characters)"


def visible(value: Any) -> str:
    """A name (a file, a case, a folder) with every control or bidirectional character shown as its escape
    (``\\u202e``), so what the reader sees is what the name holds."""
    return shown_text("" if value is None else str(value))


def pretty_json(value: Any) -> str:
    try:
        return json.dumps(value, indent=2, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return repr(value)


def rate_class(value: Any) -> str:
    num = _num(value)
    if num is None:
        return "na"
    return "good" if num >= 0.8 else "bad" if num < 0.5 else "mid"


@lru_cache(maxsize=1)
def templates() -> Any:
    """The jinja2 environment of the page (autoescaping, strict about undefined names). What a template
    renders holds no lone surrogate (a file name that is not UTF-8, a ``"\\udc80"`` escape in a JSON file):
    each becomes U+FFFD, so every piece can be sent as UTF-8."""
    import jinja2

    from ..formats.untrusted import clean_text

    class Template(jinja2.Template):
        def render(self, *args: Any, **kwargs: Any) -> str:
            return clean_text(super().render(*args, **kwargs))

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(Path(__file__).with_name("templates"))),
                             autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True,
                             lstrip_blocks=True)
    env.template_class = Template
    env.filters.update(md=markdown_html, clip=clip, pct=pct, points=points, fixed=fixed, number=number,
                       pretty_json=pretty_json, rate_class=rate_class, visible=visible)
    env.globals.update(highlight=highlight)
    return env
