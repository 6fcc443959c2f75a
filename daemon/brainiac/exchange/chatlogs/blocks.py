"""Content blocks, as Claude Code and Claude.ai store a message: its text, and what else it held."""

from __future__ import annotations

from brainiac.exchange.chatlogs.records import Node

_THINKING = frozenset({"thinking", "redacted_thinking"})


_TOOL_USE = frozenset({"tool_use", "server_tool_use", "mcp_tool_use"})


_TOOL_RESULT = frozenset({"tool_result", "web_search_tool_result", "mcp_tool_result"})


_ATTACHMENT = frozenset({"image", "document", "file"})


def block_text(blocks: list[Node]) -> tuple[str, set[str]]:
    """The text blocks joined with a blank line, and the types of all blocks."""
    texts: list[str] = []
    kinds: set[str] = set()
    for block in blocks:
        block.obj()
        kind = block.req_str("type")
        kinds.add(kind)
        if kind == "text":
            said = block.opt_str("text")
            if said is not None and said.strip():
                texts.append(said.strip())
    return "\n\n".join(texts), kinds


def no_text_reason(kinds: set[str]) -> str:
    if kinds & _TOOL_RESULT:
        return "tool result"
    if kinds & _TOOL_USE:
        return "tool use"
    if kinds & _THINKING:
        return "thinking"
    if kinds & _ATTACHMENT:
        return "attachment"
    return "empty"
