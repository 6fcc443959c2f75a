"""Promotion: events that left the short-term window become long-term memory.

The Event Log keeps its newest `short_term_window` events (seed 000's last 10 steps); older ones
are consolidated. Each goes to exactly one place:

1. the note of a person, project or topic it names (title or alias, via `names.NameBook`), or the
   one note that already holds a fact it states (so "the deadline moved to Monday" joins the note
   that has the deadline);
2. otherwise, events of one session that keep naming someone new (twice or more, not a speaker)
   start a note for that name;
3. otherwise, the rest of the session becomes one new note, titled from its topics and date;
4. small talk with nothing to remember ("ok", "thanks!") goes to the monthly archive.

Event lines move verbatim, with their ids and times, into the note's Sources (the quotes that
retrieval shows), and the monthly archive file records where each went. The move spans several
files, so it is written ahead: the plan goes to `promotion.intent.json` in the state directory
first, then the notes, then the archive, and last the Event Log loses the lines. A crash at any
point leaves the plan, the next run finishes it, and ids make every step idempotent: no event is
lost and none ends in two places.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import json
import logging
import re
from collections import Counter
from collections.abc import Callable, Collection, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from brainiac import events as ev
from brainiac import extract, journal, ltm, privacy, projects, safe_io, stm, topics
from brainiac import note as notes
from brainiac.errors import BrainiacError, NoteParseError, StaleWriteError
from brainiac.jobs import consolidate
from brainiac.jobs.edits import Outcome, Transform, update
from brainiac.jobs.reflection import SELF_ROLE
from brainiac.names import Entry, NameBook, filename_for, link, markdown_names, normalise
from brainiac.vault import ARCHIVE_DIR, LONG_TERM_DIR, SHORT_TERM

if TYPE_CHECKING:
    from brainiac.jobs import JobReport
    from brainiac.memory_protocol import MemoryLike

log = logging.getLogger(__name__)

INTENT_FILE = "promotion.intent.json"
# The session label an import gives a titled conversation: its title and the start of its id.
_IMPORTED_TITLE_RE = re.compile(r"^(.+?)\s+[0-9a-f]{8}$")
_MIN_MENTIONS_FOR_NEW_ENTITY = 2
_LOWER_WORD_RE = re.compile(r"(?<![\w'’])[a-z][a-z'’-]*")
_SMALL_TALK_CHARS = 40  # "ok", "thanks!", "haha yes": no content word and short
_CONTINUED = "continued"  # "Project Atlas (continued)": where a full note's events go on
_MAX_CONTINUATIONS = 1000


@dataclass
class Target:
    rel: str
    title: str
    create: bool
    events: list[str] = field(default_factory=list)  # rendered event lines
    tags: list[str] = field(default_factory=list)
    related: list[str] = field(default_factory=list)  # [[links]] to the other notes it names

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
        )


def promote(memory: MemoryLike, now: dt.datetime, dry_run: bool) -> JobReport:
    from brainiac.jobs import JobReport

    outcome = Outcome()
    intent = memory.locations.state / INTENT_FILE
    notes_out: list[str] = []
    finished = 0
    if intent.exists() and not dry_run:
        plan = Plan.load(intent)
        finished = len(plan.remove)
        if not _carry_out(memory, plan, now, outcome, report=notes_out):
            return _incomplete(outcome)
        intent.unlink()
    # A save from an older copy (journal.py) can take events away: they go back first, then are
    # promoted like any other. It can also bring back Event Log lines an earlier run moved into a
    # note: those are in their note already, and only leave the log.
    surveyed = journal.survey(memory)
    where = surveyed.where
    recovered = journal.recover(memory, now, dry_run, surveyed).events
    try:
        doc = stm.parse(memory.vault.read(SHORT_TERM).text)
        if not dry_run and _clashing_ids(doc.events):
            update(memory.vault, SHORT_TERM, _with_own_ids, outcome, False)
            doc = stm.parse(memory.vault.read(SHORT_TERM).text)
    except FileNotFoundError:
        return JobReport("promotion", True, "no short-term document", dry_run=dry_run)
    public = _public_files(memory, {rel for e in doc.events for rel in where.get(e.id, ())})
    placed = {e.id for e in doc.events if where.get(e.id, set()) & public}
    if not dry_run:
        _clear_merged_stubs(memory, where, outcome)
    events = [e for e in doc.events if e.id not in placed]
    window = memory.config.short_term_window
    leaving = projects.past_window(events, window)
    leaving = [e for e in leaving if e.at is None or e.at <= now]
    prefix = f"finished an interrupted run ({finished} events); " if finished else ""
    if placed:
        verb = "would drop" if dry_run else "dropped"
        prefix += f"{verb} {len(placed)} Event Log line(s) already in a note (a stale save); "
    if recovered:
        verb = "would put back" if dry_run else "put back"
        prefix += f"{verb} {len(recovered)} event(s) missing from the vault (see the log); "
    if not leaving and (dry_run or not placed):
        return JobReport(
            "promotion",
            True,
            prefix + f"{len(events)} event(s) in the window, none to promote",
            tuple(outcome.changed),
            dry_run,
        )
    memory.names.refresh(memory.vault, memory.config.private_folders)
    plan = make_plan(leaving, memory.names, events, now, memory)
    summary = prefix + (_describe(plan) if leaving else f"{len(events)} event(s) in the window")
    plan.remove += sorted(placed)
    if dry_run:
        return JobReport("promotion", True, "dry run: " + summary, dry_run=True)
    plan.save(intent)
    if not _carry_out(memory, plan, now, outcome, report=notes_out):
        return _incomplete(outcome)
    intent.unlink()
    details = "; ".join(notes_out)
    return JobReport(
        "promotion",
        not outcome.skipped,
        summary + (f"; {details}" if details else "") + _skipped(outcome),
        tuple(outcome.changed),
    )


def finish_interrupted(memory: MemoryLike, now: dt.datetime) -> int:
    """Carry out a plan a crash left behind; returns how many events it held (0: none).
    Raises StaleWriteError if a file could not be written (the plan stays for the next run)."""
    intent = memory.locations.state / INTENT_FILE
    if not intent.exists():
        return 0
    plan = Plan.load(intent)
    _execute(memory, plan, now, "promotion could not finish an interrupted run")
    return len(plan.remove)


def consolidate_history(
    memory: MemoryLike, events: Sequence[ev.Event], now: dt.datetime
) -> list[str]:
    """Place events that never stood in the Event Log (imported history) in long-term notes or
    the archive, exactly as a promotion run places the events leaving the window, and written
    ahead the same way. Returns the files changed."""
    if not events:
        return []
    finish_interrupted(memory, now)
    memory.names.refresh(memory.vault, memory.config.private_folders)
    plan = make_plan(list(events), memory.names, list(events), now, memory)
    # Where each imported message went is in the import's checkpoint and in the notes' Sources;
    # a ledger line per message would swell the month files past the note size limit.
    plan.ledger = {}
    plan.save(memory.locations.state / INTENT_FILE)
    return _execute(memory, plan, now, "imported history could not be placed")


def _execute(memory: MemoryLike, plan: Plan, now: dt.datetime, failure: str) -> list[str]:
    """Carry out a saved plan and drop it; if a file kept changing, keep it and raise."""
    outcome = Outcome()
    if not _carry_out(memory, plan, now, outcome, report=[]):
        raise StaleWriteError(
            f"{failure} ({'; '.join(outcome.skipped)}); the plan is kept and the next promotion "
            "finishes it"
        )
    (memory.locations.state / INTENT_FILE).unlink()
    return outcome.changed


def make_plan(
    leaving: Sequence[ev.Event],
    book: NameBook,
    all_events: Sequence[ev.Event],
    now: dt.datetime,
    memory: MemoryLike,
) -> Plan:
    plan = Plan(now.isoformat(timespec="seconds"), remove=[e.id for e in leaving])
    table = book.active()
    fact_homes = _fact_homes(table)
    targets: dict[str, Target] = {}
    # Obsidian links by file name across the whole vault, so a new note's name must be free there.
    taken = markdown_names(memory.vault) | {e.rel.rsplit("/", 1)[-1] for e in book.entries()}
    roles = {normalise(e.role) for e in all_events}
    unplaced: list[ev.Event] = []
    previous: tuple[ev.Event, Entry] | None = None  # the last event placed by what it names
    for event in leaving:
        if event.role == SELF_ROLE:  # brainiac's own notes (an expired working memory)
            plan.archive.setdefault(_month_file(event, now), []).append(ev.render(event))
            continue
        mentioned = book.mentions(event.text, table)
        home = _holder_of_fact(event, mentioned) or (
            mentioned[0] if mentioned else _fact_home(event, fact_homes)
        )
        placed_by_name = home is not None
        if home is None and previous is not None and _replies_to(event, previous[0]):
            # The answer goes with its question: an exchange read apart loses its meaning (the
            # question has the words someone will search with, the answer the facts).
            home = previous[1]
        previous = (event, home) if placed_by_name and home is not None else None
        if home is None:
            unplaced.append(event)
            continue
        target = targets.setdefault(home.rel, Target(home.rel, home.title, create=False))
        target.events.append(ev.render(event))
        target.related += [link(m.rel, m.title) for m in mentioned if m.rel != home.rel]
    session_notes = {s: e for e in table.values() if "session" in e.tags for s in e.sessions}
    titles = set(table)  # the names notes answer to: a new note's title must be new
    for group in _by_session(unplaced):
        _place_new(group, targets, plan, taken, roles, now, memory, session_notes, titles)
    plan.targets = list(targets.values())
    plan.ledger = _ledger(plan.targets, now)
    return plan


def _ledger(targets: Sequence[Target], now: dt.datetime) -> dict[str, list[str]]:
    """Month file -> the "went to" line of each event placed in a note."""
    ledger: dict[str, list[str]] = {}
    for target in targets:
        for line in target.events:
            event = ev.parse_text(line)[0]
            ledger.setdefault(_month_file(event, now), []).append(
                f"- {_stamp(event)} {event.id} → {link(target.rel, target.title)}"
            )
    return ledger


def _place_new(
    group: list[ev.Event],
    targets: dict[str, Target],
    plan: Plan,
    taken: set[str],
    roles: set[str],
    now: dt.datetime,
    memory: MemoryLike,
    session_notes: dict[str, Entry],
    titles: set[str],
) -> None:
    """Events of one session that no note claims: entity notes, the session's note (the one an
    earlier promotion started for this session, or a new one), or the archive. `titles`: the
    names notes already answer to (normalised); the new session note's title is added."""
    if _imported(group[0].session):
        # An imported conversation stays one note: "Miso the cat" is one read, not a "Miso"
        # note beside a "Miso the cat" note holding half of it; its small talk stays in it.
        rest = list(group)
    else:
        rest = _founding_entities(group, roles, targets, taken, plan, now)
    # A session is its label within its project: "session 1" of two projects is two sessions.
    existing = session_notes.get(projects.session_key(rest[0])) if rest else None
    if existing is not None:
        target = targets.setdefault(
            existing.rel, Target(existing.rel, existing.title, create=False)
        )
        target.events += [ev.render(e) for e in rest]
    elif rest:
        title = _session_title(rest, memory, roles)
        if normalise(title) in titles:
            # Two sessions about the same thing on one day: the session tells them apart (the
            # same title would make organization merge them, and a note per session would
            # grow without bound).
            title = _beside_session(title, rest)
        titles.add(normalise(title))
        tags = ["session"] + [w for w in extract.keywords((e.text for e in rest), 3)]
        session = rest[0].session or ""
        target = _new_target(title, tags, targets, taken, key=f"session:{session}:{title}")
        target.events += [ev.render(e) for e in rest]


