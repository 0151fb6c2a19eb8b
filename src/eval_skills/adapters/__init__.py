"""Adapters call tool skills: one module per transport behind :class:`Adapter`."""

from __future__ import annotations

import importlib

from ..errors import InputError
from ..formats.skill import Skill
from .base import Adapter
from .fake import FakeAdapter

__all__ = ["Adapter", "FakeAdapter", "create_adapter", "ADAPTERS"]

# adapterType -> "module:class"; imported only when a skill needs it
ADAPTERS: dict[str, str] = {
    "subprocess": "subprocess:SubprocessAdapter",
    "http": "http:HttpAdapter",
    "mcp": "mcp:McpAdapter",
    "custom": "custom:CustomAdapter",
    "langchain": "langchain:LangChainAdapter",
}


def create_adapter(skill: Skill) -> Adapter:
    """The adapter for a skill's ``adapterType``. Unsupported types are an input error."""
    target = ADAPTERS.get(skill.manifest.adapterType)
    if target is None:
        supported = ", ".join(sorted(ADAPTERS))
        raise InputError(f"adapterType {skill.manifest.adapterType!r} is not supported yet",
                         file=str(skill.path), field="$.adapterType", hint=f"supported: {supported}")
    module_name, cls_name = target.split(":")
    module = importlib.import_module(f"{__name__}.{module_name}")
    cls: type[Adapter] = getattr(module, cls_name)
    return cls(skill)  # type: ignore[call-arg]
