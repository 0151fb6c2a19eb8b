"""How an MCP skill is read: the tool it names, the transport its entrypoint asks for, and what a tool's result
gives as the task's output (see :mod:`.mcp`)."""

from __future__ import annotations

import contextlib
from typing import Any
from urllib.parse import urlsplit

import mcp_types

from ..errors import InputError
from ..formats.skill import Skill
from ..formats.untrusted import NotJSON, loads_untrusted

__all__ = ["TOOL_FIELD", "TRANSPORTS", "result_output", "texts_of", "tool_name", "transport_of"]

TOOL_FIELD = "$.metadata.toolName"
TRANSPORT_FIELD = "$.metadata.transport"
TRANSPORTS = ("stdio", "sse", "streamable-http")


def tool_name(skill: Skill) -> str:
    name = skill.manifest.metadata.get("toolName", skill.id)
    if not isinstance(name, str) or not name.strip():
        raise InputError("toolName must be the name of one of the server's tools", file=str(skill.path),
                         field=TOOL_FIELD)
    return name


def transport_of(skill: Skill) -> str:
    """``stdio``, ``streamable-http`` or ``sse``: ``metadata.transport`` when given (the original's key), else
    ``sse`` for a URL whose path ends in ``/sse``, ``streamable-http`` for another URL, ``stdio`` otherwise."""
    entrypoint = skill.manifest.entrypoint.strip()
    parts = urlsplit(entrypoint)
    if parts.scheme == "mcp":
        raise InputError(f"{entrypoint!r} is the placeholder the original eval-skills' create writes, not a way to "
                         "reach a server", file=str(skill.path), field="$.entrypoint",
                         hint="give the server's command (stdio) or its http(s):// URL")
    is_url = parts.scheme in ("http", "https")
    given = skill.manifest.metadata.get("transport") if isinstance(skill.manifest.metadata, dict) else None
    if given is None:
        return ("sse" if parts.path.rstrip("/").endswith("/sse") else "streamable-http") if is_url else "stdio"
    if given not in TRANSPORTS or (given == "stdio") == is_url:
        want = "sse or streamable-http, for a URL" if is_url else "stdio, for a command"
        raise InputError(f"transport {given!r} does not fit the entrypoint", file=str(skill.path),
                         field=TRANSPORT_FIELD, hint=f"use {want}, or leave it out")
    return str(given)


def texts_of(result: mcp_types.CallToolResult) -> list[str]:
    return [block.text for block in result.content if isinstance(block, mcp_types.TextContent)]


def result_output(result: mcp_types.CallToolResult) -> Any:
    """The output of a tool result: structured content, else the text (read as JSON when it is JSON), else
    the content blocks as JSON. Structured content that only wraps the text (``{"result": "<the text>"}``,
    what the SDK makes of a tool returning a ``str``) is that text read as JSON when it is a JSON object or
    array, as the original eval-skills reads it."""
    structured, texts = result.structured_content, texts_of(result)
    text = "\n".join(texts)
    if structured is not None:
        if texts and structured == {"result": text} and text.lstrip()[:1] in ("{", "["):
            with contextlib.suppress(NotJSON):
                return loads_untrusted(text)
        return structured
    if texts:
        try:
            return loads_untrusted(text)
        except NotJSON:
            return text
    return [block.model_dump(mode="json", by_alias=True, exclude_none=True) for block in result.content]
