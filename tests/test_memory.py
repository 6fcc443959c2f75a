"""The Python API, end to end on a real vault and index."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from brainiac import Memory
from brainiac.core.errors import VaultError
from brainiac.search.context import RECENT_HEADER
from brainiac.search.retrieval import rank

T = dt.datetime(2026, 11, 1, 9, 0)
HOUR = dt.timedelta(hours=1)


def _ltm_part(text: str) -> str:
    return text.split("## Relevant Long-Term Memory", 1)[1].split("## User Prompt", 1)[0]


def test_old_events_come_back_as_long_term_memory(memory: Memory) -> None:
    memory.remember("My sister Ines lives in Porto and teaches cello.", at=T)
    for i in range(15):
        memory.remember(f"routine status update {i}", at=T + dt.timedelta(hours=i + 1))
    ctx = memory.context("Where does Ines live?", budget=2000, now=T + dt.timedelta(days=1))
    recent = ctx.text.split(RECENT_HEADER, 1)[1].split("## Relevant", 1)[0]
    assert "Ines" not in recent and recent.count("routine status update") == 10
    assert "My sister Ines lives in Porto and teaches cello." in _ltm_part(ctx.text)
    assert any(s.startswith("memory/short_term.md#e-") for s in ctx.sources)


def test_notes_come_with_excerpts_and_are_listed_as_sources(memory: Memory) -> None:
    ctx = memory.context("When is the Atlas deadline?", budget=2000, now=T)
    ltm = _ltm_part(ctx.text)
    assert "### Project Atlas (memory/long_term/project-atlas.md)" in ltm
    assert "- deadline: Monday 2026-11-30" in ltm
    assert "Anna agreed to move the Atlas deadline to Monday the 30th." in ltm
    assert "memory/long_term/project-atlas.md" in ctx.sources


def test_without_a_prompt_the_recent_events_choose_the_memories(memory: Memory) -> None:
    memory.remember("I need to write Anna her Friday update", at=T)
    ctx = memory.context(budget=2000, now=T)
    assert "### Anna Berg" in _ltm_part(ctx.text)
    assert ctx.text.rstrip().endswith("## User Prompt")


def test_remember_is_idempotent_and_keeps_a_persons_edits(memory: Memory, vault: Path) -> None:
    stm_path = vault / "memory/short_term.md"
    e = memory.remember("buy milk", at=T)
    stm_path.write_text(stm_path.read_text().replace("## Goals\n", "## Goals\n- learn Welsh\n"))
    again = memory.remember("buy milk", at=T)
    assert again.id == e.id
    text = stm_path.read_text()
    assert text.count(e.id) == 1 and "- learn Welsh\n" in text
    memory.remember("buy bread", at=T + dt.timedelta(minutes=1))
    assert "- learn Welsh\n" in stm_path.read_text()
    assert "- learn Welsh" in memory.context("x", budget=2000, now=T).text


def test_a_deleted_short_term_document_is_recreated(memory: Memory, vault: Path) -> None:
    (vault / "memory/short_term.md").unlink()
    memory.remember("fresh start", at=T)
    assert [e.text for e in memory.short_term().events] == ["fresh start"]


def test_bad_arguments(memory: Memory, tmp_path: Path) -> None:
    with pytest.raises(VaultError, match="empty"):
        memory.remember("  \n ")
    with pytest.raises(VaultError, match="limit"):
        memory.search("x", limit=0)
    with pytest.raises(VaultError, match="no such vault"):
        Memory(tmp_path / "missing")


def test_reused_ranking_shows_an_edit_without_searching(
    memory: Memory, vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory.remember("How is the Atlas migration going?", at=T)
    assert "### Project Atlas" in memory.context(budget=2000, now=T).text
    atlas = vault / "memory/long_term/project-atlas.md"
    atlas.write_text(
        atlas.read_text().replace("- owner: the user\n", "- owner: the user\n- budget: 40k euro\n")
    )

    def no_search(*args: object, **kwargs: object) -> None:
        raise AssertionError("searched again")

    monkeypatch.setattr(memory.indexer.index, "search", no_search)
    ctx = memory.context(budget=2000, now=T, reuse_ranking=True)
    assert "- budget: 40k euro" in ctx.text


def test_a_question_naming_a_speaker_prefers_what_that_speaker_said(memory: Memory) -> None:
    """Two speakers, on two days; each mentions painting once. Asked about Mira, Mira's own turn
    ranks first although Jonas's turn names her and matches the question's words more often."""
    day1, day2 = T, T + dt.timedelta(days=1)
    memory.remember("I finally started painting again.", role="Mira", session="a", at=day1)
    memory.remember(
        "Mira, painting sounds lovely! Mira, your painting of the harbour, Mira!",
        role="Jonas",
        session="b",
        at=day2,
    )
    for i in range(12):
        memory.remember(f"unrelated chatter {i}", role="Jonas", at=day2 + dt.timedelta(hours=i))
    ctx = memory.context("What is Mira painting?", budget=2000, now=day2 + dt.timedelta(days=1))
    ltm = _ltm_part(ctx.text)
    assert ltm.index("- Mira: I finally started painting again.") < ltm.index(
        "- Jonas: Mira, painting sounds lovely!"
    )


def _chat(memory: Memory, sessions: int = 2, turns: int = 12) -> None:
    for s in range(sessions):
        for i in range(turns):
            text = f"turn {i} of chat {s} about weekend plans and the weather"
            if (s, i) == (0, 3):
                text = "My cousin Teodor keeps bees on a rooftop in Ljubljana."
            at = T + dt.timedelta(days=s, minutes=i)
            memory.remember(text, role="Ana" if i % 2 else "Ben", session=f"chat {s}", at=at)
        memory.run_job("all", now=T + dt.timedelta(days=s, minutes=turns))


def test_a_note_promotion_made_shows_its_events_not_its_generated_summary(
    memory: Memory, vault: Path
) -> None:
    _chat(memory)
    notes = [p for p in (vault / "memory" / "long_term").glob("*.md") if "chat 0" in p.read_text()]
    assert notes, "promotion made a note for the first chat"
    ctx = memory.context("Where does Teodor keep bees?", budget=2000, now=T + dt.timedelta(3))
    ltm = _ltm_part(ctx.text)
    assert "- Ana: My cousin Teodor keeps bees on a rooftop in Ljubljana." in ltm
    # Under the day's heading: its only session shown, so the date alone names it.
    assert "### 2026-11-01\n" in ltm
    # The generated keyword summary ("N events, ... about ...") is not shown; the note's fact
    # about the prompt is (who Teodor is: Ana's "my cousin Teodor", issue 13).
    assert " events, " not in ltm
    assert "- teodor: Ana's cousin" in ltm
    # A fact is about a prompt by its key or value, not by the name of whose it is: a question
    # about Ana that shares no other word with it leaves the budget to the events.
    about_ana = _ltm_part(
        memory.context(
            "What does Ana say about the weather?", budget=2000, now=T + dt.timedelta(3)
        ).text
    )
    assert "Ana's cousin" not in about_ana

    # A person writes into the note's summary: from then on it is shown as a note excerpt.
    note = next(p for p in notes if "Teodor" in p.read_text())
    text = note.read_text()
    person = "Teodor is Ana's beekeeping cousin."
    note.write_text(text.replace("## Summary\n", f"## Summary\n{person}\n"))
    ctx = memory.context("Where does Teodor keep bees?", budget=2000, now=T + dt.timedelta(3))
    assert person in _ltm_part(ctx.text)


def test_generated_short_term_lines_are_shown_beside_a_prompt_only_when_about_it(
    memory: Memory, vault: Path
) -> None:
    from brainiac.formats import marks

    stm_path = vault / "memory" / "short_term.md"
    text = stm_path.read_text()
    generated = marks.mark("- from 2026-11-20 09:00 to 2026-11-20 10:30; topics: weather, weekend")
    person = "- I am moving flats in March"
    stm_path.write_text(text.replace("## Summary\n", f"## Summary\n{generated}\n{person}\n", 1))
    about_weather = memory.context("What was the weather?", budget=2000, now=T).text
    about_bees = memory.context("Who keeps bees?", budget=2000, now=T).text
    # A year is no topic: every dated line of the digest would share it.
    in_2026 = memory.context("Who kept bees in 2026?", budget=2000, now=T).text
    no_prompt = memory.context(budget=2000, now=T).text
    assert "topics: weather, weekend" in about_weather
    assert "topics: weather, weekend" not in about_bees
    assert "topics: weather, weekend" not in in_2026
    assert "topics: weather, weekend" in no_prompt
    assert all(person in t for t in (about_weather, about_bees, no_prompt))


def test_a_message_in_the_session_the_question_is_about_outranks_its_likes_elsewhere(
    memory: Memory,
) -> None:
    """Mira's result at the regatta shares no word with the question but her name; so does a
    message of hers in every other session. The session where the regatta was talked about
    lifts hers (retrieval.session_focus), though the other sessions are more recent; the
    messages that hold the question's words keep their places."""

    def say(text: str, role: str, session: str, at: dt.datetime) -> str:
        return memory.remember(text, role=role, session=session, at=at).id

    # The regatta, talked over at length (more messages than session_focus's best events).
    for i in range(24):
        say(f"The regatta, leg {i}: wind and waves.", "Mira", "s0", T + dt.timedelta(minutes=i))
    say("Sounds rough out there.", "Jonas", "s0", T + dt.timedelta(minutes=30))
    result = say("We came second anyway, Jonas.", "Mira", "s0", T + dt.timedelta(minutes=31))
    others = []
    for s in range(1, 6):
        at = T + dt.timedelta(days=s)
        say(f"Any news on day {s}?", "Jonas", f"s{s}", at)
        others.append(say(f"We went shopping anyway, Jonas {s}.", "Mira", f"s{s}", at + HOUR))
    for i in range(12):
        say(f"unrelated chatter {i}", "Jonas", "s9", T + dt.timedelta(days=9, minutes=i))
    memory.refresh(force=True)
    question = "How did Mira do at the regatta?"
    now = T + dt.timedelta(days=10)
    hits = memory.indexer.index.search(question, limit=40)
    order = [r.hit.event_id for r in rank(hits, memory.config, now, query=question)]
    assert all(order.index(result) < order.index(o) for o in others)
    lifted = rank(hits, memory.config, now, query=question)
    assert all("regatta" in r.hit.text for r in lifted[:20] if r.hit.kind == "event")
    ltm = _ltm_part(memory.context(question, budget=2000, now=now).text)
    assert "We came second anyway" in ltm


