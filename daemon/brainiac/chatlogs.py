"""Chat exports read into plain messages: who said what, when, in which conversation.

`parse(path)` reads one export file, finds its format by its content (`detect`), and returns every
message a person saw, in conversation order, and a `Skipped` record for every message-like record
it left out (tool calls and results, thinking, hidden system prompts, sidechains, empty text), so
an import can report what it read. A malformed file raises `ImportFormatError` naming the file,
the line or JSON path, what was found and what was expected; nothing of it is returned. Nothing
here writes anything: storing, de-duplicating and reporting are the importer's.

A message's `position` is its place among the message-like records of its conversation, counting
the skipped ones too, so it does not move when a transcript grows by appending; with the
conversation and the format's own message id (when it has one) it identifies the message. A
record that is not message-like and holds no place (a Claude Code summary or system line) is
reported as Skipped with position -1.

The formats, the fields relied on, and where they were confirmed (public repositories):

brainiac
    JSONL, one event a line: {"text": str (required), "role": str (default "user"),
    "session": str|null (default: the file name's stem), "at": ISO-8601 str|null, "id":
    str|null}. Blank lines are ignored. position = index among the lines of that session.

claude-code
    Claude Code's session transcript, `~/.claude/projects/<project>/<sessionId>.jsonl`: one JSON
    object a line. Relied on: `type` ("user", "assistant"; "summary" and "system" reported as
    Skipped with no place; "custom-title"/"ai-title" give the title; "file-history-snapshot",
    "queue-operation", "progress", "attachment" and any other type ignored), `sessionId`,
    `uuid` (the message id), `timestamp` (ISO-8601 with Z), `isSidechain`, `isMeta` (may be
    null), `isCompactSummary` (the summary a /compact injects as a user line), `isApiErrorMessage`,
    and `message.content`: a string, or a list of blocks {"type": "text", "text"},
    {"type": "tool_use", "id", "name", "input"}, {"type": "tool_result", "tool_use_id",
    "content"}, {"type": "thinking", "thinking", "signature"}, {"type": "image", "source"}.
    One API message is written as several lines (one per content block) sharing `message.id`,
    each with its own `uuid`; each line is its own record here. User lines holding only
    `<command-name>`/`<local-command-stdout>`/`<bash-input>`... wrappers are slash or shell
    commands ("command"); "[Request interrupted by user]" is "interrupted".
    Confirmed against: daaain/claude-code-log claude_code_log/models.py (the transcript entry
    models: BaseTranscriptEntry, SummaryTranscriptEntry {summary, leafUuid, no sessionId},
    SystemTranscriptEntry, AiTitleTranscriptEntry {aiTitle}, the content block models);
    daaain/claude-code-log test/test_data/sidechain_integrated.jsonl (isSidechain, "isMeta": null,
    two lines sharing message.id) and test/test_data/minimal_showcase/
    55550000-0000-4000-8000-000000000001.jsonl (tool_result-only user lines, text + tool_use);
    alosec/claude-editor-hook memory-bank/03-guides/jsonl-analysis.md (file-history-snapshot and
    summary lines, sidechain warmups). isCompactSummary, "custom-title" {customTitle} and the
    command wrappers were seen in several public transcript readers' test fixtures.

claude-ai
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

chatgpt
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

claude-export
    The text Claude Code's `/export` writes (to a file or the clipboard). It starts with the
    welcome box (`╭───╮ │ ✻ Welcome to Claude Code! │ ... ╰───╯`, or since 2.x the logo
    `▐▛███▜▌ Claude Code vX`), then one block per record: a prompt `> text` (`❯ text` since
    2.x), continued on lines indented by two spaces; an assistant bullet `⏺ text` (`● text` on
    Linux and Windows); a tool call `⏺ Tool(args)` followed by its result lines `  ⎿  ...`
    (Skipped "tool use"); `✻ Thinking…` and its indented text (Skipped "thinking"); status lines
    such as `✻ Brewed for 46s` (no place). A prompt that is a slash or shell command with output
    (`> /login` + `⎿  Login successful`) is Skipped("command"); collapsed tool lines such as
    `Read 3 files (ctrl+o to expand)` are left out of the assistant text. session = the file
    name's stem; no message ids or times.
    Confirmed against: public /export files found by text search (a 1.0.x export with the
    welcome box, "> " prompts, "●" bullets, "⎿" results and "✻ Thinking…"; 2.1.x exports with
    the logo header, "❯" prompts, "⏺" bullets, "Read 3 files (ctrl+o to expand)" and
    "✻ Baked for 52s"); an export test fixture of a 2.0.76 export (multi-line tool arguments,
    "/skill" lines); taehojo/vibecoding issue #55 (a 2.1.138 export) and anthropics/claude-code
    issue #11375 (the /export dialog: clipboard or file).

markdown
    A plain Markdown chat log: each message starts with a heading `## User` / `### Assistant`
    (any level; the role optionally followed by a time in parentheses or after a dash or colon;
    an emoji before the role is allowed), a line `**User:** text` (or `**User**: text`), or
    `User: text`; the roles are User, Human, You, Assistant, AI, Claude, ChatGPT and System, in
    any case. A message runs until the next message start; starts inside fenced code blocks do
    not count. A first `# Title` heading before the first message sets the title; YAML
    frontmatter is ignored; a trailing horizontal rule is not part of a message. A time that
    parses as ISO-8601 becomes `at`. session = the file name's stem; no message ids.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from brainiac.errors import ImportFormatError
from brainiac.fences import Fences

FORMATS: tuple[str, ...] = (
    "brainiac",
    "claude-code",
    "claude-ai",
    "chatgpt",
    "claude-export",
    "markdown",
)


@dataclass(frozen=True)
class Message:
    session: str  # the conversation's stable id, or the file name's stem when the format has none
    title: str | None  # the conversation's title when the format has one
    position: int  # 0-based place among the conversation's message-like records (skipped too)
    message_id: str | None  # the format's own message id when it has one
    role: str  # "user", "assistant" or "system"
    text: str  # the visible text, text blocks joined with a blank line; never empty
    at: dt.datetime | None  # aware when the format gives an offset, naive when it gives none


@dataclass(frozen=True)
class Skipped:
    session: str
    position: int  # -1 for a record that holds no place (a Claude Code summary or system line)
    reason: str  # "tool result", "tool use", "thinking", "empty", "meta", "sidechain", ...


@dataclass(frozen=True)
class ChatFile:
    path: Path
    format: str
    messages: list[Message]  # in conversation order, conversations in file order
    skipped: list[Skipped]


# --------------------------------------------------------------------------------------------
# The entry points


def detect(path: Path, data: bytes) -> str:
    """The format of `data` (the content of `path`), by content; the suffix only breaks ties."""
    path = Path(path)
    return _sniff(path, _decode(path, data))[0]


def parse(path: Path, format: str | None = None, data: bytes | None = None) -> ChatFile:
    """Read a chat export whole. `data` is the file's content when the caller has read it already;
    `format` skips detection. Raises ImportFormatError for a malformed or unknown file."""
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
    text = _decode(path, data)
    value: Any = _NOT_READ
    if format is None:
        format, value = _sniff(path, text)
    out = _Out()
    file = str(path)
    stem = path.stem or path.name or "chat"
    if format == "brainiac":
        _parse_brainiac(file, stem, text, out)
    elif format == "claude-code":
        _parse_claude_code(file, stem, text, out)
    elif format in ("claude-ai", "chatgpt"):
        if value is _NOT_READ:
            value = _load_json(file, text)
        if format == "claude-ai":
            _parse_claude_ai(file, value, out)
        else:
            _parse_chatgpt(file, value, out)
    elif format == "claude-export":
        _parse_claude_export(stem, text, out)
    else:
        _parse_markdown(stem, _scan_markdown(file, text) if value is _NOT_READ else value, out)
    messages, skipped = out.result()
    return ChatFile(path, format, messages, skipped)


# --------------------------------------------------------------------------------------------
# Reading and detecting

_NOT_READ = object()
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


def _decode(path: Path, data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ImportFormatError(
            str(path),
            f"line {line}",
            f"not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})",
            "a UTF-8 text file",
        ) from None


def _load_json(file: str, text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        _json_failure(file, exc)


def _json_failure(file: str, exc: Exception) -> NoReturn:
    if isinstance(exc, json.JSONDecodeError):
        raise ImportFormatError(
            file, f"line {exc.lineno}, column {exc.colno}", f"not valid JSON ({exc.msg})", "JSON"
        ) from None
    # a number too long to read, nesting too deep
    raise ImportFormatError(file, None, f"not valid JSON ({exc})", "JSON") from None


def _sniff(path: Path, text: str) -> tuple[str, Any]:
    """The format, and the parsed JSON document when detection had to parse it."""
    file = str(path)
    head = text.lstrip()
    if not head:
        if path.suffix.lower() == ".jsonl":
            return "brainiac", _NOT_READ
        raise ImportFormatError(file, None, "the file is empty", _EXPECTED_ANY)
    if head[0] not in "[{":
        if _looks_like_claude_export(text):
            return "claude-export", _NOT_READ
        return "markdown", _scan_markdown(file, text)
    try:
        value = json.loads(text)
    except (ValueError, RecursionError) as exc:
        if head[0] == "{" and _first_line_is_object(text):
            return _jsonl_format(file, text), _NOT_READ
        _json_failure(file, exc)
    if isinstance(value, list):
        return _json_list_format(file, value), value
    if "mapping" in value:
        return "chatgpt", value
    if "chat_messages" in value:
        return "claude-ai", value
    if "\n" not in text.strip():
        return _jsonl_format(file, text), _NOT_READ  # a JSONL file of one line
    raise ImportFormatError(
        file,
        "$",
        f"is an object with {_keys(value)}",
        'a list of ChatGPT conversations (with "mapping") or Claude.ai conversations '
        '(with "chat_messages"), or JSON lines',
    )


def _first_line_is_object(text: str) -> bool:
    for _, line in _nonblank_lines(text):
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
        raise ImportFormatError(file, "$[0]", f"is {_kind(first)}", expected)
    if "mapping" in first:
        return "chatgpt"
    if "chat_messages" in first:
        return "claude-ai"
    raise ImportFormatError(file, "$[0]", f"is an object with {_keys(first)}", expected)


def _jsonl_format(file: str, text: str) -> str:
    seen: list[str] = []
    for n, (lineno, line) in enumerate(_nonblank_lines(text)):
        if n >= _SNIFF_LINES:
            break
        obj = _json_line(file, lineno, line)
        if not isinstance(obj, dict):
            raise ImportFormatError(
                file, f"line {lineno}", f"is {_kind(obj)}", "one JSON object per line"
            )
        if "sessionId" in obj and "type" in obj:
            return "claude-code"
        kind = obj.get("type")
        if isinstance(kind, str) and kind in _CLAUDE_CODE_TYPES and "text" not in obj:
            return "claude-code"
        if "text" in obj:
            return "brainiac"
        if not seen:
            seen.append(f"line {lineno}: an object with {_keys(obj)}")
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


def _nonblank_lines(text: str) -> Iterator[tuple[int, str]]:
    """(line number, line) of each line with content. Only "\n" ends a line: JSON strings may hold
    a raw U+2028, which str.splitlines would split on."""
    for lineno, line in enumerate(text.split("\n"), 1):
        if line.strip():
            yield lineno, line


def _json_line(file: str, lineno: int, line: str) -> Any:
    try:
        return json.loads(line)
    except json.JSONDecodeError as exc:
        raise ImportFormatError(
            file,
            f"line {lineno}",
            f"not valid JSON ({exc.msg} at column {exc.colno})",
            "one JSON object per line",
        ) from None
    except (ValueError, RecursionError) as exc:
        raise ImportFormatError(
            file, f"line {lineno}", f"not valid JSON ({exc})", "one JSON object per line"
        ) from None


# --------------------------------------------------------------------------------------------
# Checking JSON values, with where they are for the error message


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _keys(obj: dict[str, Any]) -> str:
    names = list(obj)
    if not names:
        return "no keys"
    shown = ", ".join(json.dumps(k, ensure_ascii=False) for k in names[:6])
    return "keys " + shown + (", ..." if len(names) > 6 else "")


_PLAIN_KEY = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_-]*$")


class _Node:
    """A JSON value and where it is: a JSON path in a JSON document ("$[3].mapping.abc"), or a
    line of a JSONL file and the dotted field within it."""

    __slots__ = ("field", "file", "line", "value")

    def __init__(self, file: str, value: Any, field: str, line: int | None) -> None:
        self.file = file
        self.value = value
        self.field = field
        self.line = line

    def child(self, key: str | int) -> _Node:
        """The item or field `key` (null when an object has no such field)."""
        if isinstance(key, int):
            return _Node(self.file, self.value[key], f"{self.field}[{key}]", self.line)
        if _PLAIN_KEY.match(key):
            field = f"{self.field}.{key}" if self.field else key
        else:
            field = f"{self.field}[{json.dumps(key, ensure_ascii=False)}]"
        return _Node(self.file, self.value.get(key), field, self.line)

    def fail(self, problem: str, expected: str) -> NoReturn:
        """Raise for this value; `problem` reads after its name: "is a number", "is missing"."""
        if self.line is None:
            raise ImportFormatError(self.file, self.field, problem, expected)
        subject = f'"{self.field}" ' if self.field else "the line "
        raise ImportFormatError(self.file, f"line {self.line}", subject + problem, expected)

    def wrong(self, expected: str) -> NoReturn:
        self.fail(f"is {_kind(self.value)}", expected)

    # The value as a type

    def obj(self) -> dict[str, Any]:
        if not isinstance(self.value, dict):
            self.wrong("an object")
        return self.value

    def items(self) -> list[_Node]:
        if not isinstance(self.value, list):
            self.wrong("a list")
        return [self.child(i) for i in range(len(self.value))]

    # Fields of an object

    def get(self, key: str) -> _Node | None:
        """The field, or None when it is absent or null."""
        obj = self.obj()
        if obj.get(key) is None:
            return None
        return self.child(key)

    def req(self, key: str, expected: str) -> _Node:
        obj = self.obj()
        if key not in obj:
            self.child(key).fail("is missing", expected)
        return self.child(key)

    def req_str(self, key: str) -> str:
        value = self.req(key, "a string")
        if not isinstance(value.value, str):
            value.wrong("a string")
        return value.value

    def opt_str(self, key: str) -> str | None:
        value = self.get(key)
        if value is None:
            return None
        if not isinstance(value.value, str):
            value.wrong("a string or null")
        return value.value

    def opt_list(self, key: str) -> list[_Node]:
        value = self.get(key)
        if value is None:
            return []
        if not isinstance(value.value, list):
            value.wrong("a list or null")
        return value.items()

    def flag(self, key: str) -> bool:
        value = self.get(key)
        if value is None:
            return False
        if not isinstance(value.value, bool):
            value.wrong("true, false or null")
        return value.value

    def iso_time(self, key: str) -> dt.datetime | None:
        text = self.opt_str(key)
        if text is None or not text.strip():
            return None
        at = _iso(text)
        if at is None:
            self.child(key).fail(
                f"is {text[:40]!r}, not an ISO-8601 time", 'a time such as "2026-11-20T09:12:00Z"'
            )
        return at

    def epoch_or_iso(self, key: str) -> dt.datetime | None:
        value = self.get(key)
        if value is None:
            return None
        raw = value.value
        if isinstance(raw, str):
            return self.iso_time(key)
        if isinstance(raw, int | float) and not isinstance(raw, bool):
            at = _epoch(raw)
            if at is None:
                value.fail(f"is {raw!r}, out of range", "seconds since 1970")
            return at
        value.wrong("seconds since 1970 (a number), an ISO-8601 string or null")


def _iso(text: str) -> dt.datetime | None:
    try:
        return _local_time_exists(dt.datetime.fromisoformat(text.strip()))
    except (ValueError, TypeError, OverflowError):
        return None


def _epoch(seconds: float) -> dt.datetime | None:
    if not math.isfinite(seconds):
        return None
    try:
        return _local_time_exists(dt.datetime.fromtimestamp(seconds, tz=dt.UTC))
    except (OverflowError, OSError, ValueError):
        return None


def _local_time_exists(at: dt.datetime) -> dt.datetime:
    """`at`, once it is known to have a local time: the vault stores local times, and an offset
    can take a time near year 1 or 9999 out of range (`0001-01-01T00:00+14:00`: OverflowError)."""
    if at.tzinfo is not None:
        at.astimezone()
    return at


# --------------------------------------------------------------------------------------------
# Collecting the result

_ROLES = {
    "user": "user",
    "human": "user",
    "you": "user",
    "assistant": "assistant",
    "ai": "assistant",
    "claude": "assistant",
    "chatgpt": "assistant",
    "gpt": "assistant",
    "bot": "assistant",
    "model": "assistant",
    "system": "system",
}
_ROLE_NAMES = "user, assistant or system (also human, you, ai, claude, chatgpt, gpt, bot, model)"


def _role(name: str) -> str | None:
    return _ROLES.get(name.strip().lower())


def _unicode(text: str) -> str:
    """`text` with any lone surrogate (from a "\\ud800" escape in JSON) made U+FFFD, so that it
    can be written as UTF-8."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


