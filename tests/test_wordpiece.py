"""The WordPiece tokenizer gives the ids Hugging Face's tokenizer gives all-MiniLM-L6-v2.

The reference is the `tokenizers` library (a test-only dependency; brainiac does not use it),
set up as the model's tokenizer.json sets it up, over brainiac's own vocabulary: every character
alone and inside a word, generated text drawn from every Unicode category, and hand-picked
scripts. The fixed ids below were produced by it (0.22) from the model's own tokenizer.json; on
LoCoMo's four development conversations (3,277 turns, captions and questions) the two agreed on
every id.
"""

from __future__ import annotations

import functools
import sys
import unicodedata
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer, normalizers, pre_tokenizers, processors
from tokenizers.models import WordPiece as ReferenceWordPiece

import brainiac.search
from brainiac.language.wordpiece import WordPiece, words

VOCABULARY = Path(brainiac.search.__file__).with_name("minilm") / "vocab.txt"


@pytest.fixture(scope="module")
def wordpiece() -> WordPiece:
    return WordPiece(VOCABULARY.read_text(encoding="utf-8").splitlines())


@functools.cache
def _reference(max_tokens: int = 128) -> Tokenizer:
    """all-MiniLM-L6-v2's tokenizer as its tokenizer.json has it: BertNormalizer (clean text,
    CJK apart, lower case; strip_accents unset, so accents are stripped with the case),
    BertPreTokenizer, WordPiece (`##`, [UNK], 100 characters a word), [CLS] ... [SEP], cut at
    `max_tokens`."""
    vocabulary = VOCABULARY.read_text(encoding="utf-8").splitlines()
    ids = {token: i for i, token in enumerate(vocabulary)}
    reference = Tokenizer(ReferenceWordPiece(ids, unk_token="[UNK]", max_input_chars_per_word=100))
    reference.normalizer = normalizers.BertNormalizer(
        clean_text=True, handle_chinese_chars=True, strip_accents=None, lowercase=True
    )
    reference.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    reference.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", ids["[CLS]"]), ("[SEP]", ids["[SEP]"])]
    )
    reference.enable_truncation(max_tokens)
    return reference


# -- the characters both sides' Unicode tables agree on ---------------------------------------
# brainiac reads the categories from Python's unicodedata (Unicode 14.0 on Python 3.11, newer
# after); `tokenizers` from a Rust crate with older tables, where a character added since (U+0898
# ARABIC SMALL HIGH WORD AL-JUZ, Mn since 14.0) is unassigned, so a letter to it, and a few
# changed category (U+166D CANADIAN SYLLABICS CHI SIGN, Po there, So since 12.0). No tokenizer
# can agree with both tables on those, so the generated text leaves out every character the two
# tables treat differently: assigned in both with the same category is what is compared.
# Unassigned (Cn) characters are left out of the generation for the same reason (a newer table
# may have assigned them) and compared on the ones unassigned in every version (the
# noncharacters); surrogates are left out because no UTF-8 text, so no reference input, has one.

_SKIPPED_CATEGORIES = {"Cn", "Cs"}
_CATEGORIES = [
    *("Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No"),
    *("Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po", "Sm", "Sc", "Sk", "So"),
    *("Zs", "Zl", "Zp", "Cc", "Cf", "Co"),
]


@functools.cache
def _assigned() -> tuple[str, ...]:
    """Every character assigned in Python's tables, but one in 64 of the 137,000 private-use
    ones (one rule drops them all)."""
    return tuple(
        chr(cp)
        for cp in range(sys.maxunicode + 1)
        if (category := unicodedata.category(chr(cp))) not in _SKIPPED_CATEGORIES
        and (category != "Co" or cp % 64 == 0)
        and chr(cp) not in "a\x01"  # the probes' separators
    )


def _parts(text: str, separator: str, count: int) -> list[str]:
    parts = text.split(separator)[1:]
    assert len(parts) == count
    return parts


def _reference_views(chars: tuple[str, ...]) -> list[tuple[str, bool, str, str]]:
    """What the reference's own tables make of each character, one step at a time: the text
    cleaning ("" dropped, " " white space), whether the pre-tokenizer isolates it as
    punctuation, accent stripping, lower-casing. Each step sees all the characters at once,
    each after a separator it leaves alone."""

    def normalized(separator: str, **steps: bool) -> list[str]:
        normalizer = normalizers.BertNormalizer(
            **({"clean_text": False, "handle_chinese_chars": False, "lowercase": False} | steps)
        )
        text = normalizer.normalize_str("".join(separator + ch for ch in chars))
        return _parts(text, separator, len(chars))

    cleaned = normalized("a", clean_text=True, strip_accents=False)
    stripped = normalized("\x01", strip_accents=True)
    lowered = normalized("\x01", strip_accents=False, lowercase=True)
    pieces = iter(
        piece
        for piece, _ in pre_tokenizers.BertPreTokenizer().pre_tokenize_str(
            "".join(f"a{ch} " for ch in chars)
        )
    )
    isolated = []
    for ch in chars:
        piece = next(pieces)
        if piece == "a" and ch.isspace():
            isolated.append(False)
        elif piece == "a":
            assert next(pieces) == ch
            isolated.append(True)
        else:
            assert piece == "a" + ch
            isolated.append(False)
    return list(zip(cleaned, isolated, stripped, lowered, strict=True))


