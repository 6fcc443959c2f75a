"""Modules imported on first use: the `brainiac` command's fast start.

Every CLI call imports the cli package, but each command needs only a few of the modules it
names; a module held as `lazy_module("brainiac.formats.stm")` is imported when one of its
attributes is first read (through the normal import system, so under its lock and into
sys.modules as usual). Type checkers see the real import (`if TYPE_CHECKING:`), so names and
signatures stay checked.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any


class LazyModule:
    """Stands for a module until an attribute of it is read."""

    def __init__(self, name: str) -> None:
        self._lazy_name = name
        self._lazy_module: ModuleType | None = None

    def __getattr__(self, attr: str) -> Any:
        module = self._lazy_module
        if module is None:
            module = self._lazy_module = importlib.import_module(self._lazy_name)
        return getattr(module, attr)

    def __repr__(self) -> str:
        return f"<lazy module {self._lazy_name!r}>"


def lazy_module(name: str) -> Any:
    """A stand-in for the module `name` that imports it when first used."""
    return LazyModule(name)