class _Out:
    """Messages and skipped records, grouped by conversation in the order conversations appear."""

    def __init__(self) -> None:
        self._messages: dict[str, list[Message]] = {}
        self._skipped: dict[str, list[Skipped]] = {}

    def _conversation(self, session: str) -> None:
        if session not in self._messages:
            self._messages[session] = []
            self._skipped[session] = []

    def message(
        self,
        session: str,
        title: str | None,
        position: int,
        message_id: str | None,
        role: str,
        text: str,
        at: dt.datetime | None,
        empty_reason: str = "empty",
    ) -> None:
        text = _unicode(text).strip()
        if not text:
            self.skip(session, position, empty_reason)
            return
        session = _unicode(session)
        title = _unicode(title) if title is not None else None
        message_id = _unicode(message_id) if message_id is not None else None
        self._conversation(session)
        self._messages[session].append(
            Message(session, title, position, message_id, role, text, at)
        )

    def skip(self, session: str, position: int, reason: str) -> None:
        session = _unicode(session)
        self._conversation(session)
        self._skipped[session].append(Skipped(session, position, reason))

    def result(self) -> tuple[list[Message], list[Skipped]]:
        messages = [m for ms in self._messages.values() for m in ms]
        skipped = [s for ss in self._skipped.values() for s in ss]
        return messages, skipped


