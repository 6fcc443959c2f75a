"""Judging a clause against the fact it speaks of: whether the values it says agree with the
stored ones (typed parts from claims.py), a role or a number said otherwise, and the finding
for the sentence.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from dataclasses import dataclass

from brainiac.guard.check_facts.clauses import (
    Clause,
    phrase_index,
    specific_words,
    stem,
    stem_options,
    stems,
)
from brainiac.guard.check_facts.verdicts import (
    CONSISTENT,
    UNVERIFIED,
    Conflict,
    Finding,
    Known,
    conflict_finding,
    fact_conflict,
)
from brainiac.language import claims, facts, lexicon

# Words that tie a key to its value: "your manager, Marco Lenz", "Dr. Costa is your GP".
LINKING = lexicon.word_set(
    """
    is are was were be been being 's 're am still now currently actually officially called named set
    the a an your my our his her their its at in on with for from to by of as and also
    """
)


DETERMINER = r"(?:the|a|an|your|my|our|his|her|their|its)"


_DENIAL_RE = re.compile(
    r"\b(?:don't|doesn't|didn't|do not|does not|haven't|hasn't|have not|has not|no longer)"
    r"\s+(?:have|has|had|own|got)\b"
    r"|\b(?:isn't|is not|aren't|are not|not)\s+[\w-]+\s+(?:to|of|about)\s+any(?:thing|one)?\b",
    re.I,
)


_NEGATIVE_VALUE_RE = re.compile(r"^\s*(?:no|none|not|never|nothing|n/a)\b", re.I)


# A negation of the value itself ("is not Monday", "not on Friday"), not of some verb near it.
_VALUE_NEGATION_RE = re.compile(
    r"\b(?:is|are|was|were)\s+not\b|\b(?:isn't|aren't|wasn't|weren't)\b"
    r"|\bnot\s+(?:on|at|in|the|a|an)\b|\bno longer\b|\bnever\b",
    re.I,
)


_FROM_TO_RE = re.compile(r"\bfrom\s+(?P<old>.+?)\s+to\s+", re.I)


# A value that starts like this is a place, a time or an action, not a role.
_NOT_A_ROLE_RE = re.compile(
    r"^(?:in|at|on|from|with|for|to|by|into|off|out|away|back|here|there|not|no|going|coming"
    r"|\w+ing|\w+ed)\b",
    re.I,
)


@dataclass(frozen=True)
class Match:
    fact: Known
    clause: int  # the clause holding the key's head word: where the value is said
    by_synonym: bool
    value_text: str | None = None  # for a role said as "Anna is head of data"
    weak: bool = False  # the fact was chosen though neither its entity nor "you" was named
    number: int | None = None  # for an age said as "Saoirse's ten now"


def finding_for(
    sentence: str, clauses: list[Clause], conflicts: list[Conflict], agreed: list[Known]
) -> Finding | None:
    """The sentence's verdict from the facts; None when it states nothing (a question, a
    condition, the assistant's own plan)."""
    if conflicts:
        return conflict_finding(sentence.strip(), conflicts[0])
    if agreed:
        k = agreed[0]
        since = facts.render_time(k.since) if k.since else None
        return Finding(
            claim=sentence.strip(),
            status=CONSISTENT,
            source="fact",
            about=k.key,
            stored=k.value,
            file=k.file,
            line=k.line,
            block=k.block,
            at=since,
        )
    if all(c.asks or c.supposes or c.plans for c in clauses):
        return None
    return Finding(claim=sentence.strip(), status=UNVERIFIED)


def judge(
    sentence: str, clauses: list[Clause], match: Match, now: dt.datetime | None
) -> Conflict | bool | None:
    """A Conflict; True when the clause says the fact's value; None when it cannot tell."""
    clause = clauses[match.clause]
    fact = match.fact
    if clause.asks or clause.supposes:
        return None
    ignore = frozenset(stems(fact.key)) | frozenset(w for m in fact.mentions for w in m.split())
    if match.value_text is not None:
        return _judge_role(sentence, clause, match)
    if match.number is not None:
        return _judge_number(sentence, clause, match)
    stored = claims.read(fact.value, ignore)
    said = _said(clause, ignore, now)
    current = claims.agree(said, stored)
    if current is None and said.empty() and match.clause + 1 < len(clauses):
        # "the budget — 40k": the value may follow the key in the next clause.
        nxt = clauses[match.clause + 1]
        if not (nxt.asks or nxt.supposes):
            said = _said(nxt, ignore, now)
            current = claims.agree(said, stored)
    if current is None:
        if _DENIAL_RE.search(clause.text) and not _NEGATIVE_VALUE_RE.search(fact.value):
            # "you don't have a car", "Joana isn't allergic to anything": the fact denied.
            return fact_conflict(sentence, fact, "current", None, 0.6, match.by_synonym)
        # A free-text value ("vim", "lasagna") agrees when said in full; any other words are
        # something the memory cannot judge, not a contradiction of it.
        stored_words = _content(fact.value) - set(stems(fact.key))
        # (Only when the clause says nothing more: a date beside it is for the events to judge.)
        clear = said.empty() and not clause.negated
        if stored_words and clear and stored_words <= set(clause.words):
            return True
        return None
    olds = [s for s in fact.superseded if claims.agree(said, claims.read(s.value, ignore))]
    if current:
        if clause.negated and _VALUE_NEGATION_RE.search(clause.text) and not olds:
            return fact_conflict(
                sentence, fact, "current", None, 0.8, match.by_synonym
            )  # "not Monday"
        return not (clause.negated or clause.history)
    if clause.negated or clause.history:
        return None  # "no longer Friday"; "it used to be Friday": not said to be so now
    if olds:
        return fact_conflict(sentence, fact, "superseded", olds[0], 0.9, match.by_synonym)
    names_only = _names_only(said, stored)
    if names_only and (match.weak or not _linked(clause, fact, said.names)):
        # A name is evidence only when it is said to be the key's value ("your manager, Marco
        # Lenz", "Dr. Costa is your GP"), not when it merely stands nearby ("your sister has
        # two daughters, Maya and Jordan").
        return None
    return fact_conflict(
        sentence, fact, "current", None, 0.7 if names_only else 0.85, match.by_synonym
    )


