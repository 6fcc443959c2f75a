"""The guard's fact path: which fact a sentence speaks of, and whether it agrees (check.py runs it).

The guard against hallucination (docs/check.md): before a response reaches a person,
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
trust in the guard). The labelled corpus in tests/check_corpus/ measures it (docs/benchmarks.md,
"The guard").

The package: `verdicts` (what every witness says), `clauses` (a response read into clauses),
`knowledge` (what the memory knows), and here `compare`, which finds the fact a clause speaks of
and judges it.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Sequence

from brainiac.guard.check_facts.clauses import clauses_of
from brainiac.guard.check_facts.judging import Match, dedupe, finding_for, judge
from brainiac.guard.check_facts.matching import (
    GENERIC_ALIASES,
    affiliations,
    generic_matches,
    head_match,
    key_head,
    key_match,
    matches_of,
    most_specific,
    named_entities,
    role_matches,
)
from brainiac.guard.check_facts.verdicts import CheckResult, Conflict, Finding, Known
from brainiac.language import extract, life_facts


def compare(text: str, known: Sequence[Known], now: dt.datetime | None = None) -> CheckResult:
    """The conflicts between `text` and `known` facts (no I/O; `check` gathers the facts)."""
    by_key: dict[str, list[Known]] = {}
    for k in known:
        by_key.setdefault(k.key, []).append(k)
    # A key that names a thing ("camping trips: something Melanie loves") is named by all of
    # it: "the road trip" is not about it, and has no head to share with other keys.
    by_head = {
        key: candidates
        for key, candidates in by_key.items()
        if not all(life_facts.keyed_by_thing(k.value) for k in candidates)
    }
    heads = Counter(h for h in map(key_head, by_head) if h)
    conflicts: list[Conflict] = []
    findings: list[Finding] = []
    about = 0
    focus: str | None = None  # the entity the response spoke about last
    for sentence in extract.sentences(text):
        clauses = clauses_of(sentence)
        in_sentence = named_entities(known, [w for c in clauses for w in c.words])
        if len(in_sentence) == 1:
            focus = next(iter(in_sentence))
        matches: list[Match] = []
        for key, candidates in by_key.items():
            for found in key_match(clauses, key):
                matches += matches_of(known, candidates, clauses, found, in_sentence, focus)
        named_keys = {m.clause for m in matches}
        for key, candidates in by_head.items():
            for found in head_match(clauses, key, heads):
                if found[0] in named_keys:
                    continue
                # A key's head alone is weak: only for the memory's general facts, or for
                # facts of an entity the sentence names.
                matches += [
                    m
                    for m in matches_of(known, candidates, clauses, found, in_sentence, focus)
                    if m.fact.entity is None or m.fact.entity in in_sentence
                ]
        matches += role_matches(known, clauses, matches)
        matches += generic_matches(known, clauses, matches)
        here = affiliations(sentence, known, clauses, matches)
        said_words = {GENERIC_ALIASES.get(w, w) for c in clauses for w in c.words}
        matches = most_specific(matches, said_words)
        about += len(matches)
        agreed: list[Known] = []
        for m in matches:
            verdict = judge(sentence, clauses, m, now)
            if isinstance(verdict, Conflict):
                here.append(verdict)
            elif verdict:
                agreed.append(m.fact)
        conflicts += here
        finding = finding_for(sentence, clauses, here, agreed)
        if finding is not None:
            findings.append(finding)
    return CheckResult(text, tuple(dedupe(conflicts)), len(known), about, tuple(findings))