def _title(text: str | None) -> str | None:
    if text is None:
        return None
    text = " ".join(text.split())
    return text or None


# --------------------------------------------------------------------------------------------
# brainiac


def _parse_brainiac(file: str, stem: str, text: str, out: _Out) -> None:
    places: dict[str, int] = {}
    for lineno, line in _nonblank_lines(text):
        node = _Node(file, _json_line(file, lineno, line), "", lineno)
        node.obj()
        said = node.req_str("text")
        role_name = node.opt_str("role")
        role = "user" if role_name is None else _role(role_name)
        if role is None:
            node.child("role").fail(f"is {role_name!r}, not a role brainiac knows", _ROLE_NAMES)
        session = node.opt_str("session") or stem
        at = node.iso_time("at")
        message_id = node.opt_str("id") or None
        position = places.get(session, 0)
        places[session] = position + 1
        out.message(session, None, position, message_id, role, said, at)


# --------------------------------------------------------------------------------------------
# Content blocks (Claude Code and Claude.ai)

_THINKING = frozenset({"thinking", "redacted_thinking"})
_TOOL_USE = frozenset({"tool_use", "server_tool_use", "mcp_tool_use"})
_TOOL_RESULT = frozenset({"tool_result", "web_search_tool_result", "mcp_tool_result"})
_ATTACHMENT = frozenset({"image", "document", "file"})