def _founding_entities(
    group: list[ev.Event],
    roles: set[str],
    targets: dict[str, Target],
    taken: set[str],
    plan: Plan,
    now: dt.datetime,
) -> list[ev.Event]:
    """Files the events of a session that are about a name it mentions often into that name's
    new entity note, and its small talk into the archive; returns the rest, in order."""
    counts: Counter[str] = Counter()
    names: dict[str, str] = {}
    # A name founds a note only if it also shows up as a name mid-sentence somewhere in the group,
    # and, one word, is not written in lower case there more often: "Yeah", "Wow", "Hope" are
    # words that open sentences; "Max", "Paris" stay capitalised wherever they stand.
    inside: Counter[str] = Counter(
        normalise(x) for e in group for x in extract.entities(e.text, openers=False)
    )
    lower = Counter(
        w for e in group for w in _LOWER_WORD_RE.findall(e.text) if normalise(w) in inside
    )
    confirmed = {k for k, n in inside.items() if " " in k or lower[k] <= n}
    for event in group:
        for entity in dict.fromkeys(extract.entities(event.text)):
            key = normalise(entity)
            if key and not _speaker(key, roles) and key in confirmed:
                counts[key] += 1
                names.setdefault(key, entity)
    rest: list[ev.Event] = []
    for event in group:
        keys = [normalise(x) for x in extract.entities(event.text)]
        best = max(
            (k for k in keys if counts[k] >= _MIN_MENTIONS_FOR_NEW_ENTITY),
            key=lambda k: counts[k],
            default=None,
        )
        if best is not None:
            target = _new_target(names[best], ["entity"], targets, taken, key=f"entity:{best}")
            target.events.append(ev.render(event))
        elif not extract.keywords([event.text], 1) and len(event.text) < _SMALL_TALK_CHARS:
            plan.archive.setdefault(_month_file(event, now), []).append(ev.render(event))
        else:
            rest.append(event)
    return rest


