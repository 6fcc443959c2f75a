"""Which earlier note a new topic continues: the topic note about the same thing, by meaning.

A chat comes back to what it talked about before: the dance studio Jon was hunting a spot for
in January is the one he opens in June, the LGBTQ support group Caroline went to in May is
where she joins an activist group in July. The later topic's events go on in the earlier
topic's note (plan.py), so one note tells the story in order; a note too full to take them is
linked instead.

What is compared is what each note says happened, its title (headline.py: "Caroline went to a
LGBTQ support group"), without its date and the speakers' names (in every session of a chat,
they would make every note near every other), and only between notes about the same person
(the name a title opens with): Melanie's camping trip is not where Caroline's hike goes on.
By the sentence model (search/sentence_model.py) where the process has it loaded (the
daemon's embedder; the jobs never open the index for it), the nearest above `NEAR`; else the
one sharing the most content words, `NEAR_WORDS` at least. A title's vector is
kept (semantic.likeness), so a chat of many sessions embeds each title once.

One concept: finding the note a new topic continues; plan.py puts the topic there.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING

from brainiac.language.lexicon import STOP_WORDS
from brainiac.store.names import Entry

if TYPE_CHECKING:
    from brainiac.search.semantic import SemanticIndex

# Cosine of two titles from which the later note continues the earlier: on LoCoMo's development
# chats, all-MiniLM-L6-v2 puts two steps of one story of one person above it ("joined a new
# LGBTQ activist group" / "went to a LGBTQ support group": 0.82; "got noticed by fashion
# editors" / "got accepted for a fashion internship": 0.52) and most unrelated ones below.
NEAR = 0.5
# Shared content words, without the model, from which a note continues another.
NEAR_WORDS = 2


def continued(
    title: str,
    earlier: Sequence[Entry],
    speakers: Collection[str],
    semantic: SemanticIndex | None = None,
) -> Entry | None:
    """The note of `earlier` that a new note titled `title` continues, None when none is near.
    `semantic`: the memory's search.semantic.SemanticIndex (None: by words alone)."""
    names = _names_pattern(speakers)
    owner = _owner(title, names)
    kept = [e for e in earlier if _owner(e.title, names) == owner]
    if not kept:
        return None
    mine = _bare(title, names)
    texts = [_bare(e.title, names) for e in kept]
    cosines = semantic.likeness(mine, texts) if semantic is not None else None
    if cosines is None:
        return _by_words(mine, texts, kept)
    best = max(range(len(kept)), key=lambda i: (cosines[i], i))
    return kept[best] if cosines[best] >= NEAR else None


def _owner(title: str, names: re.Pattern[str]) -> str:
    """The speaker a title opens with ("Melanie's son got ..." → "melanie"), "" for none."""
    m = names.match(title)
    return m.group(0).lower().removesuffix("'s") if m else ""


def _bare(title: str, names: re.Pattern[str]) -> str:
    """A title without its dated tail and the speakers' names: what happened."""
    return " ".join(names.sub(" ", re.sub(r"\s*\([^()]*\)$", "", title)).split())


def _by_words(mine: str, texts: Sequence[str], kept: Sequence[Entry]) -> Entry | None:
    words = _content(mine)
    shared = [len(words & _content(t)) for t in texts]
    best = max(range(len(kept)), key=lambda i: (shared[i], i))
    return kept[best] if shared[best] >= NEAR_WORDS else None


def _content(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z][a-z'-]{2,}", text.lower()) if w not in STOP_WORDS}


def _names_pattern(speakers: Collection[str]) -> re.Pattern[str]:
    words = sorted({w for s in speakers for w in s.split() if w}, key=len, reverse=True)
    if not words:
        return re.compile(r"(?!)")
    return re.compile(rf"\b(?:{'|'.join(re.escape(w) for w in words)})(?:'s)?\b", re.I)
