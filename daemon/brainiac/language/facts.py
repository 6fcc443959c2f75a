"""Facts: `- key: value` lines that keep their own history, so a changed value is never lost.

A `## Facts` section (of a long-term note or of the short-term document) reads:

    - deadline: Monday 2026-11-30 (since 2026-11-18 16:40, e-4e4c6739ca)
      - superseded: Friday 2026-11-27 (2026-10-02 09:15 to 2026-11-18 16:40, e-1ed40f4a38)
    - owner: the user
    - stakeholder: [[Anna Berg]]

The parenthesised tail is optional and says when the value became true and which event said so.
A superseded sub-line keeps an old value with the period it held (`A to B`, `from A` or `to B`
when only one end is known), newest first. Times are `YYYY-MM-DD HH:MM`, or `YYYY-MM-DD` at
midnight. A tail that does not follow this grammar (`- owner: Anna (mostly)`) is part of the value.

`apply` is the self-repair step: new facts update the lines they are about and nothing else. Every
other line, prose or comment or a person's own bullet, stays byte for byte. A fact whose event id
already appears on its line is not applied again, which makes re-runs idempotent and lets a
person's hand edit of a value stand as long as the id stays on the line.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from brainiac.core import clock
from brainiac.formats import events as ev
from brainiac.formats.fences import Fences

_TIME_RE = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{1,2}):(\d{2})(?::\d{2})?(?P<offset>[+-]\d{2}:\d{2})?)?$"
)
# A time in the hour repeated at fall-back carries its UTC offset (clock.isoformat).
_TIME = r"\d{4}-\d{2}-\d{2}(?: \d{1,2}:\d{2}(?:[+-]\d{2}:\d{2})?)?"
_PERIOD_RE = re.compile(
    rf"^(?:(?:since|from) (?P<since>{_TIME})"
    rf"|(?P<a>{_TIME}) to (?P<b>{_TIME})"
    rf"|to (?P<until>{_TIME}))$"
)
_SOURCE_RE = re.compile(rf"^{ev.ID}$")
_TAIL_RE = re.compile(r"\s*\((?P<inner>[^()\n]*)\)\s*$")
# A top-level bullet `- key: value`; the key stops at the first ": " (so URLs in values are fine).
_FACT_RE = re.compile(r"^- (?P<key>[^:\n]+?):[ \t]+(?P<value>\S.*?)[ \t]*$")
_SUB_RE = re.compile(r"^[ \t]+- superseded:[ \t]+(?P<value>\S.*?)[ \t]*$")
_TASK_RE = re.compile(r"^- \[.?\]")
_EVENT_KEY_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}$")  # an event line's time, cut at ":"
_LEADING_WORDS = frozenset({"the", "my", "our", "your", "a", "an", "his", "her", "their", "its"})
_TRAILING_PUNCT = ".,;:!?…"
_MAX_KEY_WORDS = 6
# Whose a fact is: a name with "'s" opening the key, or in the value ("Melanie's cat"), or the
# name before the verb of a taste ("something Gina loves", as life_facts.whose writes it).
_OWNER_KEY_RE = re.compile(r"^(?P<who>[^\W\d_][\w-]*)'s\s")
_OWNER_VALUE_RE = re.compile(
    r"(?:^|\s)(?P<who>[A-ZÀ-ÖØ-Þ][\w-]*)'s\s|^something\s+(?P<who2>[A-ZÀ-ÖØ-Þ][\w-]*)\s+\w+s$"
)
_MINE_RE = re.compile(r"\b(?:my|mine|I)\b")


def parse_time(text: str) -> dt.datetime | None:
    """`YYYY-MM-DD` or `YYYY-MM-DD HH:MM` (also with a `T` or seconds) as a naive datetime; with
    a UTC offset (`02:10+01:00`), the local time of that instant, `fold` saying which 02:10."""
    m = _TIME_RE.match(text.strip())
    if m is None:
        return None
    year, month, day, hour, minute = (int(g) if g else 0 for g in m.groups()[:5])
    try:
        at = dt.datetime(year, month, day, hour, minute)
        if m.group("offset"):
            offset = dt.datetime.strptime(m.group("offset").replace(":", ""), "%z").tzinfo
            at = clock.local(at.replace(tzinfo=offset))
    except (ValueError, OverflowError):
        return None
    return at


def render_time(at: dt.datetime) -> str:
    if clock.is_ambiguous(at):  # which time round of the repeated hour: its offset says
        return clock.isoformat(at, " ", "minutes")
    return (
        at.strftime("%Y-%m-%d") if (at.hour, at.minute) == (0, 0) else at.strftime("%Y-%m-%d %H:%M")
    )


def normalise_key(key: str) -> str:
    """`The  Deadline:` and `deadline` are the same key: lowercase, one space, no leading article
    or possessive pronoun, no trailing punctuation, no Markdown emphasis."""
    words = key.replace("*", " ").replace("_", " ").replace(":", " ").casefold().split()
    while len(words) > 1 and words[0] in _LEADING_WORDS:
        words = words[1:]
    return " ".join(words).rstrip(_TRAILING_PUNCT + " ")


def normalise_value(value: str) -> str:
    """How values are compared: `Friday.` and `friday` say the same thing."""
    return " ".join(value.casefold().split()).rstrip(_TRAILING_PUNCT + " ")


@dataclass(frozen=True)
class Fact:
    key: str
    value: str
    since: dt.datetime | None = None
    source: str | None = None

    def __post_init__(self) -> None:
        # A value is one line of the file; a key is compared in its normalised form everywhere.
        object.__setattr__(self, "key", normalise_key(self.key))
        object.__setattr__(self, "value", " ".join(self.value.split()))
        if self.since is not None:
            object.__setattr__(self, "since", _minute(self.since))


@dataclass(frozen=True)
class Superseded:
    value: str
    since: dt.datetime | None = None
    until: dt.datetime | None = None
    source: str | None = None


@dataclass(frozen=True)
class FactLine:
    fact: Fact
    superseded: tuple[Superseded, ...]
    first: int  # index of the `- key: value` line in the section's lines
    last: int  # index of its last sub-line (== first when it has none)


@dataclass(frozen=True)
class Change:
    """What `apply` did. For "history" `old` is the value that stays current and `new` the older
    value recorded under it."""

    key: str
    old: str | None
    new: str
    at: dt.datetime | None
    source: str | None
    kind: str  # "added", "superseded" or "history"


def _minute(at: dt.datetime) -> dt.datetime:
    # Lines show minutes; comparing at that resolution keeps a re-read line equal to its fact.
    if at.tzinfo is not None:
        at = at.astimezone(dt.UTC).replace(tzinfo=None)
    return at.replace(second=0, microsecond=0)


def _tail(parts: list[str]) -> str:
    return f" ({', '.join(parts)})" if parts else ""


def render_fact(fact: Fact) -> str:
    parts = [f"since {render_time(fact.since)}"] if fact.since else []
    if fact.source:
        parts.append(fact.source)
    return f"- {fact.key}: {fact.value}{_tail(parts)}"


def render_superseded(s: Superseded) -> str:
    return f"  - superseded: {s.value}{_tail(_superseded_parts(s))}"


def _superseded_parts(s: Superseded) -> list[str]:
    parts = []
    if s.since and s.until:
        parts.append(f"{render_time(s.since)} to {render_time(s.until)}")
    elif s.since:
        parts.append(f"from {render_time(s.since)}")
    elif s.until:
        parts.append(f"to {render_time(s.until)}")
    if s.source:
        parts.append(s.source)
    return parts


def _split_tail(
    value: str,
) -> tuple[str, dt.datetime | None, dt.datetime | None, str | None]:
    """(value, since, until, source); a tail that is not ours stays in the value."""
    m = _TAIL_RE.search(value)
    if m is None or m.start() == 0:
        return value, None, None, None
    parts = [p.strip() for p in m.group("inner").split(",")]
    source = parts.pop() if parts and _SOURCE_RE.match(parts[-1]) else None
    since = until = None
    if len(parts) > 1 or (not parts and source is None):
        return value, None, None, None
    if parts:
        period = _PERIOD_RE.match(parts[0])
        if period is None:
            return value, None, None, None
        since_text = period.group("since") or period.group("a")
        until_text = period.group("until") or period.group("b")
        since = parse_time(since_text) if since_text else None
        until = parse_time(until_text) if until_text else None
        if (since_text and since is None) or (until_text and until is None):
            return value, None, None, None
    return value[: m.start()].rstrip(), since, until, source


def _parse_fact_line(line: str) -> tuple[Fact, int] | None:
    """The fact on a top-level line and where its value starts, or None for any other line."""
    line = line.rstrip("\r")
    if _TASK_RE.match(line):
        return None
    m = _FACT_RE.match(line)
    if m is None:
        return None
    raw_key = m.group("key")
    if (
        "[[" in raw_key
        or "://" in raw_key
        or "`" in raw_key
        or len(raw_key.split()) > _MAX_KEY_WORDS
        or _EVENT_KEY_RE.match(raw_key)
    ):
        return None
    key = normalise_key(raw_key)
    value, since, _, source = _split_tail(m.group("value"))
    if not key or not value:
        return None
    return Fact(key, value, since, source), m.start("value")


def _parse_sub_line(line: str) -> Superseded | None:
    m = _SUB_RE.match(line.rstrip("\r"))
    if m is None:
        return None
    value, since, until, source = _split_tail(m.group("value"))
    return Superseded(value, since, until, source) if value else None


def _parse_lines(lines: list[str]) -> list[FactLine]:
    out: list[FactLine] = []
    fences = Fences()
    in_comment = False
    i = 0
    while i < len(lines):
        line = lines[i]
        # Lines inside a code fence or a multi-line HTML comment are a person's text, not facts.
        if in_comment:
            in_comment = "-->" not in line
            i += 1
            continue
        if fences.code(line):
            i += 1
            continue
        if "<!--" in line and "-->" not in line[line.index("<!--") :]:
            in_comment = True
            i += 1
            continue
        parsed = _parse_fact_line(line)
        if parsed is None:
            i += 1
            continue
        history = []
        j = i + 1
        while j < len(lines) and lines[j][:1] in (" ", "\t") and lines[j].strip():
            sub = _parse_sub_line(lines[j])
            if sub is not None:
                history.append(sub)
            j += 1
        out.append(FactLine(parsed[0], tuple(history), i, j - 1))
        i = j
    return out


def _split(text: str) -> tuple[list[str], bool]:
    """Lines without their newline, and whether the text ended with one."""
    if not text:
        return [], True  # an empty section gets whole lines, like any other
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
        return lines, True
    return lines, False


def _join(lines: list[str], newline_at_end: bool) -> str:
    return "\n".join(lines) + ("\n" if newline_at_end and lines else "")


def parse(section_text: str) -> list[FactLine]:
    """The fact lines of a section, in order; every other line is skipped, never an error."""
    return _parse_lines(_split(section_text)[0])


def current(section_text: str) -> dict[str, Fact]:
    """The current value of each key (the first line wins when a person duplicated one)."""
    out: dict[str, Fact] = {}
    for line in parse(section_text):
        out.setdefault(line.fact.key, line.fact)
    return out


def _sort_key(fact: Fact) -> tuple[bool, float]:
    return fact.since is None, clock.instant(fact.since) if fact.since else 0.0


def _before(a: dt.datetime, b: dt.datetime) -> bool:
    """Whether `a` happened before `b` (the first 02:50 of a fall-back night before the second
    02:10: compared as instants, clock.instant)."""
    return clock.instant(a) < clock.instant(b)


# The project of the event a fact was learned from, by its id (None: global, or no event).
ProjectOf = Callable[[str | None], str | None]


def apply(
    section_text: str, new: Sequence[Fact], project_of: ProjectOf | None = None
) -> tuple[str, list[Change]]:
    """The section with `new` applied (oldest first, undated last) and what changed.

    `project_of` (a short-term Facts section of a log with projects): a fact's key is its
    project's, so a fact supersedes only a line of its own project (a person's line, which
    names no event, is global): two projects' deadlines are two facts, as in two vaults."""
    lines, newline_at_end = _split(section_text)
    changes: list[Change] = []
    for fact in sorted(new, key=_sort_key):
        parsed = _parse_fact_line(render_fact(fact))
        if parsed is None or parsed[0].key != fact.key:
            continue  # a key or value that would not read back as itself is not written
        change = _apply_one(lines, fact, project_of)
        if change is not None:
            changes.append(change)
    if not changes:
        return section_text, []
    return _join(lines, newline_at_end), changes


