"""Where each event promotion consolidates goes: a plan, made before anything is written.

Each event goes to exactly one place:

1. the note of a person, project or topic it names (title or alias, via `names.NameBook`), or the
   one note that already holds a fact it states (so "the deadline moved to Monday" joins the note
   that has the deadline);
2. otherwise, events of one session that keep naming someone new (in three events or more, not
   a speaker) start a note for that name, whole ("J.K. Rowling", "The Name of the Wind"); the
   events of earlier sessions' topic notes that said it count too, and move to it (`Plan.take`:
   a name in two sessions recurs); a name said once or twice stays in its topic note, where
   what is said about it is;
3. otherwise, the rest of the session, whole, goes on in the note an earlier run started for
   it, or becomes a new note titled with what happened in it and its date (headline.py), which
   links the earlier topic note it continues, the nearest in meaning (continuing.py);
4. small talk with nothing to remember ("ok", "thanks!") goes to the monthly archive.

An exchange is never split: the turn that answers an event placed by what it names goes with
it, and so does the question it answers ("What did you name him?" / "I named him Buddy!" /
"Congrats!" read apart lose their meaning).

A `Plan` lists the notes to write (`Target`: their events, facts and links), the events leaving
earlier notes for a name's new note, the archive's month files and the events the Event Log
loses; moving.py carries it out, written ahead.

One concept: where each event goes. Every rule reads and grows the same state (the notes'
names, the targets planned so far, the file names taken, the topic notes a later session may
continue), and the rules are tried in order for each event; exchanges (segments.py) and the
note a topic continues (continuing.py) are apart already.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import itertools
import json
import re
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from brainiac.core.errors import BrainiacError
from brainiac.formats import events as ev
from brainiac.formats import ltm
from brainiac.language import answering, extract, headline, lexicon, mentions, observe, topics
from brainiac.lifecycle.jobs import consolidate, continuing, segments
from brainiac.lifecycle.jobs.reflection import SELF_ROLE
from brainiac.store import projects, safe_io
from brainiac.store.names import Entry, NameBook, filename_for, link, markdown_names, normalise
from brainiac.store.vault import ARCHIVE_DIR, LONG_TERM_DIR

if TYPE_CHECKING:
    from brainiac.search.memory_protocol import MemoryLike


# The session label an import gives a titled conversation: its title and the start of its id.
_IMPORTED_TITLE_RE = re.compile(r"^(.+?)\s+[0-9a-f]{8}$")


# Several events, so a note about a name is more than a stub: a name said once or twice is read
# best in the conversation it was said in (a 1-event "Oscar" note says nothing of whose he is).
MIN_EVENTS_FOR_NEW_ENTITY = 3


_MAX_TAGS = 3

_SMALL_TALK_CHARS = 40  # "ok", "thanks!", "haha yes": no content word and short


@dataclass
class Target:
    rel: str
    title: str
    create: bool
    events: list[str] = field(default_factory=list)  # rendered event lines
    tags: list[str] = field(default_factory=list)
    related: list[str] = field(default_factory=list)  # [[links]] to the other notes it names
    # With an LLM configured: its summary of the note as this run leaves it (moving.py asks it
    # before anything is written, so the note's size is checked with it, and a rerun of an
    # interrupted plan writes the same one).
    summary: str | None = None

    def events_of(self, events: Sequence[ev.Event]) -> list[str]:
        """The rendered lines of `events`, as this target holds them."""
        lines = {ev.parse_text(line)[0].id: line for line in self.events}
        return [lines[e.id] for e in events]


@dataclass
class Plan:
    made_at: str
    targets: list[Target] = field(default_factory=list)
    archive: dict[str, list[str]] = field(default_factory=dict)  # month file -> event lines
    ledger: dict[str, list[str]] = field(default_factory=dict)  # month file -> "went to" lines
    remove: list[str] = field(default_factory=list)  # event ids leaving the Event Log
    # note -> ids of events leaving its Sources for a note founded for a name they say (a name
    # said again in a later session): written after the note they go to, so never lost.
    take: dict[str, list[str]] = field(default_factory=dict)

    def save(self, path: Path) -> None:
        safe_io.replace_file(path, json.dumps(asdict(self), indent=1).encode("utf-8"))

    @classmethod
    def load(cls, path: Path) -> Plan:
        raw = json.loads(path.read_text(encoding="utf-8"))
        return cls(
            raw["made_at"],
            [Target(**t) for t in raw["targets"]],
            raw["archive"],
            raw["ledger"],
            raw["remove"],
            raw.get("take", {}),
        )


def make_plan(
    leaving: Sequence[ev.Event],
    book: NameBook,
    all_events: Sequence[ev.Event],
    now: dt.datetime,
    memory: MemoryLike,
) -> Plan:
    plan = Plan(now.isoformat(timespec="seconds"), remove=[e.id for e in leaving])
    table = book.active()
    # The notes an event may join by what it names: in a project, its own and the global ones
    # (names.open_to); a global event, any.
    by_project: dict[str | None, tuple[dict[str, Entry], dict[str, Entry]]] = {
        None: (table, _fact_homes(table))
    }
    targets: dict[str, Target] = {}
    # Obsidian links by file name across the whole vault, so a new note's name must be free there.
    taken = markdown_names(memory.vault) | {e.rel.rsplit("/", 1)[-1] for e in book.entries()}
    roles = {normalise(e.role) for e in all_events}
    unplaced: list[ev.Event] = []
    # Per project, the last event placed by what it names: the projects' turns interleave in
    # the log, and a turn of one never answers another's.
    previous: dict[str | None, tuple[ev.Event, Entry]] = {}
    # Each event's turn before it (in its project), so an exchange is told by its turns, not by
    # the order of what is left unplaced (an event between them may have gone to a note by name).
    said_in: dict[str | None, list[ev.Event]] = {}
    for e in leaving:
        said_in.setdefault(e.project, []).append(e)
    turn_before = {b.id: a.id for turns in said_in.values() for a, b in itertools.pairwise(turns)}
    for event in leaving:
        if event.role == SELF_ROLE:  # brainiac's own notes (an expired working memory)
            plan.archive.setdefault(_month_file(event, now), []).append(ev.render(event))
            continue
        if event.project not in by_project:
            own = book.active(event.project)
            by_project[event.project] = (own, _fact_homes(own))
        named, fact_homes = by_project[event.project]
        mentioned = book.mentions(event.text, named, sessions={projects.session_key(event)})
        home = _holder_of_fact(event, mentioned) or (
            mentioned[0] if mentioned else _fact_home(event, fact_homes)
        )
        placed_by_name = home is not None
        last = previous.pop(event.project, None)
        if home is None and last is not None and segments.replies_to(event, last[0]):
            # The answer goes with its question: an exchange read apart loses its meaning (the
            # question has the words someone will search with, the answer the facts).
            home = last[1]
        if placed_by_name and home is not None:
            previous[event.project] = (event, home)
        if home is None:
            unplaced.append(event)
            continue
        target = targets.setdefault(home.rel, Target(home.rel, home.title, create=False))
        at = _last_of(unplaced, event.project) if placed_by_name else -1
        asked = unplaced[at] if at >= 0 else None
        if asked and turn_before.get(event.id) == asked.id and segments.asks_for(event, asked):
            target.events.append(ev.render(unplaced.pop(at)))  # the question it answers
        target.events.append(ev.render(event))
        target.related += [link(m.rel, m.title) for m in mentioned if m.rel != home.rel]
    topic_notes = [e for e in {e.rel: e for e in table.values()}.values() if "session" in e.tags]
    # The names notes answer to: a new note's title must be new.
    titles = _Titles({p: named for p, (named, _) in by_project.items()})
    sessions = {projects.group_key(g[0]): g for g in _by_session(leaving)}
    place = _Placing(targets, plan, taken, roles, now, turn_before, memory, topic_notes, sessions)
    for group in _by_session(unplaced):
        _place_new(group, place, titles)
    plan.targets = list(targets.values())
    _each_in_one_place(plan)
    plan.ledger = ledger_of(plan.targets, now)
    return plan


def _last_of(events: Sequence[ev.Event], project: str | None) -> int:
    """The index of the last of `events` said in `project`, -1 when none is."""
    for i in range(len(events) - 1, -1, -1):
        if events[i].project == project:
            return i
    return -1


def _each_in_one_place(plan: Plan) -> None:
    """Keep the first place of an event the plan would write twice. A save from an older copy
    can bring an event back into a note after journal.py's survey found it missing and put it
    back in the Event Log: the name founded here then takes it from that note (`Plan.take`) and
    from the Event Log both, and its note would hold it twice."""
    seen: set[str] = set()

    def first_time(line: str) -> bool:
        event_id = ev.parse_text(line)[0].id
        new = event_id not in seen
        seen.add(event_id)
        return new

    for target in plan.targets:
        target.events = [line for line in target.events if first_time(line)]
    for month, lines in plan.archive.items():
        plan.archive[month] = [line for line in lines if first_time(line)]


def ledger_of(targets: Sequence[Target], now: dt.datetime) -> dict[str, list[str]]:
    """Month file -> the "went to" line of each event placed in a note."""
    ledger: dict[str, list[str]] = {}
    for target in targets:
        for line in target.events:
            event = ev.parse_text(line)[0]
            ledger.setdefault(_month_file(event, now), []).append(
                f"- {_stamp(event)} {event.id} → {link(target.rel, target.title)}"
            )
    return ledger


@dataclass
class _Placing:
    """What placing a session's unclaimed events writes to and reads."""

    targets: dict[str, Target]
    plan: Plan
    taken: set[str]  # file names in use
    roles: set[str]  # the speakers, normalised
    now: dt.datetime
    turn_before: dict[str, str]  # event id -> the id of the turn before it
    memory: MemoryLike
    # The topic notes of conversations (tagged `session`): those of the vault, then the ones
    # this plan starts, so a later session (of this run or of an import) finds
    # the note it continues.
    topics: list[Entry]
    # Group key (projects.group_key) -> every event of the session leaving, those a note
    # claimed by name included: what the session's note is titled by.
    sessions: dict[str, list[ev.Event]]