def test_a_small_context_widens_its_search_and_keeps_the_recent_step_asked_about(
    memory: Memory,
) -> None:
    """Below `relevance_first_below` long-term memory is packed before the recent events, with
    the query feedback's finds among it; a recent step that ranks with them goes first."""
    memory.remember("We spent our vacation in Lisbon; the tiles everywhere were gorgeous.", at=T)
    memory.remember("Lisbon vacation photos: blue tiles and yellow trams.", at=T + HOUR)
    for i in range(30):  # (not right after them: an event is matched with the one before it)
        memory.remember(f"filler message number {i}", at=T + (2 + i) * HOUR)
    tiles = memory.remember("I bought painted tiles for the kitchen wall.", at=T + 40 * HOUR)
    for i in range(12):  # older memories of the trip, enough to fill a small context
        memory.remember(
            f"Lisbon vacation memory {i}: " + "we walked up the hills again " * 3,
            at=T + (50 + i) * HOUR,
        )
    asked = memory.remember("I booked the Lisbon flights for our next vacation.", at=T + 70 * HOUR)
    for i in range(9):  # the rest of the recent window, about something else
        memory.remember(f"Groceries: apples, pears and bread, list {i}.", at=T + (71 + i) * HOUR)
    memory.refresh(force=True)
    prompt = "Lisbon vacation flights?"
    ctx = memory.context(prompt, budget=400, now=T + 90 * HOUR)
    assert ctx.tokens <= 400
    recent = ctx.text.split(RECENT_HEADER, 1)[1].split("## Relevant Long-Term Memory", 1)[0]
    assert asked.text in recent  # the step asked about, in the recent block
    # The other steps get what long-term memory leaves, newest first.
    assert "list 0" not in recent
    ltm = ctx.text.split("## Relevant Long-Term Memory", 1)[1]
    assert "Lisbon vacation memory" in ltm
    # The feedback's find: shares no word with the prompt, only with the best hits.
    wide = memory.context(prompt, budget=900, now=T + 90 * HOUR)
    assert tiles.text in wide.text