def _linked(clause: Clause, fact: Known, names: frozenset[str]) -> bool:
    key_words = set(stems(fact.key))
    options = {o for w in specific_words(fact.key) or fact.key.split() for o in stem_options(w)}
    spans = [
        (i, i + len(stems(o)) - 1)
        for o in options
        if (i := phrase_index(clause.words, o)) is not None
    ]
    name_stems = {stem(n) for n in names}
    named = [i for i, w in enumerate(clause.words) if w in name_stems]
    for first, last in spans:
        for n in named:
            between = clause.words[last + 1 : n] if n > last else clause.words[n + 1 : first]
            if all(w in LINKING or w in name_stems or w in key_words for w in between):
                return True
    return False


def _said(clause: Clause, ignore: frozenset[str], now: dt.datetime | None) -> claims.Values:
    text = _FROM_TO_RE.sub(" to ", clause.text)  # "moved from Friday to Monday" says Monday
    said = claims.read(text, ignore, now)
    if clause.plans:
        # "I'll remind you at 9:00": the plan's time, not a claim about the fact.
        return claims.Values(names=said.names)
    return said


def _merge(a: claims.Values, b: claims.Values) -> claims.Values:
    return claims.Values(
        a.weekdays | b.weekdays,
        a.dates | b.dates,
        a.times | b.times,
        a.amounts | b.amounts,
        a.names | b.names,
    )


def _judge_role(sentence: str, clause: Clause, match: Match) -> Conflict | bool | None:
    """A role is words, not a typed value: the same words (one within the other) agree."""
    if clause.negated or clause.history or clause.plans:
        return None
    value = re.split(r",|\s+(?:so|and|but|because|who|which)\s+", match.value_text or "")[0]
    value = re.sub(rf"^{DETERMINER}\s+", "", value.strip(), flags=re.I)
    if _NOT_A_ROLE_RE.match(value):
        return None
    said = _content(value)
    if not said or len(said) > 6:
        return None
    fact = match.fact
    if _same_words(said, _content(fact.value)):
        return True
    old = next((s for s in fact.superseded if _same_words(said, _content(s.value))), None)
    if old is not None:
        return fact_conflict(sentence, fact, "superseded", old, 0.75, True)
    return fact_conflict(sentence, fact, "current", None, 0.6, True)


def _judge_number(sentence: str, clause: Clause, match: Match) -> Conflict | bool | None:
    """An age said as a bare number: the same number agrees."""
    if clause.negated or clause.history or clause.supposes:
        return None
    fact = match.fact
    if number_in(fact.value) is None:
        return None
    if number_in(fact.value) == match.number:
        return True
    old = next((s for s in fact.superseded if number_in(s.value) == match.number), None)
    return fact_conflict(sentence, fact, "superseded" if old else "current", old, 0.7, True)


def number_in(text: str) -> int | None:
    m = re.search(r"\d+|" + "|".join(claims.NUMBER_WORDS), text, re.I)
    if m is None:
        return None
    word = m.group().lower()
    return int(word) if word.isdigit() else claims.NUMBER_WORDS[word]


def _content(text: str) -> set[str]:
    return {w for w in stems(text) if w not in lexicon.STOP_WORDS}


def _same_words(a: set[str], b: set[str]) -> bool:
    return bool(a) and bool(b) and (a <= b or b <= a)


def _names_only(said: claims.Values, stored: claims.Values) -> bool:
    kinds = [
        said.weekdays and stored.weekdays,
        said.dates and stored.dates,
        said.times and stored.times,
        said.amounts and stored.amounts,
    ]
    return not any(kinds)


def dedupe(conflicts: Iterable[Conflict]) -> list[Conflict]:
    seen: set[tuple[str, str, int]] = set()
    out = []
    for c in conflicts:
        key = (c.claim, c.file, c.line)
        if key not in seen:
            seen.add(key)
            out.append(c)
    return out
