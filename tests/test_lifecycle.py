"""The memory lifecycle jobs: reflection, promotion, organization, feedback (issue 4).

Real vaults in temporary directories, the real index, `now` passed in (no test sleeps).
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from pathlib import Path

import pytest

from brainiac import Memory
from brainiac.formats import events as ev
from brainiac.formats import stm
from brainiac.lifecycle.jobs import moving
from brainiac.lifecycle.jobs.edits import Outcome
from brainiac.store.vault import ARCHIVE_DIR, LONG_TERM_DIR, SHORT_TERM
from conftest import run_cli

T0 = dt.datetime(2026, 11, 1, 9, 0)
_EVENT_ID_RE = re.compile(r"\^(e-[0-9a-f]{10})\s*$")


def event_places(vault: Path) -> Counter[str]:
    """How many times each event line (its `^e-` id) appears across short-term, long-term and
    archive."""
    counts: Counter[str] = Counter()
    for path in sorted((vault / "memory").rglob("*.md")):
        for line in path.read_text(encoding="utf-8").splitlines():
            m = _EVENT_ID_RE.search(line)
            if m:
                counts[m.group(1)] += 1
    return counts


def remember_all(
    memory: Memory, items: list[tuple[str, str, str]], start: dt.datetime
) -> list[str]:
    ids = []
    for i, (role, session, text) in enumerate(items):
        ids.append(
            memory.remember(text, role=role, session=session, at=start + dt.timedelta(minutes=i)).id
        )
    return ids


def test_conflicting_facts_leave_the_new_value_and_the_old_as_history(
    memory: Memory, vault: Path
) -> None:
    memory.remember("The deadline is Friday.", session="planning", at=T0)
    memory.run_job("reflection", now=T0 + dt.timedelta(minutes=1))
    later = dt.datetime(2026, 11, 18, 16, 40)
    memory.remember("The deadline moved to Monday.", session="weekly", at=later)
    reports = memory.run_job("reflection", now=later + dt.timedelta(minutes=1))
    facts = stm.parse((vault / SHORT_TERM).read_text()).note.section_text("Facts") or ""
    assert "- deadline: Monday (since 2026-11-18 16:40" in facts
    assert "  - superseded: Friday (2026-11-01 09:00 to 2026-11-18 16:40" in facts
    assert "deadline: Friday → Monday" in reports[0].summary


def test_reflection_keeps_a_persons_lines_and_is_idempotent(memory: Memory, vault: Path) -> None:
    path = vault / SHORT_TERM
    text = path.read_text().replace("## Goals\n", "## Goals\n- learn Finnish\n")
    path.write_text(text)
    remember_all(
        memory,
        [
            ("user", "s1", "I want to run a marathon this year."),
            ("user", "s1", "Remind me to book the dentist."),
            ("user", "s1", "What time is the flight?"),
        ],
        T0,
    )
    memory.run_job("reflection", now=T0 + dt.timedelta(minutes=5))
    first = path.read_text()
    assert "- learn Finnish\n" in first
    assert re.search(r"- Run a marathon this year \^g-[0-9a-f]{6}", first)
    assert re.search(r"- \[ \] Book the dentist \^g-[0-9a-f]{6}", first)
    assert "pending questions: What time is the flight?" in first
    assert "expires: 2026-11-01T09:32" in first
    memory.run_job("reflection", now=T0 + dt.timedelta(minutes=6))
    assert path.read_text() == first


def test_the_speakers_of_a_conversation_are_not_its_topics(memory: Memory, vault: Path) -> None:
    for role, text in [
        ("Jon", "Gina, I finally signed the lease for the dance studio!"),
        ("Gina", "Jon, that is amazing news about the studio. Jon, you deserve it."),
        ("Jon", "Thanks Gina! The studio opens next month, dance classes every evening."),
        ("Gina", "My clothing store needs a new logo, Jon."),
    ]:
        memory.remember(text, role=role, session="s1", at=T0)
    memory.run_job("reflection", now=T0 + dt.timedelta(minutes=5))
    doc = stm.parse((vault / SHORT_TERM).read_text())
    summary, working = doc.section("Summary"), doc.section("Working Memory")
    topics = summary.split("topics:", 1)[1]
    assert "studio" in topics
    assert "Jon" not in topics and "Gina" not in topics
    topic = working.split("topic:", 1)[1].splitlines()[0]
    assert "studio" in topic and "jon" not in topic and "gina" not in topic


def test_a_summary_names_only_what_is_a_name_there(memory: Memory, vault: Path) -> None:
    for role, text in [
        ("Jon", "Remember Gina, Just do it! I just signed the lease with Marta Lopez."),
        ("Gina", "JUST DOING IT, like you said. Marta Lopez sounds great, just call her."),
        ("Jon", "Marta Lopez owns the building, and it is just right for the studio."),
    ]:
        memory.remember(text, role=role, session="s1", at=T0)
    memory.run_job("reflection", now=T0 + dt.timedelta(minutes=5))
    topics = stm.parse((vault / SHORT_TERM).read_text()).section("Summary").split("topics:")[1]
    # "Just" is capitalised after a comma and written "just" everywhere else; the capitals
    # are shouting. Marta Lopez is a name wherever she stands.
    assert "Marta Lopez" in topics
    assert "Just" not in topics and "JUST" not in topics


def test_expired_working_memory_is_cleared_and_recorded_as_an_event(
    memory: Memory, vault: Path
) -> None:
    memory.remember("Let us plan the garden for spring.", session="garden", at=T0)
    memory.run_job("reflection", now=T0 + dt.timedelta(minutes=1))
    wm = stm.parse((vault / SHORT_TERM).read_text()).section("Working Memory")
    assert "topic:" in wm
    memory.run_job("reflection", now=T0 + dt.timedelta(minutes=31))
    doc = stm.parse((vault / SHORT_TERM).read_text())
    assert "topic:" not in doc.section("Working Memory")
    expired = [e for e in doc.events if e.role == "brainiac"]
    assert len(expired) == 1 and "garden" in expired[0].text
    assert expired[0].at == T0 + dt.timedelta(minutes=30)
    memory.run_job("reflection", now=T0 + dt.timedelta(minutes=40))  # nothing more to record
    assert (
        len([e for e in stm.parse((vault / SHORT_TERM).read_text()).events if e.role == "brainiac"])
        == 1
    )


def test_promotion_keeps_the_window_and_moves_each_event_once(memory: Memory, vault: Path) -> None:
    items = [
        ("user", "atlas-weekly", f"Atlas status {i}: the migration of table {i} is done.")
        for i in range(8)
    ]
    items += [
        ("user", "garden", f"Planted {n} in the garden bed today.")
        for n in ("tulips", "roses", "basil", "mint")
    ]
    items += [("user", "chat", "ok"), ("user", "chat", "thanks!")]
    ids = remember_all(memory, items, T0)
    items2 = [
        ("user", "later", f"Later note {i} about the kitchen renovation budget") for i in range(10)
    ]
    ids += remember_all(memory, items2, T0 + dt.timedelta(hours=2))
    reports = memory.run_job("promotion", now=T0 + dt.timedelta(hours=3))
    assert reports[0].ok, reports[0].summary
    doc = stm.parse((vault / SHORT_TERM).read_text())
    assert [e.id for e in doc.events] == ids[-10:]
    places = event_places(vault)
    assert all(places[i] == 1 for i in ids), {i: places[i] for i in ids if places[i] != 1}
    atlas = (vault / LONG_TERM_DIR / "project-atlas.md").read_text()
    assert "Atlas status 3: the migration of table 3 is done. ^e-" in atlas  # verbatim, by name
    assert "strength: 2" in atlas  # 1.5 + 0.5
    archive = (vault / ARCHIVE_DIR / "2026-11.md").read_text()
    assert "**user** (chat): ok ^e-" in archive  # small talk goes to the archive
    # and the archive says where the rest went, in a link Obsidian resolves (the file's name)
    assert "→ [[project-atlas|Project Atlas]]" in archive
    again = memory.run_job("promotion", now=T0 + dt.timedelta(hours=3))
    assert "none to promote" in again[0].summary
    assert event_places(vault) == places


def test_a_promotion_interrupted_before_the_event_log_is_finished_by_the_next_run(
    memory: Memory, vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = remember_all(
        memory,
        [("user", "s", f"Fact number {i} about the Atlas project budget") for i in range(15)],
        T0,
    )
    real_update = moving.update

    def crash_on_short_term(vault_, rel, transform, outcome: Outcome, dry_run):  # type: ignore[no-untyped-def]
        if rel == SHORT_TERM:
            raise KeyboardInterrupt  # the process dies after the notes were written
        return real_update(vault_, rel, transform, outcome, dry_run)

    monkeypatch.setattr(moving, "update", crash_on_short_term)
    with pytest.raises(KeyboardInterrupt):
        memory.run_job("promotion", now=T0 + dt.timedelta(hours=1))
    assert (memory.locations.state / moving.INTENT_FILE).exists()
    monkeypatch.setattr(moving, "update", real_update)
    report = memory.run_job("promotion", now=T0 + dt.timedelta(hours=1))[0]
    assert "finished an interrupted run" in report.summary
    assert not (memory.locations.state / moving.INTENT_FILE).exists()
    places = event_places(vault)
    assert all(places[i] == 1 for i in ids)


def test_organization_decays_archives_and_links_still_resolve(memory: Memory, vault: Path) -> None:
    anna = vault / LONG_TERM_DIR / "anna-berg.md"
    person_text = anna.read_text()
    # A year of monthly runs (one run applies at most a month of decay: a clock or a `--now`
    # a year ahead does not archive everything at once, test_time_guards.py).
    for days in range(30, 366, 30):
        report = memory.run_job("organization", now=T0 + dt.timedelta(days=days))[0]
        assert report.ok, report.summary
    assert not anna.exists()
    archived = vault / ARCHIVE_DIR / "notes" / "anna-berg.md"
    assert archived.exists()
    moved = archived.read_text()
    assert "status: archived" in moved
    # The person's body text is all still there.
    body = person_text.split("---", 2)[2]
    assert body in moved
    # Every [[link]] still names an existing note by its file name, as Obsidian resolves links
    # (never through a title or an alias).
    names = {path.stem.lower() for path in (vault / "memory").rglob("*.md")}
    for path in (vault / "memory").rglob("*.md"):
        for link in re.findall(r"\[\[([^\]|#]+)", path.read_text()):
            assert link.strip().lower() in names, (path, link)


def test_decay_counts_days_once_and_access_resets_it(memory: Memory, vault: Path) -> None:
    note = vault / LONG_TERM_DIR / "project-atlas.md"
    now = dt.datetime(2026, 12, 20, 9, 30)  # 30 days after last_accessed 2026-11-20T09:30
    memory.run_job("organization", now=now)
    strength = float(re.search(r"^strength: (.+)$", note.read_text(), re.M).group(1))  # type: ignore[union-attr]
    assert strength == pytest.approx(1.5 * 0.98**30, rel=1e-3)
    memory.run_job("organization", now=now)  # same day again: no second decay
    again = float(re.search(r"^strength: (.+)$", note.read_text(), re.M).group(1))  # type: ignore[union-attr]
    assert again == strength


def test_feedback_reinforces_the_notes_of_the_last_context(memory: Memory, vault: Path) -> None:
    ctx = memory.context("When is the Atlas deadline?", budget=2000, now=T0)
    assert any(s.startswith(f"{LONG_TERM_DIR}/project-atlas.md") for s in ctx.sources)
    changed = memory.feedback(+1, now=T0)
    assert f"{LONG_TERM_DIR}/project-atlas.md" in changed
    text = (vault / LONG_TERM_DIR / "project-atlas.md").read_text()
    assert re.search(r"^reinforcement: 0.3$", text, re.M)  # 0.2 + 1 x 0.1
    memory.feedback(-1, now=T0)
    assert re.search(
        r"^reinforcement: 0.2$", (vault / LONG_TERM_DIR / "project-atlas.md").read_text(), re.M
    )


def test_duplicates_brainiac_wrote_are_merged_and_a_persons_note_is_not(
    memory: Memory, vault: Path
) -> None:
    lt = vault / LONG_TERM_DIR
    ev_line = "- 2026-11-02T10:00:00 **user** (s): Lena called about the tulips. ^e-0123456789\n"
    (lt / "Lena.md").write_text(
        "---\ntitle: Lena\naliases: [Lena Berg]\nstrength: 1.0\nstatus: active\n---\n"
        "## Sources\n- 2026-11-01T10:00:00 **user** (s): Lena is my sister. ^e-aaaaaaaaaa\n"
        "- 2026-11-03T10:00:00 **user** (s): Lena moved to Hamburg. ^e-bbbbbbbbbb\n"
    )
    (lt / "Lena Berg.md").write_text(
        "---\ntitle: Lena Berg\nstrength: 1.0\nstatus: active\n---\n## Sources\n" + ev_line
    )
    (lt / "Anna B.md").write_text(
        "---\ntitle: Anna B\naliases: [Anna]\n---\nMy own notes about Anna.\n"
    )
    report = memory.run_job("organization", now=dt.datetime(2026, 11, 21))[0]
    assert "merged [[Lena Berg]] into [[Lena]]" in report.summary
    assert (
        "possible duplicates: [[Anna B]]" in report.summary
        or "possible duplicates: [[Anna Berg]]" in report.summary
    )
    assert "e-0123456789" in (lt / "Lena.md").read_text()
    stub = (lt / "Lena Berg.md").read_text()
    assert "status: merged" in stub and "[[Lena]]" in stub and "e-0123456789" not in stub
    assert (
        lt / "Anna B.md"
    ).read_text() == "---\ntitle: Anna B\naliases: [Anna]\n---\nMy own notes about Anna.\n"
    assert event_places(vault)["e-0123456789"] == 1


def test_dry_run_changes_nothing(memory: Memory, vault: Path) -> None:
    remember_all(
        memory, [("user", "s", f"Item {i} about the garden shed roof") for i in range(14)], T0
    )
    before = {p: p.read_bytes() for p in vault.rglob("*") if p.is_file()}
    reports = memory.run_job("all", now=dt.datetime(2027, 6, 1), dry_run=True)
    assert [r.name for r in reports] == ["reflection", "promotion", "organization"]
    assert all(r.dry_run for r in reports)
    assert "dry run" in reports[1].summary and "4 event(s) left the window" in reports[1].summary
    after = {p: p.read_bytes() for p in vault.rglob("*") if p.is_file()}
    assert after == before


@pytest.mark.slow
@pytest.mark.timeout(1800)  # a hang guard: beside three other workers on two cores
def test_a_simulated_120_days(vault: Path) -> None:
    """Thousands of events over 120 days, jobs on their schedules: unused notes fade to the
    archive, used ones survive, a person's text is never altered, every event exactly once."""
    # Faster forgetting than the default (0.98), so notes fade within the simulated 120 days.
    # Words only: fading, promotion and exactly-once placement are what this checks; recall by
    # meaning has its own tests (test_semantic.py, test_readable_notes.py) and its sentence model
    # would take a third of this test's time.
    (vault / ".brainiac/config.toml").write_text(
        "[lifecycle]\ndecay_per_day = 0.95\n\n[retrieval]\nmeaning = false\n"
    )
    # Jobs and events through one Memory that never opens the index (as the daemon's job thread
    # writes only files); a weekly context through another, as a client would ask.
    memory = Memory(vault)
    person_note = vault / LONG_TERM_DIR / "My garden plan.md"
    person_body = "## Plan\nRaised beds on the south side; tulips in October.\n"
    person_note.write_text("---\ntitle: My garden plan\nstrength: 1.0\n---\n" + person_body)
    topics = [
        "kitchen renovation",
        "Atlas migration",
        "marathon training",
        "tax return",
        "piano lessons",
    ]
    ids: list[str] = []
    start = dt.datetime(2026, 11, 21, 8, 0)
    for day in range(120):
        today = start + dt.timedelta(days=day)
        # The first two topics are talked about all along; the others only in the first weeks.
        active = topics[:2] if day > 20 else topics
        for chunk in range(3):  # three conversations a day, six steps each, reflection after
            batch = []
            for k in range(chunk * 6, chunk * 6 + 6):
                topic = active[k % len(active)]
                at = today + dt.timedelta(minutes=7 * k)
                text = f"Day {day} step {k}: progress on the {topic}, item {day * 18 + k}."
                role = "user" if k % 2 else "assistant"
                batch.append(ev.make_event(text, role=role, session=f"day-{day}", at=at))
            memory.remember_many(batch)
            ids += [e.id for e in batch]
            memory.run_job("reflection", now=batch[-1].at)
        if day % 7 == 6:
            with Memory(vault) as reader:
                reader.context("Atlas migration progress", budget=1500, now=today)
        memory.run_job("promotion", now=today + dt.timedelta(hours=4))
        if day % 3 == 2:
            memory.run_job("organization", now=today + dt.timedelta(hours=23))
    assert len(ids) == 120 * 18
    places = event_places(vault)
    assert all(places[i] == 1 for i in ids), sum(1 for i in ids if places[i] != 1)
    long_term = {p.name for p in (vault / LONG_TERM_DIR).glob("*.md")}
    archived = {p.name for p in (vault / ARCHIVE_DIR / "notes").glob("*.md")}
    assert archived, "nothing faded"
    assert any("atlas" in n.lower() for n in long_term) or "project-atlas.md" in long_term
    assert not any("piano" in n.lower() for n in long_term), long_term
    final = next(p for p in (vault / "memory").rglob("My garden plan.md"))
    assert person_body in final.read_text()
    memory.close()


