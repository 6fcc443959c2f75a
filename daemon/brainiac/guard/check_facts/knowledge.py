"""What the memory knows that a response may speak of (`knowledge`): the fact lines of the core
identity, the short-term document and the notes the response is about, and facts stated in the
last events.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from brainiac.core.errors import BrainiacError
from brainiac.formats import events as ev
from brainiac.formats import ltm, stm
from brainiac.guard.check_facts.clauses import mentions_phrase, stems
from brainiac.guard.check_facts.verdicts import Known
from brainiac.language import claims, extract, facts, lexicon
from brainiac.language.facts import Superseded
from brainiac.store import projects
from brainiac.store.vault import ARCHIVE_DIR, IDENTITY, LONG_TERM_DIR, SHORT_TERM

if TYPE_CHECKING:
    from brainiac.guard.within import Within
    from brainiac.search.index_documents import Hit
    from brainiac.search.memory_protocol import MemoryLike


RECENT_EVENTS = 3


CANDIDATE_NOTES = 40


_NAMED_ONLY_TAGS = frozenset(
    {
        "person",
        "people",
        "project",
        "organisation",
        "organization",
        "company",
        "client",
        "pet",
        # the notes the promotion job makes for a name it keeps meeting (jobs/promotion.py)
        "entity",
    }
)


_TITLE_GENERIC = lexicon.word_set("project team trip the a an my our plan")


def knowledge(
    memory: MemoryLike, text: str, hits: Sequence[Hit] | None = None, within: Within | None = None
) -> list[Known]:
    """The facts a response could contradict (module docstring); `hits`: the search for `text`
    when the caller made it already (in `within`'s scope: `within` is the project checked in)."""
    known: list[Known] = []
    try:
        identity = memory.vault.read(IDENTITY).text
    except FileNotFoundError:
        identity = ""
    known += _from_lines(identity, 0, IDENTITY, None, ())
    doc = memory.short_term()
    section = doc.note.section("Facts")
    if section is not None:
        lines = doc.note.lines[section.heading_line + 1 : section.end_line]
        found = _from_lines("".join(lines), section.heading_line + 1, SHORT_TERM, None, ())
        if within is not None:
            found = _scoped_facts(within, "".join(lines), found)
        known += found
    if hits is None:
        hits = memory.indexer.index.search(text, limit=CANDIDATE_NOTES)
    for rel in _candidate_notes(hits):
        try:
            note = ltm.parse(memory.vault.read(rel).text, rel)
        except (OSError, BrainiacError):
            continue
        if note.private:
            continue
        s = note.note.section("Facts")
        if s is None:
            continue
        lines = note.note.lines[s.heading_line + 1 : s.end_line]
        mentions = _entity_mentions(note.title, note.aliases)
        tags = {t.lower() for t in note.tags}
        about_user = "user" in tags
        named_only = not about_user and bool(tags & _NAMED_ONLY_TAGS)
        for k in _from_lines("".join(lines), s.heading_line + 1, rel, note.title, mentions):
            known.append(dataclasses.replace(k, about_user=about_user, named_only=named_only))
    # In a project, its own newest events (another project's newer ones, named or not, neither
    # push them out nor override its facts): a context's recent window.
    scope = within.scope if within is not None else projects.Scope()
    recent = projects.recent(doc.events, RECENT_EVENTS, scope)
    return _with_recent_events(known, recent, doc)


def _scoped_facts(within: Within, section: str, found: Sequence[Known]) -> list[Known]:
    """The facts `found` in the short-term `section` (its text) that a context in the project
    shows (projects.scoped_digest), and those of the named projects' events, each of these as
    its project's: named by it, judging only a sentence that names it, as a project note's
    facts do (a fact of another project is no knowledge of this one's)."""
    shown = projects.scoped_digest(section, within.scope, within.sees)
    kept = {_fact_id(k) for k in _from_lines(shown, 0, SHORT_TERM, None, ())}
    out = []
    for k in found:
        if _fact_id(k) not in kept:
            continue
        name = within.named_project(k.block) if k.block else None
        if name is not None:
            k = dataclasses.replace(k, entity=name, mentions=(name.lower(),), named_only=True)
        out.append(k)
    return out


def _fact_id(k: Known) -> tuple[str, str, dt.datetime | None, str | None]:
    return (k.key, k.value, k.since, k.block)


def _candidate_notes(hits: Sequence[Hit]) -> list[str]:
    paths: list[str] = []
    for hit in hits:
        rel = hit.path
        if rel.startswith((LONG_TERM_DIR + "/", ARCHIVE_DIR + "/notes/")) and rel not in paths:
            paths.append(rel)
    return paths


def _entity_mentions(title: str, aliases: Sequence[str]) -> tuple[str, ...]:
    phrases = {title.lower(), *(a.lower() for a in aliases if a.strip())}
    for name in (title, *aliases):
        for word in name.split():
            word = word.replace("’", "'").rstrip("'").removesuffix("'s")
            if word[:1].isupper() and word.lower() not in _TITLE_GENERIC and len(word) > 2:
                phrases.add(word.lower())
    return tuple(sorted(phrases))


def _from_lines(
    text: str, offset: int, rel: str, entity: str | None, mentions: tuple[str, ...]
) -> list[Known]:
    out = []
    for line in facts.parse(text):
        f = line.fact
        if not f.key or not f.value or f.key.startswith(("title", "tags", "aliases")):
            continue
        out.append(
            Known(
                f.key,
                _plain(f.value),
                f.since,
                line.superseded,
                rel,
                offset + line.first + 1,
                f.source,
                entity,
                mentions,
            )
        )
    return out


def _plain(value: str) -> str:
    """A value as read: a link's shown text ("[[anna-berg|Anna Berg]]" is "Anna Berg")."""
    return re.sub(r"\[\[(?:[^\]|]*\|)?([^\]]*)\]\]", r"\1", value)


def _with_recent_events(
    known: list[Known], recent: list[ev.Event], doc: stm.ShortTerm
) -> list[Known]:
    """Facts the last events state are the newest knowledge: they override a stored value of the
    same key (which becomes its superseded history) or stand on their own."""
    lines = _event_lines(doc)
    for event in recent:
        for f in extract.facts(event.text, at=event.at, source=event.id, speaker=event.role):
            # a named project's short-term fact (guard/within.py) is none this event can move
            same = [
                k
                for k in known
                if _same_key(f.key, k) and not (k.file == SHORT_TERM and k.named_only)
            ]
            words = stems(event.text)
            about = [k for k in same if k.entity and mentions_phrase(words, k.mentions)]
            targets = about or same
            if len({k.entity for k in targets}) > 1:
                continue  # which project's deadline moved is not said
            line = lines.get(event.id, 0)
            if not targets:
                known.append(Known(f.key, f.value, f.since, (), SHORT_TERM, line, event.id))
                continue
            for old in targets:
                if claims.agree(claims.read(f.value), claims.read(old.value)) is not False:
                    continue
                history = (Superseded(old.value, old.since, f.since, old.block), *old.superseded)
                known[known.index(old)] = Known(
                    old.key,
                    f.value,
                    f.since,
                    history,
                    SHORT_TERM,
                    line,
                    event.id,
                    old.entity,
                    old.mentions,
                    old.about_user,
                    old.named_only,
                )
    return known


def _same_key(event_key: str, fact: Known) -> bool:
    """Whether a key found in an event names this fact: the same key, one within the other
    ("standup" and `standup time`), or the key with its entity's name ("atlas deadline")."""
    said = set(stems(event_key))
    key = set(stems(fact.key))
    if said <= key:
        return True
    names = {w for m in fact.mentions for w in stems(m)}
    return bool(said - key) and said - key <= names and key <= said


def _event_lines(doc: stm.ShortTerm) -> dict[str, int]:
    section = stm.log_section(doc.note)
    if section is None:
        return {}
    body = doc.note.lines[section.heading_line + 1 : section.end_line]
    return {
        loc.event.id: loc.first_line + 1
        for loc in ev.parse_lines(body, offset=section.heading_line + 1)
    }
