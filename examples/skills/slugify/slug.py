"""A custom (in-process) skill: ``slugify({"text": "Héllo, Wörld!"})`` -> ``{"result": "hello-world"}``.

Accents are folded to ASCII, everything that is not a letter or a digit separates words, words are joined by
``separator`` (default ``-``), and the slug is cut at a word boundary to ``max_length`` characters when given.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any


def slugify(data: dict[str, Any]) -> dict[str, str]:
    text = unicodedata.normalize("NFKD", str(data["text"])).encode("ascii", "ignore").decode()
    words = re.findall(r"[a-z0-9]+", text.lower())
    separator = str(data.get("separator", "-"))
    slug = separator.join(words)
    limit = data.get("max_length")
    if isinstance(limit, int) and len(slug) > limit:
        cut = slug[: limit + 1]
        slug = cut.rsplit(separator, 1)[0] if separator in cut else slug[:limit]
    return {"result": slug}
