from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brainiac.language import extract as ex
from brainiac.language import mentions
from brainiac.language.facts import Fact

T = dt.datetime(2026, 11, 18, 16, 40)


def pairs(text: str) -> list[tuple[str, str]]:
    return [(f.key, f.value) for f in ex.facts(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Anna agreed to move the Atlas deadline to Monday the 30th.",
            [("atlas deadline", "Monday the 30th")],
        ),
        ("The deadline is Friday.", [("deadline", "Friday")]),
        ("The deadline is now Friday.", [("deadline", "Friday")]),
        ("My sister's name is Lena.", [("sister's name", "Lena")]),
        ("Anna's birthday is on 12 May.", [("anna's birthday", "12 May")]),
        ("I moved to Berlin last year.", [("home", "Berlin")]),
        ("I live in New York with my partner.", [("home", "New York")]),
        ("We're living in the Netherlands now.", [("home", "the Netherlands")]),
        ("I'm working at Acme as a designer.", [("works at", "Acme"), ("role", "designer")]),
        ("I work for the United Nations.", [("works at", "the United Nations")]),
        ("My favorite color is blue.", [("favourite color", "blue")]),
        ("My favourite band is Radiohead, obviously.", [("favourite band", "Radiohead")]),
        ("I'm 34 years old.", [("age", "34")]),
        ("I turned 40 yesterday.", [("age", "40")]),
        ("The meeting was moved to 3pm.", [("meeting", "3pm")]),
        ("The Atlas deadline has been pushed back to Monday.", [("atlas deadline", "Monday")]),
        ("The deadline changed from Friday to Monday.", [("deadline", "Monday")]),
        ("We moved the standup to 10:30.", [("standup", "10:30")]),
        ("The launch was postponed to March, sadly.", [("launch", "March")]),
        ("My sister moved to Paris.", [("sister's home", "Paris")]),
        ("Anna is my manager.", [("anna", "my manager")]),
        ("The next meeting is this Friday.", [("next meeting", "this Friday")]),
        ("Our flight is at 9:45 on Tuesday, 3 March.", [("flight", "9:45 on Tuesday, 3 March")]),
        ("The budget is 40k because of the audit.", [("budget", "40k")]),
        ("My name is Sam and I live in Oslo.", [("name", "Sam"), ("home", "Oslo")]),
        (
            "Oh, the deadline is Friday! Also my dog's name is Rex.",
            [
                ("deadline", "Friday"),
                ("dog's name", "Rex"),
            ],
        ),
    ],
)
def test_facts_found(text: str, expected: list[tuple[str, str]]) -> None:
    assert pairs(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "This is great!",
        "It is what it is.",
        "That was fun",
        "He is going to the park",
        "Is the deadline Friday?",
        "If the deadline is Friday we are late",
        "The deadline is not Friday.",
        "I don't think the deadline is Friday.",
        "Maybe the deadline is Friday.",
        "Hopefully the launch is on Friday.",
        "Hopefully my sister's flight is at noon.",
        "The deadline would be Friday.",
        "I think the budget is 40k.",
        "The weather is nice today.",
        "The food was great.",
        "The movie was really good.",
        "The kids are playing outside.",
        "The thing is, I don't know.",
        "My point is that we should wait.",
        "The problem is the budget.",
        "Your idea is brilliant.",
        "Everything is fine.",
        "Today is Monday.",
        "Life is good.",
        "Monday is fine.",
        "There is a meeting on Friday.",
        "We should move the meeting to Friday.",
        "I want to move the meeting to Friday.",
        "Remind me to move the meeting to Friday.",
        "We moved the couch to the hall.",
        "He moved to the left.",
        "I moved to a new flat.",
        "I don't live in Berlin anymore.",
        "I used to work at Acme.",
        "I'm 5 minutes away.",
        "My phone is charging.",
        "What is your name?",
        "It's Friday!",
        "My bad, the deadline was my fault.",
        "Thanks, that was helpful.",
        "The answer is no.",
        "I wish my name was Bob.",
        "",
    ],
)
def test_no_facts_from(text: str) -> None:
    assert ex.facts(text) == []


def test_facts_carry_time_and_source() -> None:
    [fact] = ex.facts("The deadline is Friday.", at=T, source="e-4e4c6739ca")
    assert fact == Fact("deadline", "Friday", T, "e-4e4c6739ca")


def test_first_value_per_key_wins() -> None:
    assert pairs("The deadline is Friday. The deadline is Monday.") == [("deadline", "Friday")]


def test_goals() -> None:
    text = (
        "I want to run a marathon this year. My goal is to learn Spanish, eventually. "
        "We need to book the venue! I'm planning to visit Lena in Berlin. I'd like to read more."
        " I hope to finish the thesis by June."
    )
    assert ex.goals(text) == [
        "Run a marathon this year",
        "Learn Spanish",
        "Book the venue",
        "Visit Lena in Berlin",
        "Read more",
        "Finish the thesis by June",
    ]
    nothing = (
        "I don't want to go. Do you want to come? I want to say thanks. If I want to win, I train."
        " I want a coffee."
    )
    assert ex.goals(nothing) == []


