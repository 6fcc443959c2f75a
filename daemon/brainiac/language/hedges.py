"""The words that make a statement a hedge, a guess or a hypothetical, not something that is:
"if", "would", "maybe", "I think", "someday" ... observe.py keeps no line for such a one
(`hedging`), and extract.py reads no fact from it (`unasserted`).

A modal in a clause that only says which thing is meant does not hedge the statement: "I saw
the impact I could make in the community" is something seen ("the impact I could make" names
it); "I did what I could", "I said I could help", "something I would love to do" are no such
clause. Pure text: no I/O.
"""

from __future__ import annotations

import re

from brainiac.language.lexicon import word_set

# A guess, a supposition, a wish or a hope: neither an observation nor a fact is read from it.
_HEDGES = word_set(
    """
    if unless would could should might maybe perhaps probably possibly hopefully suppose
    imagine imagining hypothetically wish wonder guess unsure reckon think
    """
)
# A "someday" and an "I'd" (I would) are no observation, something done: "I'll open a studio
# someday", "I'd love to visit Paris". Beside a fact they hedge nothing: "The deadline is
# Friday, someday we'll laugh about it", and "I'd" is as often "I had" ("My sister's name is
# Lena, I'd forgotten").
_HYPOTHETICAL = _HEDGES | word_set("someday i'd")
# A fact's value is what the sentence asserts, so a fact also needs it not wondered about,
# assumed or believed: "I don't know whether the deadline is Friday", "assuming the launch is
# on Monday", "I believe it is Friday". An observation says what the speaker did, and such a
# word beside the deed does not make it a guess ("Maria's aunt believed in volunteering", "I went,
# whether or not it helps"); the speaker's own belief is no observation by observe.py's
# _BELIEF_RE.
_UNASSERTED = _HEDGES | word_set("whether supposing assume assuming believe")
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


def unasserted(sentence: str) -> bool:
    """Whether a word of `sentence` keeps a fact from being read of it (a hedge, a supposition,
    a belief). Every modal counts, also one that only says which thing is meant (`hedging`
    passes it over): a fact is read precision first."""
    words = {w.lower() for w in re.findall(r"[\w']+", sentence)}
    return bool(words & _UNASSERTED)