def test_a_note_quotes_the_sources_that_share_the_prompts_words(vault: Path) -> None:
    # Only the sources that can be quoted are parsed (retrieval._note_item): the hit ones, and
    # those holding a word of the prompt, capitalised or on a message's second line; not others.
    from brainiac.search.retrieval import ParsedNotes, _note_item
    from brainiac.store.vault import Vault

    sources = [
        "- 2026-11-02T09:00:00 **user** (s1): The Kiln arrived on Monday. ^e-0000000001",
        "- 2026-11-02T09:05:00 **user** (s1): Lunch was soup. ^e-0000000002",
        "- 2026-11-02T09:10:00 **user** (s1): A long message,\n"
        "  and the glaze came too. ^e-0000000003",
        "- 2026-11-02T09:15:00 **user** (s1): Nothing to see here. ^e-0000000004",
    ]
    (vault / "memory/long_term/studio.md").write_text(
        "---\ntitle: Studio\n---\n## Summary\nWhere the pottery happens.\n\n"
        "## Sources\n" + "\n".join(sources) + "\n"
    )
    notes = ParsedNotes(Vault(vault))
    item = _note_item(notes, "memory/long_term/studio.md", {"kiln", "glaze"}, ["e-0000000004"])
    assert item is not None
    quotes = [line for line in item.text.split("\n") if line.startswith(">")]
    assert "Nothing to see here." in quotes[0]  # the hit first
    assert "The Kiln arrived on Monday." in item.text and "and the glaze came too." in item.text
    assert "Lunch was soup." not in item.text
    assert item.sources == (
        "memory/long_term/studio.md",
        *(f"memory/long_term/studio.md#e-000000000{i}" for i in (4, 1, 3)),
    )
