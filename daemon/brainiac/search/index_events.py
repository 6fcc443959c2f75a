"""What the search index is asked of its events besides a search: each segment's event key ->
document number table, every event's text (recall by meaning reads them once), a session's
events in time (neighbours.py), and the documents per project.

Functions over a searcher, and the tables the `Index` keeps (`EventTables`): the `Index` calls
them under the lock its searcher is swapped under, and keeps what is worth keeping per searcher
in its memo (index.py). No Whoosh import: the searcher and its segment readers come from the
`Index`, and whoosh_internals.py reads the stored fields.
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Collection, Iterable, Iterator, MutableSequence
from typing import Any

from brainiac.search import whoosh_internals
from brainiac.search.corpus import EVENT, thread
from brainiac.search.index_documents import (
    SESSION_HASH_LEN,
    StoredEvent,
    session_time_term,
    stored_session_event,
)
from brainiac.search.index_open import segments
from brainiac.search.key_numbers import KeyNumbers

# The events `EventReading` reads under the search lock at a time: a search waits for one piece
# at most (a few milliseconds of stored-field reads), never for what the reader does with them.
PIECE_EVENTS = 1000
# And the characters of text a piece holds at most (its last event may pass it): the reader
# digests each text and lets it go, so that no more than a piece's are ever held at once.
PIECE_CHARS = 32_768


class EventTables:
    """Each segment's key -> number table of its live events, read once (`event_table`) and
    kept until a merge removes the segment (as `Index.notes` keeps its notes): a term lookup
    per key, for every one of a prompt's nearest events, would cost more than the search."""

    def __init__(self) -> None:
        self._tables: dict[str, KeyNumbers] = {}

    def __len__(self) -> int:
        return len(self._tables)

    def docnums(self, searcher: Any, keys: Iterable[str]) -> dict[str, int]:
        """The document numbers in `searcher` of the live event documents keyed `keys` (a key
        not indexed is left out)."""
        leaves = segments(searcher)
        tables: dict[str, KeyNumbers] = {}
        found: dict[str, int] = {}
        wanted = list(keys)
        for leaf, offset in leaves:
            table = tables[leaf.segment().segment_id()] = self.kept(leaf)
            deletions = leaf.has_deletions()  # a segment's deletions grow after its table is read
            for key, docnum in table.found(wanted):
                if not (deletions and leaf.is_deleted(docnum)):
                    found[key] = offset + docnum
        self._tables = tables
        return found

    def kept(self, leaf: Any) -> KeyNumbers:
        """`leaf`'s key -> number table of its events (`event_table`), read once and kept until
        a merge removes the segment."""
        segment = leaf.segment().segment_id()
        table = self._tables.get(segment)
        if table is None:
            table = self._tables[segment] = event_table(leaf)
        return table

    def keys_in(self, searcher: Any, docs: Collection[int]) -> frozenset[str]:
        """The keys of the live events in `searcher` whose document numbers are in `docs`."""
        keys: set[str] = set()
        for leaf, offset in segments(searcher):
            table = self.kept(leaf)
            keys.update(k for k, d in table.items() if offset + d in docs)
        return frozenset(keys)

    def keep(self, segment: str, table: KeyNumbers) -> None:
        self._tables[segment] = table

    def segment_events(
        self, searcher: Any, known: Collection[str]
    ) -> tuple[list[str], dict[str, list[tuple[str, str, str]]]]:
        """`searcher`'s segments, in order, and the events of each one not in `known`, each
        one's table kept on the way (Index.segment_events)."""
        leaves = segments(searcher)
        order: list[str] = []
        read: dict[str, list[tuple[str, str, str]]] = {}
        for leaf, _ in leaves:
            segment = leaf.segment().segment_id()
            order.append(segment)
            if segment not in known:
                keys: list[str] = []
                numbers = array("l")
                read[segment] = list(read_event_table(leaf, keys, numbers))
                self._tables[segment] = KeyNumbers(keys, numbers)
        return order, read