class _Titles:
    """The names notes answer to (normalised), as an event of each project sees them: its own
    project's notes and the global ones (names.open_to), every note for a global event. A new
    note's title must be new among those: a title another project's note has would be told
    apart by its session, which the project alone would not do. Each new title is added."""

    def __init__(self, tables: Mapping[str | None, Mapping[str, Entry]]) -> None:
        """`tables`: the names of each project an unplaced event is of (make_plan's)."""
        self._seen = {project: set(names) for project, names in tables.items()}
        self._added: list[tuple[str, str | None]] = []

    def __contains__(self, found: tuple[str, str | None]) -> bool:
        title, project = found
        seen = self._seen[project]
        if title in seen:
            return True
        return any(t == title and p in (None, project) for t, p in self._added)

    def add(self, title: str, project: str | None) -> None:
        # A global note's title is every project's; a project's is its own and the global
        # events' (they see every note).
        self._seen[None].add(title)
        self._added.append((title, project))


def _per_project(key: str, project: str | None) -> str:
    """A plan target's key within its project: two projects' sessions or names alike are two
    notes, as each would have in a vault of its own."""
    return f"{key}\x1f{project}" if project else key


def _place_new(group: list[ev.Event], place: _Placing, titles: _Titles) -> None:
    """Events of one session that no note claims: entity notes, topic notes (the earlier one
    the session continues, or a new one), or the archive. `titles`: the names notes already
    answer to (normalised); each new note's title is added."""
    # An imported conversation stays one note: "Miso the cat" is one read, not a "Miso" note
    # beside a "Miso the cat" note holding half of it; its small talk stays in it.
    rest = list(group) if _imported(group[0].session) else _founding_entities(group, place)
    if not rest:
        return
    # A session is its label within its project: "session 1" of two projects is two sessions.
    # Events said outside a session join the note an earlier run started for their day: a new
    # one each run would share its title, and organization would merge it away into a stub.
    key = projects.group_key(rest[0])
    own = [e for e in place.topics if key in e.sessions]
    if own:
        # The rest of a session an earlier run began (the Event Log keeps the newest events, so
        # a session is often promoted in two runs) goes on in the note holding its start.
        _add_to(own[-1], rest, place)
        return
    # A session's talk stays in one note, never cut into topics, and a later session about the
    # same thing gets a note of its own that links the earlier one, never goes on in it: a
    # question reads the turns of one session together (what was said before an answer, the
    # news a reaction is to, the date it was said on), and spread over notes holding other
    # sessions, those compete for one context budget with talk of other days.
    # The title says what happened in the session, its news included where a name's note took
    # it ("Caroline went to an LGBTQ conference" with the conference in `LGBTQ`): the note
    # links the notes its session's other events went to.
    whole = place.sessions.get(key, group)
    answered, earlier = answering.turns_before(whole), answering.own_before(whole)
    observed = [
        o
        for e in whole
        for o in observe.observations(e, previous=answered.get(e.id), earlier=earlier.get(e.id))
    ]
    title = _session_title(whole, place.memory, place.roles, observed)
    project = rest[0].project
    if (normalise(title), project) in titles:
        # Two sessions about the same thing on one day: the session tells them apart (the same
        # title would make organization merge them, and a note per session would grow without
        # bound).
        title = _beside_session(title, rest)
    titles.add(normalise(title), project)
    tags = ["session", *_topic_tags(rest, place.roles)]
    target = _new_target(
        title,
        tags,
        place.targets,
        place.taken,
        key=_per_project(f"session:{rest[0].session or ''}:{title}", project),
    )
    target.events += [ev.render(e) for e in rest]
    target.related += _homes_of(ev.ids(whole) - ev.ids(rest), place.targets, target)
    # The earlier topic note this session continues, by meaning where this process has the
    # model loaded (the daemon), else by words (continuing.py).
    semantic = getattr(place.memory, "semantic_if_open", None)
    before = continuing.continued(title, _in_project(place.topics, key), place.roles, semantic)
    if before is not None:
        target.related.append(link(before.rel, before.title))
    place.topics.append(
        Entry(
            target.rel, title, (normalise(title),), "active", 0, tags=tuple(tags), sessions=(key,)
        )
    )