def _imported(session: str | None) -> bool:
    """Whether a session is a conversation an import brought in under its title."""
    titled = _IMPORTED_TITLE_RE.match(session or "")
    return titled is not None and any(c.isalpha() for c in titled.group(1))


def _speaker(key: str, roles: set[str]) -> bool:
    """Whether a name is one of the conversation's speakers, or what they are called for short
    ("Mel" for Melanie): a speaker is in every exchange, so a note about one would gather the
    whole conversation (a 101-event "Mel" note, LoCoMo conv-26), not a topic. Two letters are
    enough when they start the name and the name is longer ("Jo" for Joanna)."""
    return key in roles or (
        len(key) >= 2 and topics.is_speaker_word(key, topics.speaker_words(roles))
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
    events: Sequence[ev.Event], memory: MemoryLike, speakers: Collection[str] = ()
) -> str:
    """What the events are about, as a phrase ("Dance studio and clothing store (2023-05-11)"),
    after the session's name when that is a label a person gave it ("Atlas weekly - ...")."""
    texts = [e.text for e in events]
    session = events[0].session or ""
    if memory.llm.available:
        title = memory.llm.title(texts)
        if title:
            return title
    dated = [e.at for e in events if e.at]
    day = f" ({dated[0].date().isoformat()})" if dated else ""
    titled = _IMPORTED_TITLE_RE.match(session)
    if titled and _imported(session):
        # An imported conversation keeps the title it had ("Planning the garden 6f1c2a9e").
        return f"{titled.group(1)}{day}"
    # A speaker is in every exchange, never what one is about.
    about = topics.title(texts, {*speakers, *(e.role for e in events)})
    if not about:
        words = extract.keywords(texts, 1)
        about = words[0].capitalize() if words else ""
    if _readable(session):
        label = session.replace("-", " ").replace("_", " ").strip()
        label = label[0].upper() + label[1:]
        if about and about.lower() != label.lower():
            return f"{label} - {about}{day}"
        return f"{label}{day}"
    return f"{about or 'Notes'}{day}"


