"""How a turn's sentence splits into the statements observe.py weighs, and the speaker put back
where a statement leaves them out.

Parts joined by a dash are weighed alone when the part after the dash is a clause ("A lot's
happened - I got an internship"); a noun phrase after a dash stays with what it explains
("working on a new project - a thriller set in a small town"); a list set off by two dashes is
an aside ("a rollercoaster of emotions - relief, excitement - over finishing it"); what follows
", but" is weighed alone too. A statement without its subject is the speaker's: "Lost my job"
→ "I lost my job", "Been busy painting" → "I've been busy painting", "Was nervous when I
shared my book" → "I was nervous ...". Pure text: no I/O.
"""

from __future__ import annotations

import itertools
import re

from brainiac.language.lexicon import word_set

# A dash between two clauses joins two statements: each is weighed alone ("A lot's happened - I
# got accepted for an internship", "I made it yesterday - can't wait").
_DASH_RE = re.compile(r"\s+[-–—]\s+|(?<=[a-z])-\s+|—")
# What after a dash starts a clause of its own; a noun phrase after one says what came before
# ("working on a new project - a thriller set in a small town") and stays with it.
_CLAUSE_OPEN_RE = re.compile(
    r"^(?:I|I'm|I've|I'd|I'll|we|we're|we've|it|it's|that|that's|this|they|they're|there|"
    r"there's|he|she|he's|she's|my|our|everyone|everything|so|but|and|then|when|if|just|still|"
    r"here|here's|can't|been|gonna)\b",
    re.IGNORECASE,
)
# A list set off by dashes inside a sentence that goes on after it: an aside, left out.
_ASIDE_RE = re.compile(
    r"\s+[-–—]\s+(?=[^-–—]*,)(?![^-–—]*\b(?:I|is|was|are|were|I'm|it's)\b)[^-–—.!?]{1,60}?\s+[-–—]\s+"
    r"(?=(?:over|about|for|from|with|at|in|on|after)\b)"
)
BUT_RE = re.compile(r",\s*but\s+(.+)$", re.IGNORECASE)
_APPOSITIVE_RE = re.compile(r"^(?:a|an|another|some|\d+)\s", re.IGNORECASE)
# A statement without its subject, "Lost my job as a banker", "Just started doing aerial yoga",
# "Gonna continue my studies": the speaker's own, when it says "my" or opens on "just".
_DONE = (
    r"(?:lost|got|went|started|finished|made|took|had|bought|found|tried|visited|joined|adopted|"
    r"painted|signed|booked|moved|won|met|saw|spent|learned)"
)
DONE_WORDS = word_set(_DONE[3:-1].replace("|", " "))
_SUBJECTLESS_RE = re.compile(
    rf"^(?:(?:just|finally|recently)\s+(?:{_DONE}|\w+ed)\b|"
    rf"(?:{_DONE}|\w+ed)\b(?=.*\b(?:my|yesterday|ago|last)\b))",
    re.IGNORECASE,
)
_INTENT_RE = re.compile(
    r"^(?:gonna|planning (?:to|on)|trying to)\s+(?!be\b)(?=\w)|^(?:still|currently)\s+\w+ing\b",
    re.I,
)
# "Been busy volunteering at the shelter", "Just been helping some friends".
# "Didn't make it to the finals": a past without its subject is the speaker's (an order is
# never in the past).
# "Was super nervous when I shared my book": "was" is the speaker's when they are in the rest.
_DID_NOT_RE = re.compile(
    r"^(?:didn't|wasn't|couldn't|was(?=\s.*\b(?:I|my)\b))\s+(?=\w)", re.IGNORECASE
)
# "Been only to Rome once", "Never been to Paris": where the speaker has been, a place named.
_BEEN_RE = re.compile(
    r"^(?:just\s+)?been\s+(?:(?:busy|really|real|so|pretty|super|very)\s+)*\w+ing\b"
    r"|^(?:never\s+|only\s+|just\s+)?been\s+(?:(?:only|just|never|once|twice)\s+)?to\s+"
    r"(?=(?:the\s+)?(?-i:[A-Z]))",
    re.I,
)


_DEED_RE = re.compile(
    r"^(?:I|[Ww]e)\s+(?:(?:just|also|finally|all)\s+)?(?:\w+ed|had|went|made|took|saw|got|did|"
    r"spent|ran|won|met)\b"
)


def clauses(sentence: str) -> list[str]:
    """The sentence's statements: parts joined by a dash are weighed alone when the part after
    the dash is a clause; a noun phrase after a dash stays with the part it explains, and a
    comment without a subject ("- so exciting", "- super frustrating") goes."""
    out: list[str] = []
    sentence = _ASIDE_RE.sub(" ", sentence)  # "emotions - relief, excitement - over finishing"
    for part in _DASH_RE.split(sentence):
        part = part.strip()
        if not part:
            continue
        if not out or _CLAUSE_OPEN_RE.match(part) or subject(part) != part:
            out.append(part)
        elif _APPOSITIVE_RE.match(part):
            out[-1] = f"{out[-1].rstrip(' ,;:')}: {part}"
    # A deed said, then what was done in it after a dash: weighed whole too ("I had a day out
    # with the gang - we went biking"), so that the line says what the day was.
    out += [
        f"{a} - {b}" for a, b in itertools.pairwise(out) if _DEED_RE.match(a) and _DEED_RE.match(b)
    ]
    # What follows ", but" is weighed alone too, for when the part before it is a wish or a
    # reaction ("Wish I had a vacation, but right now my writing is consuming me").
    return out + [m.group(1) for part in out for m in [BUT_RE.search(part)] if m is not None]


def subject(s: str) -> str:
    """`s` with the speaker put back as the subject it leaves out: "Lost my job" → "I lost my
    job", "Been busy painting" → "I've been busy painting", "I'm sunk tons of time" → "I've sunk
    tons of time"."""
    s = _SUBJECTLESS_RE.sub(lambda m: "I " + m.group(0).lower(), s)
    s = _BEEN_RE.sub(lambda m: "I've " + m.group(0).lower(), s)
    s = _DID_NOT_RE.sub(lambda m: "I " + m.group(0).lower(), s)
    s = _PERFECT_RE.sub("I've ", s)
    return _INTENT_RE.sub(lambda m: "I'm " + m.group(0).lower(), s)


# "I'm" before a participle with its object is the perfect the speaker meant: "I'm sunk tons of
# time into the studio" is "I've sunk ..." (not "Jon is sunk ...").
_PERFECT_RE = re.compile(
    r"\bI'm\s+(?=(?:sunk|spent|put|made|taken|given|gotten|done|seen)\s+(?:tons|lots|a lot|"
    r"so much|so many|the|my|our|a|an|some|all|hours|days|weeks|months|years)\b)"
)


# Where one has been, the place named ("I've been to Rome once"); a deed going on, on a thing of
# one's own ("I'm writing all my plans down").
_BEEN_TO_RE = re.compile(r"I've (?:never |only |just )?been (?:\w+ )?to (?:the )?[A-Z]")
_DOING_MINE_RE = re.compile(r"I(?:'m| am) (?:\w+ly )?[a-z]{3,}ing\b.*\bmy \w")


def seen(s: str) -> bool:
    """Whether `s` (a statement in the first person) says where the speaker has been or a deed
    of theirs going on, on a thing of their own: a deed, which says enough in a few words."""
    return _BEEN_TO_RE.match(s) is not None or _DOING_MINE_RE.match(s) is not None