def _with_llm(vault: Path, base_url: str) -> Memory:
    (vault / ".brainiac/config.toml").write_text(
        f'[llm]\nbase_url = "{base_url}"\nmodel = "stand-in"\ntimeout_s = 5.0\n'
    )
    return Memory(vault)


def _asks_for_facts(body: dict) -> bool:  # type: ignore[type-arg]
    return "extract lasting facts" in body["messages"][0]["content"]


def test_reflection_uses_the_llm_endpoint_for_the_summary(vault: Path) -> None:
    from llm_standin import StandIn

    def answer(body: dict) -> str:  # type: ignore[type-arg]
        return "[]" if _asks_for_facts(body) else "Planning the Atlas migration with Anna."

    with StandIn(answer) as server:
        memory = _with_llm(vault, server.base_url)
        memory.remember("Anna and I planned the Atlas migration today.", at=T0)
        report = memory.run_job("reflection", now=T0 + dt.timedelta(minutes=1))[0]
        memory.close()
    assert report.ok and "LLM unavailable" not in report.summary
    summary = stm.parse((vault / SHORT_TERM).read_text()).section("Summary")
    assert "Planning the Atlas migration with Anna. ^g-" in summary
    assert server.requests and server.requests[0].body["model"] == "stand-in"


def test_with_an_llm_reflection_adds_the_facts_it_reads_once_and_promotion_keeps_them(
    vault: Path,
) -> None:
    from llm_standin import StandIn

    said = {  # what the model reads in each message, written as its speaker would say it
        "Melanie": '[{"key": "my weekend hobby", "value": "pottery"}]',
        "user": '[{"key": "my home city", "value": "Lisbon"}, {"key": "pet", "value": "a cat"}]',
        "assistant": '[{"key": "my name", "value": "Claude"}]',  # the assistant's own: none
    }

    def answer(body: dict) -> str:  # type: ignore[type-arg]
        if not _asks_for_facts(body):
            return "A chat about weekends."
        message = body["messages"][1]["content"]
        return next(a for who, a in said.items() if message.startswith(f"Message by {who}:"))

    with StandIn(answer) as server:
        memory = _with_llm(vault, server.base_url)
        first = [
            memory.remember(text, role=role, session="s1", at=T0 + dt.timedelta(minutes=i)).id
            for i, (role, text) in enumerate(
                [
                    ("Melanie", "Every weekend now I'm at the wheel, throwing bowls."),
                    ("user", "We settled by the river in Lisbon, with our cat."),
                    ("assistant", "Noted! I am Claude, by the way."),
                ]
            )
        ]
        report = memory.run_job("reflection", now=T0 + dt.timedelta(minutes=5))[0]
        assert report.ok and "LLM unavailable" not in report.summary, report.summary
        facts_section = stm.parse((vault / SHORT_TERM).read_text()).section("Facts")
        # Another speaker's fact under her name, the user's as said, the assistant's not at all;
        # each with the event it was read in.
        assert f"melanie's weekend hobby: pottery (since 2026-11-01 09:00, {first[0]})" in (
            facts_section
        )
        assert f"home city: Lisbon (since 2026-11-01 09:01, {first[1]})" in facts_section
        assert "pet: a cat" in facts_section and "Claude" not in facts_section
        asked = [r for r in server.requests if _asks_for_facts(r.body)]
        assert len(asked) == 3  # one question per message

        # Asked once: a second run asks only about the message that is new since the first.
        memory.remember(
            "Back to the wheel tomorrow.", role="Melanie", at=T0 + dt.timedelta(minutes=6)
        )
        memory.run_job("reflection", now=T0 + dt.timedelta(minutes=7))
        assert len([r for r in server.requests if _asks_for_facts(r.body)]) == 4

        # Promotion takes the facts read in the events it moves to their note with them.
        for i in range(12):
            memory.remember(
                f"Later message {i} about the kitchen tiles.",
                session="s2",
                at=T0 + dt.timedelta(hours=2, minutes=i),
            )
        promoted = memory.run_job("promotion", now=T0 + dt.timedelta(hours=3))[0]
        memory.close()
    assert promoted.ok, promoted.summary
    notes_text = "".join(p.read_text() for p in (vault / LONG_TERM_DIR).rglob("*.md"))
    assert first[0] in notes_text  # the message moved to a long-term note...
    assert "weekend hobby: pottery" in notes_text  # ...and its fact with it
    assert "home city: Lisbon" in notes_text


