"""Loading a Python object named by a skill's ``entrypoint`` (``module:attribute``) for the in-process adapters.

The module is looked up in the skill's folder first (``tools`` is ``tools.py`` or ``tools/__init__.py`` beside
``skill.json``), else among the installed modules. A module of the skill's folder is imported with the folder
first on ``sys.path``, which is restored right after; every module that the import loaded from the folder is then
removed from ``sys.modules``. So the folder never leaks into other skills' imports, and two skills that both have
a ``tools.py`` (or a ``helpers.py`` they import) each get their own. The objects keep working: they hold their
modules. A sibling module must therefore be imported when the module is (at its top), not later inside a call.

Imports are serialised (they change ``sys.path`` and ``sys.modules``), run off the event loop by the caller.
"""

from __future__ import annotations

import contextlib
import importlib
import sys
import threading
import traceback
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..formats.skill import Skill

__all__ = ["describe_exception", "load_attribute", "parse_entrypoint"]

_IMPORT_LOCK = threading.Lock()


def parse_entrypoint(skill: Skill) -> tuple[str, str]:
    """``(module, attribute)`` from ``module:attribute`` (both may be dotted); InputError otherwise."""
    text = skill.manifest.entrypoint.strip()
    module, sep, attr = text.partition(":")
    if sep and module and attr and all(part.isidentifier() for part in [*module.split("."), *attr.split(".")]):
        return module, attr
    raise InputError(f"entrypoint {text!r} is not module:attribute", file=str(skill.path), field="$.entrypoint",
                     hint='e.g. "tools:add" for the function add in tools.py beside skill.json')


def describe_exception(exc: BaseException, root: Path | None = None, limit: int = 500) -> str:
    """``ValueError: message (at tools.py:12)``: the type, the message and where it was raised, on one line."""
    if isinstance(exc, SystemExit):
        text = f"called sys.exit({exc.code!r})"
    else:
        message = " ".join(str(exc).split())
        text = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    frames = traceback.extract_tb(exc.__traceback__) if exc.__traceback__ is not None else []
    # where in the skill's own code, when the stack passes through it; else the last real file (never
    # ``<frozen importlib._bootstrap>``); a SyntaxError's message already names its file and line
    own = [f for f in frames if root is not None and Path(f.filename).is_relative_to(root)]
    real = [f for f in frames if not f.filename.startswith("<")]
    chosen = own or ([] if isinstance(exc, SyntaxError) else real)
    if chosen:
        last = chosen[-1]
        where = Path(last.filename)
        if root is not None and where.is_relative_to(root):
            where = where.relative_to(root)
        text += f" (at {where}:{last.lineno})"
    return text if len(text) <= limit else text[:limit] + "..."


def _is_local(root: Path, module: str) -> bool:
    first = module.split(".")[0]
    return (root / f"{first}.py").is_file() or (root / first / "__init__.py").is_file()


def _import_local(root: Path, module: str) -> Any:
    """Import ``module`` from ``root`` and forget every module that came from there (see the module doc)."""
    folder = str(root)
    first = module.split(".")[0]
    # a module of that name from elsewhere (another skill's, or an installed one) must not answer for ours
    hidden = {name: mod for name, mod in sys.modules.items() if name == first or name.startswith(first + ".")}
    for name in hidden:
        del sys.modules[name]
    before = set(sys.modules)
    sys.path.insert(0, folder)
    importlib.invalidate_caches()
    try:
        return importlib.import_module(module)
    finally:
        if sys.path and sys.path[0] == folder:
            del sys.path[0]
        else:  # the module changed sys.path itself: remove our entry wherever it is
            with contextlib.suppress(ValueError):
                sys.path.remove(folder)
        for name in set(sys.modules) - before:
            file = getattr(sys.modules.get(name), "__file__", None)
            if name == first or name.startswith(first + ".") or (file and Path(file).resolve().is_relative_to(root)):
                sys.modules.pop(name, None)
        sys.modules.update(hidden)


def load_attribute(skill: Skill, module: str, attr: str, wait: float = 60.0) -> Any:
    """The object ``attr`` of ``module``. Any failure is an InputError naming skill.json's ``$.entrypoint``;
    ``wait`` bounds the wait for another skill's import (one that never ends holds the others up)."""
    root = skill.root.resolve()
    where = {"file": str(skill.path), "field": "$.entrypoint"}
    local = _is_local(root, module)
    if not _IMPORT_LOCK.acquire(timeout=wait):
        raise InputError(f"module {module!r} could not be imported: another skill's module is still importing",
                         **where)
    try:
        try:
            loaded = _import_local(root, module) if local else importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if not local and exc.name == module.split(".")[0]:
                raise InputError(f"module {module!r} not found: neither {module.split('.')[0]}.py in the skill's "
                                 "folder nor an installed module", **where) from None
            raise InputError(f"module {module!r} failed to import: {describe_exception(exc, root)}", **where) from None
        except BaseException as exc:  # noqa: BLE001 - user code: anything it raises (SystemExit too) is its failure
            raise InputError(f"module {module!r} failed to import: {describe_exception(exc, root)}", **where) from None
    finally:
        _IMPORT_LOCK.release()
    obj: Any = loaded
    for depth, part in enumerate(attr.split(".")):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            owner = ".".join([module, *attr.split(".")[:depth]])
            raise InputError(f"{owner} has no attribute {part!r}", **where) from None
        except Exception as exc:  # noqa: BLE001 - a property or module __getattr__ of user code
            raise InputError(f"getting {part!r} failed: {describe_exception(exc, root)}", **where) from None
    return obj
