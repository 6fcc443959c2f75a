"""Carrying out a promotion plan (plan.py), written ahead: the notes, the archive, the Event Log.

Event lines move verbatim, with their ids and times, into the note's Sources (the quotes that
retrieval shows), and the monthly archive file records where each went. The move spans several
files, so it is written ahead: the plan goes to `promotion.intent.json` in the state directory
first, then the notes, then the archive, and last the Event Log loses the lines. A crash at any
point leaves the plan, the next run finishes it (`finish_interrupted`), and ids make every step
idempotent: no event is lost and none ends in two places. A note that would pass
`[vault] max_note_bytes` goes on in "Title (continued)". Imported history that never stood in the
Event Log is placed the same way (`consolidate_history`).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from brainiac.core import clock
from brainiac.core.errors import NoteParseError, StaleWriteError
from brainiac.formats import events as ev
from brainiac.formats import ltm, stm
from brainiac.formats import note as notes
from brainiac.language import answering, observe
from brainiac.language.facts import Fact
from brainiac.lifecycle.jobs import consolidate, model_facts, model_observations, reflection
from brainiac.lifecycle.jobs.edits import Outcome, Transform, update
from brainiac.lifecycle.jobs.plan import Plan, Target, ledger_of, make_plan
from brainiac.store.names import filename_for, link, markdown_names
from brainiac.store.vault import LONG_TERM_DIR, SHORT_TERM

if TYPE_CHECKING:
    from brainiac.search.memory_protocol import MemoryLike

log = logging.getLogger(__name__)


INTENT_FILE = "promotion.intent.json"


_CONTINUED = "continued"  # "Project Atlas (continued)": where a full note's events go on


_MAX_CONTINUATIONS = 1000


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
    if not carry_out(memory, plan, now, outcome, report=[]):
        raise StaleWriteError(
            f"{failure} ({'; '.join(outcome.skipped)}); the plan is kept and the next promotion "
            "finishes it"
        )
    (memory.locations.state / INTENT_FILE).unlink()
    return outcome.changed


def carry_out(
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
    learned = _learned_facts(memory)
    observed = _observed(memory)
    _summarise(memory, plan)
    observer = _observer(memory, plan, observed)
    report += _fit(memory, plan, now, learned, observer)
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
                base,
                events,
                now,
                0.0 if text is None else gain,
                target.related,
                summary=target.summary,
                learned=learned,
                observed=observed,
                observer=observer,
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
    if outcome.skipped:
        return False  # an event leaves its note only once the note it goes to holds it
    for rel, ids in sorted(plan.take.items()):
        update(vault, rel, functools.partial(taken_out, gone=set(ids)), outcome, False)
    for month, lines in sorted(plan.archive.items()):
        update(vault, month, _append_archive(month, lines, "Event Log"), outcome, False)
    for month, lines in sorted(plan.ledger.items()):
        update(vault, month, _append_archive(month, lines, "Promoted"), outcome, False)
    if outcome.skipped:
        return False  # the Event Log keeps the events until every copy is safely written
    remove = set(plan.remove)
    update(
        vault,
        SHORT_TERM,
        lambda text: _without_observed(without(text, remove), text, remove),
        outcome,
        False,
    )
    return not outcome.skipped


def _summarise(memory: MemoryLike, plan: Plan) -> None:
    """With an LLM configured, each target's summary: the model's prose over the note's events
    as this run leaves them (those it holds, then those it takes), asked once per plan and saved
    with it. Without a model, or when it does not answer, the summary stays the sentences quoted
    from the events (consolidate.summary_lines); a summary a person wrote is never replaced."""
    if not memory.llm.available:
        return
    asked = False
    for target in plan.targets:
        if target.summary is not None:
            continue
        readable, text = _note_text(memory, target.rel)
        if not readable or (text is not None and consolidate.summary_by_person(text)):
            continue
        held = ltm.parse(text, target.rel).sources if text is not None else []
        events = [*held, *(ev.parse_text(line)[0] for line in target.events)]
        target.summary = memory.llm.summarise([f"{e.role}: {e.text}" for e in events])
        asked = asked or target.summary is not None
    if asked:
        plan.save(memory.locations.state / INTENT_FILE)


def _observer(
    memory: MemoryLike, plan: Plan, observed: dict[str, str]
) -> model_observations.Observer | None:
    """With an LLM configured, the model's observations of the events the plan moves that
    carry no line from the short-term document and that reflection did not look at (imported
    history, events said since its last run), asked once per session's batch before anything
    is written; without a model, the rules', each event read with the turn before it among the
    moved ones (answering.py). An
    event of the Event Log reflection looked at gets none here: it was asked about then, and
    gave no line (or a person deleted it)."""
    moved = [ev.parse_text(line)[0] for target in plan.targets for line in target.events]
    before, own = answering.turns_before(moved), answering.own_before(moved)
    if not memory.llm.available:
        return lambda event: observe.observations(
            event, previous=before.get(event.id), earlier=own.get(event.id)
        )
    readable, text = _note_text(memory, SHORT_TERM)
    logged = {e.id for e in stm.parse(text).events} if readable and text is not None else set()
    seen = reflection.looked_through(memory)

    def decided(event: ev.Event) -> bool:
        return (
            event.id in logged
            and seen is not None
            and event.at is not None
            and clock.instant(event.at) <= clock.instant(seen)
        )

    bare = [event for event in moved if event.id not in observed]
    asked = model_observations.observer(
        memory.llm, [e for e in bare if not decided(e)], before=before, earlier=own
    )
    return lambda event: [] if decided(event) else asked(event)


def _learned_facts(memory: MemoryLike) -> dict[str, list[Fact]]:
    """The short-term Facts learned from each event (model_facts.py): they go with the event
    to its note. Empty when the short-term document cannot be read (the rules' facts still go)."""
    readable, text = _note_text(memory, SHORT_TERM)
    if not readable or text is None:
        return {}
    return model_facts.learned(stm.parse(text).note.section_text("Facts") or "")


def _observed(memory: MemoryLike) -> dict[str, str]:
    """The short-term observation lines by event id (reflection wrote them, a person may have
    edited them): each goes with its event to the note, as it is."""
    readable, text = _note_text(memory, SHORT_TERM)
    if not readable or text is None:
        return {}
    return observe.by_source(stm.parse(text).note.section_text(observe.SECTION) or "")


def taken_out(text: str | None, gone: set[str]) -> str | None:
    """A topic note without the events that went to a note of their own (Plan.take), nor their
    observation lines (they went with them), its generated summary made again."""
    new = without(text, gone, ltm.SOURCES)
    if new is None:
        return None
    new = _without_observed(new, new, gone) or new
    return consolidate.refresh_summary(new)


def _without_observed(new: str | None, old: str | None, remove: set[str]) -> str | None:
    """The short-term document (`new`, or `old` when the Event Log lost nothing) without the
    observation lines of the events that left it: they went with their events."""
    text = new if new is not None else old
    if text is None:
        return None
    body = notes.parse(text).section_text(observe.SECTION)
    if body is None or not observe.sources(body) & remove:
        return new
    return notes.replace_section(text, observe.SECTION, observe.without(body, remove))


def _fit(
    memory: MemoryLike,
    plan: Plan,
    now: dt.datetime,
    learned: dict[str, list[Fact]],
    observer: model_observations.Observer | None = None,
) -> list[str]:
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
            fit = (
                _how_many_fit(memory, current, text, events, now, learned, observer)
                if readable
                else 0
            )
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
    ledger = ledger_of(fitted, now) if plan.ledger and fitted != plan.targets else plan.ledger
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
    memory: MemoryLike,
    target: Target,
    text: str | None,
    events: list[ev.Event],
    now: dt.datetime,
    learned: dict[str, list[Fact]],
    observer: model_observations.Observer | None = None,
) -> int:
    """How many of `events`, from the first, the note takes within the limit (exactly as
    `carry_out` writes them: Sources, facts, summary, links, strength)."""
    limit = memory.vault.max_note_bytes
    base = text if text is not None else consolidate.new_note_text(target.title, target.tags, now)
    gain = 0.0 if text is None else memory.config.promotion_strength

    def size(k: int) -> int:
        new, _changes = consolidate.add_events(
            base,
            events[:k],
            now,
            gain,
            target.related,
            summary=target.summary,
            learned=learned,
            observer=observer,
        )
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


def without(text: str | None, remove: set[str], section_title: str = stm.EVENT_LOG) -> str | None:
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