def test_with_an_llm_promotion_summarises_the_notes_it_writes(vault: Path) -> None:
    from llm_standin import StandIn

    def answer(body: dict) -> str | tuple[int, str]:  # type: ignore[type-arg]
        system = body["messages"][0]["content"]
        if _asks_for_facts(body):
            return "[]"
        if system.startswith("You summarise"):
            return "Anna and Sam moved the Atlas cut-over to May after the load tests."
        return "Atlas cut-over planning"  # a title

    texts = [
        "Anna says the Atlas load tests failed on the orders table.",
        "We agreed to move the Atlas cut-over to May.",
        "Sam will rerun the load tests next week.",
    ]
    with StandIn(answer) as server:
        memory = _with_llm(vault, server.base_url)
        for i in range(12):
            memory.remember(texts[i % 3], session="atlas-sync", at=T0 + dt.timedelta(minutes=i))
        for i in range(10):  # the window that stays in the Event Log
            memory.remember(
                f"Unrelated {i}: the tulips are up.", at=T0 + dt.timedelta(hours=3, minutes=i)
            )
        report = memory.run_job("promotion", now=T0 + dt.timedelta(hours=4))[0]
        memory.close()
    assert report.ok, report.summary
    summaries = [
        r for r in server.requests if r.body["messages"][0]["content"].startswith("You summarise")
    ]
    written = {
        p.name: ltm_text
        for p in (vault / LONG_TERM_DIR).rglob("*.md")
        if "Atlas cut-over to May" in (ltm_text := p.read_text())
    }
    assert written, "the session's events went to a note"
    (note,) = [t for t in written.values() if "after the load tests" in t]
    summary = note.split("## Summary", 1)[1].split("##", 1)[0]
    assert "Anna and Sam moved the Atlas cut-over to May after the load tests. ^g-" in summary
    # The model was asked once per note written, with the events the note holds.
    assert 1 <= len(summaries) <= len(written)
    assert "Sam will rerun the load tests" in summaries[0].body["messages"][1]["content"]