def test_a_goal_or_task_that_leans_on_what_was_said_before_is_not_kept() -> None:
    # Read alone under Goals or Tasks weeks later, these say nothing (LoCoMo's chats made them).
    said = (
        "I want to help make that happen. I'd like to pass it on to others. I hope to help make "
        "their lives better. I want to try baking that. Don't forget to take breaks when you "
        "need to destress."
    )
    assert ex.goals(said) == [] and ex.tasks(said) == []
    kept = "I want to call mom this evening. I want to start a studio that teaches kids to dance."
    assert ex.goals(kept) == ["Call mom this evening", "Start a studio that teaches kids to dance"]


def test_tasks() -> None:
    text = (
        "Remind me to call the landlord tomorrow. Don't forget to water the plants! "
        "I have to finish the report by Friday. I need to renew my passport, it expires soon.\n"
        "TODO: fix the sink\nCan you remind me to pay rent? Please remind me to buy milk please."
    )
    assert ex.tasks(text) == [
        "Call the landlord tomorrow",
        "Water the plants",
        "Finish the report by Friday",
        "Renew my passport",
        "Fix the sink",
        "Pay rent",
        "Buy milk",
    ]
    assert ex.tasks("Do I have to pay? I need to know. I don't have to go.") == []


def test_questions() -> None:
    text = "What time is the flight? It is at 9. Is it Friday?\nSure! Really?!"
    assert ex.questions(text) == ["What time is the flight?", "Is it Friday?", "Really?!"]


def test_sentences() -> None:
    text = (
        "Dr. Smith said e.g. Friday works. J. R. R. Tolkien wrote it! Pi is 3.14, right?\n"
        "second line without stop\n\n- a bullet. Another one"
    )
    assert ex.sentences(text) == [
        "Dr. Smith said e.g. Friday works.",
        "J. R. R. Tolkien wrote it!",
        "Pi is 3.14, right?",
        "second line without stop",
        "a bullet.",
        "Another one",
    ]
    assert ex.sentences("It’s done.") == ["It's done."]


def test_entities() -> None:
    text = (
        "Hi Anna! Anna agreed to move the Atlas deadline to Monday the 30th. Thanks Tom. "
        "Yesterday Jean-Luc Picard met Anna's Berlin team at the Museum of Modern Art in New York."
        " I met Ludwig van Beethoven in May. Sounds good. Honestly I love [[Anna Berg]]. "
        "Dr. Smith works at Bank of America. The API is down. OK cool."
    )
    assert mentions.entities(text) == [
        "Anna",
        "Atlas",
        "Tom",
        "Jean-Luc Picard",
        "Berlin",
        "Museum of Modern Art",
        "New York",
        "Ludwig van Beethoven",
        "Anna Berg",
        "Smith",
        "Bank of America",
        "API",
    ]
    assert mentions.entities("What a day. Good morning! Friday is fine.") == []


def test_keywords() -> None:
    texts = [
        "The Atlas deadline moved. Yeah, the deadline is really Monday lol.",
        "Anna's deadline for Atlas? Gonna ask Anna.",
        "Migration migration",
    ]
    assert mentions.keywords(texts) == ["deadline", "atlas", "anna", "migration", "moved"]
    assert mentions.keywords(texts, n=2) == ["deadline", "atlas"]
    assert mentions.keywords([]) == []


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_extractors_never_fail(text: str) -> None:
    for fact in ex.facts(text, at=T, source="e-0000000000"):
        assert fact.key and fact.value and "\n" not in fact.value
    ex.goals(text)
    ex.tasks(text)
    ex.questions(text)
    mentions.entities(text)
    mentions.keywords([text])


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # issue 15: the named owner inside the phrase is whose the attribute is
        # (and who Lena is: the speaker's sister, issue 13)
        (
            "My sister Lena's birthday is on 14 March.",
            [("lena's birthday", "14 March"), ("lena", "my sister")],
        ),
        ("Our client Acme's deadline is Friday.", [("acme's deadline", "Friday")]),
        ("My birthday is 2 May.", [("birthday", "2 May")]),
        # "her name": whose is not said, and it is not the speaker's
        ("Her name is Shadow!", []),
        # a repeated change is still the new value
        (
            "The Atlas deadline moved again, to Friday 2026-12-04.",
            [("atlas deadline", "Friday 2026-12-04")],
        ),
    ],
)
def test_whose_fact_and_the_value_after_a_repeated_move(
    text: str, expected: list[tuple[str, str]]
) -> None:
    assert [(f.key, f.value) for f in ex.facts(text)] == expected
