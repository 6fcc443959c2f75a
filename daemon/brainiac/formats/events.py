"""Events: what the agent lived through, one Markdown list item each, with a stable block id.

An event line reads, in Obsidian and in any editor:

    - 2026-11-20T09:12:00 **user** (planning): The deadline moved to Monday. ^e-3f2a1c9b0d
    - 2026-11-20T09:15:00 **user** (planning) [atlas]: Atlas ships on Friday. ^e-8c1d07aa52

The second line belongs to the project `atlas` (docs/projects.md); a line without `[...]` is
global, as every line written before projects existed, which read exactly as they did.

Continuation lines of a multi-line message are indented by two spaces. Text that a Markdown reader
would take for structure is stored with a backslash before it: a line starting a heading, a code
fence, a setext underline or an HTML block (`  \\## Steps`), and anywhere an HTML comment's start or
a block id (`\\^e-...`). So pasted Markdown can never open a section of the file, hide the lines
after it in a fence or a comment, or pose as another event's id; reading removes exactly the
backslash that writing added, so the text round-trips exactly. The id is derived from the time,
role, session and text, so the same event always gets the same id: writing it twice, or
importing it again, is recognised and skipped. A line a person typed without the time and role
(`- called Anna about the lease`) is an event too, with its id derived from its text; brainiac
reads such lines and never rewrites them.

The same line format is used wherever an event lives: the short-term Event Log, the verbatim
sources of a long-term note and the archive. So every event can be found, and counted, by its id.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from brainiac.core import clock
from brainiac.formats.note import split_lines

_HEAD_RE = re.compile(
    r"^- (?P<at>\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)"
    r" \*\*(?P<role>[^*\n]+)\*\*(?: \((?P<session>[^()\n]*)\))?"
    r"(?: \[(?P<project>[^\[\]()*,\s]+)\])?: ?(?P<text>.*)$"
)
# An event's id: the one pattern every module that finds ids in text builds on.
ID = r"e-[0-9a-f]{6,32}"
_ID_RE = re.compile(rf"(?:^|\s)\^(?P<id>{ID})\s*$")
# The block ids of a whole text: what ends a line after a space, as `_ID_RE` reads an event's own.
# Only that place: a session or project label (`(^e-...)`), a summary quoting a session or a link
# to a block (`[[note#^e-...]]`) names an id mid-line, and an id scan that counted them would take
# a deleted event for one still written (lifecycle/journal.py).
BLOCK_IDS_RE = re.compile(rf"(?:^|[ \t])\^(?P<id>{ID})[ \t\r]*$", re.MULTILINE)
_ROLE_BAD = re.compile(r"[*\n\r]+")
# Structure a line of event text must not start (after its indent): an ATX heading, a code fence, a
# setext underline, an HTML block. Any backslashes already before it are part of the match, so that
# writing adds exactly one and reading removes exactly one: `\## x` is stored as `\\## x`.
_LINE_STRUCTURE_RE = re.compile(
    r"^(?P<indent>[ \t]*)(?P<escapes>\\*)(?=#{1,6}(?:[ \t]|$)|`{3}|~{3}|=+[ \t]*$|-+[ \t]*$|<)"
)
_LINE_ESCAPED_RE = re.compile(
    r"^(?P<indent>[ \t]*)\\(?P<escapes>\\*)(?=#{1,6}(?:[ \t]|$)|`{3}|~{3}|=+[ \t]*$|-+[ \t]*$|<)"
)
# Structure anywhere in a line: an HTML comment's start (it hides every line up to its end from the
# scanners of facts and of `forget`), and a block id (`^e-...`) that id scans would count.
# (The lookbehind keeps a match from starting inside a run of backslashes.)
_INLINE_STRUCTURE_RE = re.compile(r"(?<!\\)(?P<escapes>\\*)(?=\^e-[0-9a-f]|<!--)")
_INLINE_ESCAPED_RE = re.compile(r"(?<!\\)\\(?P<escapes>\\*)(?=\^e-[0-9a-f]|<!--)")
_SESSION_BAD = re.compile(r"[()\n\r]+")
# A project name is one word as the head shows it (`[alpha]`): no brackets, parentheses, stars,
# commas (the index keeps a list of them) or spaces (made dashes: a folder `My App` is `My-App`).
_PROJECT_BAD = re.compile(r"[\[\]()*,]+")


@dataclass(frozen=True)
class Event:
    at: dt.datetime | None
    role: str
    text: str
    session: str | None
    id: str
    # The project it belongs to (projects.py); None: global. Not part of the id: it labels the
    # event, so an old vault's ids stay what they were and a re-import is still recognised.
    project: str | None = None

    @property
    def date_label(self) -> str:
        return self.at.strftime("%Y-%m-%d %H:%M") if self.at else "undated"


def normalise_time(at: dt.datetime) -> dt.datetime:
    """Times are stored as naive local wall-clock times to the second (see clock.py)."""
    return clock.local(at).replace(microsecond=0)


def clean_role(role: str) -> str:
    return _ROLE_BAD.sub(" ", storable(role)).strip() or "user"


def clean_session(session: str | None) -> str | None:
    if session is None:
        return None
    return _SESSION_BAD.sub(" ", storable(session)).strip() or None


def clean_project(project: str | None) -> str | None:
    """A project name as an event line holds it, or None (global) when nothing is left."""
    if project is None:
        return None
    name = "-".join(_PROJECT_BAD.sub(" ", storable(project)).split())
    return unicodedata.normalize("NFC", name) or None


def normalise_text(text: str) -> str:
    """The text as stored: NFC, no trailing spaces, no carriage returns, no blank edges."""
    text = unicodedata.normalize("NFC", storable(text)).replace("\r\n", "\n").replace("\r", "\n")
    return "\n".join(line.rstrip() for line in text.strip("\n").split("\n")).strip()


def storable(text: str) -> str:
    """`text` with NUL characters and lone surrogates made U+FFFD, so that it can go into a note.
    A NUL (an escaped zero in an imported JSON message) made the whole file look binary: the
    short-term document was skipped from then on, and every later `remember` failed. A lone
    surrogate (bytes that are not UTF-8, read from stdin or an argument) could not be written."""
    if "\x00" in text:
        text = text.replace("\x00", "\ufffd")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in text)
    return text


def event_id(at: dt.datetime | None, role: str, session: str | None, text: str) -> str:
    stamp = at.isoformat() if at else ""
    if at is not None and at.fold and clock.is_ambiguous(at):
        # The second time round of the hour repeated at fall-back reads the same: its offset
        # tells it apart. Only then, so that every other id stays what it always was.
        stamp = at.astimezone().isoformat()
    key = "\x1f".join((stamp, role, session or "", " ".join(text.split())))
    return "e-" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:10]


def make_event(
    text: str,
    role: str = "user",
    session: str | None = None,
    at: dt.datetime | None = None,
    project: str | None = None,
) -> Event:
    at = normalise_time(at if at is not None else clock.now())
    role, session, text = clean_role(role), clean_session(session), normalise_text(text)
    return Event(at, role, text, session, event_id(at, role, session, text), clean_project(project))


def render(event: Event) -> str:
    """The event as Markdown list-item lines, ending in a newline."""
    if event.at is not None:
        session = f" ({event.session})" if event.session else ""
        project = f" [{event.project}]" if event.project else ""
        head = f"- {clock.isoformat(event.at)} **{event.role}**{session}{project}: "
    else:
        head = "- "
    first, *rest = stored_lines(event.text)
    out = [head + first, *rest]
    out[-1] = f"{out[-1]} ^{event.id}"
    return "\n".join(out) + "\n"


def stored_lines(text: str) -> list[str]:
    """`text` as the lines of a list item, after its marker: the first as it is, the rest indented
    by two spaces (blank ones empty), each escaped where it would read as structure."""
    lines = [
        _INLINE_STRUCTURE_RE.sub(r"\\\g<escapes>", line) if _has_inline_structure(line) else line
        for line in text.split("\n")
    ]
    rest = [_LINE_STRUCTURE_RE.sub(r"\g<indent>\\\g<escapes>", line) for line in lines[1:]]
    return [lines[0]] + [f"  {line}" if line else "" for line in rest]


def _unescape(first: str, rest: list[str]) -> str:
    """The text of `stored_lines`' output (without the indent): the backslashes it added removed."""
    rest = [_LINE_ESCAPED_RE.sub(r"\g<indent>\g<escapes>", line) for line in rest]
    return "\n".join(
        _INLINE_ESCAPED_RE.sub(r"\g<escapes>", line) if "\\" in line else line
        for line in [first, *rest]
    )


