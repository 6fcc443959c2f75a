"""Times in the vault are the person's wall-clock time, naive (no offset), to the second: what they
read in an event line or a `since` date is the time on their clock. Aware times from callers are
converted to local time on the way in; the scheduler, which needs real instants, converts back.
"""

from __future__ import annotations

import datetime as dt


def now() -> dt.datetime:
    return dt.datetime.now().replace(microsecond=0)


def local(at: dt.datetime) -> dt.datetime:
    """`at` as a naive local time (aware times converted; naive ones taken as local already)."""
    if at.tzinfo is not None:
        at = at.astimezone().replace(tzinfo=None)
    return at


def to_utc(at: dt.datetime) -> dt.datetime:
    """A naive local time as a naive UTC time (for the scheduler's bookkeeping)."""
    return local(at).astimezone(dt.UTC).replace(tzinfo=None)
