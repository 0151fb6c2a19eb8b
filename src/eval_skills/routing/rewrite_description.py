"""Replace the ``description`` of a ``SKILL.md`` frontmatter, keeping every other byte of the file.

The frontmatter is parsed with PyYAML's composer, which gives the place of the top-level ``description`` value
in the text (a nested ``metadata.description`` is never touched). Only that value's text is replaced: plain,
quoted or block scalar, on one line or several. The new value is written on one line, plain when it reads back
as the same string, else double-quoted; a block scalar's value is replaced up to the end of its lines (its line
break kept). The line endings, a byte-order mark, comments, the other keys and the body stay as they were; the
result is parsed again and must hold the new description and the same other fields, or nothing is written.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from .._atomic import write_atomic_bytes
from ..errors import InputError
from ..formats.agentskills import SKILL_MD, parse_frontmatter

__all__ = ["render_scalar", "replace_description", "write_description"]


def render_scalar(text: str) -> str:
    """``text`` as a one-line YAML scalar: plain when it reads back unchanged, else double-quoted (a JSON string,
    which YAML reads the same)."""
    import yaml

    if text and "\n" not in text and "\r" not in text:
        try:
            if yaml.safe_load(f"k: {text}\n") == {"k": text}:
                return text
        except yaml.YAMLError:
            pass
    return json.dumps(text, ensure_ascii=False)


def _frontmatter_span(text: str, file: str) -> tuple[int, int]:
    """The character offsets of the frontmatter's YAML (between the two ``---`` lines)."""
    lines = text.splitlines(keepends=True)
    start = len(lines[0]) if lines else 0
    offset = start
    for line in lines[1:]:
        if line.strip() == "---":
            return start, offset
        offset += len(line)
    raise InputError("the frontmatter is not closed with a '---' line", file=file)


def replace_description(text: str, description: str, *, file: str = SKILL_MD) -> str:
    """``text`` (a whole ``SKILL.md``) with its frontmatter's description replaced (see the module doc)."""
    import yaml

    before, body = parse_frontmatter(text, file=file)
    if "description" not in before:
        raise InputError("has no description in its frontmatter to replace", file=file, field="frontmatter")
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    plain = text[len(bom):]
    start, end = _frontmatter_span(plain, file)
    front = plain[start:end]
    node = yaml.compose(front, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    if not isinstance(node, yaml.MappingNode):
        raise InputError("the frontmatter must be a YAML mapping of fields", file=file, field="frontmatter")
    found = [value for key, value in node.value if isinstance(key, yaml.ScalarNode) and key.value == "description"]
    if len(found) != 1 or not isinstance(found[0], yaml.ScalarNode):
        raise InputError("the frontmatter's description is not one plain string", file=file,
                         field="frontmatter.description")
    value = found[0]
    lo, hi = value.start_mark.index, value.end_mark.index
    new = render_scalar(description)
    if value.style in ("|", ">"):  # a block scalar ends after its last line break: keep one
        newline = "\r\n" if "\r\n" in front[lo:hi] else "\n"
        stripped = front[lo:hi].rstrip("\r\n")
        tail = front[lo + len(stripped):hi]
        new += newline if tail else ""
        new += tail[len(newline):] if tail.startswith(newline) else ""
    out = bom + plain[:start] + front[:lo] + new + front[hi:] + plain[end:]
    after, after_body = parse_frontmatter(out, file=file)
    if after.get("description") != description or after_body != body or \
            {k: v for k, v in after.items() if k != "description"} != \
            {k: v for k, v in before.items() if k != "description"}:
        raise InputError("the description could not be replaced without changing anything else", file=file,
                         field="frontmatter.description", hint="edit the description by hand")
    return out


def write_description(skill_folder: Path, description: str) -> Path:
    """Replace the description in ``<skill_folder>/SKILL.md`` (read and written as bytes, so line endings stay)."""
    path = Path(skill_folder) / SKILL_MD
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError("is not valid UTF-8", file=str(path)) from None
    new = replace_description(text, description, file=str(path))
    mode = path.stat().st_mode & 0o7777
    write_atomic_bytes(path, new.encode("utf-8"))
    os.chmod(path, mode)
    return path
