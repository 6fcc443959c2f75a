"""Which format a chat export is, found by its content (the file's suffix only breaks ties)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from brainiac.core.errors import ImportFormatError
from brainiac.exchange.chatlogs.markdown import scan_markdown
from brainiac.exchange.chatlogs.records import (
    json_failure,
    json_line,
    keys_of,
    kind_of,
    nonblank_lines,
)

NOT_READ = object()


_EXPECTED_ANY = (
    "a chat export: brainiac or Claude Code JSONL, a ChatGPT or Claude.ai conversations.json, "
    "a Claude Code /export text, or a Markdown chat log"
)


_CLAUDE_CODE_TYPES = frozenset(
    {
        "user",
        "assistant",
        "summary",
        "system",
        "file-history-snapshot",
        "queue-operation",
        "progress",
        "attachment",
        "custom-title",
        "ai-title",
    }
)


_SNIFF_LINES = 200


def sniff(path: Path, text: str) -> tuple[str, Any]:
    """The format, and the parsed JSON document when detection had to parse it."""
    file = str(path)
    head = text.lstrip()
    if not head:
        if path.suffix.lower() == ".jsonl":
            return "brainiac", NOT_READ
        raise ImportFormatError(file, None, "the file is empty", _EXPECTED_ANY)
    if head[0] not in "[{":
        if _looks_like_claude_export(text):
            return "claude-export", NOT_READ
        return "markdown", scan_markdown(file, text)
    try:
        value = json.loads(text)
    except (ValueError, RecursionError) as exc:
        if head[0] == "{" and _first_line_is_object(text):
            return _jsonl_format(file, text), NOT_READ
        json_failure(file, exc)
    if isinstance(value, list):
        return _json_list_format(file, value), value
    if "mapping" in value:
        return "chatgpt", value
    if "chat_messages" in value:
        return "claude-ai", value
    if "\n" not in text.strip():
        return _jsonl_format(file, text), NOT_READ  # a JSONL file of one line
    raise ImportFormatError(
        file,
        "$",
        f"is an object with {keys_of(value)}",
        'a list of ChatGPT conversations (with "mapping") or Claude.ai conversations '
        '(with "chat_messages"), or JSON lines',
    )


def _first_line_is_object(text: str) -> bool:
    for _, line in nonblank_lines(text):
        try:
            return isinstance(json.loads(line), dict)
        except (ValueError, RecursionError):
            return False
    return False


def _json_list_format(file: str, value: list[Any]) -> str:
    if not value:
        return "chatgpt"  # an empty conversations.json: no messages, whichever it is
    first = value[0]
    expected = (
        'a list of ChatGPT conversations (objects with "mapping") or of Claude.ai '
        'conversations (objects with "chat_messages")'
    )
    if not isinstance(first, dict):
        raise ImportFormatError(file, "$[0]", f"is {kind_of(first)}", expected)
    if "mapping" in first:
        return "chatgpt"
    if "chat_messages" in first:
        return "claude-ai"
    raise ImportFormatError(file, "$[0]", f"is an object with {keys_of(first)}", expected)


def _jsonl_format(file: str, text: str) -> str:
    seen: list[str] = []
    for n, (lineno, line) in enumerate(nonblank_lines(text)):
        if n >= _SNIFF_LINES:
            break
        obj = json_line(file, lineno, line)
        if not isinstance(obj, dict):
            raise ImportFormatError(
                file, f"line {lineno}", f"is {kind_of(obj)}", "one JSON object per line"
            )
        if "sessionId" in obj and "type" in obj:
            return "claude-code"
        kind = obj.get("type")
        if isinstance(kind, str) and kind in _CLAUDE_CODE_TYPES and "text" not in obj:
            return "claude-code"
        if "text" in obj:
            return "brainiac"
        if not seen:
            seen.append(f"line {lineno}: an object with {keys_of(obj)}")
    raise ImportFormatError(
        file,
        None,
        f"JSON lines of no known kind ({seen[0] if seen else 'no lines'})",
        'Claude Code transcript lines (with "sessionId" and "type") or brainiac events '
        '(with "text")',
    )


_CX_WELCOME = re.compile(r"Welcome to Claude Code|▐▛███▜▌|Claude Code v\d")


_CX_BULLET_LINE = re.compile(r"^(?:⏺|●)(?: |$)", re.MULTILINE)


_CX_PROMPT_LINE = re.compile(r"^(?:>|❯)(?: |$)", re.MULTILINE)


def _looks_like_claude_export(text: str) -> bool:
    head = "\n".join(text.split("\n", _SNIFF_LINES)[:_SNIFF_LINES])
    if _CX_WELCOME.search(head) and (_CX_BULLET_LINE.search(text) or _CX_PROMPT_LINE.search(text)):
        return True
    if re.search(r"^⏺ ", text, re.MULTILINE):
        return True
    return bool(
        re.search(r"^● ", text, re.MULTILINE) and _CX_PROMPT_LINE.search(text) and "⎿" in text
    )
