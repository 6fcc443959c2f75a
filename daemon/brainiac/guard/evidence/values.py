"""The typed values of a sentence, as the event path compares them: dates as periods (an
event's relative dates resolved against the event's own time: "yesterday", "last Saturday",
"the week before 9 June", "two years ago"), numbers with the noun they count, and proper names;
and the relation words left once the values are set aside.

Pure reading, the same on the response's side and the event's. Not the values a fact line holds
(claims.py reads those, and the fact path compares them), and not which months an event is
indexed under (when.py).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from dataclasses import dataclass

from brainiac.guard.evidence.words import FIRST_PERSON, YOU, bare, lemma, words_of
from brainiac.language import claims, lexicon

# Words that frame a time ("the week before", "around", "early"): part of the value, not the event.
_WHEN_WORDS = lexicon.word_set(
    """
    week weekend month year day morning afternoon evening night time before after around about
    early mid mid- late ago last past recent recently earlier later summer winter spring autumn fall
    """
)
_NUMBER_RE = re.compile(
    r"(?<![\w.:/-])(?P<num>\d{1,4}(?:\.\d+)?|"
    + "|".join(sorted(claims.NUMBER_WORDS, key=len, reverse=True))
    + r")(?:[- ](?P<ones>one|two|three|four|five|six|seven|eight|nine))?"
    r"(?![\w:/-]|\.\d)(?:\s+(?:more\s+|other\s+|new\s+|little\s+|young\s+|younger\s+|older\s+)?"
    r"(?P<noun>[a-z]+))?",
    re.I,
)
_UNITS = {"k", "kg", "km", "mi", "am", "pm", "st", "nd", "rd", "th", "percent", "%"}
_N = (
    r"(?P<n>\d{1,3}|"
    + "|".join(sorted(claims.NUMBER_WORDS, key=len, reverse=True))
    + r")(?:[- ](?P<ones>one|two|three|four|five|six|seven|eight|nine))?"
)
# An age, however it is said ("at age fifteen", "aged 8", "ten years old", "when she was
# twenty"): one count of one kind, so "at age fifteen" and "when she was twenty" differ, where a
# bare "twenty" counts nothing said.
_AGE_RES = (
    re.compile(rf"\b(?:at\s+(?:the\s+)?age\s+(?:of\s+)?|aged\s+){_N}\b", re.I),
    # (not "a one-year-old son": a hyphenated age describes the noun, it is not the value)
    re.compile(rf"\b{_N}\s+(?:years?|yrs?)\s+old\b", re.I),
    re.compile(
        rf"\bwhen\s+(?:i|he|she|they|we|you|[A-Z][a-z]+)\s+(?:was|were)\s+{_N}\b"
        r"(?!\s*(?:[-%]|years?|months?|weeks?|days?|hours?|minutes?|times?|of|in|on|at)\b)",
        re.I,
    ),
)
# How many times: "once" only where it cannot open a clause ("once I'm home") or mean formerly
# ("was once"): at the end of a clause or before how often.
_TIMES_RE = re.compile(
    r"(?<!\bat )(?<!\bwas )(?<!\bwere )\b(?P<word>once|twice|thrice)\b"
    r"(?=\s*(?:[.,;!?)]|$|a\s+(?:day|week|month|year)|per\b|every\b|so\s+far|before\b))",
    re.I,
)
_TIMES = {"once": 1.0, "twice": 2.0, "thrice": 3.0}

# A measure: a number and its unit, written together or apart ("a 5K run", "10 km", "20%").
_MEASURE_RE = re.compile(
    r"(?<![\w.,])(?P<num>\d{1,4}(?:\.\d+)?)\s?(?P<unit>km|k|mi|miles?|kg|lbs?|%|percent)(?![\w%])",
    re.I,
)
_MEASURE_UNITS = {"mile": "mi", "miles": "mi", "lb": "lbs", "percent": "%"}
_MONTH = r"(?P<month>" + "|".join(sorted(claims.MONTHS, key=len, reverse=True)) + r")\.?"
_YEAR = r"(?P<year>(?:19|20)\d{2})"
_ABSOLUTE_RES = (
    re.compile(r"\b(?P<year>\d{4})-(?P<mnum>\d{2})-(?P<day>\d{2})\b"),
    re.compile(
        rf"\b(?P<day>\d{{1,2}})(?:st|nd|rd|th)?(?:\s+of)?\s+{_MONTH}(?:,?\s+{_YEAR})?\b", re.I
    ),
    re.compile(rf"\b{_MONTH}\s+(?P<day>\d{{1,2}})(?:st|nd|rd|th)?(?:,?\s+{_YEAR})?\b", re.I),
    re.compile(rf"\b{_MONTH}(?:,?\s+{_YEAR})\b", re.I),
    # "in August", "mid-August", "late - August"
    re.compile(rf"\b(?:in|of|early|mid|late|since|until|by|during)(?:\s+|\s*-\s*){_MONTH}\b", re.I),
    # A year alone only after a word that makes it a time ("in 2022"), not "a 2026 Skoda".
    re.compile(
        rf"\b(?:in|on|since|until|till|by|during|from|around|before|after|early|mid|late|summer"
        rf"|winter|spring|autumn|fall|year|of)\s+(?:the\s+(?:year\s+)?)?{_YEAR}(?![\d-])",
        re.I,
    ),
)
_WEEKDAY_INDEX = {name: i for i, name in enumerate(claims.WEEKDAYS)}
_WEEKDAY_FORMS = {
    **{name: name for name in claims.WEEKDAYS},
    **{short: name for name, short in claims.WEEKDAYS.items()},
    "tues": "tuesday",
    "thur": "thursday",
    "thurs": "thursday",
    "weds": "wednesday",
}
_WEEKDAY = r"(?P<weekday>" + "|".join(sorted(_WEEKDAY_FORMS, key=len, reverse=True)) + r")\b\.?"
_AMOUNT = r"(?P<n>\d{1,3}|a|an|one|a\s+few|a\s+couple\s+of|" + "|".join(claims.NUMBER_WORDS) + ")"
_UNIT = r"(?P<unit>day|days|week|weeks|weekend|weekends|month|months|year|years)"
_RELATIVE_RES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\b(?:the\s+day\s+before\s+yesterday)\b", re.I), "d-2"),
    (re.compile(r"\b(?:yesterday|last\s+night)\b", re.I), "d-1"),
    (re.compile(r"\b(?:today|tonight|this\s+(?:morning|afternoon|evening))\b", re.I), "d0"),
    (re.compile(r"\btomorrow\b", re.I), "d+1"),
    (re.compile(rf"\b{_AMOUNT}\s+{_UNIT}\s+ago\b", re.I), "ago"),
    (re.compile(rf"\b(?:last|this\s+past|past)\s+{_WEEKDAY}", re.I), "lastwd"),
    (re.compile(rf"\b(?:next|this\s+coming|coming)\s+{_WEEKDAY}", re.I), "nextwd"),
    (re.compile(r"\b(?:last|past)\s+(?P<unit>week|weekend|month|year|summer)\b", re.I), "last"),
    (re.compile(r"\bthis\s+(?P<unit>week|weekend|month|year|summer)\b", re.I), "this"),
    (re.compile(r"\bnext\s+(?P<unit>week|weekend|month|year|summer)\b", re.I), "next"),
    (re.compile(r"\b(?:a\s+few|couple\s+of)\s+days\s+ago\b", re.I), "few"),
    # "I just signed up", "we've just got back": done in the days before it was said
    (re.compile(r"\bjust\s+(?:got|went|did|made|took|won|had|began|\w+ed)\b", re.I), "just"),
)
_BEFORE_RE = re.compile(
    r"\b(?P<what>day|week|weekend|month|monday|tuesday|wednesday|thursday|friday|saturday"
    r"|sunday|weekends|weeks|days)s?\s+(?:before|prior\s+to)\s*$",
    re.I,
)
_OF_RE = re.compile(r"\b(?:week|weekend)\s+of\s*$", re.I)
_BY_RE = re.compile(r"\b(?:by|until|till|before)\s+(?:early\s+|mid-?\s*|late\s+)?$", re.I)
_AFTER_RE = re.compile(r"\b(?:after|since)\s*$", re.I)


@dataclass(frozen=True)
class Period:
    """When something happened, as an inclusive range of days; `year_known` False for "7 May"
    (compared by month and day only)."""

    start: dt.date
    end: dt.date
    year_known: bool = True

    def gap(self, other: Period) -> dt.timedelta:
        """Days between the two periods (zero when they overlap)."""
        a, b = self, other
        if not (a.year_known and b.year_known):
            year = (b if b.year_known else a).start.year
            a, b = _in_year(a, year), _in_year(b, year)
        if a.end < b.start:
            return b.start - a.end
        if b.end < a.start:
            return a.start - b.end
        return dt.timedelta(0)


def _in_year(p: Period, year: int) -> Period:
    if p.year_known:
        return p
    try:
        return Period(p.start.replace(year=year), p.end.replace(year=year))
    except ValueError:  # 29 February
        return Period(p.start.replace(year=year, day=28), p.end.replace(year=year, day=28))


@dataclass(frozen=True)
class Values:
    """The typed parts of a sentence, for the event path."""

    periods: tuple[Period, ...] = ()
    numbers: tuple[tuple[float, str], ...] = ()  # (value, the noun it counts, lemmatised)
    names: frozenset[str] = frozenset()
    spans: tuple[tuple[int, int], ...] = ()  # where the values are written


def read(text: str, at: dt.datetime | None) -> Values:
    """Dates (as periods; relative ones need `at`), counted numbers and names in `text`."""
    spans: list[tuple[int, int]] = []
    periods: list[Period] = []
    for pattern in _ABSOLUTE_RES:
        for m in pattern.finditer(text):
            if _inside(m.span(), spans):
                continue
            p = _absolute(m, at)
            if p is not None:
                periods.append(_qualified(p, text[: m.start()]))
                spans.append(m.span())
    for pattern, kind in _RELATIVE_RES:
        for m in pattern.finditer(text):
            if at is None or _inside(m.span(), spans):
                continue
            p = _relative(m, kind, at.date())
            if p is not None:
                periods.append(p)
                spans.append(m.span())
    for pattern in claims.TIME_RES:  # times of day: not compared here, but not words either
        for m in pattern.finditer(text):
            if not _inside(m.span(), spans):
                spans.append(m.span())
    numbers: list[tuple[float, str]] = []
    for m in _MEASURE_RE.finditer(text):  # "a 5K run", "10 km": the unit is what it counts
        if _inside(m.span(), spans):
            continue
        unit = m.group("unit").lower()
        numbers.append((float(m.group("num")), _MEASURE_UNITS.get(unit, unit)))
        spans.append(m.span())
    for pattern in _AGE_RES:
        for m in pattern.finditer(text):
            if _inside(m.span("n"), spans):
                continue
            numbers.append((_count(m), "age"))
            spans.append(m.span("ones") if m.group("ones") else m.span("n"))
    for m in _TIMES_RE.finditer(text):
        numbers.append((_TIMES[m.group("word").lower()], lemma("times")))
        spans.append(m.span("word"))
    for m in _NUMBER_RE.finditer(text):
        if _inside(m.span("num"), spans):
            continue
        raw = m.group("num").lower()
        value = float(raw) if raw[0].isdigit() else float(claims.NUMBER_WORDS[raw])
        if m.group("ones"):
            value += claims.NUMBER_WORDS[m.group("ones").lower()]
        noun = (m.group("noun") or "").lower()
        if noun in lexicon.STOP_WORDS:
            noun = ""  # "$18 a walk": the number counts nothing said
        if noun in _UNITS or (raw == "one" and noun in {"of", "day", "time", "thing"}):
            continue  # "one of them", "one day": not a count
        if raw[0].isdigit() and 1900 <= value <= 2100 and not noun:
            continue  # a year
        numbers.append((value, lemma(noun) if noun else ""))
        spans.append(m.span("ones") if m.group("ones") else m.span("num"))  # the noun is relation
    names = frozenset(
        n for n in claims.names(text) if n not in _WEEKDAY_FORMS and n not in claims.MONTHS
    )
    return Values(tuple(periods), tuple(numbers), names, tuple(spans))


def _count(m: re.Match[str]) -> float:
    raw = m.group("n").lower()
    value = float(raw) if raw[0].isdigit() else float(claims.NUMBER_WORDS[raw])
    if m.group("ones"):
        value += claims.NUMBER_WORDS[m.group("ones").lower()]
    return value


def _inside(span: tuple[int, int], spans: Iterable[tuple[int, int]]) -> bool:
    return any(span[0] < b and span[1] > a for a, b in spans)


def _absolute(m: re.Match[str], at: dt.datetime | None) -> Period | None:
    g = m.groupdict()
    year = int(g["year"]) if g.get("year") else None
    month = int(g["mnum"]) if g.get("mnum") else claims.MONTHS.get((g.get("month") or "").lower())
    day = int(g["day"]) if g.get("day") else None
    try:
        if month is None:
            if year is None:
                return None
            return Period(dt.date(year, 1, 1), dt.date(year, 12, 31))
        known = year is not None
        y = year if year is not None else (at.year if at is not None else 2000)
        if day is None:
            start = dt.date(y, month, 1)
            end = (start.replace(day=28) + dt.timedelta(days=4)).replace(day=1)
            return Period(start, end - dt.timedelta(days=1), known)
        return Period(dt.date(y, month, day), dt.date(y, month, day), known)
    except ValueError:
        return None


def _qualified(p: Period, before: str) -> Period:
    """ "the week before 9 June", "the Sunday before 25 May", "the week of 23 August"."""
    tail = before[-40:]
    m = _BEFORE_RE.search(tail)
    if m is not None:
        what = m.group("what").lower()
        back = 31 if what.startswith("month") else 21 if what.endswith("s") else 10
        return Period(p.start - dt.timedelta(days=back), p.start, p.year_known)
    if _OF_RE.search(tail):
        return Period(p.start - dt.timedelta(days=6), p.end + dt.timedelta(days=6), p.year_known)
    if _BY_RE.search(tail):  # "by mid-August", "until May": any time up to then
        return Period(p.start - dt.timedelta(days=3650), p.end, p.year_known)
    if _AFTER_RE.search(tail):
        return Period(p.start, p.end + dt.timedelta(days=10), p.year_known)
    return p


def _relative(m: re.Match[str], kind: str, day: dt.date) -> Period | None:
    def span(a: dt.date, b: dt.date) -> Period:
        return Period(min(a, b), max(a, b))

    if kind.startswith("d"):
        d = day + dt.timedelta(days=int(kind[1:]))
        # "last night", "yesterday" are often said of the evening before: a day either side
        return span(d, d)
    if kind == "just":
        return span(day - dt.timedelta(days=3), day)
    if kind == "few":
        return span(day - dt.timedelta(days=5), day - dt.timedelta(days=2))
    if kind in ("lastwd", "nextwd"):
        target = _WEEKDAY_INDEX[_WEEKDAY_FORMS[m.group("weekday").lower().rstrip(".")]]
        if kind == "lastwd":
            back = (day.weekday() - target) % 7 or 7
            d = day - dt.timedelta(days=back)
        else:
            ahead = (target - day.weekday()) % 7 or 7
            d = day + dt.timedelta(days=ahead)
        return span(d, d)
    unit = (m.group("unit") or "").lower().rstrip("s")
    if kind == "ago":
        raw = re.sub(r"\s+", " ", m.group("n").lower())
        n = {"a": 1, "an": 1, "a few": 3, "a couple of": 2}.get(raw)
        if n is None:
            n = int(raw) if raw.isdigit() else claims.NUMBER_WORDS.get(raw, 1)
        if unit == "day":
            d = day - dt.timedelta(days=n)
            return span(d, d)
        if unit in ("week", "weekend"):
            d = day - dt.timedelta(weeks=n)
            return span(d - dt.timedelta(days=3), d + dt.timedelta(days=3))
        if unit == "month":
            d = day - dt.timedelta(days=30 * n)
            return span(d - dt.timedelta(days=15), d + dt.timedelta(days=15))
        year = day.year - n
        return span(dt.date(year, 1, 1), dt.date(year, 12, 31))
    step = {"last": -1, "this": 0, "next": 1}[kind]
    if unit in ("week", "weekend"):
        monday = day - dt.timedelta(days=day.weekday()) + dt.timedelta(weeks=step)
        if unit == "weekend":
            return span(monday + dt.timedelta(days=4), monday + dt.timedelta(days=6))
        return span(monday, monday + dt.timedelta(days=6))
    if unit == "month":
        index = day.year * 12 + day.month - 1 + step
        start = dt.date(index // 12, index % 12 + 1, 1)
        end = (start.replace(day=28) + dt.timedelta(days=4)).replace(day=1)
        return span(start, end - dt.timedelta(days=1))
    if unit == "summer":
        year = day.year + step if step else day.year
        return span(dt.date(year, 6, 1), dt.date(year, 8, 31))
    year = day.year + step
    return span(dt.date(year, 1, 1), dt.date(year, 12, 31))


def relation_words(text: str, values: Values, drop: set[str]) -> set[str]:
    """The content words of `text` outside its values and the names in `drop`, lemmatised."""
    kept = []
    last = 0
    for a, b in sorted(values.spans):
        kept.append(text[last:a])
        last = b
    kept.append(text[last:])
    out = set()
    for w in words_of(" ".join(kept)):
        base = lemma(w)
        if w in lexicon.STOP_WORDS or base in lexicon.STOP_WORDS or len(base) < 2:
            continue
        if base in drop or bare(w) in drop or w in FIRST_PERSON or w in YOU:
            continue
        if base in claims.MONTHS or base in _WEEKDAY_FORMS or base in _WHEN_WORDS:
            continue
        out.add(base)
    return out
