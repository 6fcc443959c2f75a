"""A thing named, then likened to one shown or said before: "I had a little doll like this", "I
used to have a dog back in Michigan with that name". The likeness leans on the photo or the
turn before (like what? which name?), but the thing is named without it: the sentence says
"I had a little doll" whole once it goes, so observe.py weighs it without the likeness.

Only a likeness after a noun goes: "I feel like that" (a verb before it) and "moments like
these" said of nothing owned ("Moments like these remind me ...": the moments are only the ones
shown) stay as they are, and lean. Pure text: no I/O.
"""

from __future__ import annotations

import re

# "a little doll like this", "a dog back in Michigan with that name", "random little things like
# that": a determiner or "my" before the noun, the noun, perhaps where it was, the likeness.
_LIKENESS_RE = re.compile(
    r"(?P<thing>\b(?:a|an|my|our|some)\s+(?:[a-z-]+\s+){0,2}?[a-z]{3,}"
    r"(?:\s+(?:back\s+)?(?:in|at|from)\s+[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*)?)"
    r"\s+(?:like\s+(?:this|that|these|those)(?:\s+one)?|with\s+(?:that|this|the same)\s+name)"
    r"(?=\s*(?:[,.!;]|$|\s+(?:and|but|so|when|since|because)\b))"
)


def unlikened(s: str) -> str:
    """`s` without a likeness of a thing it names to one shown or said before."""
    return _LIKENESS_RE.sub(lambda m: m.group("thing"), s)
