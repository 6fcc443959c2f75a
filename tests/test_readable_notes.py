"""Notes a person would write (issues 13 and 30): titled with what happened, summarised in
their observations, linked to the note of an earlier session they continue, entities only for
names, an imported conversation in one note, facts only where a sentence states one.

Real vaults in temporary directories, the real index and jobs, `now` passed in.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from pathlib import Path

import pytest

from brainiac import Memory
from brainiac.formats import events as ev
from brainiac.formats import ltm
from brainiac.language import extract as ex
from brainiac.language import headline, observe, topics
from helpers import say_turns, sourced_notes

T0 = dt.datetime(2023, 5, 11, 14, 0)

# Two friends talk about a dance studio; greetings, opinions and each other's names all around.
DANCE = [
    ("Jon", "Hey Gina! Wow, great news: I signed the lease for my dance studio yesterday!"),
    ("Gina", "Wow Jon, that's amazing! Where is the dance studio going to be?"),
    ("Jon", "It's downtown, near the old train station. The dance studio has big windows."),
    ("Gina", "Yeah, that sounds awesome. My clothing store opened last week too."),
    ("Jon", "Congrats on the clothing store! I'm teaching a salsa class at the dance studio."),
    ("Gina", "The salsa class sounds fun. My clothing store sells dance shoes now."),
    ("Jon", "Wow, dance shoes for my students would be perfect. Thanks Gina!"),
    ("Gina", "Yeah, come by the clothing store next week and pick some dance shoes."),
    ("Jon", "Will do. The grand opening of the dance studio is on Friday."),
    ("Gina", "Great, I'll be at the grand opening. Wow, I'm so proud of you!"),
    ("Jon", "Thanks, see you Friday!"),
    ("Gina", "See you!"),
]


def _notes(vault: Path) -> list[ltm.LongTermNote]:
    """The long-term notes the test's events went to (not the template's examples)."""
    return [
        note
        for note in sourced_notes(vault)
        if all(e.at and e.at.date() == T0.date() for e in note.sources)
    ]


def _promote_all(memory: Memory, vault: Path) -> list[ltm.LongTermNote]:
    memory.reconfigure(dataclasses.replace(memory.config, short_term_window=0))
    memory.run_job("promotion", now=T0 + dt.timedelta(hours=1))
    return _notes(vault)


def test_a_session_note_is_titled_with_what_happened_in_it(memory: Memory, vault: Path) -> None:
    say_turns(memory, DANCE, "session 5", T0)
    [note] = [n for n in _promote_all(memory, vault) if "session" in n.tags]
    # Not "Session 5 - dance, studio, clothing", nor the words said most ("Dance studio and
    # clothing store"): the news the session turns on, in the third person, and the day.
    assert note.title == "Jon signed the lease for their dance studio (2023-05-11)"
    assert not re.match(r"(?i)session\b", note.title)


def test_a_title_names_the_main_event_not_the_words_said_most(memory: Memory, vault: Path) -> None:
    turns = [
        ("Caroline", "Hey Mel! I went to a LGBTQ support group yesterday and it was so powerful."),
        ("Melanie", "Wow, that's cool! What happened there?"),
        ("Caroline", "The transgender stories at the support group were so inspiring!"),
        ("Melanie", "Love that. My dog chewed my shoes again, the dog is a menace."),
        ("Caroline", "Haha, your dog! Dogs and shoes, a classic. Is the dog okay?"),
        ("Melanie", "The dog is fine, the dog just loves shoes. Dog life!"),
        ("Caroline", "The support group made me feel accepted, I'll go again next week."),
        ("Melanie", "So glad the support group helps. Can't wait to catch up more!"),
    ]
    say_turns(memory, turns, "session 1", T0)
    [note] = [n for n in _promote_all(memory, vault) if "session" in n.tags]
    # "dog" is said most; the session's news is the support group Caroline went to.
    assert note.title == "Caroline went to a LGBTQ support group (2023-05-11)"


def test_a_summary_is_made_of_the_notes_observations(memory: Memory, vault: Path) -> None:
    say_turns(memory, DANCE, "session 5", T0)
    [note] = [n for n in _promote_all(memory, vault) if "session" in n.tags]
    lines = [
        re.sub(r"\s*\^g-[0-9a-f]{6}$", "", line)
        for line in note.section(ltm.SUMMARY).splitlines()
        if line.strip()
    ]
    # ("See you!" is small talk: the archive has it.)
    about = "2023-05-11 about dance studio and clothing store."
    assert lines[0] == f"{len(note.sources)} events, {about}"
    said = lines[1:]
    assert 1 <= len(said) <= 2
    observed = [
        re.sub(r"\s*\([^()]*\)$", "", line[2:])
        for line in (note.section("Observations") or "").splitlines()
        if line.startswith("- ")
    ]
    # Each line is one of the note's observations, whole: what someone did, in the third
    # person, never a pleasantry ("Thanks, see you Friday!") quoted from a turn.
    for line in said:
        assert line in observed, (line, observed)
        assert line.startswith(("Jon", "Gina")), line


def test_words_that_open_sentences_and_speakers_found_no_entity_note(
    memory: Memory, vault: Path
) -> None:
    say_turns(memory, DANCE, "session 5", T0)
    titles = {n.title for n in _promote_all(memory, vault)}
    for word in ("Wow", "Yeah", "Thanks", "Jon", "Gina", "Congrats", "Great"):
        assert word not in titles, titles


def test_what_a_speaker_is_called_for_short_founds_no_note(memory: Memory, vault: Path) -> None:
    turns = [
        ("Nate", "Hey Jo! Great hearing from you! What happened at the tournament?"),
        ("Joanna", "I finished my screenplay draft and sent it to a contest."),
        ("Nate", "Wow, Jo, the screenplay contest sounds really cool!"),
        ("Joanna", "Thanks Nate! Jo the screenwriter, finally."),
    ]
    say_turns(memory, turns, "session 11", T0)
    titles = {n.title for n in _promote_all(memory, vault)}
    assert not any(t.split(" (")[0] in {"Jo", "Nate", "Joanna"} for t in titles), titles


def test_a_name_written_in_lower_case_more_than_capitalised_founds_no_note(
    memory: Memory, vault: Path
) -> None:
    turns = [
        ("a", "I went hiking with Hope and we talked about hope and more hope."),
        ("b", "Did you bring hope along? I always hope for sun, and I hope it stays."),
        ("a", "Then Max joined us, and Max brought his dog along."),
        ("b", "Say hi to Max from me."),
        ("a", "Will do, Max still talks about your barbecue."),
    ]
    say_turns(memory, turns, "day out", T0)
    entities = {n.title for n in _promote_all(memory, vault) if "entity" in n.tags}
    assert entities == {"Max"}


def test_an_imported_conversation_stays_in_one_note(memory: Memory, vault: Path) -> None:
    # The label an import gives a titled conversation: its title and the start of its id.
    turns = [
        ("user", "My cat Miso keeps scratching the sofa."),
        ("assistant", "Give Miso a scratching post near the sofa."),
        ("user", "Miso ignores the post, she likes the sofa."),
        ("assistant", "Try catnip on the post so Miso goes there."),
        ("user", "ok"),
    ]
    say_turns(memory, turns, "Miso the cat 6f1c2a9e", T0)
    notes = _promote_all(memory, vault)
    assert [n.title for n in notes] == ["Miso the cat (2023-05-11)"]
    assert len(notes[0].sources) == len(turns)


def test_key_phrases_grow_into_the_phrase_that_is_said() -> None:
    texts = [t for _, t in DANCE]
    assert topics.key_phrases(texts, 2, {"Jon", "Gina"}) == ["dance studio", "clothing store"]
    # A speaker's name, or what a speaker is called for short, is never the topic.
    said = ["Mel, the pottery class was fun, Mel!", "Mel loves pottery."]
    assert topics.title(said, {"Melanie"}) == "Pottery"
    assert topics.title(["ok", "thanks!"]) == ""


@pytest.mark.parametrize(
    "text",
    [
        "My online clothes store is open!",
        "The room was electric with energy and support!",
        "Glad your son is okay, Melanie.",
        "Dance is my stress fix too.",
        "Iron Man is my top pick.",
        "The best part was the energy in the room.",
        "Making my spot comfortable and inviting for my customers is key.",
        "The game was called Counter-Strike: Global Offensive.",
        "Acting was my first passion.",
        "Dairy-free is a must for me.",
    ],
)
def test_descriptions_and_opinions_are_no_facts(text: str) -> None:
    assert ex.facts(text) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The official opening night is tomorrow.", [("official opening night", "tomorrow")]),
        ("Lena is my sister.", [("lena", "my sister")]),
        ("Anna is my best friend.", [("anna", "my best friend")]),
        ("My son's name is Kyle.", [("son's name", "Kyle")]),
    ],
)
def test_a_sentence_that_states_a_fact_still_gives_it(
    text: str, expected: list[tuple[str, str]]
) -> None:
    assert [(f.key, f.value) for f in ex.facts(text)] == expected


def test_a_fact_said_of_a_relative_day_keeps_its_date() -> None:
    # read weeks later, "tomorrow" would be wrong: the value is the day it named
    said = dt.datetime(2023, 6, 19, 14, 0)
    assert [
        (f.key, f.value) for f in ex.facts("The official opening night is tomorrow.", said)
    ] == [("official opening night", "2023-06-20")]
    # a weekday or a month stays as said: nothing relative in it
    assert [(f.key, f.value) for f in ex.facts("The deadline is Friday.", said)] == [
        ("deadline", "Friday")
    ]


def test_two_sessions_about_one_thing_on_one_day_keep_two_titles(
    memory: Memory, vault: Path
) -> None:
    say_turns(memory, DANCE[:6], "chat 1", T0)
    say_turns(memory, DANCE[:6], "chat 2", T0)
    titles = sorted(n.title for n in _promote_all(memory, vault))
    assert titles == [
        "Jon signed the lease for their dance studio (2023-05-11)",
        "Jon signed the lease for their dance studio (chat 2, 2023-05-11)",
    ]


@pytest.mark.parametrize(
    ("texts", "expected"),
    [
        # "makes" is said most, but as a verb ("it makes", "that makes"): the bowl is the topic
        (
            [
                "It makes me so happy, this bowl came out great.",
                "That makes sense. This makes my week!",
                "The bowl has a blue glaze and it makes the kitchen brighter.",
            ],
            "Bowl",
        ),
        # "sitting" ends a phrase after "a" only as what the dog does
        (
            [
                "Here's my dog at the lake. [image: a photo of a dog sitting in the grass]",
                "He loves the lake. [image: a photo of a dog sitting on a dock]",
                "What a cute dog!",
            ],
            "Dog and lake",
        ),
        # "a horse painted on a wall": what was done to the horse; "my horse painting" is a thing
        (
            [
                "Here's my horse painting. [image: a photo of a horse painted on a wooden wall]",
                "I love the horse painting, the colours are lovely.",
                "Thanks! I painted it last week.",
            ],
            "Horse painting",
        ),
        # "a unique piece": "unique" describes; the hoodie is the thing
        (
            [
                "I made some unique pieces for my store, like this hoodie.",
                "Is it a unique piece? The hoodie looks great.",
                "Thanks! The hoodie is from my own collection.",
            ],
            "Hoodie",
        ),
    ],
)
def test_a_title_names_a_thing_not_a_verb_or_an_adjective(texts: list[str], expected: str) -> None:
    assert topics.title(texts) == expected


def test_an_act_in_a_clause_about_a_thing_is_not_the_title() -> None:
    """ "This book I read last year reminds me ..." says what the book does: "I read" qualifies
    the book and is no news; "This morning I went ..." opens with a time and is."""
    said = [
        (
            "Melanie",
            "So glad you got the support! This book I read last year reminds me to always "
            "pursue my dreams, just like you are doing!",
        ),
        ("Caroline", "Thanks! Books guide me and help me discover who I am."),
        ("Melanie", "This morning I went running by the lake with my kids."),
    ]
    events = [
        ev.Event(
            id=f"e-{i:010x}",
            at=T0 + dt.timedelta(minutes=i),
            role=role,
            text=text,
            session="session 7",
        )
        for i, (role, text) in enumerate(said)
    ]
    observations = [o for e in events for o in observe.observations(e)]
    assert headline.title_of(events, observations) == (
        "Melanie went running by the lake with their kids"
    )
