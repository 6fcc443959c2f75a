"""A prompt's month finds what was said in that month (when.py, and the index's `when` field)."""

from __future__ import annotations

import datetime as dt

from brainiac import Memory
from brainiac.language import when

T = dt.datetime(2022, 7, 1, 10, 0)


def test_an_event_is_indexed_under_its_month_and_the_months_it_points_to() -> None:
    assert when.event_terms(T, "A quiet day.") == "july 2022"
    # "yesterday" on the 1st and "last month" are June; "last year" is 2021.
    assert when.event_terms(T, "I saw it yesterday.") == "june 2022 july"
    assert when.event_terms(T, "We moved last year.") == "july 2021 2022"
    assert when.event_terms(T, "It started three weeks ago.") == "june 2022 july"
    assert when.event_terms(None, "last month") == ""
    # "two weekends ago" counts back in weeks, as "last weekend" does
    assert when.event_terms(T, "We went camping two weekends ago.") == "june 2022 july"
    assert when.absolute("We went camping two weekends ago.", T) == (
        "We went camping two weekends before 2022-07-01."
    )


def test_this_weekend_is_named_by_its_saturday_whatever_the_day_it_is_said() -> None:
    # said on Monday 22 August it is the coming weekend, not the one just gone; on the Sunday,
    # the one under way
    for day in (22, 26, 27, 28):
        said = dt.datetime(2022, 8, day, 10, 0)
        assert when.absolute("I'm taking some time off this weekend.", said) == (
            "I'm taking some time off the weekend of 2022-08-27."
        )
    assert when.absolute("We went hiking last weekend.", T) == (
        "We went hiking the weekend before 2022-07-01."
    )


def test_a_prompt_names_months_and_years_not_the_verb_may() -> None:
    assert when.prompt_terms("Which outdoor spot did Joanna visit in May?") == ["may"]
    assert when.prompt_terms("What movie did she watch on 1 May, 2022?") == ["may", "2022"]
    assert when.prompt_terms("Where did he travel in the beginning of November 2022?") == [
        "november",
        "2022",
    ]
    assert when.prompt_terms("May I ask what you may have meant?") == []
    assert when.prompt_terms("What is the plan?") == []


def test_a_question_about_a_month_finds_what_was_said_then(memory: Memory) -> None:
    """The answer shares no word with the question but the speaker's name: the month it was said
    in makes it outrank the same speaker's messages from other months."""
    start = dt.datetime(2022, 5, 1, 9, 0)
    for month in range(12):
        at = start + dt.timedelta(days=30 * month)
        memory.remember(f"Joanna here, a note number {month}.", role="nate", at=at)
        memory.remember(f"Errands and chores, round {month}.", role="joanna", at=at)
    july = dt.datetime(2022, 7, 15, 9, 0)
    trip = memory.remember("I went to Woodhaven, a small town.", role="joanna", at=july)
    memory.refresh(force=True)
    hits = memory.indexer.index.search("Where did Joanna travel to in July 2022?", limit=3)
    # The three said in July (the trip, and the 30th's two) lead.
    assert trip.id in {h.event_id for h in hits}
    assert {h.at.month for h in hits if h.at} == {7}
    # Without the month the same question does not single it out.
    plain = memory.indexer.index.search("Where did Joanna travel to?", limit=3)
    assert trip.id not in {h.event_id for h in plain}
