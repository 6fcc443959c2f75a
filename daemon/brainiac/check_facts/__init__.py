"""The guard's fact path: which fact a sentence speaks of, and whether it agrees (check.py runs it).

Seed 000's hallucination guard and seed 002's fact verifier: before a response reaches a person,
the guard finds the sentences that speak about a fact the memory holds and compares what they say
with it. This module holds the verdicts every path of the guard gives (`Finding`, `Conflict`,
`CheckResult`) and the fact path itself. What the memory knows (`Known`):

- the `- key: value` lines of the core identity, of the short-term `## Facts` and of the
  `## Facts` of the long-term notes the response is about (found through the index, so a large
  vault costs one search), each with its superseded history;
- facts stated in the last 3 events, which are newer than any of those and override them.

A sentence is about a fact when it names the fact's key (or a common paraphrase: "due" for a
deadline, "lives in" for a home) and, when several notes hold that key, the note's entity (its
title or an alias, here or in an earlier sentence). What it says is read into typed parts
(claims.py: weekdays, dates, times, amounts, names) and compared with the stored value. A
conflict is a plain statement whose parts disagree with the current value; it names the change
when they match a superseded value instead. Questions, conditionals and hedges claim nothing;
"it used to be Friday" is history, not a claim; "not Monday" contradicts a Monday.

Deterministic: no model is needed, and precision comes first (a false alarm costs the person's
trust in the guard). The labelled corpus in tests/check_corpus/ measures it (docs/benchmarks.md).

The package: `verdicts` (what every witness says), `clauses` (a response read into clauses),
`knowledge` (what the memory knows), and here `compare`, which finds the fact a clause speaks of
and judges it.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from brainiac import claims, extract, facts
from brainiac.check_facts.clauses import (
    GENERIC,
    SYNONYMS,
    Clause,
    clauses_of,
    mentions_phrase,
    phrase_index,
    specific_words,
    stem,
    stem_options,
    stems,
)
from brainiac.check_facts.knowledge import CANDIDATE_NOTES, knowledge
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
    pass

__all__ = [
    "CANDIDATE_NOTES",
    "CONFLICT",
    "CONSISTENT",
    "UNVERIFIED",
    "CheckResult",
    "Conflict",
    "Finding",
    "Known",
    "clauses_of",
    "compare",
    "conflict_finding",
    "fact_conflict",
    "knowledge",
]


_DETERMINERS = extract.word_set("the a an your my our his her their its this that")


# Words that tie a key to its value: "your manager, Marco Lenz", "Dr. Costa is your GP".
_LINKING = extract.word_set(
    """
    is are was were be been being 's 're am still now currently actually officially called named set
    the a an your my our his her their its at in on with for from to by of as and also
    """
)


# Verbs that commonly follow a key as its subject ("the meeting got moved", "the car needs").
_VERBS_AFTER = extract.word_set(
    """
    got get gets moved moves changed changes need needs starts start begins begin runs run ends
    end falls fall lands land goes go comes come takes take costs cost has have had will would
    can could should must may might did does do went came took stays stay remains remain
    """
)


# "after the meeting", "the last day of Bran's booking": the key marks a time or a part.
_TEMPORAL = extract.word_set("after before until till since during of")


# Words that only paraphrase a key ("due"): never a key's head on their own.
_PARAPHRASES = frozenset(
    w for options in SYNONYMS.values() for w in options if " " not in w and w not in SYNONYMS
)


_GENERIC_ALIASES = {
    "check-up": "appointment",
    "checkup": "appointment",
    "visit": "appointment",
    "booking": "appointment",
    "reservation": "appointment",
}


_OWNERS = frozenset({"user", "assistant"})


_YOU = frozenset(
    {"you", "your", "you're", "you've", "yours", "you'll"}
)  # "user's name": the owner alone says nothing


_ROLE_KEYS = frozenset({"role", "job", "job title", "title", "position", "occupation"})


_DETERMINER = r"(?:the|a|an|your|my|our|his|her|their|its)"


_DENIAL_RE = re.compile(
    r"\b(?:don't|doesn't|didn't|do not|does not|haven't|hasn't|have not|has not|no longer)"
    r"\s+(?:have|has|had|own|got)\b"
    r"|\b(?:isn't|is not|aren't|are not|not)\s+[\w-]+\s+(?:to|of|about)\s+any(?:thing|one)?\b",
    re.I,
)


_NEGATIVE_VALUE_RE = re.compile(r"^\s*(?:no|none|not|never|nothing|n/a)\b", re.I)


_YOUR_THING_RE = re.compile(r"\b(?:your|you're on|you are on|you're with|you are with)\b", re.I)


# A negation of the value itself ("is not Monday", "not on Friday"), not of some verb near it.
_VALUE_NEGATION_RE = re.compile(
    r"\b(?:is|are|was|were)\s+not\b|\b(?:isn't|aren't|wasn't|weren't)\b"
    r"|\bnot\s+(?:on|at|in|the|a|an)\b|\bno longer\b|\bnever\b",
    re.I,
)


_FROM_TO_RE = re.compile(r"\bfrom\s+(?P<old>.+?)\s+to\s+", re.I)


_POSSESSIVE_RE = re.compile(r"(?<![\w'])(?P<owner>[A-Z][\w-]+)'s\s+\w")


_NOT_OWNERS = {"it", "that", "today", "tomorrow", "yesterday", *claims.WEEKDAYS, *claims.MONTHS}


# "<subject> is <value>"; a bare "'s" only where it cannot be a possessive ("Anna's still ...").
_COPULA_RE = re.compile(
    r"^(?:(?:so|and|but|also)\s+)?(?P<subject>.+?)"
    r"(?:\s+(?:is|was|are)\s+|'re\s+|'s\s+(?=(?:still|now|a|an|the|our|your|my|his|her|their"
    r"|actually|currently|\d+|" + "|".join(claims.NUMBER_WORDS) + r")\b))"
    r"(?:still\s+|now\s+|actually\s+|currently\s+)*(?P<value>.+)$",
    re.I,
)


# A clause that opens with a person's name as its subject ("Niamh has ...", "Tomás is ...").
_SUBJECT_NAME_RE = re.compile(
    r"^(?:(?:so|and|but|because|since|while)\s+)?([A-Z][a-z]+)(?:'s)?\s+"
    r"(?:is|was|has|had|does|did|will|can|works|lives|gets|goes|takes|wants|needs|says|said|'s)\b"
)


_AGE_RE = re.compile(
    r"^(\d{1,3}|" + "|".join(claims.NUMBER_WORDS) + r")(?:\s+(?:now|years old|this year))?\s*$",
    re.I,
)


_THIRD_PERSON_RE = re.compile(
    r"^(?:(?:so|and|but|because)\s+)?(?:who|who's|whose|he|she|they|he's|she's|they're|his|her"
    r"|their)\b",
    re.I,
)


_AFFILIATION_RE = re.compile(
    r"^(?:(?:so|and|but|also)\s+)?(?P<subject>[A-Z][\w-]+(?:\s+[A-Z][\w-]+)?)"
    r"(?:'s|\s+is|\s+works|\s+is working)\s+(?:still\s+|now\s+)*(?:at|with|for)\s+"
    r"(?P<value>.+)$"
)


# A value that starts like this is a place, a time or an action, not a role.
_NOT_A_ROLE_RE = re.compile(
    r"^(?:in|at|on|from|with|for|to|by|into|off|out|away|back|here|there|not|no|going|coming"
    r"|\w+ing|\w+ed)\b",
    re.I,
)


@dataclass(frozen=True)
class _Match:
    fact: Known
    clause: int  # the clause holding the key's head word: where the value is said
    by_synonym: bool
    value_text: str | None = None  # for a role said as "Anna is head of data"
    weak: bool = False  # the fact was chosen though neither its entity nor "you" was named
    number: int | None = None  # for an age said as "Saoirse's ten now"


def compare(text: str, known: Sequence[Known], now: dt.datetime | None = None) -> CheckResult:
    """The conflicts between `text` and `known` facts (no I/O; `check` gathers the facts)."""
    by_key: dict[str, list[Known]] = {}
    for k in known:
        by_key.setdefault(k.key, []).append(k)
    heads = Counter(h for h in map(_head, by_key) if h)
    conflicts: list[Conflict] = []
    findings: list[Finding] = []
    about = 0
    focus: str | None = None  # the entity the response spoke about last
    for sentence in extract.sentences(text):
        clauses = clauses_of(sentence)
        in_sentence = _named(known, [w for c in clauses for w in c.words])
        if len(in_sentence) == 1:
            focus = next(iter(in_sentence))
        matches: list[_Match] = []
        for key, candidates in by_key.items():
            for found in _key_match(clauses, key):
                matches += _matches(known, candidates, clauses, found, in_sentence, focus)
        named_keys = {m.clause for m in matches}
        for key, candidates in by_key.items():
            for found in _head_match(clauses, key, heads):
                if found[0] in named_keys:
                    continue
                # A key's head alone is weak: only for the memory's general facts, or for
                # facts of an entity the sentence names.
                matches += [
                    m
                    for m in _matches(known, candidates, clauses, found, in_sentence, focus)
                    if m.fact.entity is None or m.fact.entity in in_sentence
                ]
        matches += _role_matches(known, clauses, matches)
        matches += _generic_matches(known, clauses, matches)
        here = _affiliations(sentence, known, clauses, matches)
        said_words = {_GENERIC_ALIASES.get(w, w) for c in clauses for w in c.words}
        matches = _most_specific(matches, said_words)
        about += len(matches)
        agreed: list[Known] = []
        for m in matches:
            verdict = _judge(sentence, clauses, m, now)
            if isinstance(verdict, Conflict):
                here.append(verdict)
            elif verdict:
                agreed.append(m.fact)
        conflicts += here
        finding = _finding(sentence, clauses, here, agreed)
        if finding is not None:
            findings.append(finding)
    return CheckResult(text, tuple(_dedupe(conflicts)), len(known), about, tuple(findings))


def _finding(
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
            sentence.strip(), CONSISTENT, "fact", k.key, k.value, k.file, k.line, k.block, since
        )
    if all(c.asks or c.supposes or c.plans for c in clauses):
        return None
    return Finding(sentence.strip(), UNVERIFIED)


def _matches(
    known: Sequence[Known],
    candidates: list[Known],
    clauses: list[Clause],
    found: tuple[int, bool],
    in_sentence: set[str],
    focus: str | None,
) -> list[_Match]:
    index, by_synonym = found
    in_clause = _named(known, clauses[index].words)
    clause = clauses[index]
    chosen = _choose(candidates, clause, in_clause, in_sentence, focus, by_synonym)
    return [
        _Match(fact, index, by_synonym, weak=_weakly_chosen(fact, clause, in_clause, in_sentence))
        for fact in chosen
    ]


def _weakly_chosen(fact: Known, clause: Clause, in_clause: set[str], in_sentence: set[str]) -> bool:
    if fact.entity is None or fact.entity in in_clause | in_sentence:
        return False
    # "your GP": the user's own note, or a topic note of theirs (health, home), spoken of to them
    return not (not fact.named_only and _YOU & set(clause.words))


def _named(known: Sequence[Known], words: Sequence[str]) -> set[str]:
    return {
        k.entity for k in known if k.entity and k.named_only and mentions_phrase(words, k.mentions)
    }


def _choose(
    candidates: list[Known],
    clause: Clause,
    in_clause: set[str],
    in_sentence: set[str],
    focus: str | None,
    by_synonym: bool = False,
) -> list[Known]:
    """Which of the facts with this key the clause is about."""
    owner = _possessive_owner(clause.text, candidates[0].key)
    if owner is not None and not any(owner in k.mentions for k in candidates if k.about_user):
        # "Maria's birthday": only a fact of an entity called Maria, never the user's own.
        return [k for k in candidates if k.entity and owner in k.mentions]
    # The user's own facts when the clause speaks to them ("your manager", "you live in").
    users = [k for k in candidates if k.about_user]
    speaks_to_you = bool(_YOU & set(clause.words))
    for named in (in_clause, in_sentence):
        of_named = [k for k in candidates if k.entity in named and k.named_only]
        if len({k.entity for k in of_named}) > 1:
            # "Bell Tutoring's tax payment is due April 15, three weeks after your grades":
            # the entity named first is the one the clause is about.
            first = min(of_named, key=lambda k: _first_mention(clause, k))
            of_named = [k for k in of_named if k.entity == first.entity]
        if of_named:
            return of_named
        if users and speaks_to_you:
            return users
    general = [k for k in candidates if k.entity is None]
    if general:
        return general
    if _someone_else(clause, candidates) or in_clause:
        return []  # "Niamh has a class on Wednesdays": about a person the memory does not know
    if users:
        return users  # "at €85 an hour, ...": nobody else is spoken of (a weak choice)
    if len(candidates) == 1 and len(candidates[0].key.split()) >= 2 and not by_synonym:
        return candidates  # "Swimming's at half ten": the memory knows one swimming lesson
    if focus is not None:
        of_focus = [k for k in candidates if k.entity == focus]
        if of_focus:
            return of_focus
    unnamed = [k for k in candidates if not k.named_only and not k.about_user]
    if len({k.entity for k in unnamed}) != 1:
        return []
    if speaks_to_you or len(specific_words(unnamed[0].key)) >= 2:
        return unnamed  # "your GP"; "the annual physical"
    return []  # "the department meeting": not the book club's next meeting


def _first_mention(clause: Clause, fact: Known) -> int:
    places = [phrase_index(clause.words, m) for m in fact.mentions]
    return min((p for p in places if p is not None), default=len(clause.words))


def _someone_else(clause: Clause, candidates: list[Known]) -> bool:
    """The clause names a person who is none of these facts' entities, and not the user."""
    if _YOU & set(clause.words):
        return False
    if _THIRD_PERSON_RE.match(clause.text):
        return True  # "who's based in Berlin": about whoever came before
    mentioned = {w for k in candidates for m in k.mentions for w in m.split()}
    subject = _SUBJECT_NAME_RE.match(clause.text)
    return subject is not None and subject.group(1).lower() not in mentioned


