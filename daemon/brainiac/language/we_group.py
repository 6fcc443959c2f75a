"""Who the speaker's "we" is: their family, or others (friends, a team, a group).

"We" is the family when the turn speaks of the speaker's kids or family ("We went to the beach.
The kids had a blast"), not of "a family" they saved, kids they do something "for" or "no other
family". When the turn names both, "we" is the group named last before the sentence saying "we":
"My fam's small, but I love spending time with the friends I have. We usually watch movies" is
the friends ("Maria and others"), "I'm lucky to have my friends and family. We even had a
picnic" the family, and so is a "we" whose own sentence names them ("We took my kids to the
zoo"). Pure text: no I/O.
"""

from __future__ import annotations

import re

_FAMILY_RE = re.compile(
    r"(?<!\ba )(?<!\bfor )(?<!\bfor the )(?<!\bfor our )(?<!\bno )(?<!\bother )"
    r"\b(?:kids|children|son|sons|daughter|"
    r"daughters|husband|wife|family|fam|partner|hubby|fiance|fiancé)\b",
    re.IGNORECASE,
)
# A group of the speaker's that is no family: "the friends I have", "my team", "the gang".
_OTHERS_RE = re.compile(
    r"\b(?:friends|buddies|pals|gang|crew|team|teammates|colleagues|coworkers|classmates)\b",
    re.IGNORECASE,
)


def family(text: str, sentence: str) -> bool:
    """Whether "we" in `sentence`, said in the turn `text`, is the speaker and their family."""
    if _FAMILY_RE.search(sentence):
        return True  # "We celebrated my daughter's birthday"
    at = text.lower().find(sentence[:30].lower())
    before = text[:at] if at > 0 else ""
    marks = [(m.start(), True) for m in _FAMILY_RE.finditer(before)]
    marks += [(m.start(), False) for m in _OTHERS_RE.finditer(before)]
    return max(marks)[1] if marks else _FAMILY_RE.search(text) is not None
