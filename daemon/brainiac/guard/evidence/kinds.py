"""Values of a closed kind a sentence may end on: whom it was with ("with her aunt", a relative)
and a colour ("dyed his hair green"). Each is compared only with its own kind: the event about
the rest of the sentence contradicts it when, of a kind the sentence gives, it gives only
other values ("My mom and I made some dinner", "I dyed my hair purple"). Pure reading: no I/O.
"""

from __future__ import annotations

from brainiac.guard.evidence.words import lemma, words_of
from brainiac.language import lexicon, life_words

# Closed kinds of value a sentence may end on: the people it was with, a colour.
_COLOURS = lexicon.word_set(
    """
    red orange yellow green blue purple pink brown grey gray violet turquoise teal navy maroon
    beige black white lilac magenta crimson
    """
)
_CLOSED_KINDS = (life_words.RELATIVES, _COLOURS)


def of_kinds(words: list[str]) -> dict[int, set[str]]:
    """The values of a closed kind among `words` (whom: a relative; a colour), as lemmas, by
    kind."""
    found: dict[int, set[str]] = {}
    for kind, members in enumerate(_CLOSED_KINDS):
        mine = {lemma(w) for w in words if w in members}
        if mine:
            found[kind] = mine
    return found


def another_of_kind(said: dict[int, set[str]], text: str) -> bool:
    """Whether `text` gives, for a kind `said` gives, only values other than the sentence's
    ("my mom and I" against "with her aunt", "purple" against "green")."""
    theirs = of_kinds(words_of(text))
    return any(theirs.get(kind) and not mine & theirs[kind] for kind, mine in said.items())
