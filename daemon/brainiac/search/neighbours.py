"""An incremental sync's events with their neighbours' contexts: each event is indexed with the
message before it in its session, wherever either is filed, and a sync that adds, moves or
deletes an event sets again the context of the indexed event after it. Only the neighbours in
time of what a sync changed are read from the index, so its cost does not grow with the length
of its sessions, and a sync committed in batches (indexer.py) leaves the contexts a one-commit
sync gives: each batch reads the index as the batches before it left it.
"""

from __future__ import annotations

import contextlib
import datetime as dt
from collections.abc import Iterator

from brainiac.search import corpus
from brainiac.search.index import Index
from brainiac.search.index_documents import StoredEvent, context_digest, time_key

# How far before a changed time the events before it are looked for, widening in turn (the last:
# from the session's start). A conversation's messages are minutes apart, so the first usually
# finds the one before it; each step walks only that stretch of the session's times.
_LOOK_BACK = (dt.timedelta(hours=1), dt.timedelta(days=1), dt.timedelta(days=30), None)


def with_neighbours_contexts(
    index: Index, add: list[corpus.Document], delete: list[str]
) -> list[corpus.Document]:
    """An incremental sync's `add` with each event's context set to the message before it in its
    session, wherever either is filed (as corpus.previous_messages orders a session), plus the
    indexed events whose preceding message this sync changed: the one after an event added,
    moved or deleted (a forgotten message must not live on in the next one's context), and a
    session's opening message when the reply to it changed.

    Only the neighbours in time of what changed are read (index.session_times), so the cost of
    a sync does not grow with the length of its sessions."""
    replaced = {d.key for d in add} | set(delete)
    changed: dict[str, set[str]] = {}  # session -> the times at which it changed
    for d in add:
        if d.kind == corpus.EVENT and d.session:
            changed.setdefault(corpus.thread(d), set()).add(time_key(d.at))
    for old in index.session_events_keyed(k for k in replaced if "#" in k):
        changed.setdefault(corpus.thread(old.doc), set()).add(time_key(old.doc.at))
    if not changed:
        return add
    contexts: dict[str, str] = {}
    again: list[tuple[str, int, corpus.Document]] = []
    for session in sorted(changed):
        members = [d for d in add if d.kind == corpus.EVENT and corpus.thread(d) == session]
        window = _SessionWindow(index, session, replaced)
        for key, context, stored in window.contexts(changed[session], members):
            if stored is None:
                contexts[key] = context
            elif context_digest(context) != stored.context_digest:
                again.append((session, stored.docnum, corpus.with_context(stored.doc, context)))
    out = [corpus.with_context(d, contexts[d.key]) if d.key in contexts else d for d in add]
    return out + [doc for _, _, doc in sorted(again, key=lambda item: item[:2])]


class _SessionWindow:
    """One session's indexed events near the times a sync changed, read from the index once
    each, leaving out those the sync replaces or deletes."""

    def __init__(self, index: Index, session: str, replaced: set[str]) -> None:
        self.index = index
        self.session = session
        self.replaced = replaced
        self._at: dict[str, list[StoredEvent]] = {}

    def events_at(self, when: str) -> list[StoredEvent]:
        if when not in self._at:
            self._at[when] = [
                e
                for e in self.index.session_events_at(self.session, when)
                if e.doc.key not in self.replaced
            ]
        return self._at[when]

    def first_from(self, start: str, after: bool) -> str | None:
        """The first time at or after `start` (after it, if `after`) with an event kept."""
        while True:
            times = self.index.session_times(self.session, start, limit=8)
            for when in times:
                if not (after and when == start) and self.events_at(when):
                    return when
            if len(times) < 8:
                return None
            start, after = times[-1], True

    def last_before(self, when: str) -> str | None:
        """The last time before `when` with an event kept."""
        at = dt.datetime.fromisoformat(when)
        for span in _LOOK_BACK:
            start = ""
            if span is not None:
                with contextlib.suppress(OverflowError):
                    start = time_key(at - span)
            for earlier in reversed(self.index.session_times(self.session, start, end=when)):
                if self.events_at(earlier):
                    return earlier
            if not start:
                return None
        return None

    def contexts(
        self, times: set[str], members: list[corpus.Document]
    ) -> Iterator[tuple[str, str, StoredEvent | None]]:
        """(key, context, the stored event or None for one of `members`) for every event whose
        preceding message may have changed at `times`; `members` are the session's events this
        sync adds."""
        spans: list[tuple[str | None, str | None]] = []
        for when in sorted(times):
            spans.append((self.last_before(when), self.first_from(when, after=True)))
        opening = self.first_from("", after=False)
        for start, end in _merged(spans):
            yield from self._window(start, end, start is None or start == opening, members)

    def _window(
        self, start: str | None, end: str | None, opening: bool, members: list[corpus.Document]
    ) -> Iterator[tuple[str, str, StoredEvent | None]]:
        """Events from `start` to `end` (both kept times; None: the session's start or end):
        every one after `start` gets the text of the one before it; those at `start` keep
        theirs (nothing before them changed), except the session's opening message, which gets
        its reply's."""
        stored: list[StoredEvent] = []
        limit = None if end is None else end + "\x00"  # up to `end`, inclusive
        for when in self.index.session_times(self.session, start or "", end=limit):
            stored.extend(self.events_at(when))
        adds = [d for d in members if (start is None or time_key(d.at) > start)]
        adds = [d for d in adds if end is None or time_key(d.at) <= end]
        # Stable, the indexed first: the order corpus.previous_messages gives equal times.
        window: list[tuple[str, corpus.Document, StoredEvent | None]] = sorted(
            [(time_key(e.doc.at), e.doc, e) for e in stored]
            + [(time_key(d.at), d, None) for d in adds],
            key=lambda item: item[0],
        )
        reply = window[1][1].text if len(window) > 1 else ""
        if opening and len(window) == 1 and end is not None:
            # The opening message's reply lies past the span (the one after it went).
            after = self.first_from(end, after=True)
            reply = self.events_at(after)[0].doc.text if after is not None else ""
        for i, (when, doc, event) in enumerate(window):
            if i == 0 and opening:
                yield doc.key, reply, event
            elif i > 0 and (start is None or when > start):
                yield doc.key, window[i - 1][1].text, event


def _merged(spans: list[tuple[str | None, str | None]]) -> list[tuple[str | None, str | None]]:
    """Spans of times (None: open) joined where they overlap or touch."""
    out: list[tuple[str | None, str | None]] = []
    for start, end in sorted(spans, key=lambda s: s[0] or ""):
        if out and (out[-1][1] is None or start is None or start <= out[-1][1]):
            last_end = out[-1][1]
            out[-1] = (out[-1][0], None if end is None or last_end is None else max(end, last_end))
        else:
            out.append((start, end))
    return out