def _role_matches(
    known: Sequence[Known], clauses: list[Clause], already: list[_Match]
) -> list[_Match]:
    """ "Anna is head of data", "you're a data engineer": a role said without its key."""
    taken = {id(m.fact) for m in already}
    out = []
    for index, clause in enumerate(clauses):
        m = _COPULA_RE.match(clause.text)
        if m is None:
            continue
        subject = " ".join(stems(re.sub(rf"^{_DETERMINER}\s+", "", m.group("subject"), flags=re.I)))
        value = m.group("value")
        typed = claims.read(value)
        age = _AGE_RE.match(value)
        for fact in known:
            if id(fact) in taken:
                continue
            is_user = fact.about_user and subject in {"you", "you're"}
            if not (is_user or (fact.named_only and subject in fact.mentions)):
                continue
            if fact.key in _ROLE_KEYS and typed.empty():
                out.append(_Match(fact, index, True, value))
            elif fact.key == "age" and age:  # "Saoirse's ten now"
                out.append(_Match(fact, index, True, number=_number(age.group(1))))
    return out


def _generic_matches(
    known: Sequence[Known], clauses: list[Clause], already: list[_Match]
) -> list[_Match]:
    """ "Miso's appointment moved": a named entity with one fact of that kind (its vet
    appointment) is meant, though the key's specific word is not said."""
    taken = {id(m.fact) for m in already}
    out = []
    for index, clause in enumerate(clauses):
        named = {k.entity for k in known if k.entity and mentions_phrase(clause.words, k.mentions)}
        if _YOUR_THING_RE.search(clause.text):  # "your plan", "you're on the Red plan"
            named |= {k.entity for k in known if k.about_user and k.entity}
        for entity in named:
            facts_of = [k for k in known if k.entity == entity]
            said = {_GENERIC_ALIASES.get(w, w) for w in clause.words}
            for word in said & GENERIC:
                having = [k for k in facts_of if word in stems(k.key)]
                if len(having) == 1 and id(having[0]) not in taken:
                    out.append(_Match(having[0], index, True))
    return out