def _homes_of(moved: set[str], targets: dict[str, Target], besides: Target) -> list[str]:
    """Links to the notes this plan gives any of the `moved` events, `besides` aside."""
    if not moved:  # an imported conversation, or a session no note claimed any of
        return []
    return [
        link(t.rel, t.title)
        for t in targets.values()
        if t is not besides and moved & {ev.parse_text(line)[0].id for line in t.events}
    ]


def _add_to(entry: Entry, events: Sequence[ev.Event], place: _Placing) -> None:
    """Events go on in an existing topic note (of the vault, or one this plan starts)."""
    made = next((t for t in place.targets.values() if t.rel == entry.rel), None)
    target = made or place.targets.setdefault(
        entry.rel, Target(entry.rel, entry.title, create=False)
    )
    target.events += [ev.render(e) for e in events]
    key = projects.group_key(events[0])
    if key not in entry.sessions:
        grown = dataclasses.replace(entry, sessions=(*entry.sessions, key))
        place.topics[:] = [grown if e.rel == entry.rel else e for e in place.topics]


def _in_project(topics: Sequence[Entry], key: str) -> list[Entry]:
    """The topic notes of the project a group's key (projects.group_key) is in: one project's
    talk never goes on in another's note."""
    project = key.partition("\x1f")[2]
    return [e for e in topics if all(k.partition("\x1f")[2] == project for k in e.sessions)]


