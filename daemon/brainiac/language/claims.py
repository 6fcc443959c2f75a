"""Values as things that can be compared: weekdays, dates, times of day, amounts and names.

"Monday 2026-11-30", "Monday the 30th" and "due the 30th" must count as the same deadline, and
"55k EUR" as "55,000 euros", while "Friday" and "€40,000" must not. So a value is read into typed
parts, and two values are compared part by part, only where both have a part of that kind: a
response that says "Monday" about a deadline stored as "Monday 2026-11-30" agrees with it. Pure
functions, no I/O; the consistency check (check.py) decides which sentence is about which fact.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from brainiac.language.lexicon import STOP_WORDS

_WEEKDAY_SHORT = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")


def _listed(text: str) -> list[str]:
    return text.split()


WEEKDAYS = {
    "monday": "mon",
    "tuesday": "tue",
    "wednesday": "wed",
    "thursday": "thu",
    "friday": "fri",
    "saturday": "sat",
    "sunday": "sun",
}
_MONTH_NAMES = (
    "january jan",
    "february feb",
    "march mar",
    "april apr",
    "may",
    "june jun",
    "july jul",
    "august aug",
    "september sep sept",
    "october oct",
    "november nov",
    "december dec",
)
MONTHS = {name: i + 1 for i, names in enumerate(_MONTH_NAMES) for name in names.split()}
_MONTH = r"(?P<month>" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
_ORD = r"(?:st|nd|rd|th)"
_DATE_RES = (
    re.compile(r"\b(?P<year>\d{4})-(?P<mnum>\d{2})-(?P<day>\d{2})\b"),
    re.compile(rf"\b(?P<day>\d{{1,2}}){_ORD}?(?:\s+of)?\s+{_MONTH}\b", re.I),
    re.compile(rf"\b{_MONTH}\s+(?P<day>\d{{1,2}}){_ORD}?\b", re.I),
    re.compile(rf"\b(?P<day>\d{{1,2}}){_ORD}\b", re.I),
    re.compile(r"\b(?P<mnum>\d{1,2})/(?P<day>\d{1,2})(?:/\d{2,4})?\b"),
    # A month alone, where it cannot be the verb "may": "in November", "late March".
    re.compile(rf"\b(?:in|of|early|mid|late|since|until|by)\s+(?:-\s*)?{_MONTH}\b", re.I),
)
_RELATIVE_DAYS = {
    "the day after tomorrow": 2,
    "the day before yesterday": -2,
    "today": 0,
    "tonight": 0,
    "this morning": 0,
    "this afternoon": 0,
    "this evening": 0,
    "tomorrow": 1,
    "yesterday": -1,
}
_RELATIVE_RE = re.compile(r"\b(" + "|".join(_RELATIVE_DAYS) + r")\b", re.I)
_CODE_RE = re.compile(r"(?<![\w.,])\+?\d(?:[ -]?\d){6,}(?![\w.,])")
_HOUR_WORDS = {
    w: i + 1
    for i, w in enumerate(_listed("one two three four five six seven eight nine ten eleven twelve"))
}
_HOUR = r"(?P<h>\d{1,2}|" + "|".join(_HOUR_WORDS) + ")"
TIME_RES = (
    re.compile(
        rf"\b(?P<past>half|quarter|five|ten|twenty|twenty-five|\d{{1,2}})\s+(?:minutes\s+)?"
        rf"(?P<dir>past|to)\s+{_HOUR}\b",
        re.I,
    ),
    re.compile(rf"\b(?P<past>half)\s+{_HOUR}\b(?!\s+(?:hours?|an?)\b)", re.I),  # "half seven"
    re.compile(rf"\b{_HOUR}\s+o'?clock\b", re.I),
    re.compile(r"\b(?P<h>\d{1,2}):(?P<m>\d{2})\s*(?P<ampm>[ap]\.?m\.?)?(?![\w:])", re.I),
    re.compile(r"\b(?P<h>\d{1,2})(?:\.(?P<m>\d{2}))?\s*(?P<ampm>[ap]\.?m\.?)(?!\w)", re.I),
    re.compile(r"\b(?P<noon>noon|midday|midnight)\b", re.I),
    # "at 11": morning or evening is not said, so both count (see `_minutes`).
    re.compile(r"\bat\s+(?P<h>\d{1,2})(?![\d:.,]|\s*(?:[ap]\.?m|%|k\b|percent))", re.I),
    re.compile(rf"\bat\s+{_HOUR}\b(?![\d:.,])", re.I),
)
_DURATION_RE = re.compile(r"\b\d{1,3}:\d{2}(?::\d{2})?\b")
_UNIT_ALIASES = {
    "kilo": "kg",
    "kilos": "kg",
    "kilogram": "kg",
    "kilograms": "kg",
    "gram": "g",
    "grams": "g",
    "min": "minute",
    "mins": "minute",
    "minutes": "minute",
    "hr": "hour",
    "hrs": "hour",
    "hours": "hour",
    "mile": "mile",
    "miles": "mile",
}
_CURRENCY = {
    "€": "money",
    "$": "money",
    "£": "money",
    "eur": "money",
    "euro": "money",
    "euros": "money",
    "usd": "money",
    "dollar": "money",
    "dollars": "money",
    "gbp": "money",
    "pound": "money",
    "pounds": "money",
    "chf": "money",
    "%": "percent",
    "percent": "percent",
    "per cent": "percent",
}
_SCALE = {
    "k": 1e3,
    "thousand": 1e3,
    "grand": 1e3,
    "m": 1e6,
    "mn": 1e6,
    "million": 1e6,
    "bn": 1e9,
}
_UNITS = (
    r"eur|euros?|usd|dollars?|gbp|pounds?|chf|%|percent|per cent|kg|kilos?|g|grams?|km|miles?"
    r"|minutes?|mins?|hours?|hrs?|days?|weeks?|months?|years?|people|engineers|tables|users"
)
_AMOUNT_RE = re.compile(
    r"(?P<pre>[€$£])?\s?(?P<num>\d+(?:[,\u202f ]\d{3})*(?:\.\d+)?)\s?"
    r"(?P<scale>k|thousand|grand|mn|million|bn|m)?(?![\w])\s?"
    rf"(?P<unit>{_UNITS})?(?!\w)",
    re.I,
)
NUMBER_WORDS = {
    w: i
    for i, w in enumerate(
        _listed(
            "zero one two three four five six seven eight nine ten eleven twelve thirteen "
            "fourteen fifteen sixteen seventeen eighteen nineteen"
        )
    )
} | {
    w: 10 * (i + 2)
    for i, w in enumerate(_listed("twenty thirty forty fifty sixty seventy eighty ninety"))
}
# "forty grand", "twenty-five thousand euros": amounts written out, as people say them.
_WORDED_AMOUNT_RE = re.compile(
    r"\b(?P<tens>" + "|".join(NUMBER_WORDS) + r")(?:[- ](?P<ones>one|two|three|four|five|six"
    r"|seven|eight|nine))?\s+(?P<scale>thousand|grand|million)\b(?:\s+(?P<unit>euros?|dollars?"
    r"|pounds?))?",
    re.I,
)
_NAME_RE = re.compile(r"(?<![\w'])[A-ZÀ-ÖØ-Þ][\w&'’-]*")
_NOT_NAMES = (
    set(STOP_WORDS)
    | set(WEEKDAYS)
    | set(MONTHS)
    | {
        "i",
        "i'm",
        "i've",
        "i'll",
        "i'd",
        "ok",
        "okay",
        "yes",
        "no",
        "sure",
        "great",
        "thanks",
        "noted",
        "sorry",
        "also",
        "so",
        "just",
        "note",
        "remember",
        "quick",
        "reminder",
        "btw",
        "fyi",
        "good",
        "perfect",
        "right",
        "today",
        "tomorrow",
        "yesterday",
        "tonight",
        "hi",
        "hey",
        "hello",
        "dr",
        "mr",
        "mrs",
        "ms",
        "prof",
        "sir",
        "st",
    }
)


@dataclass(frozen=True)
class Values:
    """The comparable parts of a value or of a claim."""

    weekdays: frozenset[str] = frozenset()
    dates: frozenset[tuple[int | None, int | None]] = (
        frozenset()
    )  # (month, day): either may be None
    times: frozenset[int] = frozenset()  # minutes after midnight
    amounts: frozenset[tuple[str, float]] = frozenset()  # (unit family or "", value)
    names: frozenset[str] = frozenset()  # lowercased words of proper names
    durations: frozenset[str] = frozenset()  # "52:40" (a race time), compared as written
    codes: frozenset[str] = frozenset()  # phone numbers and other long digit strings

    def empty(self) -> bool:
        return not (
            self.weekdays
            or self.dates
            or self.times
            or self.amounts
            or self.names
            or self.durations
            or self.codes
        )


def read(text: str, ignore: frozenset[str] = frozenset(), now: dt.datetime | None = None) -> Values:
    """The typed parts of `text`; words in `ignore` (lowercased) are not taken as names. With
    `now`, "today", "tonight", "tomorrow" and "yesterday" are dates too."""
    text = text.replace("[[", " ").replace("]]", " ")
    spans: list[tuple[int, int]] = []
    dates: set[tuple[int | None, int | None]] = set()
    weekdays: set[str] = set()
    for pattern in _DATE_RES:
        for m in pattern.finditer(text):
            if _inside(m.start(), m.end(), spans):
                continue
            groups = m.groupdict()
            day = int(groups["day"]) if groups.get("day") else None
            month: int | None = None
            if groups.get("mnum"):
                month = int(groups["mnum"])
            elif groups.get("month"):
                month = MONTHS[groups["month"].lower()]
            if (day is None or 1 <= day <= 31) and (month is None or 1 <= month <= 12):
                dates.add((month, day))
                spans.append((m.start(), m.end()))
    codes = set()
    for m in _CODE_RE.finditer(text):
        if _inside(m.start(), m.end(), spans):
            continue
        digits = re.sub(r"\D", "", m.group())
        if len(digits) >= 7:
            codes.add(digits)
            spans.append((m.start(), m.end()))
    if now is not None:
        for m in _RELATIVE_RE.finditer(text):
            when = now + dt.timedelta(days=_RELATIVE_DAYS[m.group(1).lower()])
            dates.add((when.month, when.day))
            weekdays.add(_WEEKDAY_SHORT[when.weekday()])
    times = set()
    for pattern in TIME_RES:
        for m in pattern.finditer(text):
            if _inside(m.start(), m.end(), spans):
                continue
            found = _minutes(m.groupdict())
            if found:
                times.update(found)
                spans.append((m.start(), m.end()))
    durations = set()
    for m in _DURATION_RE.finditer(text):
        if not _inside(m.start(), m.end(), spans):
            durations.add(m.group())
            spans.append((m.start(), m.end()))
    amounts = set()
    for m in _AMOUNT_RE.finditer(text):
        if _inside(m.start("num"), m.end("num"), spans):
            continue
        amount = _amount(m)
        if amount is not None:
            amounts.add(amount)
    for m in _WORDED_AMOUNT_RE.finditer(text):
        number = NUMBER_WORDS[m.group("tens").lower()] + NUMBER_WORDS.get(
            (m.group("ones") or "zero").lower(), 0
        )
        scale = m.group("scale").lower()
        family = "money" if scale == "grand" or m.group("unit") else ""
        amounts.add((family, number * _SCALE[scale]))
    lowered = text.lower()
    weekdays |= {short for day, short in WEEKDAYS.items() if re.search(rf"\b{day}s?\b", lowered)}
    return Values(
        frozenset(weekdays),
        frozenset(dates),
        frozenset(times),
        frozenset(amounts),
        frozenset(names(text, ignore)),
        frozenset(durations),
        frozenset(codes),
    )


_CONTRACTION_RE = re.compile(r"'(?:ve|re|ll|d|m|t)$|n't$")


def names(text: str, ignore: frozenset[str] = frozenset()) -> set[str]:
    """Lowercased words of capitalised names, leaving out sentence openers and common words."""
    out = set()
    for m in _NAME_RE.finditer(text):
        word = m.group().replace("’", "'").rstrip("'").removesuffix("'s").lower()
        if word in _NOT_NAMES or word in ignore or len(word) < 2 or _CONTRACTION_RE.search(word):
            continue
        if word.endswith("s") and (word[:-1] in WEEKDAYS or word[:-1] in ignore):
            continue  # "Thursdays", and the plural of a word to ignore
        before = text[: m.start()].rstrip()
        opens_sentence = not before or before[-1] in '.!?:\n"“(-*>'
        if opens_sentence and word in STOP_WORDS:
            continue
        out.add(word)
    return out


def _inside(start: int, end: int, spans: list[tuple[int, int]]) -> bool:
    return any(start < b and end > a for a, b in spans)


_PAST_MINUTES = {"half": 30, "quarter": 15, "five": 5, "ten": 10, "twenty": 20, "twenty-five": 25}


def _minutes(groups: dict[str, str | None]) -> set[int]:
    """The times a match can mean, in minutes after midnight: two when neither am/pm nor a
    24-hour clock says which ("at 11", "half past nine")."""
    if groups.get("noon"):
        return {0 if (groups["noon"] or "").lower() == "midnight" else 12 * 60}
    raw = (groups.get("h") or "0").lower()
    hour = int(raw) if raw.isdigit() else _HOUR_WORDS[raw]
    minute = int(groups.get("m") or 0)
    past = groups.get("past")
    if past:
        step = _PAST_MINUTES.get(past.lower()) or int(past) if not past.isdigit() else int(past)
        if (groups.get("dir") or "past").lower() == "past":
            minute = step
        else:
            hour, minute = hour - 1, 60 - step
    ampm = (groups.get("ampm") or "").lower().replace(".", "")
    if ampm == "pm" and hour < 12:
        hour += 12
    elif ampm == "am" and hour == 12:
        hour = 0
    if not 0 <= hour <= 23 or minute > 59:
        return set()
    at = hour * 60 + minute
    # "3:30" may be either; "09:30" is a 24-hour clock
    unpadded = "m" in groups and not (groups.get("h") or "").startswith("0")
    ambiguous = not ampm and 0 < hour < 12 and (past is not None or "m" not in groups or unpadded)
    return {at, at + 12 * 60} if ambiguous else {at}


def _amount(m: re.Match[str]) -> tuple[str, float] | None:
    raw = m.group("num")
    marked = m.group("pre") or m.group("unit") or m.group("scale")
    if re.fullmatch(r"\d{1,2}", raw) and not marked:
        return None  # a bare small number is a count in passing, not an amount worth comparing
    try:
        number = float(re.sub(r"[,\u202f ]", "", raw))
    except ValueError:
        return None
    number *= _SCALE.get((m.group("scale") or "").lower(), 1.0)
    unit = (m.group("unit") or "").lower()
    family = _CURRENCY.get(m.group("pre") or "") or _CURRENCY.get(unit)
    if family is None:
        family = _UNIT_ALIASES.get(unit, unit.rstrip("s"))
    return family, number


def same_amount(a: tuple[str, float], b: tuple[str, float]) -> bool | None:
    """True/False when the two amounts are comparable: the same unit, or money said without
    its currency ("the budget is 55,000"); None otherwise."""
    if a[0] != b[0] and not ({a[0], b[0]} <= {"", "money"}):
        return None
    return abs(a[1] - b[1]) <= 1e-9 * max(abs(a[1]), abs(b[1]), 1.0)


def same_date(a: tuple[int | None, int | None], b: tuple[int | None, int | None]) -> bool | None:
    """Whether two dates agree; None when they say different things (a month and a day)."""
    if a[1] is not None and b[1] is not None:
        return a[1] == b[1] and (a[0] is None or b[0] is None or a[0] == b[0])
    if a[0] is not None and b[0] is not None:
        return a[0] == b[0]  # "in November" and "19 October"
    return None


def agree(claim: Values, stored: Values) -> bool | None:
    """Whether a claim agrees with a stored value: False if any kind of part both have differs,
    True if all such kinds match, None if they have no kind of part in common."""
    verdicts: list[bool] = []
    if claim.weekdays and stored.weekdays:
        verdicts.append(bool(claim.weekdays & stored.weekdays))
    dated = [same_date(a, b) for a in claim.dates for b in stored.dates]
    if any(d is not None for d in dated):
        verdicts.append(any(dated))
    if claim.times and stored.times:
        verdicts.append(bool(claim.times & stored.times))
    pairs = [same_amount(a, b) for a in claim.amounts for b in stored.amounts]
    comparable = [same for same in pairs if same is not None]
    if comparable:
        verdicts.append(any(comparable))
    if claim.codes and stored.codes:
        verdicts.append(bool(claim.codes & stored.codes))
    if claim.durations and stored.durations:
        verdicts.append(bool(claim.durations & stored.durations))
    if claim.names and stored.names:
        verdicts.append(bool(claim.names & stored.names))
    if not verdicts:
        return None
    return all(verdicts)
