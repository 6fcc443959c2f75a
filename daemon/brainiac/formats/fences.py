"""Fenced code blocks, found line by line: the one scanner every reader of Markdown lines uses.

Headings, fact lines, HTML comments and chat messages inside a fenced code block are a person's
text, not structure, so each scanner of a note's lines asks this one where fences open and close.
The rule is CommonMark's: a fence opens with three or more backticks or tildes indented at most
three spaces, and closes with a line of the same character, at least as long, and nothing after
it but white space. A fence never closed runs to the end of the text.
"""

from __future__ import annotations

import re

_MARKER_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


class Fences:
    """Feed it a text's lines in order; `code(line)` says whether the line is part of a fenced
    code block (its opening and closing lines included)."""

    __slots__ = ("_open",)

    def __init__(self) -> None:
        self._open: str | None = None  # the marker of the fence we are in

    def code(self, line: str) -> bool:
        found = _MARKER_RE.match(line)
        if self._open is None:
            if found is None:
                return False
            self._open = found.group(1)
            return True
        marker = found.group(1) if found else ""
        closes = marker[:1] == self._open[0] and len(marker) >= len(self._open)
        if closes and not line.strip().lstrip(self._open[0]):
            self._open = None
        return True