def _topic_tags(events: Sequence[ev.Event], speakers: Collection[str]) -> list[str]:
    """Tags from what the events are about (the words of their key phrases: "pottery", "class"),
    never the words said most (an opinion, "awesome"; a verb, "took"; a filler, "able")."""
    about = topics.key_phrases([e.text for e in events], 2, {*speakers, *(e.role for e in events)})
    words = [w.lower() for phrase in about for w in phrase.split()]
    return list(dict.fromkeys(w for w in words if w.replace("-", "").isalpha()))[:_MAX_TAGS]


def _founding_entities(group: list[ev.Event], place: _Placing) -> list[ev.Event]:
    """Files the events of a session that are about a name it mentions often into that name's
    new entity note, each with the rest of its exchange, and its small talk into the archive;
    returns the rest, in order."""
    counts: Counter[str] = Counter()
    names: dict[str, str] = {}
    # A name founds a note only if it is a name mid-sentence somewhere in the group, as
    # mentions.confirmed_names tells ("Yeah", "Wow" and "Hope" open sentences).
    confirmed = mentions.confirmed_names([e.text for e in group], normalise)
    keys_of: list[list[str]] = []
    for event in group:
        keys = list(dict.fromkeys(normalise(x) for x in mentions.entities(event.text)))
        keys = [k for k in keys if k and not _speaker(k, place.roles) and k in confirmed]
        keys_of.append(keys)
        for entity in mentions.entities(event.text):
            names.setdefault(normalise(entity), entity)
        counts.update(keys)
    # "The Name of the Wind" opening a sentence is read "Name of the Wind" ("The" opens many):
    # one name, under its longer spelling.
    for keys in keys_of:
        keys[:] = dict.fromkeys(f"the {k}" if f"the {k}" in counts else k for k in keys)
    counts = Counter(k for keys in keys_of for k in set(keys))
    # A name said before, in another session, counts the events that said it there too (a
    # name in two sessions recurs); they move to its note with it (`Plan.take`).
    sizes: dict[str, int] = {}  # note -> how many events it holds
    said_before = earlier_mentions(
        [k for k, n in counts.items() if n < MIN_EVENTS_FOR_NEW_ENTITY],
        projects.group_key(group[0]),
        place,
        sizes,
    )
    founding = {
        k for k, n in counts.items() if n + len(said_before.get(k, ())) >= MIN_EVENTS_FOR_NEW_ENTITY
    }
    while True:
        homes = _entity_homes(group, keys_of, founding, place.turn_before)
        held = Counter(homes.values())
        # An event goes to one name, so a name can keep fewer events than it was said in: below
        # the floor, it founds nothing and its events go to their other names or stay.
        thin = {
            k for k in founding if held[k] + len(said_before.get(k, ())) < MIN_EVENTS_FOR_NEW_ENTITY
        }
        founding -= thin
        # A note whose every event would go to names keeps them: it is about them already, and
        # emptied it would be a title over nothing (and every link to it would lead nowhere).
        taken = Counter(rel for k in founding for rel, _t, _e in said_before.get(k, ()))
        emptied = {rel for rel, n in taken.items() if n >= sizes[rel]}
        said_before = {k: [x for x in v if x[0] not in emptied] for k, v in said_before.items()}
        if not thin and not emptied:
            break
    for name in sorted(founding & said_before.keys()):
        target = _new_target(
            names[name],
            ["entity"],
            place.targets,
            place.taken,
            key=_per_project(f"entity:{name}", group[0].project),
        )
        for rel, title, event in said_before[name]:
            target.events.append(ev.render(event))
            place.plan.take.setdefault(rel, []).append(event.id)
            target.related.append(link(rel, title))
        target.related = list(dict.fromkeys(target.related))
    rest: list[ev.Event] = []
    for i, event in enumerate(group):
        home = homes.get(i)
        if home is not None:
            key = _per_project(f"entity:{home}", event.project)
            target = _new_target(names[home], ["entity"], place.targets, place.taken, key=key)
            target.events.append(ev.render(event))
        elif not mentions.keywords([event.text], 1) and len(event.text) < _SMALL_TALK_CHARS:
            month = _month_file(event, place.now)
            place.plan.archive.setdefault(month, []).append(ev.render(event))
        else:
            rest.append(event)
    return rest


