"""An "it" that stands for nothing: a deed of the speaker's own, judged ("It's been so inspiring
to work with our young dancers", "It's been great having people behind me while volunteering at
the homeless shelter"). The sentence opens on "it", as one that points back to something said
before does ("It's a symbol of all I overcame"), but says whole what it is about: what the
speaker does, after the judgement.

Only a deed that names enough stands: the speaker in it ("I", "me", "my", "our") and at least
`_CONTENT_MIN` content words besides words of feeling or resolve ("It's so freeing to express
myself" is a feeling; "It feels good to use my skills to make a difference" names no skill).
Pure text: no I/O.
"""

from __future__ import annotations

import re

from brainiac.language.lexicon import STOP_WORDS, word_set

# "It's been so inspiring to", "It was great having", "It's always fun coming up with".
_JUDGED_DEED_RE = re.compile(
    r"^it(?:'s| is| was|'s been| has been)\s+(?:(?:so|really|super|just|truly|always|such|"
    r"very|pretty)\s+)*(?:an?\s+)?(?:great|nice|awesome|amazing|inspiring|rewarding|fulfilling|"
    r"cool|fun|wonderful|good|refreshing|empowering|exciting|special)\s+"
    r"(?P<deed>(?:to\s+(?!(?:see|know|hear|think|feel|realize|have)\b)[a-z]+|"
    r"(?!(?:seeing|knowing|hearing|thinking|feeling|realizing)\b)[a-z]{3,}ing)\b.*)$",
    re.IGNORECASE,
)
_SPEAKER_RE = re.compile(r"\b(?:I|I'm|I've|me|my|our|we|we're|we've)\b", re.IGNORECASE)
# Words that name no thing done: feelings, resolve, people at large, the speaker.
_EMPTY = word_set(
    """
    difference change impact people others everyone help helping support supporting make making
    way ways things stuff life lives dream dreams goal goals world time lot lots feel feeling
    happy joy love passion work working hard best keep keeping going get getting
    i i'm i've me my our we we're we've us myself ourselves
    """
)
_CONTENT_MIN = 4


def judged_deed(s: str) -> bool:
    """Whether `s` opens on an "it" that stands for nothing, judging a deed of the speaker's own
    that it names whole after the judgement."""
    m = _JUDGED_DEED_RE.match(s.strip())
    if m is None or _SPEAKER_RE.search(m.group("deed")) is None:
        return False
    words = re.findall(r"[a-z'-]+", m.group("deed").replace("’", "'").lower())
    content = [w for w in words if w not in STOP_WORDS and w not in _EMPTY]
    return len(content) >= _CONTENT_MIN