def _blocks(blocks: list[_Node]) -> tuple[str, set[str]]:
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


def _no_text_reason(kinds: set[str]) -> str:
    if kinds & _TOOL_RESULT:
        return "tool result"
    if kinds & _TOOL_USE:
        return "tool use"
    if kinds & _THINKING:
        return "thinking"
    if kinds & _ATTACHMENT:
        return "attachment"
    return "empty"


# --------------------------------------------------------------------------------------------
# claude-code

_COMMAND_WRAPPER = re.compile(
    r"^\s*<(?:command-name|command-message|command-args|local-command-stdout|"
    r"local-command-stderr|local-command-caveat|bash-input|bash-stdout|bash-stderr)>"
)
_INTERRUPTED = re.compile(r"^\[Request interrupted by user[^\]\n]*\]$")


def _parse_claude_code(file: str, stem: str, text: str, out: _Out) -> None:
    records: list[tuple[str, _Node]] = []
    titles: dict[str, tuple[int, str]] = {}  # session -> (rank, title): a person's beats an AI's
    session_of_uuid: dict[str, str] = {}
    first_session: str | None = None
    for lineno, line in _nonblank_lines(text):  # read and check every line before using any
        node = _Node(file, _json_line(file, lineno, line), "", lineno)
        node.obj()
        kind = node.req_str("type")
        session = node.opt_str("sessionId")
        if session and first_session is None:
            first_session = session
        if kind in ("user", "assistant"):
            content = node.req("message", "an object").req(
                "content", "a string or a list of content blocks"
            )
            if isinstance(content.value, list):
                _blocks(content.items())
            elif not isinstance(content.value, str):
                content.wrong("a string or a list of content blocks")
            for flag in ("isSidechain", "isMeta", "isCompactSummary", "isApiErrorMessage"):
                node.flag(flag)
            node.iso_time("timestamp")
            uuid = node.opt_str("uuid")
            if uuid and session:
                session_of_uuid[uuid] = session
        elif kind in ("custom-title", "ai-title"):
            key, rank = ("customTitle", 2) if kind == "custom-title" else ("aiTitle", 1)
            title = _title(node.opt_str(key))
            if title and session and rank >= titles.get(session, (0, ""))[0]:
                titles[session] = (rank, title)
        records.append((kind, node))

    default = first_session or stem
    places: dict[str, int] = {}
    for kind, node in records:
        session = node.opt_str("sessionId") or default
        if kind == "summary":
            leaf = node.opt_str("leafUuid") or ""
            out.skip(session_of_uuid.get(leaf, session), -1, "summary")
            continue
        if kind == "system":
            out.skip(session, -1, "system")
            continue
        if kind not in ("user", "assistant"):
            continue
        position = places.get(session, 0)
        places[session] = position + 1
        reason = _claude_code_skip(node, kind)
        if reason is not None:
            out.skip(session, position, reason)
            continue
        content = node.child("message").child("content")
        kinds: set[str] = set()
        if isinstance(content.value, str):
            said = content.value
        else:
            said, kinds = _blocks(content.items())
            kinds.discard("text")
        if kind == "user" and _COMMAND_WRAPPER.match(said):
            out.skip(session, position, "command")
            continue
        if kind == "user" and _INTERRUPTED.match(said.strip()):
            out.skip(session, position, "interrupted")
            continue
        out.message(
            session,
            titles[session][1] if session in titles else None,
            position,
            node.opt_str("uuid"),
            kind,
            said,
            node.iso_time("timestamp"),
            empty_reason=_no_text_reason(kinds),
        )


