"""Statements whose grammar says they stand on nothing named: what observe.py keeps no line
for, however many words they have.

- A deed placed after something the sentence never names: "We even played some Chess
  afterward" (after what? the turn before said); "I talked to the guys at the tournament
  afterwards" names it, and stands.
- A general claim with a gerund for its subject, said of anyone: "Having a furry pal brightens
  my days" (a pal, any pal: nothing of the speaker's is named), "Pushing boundaries is how we
  grow" (a maxim); "Painting helps me express my feelings" names what the speaker does, and
  stands.
- A deed with the thing it was done to left out, for a subject: "Winning was a huge confidence
  boost" (winning what? the turn before said).
- Progress judged with nothing it is progress in: "We've come so far, but there's more to do".
- Priorities in general: "I try to make sure I'm there for the important things", "I'm taking
  the time to reflect and find some balance" (which things, balance of what, is not said).

Save for "afterward", a name or a number in the sentence anchors it ("We've come a long way
since Pride 2022"), and it stands. Pure text: no I/O.
"""

from __future__ import annotations

import re

# "afterward", "after that" with no thing before it the deed came after: an event named with
# "at", "after", "from" or "during" ("at the tournament afterwards").
_AFTER_RE = re.compile(r"\b(?:afterwards?|after that)\b", re.IGNORECASE)
_EVENT_BEFORE_RE = re.compile(r"\b(?:at|after|from|during)\s+(?:the|a|an|my|our|his|her)\s", re.I)
# A gerund's phrase for a subject, then a present-tense claim: with "a", "an" or "some" in the
# phrase (anyone's thing: "Having a furry pal brightens my days") or a definition of how anyone
# does ("Pushing boundaries is how we grow").
_GERUND_CLAIM_RE = re.compile(
    r"^[A-Za-z][a-z]+ing\s+(?:a|an|some)\s[^,;:]*?\s+(?:(?:really|definitely|always|just|truly)\s+)?"
    r"(?!(?:was|has|had|did)\b)[a-z]+(?<!ss)s\s+(?:my|our|me|us)\b"
    r"|^[A-Za-z][a-z]+ing\b[^,;:]*?\s+(?:is|'s)\s+(?:how|what|why)\s+(?:we|you|people|one)\b",
)
# A deed with its thing left out, for a subject: "Winning was a huge confidence boost" (winning
# what?); "Acting was my first passion" needs no thing, and "Winning the tournament" names it.
_BARE_DEED_RE = re.compile(
    r"^(?:winning|losing|finishing|completing|getting|receiving|hearing|meeting|finding|reaching)"
    r"\s+(?:was|is|has been|felt|feels|made|makes|gave|gives|meant|means)\b",
    re.IGNORECASE,
)
# How far one has come, with nothing it was in: "we've come so far", "I've come a long way".
_PROGRESS_RE = re.compile(
    r"^(?:I|we)(?:'ve|\s+have)\s+(?:(?:really|all|both)\s+)?come\s+(?:so|this|such\s+a|a)\s+"
    r"(?:far|long\s+way)\b",
    re.IGNORECASE,
)
# Priorities with nothing named: "the important things", "what (really) matters", "some balance".
_PRIORITIES_RE = re.compile(
    r"\b(?:the\s+(?:important|little|small|big|right|good)\s+things|what\s+(?:really\s+)?matters|"
    r"(?:some|a|the\s+right)\s+balance)\W*$",
    re.IGNORECASE,
)
# What anchors a sentence: a name (a capital inside it, not "I") or a number.
_ANCHOR_RE = re.compile(r"(?<=\w\s)(?!I\b|I')[A-Z]|\d")


def unanchored(s: str) -> bool:
    """Whether `s`, a first-person statement, stands on nothing named (see the module's doc)."""
    after = _AFTER_RE.search(s)
    if after is not None and not _EVENT_BEFORE_RE.search(s, 0, after.start()):
        return True  # "some Chess" names what was played, not what it came after
    return not _ANCHOR_RE.search(s) and bool(
        _GERUND_CLAIM_RE.match(s)
        or _BARE_DEED_RE.match(s)
        or _PROGRESS_RE.match(s)
        or _PRIORITIES_RE.search(s.rstrip())
    )
