"""brainiac: an AI agent's memory as a Markdown vault, indexed and assembled into context."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from brainiac.errors import BrainiacError
    from brainiac.memory import Context, Memory, SearchResult

__all__ = ["BrainiacError", "Context", "Memory", "SearchResult"]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    # Loaded when first asked for: `import brainiac.daemon_socket` (the CLI's fast path, before
    # anything else) must not load the index, the Markdown parser and the rest with it.
    if name == "BrainiacError":
        from brainiac.errors import BrainiacError

        return BrainiacError
    if name in ("Context", "Memory", "SearchResult"):
        from brainiac import memory

        return getattr(memory, name)
    raise AttributeError(f"module 'brainiac' has no attribute {name!r}")
