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
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from brainiac import claims, extract, facts, ltm, stm
from brainiac import events as ev
from brainiac.errors import BrainiacError
from brainiac.facts import Superseded
from brainiac.vault import ARCHIVE_DIR, IDENTITY, LONG_TERM_DIR, SHORT_TERM

if TYPE_CHECKING:
    from brainiac.index import Hit
    from brainiac.memory_protocol import MemoryLike

RECENT_EVENTS = 3
CANDIDATE_NOTES = 40

# Paraphrases of common key words (all lowercase, compared after a light stemming).
_SYNONYMS: dict[str, tuple[str, ...]] = {
    "deadline": (
        "due",
        "due date",
        "has to be in by",
        "have to be in by",
        "must be in by",
        "needs to be in by",
        "finished by",
        "submitted by",
    ),
    "due": ("deadline",),
    "home": ("live", "living", "based", "reside", "you moved to", "you've moved to"),
    "employer": ("work at", "work for", "working at", "working for", "job at", "employed"),
    "company": ("work at", "work for", "working at", "working for", "employer"),
    "job": ("work as", "working as", "role", "position"),
    "role": ("work as", "working as", "job", "position", "title"),
    "manager": ("boss", "team lead", "lead", "supervisor", "report to", "reports to"),
    "boss": ("manager", "supervisor"),
    "owner": ("own", "owned by"),
    "stakeholder": ("involved in", "involved with"),
    "allergy": ("allergic",),
    "partner": ("wife", "husband", "spouse", "girlfriend", "boyfriend", "fiancé", "fiancée"),
    "birthday": ("born", "birth"),
    "salary": ("earn", "paid", "pay"),
    "budget": ("funding", "budgeted"),
    "car": ("drive", "driving"),
    "phone": ("mobile", "number", "phone number"),
    "age": ("years old", "turned"),
    "weight": ("weigh", "kilo", "kg"),
    "hourly": ("an hour", "per hour"),
    "rehearsal": ("practice",),
    "pickup": ("pick up", "pick-up", "collect", "collecting", "gets out"),
    "standup": ("stand-up",),
    "stand-up": ("standup",),
    "user": ("you", "your"),
    "assistant": ("i", "my", "me"),
    "meeting": ("meet", "sync"),
    "gym": ("workout", "train at", "work out at"),
    "rent": ("rental",),
    "dentist": ("dental",),
    "doctor": ("gp", "physician"),
}
# Generic words that name the same kind of thing: "Miso's check-up" is his vet appointment.
_WORD_RE = re.compile(r"[\w'’-]+")
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
    w for options in _SYNONYMS.values() for w in options if " " not in w and w not in _SYNONYMS
)
_GENERIC_ALIASES = {
    "check-up": "appointment",
    "checkup": "appointment",
    "visit": "appointment",
    "booking": "appointment",
    "reservation": "appointment",
}
# A word right after these is a verb, not the key ("I'll address it", "you should focus").
_VERB_BEFORE = extract.word_set(
    "i i'll we we'll you'll they to will can could should would i'd let's please"
)
# Words a key shares with many others; they identify a fact only when nothing else does.
_GENERIC = extract.word_set(
    """
    time day days date name city town place number status value type location current new
    appointment schedule plan amount count info details reservation booking visit check-up rate
    lesson lessons class classes session sessions
    """
)
_OWNERS = frozenset({"user", "assistant"})
_YOU = frozenset(
    {"you", "your", "you're", "you've", "yours", "you'll"}
)  # "user's name": the owner alone says nothing
_ROLE_KEYS = frozenset({"role", "job", "job title", "title", "position", "occupation"})
_NAMED_ONLY_TAGS = frozenset(
    {
        "person",
        "people",
        "project",
        "organisation",
        "organization",
        "company",
        "client",
        "pet",
        # the notes the promotion job makes for a name it keeps meeting (jobs/promotion.py)
        "entity",
    }
)
_TITLE_GENERIC = extract.word_set("project team trip the a an my our plan")
_DETERMINER = r"(?:the|a|an|your|my|our|his|her|their|its)"
# Where a sentence divides into clauses that each say one thing. Not at every comma: "Monday,
# the 30th" is one value and "your manager, Marco Lenz" an apposition.
_CLAUSE_RE = re.compile(
    r"\s*;\s*|\s+[—–-]\s+|:\s+"
    r"|,\s+(?=(?:so|but|because|since|while|whereas|although|though|which|who|who's|then"
    r"|and then)\b)"
    r"|\s+and\s+(?=(?:[\w'-]+\s+){0,4}(?:is|are|was|were)\b)"
    r"|\s+(?=because\b)"
    r"|,?\s+(?:and|but)\s+(?=(?:the|your|my|our|his|her|their|it|it's|this|that|she|he|they|we"
    r"|you|you're|i|i'll)\s+(?!\d))"
    r"|,\s+(?=(?:the|your|my|our|his|her|their|it|this|that|she|he|they|we|you|i)\s+(?!\d)"
    r"[\w'-]+\s+(?:is|are|was|were|has|have|will|moved|goes|comes)\b)",
    re.I,
)
_LEADING_CLAUSE_RE = re.compile(
    r"^(?:since|because|as|with|given|now that|when|while|if|although|though|once|after|before)"
    r"\b[^,]{3,}?,\s+",
    re.I,
)
_QUESTION_RE = re.compile(r"\?\s*[\"')\]]*$")
_ASKING_RE = re.compile(
    r"^(?:is|are|was|were|do|does|did|can|could|will|would|shall|should|has|have|had|when|what"
    r"|where|which|who|how|why|want|need)\b",
    re.I,
)
_SUPPOSING_RE = re.compile(
    r"\b(?:if(?!\s+(?:you|you'd)\s+(?:want|like|need|prefer|wish)\b)|unless|suppose|supposing"
    r"|imagine|assuming|in case|hypothetically|might|maybe"
    r"|perhaps|possibly|presumably|probably|likely|could be|not sure|whether|wonder|were to"
    r"|would be)\b",
    re.I,
)
_CONDITION_RE = re.compile(r"^(?:if|unless|suppose|supposing|assuming|in case)\b", re.I)
_PLANNING_RE = re.compile(
    r"^(?:(?:so|then|and|also|just|please)\s+)*"
    r"(?:i'll|i will|i'd|i can|i could|i've (?:set|added|booked|blocked|put)|let me|let's|shall i"
    r"|want me|remember to|don't forget|leave|bring|take|book|call|send|ask|tell|check|set|plan"
    r"|try|make|buy|pack|add|move|cancel|schedule|drop|get|go|give|keep|put|use|email|text"
    r"|reply|pick|remind|block|aim|budget)\b",
    re.I,
)
_HISTORY_RE = re.compile(
    r"\b(?:used to|originally|previously|formerly|initially|at first|back then|had been|was once"
    r"|old|earlier|prior|back in|until recently)\b",
    re.I,
)
_NEGATION_RE = re.compile(r"\b(?:not|never|no longer|isn't|aren't|wasn't|weren't)\b|n't\b", re.I)
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
_NOT_UNTIL_RE = re.compile(r"(?:\bnot|n't)\b[^,;]*\buntil\b", re.I)  # "isn't due until May"
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