def _claude_code_skip(node: _Node, kind: str) -> str | None:
    if node.flag("isSidechain"):
        return "sidechain"
    if node.flag("isMeta"):
        return "meta"
    if node.flag("isCompactSummary"):
        return "summary"
    if kind == "assistant" and node.flag("isApiErrorMessage"):
        return "api error"
    return None


# --------------------------------------------------------------------------------------------
# claude-ai


def _conversations(file: str, value: Any, key: str, what: str) -> list[_Node]:
    root = _Node(file, value, "$", None)
    if isinstance(value, dict) and key in value:
        return [root]  # one conversation on its own
    if not isinstance(value, list):
        if isinstance(value, dict):
            root.fail(f"is an object with {_keys(value)}", f"a list of {what}")
        root.wrong(f"a list of {what}")
    return root.items()


def _parse_claude_ai(file: str, value: Any, out: _Out) -> None:
    for conversation in _conversations(file, value, "chat_messages", "Claude.ai conversations"):
        conversation.obj()
        session = conversation.req_str("uuid")
        title = _title(conversation.opt_str("name"))
        chat = conversation.req("chat_messages", "a list of messages")
        for position, message in enumerate(chat.items()):
            message.obj()
            sender = message.req_str("sender")
            role = _role(sender)
            if role is None:
                message.child("sender").fail(f"is {sender!r}", '"human" or "assistant"')
            content = message.opt_list("content")
            if content:
                said, kinds = _blocks(content)
            else:
                said, kinds = message.opt_str("text") or "", set()
            attached = message.opt_list("attachments") + message.opt_list("files")
            attached += message.opt_list("files_v2")
            reason = _no_text_reason(kinds - {"text"})
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


