"""What every witness of the guard says: what the memory knows (`Known`), a `Conflict`, a
`Finding` per sentence, the `CheckResult`; and a fact's conflict with what a clause says.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from brainiac.language import facts
from brainiac.language.facts import Superseded


@dataclass(frozen=True)
class Known:
    """A fact the memory holds, where it lives, and its history."""

    key: str
    value: str
    since: dt.datetime | None
    superseded: tuple[Superseded, ...]
    file: str
    line: int  # 1-based
    block: str | None  # the event id that said it, when known
    entity: str | None = None  # the note's title (None: identity, short-term, events)
    mentions: tuple[str, ...] = ()  # lowercased title, aliases and name words of the entity
    about_user: bool = False  # the user's own note (tagged `user`): "you", "your"
    named_only: bool = False  # about another person, project or pet: applies only when named


# Keyword-only, like Finding: a dozen fields, many of one type, that no position can name safely.
@dataclass(frozen=True, kw_only=True)
class Conflict:
    claim: str  # the sentence of the response
    key: str
    stored: str  # the current value
    since: str | None  # when it became true (YYYY-MM-DD HH:MM)
    file: str
    line: int
    block: str | None
    kind: str  # "current": contradicts it; "superseded": states an old value as current
    old: str | None  # the superseded value the claim restates
    old_period: str | None
    entity: str | None
    confidence: float
    correction: str  # a line to send back to the model
    decided_by: str = "offline"  # "llm": the optional model judged it (llm_check.py)


CONSISTENT = "consistent"


CONFLICT = "conflict"


UNVERIFIED = "unverified"


@dataclass(frozen=True, kw_only=True)
class Finding:
    """What the memory says about one sentence of the response that states something."""

    claim: str  # the sentence
    status: str  # CONSISTENT (the memory says the same), CONFLICT, or UNVERIFIED (it cannot tell)
    source: str | None = None  # "fact" (a `- key: value` line) or "event" (a remembered event)
    about: str | None = None  # the fact's key, or the words the claim and the event share
    stored: str | None = None  # what the memory holds: the value, or the event's sentence
    file: str | None = None
    line: int | None = None  # 1-based
    block: str | None = None  # the event id
    at: str | None = None  # when the event was said, or since when the fact holds
    correction: str | None = None  # for a conflict: a line to send back to the model
    decided_by: str = "offline"  # "llm": the optional model judged it (llm_check.py)


@dataclass(frozen=True)
class CheckResult:
    text: str
    conflicts: tuple[Conflict, ...]
    facts_known: int
    sentences_about_facts: int
    findings: tuple[Finding, ...] = ()

    @property
    def consistent(self) -> bool:
        """No conflict found (which is not the same as verified: see `status`)."""
        return not self.conflicts

    @property
    def status(self) -> str:
        """CONFLICT if any sentence contradicts the memory; else UNVERIFIED if a sentence states
        something the memory could not confirm (or nothing was stated); else CONSISTENT."""
        if self.conflicts:
            return CONFLICT
        if not self.findings or any(f.status == UNVERIFIED for f in self.findings):
            return UNVERIFIED
        return CONSISTENT


def conflict_finding(sentence: str, c: Conflict) -> Finding:
    """A sentence's verdict when it contradicts a stored fact (the fact path, and the event path
    when the event gave that fact: evidence/given_facts.py)."""
    return Finding(
        claim=sentence,
        status=CONFLICT,
        source="fact",
        about=c.key,
        stored=c.stored,
        file=c.file,
        line=c.line,
        block=c.block,
        at=c.since,
        correction=c.correction,
    )


def fact_conflict(
    sentence: str,
    fact: Known,
    kind: str,
    old: Superseded | None,
    confidence: float,
    synonym: bool,
) -> Conflict:
    since = facts.render_time(fact.since) if fact.since else None
    claim = sentence.strip()
    about = f"{fact.entity}: " if fact.entity else ""
    stored = f"{about}{fact.key} is {fact.value}" + (f" (since {since})" if since else "")
    if old is not None:
        period = _period(old)
        correction = (
            f'You said "{claim}", but memory says {stored}; {old.value} was the old value'
            + (f" ({period})" if period else "")
            + "."
        )
    else:
        period = None
        correction = f'You said "{claim}", but memory says {stored}.'
    return Conflict(
        claim=claim,
        key=fact.key,
        stored=fact.value,
        since=since,
        file=fact.file,
        line=fact.line,
        block=fact.block,
        kind=kind,
        old=old.value if old else None,
        old_period=period,
        entity=fact.entity,
        confidence=round(confidence - (0.1 if synonym else 0.0), 2),
        correction=correction,
    )


def _period(s: Superseded) -> str | None:
    a = facts.render_time(s.since) if s.since else None
    b = facts.render_time(s.until) if s.until else None
    if a and b:
        return f"{a} to {b}"
    return f"from {a}" if a else (f"until {b}" if b else None)