def owner(fact: Fact) -> str | None:
    """Whose the fact is, as its key or value says (casefolded): "melanie's business",
    "bailey: Melanie's cat", "dance: something Gina loves"; "i" for the vault's user's ("my
    cat", "something I love"); None when it names no one ("deadline: Friday")."""
    m = _OWNER_KEY_RE.match(fact.key) or _OWNER_VALUE_RE.search(fact.value)
    if m is not None:
        return next(g for g in m.groups() if g).casefold()
    return "i" if _MINE_RE.search(f"{fact.key} {fact.value}") else None


def _owned_key(fact: Fact, found: list[FactLine]) -> Fact:
    """`fact` keyed by its owner when the line of its key holds someone else's value: one
    person's fact never supersedes another's ("dance: Jon's passion" stays, and Gina's taste
    goes to "gina's dance: something Gina loves")."""
    line = next((fl for fl in found if fl.fact.key == fact.key), None)
    whose = owner(fact)
    if line is None or whose is None:
        return fact
    held = owner(line.fact)
    if held is None or held == whose or fact.key.startswith(f"{whose}'s "):
        return fact
    prefix = "user" if whose == "i" else whose
    return Fact(f"{prefix}'s {fact.key}", fact.value, fact.since, fact.source)


def _apply_one(lines: list[str], fact: Fact, project_of: ProjectOf | None) -> Change | None:
    every = _parse_lines(lines)
    found = every
    if project_of is not None:
        mine = project_of(fact.source)
        found = [fl for fl in every if project_of(fl.fact.source) == mine]
    fact = _owned_key(fact, found)
    line = next((fl for fl in found if fl.fact.key == fact.key), None)
    if line is None:
        at = _append_at(lines, every)
        cr = "\r" if at > 0 and lines[at - 1].endswith("\r") else ""  # follow CRLF files
        lines.insert(at, render_fact(fact) + cr)
        return Change(fact.key, None, fact.value, fact.since, fact.source, "added")
    if _already_there(line, fact):
        return None
    old = line.fact
    if normalise_value(old.value) == normalise_value(fact.value):
        return None
    if _restates(old.value, fact.value):
        return None  # "Monday" after "Monday 2026-11-30": the same value, said less precisely
    if old.since is not None and fact.since is not None and _before(fact.since, old.since):
        return _record_history(lines, line, fact)
    # The fact line is rewritten from its value on, so a person's spelling of the key is kept.
    head = lines[line.first]
    value_at = _parse_fact_line(head)
    assert value_at is not None  # the line was just parsed as a fact
    cr = "\r" if head.endswith("\r") else ""
    lines[line.first] = head[: value_at[1]] + render_fact(fact).split(": ", 1)[1] + cr
    old_entry = Superseded(old.value, old.since, fact.since, old.source)
    lines.insert(line.first + 1, render_superseded(old_entry) + cr)
    return Change(fact.key, old.value, fact.value, fact.since, fact.source, "superseded")