def _has_inline_structure(line: str) -> bool:
    """Whether _INLINE_STRUCTURE_RE can match: its lookahead needs one of these (a search with
    the lookbehind tried at every position was most of rendering a context's event lines)."""
    return "^e-" in line or "<!--" in line


@dataclass(frozen=True)
class Located:
    """An event and where it stands in a file (0-based line numbers of its first and last line)."""

    event: Event
    first_line: int
    last_line: int


def parse_lines(
    lines: list[str], offset: int = 0, wanted: Callable[[list[str]], bool] | None = None
) -> Iterator[Located]:
    """Events in a run of lines (a section's body); other lines are skipped, never an error.
    `wanted(block)`: parse only the events whose lines it accepts (parsing is most of the cost
    of reading a note's sources, and a context quotes a few of them)."""
    i = 0
    n = len(lines)
    while i < n:
        line = lines[i].rstrip("\r\n")
        if not line.startswith("- "):
            i += 1
            continue
        block = [line]
        j = i + 1
        while j < n:
            nxt = lines[j].rstrip("\r\n")
            if nxt.startswith("  "):
                block.append(nxt[2:])
                j += 1
                continue
            # Blank lines belong to the event when an indented line follows them (a message with
            # a paragraph break, or two).
            k = j
            while k < n and not lines[k].strip():
                k += 1
            if k in (j, n) or not lines[k].startswith("  "):
                break
            block.extend([""] * (k - j))
            j = k
        event = _parse_block(block) if wanted is None or wanted(block) else None
        if event is not None:
            yield Located(event, offset + i, offset + j - 1)
        i = j


