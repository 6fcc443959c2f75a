"""A reply that says what the speaker is doing in a gerund alone, made whole from the question it
answers: "Any fun plans for the summer?" "Researching adoption agencies - it's been a dream" →
"I'm researching adoption agencies"; "Do you have any projects you're working on?" "Yeah
actually - creating gaming content for YouTube." → "I'm creating gaming content for YouTube".

Only the other speaker's last question, asked of the listener ("you") about what they do, plan
or work on, makes the gerund the speaker's own; the gerund must open the reply (after "yeah",
"actually" ...), stand without a verb of its own ("Taking care of ourselves is vital" is a
maxim, "Loving the inclusivity!" a reaction to what was said: no question asked what they do)
and name what is done ("Keeping busy, same old stuff" says nothing).
Pure text: no I/O.
"""

from __future__ import annotations

import re

from brainiac.language import answering
from brainiac.language.lexicon import STOP_WORDS, word_set

# A question about what the listener does, plans or works on.
_ASKED_RE = re.compile(
    r"\b(?:you|your|ya)\b[^?]*\b(?:plans?|projects?|working on|up to|been doing|doing lately|"
    r"keeping you busy|been busy with)\b[^?]*\?"
    r"|\b(?:plans?|projects?)\b[^?]*\b(?:you|your|ya)\b[^?]*\?"
    r"|^\W*any\b[^?]*\b(?:plans?|projects?)\b[^?]*\?"
    r"|\b(?:what's|what is|anything)\s+new\b[^?]*\?",
    re.IGNORECASE,
)
_OPENER_RE = re.compile(
    r"^(?:(?:yeah|yes|yep|well|oh|actually|so|honestly|right now|currently|mostly|lately)\b"
    r"[\s,!.:;—–-]*)+",
    re.IGNORECASE,
)
# The gerund that opens the reply, up to where its clause ends.
_GERUND_RE = re.compile(
    r"^(?P<verb>(?!(?:being|having|seeing|knowing|feeling|thinking|hoping|wishing|loving|"
    r"looking forward|sending|nothing|something|anything|everything|morning|evening|thing)\b)"
    r"[a-z]{3,}ing)\s+(?P<rest>[^.!?;:—–]+?)\s*(?:\s[-–—]\s|[.!?;:—–]|$)",
    re.IGNORECASE,
)
# A verb of its own in the clause: then the gerund is its subject ("Researching is fun").
_FINITE_RE = re.compile(
    r"\b(?:is|are|was|were|has|have|had|'s|does|did|can|will|would|should|makes?|made|helps?|"
    r"brings?|gives?|keeps?|means)\b|'s\b",
    re.IGNORECASE,
)
_LISTENER_RE = re.compile(r"\b(?:you|your|yours|ya)\b", re.IGNORECASE)
# Words that name nothing done: "Keeping busy, same old stuff", "Trying to figure things out".
_VAGUE = word_set(
    """
    things thing stuff busy same old it this that lot lots much more something anything
    everything nothing well fine good great ok okay out up figure usual
    """
)
_NAMED_MIN = 2  # "Researching adoption agencies": two words name what is done


def answered(reply: str, previous: str | None) -> str | None:
    """`reply`'s first sentence made whole as "I'm <gerund> ..." when it opens on a gerund that
    answers the other speaker's last question about what the listener does or plans; None
    otherwise."""
    asked = answering.questions(previous or "")
    if not asked or _ASKED_RE.search(asked[-1]) is None:
        return None
    said = _OPENER_RE.sub("", reply.strip())
    m = _GERUND_RE.match(said)
    if m is None:
        return None
    rest = m.group("rest").strip(" ,")
    words = re.findall(r"[a-z'-]+", rest.lower())
    named = [w for w in words if w not in STOP_WORDS and w not in _VAGUE]
    if len(named) < _NAMED_MIN or _FINITE_RE.search(rest) or _LISTENER_RE.search(rest):
        return None
    # the whole sentence, what follows a dash too: "... agencies - it's been a dream to ..."
    sentence = re.match(r"[^.!?]*", said)
    whole = sentence.group(0) if sentence is not None else said
    return f"I'm {m.group('verb').lower()}{whole[len(m.group('verb')) :].rstrip()}"