# Words that name a kind of conversation, not its topic: "session 11", "chat 3", "call".
_GENERIC_LABEL_WORDS = extract.word_set(
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


def _replies_to(event: ev.Event, before: ev.Event) -> bool:
    """Whether `event` is the next turn after `before` in the same conversation."""
    return bool(event.session) and event.session == before.session and event.role != before.role


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
    groups: dict[str, list[ev.Event]] = {}
    for e in events:
        key = projects.session_key(e) or (e.at.date().isoformat() if e.at else "undated")
        groups.setdefault(key, []).append(e)
    return list(groups.values())


def _month_file(event: ev.Event, now: dt.datetime) -> str:
    at = event.at or now
    return f"{ARCHIVE_DIR}/{at:%Y-%m}.md"


def _stamp(event: ev.Event) -> str:
    return event.at.strftime("%Y-%m-%d %H:%M") if event.at else "undated"


def _carry_out(
    memory: MemoryLike,
    plan: Plan,
    now: dt.datetime,
    outcome: Outcome,
    report: list[str],
) -> bool:
    """Carry out a plan (again: every step is idempotent); False if a file could not be written,
    in which case the plan stays on disk for the next run."""
    vault = memory.vault
    gain = memory.config.promotion_strength
    report += _fit(memory, plan, now)
    for done, target in enumerate(plan.targets):
        if memory.on_progress is not None:  # a large import writes hundreds of notes
            memory.on_progress("writing notes", done, len(plan.targets))
        events = [ev.parse_text(line)[0] for line in target.events]
        changes: list[str] = []

        def transform(
            text: str | None,
            target: Target = target,
            events: list[ev.Event] = events,
            changes: list[str] = changes,
        ) -> str:
            base = text
            if base is None:
                base = consolidate.new_note_text(target.title, target.tags, now)
            new, fact_changes = consolidate.add_events(
                base, events, now, 0.0 if text is None else gain, target.related
            )
            changes[:] = [f"{c.key}: {c.old} → {c.new}" for c in fact_changes if c.old]
            return new

        update(vault, target.rel, transform, outcome, False)
        if changes:
            report.append(f"[[{target.title}]] facts changed: " + ", ".join(changes))
        if target.rel in outcome.changed:
            memory.names.forget(target.rel)
    if memory.on_progress is not None:
        memory.on_progress("writing notes", len(plan.targets), len(plan.targets))
    for month, lines in sorted(plan.archive.items()):
        update(vault, month, _append_archive(month, lines, "Event Log"), outcome, False)
    for month, lines in sorted(plan.ledger.items()):
        update(vault, month, _append_archive(month, lines, "Promoted"), outcome, False)
    if outcome.skipped:
        return False  # the Event Log keeps the events until every copy is safely written
    remove = set(plan.remove)
    update(vault, SHORT_TERM, lambda text: _without(text, remove), outcome, False)
    return not outcome.skipped


# -- within [vault] max_note_bytes ---------------------------------------------------------------


def _fit(memory: MemoryLike, plan: Plan, now: dt.datetime) -> list[str]:
    """Make every target fit `[vault] max_note_bytes`: the events a note cannot take go on, in
    order, to its continuation note ("Project Atlas (continued)", then "(continued 2)", ...: the
    same one on every run until it is full). Done before anything is written, and the plan saved
    again when it changed, so a run that dies finishes the same plan. Past the limit a note could
    not be read again: its events would count as lost and be put back into a new copy on every
    run. An event too large even for an empty note stays where it was (the Event Log). Returns
    what the report should say about that."""
    limit = memory.vault.max_note_bytes
    fitted: list[Target] = []
    kept_back: list[ev.Event] = []
    said: list[str] = []
    taken: set[str] | None = None
    for target in plan.targets:
        events = [ev.parse_text(line)[0] for line in target.events]
        current, n = target, 0
        while events:
            readable, text = _note_text(memory, current.rel)
            fit = _how_many_fit(memory, current, text, events, now) if readable else 0
            if fit:
                fitted.append(dataclasses.replace(current, events=target.events_of(events[:fit])))
                events = events[fit:]
                if current is not target:
                    said.append(
                        f"{link(target.rel, target.title)} is full ([vault] max_note_bytes): "
                        f"{fit} event(s) went on in {link(current.rel, current.title)}"
                    )
            elif readable and text is None:  # not even an empty note can take it
                kept_back.append(events.pop(0))
                continue
            if not events:
                break
            if taken is None:
                taken = markdown_names(memory.vault) | {
                    t.rel.rsplit("/", 1)[-1].lower() for t in plan.targets
                }
            n += 1
            if n > _MAX_CONTINUATIONS:
                kept_back += events
                break
            current = _continuation(memory, target, n, taken)
    ledger = _ledger(fitted, now) if plan.ledger and fitted != plan.targets else plan.ledger
    archive = _fit_months(memory, plan.archive, "Event Log")
    ledger = _fit_months(memory, ledger, "Promoted")
    if (fitted, archive, ledger) == (plan.targets, plan.archive, plan.ledger) and not kept_back:
        return []
    gone = {e.id for e in kept_back}
    plan.targets, plan.archive, plan.ledger = fitted, archive, ledger
    plan.remove = [i for i in plan.remove if i not in gone]
    plan.save(memory.locations.state / INTENT_FILE)
    for event in kept_back:
        size = len(ev.render(event).encode("utf-8"))
        said.append(
            f"{event.id} stays where it was: {size} bytes, more than a note can take within "
            f"[vault] max_note_bytes ({limit}); cut it down or split it by hand"
        )
        log.warning("%s", said[-1])
    return said


def _note_text(memory: MemoryLike, rel: str) -> tuple[bool, str | None]:
    """Whether the note can be read, and its text (None: no such file yet). One that cannot be
    read (a person's note over the limit, or broken) cannot take events either."""
    try:
        return True, memory.vault.read(rel).text
    except FileNotFoundError:
        return True, None
    except (OSError, NoteParseError):
        return False, None


def _how_many_fit(
    memory: MemoryLike, target: Target, text: str | None, events: list[ev.Event], now: dt.datetime
) -> int:
    """How many of `events`, from the first, the note takes within the limit (exactly as
    `_carry_out` writes them: Sources, facts, summary, links, strength)."""
    limit = memory.vault.max_note_bytes
    base = text if text is not None else consolidate.new_note_text(target.title, target.tags, now)
    gain = 0.0 if text is None else memory.config.promotion_strength

    def size(k: int) -> int:
        new, _changes = consolidate.add_events(base, events[:k], now, gain, target.related)
        return len(new.encode("utf-8"))

    # Cheap first: what is added is the lines, their facts (at most as long again) and a few
    # generated lines; only a note near the limit is measured.
    adding = sum(len(ev.render(e).encode("utf-8")) for e in events)
    adding += sum(len(r.encode("utf-8")) for r in target.related)
    if len(base.encode("utf-8")) + 2 * adding + 4096 <= limit or size(len(events)) <= limit:
        return len(events)
    return _largest_prefix(len(events) - 1, lambda k: size(k) <= limit)


def _largest_prefix(most: int, fits: Callable[[int], bool]) -> int:
    """The largest k in 0..most with fits(k), by bisection (fits(0) is taken as true)."""
    low, high = 0, most
    while low < high:
        mid = (low + high + 1) // 2
        if fits(mid):
            low = mid
        else:
            high = mid - 1
    return low


def _lines_that_fit(rel: str, text: str | None, lines: list[str], section: str, limit: int) -> int:
    """How many of `lines`, from the first, the month file takes within `limit` bytes."""

    def fits(n: int) -> bool:
        new = _append_archive(rel, lines[:n], section)(text)
        return len((new if new is not None else text or "").encode("utf-8")) <= limit

    adding = sum(len(line.encode("utf-8")) + 1 for line in lines) + 200  # a new file's head
    if len((text or "").encode("utf-8")) + adding <= limit or fits(len(lines)):
        return len(lines)
    return _largest_prefix(len(lines) - 1, fits)


def _fit_months(
    memory: MemoryLike, by_month: dict[str, list[str]], section: str
) -> dict[str, list[str]]:
    """Archive lines (small talk, ledger) a month file has no room for go on in `2026-11 (2).md`,
    then `(3)`, and so on, the same file on every run until it is full."""
    limit = memory.vault.max_note_bytes
    out: dict[str, list[str]] = {}
    for month, lines in by_month.items():
        pending, k = list(lines), 1
        while pending and k <= _MAX_CONTINUATIONS:
            rel = month if k == 1 else f"{month[: -len('.md')]} ({k}).md"
            k += 1
            readable, text = _note_text(memory, rel)
            if not readable:
                continue
            n = _lines_that_fit(rel, text, pending, section, limit)
            if n:
                out.setdefault(rel, []).extend(pending[:n])
                pending = pending[n:]
            elif text is None:  # one line longer than a whole file may be: kept as it is
                out.setdefault(rel, []).extend(pending)
                pending = []
    return out


def _continuation(memory: MemoryLike, target: Target, n: int, taken: set[str]) -> Target:
    """The `n`th continuation of `target`'s note: the note of that title that an earlier run
    started, else a new one with a file name no Markdown file in the vault has."""
    title = f"{target.title} ({_CONTINUED}{'' if n == 1 else f' {n}'})"
    stem = filename_for(title, ())[: -len(".md")]
    for k in range(1, _MAX_CONTINUATIONS):
        name = f"{stem}.md" if k == 1 else f"{stem} ({k}).md"
        rel = f"{LONG_TERM_DIR}/{name}"
        readable, text = _note_text(memory, rel)
        if text is not None and ltm.parse(text, rel).title == title:
            related = [link(target.rel, target.title), *target.related]
            return Target(rel, title, create=False, related=related)
        if readable and text is None and name.lower() not in taken:
            break
    taken.add(name.lower())
    return Target(
        rel,
        title,
        create=True,
        tags=target.tags or [_CONTINUED],
        related=[link(target.rel, target.title), *target.related],
    )


def _incomplete(outcome: Outcome) -> JobReport:
    from brainiac.jobs import JobReport

    return JobReport(
        "promotion",
        False,
        "interrupted: the plan is kept and the next run finishes it" + _skipped(outcome),
        tuple(outcome.changed),
    )


def _append_archive(month_rel: str, lines: list[str], section: str) -> Transform:
    def transform(text: str | None) -> str | None:
        if text is None:
            month = month_rel.rsplit("/", 1)[-1][:-3]
            text = (
                f"---\ntitle: Archive {month}\ntags: [archive]\n---\n## Event Log\n\n## Promoted\n"
            )
        body = notes.parse(text, month_rel).section_text(section) or ""
        present = set(body.split("\n"))
        if section == "Event Log":
            have = ev.ids(ev.parse_text(body))
            fresh = [x for x in lines if ev.parse_text(x)[0].id not in have]
        else:
            fresh = [x.rstrip("\n") for x in lines if x.rstrip("\n") not in present]
        if not fresh:
            return None
        new_body = body.rstrip("\n") + ("\n" if body.strip() else "")
        new_body += "".join(x if x.endswith("\n") else x + "\n" for x in fresh)
        return notes.replace_section(text, section, new_body)

    return transform


def _without(text: str | None, remove: set[str], section_title: str = stm.EVENT_LOG) -> str | None:
    """The document without the event lines of `remove` in one section (by default the short-term
    Event Log; a note's Sources)."""
    if text is None:
        return None
    note = notes.parse(text)
    # The Event Log may go by a name a person gave it (stm.log_section).
    section = (
        stm.log_section(note) if section_title == stm.EVENT_LOG else note.section(section_title)
    )
    if section is None:
        return None
    lines = note.lines
    body = lines[section.heading_line + 1 : section.end_line]
    drop: set[int] = set()
    for loc in ev.parse_lines(body, offset=section.heading_line + 1):
        if loc.event.id in remove:
            drop.update(range(loc.first_line, loc.last_line + 1))
    if not drop:
        return None
    return "".join(line for i, line in enumerate(lines) if i not in drop)


def _clear_merged_stubs(memory: MemoryLike, where: dict[str, set[str]], outcome: Outcome) -> None:
    """Sources lines a merge moved out of a note, and an older copy of that note brought back:
    the note it was merged into has them, so they leave the stub."""
    doubled: dict[str, set[str]] = {}
    for event_id, rels in where.items():
        in_notes = rels - {SHORT_TERM}
        if len(in_notes) > 1:
            for rel in in_notes:
                doubled.setdefault(rel, set()).add(event_id)
    for rel, ids in sorted(doubled.items()):
        try:
            stub = ltm.parse(memory.vault.read(rel).text, rel).status == "merged"
        except (OSError, BrainiacError):
            continue
        if stub:
            update(memory.vault, rel, functools.partial(_without_sources, ids), outcome, False)


def _public_files(memory: MemoryLike, rels: set[str]) -> set[str]:
    """Of the files outside the Event Log that hold its events, those where an event counts as
    placed. A copy in a private note does not: dropped from the log, the event would vanish
    from search and context. A note that cannot be read does not either (the log line stays)."""
    folders = memory.config.private_folders
    public = set()
    for rel in rels - {SHORT_TERM}:
        if privacy.refusal(memory.vault, rel, folders) is not None:
            continue
        try:
            if not ltm.parse(memory.vault.read(rel).text, rel).private:
                public.add(rel)
        except (OSError, BrainiacError):
            continue
    return public


def _clashing_ids(events: Sequence[ev.Event]) -> bool:
    first: dict[str, str] = {}
    return any(first.setdefault(e.id, e.text) != e.text for e in events)


def _with_own_ids(text: str | None) -> str | None:
    """A person who copies an event line and changes its text leaves two events with one id: the
    later ones get an id of their own (from their content, as brainiac would have made it), or
    moving one by id would take the other's line with it."""
    if text is None:
        return None
    note = notes.parse(text)
    section = stm.log_section(note)
    if section is None:
        return None
    lines = list(note.lines)
    body = lines[section.heading_line + 1 : section.end_line]
    located = list(ev.parse_lines(body, offset=section.heading_line + 1))
    # The id stays with the line whose content it was made from (the original), else the first.
    keeper: dict[str, ev.Located] = {}
    for loc in located:
        current = keeper.get(loc.event.id)
        if current is None or (_made_from(loc.event) and not _made_from(current.event)):
            keeper[loc.event.id] = loc
    for loc in located:
        e = loc.event
        if loc is keeper[e.id] or e.text == keeper[e.id].event.text:
            continue
        own = ev.event_id(e.at, e.role, e.session, e.text)
        lines[loc.last_line] = lines[loc.last_line].replace(f"^{e.id}", f"^{own}", 1)
    new = "".join(lines)
    return new if new != text else None


def _made_from(e: ev.Event) -> bool:
    """Whether the event's id is the one its content gives (no one changed its text)."""
    return ev.event_id(e.at, e.role, e.session, e.text) == e.id


def _without_sources(remove: set[str], text: str | None) -> str | None:
    return _without(text, remove, ltm.SOURCES)


def _describe(plan: Plan) -> str:
    moved = sum(len(t.events) for t in plan.targets)
    new = [t for t in plan.targets if t.create]
    parts = [
        f"{len(plan.remove)} event(s) left the window: {moved} into {len(plan.targets)} note(s)"
    ]
    if new:
        parts.append(f"new: {', '.join(f'[[{t.title}]]' for t in new[:5])}")
    archived = sum(len(v) for v in plan.archive.values())
    if archived:
        parts.append(f"{archived} to the archive")
    return "; ".join(parts)


def _skipped(outcome: Outcome) -> str:
    return f"; skipped: {'; '.join(outcome.skipped)}" if outcome.skipped else ""