def _python_view(ch: str) -> tuple[str, bool, str, str]:
    """The same four steps by the BERT rules over Python's tables (written out here, apart
    from the code under test, so a rule that code gets wrong is still compared)."""
    category = unicodedata.category(ch)
    if ch in "\t\n\r" or (ch.isspace() and category not in ("Cc", "Cf")):
        cleaned = " "
    elif ch in "\x00\ufffd" or category in ("Cc", "Cf", "Co", "Cs"):
        cleaned = ""
    else:
        cleaned = ch
    punctuation = (ch.isascii() and not ch.isalnum() and ch.isprintable() and ch != " ") or (
        category.startswith("P")
    )
    nfd = unicodedata.normalize("NFD", ch)
    stripped = "".join(c for c in nfd if unicodedata.category(c) != "Mn")
    return cleaned, punctuation, stripped, ch.lower()


@functools.cache
def _tables_disagree() -> frozenset[str]:
    """The characters the two Unicode tables treat differently (see above)."""
    chars = _assigned()
    views = _reference_views(chars)
    return frozenset(ch for ch, view in zip(chars, views, strict=True) if view != _python_view(ch))


def test_the_characters_left_out_are_new_or_changed_in_unicode() -> None:
    """The left-out characters are the ones Unicode added or recategorized since 3.2, the
    oldest table Python keeps: not characters long settled that a rule could be wrong about."""
    disagree = _tables_disagree()
    assert 0 < len(disagree) < 2000
    settled = [
        f"U+{ord(ch):04X}"
        for ch in disagree
        if unicodedata.ucd_3_2_0.category(ch) == unicodedata.category(ch)
    ]
    assert not settled
    # The scripts this file checks by hand are all compared.
    assert not disagree & set("हिंदी भाषा ภาษาไทย 東京 é ΟΔΟΣ 👩‍💻")


def test_every_character_alone_and_inside_a_word_gets_the_reference_ids(
    wordpiece: WordPiece,
) -> None:
    disagree = _tables_disagree()
    chars = [ch for ch in _assigned() if ch not in disagree]
    # 64 characters a text (one text each would spend the time on the reference's overhead);
    # a text that differs is looked at character by character.
    groups = [chars[i : i + 64] for i in range(0, len(chars), 64)]
    texts = [" ".join(f"a{ch}b {ch} {ch}{ch.upper()}" for ch in group) for group in groups]
    endless = 10**6
    expected = _reference(endless).encode_batch(texts)
    different = [
        f"U+{ord(ch):04X} {unicodedata.category(ch)} {unicodedata.name(ch, '')}: "
        f"{wordpiece.encode(one, endless)} != {_reference(endless).encode(one).ids}"
        for group, text, reference in zip(groups, texts, expected, strict=True)
        if wordpiece.encode(text, endless) != reference.ids
        for ch in group
        if wordpiece.encode(one := f"a{ch}b {ch} {ch}{ch.upper()}", endless)
        != _reference(endless).encode(one).ids
    ]
    assert not different, f"{len(different)} characters differ:\n" + "\n".join(different[:30])


_WORD_CHARS = st.sampled_from(list("abcdefghijklmnopqrstuvwxyz eé "))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.text(
        st.one_of(
            _WORD_CHARS,
            # deferred: the tables are compared when the test runs, not when it is collected
            st.deferred(
                lambda: st.characters(categories=_CATEGORIES, exclude_characters=_tables_disagree())
            ),
        ),
        max_size=300,
    )
)
def test_generated_text_of_every_category_gets_the_reference_ids(text: str) -> None:
    assert _wordpiece().encode(text) == _reference().encode(text).ids


@functools.cache
def _wordpiece() -> WordPiece:
    # Hypothesis's tests take no function-scoped fixture.
    return WordPiece(VOCABULARY.read_text(encoding="utf-8").splitlines())


@pytest.mark.parametrize(
    "text",
    [
        "हिंदी भाषा",  # Devanagari: vowel signs are spacing marks (Mc), kept; the anusvara goes
        "मैंने कल एक नई साइकिल ख़रीदी।",
        "ภาษาไทย ไม่ใช่ภาษาที่ง่าย",  # Thai: its vowel marks above are nonspacing (Mn)
        "தமிழ் மொழி",  # Tamil
        "東京は日本の首都です。北京",  # CJK apart, kana not
        "\U0002b81d\U0002b820\U0002b91f\U0002b920x",  # both sides of U+2B920, where CJK starts
        "한국어 문장",  # Hangul: NFD splits the syllables into jamo
        "العربيّة مُشَكَّلة",  # Arabic with its vowel marks (Mn)
        "e\u0301 a\u20dd b\u0488 c\u0903",  # combining acute (Mn), enclosing (Me), spacing (Mc)
        "a\x00b\x07c\x1fd\x7fe\x85f\u200bg\ufeffh\u00adi",  # control and format characters
        "👩\u200d💻 👍🏽 🇫🇷 a\u200cb a\u200db",  # emoji, zero-width (non-)joiners
        "a\ue000b \U000f0000 \U0010fffd",  # private use: dropped
        "a\u0378b \ufdd0 \uffff \U0010ffff",  # unassigned: kept, so [UNK]
        "ΟΔΟΣ ΣΟΦΟΣ. Σ",  # a capital sigma that ends a word
        "İstanbul ǅ ß ﬁne Ⅻ ①",  # case mappings to more than one character, compatibility forms
        "x\u2028y\u2029z\u3000w\u00a0v\u1680u",  # white space of other categories
        "\ufffd replacement \ufffd",
        "a" * 101 + " " + "é" * 100,  # 100 characters a word, counted before and after NFD
    ],
)
def test_scripts_and_marks_get_the_reference_ids(wordpiece: WordPiece, text: str) -> None:
    assert wordpiece.encode(text) == _reference().encode(text).ids


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