def _affiliations(
    sentence: str, known: Sequence[Known], clauses: list[Clause], matches: list[_Match]
) -> list[Conflict]:
    """ "Joana's still at Estúdio Marés": a named entity placed at or in a name, without a key.
    Only a restated old value is reported (the name may be true of some other fact)."""
    out = []
    matched = {id(m.fact) for m in matches}
    for clause in clauses:
        m = _AFFILIATION_RE.match(clause.text)
        if m is None or clause.negated or clause.history or clause.asks or clause.supposes:
            continue
        subject = " ".join(stems(m.group("subject")))
        facts_of = [k for k in known if k.named_only and subject in k.mentions]
        said = claims.read(m.group("value"))
        if not said.names or not facts_of or any(id(k) in matched for k in facts_of):
            continue
        if any(claims.agree(said, claims.read(k.value)) for k in facts_of):
            continue  # true of one of its current facts
        for fact in facts_of:
            old = next(
                (o for o in fact.superseded if claims.agree(said, claims.read(o.value))), None
            )
            if old is not None:
                out.append(fact_conflict(sentence, fact, "superseded", old, 0.7, True))
                break
    return out


def _most_specific(matches: list[_Match], said: set[str]) -> list[_Match]:
    """ "dentist appointment" and "dentist" both match "your dentist appointment is ...": the
    longer key, all of whose words are said, is what the sentence is about."""
    out = []
    for m in matches:
        words = set(stems(m.fact.key))
        wider = any(o is not m and words < set(stems(o.fact.key)) <= said for o in matches)
        if not wider:
            out.append(m)
    return out


