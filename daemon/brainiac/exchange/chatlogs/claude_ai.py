"""The `claude-ai` chat export format.

The Claude.ai data export's `conversations.json`: a list of {"uuid", "name", "created_at",
"chat_messages": [{"uuid", "sender" ("human"|"assistant"), "text", "content": [{"type":
"text", "text", "citations", "start_timestamp", "stop_timestamp"} | {"type": "thinking",
"thinking", "summaries"} | {"type": "tool_use", "name", "input", ...} | {"type":
"tool_result", "name", "content", "is_error"}], "created_at", "attachments": [{"file_name",
"file_type", "file_size", "extracted_content"}], "files": [{"file_name"}]}]}. The text is the
`content` text blocks when `content` is a non-empty list, else `text` (in assistant turns with
tools, `text` holds stand-in markers for the tool calls, so it is not used then). A message
with no text but an attachment is Skipped("attachment"). chat_messages are taken in order.
Confirmed against: ejm554/claude-convo-converter convert_conversations.js (chat_messages,
content blocks text/tool_use/tool_result, attachments with extracted_content);
Sinity/polylogue docs/providers/claude-ai.md (sender, content segments, attachments/files);
thinking blocks with summaries and tool_use/tool_result with start_timestamp/stop_timestamp
were seen verbatim in public Claude.ai exports found by text search.
"""

from __future__ import annotations

from typing import Any

from brainiac.exchange.chatlogs.blocks import block_text, no_text_reason
from brainiac.exchange.chatlogs.records import Out, conversations, role_of, title_of


def parse_claude_ai(file: str, value: Any, out: Out) -> None:
    for conversation in conversations(file, value, "chat_messages", "Claude.ai conversations"):
        conversation.obj()
        session = conversation.req_str("uuid")
        title = title_of(conversation.opt_str("name"))
        chat = conversation.req("chat_messages", "a list of messages")
        for position, message in enumerate(chat.items()):
            message.obj()
            sender = message.req_str("sender")
            role = role_of(sender)
            if role is None:
                message.child("sender").fail(f"is {sender!r}", '"human" or "assistant"')
            content = message.opt_list("content")
            if content:
                said, kinds = block_text(content)
            else:
                said, kinds = message.opt_str("text") or "", set()
            attached = message.opt_list("attachments") + message.opt_list("files")
            attached += message.opt_list("files_v2")
            reason = no_text_reason(kinds - {"text"})
            if reason == "empty" and attached:
                reason = "attachment"
            out.message(
                session,
                title,
                position,
                message.opt_str("uuid"),
                role,
                said,
                message.iso_time("created_at"),
                empty_reason=reason,
            )
