"""What the index stores of a document and gives back: hits, note records, events as stored.

The conversions both ways between a stored document's fields and what the code reads (`Hit`,
`NoteRecord`, `StoredEvent`), and the terms an event's session and time are indexed under. No
Whoosh here: index.py reads the stored fields and hands them over.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from dataclasses import dataclass
from typing import Any

from brainiac.search.corpus import EVENT, NOTE, Document


@dataclass(frozen=True)
class Hit:
    key: str
    path: str
    kind: str
    score: float
    title: str
    status: str
    event_id: str
    text: str
    role: str
    session: str
    at: dt.datetime | None
    strength: float
    reinforcement: float
    projects: tuple[str, ...] = ()
    excerpt_floor: int = 0  # a note's (corpus.Document.excerpt_floor)


@dataclass(frozen=True)
class NoteRecord:
    """A note as the index last saw it, enough to list it without reading the file."""

    path: str
    title: str
    status: str
    aliases: tuple[str, ...]
    tags: tuple[str, ...]
    sources: int
    strength: float


@dataclass(frozen=True)
class StoredEvent:
    """An indexed event with a session: its document as stored (context left empty), the digest
    of the context it was indexed with, and its document number (the order it was indexed in)."""

    docnum: int
    doc: Document
    context_digest: str


SESSION_HASH_LEN = 16


def time_key(at: dt.datetime | None) -> str:
    """An event's time as text that sorts as corpus.previous_messages orders times (no time
    first). Times are naive, to the second (clock.py); isoformat pads the year to four digits."""
    return (at or dt.datetime.min).isoformat()


def session_time_term(session: str, at: dt.datetime | None) -> str:
    """The `session_time` term of an event: a digest of its session, so that one session's terms
    sit together in the lexicon whatever its name holds, then its time_key."""
    digest = hashlib.sha256(session.encode("utf-8", "replace")).hexdigest()[:SESSION_HASH_LEN]
    return f"{digest} {time_key(at)}"


def stored_session_event(docnum: int, fields: dict[str, Any]) -> StoredEvent:
    return StoredEvent(docnum, _stored_event(fields), fields.get("context_digest") or "")


def context_digest(context: str) -> str:
    """What the index keeps of an event's context: enough to tell whether it changed."""
    return hashlib.sha256(context.encode("utf-8", "replace")).hexdigest()[:16]


def _stored_event(fields: dict[str, Any]) -> Document:
    """An event document as indexed, from its stored fields (its context left empty): what an
    event indexed again with a new preceding message is written from, so every field a search
    filters on must come back (its projects, too)."""
    role, text = fields.get("role") or "", fields.get("text") or ""
    return Document(
        key=fields["key"],
        path=fields["path"],
        kind=EVENT,
        title=fields.get("note") or "",
        body=f"{role}: {text}",
        event_id=fields.get("event_id") or "",
        text=text,
        role=role,
        session=fields.get("session") or "",
        at=_stored_at(fields),
        strength=float(fields.get("strength", 1.0)),
        reinforcement=float(fields.get("reinforcement", 0.0)),
        status=fields.get("status") or "active",
        projects=_stored_projects(fields),
    )


def _stored_at(fields: dict[str, Any]) -> dt.datetime | None:
    at_raw = fields.get("at") or ""
    try:
        return dt.datetime.fromisoformat(at_raw) if at_raw else None
    except ValueError:
        return None


def _stored_projects(fields: dict[str, Any]) -> tuple[str, ...]:
    stored = fields.get("projects")
    if not stored:
        return ()  # most memories are global: a context makes a hundred hits or more
    return tuple(filter(None, stored.split(",")))


def hit(r: Any) -> Hit:
    return hit_fields(r.fields(), r.score)  # one read of the stored fields, not one per field


def hit_fields(r: dict[str, Any], score: float | None) -> Hit:
    """A hit from a document's stored fields `r` (read once) and its score.

    Made by filling a new instance's dictionary at once rather than through the frozen
    dataclass's `__init__`, which sets each field with `object.__setattr__`, most of what making
    a hit costs, and a context makes one for each of its hundred-odd candidates. Every field is
    given here and Hit has no `__post_init__`, so the hit is the one `Hit(...)` makes, frozen as
    it (tests/test_index.py)."""
    made = object.__new__(Hit)
    vars(made).update(
        key=r["key"],
        path=r["path"],
        kind=r["kind"],
        score=float(score or 0.0),
        title=(r.get("note") if r.get("kind") == "event" else r.get("title")) or "",
        status=r.get("status") or "active",
        event_id=r.get("event_id") or "",
        text=r.get("text") or "",
        role=r.get("role") or "",
        session=r.get("session") or "",
        at=_stored_at(r),
        strength=float(r.get("strength", 1.0)),
        reinforcement=float(r.get("reinforcement", 0.0)),
        projects=_stored_projects(r),
        excerpt_floor=int(r.get("excerpt_floor") or 0),
    )
    return made


def segment_notes(leaf: Any) -> list[tuple[int, NoteRecord]]:
    """The note documents of one segment, by document number (deleted ones too)."""
    if ("kind", NOTE) not in leaf:
        return []
    records = []
    for docnum in leaf.postings("kind", NOTE).all_ids():
        stored = leaf.stored_fields(docnum)
        aliases, tags, sources = stored.get("listing") or ((), (), 0)
        record = NoteRecord(
            path=stored["path"],
            title=stored.get("title") or "",
            status=stored.get("status") or "active",
            aliases=tuple(aliases),
            tags=tuple(tags),
            sources=int(sources),
            strength=float(stored.get("strength", 1.0)),
        )
        records.append((docnum, record))
    return records
