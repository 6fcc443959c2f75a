"""Where many events go at once: an import's messages, and journalled events a save removed.

Many events at once must not swell the short-term document: the newest few (newer than anything
in the Event Log, at most a short-term window of them) join the Event Log as the latest steps, and
the rest is history, placed straight into long-term notes or the archive the way promotion places
the events leaving the window (`place`). `recover` puts back every journalled event that is nowhere
in the vault (journal.py says why that happens) the same way.
"""

from __future__ import annotations

import datetime as dt
import logging
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from brainiac.core import clock
from brainiac.core.errors import BrainiacError
from brainiac.formats import events as ev
from brainiac.formats import stm
from brainiac.lifecycle.jobs.moving import consolidate_history
from brainiac.lifecycle.journal import Survey, record, survey
from brainiac.store.vault import SHORT_TERM

if TYPE_CHECKING:
    from brainiac.search.memory_protocol import MemoryLike

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Placed:
    short_term: int  # events that went into the Event Log
    long_term: int  # events that went into notes or the archive
    changed: list[str]  # the vault files written


def place(
    memory: MemoryLike,
    events: Iterable[ev.Event],
    now: dt.datetime,
    after_history: Callable[[], None] | None = None,
) -> Placed:
    """Put events where they belong: the newest few (newer than anything in the Event Log, at
    most a short-term window of them) in the Event Log, as the latest steps; the rest is history
    and goes straight into long-term notes or the archive, the way promotion would place it, so
    many events at once never swell the short-term document."""
    # In the order they happened (clock.instant: the hour repeated at fall-back too).
    pending = sorted(events, key=lambda e: clock.instant(e.at) if e.at else -math.inf)
    if not pending:
        return Placed(0, 0, [])
    # A future-dated event in the log (a typo, a wrong clock) is not "the newest": counted, it
    # would send everything after it to history until that date came.
    logged = [
        clock.instant(e.at)
        for e in memory.short_term().events
        if e.at is not None and not clock.too_far_ahead(e.at, now)
    ]
    newest = max(logged, default=None)
    window = memory.config.short_term_window
    # `>=`: an event of the same second as the newest logged one is not history either.
    fresh = [
        e for e in pending if newest is None or (e.at is not None and clock.instant(e.at) >= newest)
    ]
    recent = fresh[-window:] if window else []
    if recent and not _fits_short_term(memory, recent):
        recent = []  # placed with the history: the Event Log has no room for them now
    recent_ids = {e.id for e in recent}
    history = [e for e in pending if e.id not in recent_ids]
    changed = consolidate_history(memory, history, now)
    record(memory.locations.state, history)
    if after_history is not None:
        after_history()
    if recent and memory.remember_many(recent, in_time_order=True):  # journals them itself
        changed.append(SHORT_TERM)
    return Placed(len(recent), len(history), changed)


def _fits_short_term(memory: MemoryLike, events: list[ev.Event]) -> bool:
    """Whether the short-term document can take `events` within `[vault] max_note_bytes`, each
    within `Vault.max_event_bytes` (an event journalled before there was a limit may not be)."""
    limit = memory.vault.max_event_bytes
    if any(len(ev.render(e).encode("utf-8")) > limit for e in events):
        return False
    try:
        text = memory.vault.read(SHORT_TERM).text
    except (OSError, BrainiacError):
        return True  # remember_many reports what is wrong with it
    new_text, _added = stm.insert_events(text, events)
    return len(new_text.encode("utf-8")) <= memory.vault.max_note_bytes


def recover(
    memory: MemoryLike, now: dt.datetime, dry_run: bool = False, surveyed: Survey | None = None
) -> Recovered:
    """Put back every journalled event that is nowhere in the vault (see the module docstring).

    `surveyed`: the caller's `survey` if it has just made one. Call it holding the job lock: it
    may write notes."""
    surveyed = survey(memory) if surveyed is None else surveyed
    lost = surveyed.missing
    if surveyed.unsettled and surveyed.unseen:
        log.info(
            "%d event(s) not seen in the vault while %s was still being saved; not put back, "
            "the next run looks again",
            len(surveyed.unseen),
            ", ".join(surveyed.unsettled[:3]) + (" ..." if len(surveyed.unsettled) > 3 else ""),
        )
    if lost and not dry_run:
        log.warning(
            "%d event(s) were missing from the vault (a save from an older copy removed them); "
            "put back: %s. To remove an event for good, use `brainiac forget`",
            len(lost),
            ", ".join(sorted(e.id for e in lost)[:10]) + (" ..." if len(lost) > 10 else ""),
        )
        return Recovered(lost, place(memory, lost, now).changed)
    return Recovered(lost, [])


@dataclass(frozen=True)
class Recovered:
    events: list[ev.Event]  # the journalled events that were missing (put back unless a dry run)
    changed: list[str]  # the vault files written
