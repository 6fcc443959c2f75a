"""What an event mentions: the proper names in it and its most frequent content words.

Reflection names a window's topics with them; the memory plan founds entity notes on the names,
tags and titles session notes with the words, and tells small talk by having none
(lifecycle/jobs). Pure functions over English text, like extract.py's.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence

from brainiac.language.extract import sentences
from brainiac.language.lexicon import (
    COMMON_STARTS,
    MONTHS,
    PRONOUNS,
    STOP_WORDS,
    WEEKDAYS,
    word_set,
)

_NAME_JOINERS = word_set("of de van von der den da del di du la")

# Initials before a name are part of it ("J.K. Rowling", "J. Smith"): one token with their dots.
_TOKEN_RE = re.compile(
    r"(?:[^\W\d_a-z]\.)+(?=\s?[^\W\d_a-z])|[^\W\d_][\w'&-]*|[^\w\s]+|\d[\w.:/-]*"
)
# A hyphen before a lower-case word, or at the end, is no part of a name: "Rio de Janeiro-based",
# "Janeiro-it was" (a dash); "Spider-Man" and "Jean-Luc" are names whole.
_CUT_AT_HYPHEN_RE = re.compile(r"-(?![^\W\d_a-z])")
_NEVER_NAMES = word_set("i i'm i've i'll i'd ok todo fyi")
_TITLES = word_set("dr mr mrs ms prof")  # "Dr. Smith" is Smith; the title is not part of a name


def entities(text: str, openers: bool = True) -> list[str]:
    """Proper-noun phrases (`Anna Berg`, `Bank of America`, `Atlas`), in order of first mention.

    `openers=False` leaves out a lone capitalised word that only ever opens a sentence ("Random
    chat about pasta"): as often an ordinary word as a name, so not enough to found a note on.
    """
    seen: dict[str, None] = {}
    opening: set[str] = set()
    inside: set[str] = set()
    for sentence in sentences(text):
        for i, phrase in enumerate(_capital_runs(sentence)):
            seen.setdefault(phrase, None)
            at_start = i == 0 and sentence.lstrip("\"'(“‘").startswith(phrase)
            (opening if at_start else inside).add(phrase)
    if openers:
        return list(seen)
    return [p for p in seen if " " in p or p in inside or p not in opening]


_LOWER_WORD_RE = re.compile(r"(?<![\w'’])[a-z][a-z'’-]*")


def confirmed_names(texts: Sequence[str], key: Callable[[str], str]) -> set[str]:
    """The names `texts` say mid-sentence, by `key`, that are names there: "Yeah", "Wow", "Hope"
    and "Just" ("Remember Jon, Just do it!") open sentences or follow a comma capitalised and are
    written in lower case more often elsewhere; "Max", "Paris" stay capitalised wherever they
    stand. A run of several words all in capitals is shouting ("JUST DOING IT"), not a name."""
    inside: Counter[str] = Counter(
        key(x)
        for text in texts
        for x in entities(text, openers=False)
        if not (" " in x and x.isupper())
    )
    lower = Counter(
        key(w) for text in texts for w in _LOWER_WORD_RE.findall(text) if key(w) in inside
    )
    return {k for k, n in inside.items() if " " in k or lower[k] <= n}


def _capital_runs(sentence: str) -> list[str]:
    tokens = _TOKEN_RE.findall(sentence.replace("[[", " ").replace("]]", " "))
    runs: list[list[str]] = []
    run: list[str] = []
    for i, token in enumerate(tokens):
        word = token.removesuffix("'s").rstrip("'")
        if word.lower() in _TITLES or (token == "." and i > 0 and tokens[i - 1].lower() in _TITLES):
            continue
        capital = word[:1].isupper() and word.lower() not in _NEVER_NAMES
        if capital and i == 0 and _sentence_start_word(word):
            capital = False
        if capital and word.endswith(".") and (i + 1 == len(tokens) or _common_word(tokens[i + 1])):
            # "Plan B. Then we left": a letter ending a sentence, not an initial
            run.append(word.rstrip("."))
            runs.append(run)
            run = []
            continue
        if capital:
            cut = _CUT_AT_HYPHEN_RE.search(word)
            run.append(word[: cut.start()] if cut else word)
            if token != word or cut:  # a possessive ends the name: "Anna's Berlin trip"
                runs.append(run)
                run = []
            continue
        if run and _joins(word, run[-1], tokens[i + 1 : i + 3]):
            run.append(word)
            continue
        if run:
            runs.append(run)
            run = []
    if run:
        runs.append(run)
    out = []
    for r in runs:
        if len(r) == 1 and (r[0].lower() in WEEKDAYS or r[0].lower() in MONTHS):
            continue  # "Monday" alone is a date; "Monday Club" is a name
        out.append(" ".join(r))
    return out


def _joins(word: str, last: str, after: list[str]) -> bool:
    """Whether a lower-case `word` inside a name joins its parts: "Bank of America", "Rio de
    Janeiro", "The Name of the Wind" ("the" after a joiner, before a capital)."""
    low = word.lower()
    if low == "the" and last.lower() in _NAME_JOINERS:
        return bool(after) and after[0][:1].isupper()
    if low not in _NAME_JOINERS or not after:
        return False
    if after[0][:1].isupper():
        return True
    return after[0] == "the" and len(after) > 1 and after[1][:1].isupper()


def _sentence_start_word(word: str) -> bool:
    """A capital that only opens a sentence: a common word, an -ly adverb, an -ing form."""
    low = word.lower()
    return _common_word(low) or (len(low) > 4 and low.endswith(("ly", "ing")))


def _common_word(word: str) -> bool:
    low = word.lower()
    return low in STOP_WORDS or low in COMMON_STARTS or low in PRONOUNS


_WORD_RE = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)*")


def keywords(texts: Iterable[str], n: int = 5) -> list[str]:
    """The `n` most frequent content words, ties broken by first appearance."""
    counts: Counter[str] = Counter()
    first: dict[str, int] = {}
    for text in texts:
        for m in _WORD_RE.finditer(text.replace("’", "'").lower()):
            word = m.group().removesuffix("'s")
            if len(word) < 3 or "'" in word or word in STOP_WORDS:
                continue
            counts[word] += 1
            first.setdefault(word, len(first))
    return sorted(counts, key=lambda w: (-counts[w], first[w]))[:n]
