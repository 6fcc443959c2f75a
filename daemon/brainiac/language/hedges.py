"""The words that make a statement a hedge, a guess or a hypothetical, not something that is:
"if", "would", "maybe", "I think", "someday" ... (observe.py keeps no line for such a one).

A modal in a clause that only says which thing is meant does not hedge the statement: "I saw
the impact I could make in the community" is something seen ("the impact I could make" names
it); "I did what I could", "I said I could help", "something I would love to do" are no such
clause. Pure text: no I/O.
"""

from __future__ import annotations

import re

from brainiac.language.lexicon import word_set

_HYPOTHETICAL = word_set(
    """
    if unless would could should might maybe perhaps probably possibly hopefully suppose
    imagine imagining hypothetically wish wonder guess unsure reckon someday think i'd
    """
)
# "Could" in a relative clause after a noun: "the impact I could make" (not "what we could", "I
# said I could", "anything I could do", "something I would love": a wish).
_NOT_A_HEDGE_RE = re.compile(
    r"\b(?!(?:what|that|said|know|knew|hope|wish|think|thought|guess|if|so|and|but|anything|"
    r"everything|something|nothing|all|best|more|much|glad|happy|sure)\b)"
    r"[a-z]{3,}\s+(?:that\s+)?(?:I|we)\s+(?P<modal>could)\b",
    re.IGNORECASE,
)


def hedging(s: str) -> set[str]:
    """The words of `s` that hedge it (lowercase), less a modal that only says which thing is
    meant."""
    kept = _NOT_A_HEDGE_RE.sub(lambda m: m.group(0)[: m.start("modal") - m.start()], s)
    return set(re.findall(r"[a-z']+", kept.replace("’", "'").lower())) & _HYPOTHETICAL
