"""The `markdown` chat export format.

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
import re

from brainiac.core.errors import ImportFormatError
from brainiac.exchange.chatlogs.records import Out, parse_iso, role_of, title_of
from brainiac.formats.fences import Fences

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
        return heading.group("role"), "", parse_iso(when) if when else None
    for pattern in (_MD_BOLD, _MD_PLAIN):
        found = pattern.match(line)
        if found:
            return found.group("role"), found.group("text") or "", None
    return None


_Markdown = tuple[str | None, list[tuple[str, dt.datetime | None, list[str]]]]


def scan_markdown(file: str, text: str) -> _Markdown:
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
                    title = title_of(heading.group("title"))
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


def parse_markdown(stem: str, scanned: _Markdown, out: Out) -> None:
    title, messages = scanned
    for position, (role_name, at, body) in enumerate(messages):
        while body and (not body[-1].strip() or _MD_RULE.match(body[-1])):
            body.pop()
        role = role_of(role_name) or "user"
        out.message(stem, title, position, None, role, "\n".join(body), at)