@dataclass(frozen=True)
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


@dataclass(frozen=True)
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


@dataclass(frozen=True)
class _Clause:
    """One statement within a sentence, with what kind of statement it is."""

    text: str
    words: tuple[str, ...]  # stemmed
    asks: bool  # a question
    supposes: bool  # a condition or a hedge
    plans: bool  # the assistant's plan or a suggestion: its times are the plan's, not facts
    negated: bool
    history: bool  # speaks of the past as the past

    def followed_by(self, index: int) -> str | None:
        """The word right after word `index` as written, if only a space stands between them
        (None at the end or after punctuation: "manager, Marco")."""
        spans = [m.span() for m in _WORD_RE.finditer(self.text)]
        if index + 1 >= len(spans):
            return None
        gap = self.text[spans[index][1] : spans[index + 1][0]]
        return self.text[slice(*spans[index + 1])] if gap.isspace() else None


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


def conflict_finding(sentence: str, c: Conflict) -> Finding:
    """A sentence's verdict when it contradicts a stored fact (the fact path, and the event path
    when the event gave that fact: evidence.py)."""
    return Finding(
        sentence, CONFLICT, "fact", c.key, c.stored, c.file, c.line, c.block, c.since, c.correction
    )


def _finding(
    sentence: str, clauses: list[_Clause], conflicts: list[Conflict], agreed: list[Known]
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
    clauses: list[_Clause],
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


def _weakly_chosen(
    fact: Known, clause: _Clause, in_clause: set[str], in_sentence: set[str]
) -> bool:
    if fact.entity is None or fact.entity in in_clause | in_sentence:
        return False
    # "your GP": the user's own note, or a topic note of theirs (health, home), spoken of to them
    return not (not fact.named_only and _YOU & set(clause.words))


def clauses_of(sentence: str) -> list[_Clause]:
    """The statements of a sentence, each marked as a question, a condition, a plan or negated
    (evidence.py reads them too)."""
    asked = bool(_QUESTION_RE.search(sentence))
    parts: list[str] = []
    lead = _LEADING_CLAUSE_RE.match(sentence)
    rest = sentence
    if lead:
        parts.append(lead.group().rstrip(", "))
        rest = sentence[lead.end() :]
    parts += [p for p in _CLAUSE_RE.split(rest) if p and p.strip()]
    supposed = bool(_CONDITION_RE.match(sentence))  # "If they drop the attic, the fee falls"
    out = []
    for i, part in enumerate(parts):
        stripped = part.strip().rstrip(".!")
        out.append(
            _Clause(
                stripped,
                tuple(_stems(stripped)),
                asks=stripped.endswith("?")
                or (asked and (i == len(parts) - 1 or bool(_ASKING_RE.match(stripped)))),
                supposes=supposed or bool(_SUPPOSING_RE.search(stripped)),
                plans=bool(_PLANNING_RE.match(stripped)),
                negated=bool(_NEGATION_RE.search(stripped)) and not _NOT_UNTIL_RE.search(stripped),
                history=bool(_HISTORY_RE.search(stripped)),
            )
        )
    return out


def _named(known: Sequence[Known], words: Sequence[str]) -> set[str]:
    return {k.entity for k in known if k.entity and k.named_only and _mentions(words, k.mentions)}


def _choose(
    candidates: list[Known],
    clause: _Clause,
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
    if speaks_to_you or len(_specific(unnamed[0].key)) >= 2:
        return unnamed  # "your GP"; "the annual physical"
    return []  # "the department meeting": not the book club's next meeting


def _first_mention(clause: _Clause, fact: Known) -> int:
    places = [_phrase_index(clause.words, m) for m in fact.mentions]
    return min((p for p in places if p is not None), default=len(clause.words))


def _someone_else(clause: _Clause, candidates: list[Known]) -> bool:
    """The clause names a person who is none of these facts' entities, and not the user."""
    if _YOU & set(clause.words):
        return False
    if _THIRD_PERSON_RE.match(clause.text):
        return True  # "who's based in Berlin": about whoever came before
    mentioned = {w for k in candidates for m in k.mentions for w in m.split()}
    subject = _SUBJECT_NAME_RE.match(clause.text)
    return subject is not None and subject.group(1).lower() not in mentioned


def _role_matches(
    known: Sequence[Known], clauses: list[_Clause], already: list[_Match]
) -> list[_Match]:
    """ "Anna is head of data", "you're a data engineer": a role said without its key."""
    taken = {id(m.fact) for m in already}
    out = []
    for index, clause in enumerate(clauses):
        m = _COPULA_RE.match(clause.text)
        if m is None:
            continue
        subject = " ".join(
            _stems(re.sub(rf"^{_DETERMINER}\s+", "", m.group("subject"), flags=re.I))
        )
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
    known: Sequence[Known], clauses: list[_Clause], already: list[_Match]
) -> list[_Match]:
    """ "Miso's appointment moved": a named entity with one fact of that kind (its vet
    appointment) is meant, though the key's specific word is not said."""
    taken = {id(m.fact) for m in already}
    out = []
    for index, clause in enumerate(clauses):
        named = {k.entity for k in known if k.entity and _mentions(clause.words, k.mentions)}
        if _YOUR_THING_RE.search(clause.text):  # "your plan", "you're on the Red plan"
            named |= {k.entity for k in known if k.about_user and k.entity}
        for entity in named:
            facts_of = [k for k in known if k.entity == entity]
            said = {_GENERIC_ALIASES.get(w, w) for w in clause.words}
            for word in said & _GENERIC:
                having = [k for k in facts_of if word in _stems(k.key)]
                if len(having) == 1 and id(having[0]) not in taken:
                    out.append(_Match(having[0], index, True))
    return out


def _affiliations(
    sentence: str, known: Sequence[Known], clauses: list[_Clause], matches: list[_Match]
) -> list[Conflict]:
    """ "Joana's still at Estúdio Marés": a named entity placed at or in a name, without a key.
    Only a restated old value is reported (the name may be true of some other fact)."""
    out = []
    matched = {id(m.fact) for m in matches}
    for clause in clauses:
        m = _AFFILIATION_RE.match(clause.text)
        if m is None or clause.negated or clause.history or clause.asks or clause.supposes:
            continue
        subject = " ".join(_stems(m.group("subject")))
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
        words = set(_stems(m.fact.key))
        wider = any(o is not m and words < set(_stems(o.fact.key)) <= said for o in matches)
        if not wider:
            out.append(m)
    return out


def _possessive_owner(clause: str, key: str) -> str | None:
    """Whose fact the clause speaks of: "Maria's birthday", "Beacon's new deadline" (the owner
    right before one of the key's words). Not "Swimming's at ten" (is) nor "Whelan's" after it."""
    key_words = set(_stems(key))
    for m in _POSSESSIVE_RE.finditer(clause):
        owner = m.group("owner").lower()
        if owner in _NOT_OWNERS or _stem(owner) in key_words:
            continue
        following = _stems(clause[m.end() - 1 :])[:3]
        if key_words & set(following):
            return owner
    return None


def _judge(
    sentence: str, clauses: list[_Clause], match: _Match, now: dt.datetime | None
) -> Conflict | bool | None:
    """A Conflict; True when the clause says the fact's value; None when it cannot tell."""
    clause = clauses[match.clause]
    fact = match.fact
    if clause.asks or clause.supposes:
        return None
    ignore = frozenset(_stems(fact.key)) | frozenset(w for m in fact.mentions for w in m.split())
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
        stored_words = _content(fact.value) - set(_stems(fact.key))
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


def _linked(clause: _Clause, fact: Known, names: frozenset[str]) -> bool:
    key_words = set(_stems(fact.key))
    options = {o for w in _specific(fact.key) or fact.key.split() for o in _options(w)}
    spans = [
        (i, i + len(_stems(o)) - 1)
        for o in options
        if (i := _phrase_index(clause.words, o)) is not None
    ]
    name_stems = {_stem(n) for n in names}
    named = [i for i, w in enumerate(clause.words) if w in name_stems]
    for first, last in spans:
        for n in named:
            between = clause.words[last + 1 : n] if n > last else clause.words[n + 1 : first]
            if all(w in _LINKING or w in name_stems or w in key_words for w in between):
                return True
    return False


def _options(word: str) -> tuple[str, ...]:
    return (word, *(_SYNONYMS.get(word) or _SYNONYMS.get(_stem(word)) or ()))


def _said(clause: _Clause, ignore: frozenset[str], now: dt.datetime | None) -> claims.Values:
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


def _judge_role(sentence: str, clause: _Clause, match: _Match) -> Conflict | bool | None:
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


def _judge_number(sentence: str, clause: _Clause, match: _Match) -> Conflict | bool | None:
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
    return {w for w in _stems(text) if w not in extract.STOP_WORDS}


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
        claim,
        fact.key,
        fact.value,
        since,
        fact.file,
        fact.line,
        fact.block,
        kind,
        old.value if old else None,
        period,
        fact.entity,
        round(confidence - (0.1 if synonym else 0.0), 2),
        correction,
    )


