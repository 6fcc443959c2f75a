"""The guard's evidence rules of issue 30, each on a real vault: a note's `## Observations` read
as evidence (through the real CLI), and the decision rules that carry to conversations it never
saw: a name given as the value, a month or a year said as such, the thing a sentence ends on,
whom it was with. docs/check.md says each rule in a sentence."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from brainiac import Memory
from brainiac.formats import observation_lines
from conftest import run_cli

_CAROLINE = """---
title: Caroline
tags: [person]
---
Caroline, a counsellor-to-be, and Melanie, a painter, talk about their weeks.

## Observations
- Caroline went to an LGBTQ support group on 2023-05-07. (2023-05-08, e-3f2a1c9b0d)
- Melanie ran a charity race on 2023-05-20. (2023-05-22, e-0b1c2d3e4f)
"""


def test_an_observation_contradicts_a_response_that_gives_another_date(vault: Path) -> None:
    # The note holds no event, only what was noted: its observation is the evidence.
    note = vault / "memory" / "long_term" / "caroline.md"
    note.write_text(_CAROLINE, encoding="utf-8")
    said = "Caroline went to the LGBTQ support group on 2023-05-14."
    done = run_cli("--vault", str(vault), "check", "--json", said)
    assert done.returncode == 1, (done.stdout, done.stderr)
    (conflict,) = json.loads(done.stdout)["conflicts"]
    assert conflict["file"] == "memory/long_term/caroline.md"
    line = note.read_text(encoding="utf-8").splitlines()[conflict["line"] - 1]
    assert line.startswith("- Caroline went to an LGBTQ support group on 2023-05-07.")
    assert conflict["block"] == "e-3f2a1c9b0d"  # the event the observation was read from
    assert "the observation" in conflict["correction"] and "2023-05-07" in conflict["correction"]
    right = run_cli("--vault", str(vault), "check", "--json", "Caroline went to the LGBTQ "
                    "support group on 7 May 2023.")  # fmt: skip
    assert right.returncode == 0, right.stdout
    assert json.loads(right.stdout)["status"] == "consistent"


def _said(memory: Memory, role: str, text: str, at: dt.datetime) -> None:
    memory.remember(text, role=role, session="s1", at=at)


def test_a_name_given_as_the_value_is_one_even_when_the_memory_knows_it(memory: Memory) -> None:
    # "Samuel" is known (another session's veteran), so it was taken for context; given as
    # the colleague's name, it is a value the turn about the invitation answers with "Rob".
    at = dt.datetime(2023, 2, 25, 21, 0)
    _said(memory, "John", "My colleague Rob invited me to a beginner's yoga class.", at)
    _said(memory, "Maria", "Have fun at the class, John!", at + dt.timedelta(minutes=1))
    _said(
        memory,
        "John",
        "I heard stories from an elderly veteran named Samuel.",
        at + dt.timedelta(days=30),
    )
    now = at + dt.timedelta(days=31)
    wrong = memory.check("Your colleague Samuel invited you to a beginner's yoga class.", now=now)
    (conflict,) = wrong.conflicts
    assert "rob" in conflict.correction.lower()
    right = memory.check("Your colleague Rob invited you to a beginner's yoga class.", now=now)
    assert right.status == "consistent", right.findings


def test_a_year_said_as_such_is_that_year(memory: Memory) -> None:
    # "last year", said in 2023, is 2022: 2021 ends a day before it begins, but a year said as
    # a year is not a few days off. "You and Melanie": either of them may have said it.
    at = dt.datetime(2023, 8, 17, 13, 57)
    _said(memory, "Melanie", "Tell me about the festivals you love, Caroline!", at)
    _said(
        memory,
        "Caroline",
        "We had a blast last year at the Pride fest.",
        at + dt.timedelta(minutes=1),
    )
    now = at + dt.timedelta(days=1)
    wrong = memory.check("You and Melanie had a blast together at the Pride fest in 2021.", now=now)
    assert wrong.status == "conflict", wrong.findings
    right = memory.check("You and Melanie had a blast together at the Pride fest in 2022.", now=now)
    assert right.status == "consistent", right.findings


def test_the_thing_a_sentence_ends_on_must_be_one_the_memory_said(memory: Memory) -> None:
    # The turn agrees on the month; the sentence ends on a thing the memory never said.
    at = dt.datetime(2023, 6, 21, 14, 16)
    _said(memory, "Gina", "I made a limited edition line of hoodies last week - so proud!", at)
    now = at + dt.timedelta(days=1)
    wrong = memory.check("Gina made a limited edition line of sneakers in June 2023.", now=now)
    (conflict,) = wrong.conflicts
    assert "hoodies" in conflict.correction
    right = memory.check("Gina made a limited edition line of hoodies in June 2023.", now=now)
    assert right.status == "consistent", right.findings
    # a verb at the end gives no thing: "... happened" is judged by its date alone
    assert not memory.check("Gina's line launch happened in June 2023.", now=now).conflicts


def test_whom_it_was_with_is_a_value(memory: Memory) -> None:
    # "aunt" is a word the memory knows (another turn); the turn about the dinner says "mom".
    at = dt.datetime(2023, 5, 4, 15, 25)
    _said(memory, "Maria", "My aunt used to help my family out when we were struggling.", at)
    _said(
        memory,
        "Maria",
        "My mom and I made some dinner together last night!",
        at + dt.timedelta(minutes=1),
    )
    now = at + dt.timedelta(days=1)
    wrong = memory.check("On 3 May 2023 Maria made dinner together with her aunt.", now=now)
    (conflict,) = wrong.conflicts
    assert "mom" in conflict.correction
    right = memory.check("On 3 May 2023 Maria made dinner together with her mom.", now=now)
    assert right.status == "consistent", right.findings


def test_the_lines_of_an_observations_section_as_the_guard_reads_them() -> None:
    lines = [
        "- Caroline went to an LGBTQ support group on 2023-05-07. (2023-05-08, e-3f2a1c9b0d)\n",
        "- Melanie painted a lake [[#^e-0b1c2d3e4f]] ^g-1a2b3c\n",
        "- 2023-05-08T13:56:00 **Caroline**: I went yesterday. ^e-aaaaaaaaaa\n",  # an event line
        "  - an indented line is no observation\n",
        "- [ ] a task is no observation\n",
        "- Nate won a tournament. (since 2022-01-21 19:32, e-1111111111)\n",
    ]
    read = observation_lines.parse(lines, offset=10)
    assert [(o.text, o.source, o.line) for o in read] == [
        ("Caroline went to an LGBTQ support group on 2023-05-07.", "e-3f2a1c9b0d", 10),
        ("Melanie painted a lake", "e-0b1c2d3e4f", 11),
        ("Nate won a tournament.", "e-1111111111", 15),
    ]
    assert read[0].said_at == dt.datetime(2023, 5, 8)
    assert read[2].said_at == dt.datetime(2022, 1, 21, 19, 32)


def test_a_name_seen_only_in_an_image_caption_is_not_one_the_memory_knows(memory: Memory) -> None:
    # The caption is a model's guess at a picture: "Captain America" there is not something
    # said, so the name stays unknown, and the turn about the top pick says another.
    at = dt.datetime(2022, 6, 5, 14, 13)
    _said(memory, "Nate", "Iron Man is my top pick. I love his tech and humor.", at)
    _said(
        memory,
        "Joanna",
        "Hey Nate, a top superhero pick for you! [image: a photo of a captain america figure]",
        at + dt.timedelta(minutes=1),
    )
    now = at + dt.timedelta(days=1)
    wrong = memory.check("Nate's top superhero pick is Captain America.", now=now)
    (conflict,) = wrong.conflicts
    assert "Iron Man" in conflict.correction
    right = memory.check("Nate's top superhero pick is Iron Man.", now=now)
    assert right.status == "consistent", right.findings


def test_a_measure_is_a_count_of_its_unit(memory: Memory) -> None:
    # "5K" was no number at all (a letter glued to it); it counts kilometres, as "10K" does.
    at = dt.datetime(2023, 8, 9, 20, 7)
    _said(memory, "John", "I set up a 5K charity run in our neighborhood for veterans.", at)
    now = at + dt.timedelta(days=1)
    wrong = memory.check("John set up a 10K charity run in his neighborhood for veterans.", now=now)
    (conflict,) = wrong.conflicts
    assert "5K" in conflict.correction
    right = memory.check("John set up a 5K charity run in his neighborhood for veterans.", now=now)
    assert right.status == "consistent", right.findings


def test_the_observations_of_a_file_are_its_section_only() -> None:
    text = (
        "---\ntitle: Caroline\n---\n## Facts\n- home: Sweden\n\n## Observations\n"
        "- Caroline painted a lake on 2023-05-07. (2023-05-08, e-3f2a1c9b0d)\n"
        "```\n## not a heading\n```\n"
        "### A sub-heading stays inside\n- Caroline ran a race. (2023-05-09, e-0b1c2d3e4f)\n"
        "## Sources\n- Caroline said something else. (2023-05-10, e-1111111111)\n"
    )
    read = observation_lines.of_text(text)
    assert [o.source for o in read] == ["e-3f2a1c9b0d", "e-0b1c2d3e4f"]
    assert text.splitlines()[read[0].line].startswith("- Caroline painted a lake")
    assert observation_lines.of_text("## Facts\n- home: Sweden\n") == ()


def test_an_observation_is_about_its_owner_only(memory: Memory, vault: Path) -> None:
    # Melanie's race says nothing of Caroline's: the owner an observation names is its speaker.
    (vault / "memory" / "long_term" / "caroline.md").write_text(_CAROLINE, encoding="utf-8")
    memory.refresh(force=True)
    now = dt.datetime(2023, 6, 1)
    assert not memory.check("Caroline ran a charity race on 2023-05-30.", now=now).conflicts
    assert memory.check("Melanie ran a charity race on 2023-05-30.", now=now).conflicts


# --- rules that carry: same owner, same thing, exclusive values ---------------------------------

_MARIA = """---
title: Maria
tags: [person]
---
## Facts
- volunteering: started in 2022 (since 2023-08-03 18:21, e-5b1c0d9e77)

