"""brainiac: an AI agent's memory as a Markdown vault, indexed and assembled into context."""

from __future__ import annotations

# Not `from typing import TYPE_CHECKING`: importing typing would slow every start of the
# `brainiac` command (entry.py), and mypy reads a TYPE_CHECKING of its own the same way.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from brainiac.api.memory import Context, Memory, SearchResult
    from brainiac.core.errors import BrainiacError

__all__ = ["BrainiacError", "Context", "Memory", "SearchResult"]
__version__ = "0.1.0"

# Loaded on first use (PEP 562), not here: every `brainiac` command imports this package, and
# `brainiac --version` or a hook call should not pay for the index, the parsers and the checker.
_LAZY = {
    "BrainiacError": "brainiac.core.errors",
    "Context": "brainiac.api.memory",
    "Memory": "brainiac.api.memory",
    "SearchResult": "brainiac.api.memory",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'brainiac' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