def earlier_mentions(
    keys: Sequence[str], session: str, place: _Placing, sizes: dict[str, int]
) -> dict[str, list[tuple[str, str, ev.Event]]]:
    """Name -> the events of other sessions' topic notes that say it (note path, its title,
    the event), each with the rest of its exchange there, in order. Not from a note a person
    has edited (their note stays as they wrote it); an event goes to the first name it says.
    `sizes` gets the number of events of each note read."""
    wanted = set(keys)
    holders = [
        e
        for e in _in_project(place.topics, session)
        if wanted & set(e.said) and session not in e.sessions
    ]
    out: dict[str, list[tuple[str, str, ev.Event]]] = {}
    claimed: set[str] = set()
    for entry in holders:
        try:
            text = place.memory.vault.read(entry.rel).text
            note = ltm.parse(text, entry.rel)
        except (OSError, BrainiacError):
            continue
        if note.private or consolidate.edited_by_person(text):
            continue
        sources = note.sources
        keys_of = [
            [k for k in dict.fromkeys(map(normalise, mentions.entities(e.text))) if k]
            for e in sources
        ]
        # Names as _founding_entities reads them: said mid-sentence, not a speaker ("Ha" and
        # "Glad" open sentences).
        confirmed = set(entry.said)
        keys_of = [
            [k for k in keys if k in confirmed and not _speaker(k, place.roles)] for keys in keys_of
        ]
        chain = {b.id: a.id for a, b in itertools.pairwise(sources)}
        homes = _entity_homes(sources, keys_of, wanted & set(entry.said), chain)
        sizes[entry.rel] = len(sources)
        for i in sorted(homes):
            if sources[i].id not in claimed:
                claimed.add(sources[i].id)
                out.setdefault(homes[i], []).append((entry.rel, entry.title, sources[i]))
    return out


