"""Named backends imported on first use: ``name -> "module:Class"``, for agents, output parsers and judges."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from typing import Any, Generic, TypeVar

from .errors import InputError

__all__ = ["Registry"]

T = TypeVar("T")


class Registry(Generic[T]):
    """Classes by name, each given as ``"module:Class"``: relative to ``package`` when it starts with a dot
    (``".command:CommandAgent"``), else a full module path (``"my_pkg.agents:MyAgent"``). An unknown
    name is an InputError on ``field`` listing the known ones."""

    def __init__(self, package: str, field: str, entries: dict[str, str]) -> None:
        self.package = package
        self.field = field
        self.entries = dict(entries)

    def register(self, name: str, target: str) -> None:
        if ":" not in target:
            raise ValueError(f"target {target!r} must be 'module:Class'")
        self.entries[name] = target

    def names(self) -> list[str]:
        return sorted(self.entries)

    def __contains__(self, name: object) -> bool:
        return name in self.entries

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def get(self, name: str) -> type[T]:
        target = self.entries.get(name)
        if target is None:
            raise InputError(f"unknown {self.field} {name!r}", field=self.field,
                             hint="one of: " + ", ".join(self.names()))
        module_name, cls_name = target.split(":")
        cls: type[T] = getattr(importlib.import_module(module_name, self.package), cls_name)
        return cls


    def create(self, name: str, **options: Any) -> T:
        """An instance of the class registered as ``name``, built with ``options``."""
        return self.get(name)(**options)
