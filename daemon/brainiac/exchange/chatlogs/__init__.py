"""Chat exports read into plain messages: who said what, when, in which conversation.

`parse(path)` reads one export file, finds its format by its content (`detect`), and returns every
message a person saw, in conversation order, and a `Skipped` record for every message-like record
it left out (tool calls and results, thinking, hidden system prompts, sidechains, empty text), so
an import can report what it read. A malformed file raises `ImportFormatError` naming the file,
the line or JSON path, what was found and what was expected; nothing of it is returned. A JSONL
transcript read live (`parse(..., live=True)`, the Stop hook's) is the exception: its lines that
are not UTF-8 or not JSON are left out and listed (`ChatFile.damaged`). Nothing
here writes anything: storing, de-duplicating and reporting are the importer's.

A message's `position` is its place among the message-like records of its conversation, counting
the skipped ones too, so it does not move when a transcript grows by appending; with the
conversation and the format's own message id (when it has one) it identifies the message. A
record that is not message-like and holds no place (a Claude Code summary or system line) is
reported as Skipped with position -1.

Each format is read by its own module (brainiac_jsonl, claude_code, claude_ai, chatgpt,
claude_export, markdown), whose docstring says which fields it relies on and where they were
confirmed; detection.py finds the format, records.py holds what they share.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from brainiac.core.errors import ImportFormatError
from brainiac.exchange.chatlogs.brainiac_jsonl import parse_brainiac
from brainiac.exchange.chatlogs.chatgpt import parse_chatgpt
from brainiac.exchange.chatlogs.claude_ai import parse_claude_ai
from brainiac.exchange.chatlogs.claude_code import parse_claude_code
from brainiac.exchange.chatlogs.claude_export import parse_claude_export
from brainiac.exchange.chatlogs.detection import NOT_READ, sniff
from brainiac.exchange.chatlogs.markdown import parse_markdown, scan_markdown
from brainiac.exchange.chatlogs.records import (
    ChatFile,
    Damaged,
    Message,
    Out,
    Skipped,
    decode_lines,
    decode_text,
    load_json,
    written_part,
)

__all__ = ["FORMATS", "ChatFile", "Damaged", "Message", "Skipped", "detect", "parse"]


FORMATS: tuple[str, ...] = (
    "brainiac",
    "claude-code",
    "claude-ai",
    "chatgpt",
    "claude-export",
    "markdown",
)


_LINE_FORMATS = ("brainiac", "claude-code")  # JSONL: a line can be damaged on its own


def detect(path: Path, data: bytes) -> str:
    """The format of `data` (the content of `path`), by content; the suffix only breaks ties."""
    path = Path(path)
    return sniff(path, decode_text(path, data))[0]


def parse(
    path: Path, format: str | None = None, data: bytes | None = None, live: bool = False
) -> ChatFile:
    """Read a chat export whole. `data` is the file's content when the caller has read it already;
    `format` skips detection. Raises ImportFormatError for a malformed or unknown file.

    `live`: the file is a JSONL transcript still being written, in the format named by `format`
    (the Stop hook's). One damaged line must not stop the session's import for good, so a line
    that is not UTF-8 or not JSON (cut by a crash) is left out and listed in `damaged`, and a
    last line still being written is left unread (`unread`) until it is complete."""
    path = Path(path)
    if format is not None and format not in FORMATS:
        raise ImportFormatError(
            str(path), None, f"unknown format {format!r}", "one of " + ", ".join(FORMATS)
        )
    if data is None:
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise ImportFormatError(
                str(path), None, f"cannot be read ({exc.strerror or exc})", "a readable file"
            ) from exc
    live = live and format in _LINE_FORMATS
    unread = 0
    if live:
        unread = len(data) - len(written_part(data))
        text = decode_lines(data[: len(data) - unread])
    else:
        text = decode_text(path, data)
    value: Any = NOT_READ
    if format is None:
        format, value = sniff(path, text)
    out = Out(live)
    file = str(path)
    stem = path.stem or path.name or "chat"
    if format == "brainiac":
        parse_brainiac(file, stem, text, out)
    elif format == "claude-code":
        parse_claude_code(file, stem, text, out)
    elif format in ("claude-ai", "chatgpt"):
        if value is NOT_READ:
            value = load_json(file, text)
        if format == "claude-ai":
            parse_claude_ai(file, value, out)
        else:
            parse_chatgpt(file, value, out)
    elif format == "claude-export":
        parse_claude_export(stem, text, out)
    else:
        parse_markdown(stem, scan_markdown(file, text) if value is NOT_READ else value, out)
    messages, skipped = out.result()
    return ChatFile(path, format, messages, skipped, out.damaged, unread)