def _entity_homes(
    group: list[ev.Event],
    keys_of: list[list[str]],
    founding: set[str],
    turn_before: dict[str, str],
) -> dict[int, str]:
    """Index of an event in `group` -> the founding name it goes to: the first it names, or,
    for a turn that names none, the name of the exchange it is part of (the answer after an
    event placed by name, the question before it)."""
    homes: dict[int, str] = {}
    for i, keys in enumerate(keys_of):
        # The name it says first is what it is about ("The Name of the Wind beats anything by
        # J.K. Rowling" is a turn about the book).
        best = next((k for k in keys if k in founding), None)
        if best is not None:
            homes[i] = best
    for i, key in list(homes.items()):
        after, before = i + 1, i - 1
        if (
            after < len(group)
            and after not in homes
            and not keys_of[after]  # a turn naming someone else is about them
            and turn_before.get(group[after].id) == group[i].id
            and segments.replies_to(group[after], group[i])
            and segments.answers(group[after], group[i])
        ):
            homes[after] = key
        if (
            before >= 0
            and before not in homes
            and not keys_of[before]
            and turn_before.get(group[i].id) == group[before].id
            and segments.asks_for(group[i], group[before])
        ):
            homes[before] = key
    return homes


def _imported(session: str | None) -> bool:
    """Whether a session is a conversation an import brought in under its title."""
    titled = _IMPORTED_TITLE_RE.match(session or "")
    return titled is not None and any(c.isalpha() for c in titled.group(1))


def _speaker(key: str, roles: set[str]) -> bool:
    """Whether a name is one of the conversation's speakers, or what they are called for short
    ("Mel" for Melanie): a speaker is in every exchange, so a note about one would gather the
    whole conversation, not a topic. Two letters are
    enough when they start the name and the name is longer ("Jo" for Joanna)."""
    banned = topics.speaker_words(roles)
    # "Woah Joanna", "Hey Mel": a speaker's name inside a run of capitals is still the speaker.
    return key in roles or any(
        len(w) >= 2 and topics.is_speaker_word(w, banned) for w in key.split()
    )


def _new_target(
    title: str, tags: list[str], targets: dict[str, Target], taken: set[str], key: str
) -> Target:
    if key not in targets:
        name = filename_for(title, taken)
        taken.add(name)
        targets[key] = Target(f"{LONG_TERM_DIR}/{name}", title, create=True, tags=tags)
    return targets[key]


def _beside_session(title: str, events: Sequence[ev.Event]) -> str:
    """`title` with the session's name beside the date ("Pottery (chat 5, 2023-07-03)"), to tell
    apart two sessions that would have the same title; unchanged when the name is already in
    it (a label a person gave, an imported conversation's title) or there is none."""
    session = events[0].session or ""
    if not session or _readable(session) or _imported(session):
        return title
    dated = [e.at for e in events if e.at]
    if dated:
        day = dated[0].date().isoformat()
        return title.removesuffix(f" ({day})") + f" ({session}, {day})"
    return f"{title} ({session})"


