"""The event path's verdict read beside the facts the cited event gave (their sources name it):
a conflict is reported under that fact's note and key, and a value a later event replaced
neither contradicts nor confirms (repeating it is a superseded conflict).

Not the fact path itself (check_facts/), which judges the sentences that name a fact.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from brainiac.guard.check_facts.verdicts import (
    Conflict,
    Finding,
    Known,
    conflict_finding,
    fact_conflict,
)
from brainiac.guard.evidence.words import lemma, words_of
from brainiac.language import claims, lexicon

if TYPE_CHECKING:
    from brainiac.language.facts import Superseded


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


def beside_facts(
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
    opener = words_of(claim)[:1]
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
        words = {lemma(w) for w in words_of(claim)}
        differ = [g for g in gave if agrees(g.value) is False]
        keyed = [
            g
            for g in differ
            if {lemma(w) for w in words_of(g.fact.key)} - lexicon.STOP_WORDS & words
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
