"""The value beside a shared word: where a sentence and the event about it say the same word and
each gives its own words right next to it, those are the values to compare, of whatever kind.

"The workout class Maria started was hot yoga" and "Just started doing aerial yoga": both say
"yoga", one gives "hot" before it, the other "aerial". "Your screenplay is a mix of horror and
comedy" and "It's a mix of drama and romance": after "mix" one gives "horror and comedy", the
other "drama and romance". The shared word (the anchor) says which thing is meant in any
conversation, and what stands beside it is the value: no list of kinds (places, dishes, dance
styles) is needed, where kinds.py's closed kinds (relatives, colours) compare values said
anywhere in the sentence.

A slot differs only when both sides give content words there, none of the sentence's words at
the slot is said anywhere in the event's turn, and none of the event's is in the sentence: a
paraphrase that keeps one word ("the local shelter" and "the homeless shelter near me", where
the turn says "homeless") agrees. Words that judge or size a thing ("great", "new", "little",
"first") or say when are no value. Pure reading: no I/O (`beside` is handed whether the
memory has said a word).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass

from brainiac.guard.evidence.alignment import CAPTION_RE, Aligned, EventLine
from brainiac.guard.evidence.words import (
    FIRST_PERSON,
    LIGHT_LEMMAS,
    YOU,
    lemma,
    verb_form,
    words_of,
)
from brainiac.language import claims, lexicon

_WORD_RE = re.compile(r"[^\W\d_][\w'’-]*")  # as words_of reads them, with their capitals
_RUN = 4  # content words a slot holds at most ("coconut cream frosting")
_SKIPPED = 3  # function words between the anchor and what follows it ("a mix of the ...")
_JOINERS = lexicon.word_set("and or")
# Words that say whose or which one, not where: "a mix of" is "the mix of", "my mix of".
_ARTICLES = lexicon.DETERMINERS | lexicon.word_set("a an this that these those some its")
# What may stand between an anchor and the thing after it: "a mix of the", "the coast of".
_BETWEEN = _ARTICLES | lexicon.word_set("of in at on for with from about into onto to by")
# Words that judge, size, order or date a thing: said beside any value, they tell none apart
# ("my new puppy" and "my adorable puppy" are one puppy).
_NO_VALUE = lexicon.OPINIONS | lexicon.word_set(
    """
    new old little young first second third last next own whole entire full other another
    favorite favourite recent current latest main special local same such lovely adorable
    cute sweet super fave top huge massive tiny giant quick short long
    """
)
_WHEN = lexicon.TIME_WORDS | lexicon.WEEKDAYS | lexicon.MONTHS | lexicon.word_set("ago today")


@dataclass(frozen=True)
class Slot:
    """The words a sentence gives beside an anchor, on one side of it."""

    anchor: str  # the shared word, as a lemma
    after: bool  # the words follow the anchor (else they come right before it)
    words: frozenset[str]  # the value's content words, as lemmas
    # the prepositions between the anchor and the words after it: "promoted to assistant
    # manager" and "promoted at work" give values of two places, "a mix of" and "a mix of" one
    joined: tuple[str, ...]
    # a name ("Marley flooring", "the coast of New England") is of another kind than a
    # description ("a classic movie"): only names are compared with names
    named: bool = False
    written: tuple[str, ...] = ()  # the value's words as written (lowercased)


def _plain(word: str, drop: set[str]) -> str | None:
    """The lemma of a word that may be part of a value, None for one that may not."""
    if word in lexicon.STOP_WORDS or word in FIRST_PERSON or word in YOU or len(word) < 3:
        return None
    base = lemma(word)
    if base in drop or word in drop or base in LIGHT_LEMMAS or word in _NO_VALUE:
        return None
    if base in _NO_VALUE or word in _WHEN or word.endswith("ly") or word in claims.NUMBER_WORDS:
        return None
    return base


def _run(words: list[str], start: int, step: int, drop: set[str]) -> list[int]:
    """The value's lemmas from `start` going `step` (1: after, -1: before): consecutive words
    that are not function words, joined by "and"/"or" after the anchor; a possessive or a
    function word ends it before the anchor ("Melanie's kids" is whose, not which)."""
    found: list[int] = []
    i = start
    while 0 <= i < len(words) and len(found) < _RUN:
        w = words[i].rstrip("-")
        if step > 0 and w in _JOINERS and found:
            i += step
            continue
        if w in lexicon.STOP_WORDS or "'" in w or "’" in w or verb_form(w):
            break  # a value is a thing: a verb after the anchor opens another clause
        base = _plain(w, drop)
        if base is None:
            break
        found.append(i)
        i += step
    return found


def slots_of(text: str, anchors: set[str], drop: set[str]) -> list[Slot]:
    """The values `text` gives beside each of `anchors` (lemmas), both sides."""
    written = _WORD_RE.findall(text)
    words = [w.lower().replace("’", "'") for w in written]

    def slot(anchor: str, at: list[int], after: bool, joined: tuple[str, ...]) -> Slot:
        value = frozenset(lemma(words[k].rstrip("-")) for k in at)
        named = any(k > 0 and written[k][:1].isupper() for k in at)
        return Slot(anchor, after, value, joined, named, tuple(words[k].rstrip("-") for k in at))

    out: list[Slot] = []
    for i, w in enumerate(words):
        base = lemma(w)
        if base not in anchors:
            continue
        before = _run(words, i - 1, -1, drop)
        if before:
            out.append(slot(base, before, False, ()))
        j = i + 1
        while j < len(words) and words[j] in _BETWEEN and j - i <= _SKIPPED:
            j += 1
        # "sending someone to look": a pronoun or a verb's words between, not a thing's place;
        # right after a word that is no verb ("the store sells ..."), its own verb may follow
        placed = j == len(words) or words[j] not in lexicon.STOP_WORDS
        after = _run(words, j, 1, drop) if placed and (j > i + 1 or verb_form(w)) else []
        if after:
            out.append(
                slot(base, after, True, tuple(w for w in words[i + 1 : j] if w not in _ARTICLES))
            )
    return out


def differs(
    sentence: str, event_sentence: str, turn: str, anchors: set[str], drop: set[str]
) -> Slot | None:
    """The sentence's slot where `event_sentence` gives other words on the same side of the
    same anchor, and the event's `turn` says none of the sentence's words there; None when no
    slot differs. `anchors`: the words both say that may anchor a value (lemmas, not light, not
    names); `drop`: words that are no value (the speakers' names, the sentence's set-aside
    values)."""
    said = {lemma(w) for w in words_of(sentence)}
    told = {lemma(w) for w in words_of(turn)}
    theirs = slots_of(event_sentence, anchors, drop)
    for mine in slots_of(sentence, anchors, drop):
        if any(w in told or _misspelt(w, told) for w in mine.words):
            continue  # the turn says it, in some place: not another value
        for other in theirs:
            same = (other.anchor, other.after, other.joined, other.named)
            if same == (mine.anchor, mine.after, mine.joined, mine.named) and not (
                other.words & said
            ):
                return mine
    return None


def holds(sentence: str, text: str, anchor: str, drop: set[str]) -> bool:
    """Whether `text` says the sentence's words beside `anchor` (its value, said there too),
    a misspelling of one ("Xeonoblade") being the same word."""
    told = {lemma(w) for w in words_of(text)}
    return any(
        s.anchor == anchor and all(w in told or _misspelt(w, told) for w in s.words)
        for s in slots_of(sentence, {anchor}, drop)
    )


def _misspelt(word: str, told: set[str]) -> bool:
    if len(word) < 6:
        return False
    return any(
        abs(len(w) - len(word)) <= 2 and difflib.SequenceMatcher(None, word, w).ratio() >= 0.85
        for w in told
        if w[:1] == word[:1]
    )


@dataclass(frozen=True)
class Asked:
    """What `beside` needs of the sentence beyond its text: its relation words (lemmas) and
    their weights, the words that are no value (the speakers' names), and the share of the
    relation an event must hold to be plainly about it."""

    relation: set[str]
    weights: dict[str, float]
    drop: set[str]
    needed: float


def beside(
    sentence: str,
    asked: Asked,
    aligned: list[Aligned],
    events: list[EventLine],
    heard: Callable[[str], bool],
) -> Aligned | None:
    """The event plainly about the sentence that gives another value beside a word both say
    ("hot yoga" against "aerial yoga"), where no event found gives the sentence's; None
    otherwise. Plainly about it: holding most of the sentence's relation words once the
    value's own words are set aside, as a date's are ("horror and comedy" are the value, not
    what the turn must say), and more than the anchor. `heard`: whether the memory has said a
    word in any form."""
    anchors = asked.relation - LIGHT_LEMMAS
    if not anchors:
        return None
    differ: list[tuple[Aligned, str]] = []
    for a in aligned:
        if not a.core:
            continue
        # a word the exchange says anywhere (the turn, the question it answers) is not another
        # value; an image's caption is a model's guess, not something said
        exchange = f"{CAPTION_RE.sub(' ', a.event.text)} {a.event.context}"
        mine = differs(sentence, a.sentence, exchange, anchors, asked.drop)
        if mine is None or all(heard(w) for w in mine.written):
            # a value the memory has said somewhere may be a paraphrase of the turn's ("a
            # fashion store" for "my clothing store"): only one it never said is plainly
            # another, as a thing the sentence ends on is (evidence/__init__.py `_unheard`)
            continue
        rest = asked.relation - mine.words
        held = rest & {lemma(w) for w in words_of(exchange)}
        if not held - LIGHT_LEMMAS - {mine.anchor}:
            continue  # the anchor alone ("played ... Chess") says no more than a verb
        weights = asked.weights
        if sum(weights[w] for w in held) < asked.needed * sum(weights[w] for w in rest):
            continue
        differ.append((a, mine.anchor))
    if not differ:
        return None
    # the sentence's value said beside the same word in any event found: two occasions, or a
    # change, not a wrong value
    if any(holds(sentence, e.text, anchor, asked.drop) for _, anchor in differ for e in events):
        return None
    return max((a for a, _ in differ), key=lambda a: a.score)