# --------------------------------------------------------------------------------------------
# chatgpt

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


def _parse_chatgpt(file: str, value: Any, out: _Out) -> None:
    for conversation in _conversations(file, value, "mapping", "ChatGPT conversations"):
        conversation.obj()
        session = conversation.opt_str("conversation_id") or conversation.opt_str("id")
        if not session:
            conversation.child("conversation_id").fail(
                "is missing (and so is id)", "the conversation's id, a string"
            )
        title = _title(conversation.opt_str("title"))
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


def _path_up(mapping: _Node, leaf: str, parents: dict[str, str | None]) -> list[str]:
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


def _chatgpt_record(node: _Node, node_id: str) -> _ChatGPTRecord:
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


# --------------------------------------------------------------------------------------------
# claude-export

_CX_USER = re.compile(r"^(?:>|❯)(?: (?P<text>.*))?$")
_CX_ASSISTANT = re.compile(r"^(?:⏺|●)(?: (?P<text>.*))?$")
_CX_THINKING = re.compile(r"^(?:✻|∴) Thinking|^∴ Thought")
_CX_STATUS = re.compile(r"^[✻✽✶✳✢∴※] ")
_CX_RESULT = re.compile(r"^\s+⎿")
_CX_COLLAPSED = re.compile(r"^\s+\S.*\(ctrl\+\w to expand\)\s*$")
_CX_COMMAND = re.compile(r"^[/!]\S*")
_CX_SLASH_ONLY = re.compile(r"^/[\w:.-]+$")


