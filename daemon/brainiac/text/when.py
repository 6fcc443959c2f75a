"""The months a memory is about and the months a prompt names: how "in July 2022" finds what was
said then.

An event is indexed under the month and year it was said ("july 2022"), and under the month a
relative expression in it points to when that is another one ("last month", "two weeks ago",
"yesterday" on the 1st). A prompt names a month by its name ("in July", "on 1 May, 2022", "the
beginning of November 2022") and a year by its number. Without this, a question about a time
matched only memories that spell the month out, and the turn that answers it ("I went to
Woodhaven, a small town in the Midwest") shares no other word with it (LoCoMo, docs/benchmarks.md
section 2).
"""

from __future__ import annotations

import datetime as dt
import re

MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
_MONTH_RE = re.compile(r"\b(" + "|".join(MONTHS) + r")\b", re.IGNORECASE)
_YEAR_RE = re.compile(r"\b(19\d\d|20\d\d)\b")
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "a couple of": 2, "few": 3}
_AGO_RE = re.compile(
    r"\b(\d+|a|an|one|two|three|four|a couple of|a few)\s+(day|week|month|year)s?\s+ago\b",
    re.IGNORECASE,
)
_LAST_RE = re.compile(r"\b(last|next)\s+(week|weekend|month|year)\b", re.IGNORECASE)
_DAY_BEFORE_RE = re.compile(r"\b(yesterday|last night)\b", re.IGNORECASE)
_DAY_AFTER_RE = re.compile(r"\btomorrow\b", re.IGNORECASE)


def event_terms(at: dt.datetime | None, text: str) -> str:
    """The month and year words an event said at `at` is indexed under, "" without a time."""
    if at is None:
        return ""
    day = at.date()
    days = {day, *(_resolved(day, text))}
    words: dict[str, None] = {}
    for d in sorted(days):
        words.setdefault(MONTHS[d.month - 1], None)
        words.setdefault(str(d.year), None)
    return " ".join(words)


def prompt_terms(text: str) -> list[str]:
    """The month names (lower case) and years a prompt names, in order, each once.

    "May" counts only where it cannot be the verb: written with a capital and not opening a
    sentence ("in May", "on 1 May, 2022"), or followed by a day or a year ("may 2022").
    """
    found: dict[str, None] = {}
    for m in _MONTH_RE.finditer(text):
        word = m.group(1)
        if word.lower() == "may" and not _is_month_may(text, m):
            continue
        found.setdefault(word.lower(), None)
    for m in _YEAR_RE.finditer(text):
        found.setdefault(m.group(1), None)
    return list(found)


def _is_month_may(text: str, m: re.Match[str]) -> bool:
    after = text[m.end() : m.end() + 6]
    if re.match(r"[ ,]+\d", after):
        return True
    if not m.group(1)[0].isupper():
        return False
    before = text[: m.start()].rstrip()
    return bool(before) and before[-1] not in ".!?\"'(" and not before.endswith("\n")


def _resolved(day: dt.date, text: str) -> list[dt.date]:
    """The days the relative expressions in `text`, said on `day`, point to (roughly: a month or
    a year back is enough to name the month)."""
    out: list[dt.date] = []
    for m in _AGO_RE.finditer(text):
        raw, unit = m.group(1).lower(), m.group(2).lower()
        n = int(raw) if raw.isdigit() else _NUMBERS.get(raw, _NUMBERS.get(raw[2:], 1))
        out.append(_shift(day, unit, -min(n, 100)))
    for m in _LAST_RE.finditer(text):
        step = -1 if m.group(1).lower() == "last" else 1
        unit = m.group(2).lower().replace("weekend", "week")
        out.append(_shift(day, unit, step))
    if _DAY_BEFORE_RE.search(text):
        out.append(day - dt.timedelta(days=1))
    if _DAY_AFTER_RE.search(text):
        out.append(day + dt.timedelta(days=1))
    return out


def _shift(day: dt.date, unit: str, n: int) -> dt.date:
    if unit == "day":
        return day + dt.timedelta(days=n)
    if unit == "week":
        return day + dt.timedelta(weeks=n)
    months = day.year * 12 + day.month - 1 + (n if unit == "month" else 12 * n)
    return dt.date(months // 12, months % 12 + 1, 1)
