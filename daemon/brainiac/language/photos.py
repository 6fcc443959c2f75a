"""What a turn that shares a photo says of its speaker: whose the thing shown is, or the deed it
was taken at, as observe.py writes it ("Melanie shared a photo of their pottery").

A photo named as one ("Here's a pic of my pottery!", "a photo from when I was dancing", "a
shot I took when I volunteered") says what it shows; a turn that shares one without naming it
as one ("Here's one of my trophies from a dance contest", "Here's my new studio") says so only
when a photo came with the turn (its caption, `[image: ...]`). What is shown must be the
speaker's own ("my", "our") or a deed of theirs: "Here's a pic from the event" (which event?),
"Here's one I did last week" (one what?) and "Here's one from our vacation" (which one?) say
nothing read alone.

What the photo shows is said as the deed or the thing, not as the sharing (a chat act): "a pic
of my family camping at the beach" → "My family was camping at the beach"; "my horse painting I
did recently" → "I did my horse painting recently"; "one of my trophies from a dance contest" →
"I have trophies from a dance contest"; "my new studio" → "I have a new studio"; "my fam at the
beach" → "My fam was at the beach"; "my family - they're the reason I never give up" → "My
family are the reason I never give up". A photo of a thing said no more of ("my last class",
"my pottery") says nothing read alone; one "from when I volunteered" says when it was taken.
Pure text: no I/O.
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
_OWN = r"(?P<np>(?:my|our)\s+(?:[\w'-]+\s+){0,3}?[\w'-]+)"
# Nouns ending in "-ing": "my horse painting", "my wedding" are no deed going on.
_ING_NOUNS = (
    r"painting|drawing|building|wedding|clothing|thing|ring|morning|evening|meeting|ending|"
    r"wing|spring|string|ceiling|swing|king|offering|recording|setting|blessing|feeling|"
    r"earring|stuffing|frosting|icing|filling|topping|pudding|dumpling|sibling|darling"
)
# "my family camping at the beach": the owner's people doing something when it was taken.
_DOING_RE = re.compile(
    rf"^{_OWN}\s+(?P<ing>(?!(?:{_ING_NOUNS})\b)[a-z]+ing)\s+(?P<rest>(?:at|in|on|with|by|"
    r"to|for|through|around|along|near|under|over|the|a|an|my|our|some|together|outside)\b.*)$",
    re.IGNORECASE,
)
# "my horse painting I did recently": a thing the speaker made.
_MADE_RE = re.compile(
    rf"^{_OWN}\s+(?:that\s+)?(?P<who>I|we)\s+(?P<verb>made|did|painted|drew|baked|built|"
    r"cooked|knitted|sewed|crafted|carved|wrote)\b(?P<rest>[^,;]*)$",
    re.IGNORECASE,
)
# "one of my trophies from a dance contest": things the speaker has.
_SOME_OF_RE = re.compile(
    r"^(?:one|some|a few|two|three)\s+of\s+(?P<whose>my|our)\s+(?P<rest>[\w'-]+s\b.*)$",
    re.IGNORECASE,
)
# "my family - they're the reason ...": the clause says what the thing is.
_DASH_RE = re.compile(
    rf"^{_OWN}\s+[-–—]\s+(?P<pro>they're|they are|it's|it is|he's|he is|she's|she is)\s+"
    r"(?P<rest>.+)$",
    re.IGNORECASE,
)
# "my fam at the beach": where they were.
_AT_RE = re.compile(
    rf"^{_OWN}\s+(?P<prep>at|in|on)\s+(?P<place>(?:the|a|an|my|our)\s+.+)$", re.IGNORECASE
)
# "my new studio": a thing the speaker has, described; not an occasion ("my last class").
_DESCRIBED_RE = re.compile(
    r"^(?:my|our)\s+(?P<adj>(?!(?:last|first|latest|recent|next|previous|current|other|own)\b)"
    r"[a-z]+(?:\s+[a-z]+)?)\s+(?P<noun>[a-z]+)$",
    re.IGNORECASE,
)
_PLURAL_RE = re.compile(r"(?:[^s]s|children|people|folks)$", re.IGNORECASE)


def shared(sentence: str, turn: str, alone: bool = True) -> str | None:
    """What `sentence` of `turn` says the speaker shared ("I shared a photo of my pottery"), or
    None when it shares no photo of a thing or a deed of theirs. With `alone` false (the turn
    says something else worth a line), only a photo named as one is said."""
    named = _PHOTO_RE.search(sentence)
    if named is not None:
        what = named.group("what")
        if what.lower().startswith("when "):  # "from when I was dancing - it was a tough road"
            return "I shared a photo of " + re.split(r"\s[-–—]\s", what)[0].strip()
        return shown(what.strip())
    if not alone:
        return None
    taken = _TAKEN_RE.search(sentence)
    if taken is not None:  # "a shot I got when I volunteered": from when
        return f"I shared a photo from {taken.group('what')}"
    own = _OWN_SHOWN_RE.search(sentence) if _IMAGE in turn else None
    return shown(own.group("what").strip()) if own is not None else None


def shown(what: str) -> str | None:
    """What a photo of `what` ("my family camping at the beach") says of the speaker, in the
    first person ("My family was camping at the beach"), or None when it names only a thing
    and nothing of it."""
    what = re.sub(r"\s*[-–—:]\s*$", "", what)
    if (doing := _DOING_RE.match(what)) is not None:
        np = doing.group("np")
        be = "were" if _PLURAL_RE.search(np) else "was"
        return f"{np} {be} {doing.group('ing')} {doing.group('rest')}"
    if (made := _MADE_RE.match(what)) is not None:
        return f"{made.group('who')} {made.group('verb')} {made.group('np')}{made.group('rest')}"
    if (some := _SOME_OF_RE.match(what)) is not None:
        who = "I" if some.group("whose").lower() == "my" else "we"
        return f"{who} have {some.group('rest')}"
    if (dash := _DASH_RE.match(what)) is not None:
        be = "are" if dash.group("pro").lower().startswith("they") else "is"
        return f"{dash.group('np')} {be} {dash.group('rest')}"
    if (at := _AT_RE.match(what)) is not None:
        np = at.group("np")
        be = "were" if _PLURAL_RE.search(np) else "was"
        return f"{np} {be} {at.group('prep')} {at.group('place')}"
    if (described := _DESCRIBED_RE.match(what)) is not None:
        adj = described.group("adj")
        article = "an" if adj[0].lower() in "aeiou" else "a"
        return f"I have {article} {adj} {described.group('noun')}"
    return None
