"""The months a memory is about and the months a prompt names: how "in July 2022" finds what was
said then.

An event is indexed under the month and year it was said ("july 2022"), and under the month a
relative expression in it points to when that is another one ("last month", "two weeks ago",
"yesterday" on the 1st). A prompt names a month by its name ("in July", "on 1 May, 2022", "the
beginning of November 2022") and a year by its number. Without this, a question about a time
matched only memories that spell the month out, and the turn that answers it ("I went to
Woodhaven, a small town in the Midwest") shares no other word with it.
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
    r"\b(\d+|a|an|one|two|three|four|a couple of|a few)\s+"
    r"(day|weekend|week|month|year)s?\s+ago\b",
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
        raw, unit = m.group(1).lower(), m.group(2).lower().replace("weekend", "week")
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


_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_RELATIVE_RE = re.compile(
    r"\b(?:(?P<ago>(?:\d+|a|an|one|two|three|four|a couple of|a few)\s+"
    r"(?:day|weekend|week|month|year)s?\s+ago)"
    r"|(?P<step>(?:last|next|this)\s+(?:week|weekend|month|year))"
    r"|(?P<weekday>last\s+(?:" + "|".join(_WEEKDAYS) + r"))"
    r"|(?P<day>yesterday|last night|tomorrow|today|tonight|this morning|this afternoon"
    r"|this evening))\b",
    re.IGNORECASE,
)

_SUBJECT_AFTER_RE = re.compile(r"'s\b|\s+(?:was|is|has|had|will|were)\b")
_ROUGHLY_RE = re.compile(r"\b(?:about|around|roughly|nearly|almost|over|maybe)\s+$", re.I)


def absolute(text: str, at: dt.datetime) -> str:
    """`text`, said at `at`, with its relative times made absolute, so that it reads right later:
    "yesterday" → "on 2023-05-07", "last week" → "the week before 2023-05-08", "last month" →
    "in April 2023", "two years ago" → "in 2021", "last Friday" → "on 2023-05-05"."""
    day = at.date()

    def said(m: re.Match[str]) -> str:
        if m.group("ago") and _ROUGHLY_RE.search(text, 0, m.start()):
            # "about a year ago" names no year: "about a year before 2023-08-03"
            return f"{m.group('ago')[: -len('ago')]}before {day}"
        out = _absolute(m, day)
        # "Yesterday was crazy": the time is the subject, so no "on" before it.
        if _SUBJECT_AFTER_RE.match(text, m.end()):
            out = out.removeprefix("on ").removeprefix("in ")
        return out

    return _RELATIVE_RE.sub(said, text)


def _absolute(m: re.Match[str], day: dt.date) -> str:
    said = m.group(0).lower()
    words = said.split()
    if m.group("day"):
        shift = {"yesterday": -1, "last night": -1, "tomorrow": 1}.get(said, 0)
        return f"on {day + dt.timedelta(days=shift)}"
    if m.group("weekday"):
        back = (day.weekday() - _WEEKDAYS.index(words[1])) % 7 or 7
        return f"on {day - dt.timedelta(days=back)}"
    if m.group("step"):
        unit = words[-1]
        step = {"last": -1, "next": 1, "this": 0}[words[0]]
        if unit == "weekend" and step == 0:
            # "this weekend" said on a Monday is the coming one: named by its Saturday, as "the
            # weekend of <Monday>" would read as the one just gone
            return f"the weekend of {day + dt.timedelta(days=5 - day.weekday())}"
        if unit in ("week", "weekend"):
            where = {-1: "before", 1: "after", 0: "of"}[step]
            return f"the {unit} {where} {day}"
        return _in(_shift(day, unit, step), unit)
    raw, unit = " ".join(words[:-2]), words[-2].rstrip("s")
    n = int(raw) if raw.isdigit() else _NUMBERS.get(raw, _NUMBERS.get(raw[2:], 1))
    # "two weekends ago" → "two weekends before 2023-07-17", as "last weekend" is said; "a few
    # years ago" names no year, so the line says no more than the speaker did
    if unit in ("day", "week", "weekend") or raw in ("a few", "a couple of"):
        return f"{raw} {words[-2]} before {day}"
    return _in(_shift(day, unit, -min(n, 100)), unit)


def _in(d: dt.date, unit: str) -> str:
    return f"in {d.year}" if unit == "year" else f"in {MONTHS[d.month - 1].title()} {d.year}"