def _parse_block(block: list[str]) -> Event | None:
    last = block[-1]
    id_match = _ID_RE.search(last)
    explicit_id = id_match.group("id") if id_match else None
    if id_match:
        block = [*block[:-1], last[: id_match.start()].rstrip()]
    head = _HEAD_RE.match(block[0])
    at: dt.datetime | None = None
    project: str | None = None
    if head:
        try:
            at = normalise_time(dt.datetime.fromisoformat(head.group("at")))
        except (ValueError, OverflowError):  # no such date; an offset that leaves years 1-9999
            # Then the line is a person's, whole: read as the head's role and text, it lost
            # `2026-99-99T99:99 **user**:` when promotion wrote it out again (render).
            head = None
    if head:
        role = head.group("role").strip()
        session = clean_session(head.group("session"))
        project = clean_project(head.group("project"))
        text = _unescape(head.group("text"), block[1:])
    else:
        at, role, session = None, "note", None
        text = _unescape(block[0][2:], block[1:])
    text = normalise_text(text)
    if not text:
        return None
    return Event(at, role, text, session, explicit_id or event_id(at, role, session, text), project)


def parse_text(text: str) -> list[Event]:
    return [loc.event for loc in parse_lines(split_lines(text))]


def ids(events: Iterable[Event]) -> set[str]:
    return {e.id for e in events}