def _period(s: Superseded) -> str | None:
    a = facts.render_time(s.since) if s.since else None
    b = facts.render_time(s.until) if s.until else None
    if a and b:
        return f"{a} to {b}"
    return f"from {a}" if a else (f"until {b}" if b else None)


def _dedupe(conflicts: Iterable[Conflict]) -> list[Conflict]:
    seen: set[tuple[str, str, int]] = set()
    out = []
    for c in conflicts:
        key = (c.claim, c.file, c.line)
        if key not in seen:
            seen.add(key)
            out.append(c)
    return out


# --- matching keys and entities ----------------------------------------------------------------


def _stem(word: str) -> str:
    word = word.lower().replace("’", "'").removesuffix("'s").rstrip("'")
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def _stems(text: str) -> list[str]:
    return [_stem(w) for w in _WORD_RE.findall(text.lower())]


def _phrase_at(words: Sequence[str], phrase: str, as_noun: bool = False) -> bool:
    return _phrase_index(words, phrase, as_noun) is not None


def _phrase_index(words: Sequence[str], phrase: str, as_noun: bool = False) -> int | None:
    wanted = _stems(phrase)
    n = len(wanted)
    for i in range(len(words) - n + 1) if n else ():
        if list(words[i : i + n]) == wanted and not (
            as_noun and i and words[i - 1] in _VERB_BEFORE
        ):
            return i
    return None