def _restates(old: str, new: str) -> bool:
    """Whether `new` only repeats `old`: every word of it is in `old`, or it says the same day,
    date, time, amount and names in other words ("Monday the 30th" for "Monday 2026-11-30")."""
    # claims reads values with extract's vocabulary, and extract builds on this module.
    from brainiac.language import claims

    old_words = set(normalise_value(old).split())
    new_words = set(normalise_value(new).split())
    if new_words and new_words < old_words:
        return True
    return claims.agree(claims.read(new), claims.read(old)) is True


def _already_there(line: FactLine, fact: Fact) -> bool:
    """Whether this fact is known already: its event id is on the line or in its history, or the
    same value is recorded as holding until the fact's time or later (for an undated fact: is
    anywhere on the line). This is what makes a second run a no-op: a fact that changed nothing
    the first time (its value was current then) is still recognised after a later value
    superseded it. An earlier start for a value already recorded adds nothing worth a line."""
    entries = [Superseded(line.fact.value, line.fact.since, None, line.fact.source)]
    entries += line.superseded
    if fact.source is not None and any(s.source == fact.source for s in entries):
        return True
    wanted = normalise_value(fact.value)
    same = [s for s in entries if normalise_value(s.value) == wanted]
    if fact.since is None:
        return bool(same)
    return any(s.until is None or not _before(s.until, fact.since) for s in same)