def _parse_claude_export(stem: str, text: str, out: _Out) -> None:
    blocks: list[tuple[str, list[str]]] = []  # (kind, lines); kind: user, assistant, thinking
    current: list[str] | None = None
    for raw in text.split("\n"):
        line = raw.rstrip()
        if _CX_USER.match(line):
            current = [line]
            blocks.append(("user", current))
        elif _CX_ASSISTANT.match(line):
            current = [line]
            blocks.append(("assistant", current))
        elif _CX_THINKING.match(line):
            current = [line]
            blocks.append(("thinking", current))
        elif _CX_STATUS.match(line):
            current = None  # a status line ("✻ Brewed for 46s"): no record
        elif current is not None:
            current.append(line)
    for position, (kind, lines) in enumerate(blocks):
        if kind == "thinking":
            out.skip(stem, position, "thinking")
        elif kind == "user":
            _cx_user(stem, position, lines, out)
        else:
            _cx_assistant(stem, position, lines, out)


def _dedent(line: str) -> str:
    return line[2:] if line.startswith("  ") else line.lstrip(" ")


def _cx_user(stem: str, position: int, lines: list[str], out: _Out) -> None:
    match = _CX_USER.match(lines[0])
    first = (match.group("text") if match else None) or ""
    prompt = [first]
    output = False
    for line in lines[1:]:
        if _CX_RESULT.match(line):
            output = True
            break
        prompt.append(_dedent(line))
    said = "\n".join(prompt).strip()
    if said and (
        (output and _CX_COMMAND.match(said)) or (_CX_SLASH_ONLY.match(said) and "\n" not in said)
    ):
        out.skip(stem, position, "command")
        return
    out.message(stem, None, position, None, "user", said, None)


