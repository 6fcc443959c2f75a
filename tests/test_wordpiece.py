"""The WordPiece tokenizer gives the ids Hugging Face's tokenizer gives all-MiniLM-L6-v2.

The expected ids were produced by the `tokenizers` library (0.22) from the model's own
tokenizer.json; brainiac does not depend on it. On LoCoMo's four development conversations
(3,277 turns, captions and questions) the two agreed on every id.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import brainiac.search
from brainiac.text.wordpiece import WordPiece, words

VOCABULARY = Path(brainiac.search.__file__).with_name("minilm_vocab.txt")


@pytest.fixture(scope="module")
def wordpiece() -> WordPiece:
    return WordPiece(VOCABULARY.read_text(encoding="utf-8").splitlines())


@pytest.mark.parametrize(
    ("text", "ids"),
    [
        (
            "I bought a new bicycle last week!",
            [101, 1045, 4149, 1037, 2047, 10165, 2197, 2733, 999, 102],
        ),
        (
            # accents, typographic quotes, CJK, a fraction, a no-break space, a zero-width space,
            # a vertical tab, a dotted capital I, a ligature, a combining accent, ASCII symbols
            # and an emoji the vocabulary lacks
            "Café naïve résumé — “quotes” 東京 ½ x\xa0y \u200bzero\x0bvt İstanbul ﬁne e\u0301 "
            "$5^2 `a` ~b~ 😀",
            [
                101,
                7668,
                15743,
                13746,
                1517,
                1523,
                16614,
                1524,
                1879,
                1755,
                1092,
                1060,
                1061,
                5717,
                2615,
                2102,
                9960,
                1984,
                2638,
                1041,
                1002,
                1019,
                1034,
                1016,
                1036,
                1037,
                1036,
                1066,
                1038,
                1066,
                100,
                102,
            ],
        ),
        (
            "Melanie's kids loved the dinosaur exhibit (at 3:30pm).",
            [
                101,
                13286,
                1005,
                1055,
                4268,
                3866,
                1996,
                15799,
                8327,
                1006,
                2012,
                1017,
                1024,
                2382,
                9737,
                1007,
                1012,
                102,
            ],
        ),
        (
            # a word split into many pieces, and one over 100 characters: unknown
            "supercalifragilisticexpialidocious " + "x" * 101,
            [
                101,
                3565,
                9289,
                10128,
                29181,
                24411,
                4588,
                10288,
                19312,
                21273,
                10085,
                6313,
                100,
                102,
            ],
        ),
        ("", [101, 102]),
    ],
)
def test_ids_match_the_reference_tokenizer(wordpiece: WordPiece, text: str, ids: list[int]) -> None:
    assert wordpiece.encode(text) == ids


def test_long_text_is_cut_with_its_end_marker_kept(wordpiece: WordPiece) -> None:
    ids = wordpiece.encode("word " * 300, max_tokens=128)
    assert len(ids) == 128
    assert ids[0] == wordpiece.ids["[CLS]"]
    assert ids[-1] == wordpiece.ids["[SEP]"]


def test_words_split_at_punctuation_and_fold_case() -> None:
    assert words("Hello,World! it's") == ["hello", ",", "world", "!", "it", "'", "s"]


def test_vocabulary_without_special_tokens_is_refused() -> None:
    with pytest.raises(ValueError, match=r"\[UNK\]"):
        WordPiece(["a", "b"])
