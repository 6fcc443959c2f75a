"""Times in the vault are the person's wall-clock time, naive (no offset), to the second: what they
read in an event line or a `since` date is the time on their clock. Aware times from callers are
converted to local time on the way in; the scheduler, which needs real instants, converts back.

Two things a naive wall-clock time cannot say on its own are handled here:

- The hour repeated when the clocks go back reads the same twice. Python's `fold` (1 for the
  second time round) tells them apart; `local` keeps it, and an event's id includes it
  (events.event_id), so the same words an hour apart stay two events.
- A time in the future is a typo or a wrong clock, not something that happened. Anything more
  than `FUTURE_TOLERANCE` ahead of now is refused (the CLI's `--at`) or taken as now (the API,
  imports); what reads "the newest" ignores such times (`not_ahead`).
"""

from __future__ import annotations

import datetime as dt

# A clock a few minutes fast (another machine's, a phone's) is not a typo.
FUTURE_TOLERANCE = dt.timedelta(minutes=5)


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
