"""brainiac: an AI agent's memory as a Markdown vault, indexed and assembled into context."""

from brainiac.errors import BrainiacError
from brainiac.memory import Context, Memory, SearchResult

__all__ = ["BrainiacError", "Context", "Memory", "SearchResult"]
__version__ = "0.1.0"