## Sources
- 2023-08-03T18:21:00 **Maria** (volunteering): I started volunteering at the shelter in 2022. \
^e-5b1c0d9e77
"""


def test_the_date_of_a_past_happening_clears_a_fact_about_something_else(
    memory: Memory, vault: Path
) -> None:
    # The fact's key (volunteering) is in the sentence, but its date is when she started; the
    # turn says she met Jean the day before it was said. A happening's date never moves.
    note = vault / "memory" / "long_term" / "maria.md"
    note.write_text(_MARIA.replace("\\\n", ""), encoding="utf-8")
    at = dt.datetime(2023, 2, 25, 10, 0)
    _said(memory, "Maria", "While volunteering yesterday, I met this amazing woman, Jean.", at)
    _said(memory, "John", "That sounds lovely, Maria!", at + dt.timedelta(minutes=1))
    now = dt.datetime(2023, 8, 10)
    right = memory.check("Maria met Jean while volunteering on 24 February 2023.", now=now)
    assert right.status == "consistent" and not right.conflicts, right.conflicts
    # the fact still judges what it is about, and a date the events do not state
    assert memory.check("Maria started volunteering in 2021.", now=now).status == "conflict"
    assert memory.check("Maria met Jean while volunteering on 10 March 2023.", now=now).conflicts


def test_the_owners_other_occasion_with_the_sentences_date_clears_it(memory: Memory) -> None:
    # The turn most about the sentence (hiking, church friends: 4 August) differs; an earlier
    # turn of Maria's, about hiking too, says 14 July. Two occasions, not a wrong date.
    at = dt.datetime(2023, 7, 15, 10, 0)
    _said(memory, "Maria", "Yesterday I went hiking up the ridge.", at)
    _said(memory, "John", "Nice! I went kayaking on the lake.", at + dt.timedelta(minutes=1))
    later = dt.datetime(2023, 8, 5, 10, 0)
    _said(memory, "Maria", "Yesterday I went hiking. My church friends came along too.", later)
    now = dt.datetime(2023, 8, 10)
    said = "Maria went hiking with her church friends on {} 2023."
    assert not memory.check(said.format("14 July"), now=now).conflicts
    (conflict,) = memory.check(said.format("20 July"), now=now).conflicts  # neither occasion
    assert "hiking" in conflict.correction


def test_a_sentence_about_no_one_contradicts_no_one(memory: Memory) -> None:
    # Between named people, a sentence that names none of them, no one's possessive and no
    # personal pronoun is about the world, not about what anyone did.
    at = dt.datetime(2023, 6, 12, 14, 0)
    _said(memory, "Maria", "Last summer my family and I went on a road trip to Oregon.", at)
    _said(memory, "John", "That sounds fun! I stayed home.", at + dt.timedelta(minutes=1))
    now = dt.datetime(2023, 8, 10)
    general = memory.check(
        "The Grand Canyon is a popular destination for family road trips.", now=now
    )
    assert not general.conflicts, general.conflicts
    for said in (
        "Maria's family went on a road trip to the Grand Canyon.",
        "Your family went on a road trip to the Grand Canyon.",
    ):
        assert memory.check(said, now=now).status == "conflict", said


def test_an_age_is_one_kind_of_count_however_it_is_said(memory: Memory) -> None:
    # "at age fifteen" and "when she was twenty" count the same thing; a bare number did not.
    at = dt.datetime(2023, 1, 20, 16, 12)
    said = "My fav memory was when my team won first place at a regionals at age fifteen."
    _said(memory, "Gina", said, at)
    now = at + dt.timedelta(days=1)
    claim = "Gina's team won first place at a regionals when she was {}."
    (conflict,) = memory.check(claim.format("twenty"), now=now).conflicts
    assert "fifteen" in conflict.correction
    assert memory.check(claim.format("fifteen"), now=now).status == "consistent"


def test_a_name_opening_a_sentence_as_someones_favourite_is_the_value(memory: Memory) -> None:
    # The turn says the favourite in the other order ("Spider-Man has always been a favorite of
    # mine"), beside the sentence most about superheroes (the rarer word): that name is the
    # value, so "Batman" given as the favourite is a conflict naming the turn.
    at = dt.datetime(2022, 5, 20, 10, 0)
    _said(memory, "Nate", "My favorite food is pizza, my favorite game is chess.", at)
    _said(memory, "Joanna", "Pizza is a favorite of mine too!", at + dt.timedelta(minutes=1))
    said = (
        "Thanks, Nate! Spider-Man has always been a favorite of mine. I love his struggles. "
        "But I'm kind of a sucker for any superhero, everyone has their own rad story."
    )
    _said(memory, "Joanna", said, at + dt.timedelta(minutes=2))
    now = at + dt.timedelta(days=1)
    (conflict,) = memory.check("Joanna's favorite superhero is Batman.", now=now).conflicts
    assert "any superhero" in conflict.correction  # the turn, by its sentence most about it
    right = memory.check("Joanna's favorite superhero is Spider-Man.", now=now)
    assert right.status == "consistent", right.findings
    # a name opening a sentence that states no preference gives no value ("Max is a good boy")
    _said(memory, "Nate", "Max is a good boy, a superhero fan.", at + dt.timedelta(days=2))
    other = memory.check("Nate's favorite superhero is Thor.", now=at + dt.timedelta(days=3))
    assert other.status == "unverified", other.findings


def test_a_british_spelling_is_the_same_word(memory: Memory) -> None:
    # The conversation says "favorite color", the response "favourite colour": the spelling
    # says nothing of which event is meant, so the sentence is about that turn, whose value is
    # compared.
    at = dt.datetime(2022, 5, 20, 10, 0)
    _said(memory, "Nate", "My favorite color is blue, like the sea.", at)
    _said(memory, "Joanna", "Nice, blue is so calming!", at + dt.timedelta(minutes=1))
    now = at + dt.timedelta(days=1)
    (conflict,) = memory.check("Nate's favourite colour is green.", now=now).conflicts
    assert "blue" in conflict.correction
    right = memory.check("Nate's favourite colour is blue.", now=now)
    assert right.status == "consistent", right.findings


def test_a_colour_is_a_value_of_a_closed_kind(memory: Memory) -> None:
    # "green" is a word the memory knows (another turn); the turn about the hair says "purple".
    at = dt.datetime(2022, 4, 20, 9, 0)
    _said(memory, "Nate", "The park was so green after the rain.", at)
    _said(memory, "Nate", "I dyed my hair purple yesterday, come see!", at + dt.timedelta(1))
    now = at + dt.timedelta(days=2)
    (conflict,) = memory.check("Nate dyed his hair green on 20 April 2022.", now=now).conflicts
    assert "purple" in conflict.correction
    right = memory.check("Nate dyed his hair purple on 20 April 2022.", now=now)
    assert right.status == "consistent", right.findings


def test_a_value_beside_a_word_both_say_is_compared(memory: Memory) -> None:
    # No typed value (no date, count, name): the sentence and the turn share "ensemble" and each
    # gives its own word right before it, so those are the values; a paraphrase that keeps the
    # turn's word, or leaves the place empty, agrees.
    at = dt.datetime(2023, 3, 4, 18, 0)
    _said(memory, "Kai", "Big news: I joined a jazz ensemble downtown, we rehearse weekly!", at)
    _said(
        memory,
        "Lena",
        "That's wonderful, Kai! I'm still learning the cello.",
        at + dt.timedelta(minutes=1),
    )
    _said(
        memory, "Kai", "Our ensemble plays at the library next month.", at + dt.timedelta(minutes=2)
    )
    now = at + dt.timedelta(days=1)
    (conflict,) = memory.check("Kai joined a choral ensemble.", now=now).conflicts
    assert "jazz ensemble" in conflict.correction
    assert not memory.check("Kai joined a jazz ensemble downtown.", now=now).conflicts
    assert not memory.check("Kai joined an ensemble.", now=now).conflicts


def test_the_value_after_a_shared_word_and_what_is_no_value(memory: Memory) -> None:
    # After the shared word, through the same small words ("a mix of"): "horror and comedy"
    # against "sci-fi and romance". A pronoun or a verb's words between ("sending someone to
    # fix") open no thing's place.
    at = dt.datetime(2023, 3, 4, 18, 0)
    _said(memory, "Lena", "My new novel is a mix of sci-fi and romance, finally drafted!", at)
    _said(
        memory,
        "Lena",
        "Gary is sending someone to fix the boiler on Monday.",
        at + dt.timedelta(minutes=2),
    )
    now = at + dt.timedelta(days=1)
    (conflict,) = memory.check("Lena's novel is a mix of horror and comedy.", now=now).conflicts
    assert "sci-fi and romance" in conflict.correction
    assert not memory.check("Lena's novel is a mix of sci-fi and romance.", now=now).conflicts
    said = "Gary is sending someone to look at Lena's boiler on Monday."
    assert not memory.check(said, now=now).conflicts


def test_a_reply_is_about_what_it_was_asked(memory: Memory) -> None:
    # The reply names neither the reading night nor who came: the question before it does, so
    # the reply is the event the sentence is about, and its count is compared.
    at = dt.datetime(2023, 5, 12, 19, 0)
    _said(memory, "Lena", "We finally held the book club's reading night yesterday!", at)
    _said(
        memory,
        "Kai",
        "Amazing! How many people came to the reading night?",
        at + dt.timedelta(minutes=1),
    )
    _said(
        memory,
        "Lena",
        "There were 9 people there, more than ever before!",
        at + dt.timedelta(minutes=2),
    )
    _said(memory, "Kai", "I walked 12 miles on the coast path today.", at + dt.timedelta(minutes=3))
    now = at + dt.timedelta(days=1)
    (conflict,) = memory.check("Twelve people came to Lena's reading night.", now=now).conflicts
    assert "There were 9 people there" in conflict.correction
    right = memory.check("Nine people came to Lena's reading night.", now=now)
    assert right.status == "consistent", right.findings


def test_a_speaker_who_drops_the_i_still_speaks_of_themselves(memory: Memory) -> None:
    # "Just started doing aerial silks": no "I", and no one else the turn speaks of or to, so
    # it is Omar's; a turn opening on someone else ("Zoe is ...") is not.
    at = dt.datetime(2023, 6, 10, 9, 0)
    _said(memory, "Omar", "Been swamped at work. Just started doing aerial silks, so fun!", at)
    _said(memory, "Zoe", "Whoa, Omar, that sounds intense!", at + dt.timedelta(minutes=1))
    _said(
        memory,
        "Omar",
        "Zoe is a great swimmer, she started swimming in May 2022.",
        at + dt.timedelta(minutes=2),
    )
    now = at + dt.timedelta(days=1)
    (conflict,) = memory.check("Omar started doing aerial silks in March 2023.", now=now).conflicts
    assert "Just started doing aerial silks" in conflict.correction
    right = memory.check("Omar started doing aerial silks in June 2023.", now=now)
    assert right.status == "consistent", right.findings
    assert not memory.check("Omar started swimming in March 2023.", now=now).conflicts
