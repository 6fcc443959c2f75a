"""The guard's second witness: the remembered events themselves.

The fact path (check.py) compares a response with `- key: value` lines, and most of what a
conversation says never becomes one ("I went to a LGBTQ support group yesterday"). So a sentence
the facts could not judge is also compared with the events it is about:

1. retrieve: the events that share the sentence's words, through the index (one search);
2. align: an event (a turn) is about the sentence when it is said by, or names, the sentence's
   subject (a speaker named in it, or the user for "you") and holds most of the sentence's other
   content words once its values are set aside (light lemmatising: "went" is "go");
3. read typed values on both sides: dates as periods, with the event's relative dates resolved
   against the event's own time ("yesterday", "last Saturday", "last week", "next month",
   "two years ago"), numbers with the noun they count, and proper names (people, places);
4. decide: a value the event states the same way -> consistent; only when every aligned event
   that has a value of the sentence's kind states another one (and the sentence's value is said
   by none of them) -> conflict, with the event id, file, line, its sentence and the correction;
   anything else -> unverified;
5. read beside the facts the deciding event gave (their sources name it): a conflict is
   reported under that fact's note and key, and a value a later event replaced neither
   contradicts nor confirms (repeating it is a superseded conflict).

Precision first, as in check.py: a conflict needs a close alignment (most relation words shared,
at least one of them not a light verb) and a value of the same kind that differs clearly (dates
more than a few days apart). Pure reading and one index search per sentence: no model.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import difflib
import functools
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from brainiac import claims, extract, lexicon
from brainiac.check_facts.clauses import clauses_of
from brainiac.check_facts.verdicts import (
    CONFLICT,
    CONSISTENT,
    UNVERIFIED,
    CheckResult,
    Conflict,
    Finding,
    Known,
    conflict_finding,
    fact_conflict,
)

if TYPE_CHECKING:
    from brainiac.facts import Superseded
    from brainiac.index import Hit
    from brainiac.memory_protocol import MemoryLike

_CANDIDATES = 40  # events compared, best first
_ALIGNED = 0.45  # share of the sentence's relation words an event must hold to contradict it
_ALIGNED_CLAUSES = 0.6  # ... when the sentence has more than one clause
_RELATED = 0.4  # ... to confirm it (an agreement costs nothing if wrong: it only withholds)
_MARGIN = 0.25  # how far below the best-aligned event another still has a say
_DATE_SLACK = dt.timedelta(days=3)  # "last week" and "the week before 9 June" overlap loosely

_WORD_RE = re.compile(r"[^\W\d_][\w'’-]*")  # "siobhán" is one word
# Verbs and nouns that say little about which event is meant.
_LIGHT = lexicon.word_set(
    """
    go get have make do take be feel like love want need come see know think thing time day
    really lot year week month people way also new great good fun
    """
)
_IRREGULAR = {
    "went": "go",
    "gone": "go",
    "goes": "go",
    "going": "go",
    "ran": "run",
    "running": "run",
    "took": "take",
    "taken": "take",
    "made": "make",
    "met": "meet",
    "had": "have",
    "has": "have",
    "got": "get",
    "bought": "buy",
    "saw": "see",
    "seen": "see",
    "gave": "give",
    "given": "give",
    "began": "begin",
    "begun": "begin",
    "wrote": "write",
    "written": "write",
    "drew": "draw",
    "drawn": "draw",
    "flew": "fly",
    "found": "find",
    "left": "leave",
    "felt": "feel",
    "told": "tell",
    "said": "say",
    "won": "win",
    "lost": "lose",
    "kids": "child",
    "kid": "child",
    "children": "child",
    "sang": "sing",
    "swam": "swim",
    "ate": "eat",
    "taught": "teach",
    "brought": "bring",
    "thought": "think",
    "spoke": "speak",
    "chose": "choose",
    "held": "hold",
    "built": "build",
    "sold": "sell",
    "paid": "pay",
    "heard": "hear",
    "mom": "mother",
    "mum": "mother",
    "dad": "father",
    "fest": "festival",
}
# Words that frame a time ("the week before", "around", "early"): part of the value, not the event.
_WHEN_WORDS = lexicon.word_set(
    """
    week weekend month year day morning afternoon evening night time before after around about
    early mid mid- late ago last past recent recently earlier later summer winter spring autumn fall
    """
)
# The past said as the past (check.py's list, less "old" and "earlier": "her old car" is a car,
# and the events are all past anyway).
_FORMERLY_RE = re.compile(
    r"\b(?:used to|originally|previously|formerly|initially|at first|back then|had been"
    r"|was once|prior|until recently|moved from|changed from)\b",
    re.I,
)
_FIRST_PERSON = lexicon.word_set("i i'm i've i'll i'd me my mine myself we we're we've us our")
_YOU = lexicon.word_set("you you're you've your yours yourself")
_NUMBER_WORDS = {**claims.NUMBER_WORDS, "a couple of": 2, "a couple": 2, "twice": 2, "once": 1}
_NUMBER_RE = re.compile(
    r"(?<![\w.:/-])(?P<num>\d{1,4}(?:\.\d+)?|"
    + "|".join(sorted(claims.NUMBER_WORDS, key=len, reverse=True))
    + r")(?:[- ](?P<ones>one|two|three|four|five|six|seven|eight|nine))?"
    r"(?![\w:/-]|\.\d)(?:\s+(?:more\s+|other\s+|new\s+|little\s+|young\s+|younger\s+|older\s+)?"
    r"(?P<noun>[a-z]+))?",
    re.I,
)
_UNITS = {"k", "kg", "km", "mi", "am", "pm", "st", "nd", "rd", "th", "percent", "%"}
_MONTH = r"(?P<month>" + "|".join(sorted(claims.MONTHS, key=len, reverse=True)) + r")\.?"
_YEAR = r"(?P<year>(?:19|20)\d{2})"
_ABSOLUTE_RES = (
    re.compile(r"\b(?P<year>\d{4})-(?P<mnum>\d{2})-(?P<day>\d{2})\b"),
    re.compile(
        rf"\b(?P<day>\d{{1,2}})(?:st|nd|rd|th)?(?:\s+of)?\s+{_MONTH}(?:,?\s+{_YEAR})?\b", re.I
    ),
    re.compile(rf"\b{_MONTH}\s+(?P<day>\d{{1,2}})(?:st|nd|rd|th)?(?:,?\s+{_YEAR})?\b", re.I),
    re.compile(rf"\b{_MONTH}(?:,?\s+{_YEAR})\b", re.I),
    re.compile(rf"\b(?:in|of|early|mid|late|since|until|by|during)\s+(?:-\s*)?{_MONTH}\b", re.I),
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


@dataclass(frozen=True)
class EventLine:
    """A remembered event as the index found it (llm_check.py sends the same lines)."""

    id: str
    path: str
    role: str
    at: dt.datetime | None
    text: str


@dataclass(frozen=True)
class _Aligned:
    event: EventLine
    sentence: str  # the event's sentence most about the claim
    score: float  # the share of the claim's relation words the event holds
    values: Values
    timed: bool  # the event states a time of its own (else its own time stands in)
    core: bool  # its sentence shares a word with the claim that is neither light nor a name


# --- reading -----------------------------------------------------------------------------------


@functools.lru_cache(maxsize=65536)  # a conversation repeats its words: read each once
def lemma(word: str) -> str:
    """A word's plain form, enough to match "went" with "go", "painted" with "paint" and
    "donated" with "donate" (both "donat": a final e is dropped, so only compare lemmas)."""
    base = _lemma(word)
    return base[:-1] if len(base) > 3 and base.endswith("e") else base


def _lemma(word: str) -> str:
    word = word.lower().replace("’", "'").removesuffix("'s").strip("'")
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    for suffix, keep in (
        ("ies", "y"),
        ("ied", "y"),
        ("ing", ""),
        ("ed", ""),
        ("es", ""),
        ("s", ""),
    ):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            base = word[: -len(suffix)] + keep
            if suffix in ("ing", "ed") and len(base) > 3 and base[-1] == base[-2]:
                base = base[:-1]  # "running" -> "run", "planned" -> "plan"
            if suffix == "es" and not base.endswith(("sh", "ch", "x", "ss", "z")):
                base = word[:-1]  # "races" -> "race"
            if suffix == "s" and word.endswith(("ss", "us", "is")):
                return word
            return base
    return word


_LIGHT_LEMMAS = frozenset(lemma(w) for w in _LIGHT)


def _bare(word: str) -> str:
    """A word without its possessive ("Nate's", "the Murphys'")."""
    return word.removesuffix("'s").rstrip("'")


def _words(text: str) -> list[str]:
    return _WORD_RE.findall(text.lower().replace("’", "'"))


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


_OWNED_RE = re.compile(
    r"\b(?P<owner>(?i:my|your|his|her|our|their)|[A-Z][\w-]+'s)\s+(?:[\w-]+\s+){0,2}?(?P<thing>[\w-]+)"
)


def _owners(text: str, me: str | None, you: str | None) -> dict[str, str]:
    """Whose each thing is ("my sister Lena's birthday": Lena's), for the things said with an
    owner: "my" is `me`'s, "your" is `you`'s, "Lena's" is lena's."""
    out: dict[str, str] = {}
    for m in _OWNED_RE.finditer(text):
        raw = m.group("owner")
        owner = {"my": me, "our": me, "your": you}.get(raw.lower(), raw.lower().removesuffix("'s"))
        if raw.lower() in {"his", "her", "their"}:
            continue  # whose is not said
        if owner:
            out[lemma(m.group("thing"))] = owner
    return out


def _relation(text: str, values: Values, drop: set[str]) -> set[str]:
    """The content words of `text` outside its values and the names in `drop`, lemmatised."""
    kept = []
    last = 0
    for a, b in sorted(values.spans):
        kept.append(text[last:a])
        last = b
    kept.append(text[last:])
    out = set()
    for w in _words(" ".join(kept)):
        base = lemma(w)
        if w in lexicon.STOP_WORDS or base in lexicon.STOP_WORDS or len(base) < 2:
            continue
        if base in drop or _bare(w) in drop or w in _FIRST_PERSON or w in _YOU:
            continue
        if base in claims.MONTHS or base in _WEEKDAY_FORMS or base in _WHEN_WORDS:
            continue
        out.add(base)
    return out


# --- deciding ----------------------------------------------------------------------------------


def with_events(
    memory: MemoryLike,
    result: CheckResult,
    now: dt.datetime,
    hits: Sequence[Hit],
    known: Sequence[Known],
) -> CheckResult:
    """`result` with each sentence the facts could not judge judged by the events: `hits`,
    the events the search for the response found (one search for the whole response); `known`,
    the facts check gathered, to read an event's verdict beside the facts it gave."""
    if not any(f.status == UNVERIFIED for f in result.findings):
        return result
    findings: list[Finding] = []
    conflicts: list[Conflict] = list(result.conflicts)
    events = event_lines(hits)
    for f in result.findings:
        if f.status != UNVERIFIED:
            findings.append(f)
            continue
        judged = _judge_sentence(memory, f.claim, now, events)
        if judged is None:
            findings.append(f)
            continue
        finding, conflict = judged
        if known and finding.block:
            finding, conflict = _beside_facts(finding, conflict, f, known, now)
        findings.append(finding)
        if conflict is not None:
            conflicts.append(conflict)
    return dataclasses.replace(result, conflicts=tuple(conflicts), findings=tuple(findings))


def _judge_sentence(
    memory: MemoryLike, sentence: str, now: dt.datetime, hits: list[EventLine]
) -> tuple[Finding, Conflict | None] | None:
    clauses = clauses_of(sentence)
    if any(c.asks or c.supposes or c.negated or c.plans for c in clauses):
        return None  # only a plain statement is compared with the events
    if _FORMERLY_RE.search(sentence):
        return None  # "it was Friday originally": a past value said as past, not a claim

    said = read(sentence, now)
    thing = _object(sentence)
    if not (said.periods or said.numbers or said.names or thing) or not hits:
        return None
    speakers = {e.role.lower() for e in hits if e.role}
    subject = _subject(sentence, speakers)
    names = set(said.names) - speakers
    opener = _words(sentence)[:1]
    if opener and opener[0] in names and not _capitalised(opener[0], hits):
        names.discard(opener[0])  # "Rehearsals moved ...": capitalised for opening the sentence
    # A name the memory knows (said in any of these events) is not a wrong name: it may be
    # context ("lodged with Dublin City Council"), so only unknown names can contradict.
    known_names = {n for e in hits for n in claims.names(e.text)} | {
        _bare(w) for e in hits for w in _words(e.text) if len(w) > 3
    }
    # a misspelling in the conversation ("Xeonoblade") is the same name, not another one
    unknown = {n for n in names - known_names if not _near(n, known_names)}
    # A claim whose value is a name ("the cat is named Daisy"): its names are the value, not
    # words the event must share. Beside a date or a count, the names the memory knows say
    # which event is meant ("Eternal Sunshine"), and only unknown ones are set aside.
    index = memory.indexer.index
    # A thing the memory never mentions, said beside a date ("In December you made sushi"): set
    # aside like an unknown name, then judged by the event the rest of the sentence is about.
    novel = {w for w in thing if not index.frequency(w)} if thing == _object(sentence) else set()
    if said.periods or said.numbers or names:
        thing = set()  # a typed value is the claim's value; the thing is only said beside it
    value_names = unknown if (said.periods or said.numbers) else names
    relation = _relation(sentence, said, speakers | value_names | thing | novel | {"user"})
    if not relation - _LIGHT_LEMMAS:
        return None  # "Melanie went there on 7 May": nothing says which event
    owned = _owners(sentence, None, subject)
    total = max(index.doc_count(), 1)
    # A rare word says more about which event is meant than a common one ("gym" vs "start").
    weights = {w: math.log(1.0 + total / (1.0 + index.frequency(w))) for w in relation}
    aligned = [
        a
        for a in (_align(e, subject, relation, weights, said.names, owned) for e in hits)
        if a is not None
    ]
    if not aligned:
        return None
    if thing:
        return _judge_object(memory, sentence.strip(), thing, aligned, relation, len(clauses))
    judged = [
        (a, v)
        for a in aligned
        if (v := _compare(said, a, names & known_names, unknown, speakers)) is not None
    ]
    if not judged:
        return None
    # The events most about the sentence decide; a loosely related one that happens to share
    # the date does not outvote the one that is plainly about it.
    top = max(a.score for a, _ in judged)
    near = [(a, v) for a, v in judged if a.score >= top - _MARGIN]
    agree = [a for a, v in near if v]
    # A sentence of several clauses ("..., so your two review hours are free") says several
    # things: its values may belong to any of them, so an event must be plainly about it.
    needed = _ALIGNED if len(clauses) == 1 else _ALIGNED_CLAUSES
    if novel:
        # the event about it agrees on the date but never names the thing the sentence ends on
        close = [a for a in agree if a.core and a.score >= needed]
        if close:
            best = max(close, key=lambda a: a.score)
            return _conflict_of(memory, sentence.strip(), best, relation)
        agree = []
    differ = [a for a, v in near if not v and a.score >= needed and a.core]
    if differ and any(v and a.core and a.score >= _ALIGNED for a, v in near):
        return None  # another event about it says the same value: maybe it changed, not a conflict
    claim = sentence.strip()
    if agree:
        best = max(agree, key=lambda a: a.score)
        return _finding(memory, claim, CONSISTENT, best, relation), None
    if not differ:
        return None
    return _conflict_of(memory, claim, max(differ, key=lambda a: a.score), relation)


def _conflict_of(
    memory: MemoryLike, claim: str, best: _Aligned, relation: set[str]
) -> tuple[Finding, Conflict]:
    finding = _finding(memory, claim, CONFLICT, best, relation)
    conflict = Conflict(
        claim,
        finding.about or "",
        best.sentence,
        finding.at,
        finding.file or best.event.path,
        finding.line or 0,
        best.event.id,
        "current",
        None,
        None,
        best.event.role or None,
        round(0.5 + 0.4 * best.score, 2),
        finding.correction or "",
    )
    return finding, conflict


# --- the facts an event gave ------------------------------------------------------------------


@dataclass(frozen=True)
class _Gave:
    """A fact whose sources name the event: what the event said for it, and whether a later
    event has replaced that (the fact's current value is another)."""

    fact: Known
    value: str
    stale: bool


def _gave(known: Sequence[Known], event_id: str) -> list[_Gave]:
    out: list[_Gave] = []
    seen: set[tuple[str, str]] = set()
    for k in known:
        if (k.file, k.key) in seen:
            continue
        old = next((s for s in k.superseded if s.source == event_id), None)
        if k.block == event_id:
            out.append(_Gave(k, k.value, False))
        elif old is not None:
            out.append(_Gave(k, old.value, True))
        else:
            continue
        seen.add((k.file, k.key))
    return out


def _beside_facts(
    finding: Finding,
    conflict: Conflict | None,
    unjudged: Finding,
    known: Sequence[Known],
    now: dt.datetime,
) -> tuple[Finding, Conflict | None]:
    """The event path's verdict read beside the facts the cited event gave (their sources name
    it), so that it is reported as what it is about and never rests on a value the memory has
    since replaced:

    - a conflict whose differing value is one the event gave a fact (its key said in the
      sentence, else the sentence restating one of its old values, else the only such fact) is
      reported under that fact's note and key, as the fact path would ("superseded" when the
      sentence says an old value); where a later event replaced the event's value and the
      fact's current value agrees with the sentence, the event is stale and contradicts nothing;
    - a sentence that repeats a value the event gave and a later event replaced ("Conroy
      Brothers are due to start ...", after "Conroy Brothers pulled out") states a superseded
      value: a conflict under that fact, whether the stale event seemed to agree or differ.

    With no such fact the event's own verdict stands."""
    gave = _gave(known, finding.block or "")
    if not gave:
        return finding, conflict
    claim = finding.claim
    confidence = conflict.confidence if conflict is not None else 0.7
    # A capitalised opener ("Work on the shed starts ...") is a name only where these facts
    # know it as one ("Keane Sheds are due ...").
    opener = _words(claim)[:1]
    values = [v for g in gave for v in (g.fact.value, *(s.value for s in g.fact.superseded))]
    known_names = {n for v in values for n in claims.names(v)}
    ignore = frozenset(w for w in opener if w not in known_names)
    said = claims.read(claim, ignore, now)

    def agrees(value: str) -> bool | None:
        return claims.agree(said, claims.read(value, now=now))

    def restated(fact: Known) -> Superseded | None:
        if agrees(fact.value) is True:
            return None
        return next((s for s in fact.superseded if agrees(s.value) is True), None)

    stale = False
    if conflict is not None:
        words = {lemma(w) for w in _words(claim)}
        differ = [g for g in gave if agrees(g.value) is False]
        keyed = [
            g for g in differ if {lemma(w) for w in _words(g.fact.key)} - lexicon.STOP_WORDS & words
        ]
        chosen = keyed or [g for g in differ if restated(g.fact)] or differ
        if len(chosen) == 1:
            fact = chosen[0].fact
            current = agrees(fact.value)
            if current is False:
                return _fact_conflict(claim, fact, restated(fact), confidence)
            stale = current is True and chosen[0].stale
    repeated = [
        g for g in gave if g.stale and agrees(g.value) is True and agrees(g.fact.value) is False
    ]
    if len(repeated) == 1:
        fact = repeated[0].fact
        old = next(s for s in fact.superseded if s.value == repeated[0].value)
        return _fact_conflict(claim, fact, old, confidence)
    if stale:
        return unjudged, None
    return finding, conflict


def _fact_conflict(
    claim: str, fact: Known, old: Superseded | None, confidence: float
) -> tuple[Finding, Conflict]:
    kind = "superseded" if old is not None else "current"
    conflict = fact_conflict(claim, fact, kind, old, confidence, False)
    return conflict_finding(claim, conflict), conflict


def _near(name: str, words: set[str]) -> bool:
    if len(name) < 6:
        return False
    return any(
        abs(len(w) - len(name)) <= 2 and difflib.SequenceMatcher(None, name, w).ratio() >= 0.85
        for w in words
        if w[:1] == name[:1]
    )


def _capitalised(word: str, events: Sequence[EventLine]) -> bool:
    """Whether the events write `word` capitalised inside a sentence (a name, not an opener)."""
    pattern = re.compile(rf"[\w,;] {re.escape(word.capitalize())}\b")
    return any(pattern.search(e.text) for e in events)


_OBJECT_RE = re.compile(
    r"\b(?:is|are|was|were)\s+(?:the\s+|a\s+|an\s+|some\s+)?"
    r"(?P<value>(?:(?!(?:is|are|was|were)\b)[a-z][a-z-]*\s*){1,3}?)[.!]?$"
)


def _object(sentence: str) -> set[str]:
    """The lemmas of a thing the sentence ends by naming as the value ("... is the trumpet"),
    up to three content words; empty when it does not."""
    m = _OBJECT_RE.search(sentence.strip())
    if m is None:
        return set()
    words = [lemma(w) for w in _words(m.group("value")) if w not in lexicon.STOP_WORDS]
    return set(words) if 0 < len(words) <= 3 else set()


def _judge_object(
    memory: MemoryLike,
    claim: str,
    thing: set[str],
    aligned: list[_Aligned],
    relation: set[str],
    clauses: int,
) -> tuple[Finding, Conflict | None] | None:
    """ "The instrument she has played since she was young is the trumpet": consistent where an
    event about it names the thing; a conflict only where the memory has never mentioned the
    thing at all and an event is plainly about the rest of the sentence (it must say something
    else there); otherwise unverified."""
    naming = [a for a in aligned if thing <= {lemma(w) for w in _words(a.event.text)}]
    if naming:
        best = max(naming, key=lambda a: a.score)
        return _finding(memory, claim, CONSISTENT, best, relation), None
    index = memory.indexer.index
    if clauses != 1 or any(index.frequency(w) for w in thing):
        return None
    close = [a for a in aligned if a.core and a.score >= _ALIGNED]
    if not close:
        return None
    best = max(close, key=lambda a: a.score)
    return _conflict_of(memory, claim, best, relation)


def event_lines(hits: Sequence[Hit]) -> list[EventLine]:
    """The distinct events among search hits, best first, at most `_CANDIDATES`."""
    seen: set[str] = set()
    out: list[EventLine] = []
    for hit in hits:
        if len(out) >= _CANDIDATES:
            break
        if hit.event_id in seen or not hit.text:
            continue  # an event is indexed where it is logged and where a note quotes it
        seen.add(hit.event_id)
        out.append(EventLine(hit.event_id, hit.path, hit.role, hit.at, hit.text))
    return out


def _without(text: str, spans: Sequence[tuple[int, int]]) -> str:
    out, last = [], 0
    for a, b in sorted(spans):
        out.append(text[last:a])
        last = b
    out.append(text[last:])
    return " ".join(out)


def _subject(sentence: str, speakers: set[str]) -> str | None:
    """Whom the sentence is about: the first speaker it names, the user for "you"."""
    words = _words(sentence)
    for w in words:
        base = _bare(w)
        if base in speakers:
            return base
    if _YOU & set(words) and "user" in speakers and not speakers - {"user", "assistant"}:
        return "user"
    # "you" in a memory of a conversation between named people (no `user` role): whoever is
    # spoken to is not known, so any speaker may be meant
    return None


def _share(shared: set[str], weights: dict[str, float]) -> float:
    return sum(weights[w] for w in shared) / (sum(weights.values()) or 1.0)


def _align(
    event: EventLine,
    subject: str | None,
    relation: set[str],
    weights: dict[str, float],
    names: frozenset[str],
    owned: dict[str, str],
) -> _Aligned | None:
    role = event.role.lower()
    text = event.text
    lowered = set(_words(text))
    if subject is not None:
        by_subject = role == subject and bool(_FIRST_PERSON & lowered)
        names_subject = subject in {_bare(w) for w in lowered}
        if not (by_subject or names_subject):
            return None
    best: tuple[float, str, Values, bool] | None = None
    # Words first (cheap), values only for a turn that holds enough of the claim's words.
    words_all = {lemma(w) for w in lowered}
    turn_score = _share(relation & words_all, weights)
    if turn_score < _RELATED:
        return None
    whole = read(text, event.at)
    for sentence in extract.sentences(text):
        if subject is not None and role != subject:
            # Another speaker's turn is about the subject only where it names them and does not
            # speak of itself ("Hey Maria! My car broke down" is about the speaker's car).
            words = set(_words(sentence))
            if subject not in {_bare(w) for w in words} or _FIRST_PERSON & words:
                continue
        if sentence.startswith("[image:") or sentence.rstrip().endswith("?"):
            continue  # a picture's caption, a question: not something said to be so
        theirs = _owners(sentence, role, None)
        if any(theirs.get(w, owner) != owner for w, owner in owned.items()):
            continue  # "your birthday" is not "my sister Lena's birthday"
        values = read(sentence, event.at)
        shared = relation & _relation(sentence, values, {role})
        if not shared - _LIGHT_LEMMAS:
            continue
        score = _share(shared, weights)
        # Names say who took part, not what happened ("Max" in both: not the same event).
        named = {lemma(n) for n in names}
        # (a sentence whose only words are a name, "you were in Paris on ...", has it as core)
        core = bool(shared - _LIGHT_LEMMAS - named) or bool(
            shared and not relation - _LIGHT_LEMMAS - named
        )
        if best is None or (score, core) > (best[0], best[3]):
            best = (score, sentence, values, core)
    if best is None:
        return None
    score, sentence, values, core = best
    # The turn's other sentences often carry the time ("It was awesome! I talked about ...").
    timed = bool(values.periods)
    if not timed and len({(p.start, p.end) for p in whole.periods}) == 1:
        values = dataclasses.replace(values, periods=whole.periods)
        timed = True
    if not timed and event.at is not None:
        day = event.at.date()
        values = dataclasses.replace(values, periods=(Period(day - dt.timedelta(days=1), day),))
    return _Aligned(event, sentence, max(score, turn_score * 0.9), values, timed, core)


def _compare(
    said: Values, a: _Aligned, known: set[str], unknown: set[str], speakers: set[str]
) -> bool | None:
    """True when the event states the sentence's values, False when it states another of a
    kind the sentence gives (and not this one), None when it says nothing comparable. Each kind
    is compared where both have it: "In June you went to Lisbon" against "I went to Rome last
    month" agrees on the month and differs on the place."""
    verdicts: list[bool] = []
    if said.periods and a.values.periods:
        close = any(p.gap(q) <= _DATE_SLACK for p in said.periods for q in a.values.periods)
        if close and (a.timed or a.score >= _ALIGNED):
            verdicts.append(True)  # an event's own time stands for its date only when close
        elif a.timed and not close:
            verdicts.append(False)
    if said.numbers and a.values.numbers:
        same_noun = [
            (n, m)
            for n, noun in said.numbers
            for m, other in a.values.numbers
            if noun and noun == other
        ]
        if same_noun:
            verdicts.append(any(n == m for n, m in same_noun))
        elif len(said.numbers) == len(a.values.numbers) == 1 and (
            said.numbers[0][0] == a.values.numbers[0][0]
        ):
            verdicts.append(True)  # one count each, the same: agrees whatever it counts
    theirs = set(a.values.names) - {a.event.role.lower()} - speakers - known
    if unknown:
        # A name the memory never mentions: wrong where the event names another in its place;
        # otherwise the sentence says something the memory cannot confirm.
        if not theirs:
            return False if False in verdicts else None
        verdicts.append(False)
    elif (
        # a name is the value only when the sentence gives no date or count; beside them it
        # is context ("the LGBTQ support group on 14 May") and agrees with nothing
        known
        and not (said.periods or said.numbers)
        and known <= set(a.values.names) | {_bare(w) for w in _words(a.sentence)}
    ):
        verdicts.append(True)
    if not verdicts:
        return None
    return all(verdicts)


def _finding(
    memory: MemoryLike, claim: str, status: str, a: _Aligned, relation: set[str]
) -> Finding:
    line = line_of(memory, a.event)
    at = a.event.at.strftime("%Y-%m-%d %H:%M") if a.event.at else None
    shared = sorted(relation & {lemma(w) for w in _words(a.event.text)})
    who = f"{a.event.role} said" if a.event.role else "an event says"
    correction = None
    if status == CONFLICT:
        correction = (
            f'You said "{claim}", but memory has {who}'
            + (f" on {at}" if at else "")
            + f': "{a.sentence}" ({a.event.path}:{line} ^{a.event.id}).'
        )
    return Finding(
        claim,
        status,
        "event",
        " ".join(shared),
        a.sentence,
        a.event.path,
        line,
        a.event.id,
        at,
        correction,
    )


def line_of(memory: MemoryLike, event: EventLine) -> int | None:
    """The 1-based line of the event in its file (read only when a finding cites it)."""
    try:
        text = memory.vault.read(event.path).text
    except (OSError, ValueError):
        return None
    mark = f"^{event.id}"
    for i, line in enumerate(text.splitlines(), 1):
        if mark in line:
            return i
    return None