def _session_title(
    events: Sequence[ev.Event],
    memory: MemoryLike,
    speakers: Collection[str] = (),
    observed: Sequence[observe.Observation] = (),
) -> str:
    """What happened in the events, as a phrase ("Caroline went to a LGBTQ support group
    (2023-05-08)", headline.title_of), after the session's name when that is a label a person
    gave it ("Atlas weekly - ...")."""
    texts = [e.text for e in events]
    session = events[0].session or ""
    if memory.llm.available:
        # Who said each message: a title names whose event it was ("Caroline's adoption").
        title = memory.llm.title([f"{e.role or 'user'}: {e.text}" for e in events])
        if title:
            return title
    dated = [e.at for e in events if e.at]
    day = f" ({dated[0].date().isoformat()})" if dated else ""
    titled = _IMPORTED_TITLE_RE.match(session)
    if titled and _imported(session):
        # An imported conversation keeps the title it had ("Planning the garden 6f1c2a9e").
        return f"{titled.group(1)}{day}"
    about = headline.title_of(events, observed)
    if not about:
        # Not a speaker's name: who talks is in every note, never what one is about.
        said = mentions.keywords(texts, 5)
        words = [w for w in said if normalise(w) not in speakers] or said
        about = words[0].capitalize() if words else ""
    if _readable(session):
        label = session.replace("-", " ").replace("_", " ").strip()
        label = label[0].upper() + label[1:]
        if about and about.lower() != label.lower():
            return f"{label} - {about}{day}"
        return f"{label}{day}"
    return f"{about or 'Notes'}{day}"


# Words that name a kind of conversation, not its topic: "session 11", "chat 3", "call".
_GENERIC_LABEL_WORDS = lexicon.word_set(
    "session sessions chat chats conversation conversations call calls meeting talk thread "
    "part day week episode turn round dialogue dialog discussion"
)


def _readable(session: str) -> bool:
    """A session label a person would recognise ("atlas-weekly"), not an id ("3f2a9c…") nor a
    number ("session 11")."""
    words = session.replace("-", " ").replace("_", " ").split()
    return (
        0 < len(words) <= 4
        and len(session) <= 40
        and all(w.isalpha() or w.isdigit() for w in words)
        and any(w.isalpha() and len(w) > 2 for w in words)
        and any(w.isalpha() and w.lower() not in _GENERIC_LABEL_WORDS for w in words)
    )


def _fact_homes(table: dict[str, Entry]) -> dict[str, Entry]:
    """Fact key -> the one active note holding it (keys held by several notes are ambiguous)."""
    homes: dict[str, Entry | None] = {}
    for entry in table.values():
        for key in entry.fact_keys:
            homes[key] = None if key in homes and homes[key] != entry else entry
    return {k: v for k, v in homes.items() if v is not None}


def _holder_of_fact(event: ev.Event, mentioned: Sequence[Entry]) -> Entry | None:
    """Of the notes an event names, the one that already holds a fact the event states ("Anna
    agreed to move the Atlas deadline" belongs with Atlas's deadline, not with Anna)."""
    stated = [f.key for f in extract.facts(event.text, event.at, event.id, event.role)]
    for entry in mentioned:
        keys = {consolidate.key_in_note(k, entry.names) for k in stated}
        if keys & set(entry.fact_keys):
            return entry
    return None


def _fact_home(event: ev.Event, homes: dict[str, Entry]) -> Entry | None:
    for fact in extract.facts(event.text, event.at, event.id, event.role):
        if fact.key in homes:
            return homes[fact.key]
    return None


def _by_session(events: Sequence[ev.Event]) -> list[list[ev.Event]]:
    """The events of each session, and of each day (within its project) outside a session."""
    groups: dict[str, list[ev.Event]] = {}
    for e in events:
        groups.setdefault(projects.group_key(e), []).append(e)
    return list(groups.values())


def _month_file(event: ev.Event, now: dt.datetime) -> str:
    at = event.at or now
    return f"{ARCHIVE_DIR}/{at:%Y-%m}.md"


def _stamp(event: ev.Event) -> str:
    return event.at.strftime("%Y-%m-%d %H:%M") if event.at else "undated"
