"""What each vault file contributes to the index: documents, computed purely from its text.

A long-term note is one document (title, aliases, tags, body, links) and each verbatim event in it
is one more, so a single event can be found; each event in the short-term Event Log and in the
archive is a document as well. Keys are stable (`path` for a note, `path#event-id` for an event) and
each document carries a digest, so an edit re-indexes only the documents it changed.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from brainiac.formats import events as ev
from brainiac.formats import ltm, stm
from brainiac.search import excerpt_head
from brainiac.store import projects
from brainiac.store.vault import kind_of

NOTE = "note"
EVENT = "event"


@dataclass(frozen=True)
class Document:
    key: str
    path: str
    kind: str
    title: str = ""
    body: str = ""
    aliases: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    links: tuple[str, ...] = ()
    event_id: str = ""
    text: str = ""  # an event's verbatim text (the body adds the role for matching)
    # The message before an event, matched at a lower weight: the one before it in its session
    # wherever that is filed (previous_messages, as the indexer applies it), else the one
    # before it in its file.
    context: str = ""
    role: str = ""
    session: str = ""
    at: dt.datetime | None = None
    strength: float = ltm.DEFAULT_STRENGTH
    reinforcement: float = 0.0
    status: str = "active"
    projects: tuple[str, ...] = ()  # the scopes it is found in (projects.event_terms/note_terms)
    sources: int = 0  # a note's count of events (its Sources lines), for listing notes
    # A note's excerpt in a context is at least this long (excerpt_head.floor; 0: unknown).
    excerpt_floor: int = 0
    digest: str = field(default="", compare=False)

    def with_digest(self) -> Document:
        raw = repr(
            (
                self.key,
                self.kind,
                self.title,
                self.body,
                self.aliases,
                self.tags,
                self.links,
                self.event_id,
                self.text,
                self.context,
                self.role,
                self.session,
                self.at,
                self.strength,
                self.reinforcement,
                self.status,
                self.projects,
                self.sources,
                self.excerpt_floor,
            )
        )
        digest = hashlib.sha256(raw.encode("utf-8")).hexdigest()[:16]
        return Document(**{**self.__dict__, "digest": digest})


def documents(rel: str, text: str) -> list[Document]:
    """The index documents of one file. Raises NoteParseError for a note that cannot be parsed.
    A note marked `private: true` has none; whether its path is private (a private folder, a
    symlink into one) is the indexer's to ask first (privacy.refusal)."""
    kind = kind_of(rel)
    if kind is None:
        return []
    if kind == "stm":
        return _log_docs(rel, stm.parse(text, rel).events)
    parsed = ltm.parse(text, rel)
    if parsed.private:
        return []
    if kind == "archive" and parsed.note.section(stm.EVENT_LOG) is not None:
        # A monthly archive of events: its events are the documents, not the file.
        return _log_docs(rel, stm.event_log(parsed.note), status="archived")
    status = "archived" if kind == "archive" else parsed.status
    note_doc = Document(
        key=rel,
        path=rel,
        kind=NOTE,
        title=parsed.title,
        body=parsed.note.body,  # frontmatter is indexed through its own fields
        aliases=tuple(parsed.aliases),
        tags=tuple(parsed.tags),
        links=tuple(parsed.links),
        at=parsed.last_touched,
        strength=parsed.strength,
        reinforcement=parsed.reinforcement,
        status=status,
        projects=projects.note_terms(parsed.projects),
        sources=len(parsed.sources),
        excerpt_floor=excerpt_head.floor(parsed, rel),
    ).with_digest()
    # An event keeps its note's title as a label (shown as "from [[stem|Title]]", matched at context
    # weight), except in a session note promotion made: its title is a list of keywords and
    # the event line already names its session.
    label = "" if {"session", "entity"} & set(parsed.tags) else parsed.title
    sources = []
    previous: ev.Event | None = None
    for e in parsed.sources:
        # Promotion appends a session's events in order, so within one session the previous
        # source is the message this one answered (see _log_docs); across sessions it is not.
        same_session = (
            previous is not None
            and e.session
            and (previous.session, previous.project) == (e.session, e.project)
        )
        sources.append(
            _event_doc(
                rel,
                e,
                context=previous.text if same_session and previous is not None else "",
                title=label,
                status=status,
                strength=parsed.strength,
                reinforcement=parsed.reinforcement,
            )
        )
        previous = e
    return [note_doc, *sources]


def _log_docs(rel: str, events: Sequence[ev.Event], status: str = "active") -> list[Document]:
    """The documents of a log (the Event Log or an archive), where events follow each other.

    A message in a conversation often only makes sense with the one before it: an answer ("Since I
    was 17, I find it empowering") carries the facts while the question it answers ("How long have
    you been painting?") carries the words someone will search with later. So each logged event is
    also matched on the text of the event just before it, in a field of lower weight, so its own
    words still count most. Only the previous event is used: appending to a log then never changes
    a document that is already indexed. (A note's sources get the same within a session.)
    """
    docs = []
    # Per project: the events of two projects worked on side by side interleave in the log,
    # and one project's message answers nothing of another's (nor may its words find it).
    previous: dict[str | None, str] = {}
    for e in events:
        docs.append(_event_doc(rel, e, status=status, context=previous.get(e.project, "")))
        previous[e.project] = e.text
    return docs


def _event_doc(
    rel: str,
    event: ev.Event,
    *,
    context: str = "",
    title: str = "",
    status: str = "active",
    strength: float = ltm.DEFAULT_STRENGTH,
    reinforcement: float = 0.0,
) -> Document:
    return Document(
        key=f"{rel}#{event.id}",
        path=rel,
        kind=EVENT,
        title=title,
        body=f"{event.role}: {event.text}",
        event_id=event.id,
        text=event.text,
        context=context,
        role=event.role,
        session=event.session or "",
        at=event.at,
        strength=strength,
        reinforcement=reinforcement,
        status=status,
        projects=projects.event_terms(event),
    ).with_digest()


def previous_messages(events: Iterable[Document]) -> dict[str, str]:
    """For each event document with a session, the text of the message before it in that
    session, across every file (keyed by document key; "" for a session's first message).

    A conversation's order is its events' times; events of the same time keep the order they
    are given in (a log's order). Where an event is filed does not change what it answered:
    promotion files a session's turns in a session note and, some of them, in entity notes, and
    an answer matched with the wrong preceding turn loses the words of its question.
    """
    sessions: dict[str, list[Document]] = {}
    for d in events:
        if d.kind == EVENT and d.session:
            sessions.setdefault(thread(d), []).append(d)
    out: dict[str, str] = {}
    for members in sessions.values():
        members.sort(key=lambda d: d.at or dt.datetime.min)  # stable: ties keep their order
        previous = ""
        for d in members:
            out[d.key] = previous
            previous = d.text
        if len(members) > 1:
            # A session's opening message answers nothing; the reply to it is what echoes it.
            out[members[0].key] = members[1].text
    return out


def thread(doc: Document) -> str:
    """The conversation an event is a message of: its session within its project. Two projects
    may name a session alike ("session 1"), and one's messages answer nothing of the other's;
    a global event's is its session as named."""
    named = [p for p in doc.projects if p != projects.GLOBAL]
    return f"{doc.session}\x1f{named[0]}" if named and doc.session else doc.session


def with_context(doc: Document, context: str) -> Document:
    return doc if doc.context == context else replace(doc, context=context)
