"""The `chatgpt` chat export format.

The ChatGPT data export's `conversations.json`: a list of {"title", "create_time",
"conversation_id" or "id", "current_node", "mapping": {node_id: {"id", "message": {...}|null,
"parent", "children"}}}, a message being {"id", "author": {"role"}, "create_time" (epoch
seconds), "content": {"content_type", "parts"}, "metadata", "recipient"}. The conversation is
the path from `current_node` up through `parent` to the root, reversed (what the person last
saw; regenerated answers and edited prompts on other branches are left out); without
`current_node`, the first child from the root down. Along the path, null messages, "system"
and "tool" messages, messages with `metadata.is_visually_hidden_from_conversation`,
assistant messages addressed to a tool (`recipient` other than "all") and content types
other than "text"/"multimodal_text" ("code", "execution_output", "thoughts",
"reasoning_recap", "user_editable_context", ...) are Skipped. String parts are joined;
object parts (images) are left out, except a voice message's "audio_transcription" text.
Confirmed against: mitkury/chatgpt-export-parser docs/chatgpt-data-export-format.md (the
whole schema: current_node, mapping nodes, author.role, content_type, parts, metadata,
recipient, the empty root node, branches); is_visually_hidden_from_conversation and
multimodal_text parts with {"content_type": "image_asset_pointer"} were seen in several
public parsers and fixtures found by text search.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from brainiac.exchange.chatlogs.records import Node, Out, conversations, title_of

_CHATGPT_TEXT = frozenset({"text", "multimodal_text"})


_CHATGPT_REASONS = {
    "code": "tool use",
    "execution_output": "tool result",
    "tether_browsing_display": "tool result",
    "tether_quote": "tool result",
    "sonic_webpage": "tool result",
    "system_error": "tool result",
    "thoughts": "thinking",
    "reasoning_recap": "thinking",
    "user_editable_context": "meta",
    "model_editable_context": "meta",
}


def parse_chatgpt(file: str, value: Any, out: Out) -> None:
    for conversation in conversations(file, value, "mapping", "ChatGPT conversations"):
        conversation.obj()
        session = conversation.opt_str("conversation_id") or conversation.opt_str("id")
        if not session:
            conversation.child("conversation_id").fail(
                "is missing (and so is id)", "the conversation's id, a string"
            )
        title = title_of(conversation.opt_str("title"))
        mapping = conversation.req("mapping", "an object of message nodes")
        parents: dict[str, str | None] = {}
        children: dict[str, list[str]] = {}
        records: dict[str, _ChatGPTRecord] = {}
        for node_id in mapping.obj():  # every node is checked, on the path shown or not
            node = mapping.child(node_id)
            parents[node_id] = node.opt_str("parent")
            kids = []
            for kid in node.opt_list("children"):
                if not isinstance(kid.value, str):
                    kid.wrong("a node id (a string)")
                kids.append(kid.value)
            children[node_id] = kids
            records[node_id] = _chatgpt_record(node, node_id)
        current = conversation.opt_str("current_node")
        if current is None:
            path = _path_down(parents, children)
        elif current in parents:
            path = _path_up(mapping, current, parents)
        else:
            conversation.child("current_node").fail(
                f"names node {current!r}, which is not in mapping", "a key of mapping"
            )
        for position, node_id in enumerate(path):
            record = records[node_id]
            if isinstance(record, str):
                out.skip(session, position, record)
            else:
                message_id, role, said, at, empty_reason = record
                out.message(session, title, position, message_id, role, said, at, empty_reason)


def _path_up(mapping: Node, leaf: str, parents: dict[str, str | None]) -> list[str]:
    """From `leaf` up through the parents to the root, then reversed."""
    path: list[str] = []
    seen: set[str] = set()
    node_id: str | None = leaf
    while node_id is not None and node_id in parents:
        if node_id in seen:
            mapping.child(node_id).child("parent").fail(
                "closes a cycle of parent links", "a tree of messages"
            )
        seen.add(node_id)
        path.append(node_id)
        node_id = parents[node_id]
    path.reverse()
    return path


def _path_down(parents: dict[str, str | None], children: dict[str, list[str]]) -> list[str]:
    """From the root down, taking the first child each time (no current_node to follow)."""
    roots = [n for n, parent in parents.items() if parent is None or parent not in parents]
    path: list[str] = []
    seen: set[str] = set()
    node_id = roots[0] if roots else None
    while node_id is not None and node_id not in seen:
        seen.add(node_id)
        path.append(node_id)
        node_id = next((k for k in children[node_id] if k in parents), None)
    return path


# A message to keep (message id, role, text, time, reason should its text be empty), or the
# reason it is skipped.
_ChatGPTRecord = tuple[str, str, str, dt.datetime | None, str] | str


def _chatgpt_record(node: Node, node_id: str) -> _ChatGPTRecord:
    message = node.get("message")
    if message is None:
        return "empty"
    message.obj()
    role_name = message.req("author", "an object with a role").req_str("role")
    content = message.req("content", "an object with content_type")
    content_type = content.req_str("content_type")
    metadata = message.get("metadata")
    hidden = metadata is not None and metadata.flag("is_visually_hidden_from_conversation")
    recipient = message.opt_str("recipient")
    message_id = message.opt_str("id") or node_id
    at = message.epoch_or_iso("create_time")
    texts: list[str] = []
    pictures = 0
    for part in content.opt_list("parts"):
        if isinstance(part.value, str):
            if part.value.strip():
                texts.append(part.value.strip())
        elif isinstance(part.value, dict):
            if part.value.get("content_type") == "audio_transcription":
                said = part.opt_str("text")
                if said and said.strip():
                    texts.append(said.strip())
            else:
                pictures += 1  # an image, a file: not text
        elif part.value is not None:
            part.wrong("a string or an object")
    if hidden:
        return "hidden"
    if role_name == "system":
        return "system"
    if role_name == "tool":
        return "tool result"
    if role_name not in ("user", "assistant"):
        return f"{role_name} message"
    if role_name == "assistant" and recipient not in (None, "all"):
        return "tool use"
    if content_type not in _CHATGPT_TEXT:
        return _CHATGPT_REASONS.get(content_type, "not text")
    empty_reason = "attachment" if pictures else "empty"
    return message_id, role_name, "\n\n".join(texts), at, empty_reason
