"""What every chat export reader reads into and with: messages, skipped records, JSON
values checked with where they are (for the error message), times, roles.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

from brainiac.core.errors import ImportFormatError


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
class Damaged:
    """A line of a live JSONL transcript that cannot be read (`parse(..., live=True)`)."""

    line: int
    problem: str  # "not valid JSON (...)", "not UTF-8 text (...)"
    digest: str  # of the line's text: the same damage met again is not reported again

    @property
    def key(self) -> str:
        return f"{self.line}:{self.digest}"


@dataclass(frozen=True)
class ChatFile:
    path: Path
    format: str
    messages: list[Message]  # in conversation order, conversations in file order
    skipped: list[Skipped]
    damaged: list[Damaged] = field(default_factory=list)  # only when read live
    unread: int = 0  # bytes at the end left for later: a last line still being written


def decode_text(path: Path, data: bytes) -> str:
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


def load_json(file: str, text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        json_failure(file, exc)


def json_failure(file: str, exc: Exception) -> NoReturn:
    if isinstance(exc, json.JSONDecodeError):
        raise ImportFormatError(
            file, f"line {exc.lineno}, column {exc.colno}", f"not valid JSON ({exc.msg})", "JSON"
        ) from None
    # a number too long to read, nesting too deep
    raise ImportFormatError(file, None, f"not valid JSON ({exc})", "JSON") from None


def nonblank_lines(text: str) -> Iterator[tuple[int, str]]:
    """(line number, line) of each line with content. Only "\n" ends a line: JSON strings may hold
    a raw U+2028, which str.splitlines would split on."""
    for lineno, line in enumerate(text.split("\n"), 1):
        if line.strip():
            yield lineno, line


def json_lines(file: str, text: str, out: Out) -> Iterator[tuple[int, Any]]:
    """(line number, JSON value) of each line with content. A line that is not UTF-8 or not JSON
    rejects the file, or, when `out` reads a live transcript, is recorded in `out` and left out
    (it holds no place, as it cannot be told whether it held a message)."""
    for lineno, line in nonblank_lines(text):
        try:
            value = json_line(file, lineno, _utf8_line(file, lineno, line))
        except ImportFormatError as exc:
            if not out.live:
                raise
            out.damage(lineno, line, exc.problem)
            continue
        yield lineno, value


def _utf8_line(file: str, lineno: int, line: str) -> str:
    """The line, if no byte of it failed to decode (`decode_lines` keeps such bytes as lone
    surrogates U+DC80..U+DCFF, which UTF-8 text read from a file never holds)."""
    bad = _UNDECODED.search(line)
    if bad is None:
        return line
    raise ImportFormatError(
        file,
        f"line {lineno}",
        f"not UTF-8 text (byte 0x{ord(bad.group()) - 0xDC00:02x} at column {bad.start() + 1})",
        "a UTF-8 text file",
    )


_UNDECODED = re.compile("[\udc80-\udcff]")


def decode_lines(data: bytes) -> str:
    """The text of a JSONL file read live: each byte that is not UTF-8 kept as a lone surrogate,
    so that only its line is damaged (`_utf8_line`), not the file."""
    return data.decode("utf-8-sig", "surrogateescape")


def written_part(data: bytes) -> bytes:
    """The lines of a live JSONL file that are written: all of it, less a last line with no
    newline that cannot be read yet (the writer is still at it; it is read once it is complete).
    A last line that is whole JSON is complete, newline or not: no proper prefix of a JSON object
    is one."""
    end = data.rfind(b"\n") + 1
    tail = data[end:]
    if not tail.strip():
        return data
    try:
        json.loads(tail.decode("utf-8-sig"))
    except (ValueError, RecursionError):
        return data[:end]
    return data


def json_line(file: str, lineno: int, line: str) -> Any:
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


def kind_of(value: Any) -> str:
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


def keys_of(obj: dict[str, Any]) -> str:
    names = list(obj)
    if not names:
        return "no keys"
    shown = ", ".join(json.dumps(k, ensure_ascii=False) for k in names[:6])
    return "keys " + shown + (", ..." if len(names) > 6 else "")


_PLAIN_KEY = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_-]*$")


class Node:
    """A JSON value and where it is: a JSON path in a JSON document ("$[3].mapping.abc"), or a
    line of a JSONL file and the dotted field within it."""

    __slots__ = ("field", "file", "line", "value")

    def __init__(self, file: str, value: Any, field: str, line: int | None) -> None:
        self.file = file
        self.value = value
        self.field = field
        self.line = line

    def child(self, key: str | int) -> Node:
        """The item or field `key` (null when an object has no such field)."""
        if isinstance(key, int):
            return Node(self.file, self.value[key], f"{self.field}[{key}]", self.line)
        if _PLAIN_KEY.match(key):
            field = f"{self.field}.{key}" if self.field else key
        else:
            field = f"{self.field}[{json.dumps(key, ensure_ascii=False)}]"
        return Node(self.file, self.value.get(key), field, self.line)

    def fail(self, problem: str, expected: str) -> NoReturn:
        """Raise for this value; `problem` reads after its name: "is a number", "is missing"."""
        if self.line is None:
            raise ImportFormatError(self.file, self.field, problem, expected)
        subject = f'"{self.field}" ' if self.field else "the line "
        raise ImportFormatError(self.file, f"line {self.line}", subject + problem, expected)

    def wrong(self, expected: str) -> NoReturn:
        self.fail(f"is {kind_of(self.value)}", expected)

    # The value as a type

    def obj(self) -> dict[str, Any]:
        if not isinstance(self.value, dict):
            self.wrong("an object")
        return self.value

    def items(self) -> list[Node]:
        if not isinstance(self.value, list):
            self.wrong("a list")
        return [self.child(i) for i in range(len(self.value))]

    # Fields of an object

    def get(self, key: str) -> Node | None:
        """The field, or None when it is absent or null."""
        obj = self.obj()
        if obj.get(key) is None:
            return None
        return self.child(key)

    def req(self, key: str, expected: str) -> Node:
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

    def opt_list(self, key: str) -> list[Node]:
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
        at = parse_iso(text)
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


def parse_iso(text: str) -> dt.datetime | None:
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


ROLE_NAMES = "user, assistant or system (also human, you, ai, claude, chatgpt, gpt, bot, model)"


def role_of(name: str) -> str | None:
    return _ROLES.get(name.strip().lower())


def _unicode(text: str) -> str:
    """`text` with any lone surrogate (from a "\\ud800" escape in JSON) made U+FFFD, so that it
    can be written as UTF-8."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


class Out:
    """Messages and skipped records, grouped by conversation in the order conversations appear."""

    def __init__(self, live: bool = False) -> None:
        self.live = live  # a transcript still being written: damaged lines are left out
        self.damaged: list[Damaged] = []
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

    def damage(self, line: int, text: str, problem: str) -> None:
        digest = hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:16]
        self.damaged.append(Damaged(line, problem, digest))

    def result(self) -> tuple[list[Message], list[Skipped]]:
        messages = [m for ms in self._messages.values() for m in ms]
        skipped = [s for ss in self._skipped.values() for s in ss]
        return messages, skipped


def title_of(text: str | None) -> str | None:
    if text is None:
        return None
    text = " ".join(text.split())
    return text or None


def conversations(file: str, value: Any, key: str, what: str) -> list[Node]:
    root = Node(file, value, "$", None)
    if isinstance(value, dict) and key in value:
        return [root]  # one conversation on its own
    if not isinstance(value, list):
        if isinstance(value, dict):
            root.fail(f"is an object with {keys_of(value)}", f"a list of {what}")
        root.wrong(f"a list of {what}")
    return root.items()
