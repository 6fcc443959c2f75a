"""Facts a person states plainly about their own life (issue 13), and whose they are.

Sentences in varied English, none taken from the LoCoMo conversations the rules were measured on.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from pathlib import Path

import pytest

from brainiac import Memory
from brainiac.formats import ltm
from brainiac.language import extract as ex
from brainiac.language import facts, life_facts
from brainiac.store.vault import LONG_TERM_DIR

AT = dt.datetime(2024, 3, 9, 18, 30)


def _said(text: str, speaker: str | None = None) -> list[tuple[str, str]]:
    return [(f.key, f.value) for f in ex.facts(text, AT, "e-0123456789", speaker)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # people and pets by name
        ("We adopted a puppy named Biscuit last spring.", [("biscuit", "my puppy")]),
        ("I have a brother called Tomás.", [("tomás", "my brother")]),
        ("My husband Raj cooked tonight.", [("raj", "my husband")]),
        ("Took my dog, Pepper, to the vet.", [("pepper", "my dog")]),
        ("My niece Ada's recital went well.", [("ada", "my niece")]),
        ("Our two-year-old is a handful, her name is Mira.", [("mira", "my two-year-old")]),
        ("My new kitten is shy, his name is Pip.", [("pip", "my kitten")]),
        ("Yes! Mochi, my guinea pig, sleeps all day.", [("mochi", "my guinea pig")]),
        # how many
        ("We have four grandchildren.", [("grandchildren", "four")]),
        ("I've got 2 sisters and a brother.", [("sisters", "2")]),
        ("We've got two rabbits.", [("rabbits", "two")]),
        ("At home we have a parrot and a tortoise.", [("pets", "a parrot and a tortoise")]),
        # since when (from the time it was said)
        ("I've been knitting for 12 years.", [("knitting", "started in 2012")]),
        (
            "I have been playing chess for about 6 months.",
            [("playing chess", "started in 2023-09")],
        ),
        ("I started climbing two years ago.", [("climbing", "started in 2022")]),
        (
            "I started playing bass guitar about 3 years ago.",
            [("playing bass guitar", "started in 2021")],
        ),
        ("I started volunteering there a year ago.", [("volunteering", "started in 2023")]),
        ("We've been married for 30 years!", []),  # "we": whose marriage is not one person's
        ("I've been married for 30 years!", [("family status", "married in 1994")]),
        # work
        ("I'm a paramedic.", [("role", "paramedic")]),
        ("I am a senior accountant at a bank.", [("role", "senior accountant")]),
        ("I'm a school librarian.", []),  # "school" is no job's title word: precision first
        ("I quit my job as a waiter.", [("former job", "waiter")]),
        ("I left my job at Deloitte in June.", [("former job", "Deloitte")]),
        ("I lost my job at the shipping company.", [("former job", "shipping company")]),
        ("Last month I opened a little bakery.", [("business", "bakery")]),
        ("We run a small bike shop downtown.", []),  # "we": not said whose business alone
        # groups one belongs to, from then on (the line's date says since when)
        ("Last Sunday I joined a local hiking club.", [("hiking club", "member")]),
        ("I just joined the Riverside Choir!", [("riverside choir", "member")]),
        ("I volunteer at the food bank on Sundays.", [("food bank", "my volunteer work")]),
        (
            "I've been volunteering with a local animal shelter.",
            [("local animal shelter", "my volunteer work")],
        ),
        ("I gave a talk at the food bank I volunteer at.", [("food bank", "my volunteer work")]),
        (
            "I started volunteering at a cat shelter twice a week.",
            [("cat shelter", "my volunteer work")],
        ),
        # where from
        ("I'm originally from Lagos.", [("comes from", "Lagos")]),
        ("I grew up in Valparaíso, Chile.", [("grew up in", "Valparaíso, Chile")]),
        ("Visiting my hometown, Cork, next month.", [("hometown", "Cork")]),
        # things that define a life
        ("I play the cello in an orchestra.", [("cello", "my instrument")]),
        ("Evenings are for reading or playing my flute.", [("flute", "my instrument")]),
        ("I'm severely allergic to peanuts.", [("peanuts", "my allergy")]),
        ("I'm a single dad these days.", [("family status", "single dad")]),
        ("Dune is my favourite book.", [("favourite book", "Dune")]),
        # tastes: the thing keyed by itself (one loves several things at once)
        ("I love hiking.", [("hiking", "something I love")]),
        ("Honestly I adore old jazz records.", [("old jazz records", "something I love")]),
        ("I'm a big fan of jazz.", [("jazz", "something I love")]),
        ("I'm a huge fan of Studio Ghibli films!", [("studio ghibli films", "something I love")]),
        ("I really enjoy board games with friends.", [("board games", "something I like")]),
        ("I've always loved astronomy.", [("astronomy", "something I love")]),
        ("I love reading.", [("reading", "something I love")]),
        ("I do love watching old westerns.", [("watching old westerns", "something I love")]),
        ("I love making pottery with clay.", [("making pottery", "something I love")]),
        ("I'm passionate about urban gardening.", [("urban gardening", "my passion")]),
        (
            "I've always been passionate about refugees and their stories.",
            [("refugees", "my passion")],
        ),
        ("I'm really into bouldering these days.", [("bouldering", "something I love")]),
        ("That's why I love teaching kids chess.", [("teaching kids chess", "something I love")]),
        ("I love rainy days, the sound is calming.", [("rainy days", "something I love")]),
        (
            "I love tea, but I also enjoy strong coffee.",
            [("tea", "something I love"), ("strong coffee", "something I like")],
        ),
        ("I've always had a love for old trains!", [("old trains", "something I love")]),
        ("Sharing my passion for baking has been fun.", [("baking", "my passion")]),
        ("Knitting is my passion.", [("knitting", "my passion")]),
        ("Crosswords are my hobby.", [("crosswords", "my hobby")]),
        ("Hiking in the Alps is my favourite!", [("hiking in the alps", "something I love")]),
        ("Old jazz records are my favourite.", [("old jazz records", "something I love")]),
        # habits: a pastime on a schedule, a discipline practised
        ("I run every morning before work.", [("running", "every morning")]),
        ("I usually go hiking every weekend.", [("hiking", "every weekend")]),
        ("I play tennis twice a week.", [("playing tennis", "twice a week")]),
        ("I bake bread every Sunday.", [("baking bread", "every Sunday")]),
        ("I practise yoga.", [("yoga", "my practice")]),
        ("I do tai chi in the park.", [("tai chi", "my practice")]),
        # a pet said without a name
        ("I have a guinea pig.", [("pets", "a guinea pig")]),
        # goals stated firmly, with a step one takes
        ("I want to become a nurse.", [("become a nurse", "my goal")]),
        ("My goal is to open a bakery.", [("open a bakery", "my goal")]),
        ("I'm going to apply for a master's degree.", [("apply for a master's degree", "my goal")]),
        ("I wanna start a podcast so I can talk about films.", [("start a podcast", "my goal")]),
        ("I plan to move to Lisbon next year.", [("move to lisbon", "my goal")]),
        ("My dream is to write a novel.", [("write a novel", "my goal")]),
        # who one is, said of oneself
        ("I told my story as a transgender man at the event.", [("identity", "transgender man")]),
        ("As a gay man, I found the book moving.", [("identity", "gay man")]),
        ("I'm vegan.", [("diet", "vegan")]),
        ("I'm vegetarian since last year.", [("diet", "vegetarian")]),
    ],
)
def test_a_plain_statement_about_ones_life_is_a_fact(
    text: str, expected: list[tuple[str, str]]
) -> None:
    assert _said(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        # descriptions, opinions, feelings: a person would not keep these as facts
        "I love it!",
        "I love the colours in this photo.",
        "I love your garden.",
        "I love how calm the lake is.",
        "I love seeing them grow.",
        "I love watching them play.",
        "I love making sure everyone is fed.",
        "I love spending time outside.",
        "I love all the lights downtown.",
        "I love to help.",
        "I love stories that make me cry.",
        "I love cooking for my family.",
        "I love experimenting in the kitchen.",
        "I'm passionate about making sure kids are fed.",
        "I'm passionate about creating a warm, welcoming space.",
        "I'm a big fan of them.",
        "I'm all about these cookies.",
        "I'd love to see Rome.",
        "I would love a bigger kitchen.",
        "This one is my favourite!",
        "Blue is my favourite.",
        "That is my passion.",
        "I want to be braver.",
        "I want to tell you something.",
        "I want to get it done.",
        "I want to become a better person.",
        "My goal is to start it again.",
        "I'm going to start dinner.",
        "I'm going to open the window.",
        "I want to write an email to Sam.",
        "I'm gonna move to the couch.",
        "I'm in awe of your courage as a trans person.",
        "As a trans woman, she spoke first.",
        "I'm straight to the point.",
        "I read it every day.",
        "I walk there every day.",
        "I play every day.",
        "I practice every day.",
        "I skied every winter as a kid.",
        "She runs every morning.",
        "I don't run every morning.",
        "Do you run every day?",
        "I bought a new car.",  # an event the note keeps; what one owns changes unsaid
        "I'm a huge believer in second chances.",
        "I'm a mix of nervous and thrilled.",
        "I have a few ideas for the garden.",
        "I have a feeling it will rain.",
        "I've been trying for weeks.",
        "I've been thinking about it for two years.",
        "That is my favourite part.",
        "Honestly this is my favourite thing ever.",
        "I'm married to my job, ha.",
        "I joined the fun at the end.",
        "I joined a really great team.",
        "I run a tight ship.",
        "I volunteer at times.",
        "I volunteered for the hard part.",
        "She plays the violin and I play along.",
        # someone else's, or whose is not said
        "She loves hiking.",
        "My sister is passionate about chess.",
        "We love camping.",
        "You're passionate about dance.",
        "I met a man named Oskar at the fair.",
        "She has a cat named Luna.",
        "My friend met a girl, her name is Ines.",
        "They have three kids.",
        "My friend has two dogs.",
        # not so: negated, asked, hedged
        "I don't love hiking.",
        "I never liked jazz.",
        "Do you love hiking?",
        "Maybe I love hiking.",
        "If I loved hiking I'd move.",
        "I don't want to become a nurse.",
        "I don't have a dog named Rex.",
        "Do you have a cat named Tom?",
        "I never played the piano.",
        "Maybe I'm allergic to cats.",
        "I wish I had two kids.",
        "If I were a nurse I'd be tired.",
        "Supposing the launch is Friday, we ship on Monday.",
        "I assume the launch is Friday.",
        "I presume my sister is Lena.",
    ],
)
def test_descriptions_others_and_what_is_not_so_are_no_facts(text: str) -> None:
    assert _said(text) == []


@pytest.mark.parametrize(
    ("text", "speaker", "expected"),
    [
        ("I play the cello.", "user", [("cello", "my instrument")]),
        ("I play the cello.", "Priya", [("cello", "Priya's instrument")]),
        ("I love hiking.", "Priya", [("hiking", "something Priya loves")]),
        ("I enjoy crosswords.", "Priya", [("crosswords", "something Priya likes")]),
        ("I love hiking.", "user", [("hiking", "something I love")]),
        ("I love hiking.", "assistant", []),
        ("I want to become a nurse.", "Priya", [("become a nurse", "Priya's goal")]),
        ("I'm vegan.", "Priya", [("priya's diet", "vegan")]),
        ("I'm passionate about chess.", "Priya", [("chess", "Priya's passion")]),
        ("We got a kitten named Miso.", "Priya", [("miso", "Priya's kitten")]),
        ("Lena is my sister.", "Priya", [("lena", "Priya's sister")]),
        ("I work at the city library.", "Priya", []),  # not a name: "the city library"
        ("I work at Boeing.", "Priya", [("priya works at", "Boeing")]),
        ("My birthday is 2 May.", "Priya", [("priya's birthday", "2 May")]),
        ("My sister moved to Oslo.", "Priya", [("priya's sister's home", "Oslo")]),
        # what the assistant says about itself is no fact about anyone
        ("I play the cello.", "assistant", []),
        # a fact about no speaker is the same whoever says it
        ("The deadline is Friday.", "Priya", [("deadline", "Friday")]),
        ("The deadline is Friday.", "assistant", [("deadline", "Friday")]),
    ],
)
def test_the_key_or_the_value_says_whose_fact_it_is(
    text: str, speaker: str, expected: list[tuple[str, str]]
) -> None:
    assert _said(text, speaker) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Seeing them made me wonder how I could help, so I joined a rowing club.",
            [("rowing club", "member")],
        ),
        (
            "Turns out I'm allergic to shellfish, so who knows if I'll ever try oysters.",
            [("shellfish", "my allergy")],
        ),
        ("If I move, I'll play the harp; I play the cello now.", []),  # a conditional
        ("I might join a choir, but I play the cello.", [("cello", "my instrument")]),
        ("Maybe I play the cello, maybe not.", []),
    ],
)
def test_a_hedge_voids_its_own_clause_not_the_one_after_it(
    text: str, expected: list[tuple[str, str]]
) -> None:
    assert _said(text) == expected


def test_a_second_instrument_or_allergy_is_no_change_of_the_first() -> None:
    said = [f for t in ("I play the piano.", "I play the cello too.") for f in ex.facts(t)]
    section, changes = facts.apply("", said)
    assert [c.kind for c in changes] == ["added", "added"]
    assert facts.current(section).keys() == {"piano", "cello"}


def test_without_the_time_said_a_duration_stays_a_duration() -> None:
    [fact] = ex.facts("I've been painting for 7 years.")
    assert (fact.key, fact.value) == ("painting", "for 7 years")


def test_another_speakers_fact_reaches_the_note_under_their_name(
    memory: Memory, vault: Path
) -> None:
    turns = [
        ("Priya", "Big news: we got a kitten named Miso last week!"),
        ("Tom", "A kitten! What does Miso look like?"),
        ("Priya", "Miso is tiny and grey. I've been drawing her for days."),
        ("Tom", "Cute. I play the cello. Does Miso like music?"),
        ("Priya", "Miso hides when I sing, so maybe not the cello."),
    ]
    for i, (role, text) in enumerate(turns):
        memory.remember(text, role=role, session="kitten", at=AT + dt.timedelta(minutes=i))
    memory.reconfigure(dataclasses.replace(memory.config, short_term_window=0))
    memory.run_job("promotion", now=AT + dt.timedelta(hours=1))
    written = {}
    for path in (vault / LONG_TERM_DIR).glob("*.md"):
        note = ltm.parse(path.read_text(encoding="utf-8"), path.name)
        for line in facts.parse(note.section(ltm.FACTS)):
            written[line.fact.key] = line.fact.value
    assert written.get("miso") == "Priya's kitten"
    assert written.get("cello") == "Tom's instrument"
    assert "my instrument" not in written.values()


@pytest.mark.parametrize(
    ("value", "keyed_by_thing"),
    [
        ("something Melanie loves", True),
        ("something I love", True),
        ("Melanie's cat", True),
        ("my passion", True),
        ("Joanna's volunteer work", True),
        ("Mary Ann's instrument", True),
        ("Friday", False),  # orion deadline: Friday
        ("Door Dash", False),  # gina's former job
        ("trans woman", False),
        ("member", False),
        ("something new", False),
    ],
)
def test_a_value_that_says_whose_the_key_is(value: str, keyed_by_thing: bool) -> None:
    assert life_facts.keyed_by_thing(value) is keyed_by_thing