def test_a_failing_llm_endpoint_falls_back_and_says_so(vault: Path) -> None:
    from llm_standin import StandIn

    with StandIn(lambda body: (500, "model not loaded")) as server:
        memory = _with_llm(vault, server.base_url)
        memory.remember("Anna and I planned the Atlas migration today.", at=T0)
        report = memory.run_job("reflection", now=T0 + dt.timedelta(minutes=1))[0]
        memory.close()
    assert report.ok
    assert "LLM unavailable" in report.summary and "deterministic" in report.summary
    summary = stm.parse((vault / SHORT_TERM).read_text()).section("Summary")
    assert "recent events" in summary and "topics:" in summary  # the deterministic one


def test_cli_jobs_run_all_and_jobs_log(vault: Path) -> None:
    from conftest import remember_steps, run_cli
    from helpers import run_all_jobs

    remember_steps(vault)
    dry = run_all_jobs(vault, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "promotion: dry run: 3 event(s) left the window" in dry.stdout
    done = run_all_jobs(vault)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0].startswith("reflection: ")
    log = run_cli("--vault", str(vault), "jobs", "log", "--json", in_process=True)
    import json

    runs = json.loads(log.stdout)
    assert {r["job"] for r in runs} >= {"reflection", "promotion"}
    assert any(SHORT_TERM in r["changed"] for r in runs)
    bad = run_cli("--vault", str(vault), "jobs", "run", "nosuchjob")
    assert bad.returncode == 2 and "no job 'nosuchjob'" in bad.stderr


