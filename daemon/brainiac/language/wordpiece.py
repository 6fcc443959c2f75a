"""BERT's uncased WordPiece tokenizer, in plain Python: text to the token ids a BERT-family
sentence model reads (search/sentence_model.py).

It does what Hugging Face's `BertNormalizer` + `BertPreTokenizer` + `WordPiece` do for
all-MiniLM-L6-v2 and bert-base-uncased (tests/test_wordpiece.py compares their ids, character by
character and on generated text of every Unicode category): control, format and private-use
characters dropped, white space folded, CJK ideographs split apart, accents stripped (NFD, then
the nonspacing marks, Mn, dropped: a spacing or enclosing mark is part of the word, as the vowel
signs of Devanagari are), lower case, words split at every punctuation character, then each word
as the longest vocabulary pieces from its left (`##` marks a piece inside a word), `[UNK]` for a
word with no such split or longer than 100 characters. Ids are wrapped in `[CLS]` ... `[SEP]` and
cut at `max_tokens`. Where Google's original BERT code and Hugging Face's differ, this follows
Hugging Face's, the tokenizer the model ships with (its tokenizer.json): an unassigned character
is kept, not dropped; the CJK Extension E range starts at U+2B920; a final capital sigma
lower-cases to σ, not ς.

Plain Python, so the sentence model needs no tokenizer library: about 40,000 words a second
here, and the words of a vault repeat, so each is split once (`_pieces` keeps the last 50,000).
"""

from __future__ import annotations

import functools
import unicodedata
from collections.abc import Sequence

UNKNOWN = "[UNK]"
CLS = "[CLS]"
SEP = "[SEP]"
_MAX_WORD_CHARS = 100


def _is_punctuation(ch: str) -> bool:
    # BERT counts every non-letter, non-digit ASCII symbol as punctuation ("$", "^", "`" too).
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def _is_cjk(cp: int) -> bool:
    return (
        0x4E00 <= cp <= 0x9FFF
        or 0x3400 <= cp <= 0x4DBF
        or 0x20000 <= cp <= 0x2A6DF
        or 0x2A700 <= cp <= 0x2B73F
        or 0x2B740 <= cp <= 0x2B81F
        # From U+2B920, not Extension E's U+2B820: Hugging Face's range, the model's tokenizer.
        or 0x2B920 <= cp <= 0x2CEAF
        or 0xF900 <= cp <= 0xFAFF
        or 0x2F800 <= cp <= 0x2FA1F
    )


# Dropped by the cleaning: control, format, surrogate and private-use characters. Not the
# unassigned ones (Cn): Hugging Face's tokenizer keeps them, and so a word that has one is [UNK].
_DROPPED = frozenset(("Cc", "Cf", "Co", "Cs"))


def _cleaned(text: str) -> str:
    out = []
    for ch in text:
        cp = ord(ch)
        if cp == 0 or cp == 0xFFFD:
            continue
        if ch in "\t\n\r":
            out.append(" ")
        elif unicodedata.category(ch) in _DROPPED:
            continue
        elif ch.isspace():
            out.append(" ")
        elif _is_cjk(cp):
            out.append(f" {ch} ")
        else:
            out.append(ch)
    return "".join(out)


def _without_accents(word: str) -> str:
    """`word` decomposed (NFD) without its nonspacing marks (Mn): the accents. Spacing (Mc) and
    enclosing (Me) marks stay: "हिंदी" keeps its vowel signs (ि, ी are Mc) and loses only the
    anusvara (ं, Mn), as the model's tokenizer does."""
    if word.isascii():
        return word
    nfd = unicodedata.normalize("NFD", word)
    return "".join(c for c in nfd if unicodedata.category(c) != "Mn")


def _lower(word: str) -> str:
    # Character by character, as Hugging Face's tokenizer lower-cases: str.lower() alone turns a
    # capital sigma that ends a word into final sigma (ς), a piece the model never saw there.
    return word.replace("Σ", "σ").lower()


def words(text: str) -> list[str]:
    """The pre-tokenized words of `text`: cleaned, lower-cased, accents stripped, split at white
    space and around each punctuation character."""
    out: list[str] = []
    for chunk in _cleaned(text).split():
        chunk = _lower(_without_accents(chunk))
        if chunk.isalnum():
            out.append(chunk)
            continue
        current: list[str] = []
        for ch in chunk:
            if _is_punctuation(ch):
                if current:
                    out.append("".join(current))
                    current = []
                out.append(ch)
            else:
                current.append(ch)
        if current:
            out.append("".join(current))
    return out


class WordPiece:
    """A vocabulary (one token a line, its line number its id) and the tokenizer over it."""

    def __init__(self, vocabulary: Sequence[str]) -> None:
        self.ids = {token: i for i, token in enumerate(vocabulary)}
        for special in (UNKNOWN, CLS, SEP):
            if special not in self.ids:
                raise ValueError(f"the vocabulary has no {special} token")
        self.unknown = self.ids[UNKNOWN]
        self._pieces = functools.lru_cache(maxsize=50_000)(self._split)

    def _split(self, word: str) -> tuple[int, ...]:
        if len(word) > _MAX_WORD_CHARS:
            return (self.unknown,)
        pieces: list[int] = []
        start = 0
        while start < len(word):
            end = len(word)
            found = None
            while start < end:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                found = self.ids.get(piece)
                if found is not None:
                    break
                end -= 1
            if found is None:
                return (self.unknown,)
            pieces.append(found)
            start = end
        return tuple(pieces)

    def encode(self, text: str, max_tokens: int = 128) -> list[int]:
        """`[CLS]`, the pieces of `text`, `[SEP]`: at most `max_tokens` ids in all."""
        ids = [self.ids[CLS]]
        room = max_tokens - 1
        for word in words(text):
            ids.extend(self._pieces(word))
            if len(ids) >= room:
                del ids[room:]
                break
        ids.append(self.ids[SEP])
        return ids