def _record_history(lines: list[str], line: FactLine, fact: Fact) -> Change:
    assert fact.since is not None and line.fact.since is not None
    # It held until the next value we know of took over.
    later = [s.since for s in line.superseded if s.since and _before(fact.since, s.since)]
    until = min([line.fact.since, *later], key=clock.instant)
    entry = render_superseded(Superseded(fact.value, fact.since, until, fact.source))
    cr = "\r" if lines[line.first].endswith("\r") else ""
    lines.insert(_history_at(lines, line, fact.since), entry + cr)
    return Change(line.fact.key, line.fact.value, fact.value, fact.since, fact.source, "history")


def _history_at(lines: list[str], line: FactLine, since: dt.datetime) -> int:
    """Where a superseded entry from `since` goes: before the first older one (newest first)."""
    last_sub = line.first
    for i in range(line.first + 1, line.last + 1):
        sub = _parse_sub_line(lines[i])
        if sub is None:
            continue
        when = sub.since or sub.until
        if when is not None and _before(when, since):
            return i
        last_sub = i
    return last_sub + 1


def _append_at(lines: list[str], found: list[FactLine]) -> int:
    if found:
        return found[-1].last + 1
    end = len(lines)
    while end > 0 and not lines[end - 1].strip():
        end -= 1
    return end