def _cx_assistant(stem: str, position: int, lines: list[str], out: _Out) -> None:
    match = _CX_ASSISTANT.match(lines[0])
    first = (match.group("text") if match else None) or ""
    if any(_CX_RESULT.match(line) for line in lines[1:]):
        out.skip(stem, position, "tool use")
        return
    body = [_dedent(line) for line in lines[1:] if not _CX_COLLAPSED.match(line)]
    said = "\n".join([first, *body]).strip()
    if _CX_SLASH_ONLY.match(said):
        out.skip(stem, position, "command")  # a skill or command the assistant ran
        return
    out.message(stem, None, position, None, "assistant", said, None)


# --------------------------------------------------------------------------------------------
# markdown

_MD_ROLE = r"(?P<role>user|human|you|assistant|ai|claude|chatgpt|system)"
_MD_HEADING = re.compile(
    r"^#{1,6}[ \t]+(?:[^\w\s#*][^\w\s]*[ \t]*)?(?:\*\*)?" + _MD_ROLE + r"(?:\*\*)?[ \t]*"
    r"(?:\((?P<paren>[^()\n]*)\)|[-–—:][ \t]*(?P<dash>[^\n]*?))?[ \t]*:?[ \t]*#*[ \t]*$",
    re.IGNORECASE,
)
_MD_BOLD = re.compile(
    r"^\*\*" + _MD_ROLE + r"(?::\*\*|\*\*[ \t]*:|\*\*[ \t]*$)[ \t]*(?P<text>.*)$", re.IGNORECASE
)
_MD_PLAIN = re.compile(r"^" + _MD_ROLE + r":(?:[ \t]+(?P<text>.*))?$", re.IGNORECASE)
_MD_HEADING_MAX = 200  # longer heading lines are no role headings (and the pattern stays fast)
_MD_TITLE = re.compile(r"^#[ \t]+(?P<title>.+?)[ \t]*#*[ \t]*$")
_MD_RULE = re.compile(r"^[ ]{0,3}(?:(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,})$")


def _md_start(line: str) -> tuple[str, str, dt.datetime | None] | None:
    """(role, text on the line, time) when `line` starts a message."""
    heading = _MD_HEADING.match(line) if len(line) <= _MD_HEADING_MAX else None
    if heading:
        when = (heading.group("paren") or heading.group("dash") or "").strip()
        return heading.group("role"), "", _iso(when) if when else None
    for pattern in (_MD_BOLD, _MD_PLAIN):
        found = pattern.match(line)
        if found:
            return found.group("role"), found.group("text") or "", None
    return None


_Markdown = tuple[str | None, list[tuple[str, dt.datetime | None, list[str]]]]


def _scan_markdown(file: str, text: str) -> _Markdown:
    """The title and the messages (role name, time, lines); raises when there is no message."""
    lines = [line.rstrip("\r") for line in text.split("\n")]
    start = 0
    if lines and lines[0].strip() == "---":
        for i in range(1, len(lines)):
            if lines[i].strip() in ("---", "..."):
                start = i + 1
                break
    title: str | None = None
    messages: list[tuple[str, dt.datetime | None, list[str]]] = []
    fences = Fences()
    for line in lines[start:]:
        if not fences.code(line):
            begun = _md_start(line)
            if begun is not None:
                role, first, at = begun
                messages.append((role, at, [first]))
                continue
            if not messages and title is None:
                heading = _MD_TITLE.match(line)
                if heading:
                    title = _title(heading.group("title"))
                    continue
        if messages:
            messages[-1][2].append(line)
    if not messages:
        raise ImportFormatError(
            file,
            None,
            "no chat message found",
            'lines starting with "User:" / "**User:**" / "## User" (or Assistant, Human, AI, '
            "Claude, ChatGPT, System)",
        )
    return title, messages


def _parse_markdown(stem: str, scanned: _Markdown, out: _Out) -> None:
    title, messages = scanned
    for position, (role_name, at, body) in enumerate(messages):
        while body and (not body[-1].strip() or _MD_RULE.match(body[-1])):
            body.pop()
        role = _role(role_name) or "user"
        out.message(stem, title, position, None, role, "\n".join(body), at)