def _key_match(clauses: list[_Clause], key: str) -> list[tuple[int, bool]]:
    """Where the sentence names the key: each clause holding its head word (its last specific
    word, or a paraphrase), with whether a paraphrase was needed; empty if the sentence does not
    name it. The key's other words may stand in any clause of the sentence ("Atlas is due
    Friday, and the demo is Tuesday"), and a key of three or more may miss one that is not its
    head ("your 10K best" for `10K personal best`)."""
    words = [w for w in key.split() if w not in extract.STOP_WORDS]
    specific = _specific(key)
    owners_only = all(_stem(w) in _OWNERS or w.endswith(("'s", "’s")) for w in specific)
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
    own = [_stem(w) for w in specific]
    return [(i, by_synonym or weak) for i, by_synonym in _places(clauses, specific[-1], key=own)]


def _places(
    clauses: list[_Clause], word: str, head: bool = True, key: Sequence[str] = ()
) -> list[tuple[int, bool]]:
    """The clauses that name `word` (or a paraphrase of it) as a thing being stated, with
    whether it took a paraphrase. Not "after the meeting" (a time reference) nor "due to"."""
    options = _options(word)
    out: dict[int, bool] = {}
    for i, clause in enumerate(clauses):
        for option in options:
            at = _phrase_index(clause.words, option, as_noun=head)
            if at is None:
                continue
            wanted = _stems(option)
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
    after = _stem(written or "")
    return bool(
        written
        and written[:1].islower()
        and after.isalpha()
        and after not in extract.STOP_WORDS
        and after not in _LINKING
        and after not in key
        and after not in _GENERIC
        and not after.endswith(("ed", "ing"))
        and after not in _VERBS_AFTER
    )


