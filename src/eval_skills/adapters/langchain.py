"""The LangChain adapter: a LangChain tool or Runnable, called with ``ainvoke(inputData)``.

``entrypoint`` names it as for the custom adapter (``module:attribute``, found the same way, with the same
threads, timeouts and statuses). LangChain is an optional extra: without ``langchain-core`` the skill is refused
before anything runs, saying what to install.

The output is made plain JSON: a message (an ``AIMessage``, a ``ToolMessage``) gives its ``content`` and its
``usage_metadata`` is the token usage; a pydantic model gives its fields; lists of those are converted item by
item. Anything else must already be JSON.
"""

from __future__ import annotations

import importlib
from typing import Any

from ..errors import InputError
from ..formats.skill import Skill
from ..results import Usage
from ._inprocess import to_json
from ._process import parse_usage
from .custom import CustomAdapter

__all__ = ["INSTALL_HINT", "LangChainAdapter"]

INSTALL_HINT = "pip install 'eval-skills[langchain]'"


def _plain(value: Any, usage: list[Usage]) -> Any:
    from langchain_core.messages import BaseMessage
    from pydantic import BaseModel

    if isinstance(value, BaseMessage):
        found = parse_usage(getattr(value, "usage_metadata", None))
        if found is not None:
            usage.append(found)
        return value.content
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, list | tuple):
        return [_plain(item, usage) for item in value]
    return value


class LangChainAdapter(CustomAdapter):
    """Calls a LangChain tool or Runnable with ``ainvoke`` (see the module doc)."""

    what = "a Runnable"

    def __init__(self, skill: Skill) -> None:
        try:
            importlib.import_module("langchain_core.runnables")
        except ImportError:
            raise InputError("adapterType 'langchain' needs LangChain (langchain-core), which is not installed",
                             file=str(skill.path), field="$.adapterType", hint=f"install it: {INSTALL_HINT}") from None
        super().__init__(skill)

    def check_target(self, obj: Any) -> Any:
        from langchain_core.runnables import Runnable

        if isinstance(obj, Runnable):
            return obj
        hint = 'for a plain function use adapterType "custom"' if callable(obj) else None
        raise InputError(f"{self.module}:{self.attr} is not a LangChain tool or Runnable (it is a "
                         f"{type(obj).__name__})", file=str(self.skill.path), field="$.entrypoint", hint=hint)

    def describe_target(self, target: Any) -> str:
        from langchain_core.tools import BaseTool

        kind = f"the tool {target.name!r}" if isinstance(target, BaseTool) else f"a {type(target).__name__}"
        return f"{kind}, called with ainvoke"

    @property
    def input_schema(self) -> dict[str, Any] | None:
        """The JSON Schema LangChain derives for the input (a tool's arguments), once loaded."""
        if self.target is None:
            return None
        try:
            schema = self.target.get_input_jsonschema()
        except Exception:  # noqa: BLE001 - a Runnable without a usable schema has none to check against
            return None
        return schema if isinstance(schema, dict) and schema.get("type") == "object" else None

    def call(self, target: Any, input_data: Any) -> Any:
        return target.ainvoke(input_data)

    def convert(self, value: Any) -> tuple[Any, Usage | None]:
        usage: list[Usage] = []
        output = to_json(_plain(value, usage))
        return output, usage[0] if usage else None
