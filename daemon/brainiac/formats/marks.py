"""Whose line is it: lines brainiac generates carry a block id `^g-<hash>`; every other line is
a person's.

The hash is of the line's own text, so a generated line that a person edits stops matching its
mark and becomes theirs: jobs then keep it byte for byte and never regenerate over it. In Obsidian
the mark is a block id, hidden in reading view. (Event lines have their own `^e-` ids and are not
marked: an event's text is verbatim from whoever said it.)
"""

from __future__ import annotations

import hashlib
import re

from brainiac.formats.stm import strip_hints

_MARK_RE = re.compile(r"\s\^g-(?P<hash>[0-9a-f]{6})\s*$")


def _digest(text: str) -> str:
    return hashlib.sha256(" ".join(text.split()).encode("utf-8")).hexdigest()[:6]


def mark(line: str) -> str:
    """`line` (no newline) with its generated-by-brainiac mark."""
    line = line.rstrip()
    return f"{line} ^g-{_digest(line)}"


def is_generated(line: str) -> bool:
    """True for a line brainiac wrote and nobody has edited since."""
    m = _MARK_RE.search(line.rstrip("\r\n"))
    return m is not None and m.group("hash") == _digest(line[: m.start()])


def unmark(line: str) -> str:
    """The line's text without a mark (any mark, matching or not)."""
    m = _MARK_RE.search(line.rstrip("\r\n"))
    return line[: m.start()] if m else line.rstrip("\r\n")


def merge_lines(section_text: str, generated: list[str]) -> str:
    """A section's new text: every line of the person's kept in place, in order, and the old
    generated lines replaced by `generated` (marked here), placed where the first generated line
    stood, or after the person's lines (template hint comments stay first).

    A generated line whose text a person already wrote (ignoring case and spacing) is left out.
    """
    lines = section_text.split("\n")
    while lines and not lines[-1].strip():
        lines.pop()
    person_keys = {_key(unmark(x)) for x in lines if x.strip() and not is_generated(x)}
    fresh = [mark(g) for g in generated if _key(g) not in person_keys]
    out: list[str] = []
    placed = False
    for line in lines:
        if is_generated(line):
            if not placed:
                out.extend(fresh)
                placed = True
            continue
        out.append(line)
    if not placed:
        out.extend(fresh)
    text = "\n".join(out).strip("\n")
    return text + "\n" if text else ""


def person_lines(section_text: str) -> list[str]:
    """The lines of a section a person wrote (non-blank, not hint comments, not generated)."""
    lines = strip_hints(section_text).split("\n")
    return [line for line in lines if line.strip() and not is_generated(line)]


_ITEM_RE = re.compile(r"^\s*(?:[-*+]\s+)?(?:\[[ xX]\]\s+)?")


def _key(text: str) -> str:
    """What a line says, whatever its bullet and checkbox: a task a person ticked off is still
    that task."""
    return " ".join(_ITEM_RE.sub("", text).lower().split()).rstrip(".")


def without_marks(text: str) -> str:
    """`text` as a reader should see it: the generated-line marks removed (they are bookkeeping
    for the jobs, and cost tokens in a context)."""
    return "\n".join(unmark(line) if _MARK_RE.search(line) else line for line in text.split("\n"))
