"""An incremental sync finds an event's neighbours in its session by time (neighbours.py,
with_neighbours_contexts): whatever edits, moves, deletions and syncs happen, every indexed
event carries the context a full reading of the vault gives it (corpus.previous_messages)."""

from __future__ import annotations

import datetime as dt
import random
from pathlib import Path

from brainiac import Memory
from brainiac.search import corpus
from brainiac.search.index_documents import context_digest

T = dt.datetime(2026, 11, 20, 9, 0)
WORDS = [
    *["apple", "river", "stone", "cloud", "lantern"],
    *["meadow", "copper", "violin", "harbour", "tulip"],
]


def _line(at: dt.datetime, session: str, text: str, ident: int) -> str:
    return f"- {at.isoformat()} **user** ({session}): {text} ^e-{ident:010x}\n"


def _write(vault: Path, files: dict[str, list[str]]) -> None:
    for name, lines in files.items():
        note = vault / f"memory/long_term/{name}.md"
        note.write_text(f"---\ntitle: {name}\n---\nNotes.\n\n## Sources\n\n" + "".join(lines))


def _indexed_against_vault(memory: Memory, vault: Path) -> tuple[int, list[str]]:
    """How many session events the vault holds, and those whose indexed context is not the
    one corpus.previous_messages gives them over every file."""
    docs = []
    for path in sorted((vault / "memory").rglob("*.md")):
        rel = path.relative_to(vault).as_posix()
        docs += [d for d in corpus.documents(rel, path.read_text()) if d.session]
    expected = corpus.previous_messages(docs)
    indexed = {e.doc.key: e for e in memory.indexer.index.session_events_keyed(expected)}
    wrong = [
        key
        for key, context in expected.items()
        if key not in indexed or indexed[key].context_digest != context_digest(context)
    ]
    return len(expected), wrong


def test_contexts_stay_true_through_random_edits(memory: Memory, vault: Path) -> None:
    rng = random.Random(7)
    files: dict[str, list[str]] = {f"N{i}": [] for i in range(4)}
    used: dict[str, set[int]] = {"s1": set(), "s2": set()}  # minutes taken, per session
    ident = 0

    def new_line() -> str:
        nonlocal ident
        session = rng.choice(sorted(used))
        # Distinct times within a session (ties are another test's), shared across sessions.
        minute = rng.choice([m for m in range(60) if m not in used[session]])
        used[session].add(minute)
        ident += 1
        text = " ".join(rng.sample(WORDS, 3)) + f" {ident}"
        return _line(T + dt.timedelta(minutes=minute), session, text, ident)

    def forget(line: str) -> None:
        session = line.split("(")[1].split(")")[0]
        used[session].discard(dt.datetime.fromisoformat(line[2:21]).minute)

    for name in files:
        files[name] = [new_line() for _ in range(5)]
    _write(vault, files)
    memory.refresh(force=True)
    checked = 0
    for _ in range(40):
        name = rng.choice(sorted(files))
        lines = files[name]
        op = rng.choice(("add", "add", "delete", "move", "retime", "retext"))
        if op == "add" or not lines:
            lines.insert(rng.randrange(len(lines) + 1), new_line())
        else:
            k = rng.randrange(len(lines))
            if op == "delete":
                forget(lines.pop(k))
            elif op == "move":
                files[rng.choice(sorted(files))].append(lines.pop(k))
            elif op == "retime":  # the same id (explicit), another time: another place
                old = lines[k]
                forget(old)
                session = old.split("(")[1].split(")")[0]
                minute = rng.choice([m for m in range(60) if m not in used[session]])
                used[session].add(minute)
                lines[k] = (T + dt.timedelta(minutes=minute)).isoformat().join((old[:2], old[21:]))
            else:
                lines[k] = lines[k].replace(": ", f": {rng.choice(WORDS)} ", 1)
        _write(vault, files)
        memory.refresh(force=True)
        total, wrong = _indexed_against_vault(memory, vault)
        assert wrong == [], op
        checked += total
    assert checked > 40 * 15


def test_equal_times_keep_the_order_they_were_indexed_in(memory: Memory, vault: Path) -> None:
    """Two messages of one session at the same time follow each other in the order they were
    indexed; a later one is matched with the second."""
    first = memory.remember("first at nine", role="ann", session="s", at=T)
    second = memory.remember("second at nine", role="bob", session="s", at=T)
    third = memory.remember("third at ten", role="ann", session="s", at=T + dt.timedelta(hours=1))
    memory.refresh(force=True)
    stored = {
        e.doc.event_id: e.context_digest
        for e in memory.indexer.index.session_events_keyed(
            f"memory/short_term.md#{e.id}" for e in (first, second, third)
        )
    }
    assert stored == {
        first.id: context_digest("second at nine"),  # the opening message: its reply
        second.id: context_digest("first at nine"),
        third.id: context_digest("second at nine"),
    }


def test_a_long_sessions_sync_reads_only_the_neighbours(memory: Memory, vault: Path) -> None:
    """Adding to a session of 300 events reads the events next to the new one, not all 300."""
    lines = [_line(T + dt.timedelta(minutes=m), "long", f"message {m}", m + 1) for m in range(300)]
    _write(vault, {"Long": lines})
    memory.refresh(force=True)
    index = memory.indexer.index
    read: list[str] = []
    original = index.session_events_at

    def counted(session: str, time: str) -> list:  # type: ignore[type-arg]
        read.append(time)
        return original(session, time)

    index.session_events_at = counted  # type: ignore[method-assign]
    inserted = _line(T + dt.timedelta(minutes=150, seconds=30), "long", "inserted", 999)
    _write(vault, {"Long": [*lines[:150], inserted, *lines[150:]]})
    memory.refresh(force=True)
    assert 0 < len(set(read)) <= 6
    total, wrong = _indexed_against_vault(memory, vault)
    assert total > 300 and wrong == []
