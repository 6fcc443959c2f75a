"""Promotion: events that left the short-term window become long-term memory.

The Event Log keeps its newest `short_term_window` events (docs/lifecycle.md); older ones
are consolidated, each to exactly one place: the note of what it names, a note founded for a
new name, its session's note, or the monthly archive (jobs/plan.py says how).

Event lines move verbatim, with their ids and times, into the note's Sources (the quotes that
retrieval shows), and the monthly archive file records where each went. The move spans several
files, so it is written ahead: the plan goes to `promotion.intent.json` in the state directory
first, then the notes, then the archive, and last the Event Log loses the lines. A crash at any
point leaves the plan, the next run finishes it, and ids make every step idempotent: no event is
lost and none ends in two places.
"""

from __future__ import annotations

import datetime as dt
import functools
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from brainiac.core.errors import BrainiacError
from brainiac.formats import events as ev
from brainiac.formats import ltm, stm
from brainiac.formats import note as notes
from brainiac.lifecycle import journal
from brainiac.lifecycle.jobs import placement
from brainiac.lifecycle.jobs.edits import Outcome, update
from brainiac.lifecycle.jobs.moving import INTENT_FILE, carry_out, taken_out, without
from brainiac.lifecycle.jobs.plan import Plan, make_plan
from brainiac.store import privacy, projects
from brainiac.store.vault import SHORT_TERM

if TYPE_CHECKING:
    from brainiac.lifecycle.jobs import JobReport
    from brainiac.search.memory_protocol import MemoryLike

log = logging.getLogger(__name__)


def promote(memory: MemoryLike, now: dt.datetime, dry_run: bool) -> JobReport:
    from brainiac.lifecycle.jobs import JobReport

    outcome = Outcome()
    intent = memory.locations.state / INTENT_FILE
    notes_out: list[str] = []
    finished = 0
    if intent.exists() and not dry_run:
        plan = Plan.load(intent)
        finished = len(plan.remove)
        if not carry_out(memory, plan, now, outcome, report=notes_out):
            return _incomplete(outcome)
        intent.unlink()
    # A save from an older copy (journal.py) can take events away: they go back first, then are
    # promoted like any other. It can also bring back Event Log lines an earlier run moved into a
    # note: those are in their note already, and only leave the log.
    surveyed = journal.survey(memory)
    where = surveyed.where
    recovered = placement.recover(memory, now, dry_run, surveyed).events
    try:
        doc = stm.parse(memory.vault.read(SHORT_TERM).text)
        if not dry_run and _clashing_ids(doc.events):
            update(memory.vault, SHORT_TERM, _with_own_ids, outcome, False)
            doc = stm.parse(memory.vault.read(SHORT_TERM).text)
    except FileNotFoundError:
        return JobReport("promotion", True, "no short-term document", dry_run=dry_run)
    public = _public_files(memory, {rel for e in doc.events for rel in where.get(e.id, ())})
    placed = {e.id for e in doc.events if where.get(e.id, set()) & public}
    cleared = _clear_moved_copies(memory, where, outcome) if not dry_run else 0
    events = [e for e in doc.events if e.id not in placed]
    window = memory.config.short_term_window
    leaving = projects.past_window(events, window)
    leaving = [e for e in leaving if e.at is None or e.at <= now]
    prefix = f"finished an interrupted run ({finished} events); " if finished else ""
    if cleared:
        prefix += (
            f"took {cleared} Sources line(s) an older copy brought back out of that note again "
            "(the note they had moved to holds them); "
        )
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
    if not carry_out(memory, plan, now, outcome, report=notes_out):
        return _incomplete(outcome)
    intent.unlink()
    details = "; ".join(notes_out)
    return JobReport(
        "promotion",
        not outcome.skipped,
        summary + (f"; {details}" if details else "") + _skipped(outcome),
        tuple(outcome.changed),
    )


# -- within [vault] max_note_bytes ---------------------------------------------------------------


def _incomplete(outcome: Outcome) -> JobReport:
    from brainiac.lifecycle.jobs import JobReport

    return JobReport(
        "promotion",
        False,
        "interrupted: the plan is kept and the next run finishes it" + _skipped(outcome),
        tuple(outcome.changed),
    )


def _clear_moved_copies(memory: MemoryLike, where: dict[str, set[str]], outcome: Outcome) -> int:
    """Sources lines a job moved out of a note, and an older copy of that note brought back
    (a person's editor saving the copy it held while the job ran): the note they went to holds
    them, so they leave the older note again, which keeps everything else it holds.

    Two jobs move events out of a note: a merge moves all of them into the note it was merged
    into, and leaves a stub (status `merged`); a name's new note takes, from the session notes
    that said the name, the events that said it (`Plan.take`). So an event in two notes leaves
    a stub, and leaves a session note when a name's note (tagged `entity`, public: the event
    stays findable) holds it too. Left there, the event would be in two notes for good. Returns
    how many lines it took out."""
    doubled: dict[str, set[str]] = {}
    for event_id, rels in where.items():
        in_notes = rels - {SHORT_TERM}
        if len(in_notes) > 1:
            for rel in in_notes:
                doubled.setdefault(rel, set()).add(event_id)
    kinds = {rel: _moved_from_kind(memory, rel) for rel in doubled}
    names_notes = {rel for rel, kind in kinds.items() if kind == "entity"}
    names_notes &= _public_files(memory, names_notes)
    cleared = 0
    for rel, ids in sorted(doubled.items()):
        if kinds[rel] == "stub":
            out = functools.partial(_without_sources, ids)
        elif kinds[rel] == "session" and (ids := {i for i in ids if where[i] & names_notes}):
            # As the take left it: without their observation lines, its summary made again.
            out = functools.partial(taken_out, gone=ids)
        else:
            continue
        if update(memory.vault, rel, out, outcome, False):
            cleared += len(ids)
    return cleared


def _moved_from_kind(memory: MemoryLike, rel: str) -> str | None:
    """What a note holding an event another note holds too is to `_clear_moved_copies`: a
    "stub", a "session" note, a name's ("entity") note, or None (any other, or unreadable)."""
    try:
        note = ltm.parse(memory.vault.read(rel).text, rel)
    except (OSError, BrainiacError):
        return None
    if note.status == "merged":
        return "stub"
    tags = note.tags
    if "session" in tags:
        return "session"
    return "entity" if "entity" in tags else None


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
    return without(text, remove, ltm.SOURCES)


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