def _specific(key: str) -> list[str]:
    words = [w for w in key.split() if w not in extract.STOP_WORDS]
    return [w for w in words if _stem(w) not in _GENERIC]


def _head(key: str) -> str | None:
    """The last specific word of a key of two or more ("orion deadline" -> "deadline")."""
    specific = _specific(key)
    return _stem(specific[-1]) if len(specific) >= 2 else None


def _head_match(clauses: list[_Clause], key: str, heads: Counter[str]) -> list[tuple[int, bool]]:
    """ "The deadline is Friday" for the memory's only deadline, kept as `orion deadline`: the
    key's head alone names it when no other key has that head."""
    head = _head(key)
    if head is None or heads[head] > 1 or head in _PARAPHRASES:
        return []
    said = {w for c in clauses for w in c.words}
    owners = {_stem(w) for w in key.split() if w.endswith(("'s", "’s"))} - _OWNERS
    if owners - said:
        return []  # `lena's birthday` is not "your birthday": its owner must be named
    return [(i, True) for i, _ in _places(clauses, head, key=[_stem(w) for w in _specific(key)])]


def _mentions(words: Sequence[str], phrases: Iterable[str]) -> bool:
    return any(_phrase_at(words, p) for p in phrases)


# --- what the memory knows ---------------------------------------------------------------------


def knowledge(memory: MemoryLike, text: str, hits: Sequence[Hit] | None = None) -> list[Known]:
    """The facts a response could contradict (module docstring); `hits`: the search for `text`
    when the caller made it already."""
    known: list[Known] = []
    try:
        identity = memory.vault.read(IDENTITY).text
    except FileNotFoundError:
        identity = ""
    known += _from_lines(identity, 0, IDENTITY, None, ())
    doc = memory.short_term()
    section = doc.note.section("Facts")
    if section is not None:
        lines = doc.note.lines[section.heading_line + 1 : section.end_line]
        known += _from_lines("".join(lines), section.heading_line + 1, SHORT_TERM, None, ())
    if hits is None:
        hits = memory.indexer.index.search(text, limit=CANDIDATE_NOTES)
    for rel in _candidate_notes(hits):
        try:
            note = ltm.parse(memory.vault.read(rel).text, rel)
        except (OSError, BrainiacError):
            continue
        if note.private:
            continue
        s = note.note.section("Facts")
        if s is None:
            continue
        lines = note.note.lines[s.heading_line + 1 : s.end_line]
        mentions = _entity_mentions(note.title, note.aliases)
        tags = {t.lower() for t in note.tags}
        about_user = "user" in tags
        named_only = not about_user and bool(tags & _NAMED_ONLY_TAGS)
        for k in _from_lines("".join(lines), s.heading_line + 1, rel, note.title, mentions):
            known.append(dataclasses.replace(k, about_user=about_user, named_only=named_only))
    return _with_recent_events(known, list(doc.events[-RECENT_EVENTS:]), doc)


