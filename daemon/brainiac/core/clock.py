"""Times in the vault are the person's wall-clock time, naive (no offset), to the second: what they
read in an event line or a `since` date is the time on their clock. Aware times from callers are
converted to local time on the way in; the scheduler, which needs real instants, converts back.

Two things a naive wall-clock time cannot say on its own are handled here:

- The hour repeated when the clocks go back reads the same twice. Python's `fold` (1 for the
  second time round) tells them apart; `local` keeps it, and an event's id includes it
  (events.event_id), so the same words an hour apart stay two events. A time written in that
  hour carries its UTC offset (`isoformat`), so the file keeps which time round it was, and
  what orders times by when they happened compares `instant`s, which count `fold`.
- A time in the future is a typo or a wrong clock, not something that happened. Anything more
  than `FUTURE_TOLERANCE` ahead of now is refused (the CLI's `--at`) or taken as now (the API,
  imports); what reads "the newest" ignores such times (`not_ahead`).
"""

from __future__ import annotations

import datetime as dt

# A clock a few minutes fast (another machine's, a phone's) is not a typo.
FUTURE_TOLERANCE = dt.timedelta(minutes=5)
_EPOCH = dt.datetime(1970, 1, 1)


def now() -> dt.datetime:
    return dt.datetime.now().replace(microsecond=0)


def local(at: dt.datetime) -> dt.datetime:
    """`at` as a naive local time (aware times converted; naive ones taken as local already).

    An aware time in the repeated hour comes back with `fold=1` if it is the second 02:30."""
    if at.tzinfo is not None:
        naive = at.astimezone().replace(tzinfo=None)
        if is_ambiguous(naive) and naive.replace(fold=1).timestamp() == at.timestamp():
            return naive.replace(fold=1)
        return naive.replace(fold=0)
    return at


def is_ambiguous(at: dt.datetime) -> bool:
    """Whether a naive local time is read twice on this clock (the hour repeated at fall-back)."""
    try:
        return at.replace(fold=0).timestamp() != at.replace(fold=1).timestamp()
    except (OverflowError, OSError, ValueError):  # years the platform's clock cannot place
        return False


def instant(at: dt.datetime) -> float:
    """`at` as seconds since the epoch (a naive time read as local, its `fold` saying which time
    round of the repeated hour): the order in which things happened. Naive times compare by
    their wall-clock reading and ignore `fold`, so the second 02:10 of a fall-back night would
    come before the first 02:50, twenty minutes earlier."""
    try:
        return at.timestamp()
    except (OverflowError, OSError, ValueError):  # years the platform's clock cannot place
        return (at.replace(tzinfo=None) - _EPOCH).total_seconds()


def isoformat(at: dt.datetime, sep: str = "T", timespec: str = "auto") -> str:
    """A naive local time as ISO-8601, without an offset, except in the hour repeated at
    fall-back: there the offset says which time round it was, so that reading it back
    (`local`) gives the same instant, not the first one."""
    if at.tzinfo is None and is_ambiguous(at):
        return at.astimezone().isoformat(sep, timespec)
    return at.isoformat(sep, timespec)


def too_far_ahead(at: dt.datetime, reference: dt.datetime | None = None) -> bool:
    """Whether `at` is more than FUTURE_TOLERANCE after `reference` (default: the clock)."""
    return at > (reference if reference is not None else now()) + FUTURE_TOLERANCE


def not_ahead(at: dt.datetime, reference: dt.datetime | None = None) -> dt.datetime:
    """`at`, or `reference` (default: the clock) if `at` is too far ahead of it."""
    reference = reference if reference is not None else now()
    return reference if too_far_ahead(at, reference) else at


def to_utc(at: dt.datetime) -> dt.datetime:
    """A naive local time as a naive UTC time (for the scheduler's bookkeeping)."""
    return local(at).astimezone(dt.UTC).replace(tzinfo=None)
