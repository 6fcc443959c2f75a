"""Decay: how much strength a long-term note loses between two organization runs, and up to
when each run counts (docs/lifecycle.md, "Organization"). A note of one project in a vault shared
by projects fades with that project's own sessions (`project_clocks`)."""

from __future__ import annotations

import contextlib
import datetime as dt
from pathlib import Path
from typing import TYPE_CHECKING

from brainiac.core import clock
from brainiac.core.errors import BrainiacError
from brainiac.formats import ltm
from brainiac.formats import note as notes
from brainiac.store.names import Entry

if TYPE_CHECKING:
    from brainiac.search.memory_protocol import MemoryLike
    from brainiac.store.config import Config

# The most decay one run applies. A month: a person back from a long holiday finds their notes a
# month older at once, and a typo in `--now` costs at most that (0.98**30: 55% of the strength).
MAX_DECAY_DAYS_PER_RUN = 30
DECAY_CLOCK = "decay_clock"  # the time the last run's decay counted up to (JobRecord.extra)
_MIN_DECAY_STEP = 0.95  # write a decayed strength once it has lost at least 5%
NEVER_DECAY = ("pinned",)


def project_clocks(memory: MemoryLike, decay_now: dt.datetime) -> dict[str | None, dt.datetime]:
    """Project -> the time its notes decay up to: its newest event in the Event Log (each
    project keeps its newest events there, promotion.py), when before `decay_now`. A project's
    notes fade with its own sessions, as in a vault of its own whose jobs run when they end:
    time spent working in another project does not age them. Empty without projects."""
    try:
        events = memory.short_term().events
    except (OSError, BrainiacError):
        return {}
    newest: dict[str | None, dt.datetime] = {}
    for e in events:
        if e.project and e.at is not None:
            held = newest.get(e.project)
            if held is None or clock.instant(e.at) > clock.instant(held):
                newest[e.project] = e.at
    limit = clock.instant(decay_now)
    return {p: at for p, at in newest.items() if clock.instant(at) < limit}


def decay_clock(state_dir: Path, now: dt.datetime) -> tuple[dt.datetime, str | None]:
    """The time this run's decay counts up to, and, if that is not `now`, why (for the report).

    Counted from the time the previous run applied; before any run, from the computer's clock
    (the only other witness of how much time has passed)."""
    from brainiac.lifecycle.jobs import load_records

    record = load_records(state_dir).get("organization")
    last = None
    if record is not None and record.extra.get(DECAY_CLOCK):
        with contextlib.suppress(ValueError):
            last = dt.datetime.fromisoformat(record.extra[DECAY_CLOCK])
    reference = last if last is not None else clock.now()
    limit = reference + dt.timedelta(days=MAX_DECAY_DAYS_PER_RUN)
    if now <= limit:
        return now, None
    since = "the last run" if last is not None else "the computer's clock"
    return limit, (
        f"now is {(now - reference).days} days after {since}; decay applied up to "
        f"{limit.isoformat(timespec='minutes')} (at most {MAX_DECAY_DAYS_PER_RUN} days a run; "
        "the next runs apply the rest)"
    )


def decay_step(
    strength: float, start: dt.datetime | None, now: dt.datetime, per_day: float, floor: float
) -> tuple[float, int] | None:
    """The decayed strength and the whole days it covers, or None when this run writes nothing.

    Decay is written once it has taken at least 5% (rewriting every note every day would churn
    sync tools and editors for a 2% change) or when the note nears the archive threshold; the
    days keep counting from `decayed` meanwhile, so nothing is lost by waiting.
    """
    if start is None:
        return None  # no date to count from (a person's note without one): left as it is
    days = int(max((now - start).total_seconds() / 86400.0, 0.0))
    if days < 1:
        return None
    factor = per_day**days
    if factor > _MIN_DECAY_STEP and strength * factor >= 2 * floor:
        return None
    return strength * factor, days


def decay_due(entry: Entry, now: dt.datetime, per_day: float, floor: float) -> bool:
    if entry.status in NEVER_DECAY:
        return False
    return decay_step(entry.strength, entry.decay_start, now, per_day, floor) is not None


def decayed(text: str, now: dt.datetime, per_day: float, floor: float) -> str:
    note = ltm.parse(text, "<note>")
    if note.status in NEVER_DECAY:
        return text
    since = note.decay_start
    step = decay_step(note.strength, since, now, per_day, floor)
    if step is None or since is None:
        return text
    strength, days = step
    text = notes.set_frontmatter_field(text, "strength", notes.yaml_number(strength, 4))
    # Days counted, not the clock time: the part of a day not yet decayed carries over.
    return notes.set_frontmatter_field(
        text, "decayed", (since + dt.timedelta(days=days)).isoformat(timespec="minutes")
    )


def will_fade(entry: Entry, accessed: dt.datetime | None, now: dt.datetime, cfg: Config) -> bool:
    """Whether this run's decay takes `entry` below the archive threshold, told from the book
    (no read). A wrong guess costs only the order: organization archives by the strength it
    writes."""
    if entry.status in NEVER_DECAY or entry.status in ("merged", "archived") or entry.private:
        return False
    start = entry.decay_start
    if accessed is not None:
        start = accessed if start is None else max(start, accessed)
    step = decay_step(entry.strength, start, now, cfg.decay_per_day, cfg.archive_below)
    return (entry.strength if step is None else step[0]) < cfg.archive_below
