"""The event path's parts (evidence/), each through its own module: the plain forms words are
compared in, the values a sentence states, and which events a sentence is about. The whole path
(a response checked against remembered events) is tested in tests/test_check.py."""

from __future__ import annotations

import datetime as dt

import pytest

from brainiac.guard.evidence import slots
from brainiac.guard.evidence.alignment import EventLine, align, event_lines, subject_of
from brainiac.guard.evidence.values import Period, read, relation_words
from brainiac.guard.evidence.words import american, lemma, owners
from brainiac.search.index_documents import Hit

MONDAY = dt.datetime(2023, 5, 8, 10, 0)


def _day(month: int, day: int, year: int = 2023) -> dt.date:
    return dt.date(year, month, day)


@pytest.mark.parametrize(
    ("inflected", "plain"),
    [
        ("went", "go"),
        ("painted", "paint"),
        ("donated", "donate"),
        ("running", "run"),
        ("favourite", "favorite"),
        ("colours", "color"),
        ("behaviour", "behavior"),
        ("practising", "practice"),
        ("organised", "organize"),
        ("centre", "center"),
    ],
)
def test_a_word_and_its_plain_form_have_one_lemma(inflected: str, plain: str) -> None:
    assert lemma(inflected) == lemma(plain)


def test_a_british_spelling_joins_only_its_american_form() -> None:
    # "four", "hour", "flour", "tour": too short before "our" to be "colour"
    assert {american(w) for w in ("four", "hour", "flour", "tour", "your", "rise")} == {
        "four", "hour", "flour", "tour", "your", "rise"
    }  # fmt: skip
    assert lemma("four") != lemma("for") and lemma("favourite") != lemma("four")


def test_whose_each_thing_is() -> None:
    # "my sister" is the speaker's; "Lena's birthday" is Lena's, not the speaker's
    assert owners("my sister Lena's birthday", "user", None) == {
        "sister": "user",
        "birthday": "lena",
    }
    assert owners("her birthday", "user", None) == {}  # whose is not said


@pytest.mark.parametrize(
    ("text", "period"),
    [
        ("I went to the gym yesterday", Period(_day(5, 7), _day(5, 7))),
        ("last Saturday I ran", Period(_day(5, 6), _day(5, 6))),
        ("the week before 9 June 2023", Period(_day(5, 30), _day(6, 9))),
        ("two years ago", Period(_day(1, 1, 2021), _day(12, 31, 2021))),
        ("I just signed up", Period(_day(5, 5), _day(5, 8))),
        ("in 2022 we moved", Period(_day(1, 1, 2022), _day(12, 31, 2022))),
        ("it opens mid-August", Period(_day(8, 1), _day(8, 31), year_known=False)),
        # "by": any time up to then (ten years back)
        ("done by mid-August", Period(_day(8, 3, 2013), _day(8, 31), year_known=False)),
    ],
)
def test_a_date_is_read_as_a_period_against_the_time_it_was_said(text: str, period: Period) -> None:
    assert read(text, MONDAY).periods == (period,)


def test_a_relative_date_needs_the_time_it_was_said() -> None:
    assert read("I went to the gym yesterday", None).periods == ()


def test_a_count_keeps_the_noun_it_counts_and_a_year_is_no_count() -> None:
    assert read("we adopted two cats", MONDAY).numbers == ((2.0, lemma("cats")),)
    assert read("that was 2019.", MONDAY).numbers == ()


@pytest.mark.parametrize(
    ("text", "numbers"),
    [
        ("we won at age fifteen", ((15.0, "age"),)),
        ("when she was twenty.", ((20.0, "age"),)),
        ("he is 10 years old", ((10.0, "age"),)),
        ("my one-year-old son", ()),  # describes the son: not the value
        ("when I was 10 minutes late", ((10.0, lemma("minutes")),)),
        ("I've been to Rome once.", ((1.0, lemma("times")),)),
        ("rejected twice so far", ((2.0, lemma("times")),)),
        ("three times a week", ((3.0, lemma("times")),)),
        ("Once I get home I'll call", ()),  # a clause opener, not a count
        ("I was once a dancer", ()),  # formerly
    ],
)
def test_an_age_and_how_many_times_are_counts_of_their_own_kind(
    text: str, numbers: tuple[tuple[float, str], ...]
) -> None:
    assert read(text, MONDAY).numbers == numbers


def test_a_date_without_a_year_is_compared_by_month_and_day() -> None:
    may_7 = Period(_day(5, 7, 2000), _day(5, 7, 2000), year_known=False)
    assert may_7.gap(Period(_day(5, 9), _day(5, 9))) == dt.timedelta(days=2)
    assert may_7.gap(Period(_day(5, 1), _day(5, 31))) == dt.timedelta(0)