class EventReading:
    """Every event of an index, read a piece at a time (Index.each_event): each piece from the
    searcher open when it is read, under the search lock, which is let go between pieces.

    A segment's live events are listed when its first piece is read, and its table is kept
    (`EventTables.keep`) once they all are. A commit between two pieces leaves a segment being
    read as it is (segments never change but for their deletions, which the sync that made them
    tells the reader of events); a segment merged away before it was read whole is left, and
    its events are read from the segment that holds them now, so an event may come twice (its
    last reading counts, as in semantic.py's table) but none is missed.
    """

    def __init__(self, tables: EventTables) -> None:
        self._tables = tables
        self._done: set[str] = set()
        self._segment: str | None = None
        self._keys: list[str] = []
        self._numbers = array("l")

    def piece(self, searcher: Any) -> list[tuple[str, str, str]] | None:
        """The next events of `searcher`, as (key, text, role), at most `PIECE_EVENTS` or
        about `PIECE_CHARS` of text; None when every segment has been read."""
        leaves = {leaf.segment().segment_id(): leaf for leaf, _ in segments(searcher)}
        segment = self._segment
        if segment is None or segment not in leaves:  # none begun, the last done, merged away
            segment = next((s for s in leaves if s not in self._done), None)
            if segment is None:
                return None
            self._segment, self._keys = segment, []
            self._numbers = live_events(leaves[segment])
        stored = whoosh_internals.stored_fields_reader(leaves[segment])
        at = len(self._keys)
        events: list[tuple[str, str, str]] = []
        held = 0
        for docnum in self._numbers[at : at + PIECE_EVENTS]:
            events.append(_event(stored(docnum)))
            held += len(events[-1][1])
            if held >= PIECE_CHARS:
                break
        self._keys += [key for key, _, _ in events]
        if len(self._keys) == len(self._numbers):
            self._tables.keep(segment, KeyNumbers(self._keys, self._numbers))
            self._done.add(segment)
            self._segment = None
        return events


def live_events(leaf: Any) -> array[int]:
    """The document numbers within `leaf`'s segment of its live events, ascending."""
    numbers = array("l")
    if ("kind", EVENT) in leaf:
        deletions = leaf.has_deletions()
        for docnum in leaf.postings("kind", EVENT).all_ids():
            if not (deletions and leaf.is_deleted(docnum)):
                numbers.append(docnum)
    return numbers


def _event(fields: dict[str, Any]) -> tuple[str, str, str]:
    """An event's (key, text, role) from its stored fields."""
    # The role as one string a speaker, before the next event is read: a copy of its own per
    # event would stay in the heap among the keys kept, freed or not.
    return fields["key"], fields.get("text") or "", sys.intern(fields.get("role") or "")


def event_table(leaf: Any) -> KeyNumbers:
    """One segment's live events, key -> document number within the segment, read from their
    stored fields."""
    keys: list[str] = []
    numbers = array("l")
    for _ in read_event_table(leaf, keys, numbers):
        pass
    return KeyNumbers(keys, numbers)


def read_event_table(
    leaf: Any, keys: list[str], numbers: MutableSequence[int]
) -> Iterator[tuple[str, str, str]]:
    """One segment's live events, their keys and document numbers within the segment appended
    to `keys` and `numbers`, each one's (key, text, role) given on the way."""
    stored = whoosh_internals.stored_fields_reader(leaf)
    for docnum in live_events(leaf):
        event = _event(stored(docnum))
        keys.append(event[0])
        numbers.append(docnum)
        yield event


def project_counts(searcher: Any) -> dict[str, int]:
    """Documents per scope term in `searcher` (Index.project_counts)."""
    reader = searcher.reader()
    return (
        {
            (t.decode("utf-8") if isinstance(t, bytes) else str(t)): int(
                searcher.doc_frequency("projects", t)
            )
            for t in reader.lexicon("projects")
        }
        if "projects" in reader.schema.names()
        else {}
    )


def session_events_keyed(searcher: Any, keys: Iterable[str]) -> list[StoredEvent]:
    """The events of `searcher` keyed `keys` that have a session (Index.session_events_keyed)."""
    found: list[StoredEvent] = []
    for key in keys:
        for docnum in searcher.document_numbers(key=key):
            fields = searcher.stored_fields(docnum)
            if fields.get("kind") == EVENT and fields.get("session"):
                found.append(stored_session_event(docnum, fields))
    return found


def session_times(
    searcher: Any, session: str, start: str, end: str | None, limit: int | None
) -> list[str]:
    """The times at which `session` has events in `searcher` (Index.session_times)."""
    prefix = session_time_term(session, None)[:SESSION_HASH_LEN]
    out: list[str] = []
    reader = searcher.reader()
    if "session_time" not in reader.schema.names():
        return out
    for fieldname, term in reader.terms_from("session_time", f"{prefix} {start}".encode()):
        text = term.decode("utf-8") if isinstance(term, bytes) else str(term)
        if fieldname != "session_time" or not text.startswith(prefix):
            break
        time = text[SESSION_HASH_LEN + 1 :]
        if (end is not None and time >= end) or (limit is not None and len(out) >= limit):
            break
        out.append(time)
    return out


def session_events_at(searcher: Any, session: str, time: str) -> list[StoredEvent]:
    """The events of `session` at `time` in `searcher` (Index.session_events_at)."""
    term = f"{session_time_term(session, None)[:SESSION_HASH_LEN]} {time}"
    out: list[StoredEvent] = []
    for docnum in searcher.document_numbers(session_time=term):
        fields = searcher.stored_fields(docnum)
        if fields.get("kind") == EVENT and fields.get("session"):
            stored = stored_session_event(docnum, fields)
            if thread(stored.doc) == session:
                out.append(stored)
    return out