def _possessive_owner(clause: str, key: str) -> str | None:
    """Whose fact the clause speaks of: "Maria's birthday", "Beacon's new deadline" (the owner
    right before one of the key's words). Not "Swimming's at ten" (is) nor "Whelan's" after it."""
    key_words = set(stems(key))
    for m in _POSSESSIVE_RE.finditer(clause):
        owner = m.group("owner").lower()
        if owner in _NOT_OWNERS or stem(owner) in key_words:
            continue
        following = stems(clause[m.end() - 1 :])[:3]
        if key_words & set(following):
            return owner
    return None


def _judge(
    sentence: str, clauses: list[Clause], match: _Match, now: dt.datetime | None
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
            if all(w in _LINKING or w in name_stems or w in key_words for w in between):
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


def _judge_role(sentence: str, clause: Clause, match: _Match) -> Conflict | bool | None:
    """A role is words, not a typed value: the same words (one within the other) agree."""
    if clause.negated or clause.history or clause.plans:
        return None
    value = re.split(r",|\s+(?:so|and|but|because|who|which)\s+", match.value_text or "")[0]
    value = re.sub(rf"^{_DETERMINER}\s+", "", value.strip(), flags=re.I)
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


def _judge_number(sentence: str, clause: Clause, match: _Match) -> Conflict | bool | None:
    """An age said as a bare number: the same number agrees."""
    if clause.negated or clause.history or clause.supposes:
        return None
    fact = match.fact
    if _number(fact.value) is None:
        return None
    if _number(fact.value) == match.number:
        return True
    old = next((s for s in fact.superseded if _number(s.value) == match.number), None)
    return fact_conflict(sentence, fact, "superseded" if old else "current", old, 0.7, True)


def _number(text: str) -> int | None:
    m = re.search(r"\d+|" + "|".join(claims.NUMBER_WORDS), text, re.I)
    if m is None:
        return None
    word = m.group().lower()
    return int(word) if word.isdigit() else claims.NUMBER_WORDS[word]


def _content(text: str) -> set[str]:
    return {w for w in stems(text) if w not in extract.STOP_WORDS}


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


def _dedupe(conflicts: Iterable[Conflict]) -> list[Conflict]:
    seen: set[tuple[str, str, int]] = set()
    out = []
    for c in conflicts:
        key = (c.claim, c.file, c.line)
        if key not in seen:
            seen.add(key)
            out.append(c)
    return out


def _key_match(clauses: list[Clause], key: str) -> list[tuple[int, bool]]:
    """Where the sentence names the key: each clause holding its head word (its last specific
    word, or a paraphrase), with whether a paraphrase was needed; empty if the sentence does not
    name it. The key's other words may stand in any clause of the sentence ("Atlas is due
    Friday, and the demo is Tuesday"), and a key of three or more may miss one that is not its
    head ("your 10K best" for `10K personal best`)."""
    words = [w for w in key.split() if w not in extract.STOP_WORDS]
    specific = specific_words(key)
    owners_only = all(stem(w) in _OWNERS or w.endswith(("'s", "’s")) for w in specific)
    if not specific or owners_only:
        specific = words  # "user's name", "denise's visit": the owner alone says nothing
    if not specific:
        return []
    missing = 0
    paraphrased = False
    for word in specific[:-1]:
        places = _places(clauses, word, head=False)
        if not places:
            missing += 1
        paraphrased = paraphrased or (bool(places) and all(p[1] for p in places))
    if missing > (1 if len(specific) >= 3 else 0):
        return []
    weak = paraphrased or missing > 0
    own = [stem(w) for w in specific]
    return [(i, by_synonym or weak) for i, by_synonym in _places(clauses, specific[-1], key=own)]


def _places(
    clauses: list[Clause], word: str, head: bool = True, key: Sequence[str] = ()
) -> list[tuple[int, bool]]:
    """The clauses that name `word` (or a paraphrase of it) as a thing being stated, with
    whether it took a paraphrase. Not "after the meeting" (a time reference) nor "due to"."""
    options = stem_options(word)
    out: dict[int, bool] = {}
    for i, clause in enumerate(clauses):
        for option in options:
            at = phrase_index(clause.words, option, as_noun=head)
            if at is None:
                continue
            wanted = stems(option)
            end = at + len(wanted)
            after = clause.words[end] if end < len(clause.words) else ""
            if wanted[-1] == "due" and after == "to":
                continue  # "due to start": scheduled, not a deadline
            if head and option == word and _modifies(clause.followed_by(end - 1), key):
                continue  # "the car payment", "the department meeting": another thing
            skip = _DETERMINERS | set(key)  # "after the Easter holidays": past the key's words
            before = [
                w
                for w in clause.words[max(0, at - 4) : at]
                if w not in skip and not re.search(rf"\b{re.escape(w)}'s\b", clause.text, re.I)
            ]
            if before and before[-1] in _TEMPORAL and wanted[0] not in _YOU | {"i", "we"}:
                continue  # "after the parent-teacher meeting": a time, not the meeting's value
            out.setdefault(i, option != word)
            break
    return sorted(out.items())


def _modifies(written: str | None, key: Sequence[str]) -> bool:
    """Whether the word after a key's head makes the head a modifier of another noun ("car
    payment"): a plain lowercase word that is not a function word, a verb form, one of the key's
    own words or a generic one ("standup time")."""
    after = stem(written or "")
    return bool(
        written
        and written[:1].islower()
        and after.isalpha()
        and after not in extract.STOP_WORDS
        and after not in _LINKING
        and after not in key
        and after not in GENERIC
        and not after.endswith(("ed", "ing"))
        and after not in _VERBS_AFTER
    )


def _head(key: str) -> str | None:
    """The last specific word of a key of two or more ("orion deadline" -> "deadline")."""
    specific = specific_words(key)
    return stem(specific[-1]) if len(specific) >= 2 else None


def _head_match(clauses: list[Clause], key: str, heads: Counter[str]) -> list[tuple[int, bool]]:
    """ "The deadline is Friday" for the memory's only deadline, kept as `orion deadline`: the
    key's head alone names it when no other key has that head."""
    head = _head(key)
    if head is None or heads[head] > 1 or head in _PARAPHRASES:
        return []
    said = {w for c in clauses for w in c.words}
    owners = {stem(w) for w in key.split() if w.endswith(("'s", "’s"))} - _OWNERS
    if owners - said:
        return []  # `lena's birthday` is not "your birthday": its owner must be named
    return [
        (i, True) for i, _ in _places(clauses, head, key=[stem(w) for w in specific_words(key)])
    ]
