"""Notes by topic (issue 30): a session's talk stays in one note, a later session about the
same thing links the earlier topic note, a name said in two sessions
founds its own note once it has three events, and a person's edits and a second run change
nothing they should not.

Real vaults in temporary directories, the real index and jobs, `now` passed in.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from collections import Counter
from pathlib import Path

import pytest

from brainiac import Memory
from brainiac.formats import events as ev
from brainiac.formats import ltm, stm
from brainiac.lifecycle.jobs.plan import make_plan
from brainiac.store.vault import LONG_TERM_DIR, SHORT_TERM
from helpers import say_turns, sourced_notes

T0 = dt.datetime(2023, 5, 11, 14, 0)

STUDIO_SEARCH = [
    ("Jon", "I started hunting for a spot for my dance studio last week, downtown maybe."),
    ("Gina", "Nice! What do you need in a dance studio space?"),
    ("Jon", "Good flooring for the dancers, Marley floors, and big mirrors on one wall."),
    ("Gina", "Marley floors are perfect for dancers. Good luck with the search!"),
]
ROME = [
    ("Gina", "I just got back from Rome, I ate pasta and gelato every single day."),
    ("Jon", "Rome! Did you see the Colosseum?"),
    ("Gina", "Yes, the Colosseum at night was stunning, and the Vatican museums too."),
    ("Jon", "Italy sounds like a dream trip."),
]
STUDIO_OPENING = [
    ("Jon", "I opened my dance studio last week, the first class had twelve dancers!"),
    ("Gina", "Congrats! How did the dancers like the studio?"),
    ("Jon", "They loved the sprung floor and the mirrors. I teach contemporary dance there now."),
    ("Gina", "So proud of you, the studio sounds amazing."),
]

# One session, two topics: Jon's new puppy, then Gina's marathon. Each has a question and its
# answer, and a "Congrats!" said to the news before it.
PUPPY_THEN_MARATHON = [
    ("Jon", "I adopted a puppy from the shelter yesterday, a little beagle with floppy ears."),
    ("Gina", "Aww, a beagle puppy! What did you name the puppy?"),
    ("Jon", "I named the puppy Biscuit, because of his brown and white fur."),
    ("Gina", "Biscuit is the perfect puppy name. Does the beagle sleep in your bed?"),
    ("Jon", "The puppy sleeps in a crate by my bed, the shelter said a crate helps a beagle."),
    ("Gina", "Smart, a crate makes a puppy feel safe at night."),
    ("Gina", "I ran my first marathon in Chicago on Sunday, I finished in four hours!"),
    ("Jon", "Congrats!"),
    ("Gina", "I trained for the marathon for six months, running every morning before work."),
    ("Jon", "How did your legs feel after the marathon?"),
    ("Gina", "My legs were sore for three days after the race, but the finish line felt great."),
    ("Jon", "Running a marathon in Chicago, what an achievement for a first race."),
]


def _run(memory: Memory, now: dt.datetime) -> None:
    for report in memory.run_job("all", now=now):
        assert report.ok, report.summary


def _notes(vault: Path) -> list[ltm.LongTermNote]:
    """The long-term notes holding the test's events (not the template's examples)."""
    return [note for note in sourced_notes(vault) if "example" not in note.tags]


def _home(notes: list[ltm.LongTermNote], words: str) -> str:
    """The title of the one note holding the event that says `words`."""
    [title] = [n.title for n in notes for e in n.sources if words in e.text]
    return title


def _all_ids(vault: Path) -> list[str]:
    """The id of every event line the test said, wherever it is in the vault's notes, Event Log
    and archive (with repeats; not the template's examples, said in no numbered session)."""
    lines = [
        line
        for path in sorted((vault / "memory").rglob("*.md"))
        for line in path.read_text(encoding="utf-8").splitlines()
    ]
    return [m.group(1) for line in lines if (m := _EVENT_LINE.search(line))]


_EVENT_LINE = re.compile(r"\(session \d+\): .* \^(e-[0-9a-f]{10})$")


@pytest.mark.parametrize("meaning", [True, False], ids=["by-meaning", "by-words"])
def test_a_topic_that_comes_back_in_a_later_session_links_its_note(
    vault: Path, meaning: bool
) -> None:
    with Memory(vault, refresh_interval_s=0, meaning=meaning) as memory:
        memory.reconfigure(dataclasses.replace(memory.config, short_term_window=0))
        # As in the daemon, whose embedder has the model loaded: the jobs compare by meaning.
        assert (memory.semantic is not None) == meaning
        for day, (turns, session) in enumerate(
            [(STUDIO_SEARCH, "session 1"), (ROME, "session 2"), (STUDIO_OPENING, "session 3")]
        ):
            start = T0 + dt.timedelta(days=10 * day)
            say_turns(memory, turns, session, start)
            _run(memory, start + dt.timedelta(hours=1))
    notes = _notes(vault)
    # The studio's opening, weeks and a trip to Rome later, has its own note (a question about
    # it reads that session's turns together), which links the note of the search for its spot;
    # the trip's note links neither.
    studio, opening = _home(notes, "hunting for a spot"), _home(notes, "I opened my dance studio")
    rome = _home(notes, "back from Rome")
    assert len({studio, opening, rome}) == 3
    [note] = [n for n in notes if n.title == opening]
    assert any(studio in line for line in note.links)
    [trip] = [n for n in notes if n.title == rome]
    assert not any(studio in line or opening in line for line in trip.links)
    # It links that one and no other session's note, the trip none before it; any other link
    # leads to the note of a name that took some of the session's events.
    linked = [x for x in note.links if not x.startswith("#")]
    parsed = [ltm.parse((vault / LONG_TERM_DIR / f"{x}.md").read_text(), x) for x in linked]
    assert [n.title for n in parsed if "session" in n.tags] == [studio], note.links
    for other in (n for n in parsed if "session" not in n.tags):
        assert any(e.session == "session 3" for e in other.sources), other.title
    assert not [x for x in trip.links if not x.startswith("#")], trip.links
    assert sorted(_all_ids(vault)) == sorted(set(_all_ids(vault)))  # none lost, none doubled
    assert len(_all_ids(vault)) == 12


def test_a_session_about_two_things_stays_one_note(memory: Memory, vault: Path) -> None:
    memory.reconfigure(dataclasses.replace(memory.config, short_term_window=0))
    say_turns(memory, PUPPY_THEN_MARATHON, "session 4", T0)
    _run(memory, T0 + dt.timedelta(hours=1))
    notes = _notes(vault)
    # A question reads one session's turns together: the puppy and the marathon, each
    # question with its answer and the "Congrats!" with its news, stay in the session's note.
    home = _home(notes, "adopted a puppy")
    for said in ("named the puppy", "first marathon", "Congrats!", "legs were sore"):
        assert _home(notes, said) == home


BUDDY_1 = [
    ("Jon", "My neighbour's dog Buddy got out again this morning, Oscar saw him run."),
    ("Gina", "Oh no, is he okay?"),
    ("Jon", "Yes, I found Buddy by the river chasing ducks, muddy but happy."),
    ("Gina", "Ha, a muddy dog by the river. Glad he is safe."),
]
BUDDY_2 = [
    ("Gina", "Oscar from my class says hi. How is that runaway dog doing?"),
    ("Jon", "Buddy is learning to stay now, my neighbour hired a trainer."),
    ("Gina", "A trainer is a good idea for a dog that runs off."),
    ("Jon", "The trainer says Buddy is a fast learner, he sits on command already."),
]


def test_a_name_said_in_two_sessions_founds_its_note_with_three_events(
    memory: Memory, vault: Path
) -> None:
    memory.reconfigure(dataclasses.replace(memory.config, short_term_window=0))
    say_turns(memory, BUDDY_1 + STUDIO_SEARCH, "session 1", T0)
    _run(memory, T0 + dt.timedelta(hours=1))
    # Said in two events of one session: Buddy stays with what was said around him.
    assert "Buddy" not in [n.title for n in _notes(vault)]
    later = T0 + dt.timedelta(days=3)
    say_turns(memory, BUDDY_2, "session 2", later)
    _run(memory, later + dt.timedelta(hours=1))
    notes = _notes(vault)
    # Said again in a later session: his note, with the events of both (and their exchanges).
    [buddy] = [n for n in notes if n.title == "Buddy"]
    assert "entity" in buddy.tags
    said = [e.text for e in buddy.sources]
    assert any("found Buddy by the river" in t for t in said)
    assert any("Buddy is learning to stay" in t for t in said)
    assert len(buddy.sources) >= 3
    assert sorted(_all_ids(vault)) == sorted(set(_all_ids(vault)))  # moved, not copied
    assert len(_all_ids(vault)) == 12
    # Oscar, said once in each session, is no one to write a note about.
    assert "Oscar" not in [n.title for n in notes]
    # The note of the first session keeps the rest of its talk, and Buddy's events left it.
    [first] = [n for n in notes if n.title == _home(notes, "hunting for a spot")]
    assert "Buddy" not in " ".join(e.text for e in first.sources)
    assert len(first.sources) == len(STUDIO_SEARCH)


def test_an_event_both_in_the_event_log_and_in_a_note_is_placed_once(
    memory: Memory, vault: Path
) -> None:
    """A save from an older copy can bring an event back into its note after the journal put
    it back in the Event Log (between promotion's survey and its plan). The name founded then
    takes it from the note and from the Event Log both: it is written once."""
    memory.reconfigure(dataclasses.replace(memory.config, short_term_window=0))
    say_turns(memory, BUDDY_1 + STUDIO_SEARCH, "session 1", T0)
    _run(memory, T0 + dt.timedelta(hours=1))
    [back] = [e for n in _notes(vault) for e in n.sources if "found Buddy by the river" in e.text]
    later = T0 + dt.timedelta(days=3)
    say_turns(memory, BUDDY_2, "session 2", later)
    logged = stm.parse((vault / SHORT_TERM).read_text(encoding="utf-8")).events
    leaving = [back, *logged]
    memory.names.refresh(memory.vault, memory.config.private_folders)
    plan = make_plan(leaving, memory.names, leaving, later + dt.timedelta(hours=1), memory)
    assert back.id in {i for ids in plan.take.values() for i in ids}
    written = [
        ev.parse_text(line)[0].id
        for lines in [*(t.events for t in plan.targets), *plan.archive.values()]
        for line in lines
    ]
    assert sorted(written) == sorted(set(written))
    assert {back.id} | {e.id for e in logged} <= set(written)


def test_an_older_copy_of_a_session_note_a_names_note_took_from_gives_its_events_back(
    memory: Memory, vault: Path
) -> None:
    """Buddy, said in two sessions, founds his note, which takes the first session's events
    about him out of its note (`Plan.take`). A person's editor held that session note from
    before and saves it, with a line of their own: the events are in both notes. The next
    promotion takes them out of the session note again; the person's line stays. Left there,
    they would be in both notes for good (benchmarks/concurrent_edits.py: events doubled)."""
    memory.reconfigure(dataclasses.replace(memory.config, short_term_window=0))
    say_turns(memory, BUDDY_1 + STUDIO_SEARCH, "session 1", T0)
    _run(memory, T0 + dt.timedelta(hours=1))
    [session] = [p for p in (vault / LONG_TERM_DIR).glob("*.md") if "river" in p.name]
    older_copy = session.read_text(encoding="utf-8")  # the editor's buffer
    later = T0 + dt.timedelta(days=3)
    say_turns(memory, BUDDY_2, "session 2", later)
    _run(memory, later + dt.timedelta(hours=1))
    buddy = vault / LONG_TERM_DIR / "Buddy.md"
    taken = [e.id for e in ltm.parse(buddy.read_text(encoding="utf-8"), buddy.name).sources]
    taken = [i for i in taken if i in older_copy]
    assert taken and not any(i in session.read_text(encoding="utf-8") for i in taken)
    session.write_text(older_copy + "\nThe river walk was my idea.\n", encoding="utf-8")

    [report] = memory.run_job("promotion", now=later + dt.timedelta(hours=2))

    assert f"took {len(taken)} Sources line(s) an older copy brought back" in report.summary

    text = session.read_text(encoding="utf-8")
    assert not any(i in text for i in taken) and "The river walk was my idea." in text
    assert all(i in buddy.read_text(encoding="utf-8") for i in taken)
    held = Counter(e.id for n in _notes(vault) for e in n.sources)
    assert [i for i, n in held.items() if n > 1] == []


BUDDY_ADOPTED = [
    ("Jon", "Guess what, I adopted Buddy from my neighbour yesterday, he is my dog now!"),
    ("Gina", "Congrats! How is Buddy settling in?"),
    ("Jon", "Buddy sleeps on my couch all day and goes crazy for the park."),
    ("Gina", "I baked cookies for my class today, they loved them."),
    ("Jon", "Yum, home-made cookies for a class sound great."),
]

BUDDY_WINS = [
    ("Jon", "I won first prize with Buddy at the county dog show yesterday!"),
    ("Gina", "No way, congrats to Buddy!"),
    ("Gina", "I painted my kitchen blue this weekend, it looks so fresh."),
    ("Jon", "Blue kitchens are lovely, send me a picture of it."),
]


def test_a_sessions_title_names_its_news_where_a_names_note_took_it(
    memory: Memory, vault: Path
) -> None:
    memory.reconfigure(dataclasses.replace(memory.config, short_term_window=0))
    say_turns(memory, BUDDY_1 + STUDIO_SEARCH, "session 1", T0)
    _run(memory, T0 + dt.timedelta(hours=1))
    later = T0 + dt.timedelta(days=3)
    say_turns(memory, BUDDY_ADOPTED, "session 2", later)
    _run(memory, later + dt.timedelta(hours=1))
    notes = _notes(vault)
    # The adoption is Buddy's, and his note holds it ...
    assert _home(notes, "I adopted Buddy") == "Buddy"
    # ... but the session's news is still what its note is called (not the cookies said
    # after it), and that note leads to where the news is.
    _assert_titled_and_linked(notes, "home-made cookies", "Jon adopted Buddy", "Buddy")
    # Once his note stands, it claims by name what a later session says of him, that
    # session's news among it; the session's note is still called by it.
    last = later + dt.timedelta(days=4)
    say_turns(memory, BUDDY_WINS, "session 3", last)
    _run(memory, last + dt.timedelta(hours=1))
    notes = _notes(vault)
    assert _home(notes, "county dog show") == "Buddy"
    _assert_titled_and_linked(
        notes, "painted my kitchen", "Jon won first prize with Buddy", "Buddy"
    )


def _assert_titled_and_linked(
    notes: list[ltm.LongTermNote], holding: str, title: str, linked: str
) -> None:
    """The note holding the event that says `holding` is titled `title...` and links `linked`."""
    [session] = [n for n in notes if n.title == _home(notes, holding)]
    assert session.title.startswith(title), session.title
    assert any(linked in line for line in session.links), session.links


ANNAS_1 = [
    ("Jon", "Anna Kim from the studio board approved my lease for the dance studio."),
    ("Gina", "That is great news about the lease!"),
    ("Jon", "Anna Kim also wants a salsa class on Fridays at the dance studio."),
    ("Gina", "Ha, my neighbour Anna always says she would take a salsa class."),
]
ANNAS_2 = [
    ("Jon", "Anna Kim signed the last paper for the dance studio today."),
    ("Gina", "Finally! My neighbour Anna baked you a cake to celebrate, by the way."),
    ("Jon", "Tell Anna thanks, the dancers will love a cake."),
    ("Gina", "I will, she is so happy for you."),
]


def test_a_shared_first_name_never_joins_two_people(memory: Memory, vault: Path) -> None:
    memory.reconfigure(dataclasses.replace(memory.config, short_term_window=0))
    say_turns(memory, ANNAS_1 + STUDIO_SEARCH, "session 1", T0)
    _run(memory, T0 + dt.timedelta(hours=1))
    later = T0 + dt.timedelta(days=3)
    say_turns(memory, ANNAS_2, "session 2", later)
    _run(memory, later + dt.timedelta(hours=1))
    notes = _notes(vault)
    # Anna Kim, said in both sessions, gets her note; Gina's neighbour Anna is someone else,
    # and neither she nor the template's Anna Berg receives a word about the board member.
    [kim] = [n for n in notes if n.title == "Anna Kim"]
    assert len(kim.sources) >= 3
    assert all("neighbour" not in e.text and "Tell Anna" not in e.text for e in kim.sources)
    for anna in [n for n in notes if n.title == "Anna"]:  # the neighbour, if she has a note
        assert not [e for e in anna.sources if "Kim" in e.text]
    berg = ltm.parse((vault / LONG_TERM_DIR / "anna-berg.md").read_text(), "anna-berg.md")
    assert not [e for e in berg.sources if e.session in ("session 1", "session 2")]


def test_a_note_a_person_edited_keeps_their_words_and_its_events(
    memory: Memory, vault: Path
) -> None:
    memory.reconfigure(dataclasses.replace(memory.config, short_term_window=0))
    say_turns(memory, BUDDY_1 + STUDIO_SEARCH, "session 1", T0)
    _run(memory, T0 + dt.timedelta(hours=1))
    [path] = [p for p in (vault / LONG_TERM_DIR).glob("*.md") if "found Buddy" in p.read_text()]
    mine = "My own words about the studio hunt, kept as I wrote them."
    edited = path.read_text().replace("## Summary\n", f"## Summary\n{mine}\n", 1)
    path.write_text(edited)
    for day, (turns, session) in enumerate([(BUDDY_2, "session 2"), (STUDIO_OPENING, "session 3")]):
        start = T0 + dt.timedelta(days=3 + 10 * day)
        say_turns(memory, turns, session, start)
        _run(memory, start + dt.timedelta(hours=1))
    text = path.read_text()
    assert f"## Summary\n{mine}\n" in text
    # Its events stay where the person sees them: none is taken into a "Buddy" note ...
    assert "found Buddy by the river" in text
    assert "Buddy" not in [n.title for n in _notes(vault)]
    # ... and the studio's opening has a note of its own.
    assert "I opened my dance studio" not in text
    assert sorted(_all_ids(vault)) == sorted(set(_all_ids(vault)))


def _files(vault: Path) -> dict[str, bytes]:
    return {
        p.relative_to(vault).as_posix(): p.read_bytes()
        for p in sorted(vault.rglob("*.md"))
        if ".brainiac" not in p.parts
    }


def test_a_second_run_changes_nothing(memory: Memory, vault: Path) -> None:
    memory.reconfigure(dataclasses.replace(memory.config, short_term_window=0))
    say_turns(memory, BUDDY_1 + STUDIO_SEARCH, "session 1", T0)
    _run(memory, T0 + dt.timedelta(hours=1))
    later = T0 + dt.timedelta(days=3)
    say_turns(memory, BUDDY_2, "session 2", later)
    _run(memory, later + dt.timedelta(hours=1))
    assert "Buddy" in [n.title for n in _notes(vault)]
    before = _files(vault)
    _run(memory, later + dt.timedelta(hours=1))
    after = _files(vault)
    assert {k for k in after if after[k] != before.get(k)} == set()