def _candidate_notes(hits: Sequence[Hit]) -> list[str]:
    paths: list[str] = []
    for hit in hits:
        rel = hit.path
        if rel.startswith((LONG_TERM_DIR + "/", ARCHIVE_DIR + "/notes/")) and rel not in paths:
            paths.append(rel)
    return paths


def _entity_mentions(title: str, aliases: Sequence[str]) -> tuple[str, ...]:
    phrases = {title.lower(), *(a.lower() for a in aliases if a.strip())}
    for name in (title, *aliases):
        for word in name.split():
            word = word.replace("’", "'").rstrip("'").removesuffix("'s")
            if word[:1].isupper() and word.lower() not in _TITLE_GENERIC and len(word) > 2:
                phrases.add(word.lower())
    return tuple(sorted(phrases))


def _from_lines(
    text: str, offset: int, rel: str, entity: str | None, mentions: tuple[str, ...]
) -> list[Known]:
    out = []
    for line in facts.parse(text):
        f = line.fact
        if not f.key or not f.value or f.key.startswith(("title", "tags", "aliases")):
            continue
        out.append(
            Known(
                f.key,
                _plain(f.value),
                f.since,
                line.superseded,
                rel,
                offset + line.first + 1,
                f.source,
                entity,
                mentions,
            )
        )
    return out


def _plain(value: str) -> str:
    """A value as read: a link's shown text ("[[anna-berg|Anna Berg]]" is "Anna Berg")."""
    return re.sub(r"\[\[(?:[^\]|]*\|)?([^\]]*)\]\]", r"\1", value)


def _with_recent_events(
    known: list[Known], recent: list[ev.Event], doc: stm.ShortTerm
) -> list[Known]:
    """Facts the last events state are the newest knowledge: they override a stored value of the
    same key (which becomes its superseded history) or stand on their own."""
    lines = _event_lines(doc)
    for event in recent:
        for f in extract.facts(event.text, at=event.at, source=event.id, speaker=event.role):
            same = [k for k in known if _same_key(f.key, k)]
            words = _stems(event.text)
            about = [k for k in same if k.entity and _mentions(words, k.mentions)]
            targets = about or same
            if len({k.entity for k in targets}) > 1:
                continue  # which project's deadline moved is not said
            line = lines.get(event.id, 0)
            if not targets:
                known.append(Known(f.key, f.value, f.since, (), SHORT_TERM, line, event.id))
                continue
            for old in targets:
                if claims.agree(claims.read(f.value), claims.read(old.value)) is not False:
                    continue
                history = (Superseded(old.value, old.since, f.since, old.block), *old.superseded)
                known[known.index(old)] = Known(
                    old.key,
                    f.value,
                    f.since,
                    history,
                    SHORT_TERM,
                    line,
                    event.id,
                    old.entity,
                    old.mentions,
                    old.about_user,
                    old.named_only,
                )
    return known


def _same_key(event_key: str, fact: Known) -> bool:
    """Whether a key found in an event names this fact: the same key, one within the other
    ("standup" and `standup time`), or the key with its entity's name ("atlas deadline")."""
    said = set(_stems(event_key))
    key = set(_stems(fact.key))
    if said <= key:
        return True
    names = {w for m in fact.mentions for w in _stems(m)}
    return bool(said - key) and said - key <= names and key <= said


def _event_lines(doc: stm.ShortTerm) -> dict[str, int]:
    section = stm.log_section(doc.note)
    if section is None:
        return {}
    body = doc.note.lines[section.heading_line + 1 : section.end_line]
    return {
        loc.event.id: loc.first_line + 1
        for loc in ev.parse_lines(body, offset=section.heading_line + 1)
    }