def test_a_save_while_a_job_works_is_kept_and_the_job_reapplies(
    memory: Memory, vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from brainiac.store.vault import Vault

    memory.remember("I want to learn to sail this summer.", at=T0)
    path = vault / SHORT_TERM
    real_write = Vault.write
    saved = []

    def person_saves_first(self: Vault, rel: str, text: str, expected):  # type: ignore[no-untyped-def]
        if rel == SHORT_TERM and not saved:
            saved.append(True)  # the person's editor saves between the job's read and write
            path.write_text(path.read_text().replace("## Tasks\n", "## Tasks\n- [ ] buy a map\n"))
        return real_write(self, rel, text, expected)

    monkeypatch.setattr(Vault, "write", person_saves_first)
    report = memory.run_job("reflection", now=T0 + dt.timedelta(minutes=1))[0]
    assert report.ok, report.summary
    text = path.read_text()
    assert "- [ ] buy a map\n" in text  # the person's edit stands
    assert "Learn to sail this summer ^g-" in text  # and the job's work was redone on top


def test_a_ticked_or_deleted_generated_task_does_not_come_back(memory: Memory, vault: Path) -> None:
    path = vault / SHORT_TERM
    memory.remember("Remind me to book the dentist.", at=T0)
    memory.remember("I want to run a marathon this year.", at=T0 + dt.timedelta(minutes=1))
    memory.run_job("reflection", now=T0 + dt.timedelta(minutes=2))
    text = path.read_text()
    task = re.search(r"^- \[ \] Book the dentist \^g-\w+$", text, re.M)
    goal = re.search(r"^- Run a marathon this year \^g-\w+\n", text, re.M)
    assert task and goal
    text = text.replace(task.group(0), "- [x] Book the dentist").replace(goal.group(0), "")
    path.write_text(text)
    memory.remember("Nice weather today.", at=T0 + dt.timedelta(minutes=3))
    memory.run_job("reflection", now=T0 + dt.timedelta(minutes=4))
    after = path.read_text()
    assert "- [x] Book the dentist\n" in after and "[ ] Book the dentist" not in after
    assert "marathon" not in (stm.parse(after).note.section_text("Goals") or "")


def test_a_second_memory_job_at_once_is_skipped_and_says_why(memory: Memory) -> None:
    import fcntl
    import os

    memory.locations.state.mkdir(parents=True, exist_ok=True)
    fd = os.open(memory.locations.state / "jobs.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # another process's run is under way
        report = memory.run_job("promotion", now=T0)[0]
    finally:
        os.close(fd)
    assert not report.ok and "another memory job is running" in report.summary
    assert memory.run_job("promotion", now=T0)[0].ok


def test_events_go_to_the_note_that_holds_the_fact_they_change(memory: Memory, vault: Path) -> None:
    items = [("user", "weekly", "Anna agreed to move the Atlas deadline to Tuesday the 1st.")]
    items += [("user", "weekly", f"Filler {i} about lunch plans and sandwiches") for i in range(10)]
    later = dt.datetime(2026, 11, 20, 9, 0)  # after the template's Monday (since 2026-11-18)
    remember_all(memory, items, later)
    memory.run_job("promotion", now=later + dt.timedelta(hours=1))
    atlas = (vault / LONG_TERM_DIR / "project-atlas.md").read_text()
    assert "move the Atlas deadline to Tuesday the 1st. ^e-" in atlas
    assert "- deadline: Tuesday the 1st (since 2026-11-20 09:00" in atlas  # "atlas deadline"
    assert "  - superseded: Monday 2026-11-30 (2026-11-18 to 2026-11-20 09:00" in atlas
    assert "Tuesday" not in (vault / LONG_TERM_DIR / "anna-berg.md").read_text()


def test_feedback_follows_the_last_context_for_a_prompt(memory: Memory) -> None:
    memory.context("When is the Atlas deadline?", budget=2000, now=T0)
    memory.context(None, budget=2000, now=T0)  # the daemon's own refresh: no prompt
    changed = memory.feedback(+1, now=T0)
    assert f"{LONG_TERM_DIR}/project-atlas.md" in changed


def test_a_speaker_or_a_speakers_short_name_founds_no_entity_note(
    memory: Memory, vault: Path
) -> None:
    # Caroline calls Melanie "Mel" in every other line: a note about a speaker would gather the
    # whole conversation (LoCoMo conv-26 grew a 101-event "Mel" note), not a topic.
    items = []
    for i in range(6):
        items.append(("Caroline", "s1", f"Hey, so Mel, the pottery class {i} went well."))
        items.append(("Melanie", "s1", f"That is great! I told Mel's sister about class {i} too."))
    items += [("Caroline", "s2", f"Later line {i} about the garden beds.") for i in range(10)]
    remember_all(memory, items, T0)
    reports = memory.run_job("promotion", now=T0 + dt.timedelta(hours=3))
    assert reports[0].ok, reports[0].summary
    notes = {p.stem.casefold() for p in (vault / LONG_TERM_DIR).glob("*.md")}
    assert "mel" not in notes and "melanie" not in notes, notes


def _orion(vault: Path, stars_meta: str = "") -> None:
    """Two notes answering to "Orion": Orion Project (more sources, so the one the name leads
    to) near the archive threshold, and Orion Telescope; four notes whose sources name Orion.
    `stars_meta`: frontmatter lines of those four."""
    lt = vault / LONG_TERM_DIR

    def note(name: str, title: str, strength: float, said: list[str]) -> None:
        sources = "".join(
            f"- 2026-11-0{i + 1}T10:00:00 **user** (s): {text} ^e-{len(name):x}{i:09d}\n"
            for i, text in enumerate(said)
        )
        (lt / f"{name}.md").write_text(
            f"---\ntitle: {title}\naliases: [Orion]\nstrength: {strength}\nstatus: active\n"
            f"last_accessed: 2026-11-03T10:00\n---\n## Sources\n{sources}"
        )

    note("orion-project", "Orion Project", 0.11, ["Orion kicked off.", "Orion slipped.", "Ok."])
    note("orion-telescope", "Orion Telescope", 1.0, ["The Orion telescope came today."])
    for i in range(4):
        (lt / f"stars-{i}.md").write_text(
            f"---\ntitle: Stars {i}\nstrength: 1.0\nstatus: active\n{stars_meta}---\n"
            "## Sources\n"
            f"- 2026-11-04T10:00:00 **user** (s): Watched night {i} through Orion. ^e-f{i:09d}\n"
        )


# Orion Project is still above the threshold on the 6th and fades by the 8th; the notes naming
# Orion have nothing due then (their decay counts from the 7th).
_ORION_KEPT = dt.datetime(2026, 11, 6, 9, 0)
_ORION_FADES = dt.datetime(2026, 11, 8, 12, 0)
_STARS_META = "decayed: 2026-11-07T12:00\n"
_TELESCOPE = "[[orion-telescope|Orion Telescope]]"


def test_an_archive_relinks_the_notes_settled_by_an_earlier_run_of_the_same_process(
    vault: Path,
) -> None:
    """The daemon keeps one process: a note unchanged since its last run there is skipped,
    unless a name it links by now leads elsewhere (a note it links faded and went), as a
    fresh process, which reads every note, would relink it."""
    _orion(vault, _STARS_META)
    stars = vault / LONG_TERM_DIR / "stars-0.md"
    with Memory(vault, refresh_interval_s=0) as m:
        first = m.run_job("organization", now=_ORION_KEPT)[0]
        assert first.ok and "archived" not in first.summary, first.summary
        assert "[[orion-project|Orion Project]]" in stars.read_text()
        second = m.run_job("organization", now=_ORION_FADES)[0]
        assert "archived 1 faded note(s)" in second.summary, second.summary
        assert _TELESCOPE in stars.read_text(), stars.read_text()
        relinked = {f"{LONG_TERM_DIR}/stars-{i}.md" for i in range(4)}
        assert relinked <= set(second.changed), second.changed


def test_a_dry_run_links_with_the_names_left_after_the_notes_that_fade(vault: Path) -> None:
    """`jobs run organization --dry-run` reports what the run then does: the notes naming
    Orion relinked to Orion Telescope, since Orion Project fades first."""
    _orion(vault, _STARS_META)
    with Memory(vault, refresh_interval_s=0) as m:
        m.run_job("organization", now=_ORION_KEPT)
    with Memory(vault, refresh_interval_s=0) as m:
        dry = m.run_job("organization", now=_ORION_FADES, dry_run=True)[0]
    with Memory(vault, refresh_interval_s=0) as m:
        done = m.run_job("organization", now=_ORION_FADES)[0]
    assert _TELESCOPE in (vault / LONG_TERM_DIR / "stars-0.md").read_text()
    relinked = {f"{LONG_TERM_DIR}/stars-{i}.md" for i in range(4)}
    assert relinked <= set(done.changed), done.changed
    assert relinked <= set(dry.changed), (dry.summary, dry.changed)
    assert dry.summary.split(";")[0] == "dry run: " + done.summary.split(";")[0]


def test_organization_run_twice_on_one_day_changes_nothing_the_second_time(vault: Path) -> None:
    """Orion Project fades and goes; Orion Telescope, the other note answering to "Orion", is
    the one the notes naming Orion link then, in the first run already: the second run (a fresh
    process, which reads every note) writes no file."""
    lt = vault / LONG_TERM_DIR
    _orion(vault)
    now = "2026-11-20T09:00"
    first = run_cli("--vault", str(vault), "jobs", "run", "organization", "--now", now)
    assert first.returncode == 0 and "archived 1 faded note(s)" in first.stdout, first.stdout
    files = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in (vault / "memory").rglob("*.md")}
    again = run_cli("--vault", str(vault), "jobs", "run", "organization", "--now", now)
    assert again.returncode == 0 and "0 note(s) updated" in again.stdout, again.stdout
    assert {
        p: (p.read_bytes(), p.stat().st_mtime_ns) for p in (vault / "memory").rglob("*.md")
    } == files
    assert _TELESCOPE in (lt / "stars-0.md").read_text()