def test_the_relation_is_the_content_words_beside_the_values() -> None:
    text = "I went to a LGBTQ support group yesterday"
    words = relation_words(text, read(text, MONDAY), set())
    assert words == {lemma("went"), "lgbtq", "support", "group"}


def test_whom_a_sentence_is_about() -> None:
    assert subject_of("Melanie went to the museum", {"melanie", "caroline"}) == "melanie"
    assert subject_of("you went there", {"user", "assistant"}) == "user"
    # between named people, whoever "you" is cannot be told
    assert subject_of("you went there", {"melanie", "caroline"}) is None


def _hit(event_id: str, text: str, path: str = "memory/short_term.md") -> Hit:
    return Hit(
        event_id, path, "event", 1.0, "", "", event_id, text, "melanie", "s1", MONDAY, 1.0, 0.0
    )


def test_the_events_among_hits_are_distinct_and_best_first() -> None:
    hits = [
        _hit("e1", "I painted a lake"),
        _hit("e2", "I ran a charity race"),
        _hit("e1", "I painted a lake", "memory/long_term/painting.md"),  # a note quoting it
        _hit("e3", ""),  # nothing to compare
    ]
    assert [e.id for e in event_lines(hits)] == ["e1", "e2"]


def test_an_event_is_aligned_when_it_is_the_subjects_and_holds_the_claims_words() -> None:
    claim = "Melanie ran a charity race last Saturday"
    said = read(claim, MONDAY)
    relation = relation_words(claim, said, {"melanie"})
    weights = dict.fromkeys(relation, 1.0)
    race = EventLine("e2", "memory/short_term.md", "melanie", MONDAY, "I ran a charity race!")
    aligned = align(race, "melanie", relation, weights, said.names, {})
    assert aligned is not None and aligned.core and aligned.score == 1.0
    assert aligned.sentence == "I ran a charity race!"
    # no date of its own: the day before it was said, up to that day, stands in
    assert not aligned.timed and aligned.values.periods == (Period(_day(5, 7), _day(5, 8)),)
    other = EventLine("e3", "memory/short_term.md", "caroline", MONDAY, "I ran a charity race!")
    assert align(other, "melanie", relation, weights, said.names, {}) is None  # not hers


def test_a_speakers_turn_without_i_is_theirs_only_when_it_says_what_they_did() -> None:
    claim = "Melanie started a pottery class last Saturday"
    said = read(claim, MONDAY)
    relation = relation_words(claim, said, {"melanie"})
    weights = dict.fromkeys(relation, 1.0)

    def turn(text: str, context: str = "") -> EventLine:
        return EventLine("e4", "memory/short_term.md", "melanie", MONDAY, text, context=context)

    # the "I" dropped before what she did: hers
    assert align(turn("Just started a pottery class, so fun!"), "melanie", relation, weights,
                 said.names, {}) is not None  # fmt: skip
    # said to the other ("Congrats on ...") or of someone else ("Max is ..."): not hers
    for text in ("Congrats on the pottery class! Started already?", "Max started a pottery "
                 "class, he is so proud."):  # fmt: skip
        assert align(turn(text), "melanie", relation, weights, said.names, {}) is None, text
    # an answer to the other's question is hers
    answer = turn("Started a pottery class.", "How was your week? What did you do?")
    assert align(answer, "melanie", relation, weights, said.names, {}) is not None


@pytest.mark.parametrize(
    ("sentence", "event", "differs"),
    [
        ("She started doing hot yoga.", "Just started doing aerial yoga.", "yoga"),
        ("It is a mix of horror and comedy.", "It's a mix of drama and romance!", "mix"),
        # the turn says the sentence's word somewhere: a paraphrase, not another value
        (
            "They went to the homeless shelter.",
            "Went to the local shelter, the homeless one.",
            None,
        ),
        # a name is compared with a name only, not with a description
        ('She watched "Inception" again.', "I watched a classic movie again.", None),
        # a verb after a word that is no verb opens another clause; a pronoun opens no place
        ("Her car accident was scary.", "A car ran a red light.", None),
        ("Gary is sending someone to look at it.", "Gary is sending someone to fix it.", None),
    ],
)
def test_the_values_beside_a_shared_word(sentence: str, event: str, differs: str | None) -> None:
    anchors = {lemma(w) for w in ("yoga", "mix", "shelter", "watched", "car", "sending")}
    found = slots.differs(sentence, event, event, anchors, set())
    assert (found.anchor if found else None) == (lemma(differs) if differs else None)
