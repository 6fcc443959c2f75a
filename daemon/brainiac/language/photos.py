"""What a turn that shares a photo says of its speaker: whose the thing shown is, or the deed it
was taken at, as observe.py writes it ("Melanie shared a photo of their pottery").

A photo named as one ("Here's a pic of my pottery!", "a photo from when I was dancing", "a
shot I took when I volunteered") says what it shows; a turn that shares one without naming it
as one ("Here's one of my trophies from a dance contest", "Here's my new studio") says so only
when a photo came with the turn (its caption, `[image: ...]`). What is shown must be the
speaker's own ("my", "our") or a deed of theirs: "Here's a pic from the event" (which event?),
"Here's one I did last week" (one what?) and "Here's one from our vacation" (which one?) say
nothing read alone. Pure text: no I/O.
"""

from __future__ import annotations

import re

_PHOTO_RE = re.compile(
    r"\b(?:here(?:'s| is| are)|this is|check (?:out|this)|sharing|look at)\b[^.!?]*?"
    r"\b(?:photo|pic|picture|snap|shot)s?\s+(?:of|from)\s+(?P<what>(?:my|our)\s+[^.!?,]+|"
    r"when\s+(?:I|we)\s+[^.!?,]+|"
    r"[^.!?,]+?\bI\s+(?:made|took|painted|drew|baked|built|did|snapped|found|got)\b[^.!?,]*)",
    re.IGNORECASE,
)
# A photo the speaker took at a deed of theirs: "a shot I got when I volunteered" → "a photo
# from when I volunteered" ("a pic I got from my walk" says only that there was a walk).
_TAKEN_RE = re.compile(
    r"\bhere(?:'s| is)\s+(?:a|another|one)\s+(?:(?:photo|pic|picture|snap|shot)\s+)?"
    r"(?:that\s+)?I\s+(?:took|got|snapped)\s+(?P<what>when\s+(?:I|we)\s+[^.!?,]+)",
    re.IGNORECASE,
)
# One of the speaker's own things shown, with a photo: "Here's one of my trophies from a dance
# contest", "Here's my new studio" ("Here's one from our vacation" says only that there was one).
_OWN_SHOWN_RE = re.compile(
    r"\bhere(?:'s| is| are)\s+(?P<what>(?:(?:one|some|a few)\s+of\s+)?(?:my|our)\s+[^.!?,]+)",
    re.IGNORECASE,
)
_IMAGE = "[image:"


def shared(sentence: str, turn: str, alone: bool = True) -> str | None:
    """What `sentence` of `turn` says the speaker shared ("I shared a photo of my pottery"), or
    None when it shares no photo of a thing or a deed of theirs. With `alone` false (the turn
    says something else worth a line), only a photo named as one is said."""
    named = _PHOTO_RE.search(sentence)
    if named is not None:
        what = named.group("what")
        if what.lower().startswith("when "):  # "from when I was dancing - it was a tough road"
            what = re.split(r"\s[-–—]\s", what)[0]
        return f"I shared a photo of {what.strip()}"
    if not alone:
        return None
    taken = _TAKEN_RE.search(sentence)
    if taken is not None:  # "a shot I got when I volunteered": from when
        return f"I shared a photo from {taken.group('what')}"
    own = _OWN_SHOWN_RE.search(sentence) if _IMAGE in turn else None
    return f"I shared a photo of {own.group('what').strip()}" if own is not None else None
