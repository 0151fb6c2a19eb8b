"""The page shell, served (scripts and styles from ``assets/``) or static (one self-contained file).

A static page holds every case's fragment and every tab in a JSON data block, and its only script and
style inline, allowed by their hashes in a Content-Security-Policy ``<meta>``: nothing else runs, and no
request leaves the page. JSON inside ``<script>`` blocks has ``<``, ``>`` and ``&`` escaped, so no text in
it can close the block.
"""

from __future__ import annotations

import base64
import hashlib
import json
from functools import cache
from pathlib import Path
from typing import Any

from markupsafe import Markup

from .._atomic import write_atomic
from ..errors import InputError
from .render import highlight_css, templates
from .source import Source

__all__ = ["SERVED_CSP", "asset", "render_page", "static_csp", "write_static"]

ASSETS = Path(__file__).with_name("assets")
SERVED_CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; "
              "connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'")


@cache
def asset(name: str) -> str:
    """One of the page's own files (``viewer.js``, ``viewer.css``), or the generated ``highlight.css``."""
    if name == "highlight.css":
        return highlight_css()
    return (ASSETS / name).read_text(encoding="utf-8")


def script_json(value: Any) -> Markup:
    """JSON safe inside a ``<script type="application/json">`` element."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    for char, escaped in (("&", "\\u0026"), ("<", "\\u003c"), (">", "\\u003e"), ("\u2028", "\\u2028"),
                          ("\u2029", "\\u2029")):
        text = text.replace(char, escaped)
    return Markup(text)


def _sha256(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


def static_csp(js: str, css: str) -> str:
    return (f"default-src 'none'; script-src {_sha256(js)}; style-src {_sha256(css)}; img-src data:; "
            "connect-src 'none'; form-action 'none'; base-uri 'none'")


def case_legend(source: Source, cases: list[Any]) -> dict[str, Any]:
    """What the case list's badges mean: whose badge is which (in their order), what the number is, and the
    colours (the thresholds of :func:`.render.rate_class`)."""
    columns = list(dict.fromkeys(m.column for c in cases for m in c.marks if m.column))
    return {"columns": columns, "meaning": getattr(source, "mark_meaning", "")}


def render_page(source: Source, *, static: bool, token: str | None = None) -> str:
    """The whole page. Served: the shell, cases loaded on demand. Static: everything inside."""
    cases, tabs = source.cases(), source.tabs()
    feedback = source.feedback
    config: dict[str, Any] = {
        "mode": "static" if static else "served", "title": source.title, "cases": [c.key for c in cases],
        "tabs": [t.name for t in tabs], "token": token, "feedback": None,
    }
    if feedback is not None:
        config["feedback"] = {"texts": feedback.texts(), "status": feedback.status, "marks": feedback.marks(),
                              "runIds": feedback.run_ids() if static else None,
                              "reviews": feedback.reviews() if static else None}
    context: dict[str, Any] = {"static": static, "title": source.title, "facts": source.facts, "tabs": tabs,
                               "warnings": getattr(source, "warnings", []),
                               "cases": cases, "has_outputs": any(t.name == "outputs" for t in tabs),
                               "legend": case_legend(source, cases),
                               "feedback": feedback is not None, "config_json": script_json(config)}
    if static:
        js, css = asset("viewer.js"), asset("viewer.css") + "\n" + asset("highlight.css")
        data = {"cases": {c.key: source.case_html(c.key, static=True) for c in cases},
                "tabs": {t.name: source.tab_html(t.name, static=True) for t in tabs if t.name != "outputs"},
                "details": {ref: source.detail_html(ref, static=True) for ref in source.detail_refs()}}
        context.update(js=Markup(js), css=Markup(css), csp=static_csp(js, css), data_json=script_json(data))
    return str(templates().get_template("page.html.j2").render(**context))


def write_static(source: Source, out: Path) -> Path:
    """Write the static page to ``out`` (its folder is created), atomically. InputError if it cannot be."""
    html = render_page(source, static=True)
    out = Path(out)
    if out.is_dir():
        raise InputError("is a folder", file=str(out), field="--static", hint="give a file name such as review.html")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(out, html)
    except OSError as exc:
        raise InputError(f"cannot write the page ({exc.strerror or exc})", file=str(out), field="--static") from None
    return out
