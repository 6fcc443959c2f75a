"""The guard's second witness: the remembered events themselves.

The fact path (check_facts/) compares a response with `- key: value` lines, and most of what a
conversation says never becomes one ("I went to a LGBTQ support group yesterday"). So a sentence
the facts could not judge is also compared with the events it is about:

1. retrieve: the events that share the sentence's words, through the index (one search), and
   the observations written in the files that search hit (observations.py: a note's
   `## Observations` lines, compared exactly as the turns they were read from);
2. align: an event (a turn) is about the sentence when it is said by, or names, the sentence's
   subject (a speaker named in it, or the user for "you") and holds most of the sentence's other
   content words once its values are set aside (light lemmatising: "went" is "go"); a reply
   is read with the question it answers (exchange.py: "Three times a week" after "How often
   do you work out?");
3. read typed values on both sides: dates as periods, with the event's relative dates resolved
   against the event's own time ("yesterday", "last Saturday", "last week", "next month",
   "two years ago"), numbers with the noun they count, proper names (people, places), a name
   given as the value ("named Shadow", "colleague Rob": named.py), the thing the sentence ends
   on ("a line of sneakers"), whom it was with ("with her aunt"), and the words beside a word
   both say, of any kind ("hot yoga" and "aerial yoga": slots.py);
4. decide: a value the event states the same way -> consistent; only when every aligned event
   that has a value of the sentence's kind states another one (and the sentence's value is said
   by none of them) -> conflict, with the event id, file, line, its sentence and the correction;
   anything else -> unverified. Each kind has one rule that holds in any conversation: a date
   more than a few days off (a month or a year said as such: another month or year), another
   count of the same thing (a measure counts its unit: "a 5K run"), another name given in the
   value's place, a thing ending the sentence that the memory never said where the event about
   the rest agrees, another relative or colour;
5. read beside the facts the deciding event gave (their sources name it): a conflict is
   reported under that fact's note and key, and a value a later event replaced neither
   contradicts nor confirms (repeating it is a superseded conflict).

Precision first, as in check_facts/: a conflict needs a close alignment (most relation words
shared, at least one of them not a light verb) and a value of the same kind that differs clearly
(dates more than a few days apart). Rules that hold in any conversation guard it beyond that
bar: a sentence about no one contradicts no one, the sentence's value in another event of the
same owner about the same thing clears it (both in `whose.py`), and a fact's date
said otherwise is cleared by an event stating the sentence's date for a past happening
(`_agreed`). Pure reading and one index search per sentence: no model.

This package's top decides (step 4, `with_events`); each other step is its own module:
`alignment.py` (1 and 2: the events among the hits, which of them a sentence is about),
`exchange.py` (2: the question a reply answers), `slots.py` (3 and 4: the value beside a
shared word), `values.py` (3: dates, counts and names, and the relation words left beside
them), `named.py` (3: the names given as a value), `words.py` (the plain forms those are
compared in), `kinds.py` (3: the values of a closed kind: relatives, colours),
`observations.py` (1: the notes' observations), `whose.py` (4: whose the sentence is, and
the owner's evidence that clears it) and `given_facts.py` (5).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import difflib
import math
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from brainiac.guard.check_facts.clauses import clauses_of
from brainiac.guard.check_facts.verdicts import (
    CONFLICT,
    CONSISTENT,
    UNVERIFIED,
    CheckResult,
    Conflict,
    Finding,
    Known,
)
from brainiac.guard.evidence import exchange, named, slots
from brainiac.guard.evidence.alignment import (
    CAPTION_RE,
    Aligned,
    EventLine,
    align,
    event_lines,
    line_of,
    subject_of,
)
from brainiac.guard.evidence.given_facts import beside_facts
from brainiac.guard.evidence.kinds import another_of_kind, of_kinds
from brainiac.guard.evidence.observations import observation_lines_of, owned
from brainiac.guard.evidence.values import Period, Values, read, relation_words
from brainiac.guard.evidence.whose import has_owner, said_elsewhere
from brainiac.guard.evidence.words import (
    LIGHT_LEMMAS,
    american,
    bare,
    lemma,
    owners,
    verb_form,
    words_of,
)
from brainiac.language import claims, lexicon

if TYPE_CHECKING:
    from brainiac.guard.within import Within
    from brainiac.search.index_documents import Hit
    from brainiac.search.memory_protocol import MemoryLike

_ALIGNED = 0.45  # share of the sentence's relation words an event must hold to contradict it
_ALIGNED_CLAUSES = 0.6  # ... when the sentence has more than one clause
_MARGIN = 0.25  # how far below the best-aligned event another still has a say
_DATE_SLACK = dt.timedelta(days=3)  # "last week" and "the week before 9 June" overlap loosely
_CALENDAR = (
    frozenset(claims.WEEKDAYS) | frozenset(claims.WEEKDAYS.values()) | frozenset(claims.MONTHS)
)
_WHEN_WORDS = frozenset(
    lemma(w)
    for w in (
        "early",
        "mid",
        "late",
        "around",
        "ago",
        "last",
        "end",
        "start",
        "beginning",
        "middle",
    )
)
_COPULAS = frozenset({"is", "was", "are", "were"})
_OPENERS = _COPULAS | lexicon.word_set(
    "a an the my your his her their our its some of in at on to with for from into about"
)
_TAIL_WORDS = 5  # the words of the phrase a sentence ends on ("a mint chocolate chip ice cream")
_WHOLE_MONTH = dt.timedelta(days=27)  # a period this long was said as a month or a year

# The past said as the past (check_facts/clauses.py's list, less "old" and "earlier": "her old
# car" is a car, and the events are all past anyway).
_FORMERLY_RE = re.compile(
    r"\b(?:used to|originally|previously|formerly|initially|at first|back then|had been"
    r"|was once|prior|until recently|moved from|changed from)\b",
    re.I,
)


# --- deciding ----------------------------------------------------------------------------------


def with_events(
    memory: MemoryLike,
    result: CheckResult,
    now: dt.datetime,
    hits: Sequence[Hit],
    known: Sequence[Known],
    found: Sequence[Hit] = (),
    within: Within | None = None,
) -> CheckResult:
    """`result` with each sentence the facts could not judge judged by the events: `hits`,
    the events the search for the response found; `known`, the facts check gathered, to read
    an event's verdict beside the facts it gave; `found`, all the search's hits (notes too),
    whose files' observations are evidence as well (those `within`, the project, sees)."""
    if not any(f.status == UNVERIFIED or _current(f, result) for f in result.findings):
        return result
    findings: list[Finding] = []
    conflicts: list[Conflict] = list(result.conflicts)
    # The notes' observations are evidence like the turns they were read from.
    turns = exchange.with_context(memory, event_lines(hits))
    events = turns + owned(observation_lines_of(memory, found or hits, within), turns)
    for f in result.findings:
        if _current(f, result):
            # A fact's date said otherwise, where an event about the sentence states the
            # sentence's date for something that had already happened when it was said: the
            # fact is about something else its key also names ("volunteering: started in 2022"
            # against "met Jean while volunteering on 24 February 2023"), since the date of a
            # past happening never moves (a plan's date may: then the newer fact stands).
            agreed = _agreed(memory, f, now, events, known)
            if agreed is not None:
                findings.append(agreed)
                conflicts = [c for c in conflicts if c.claim != f.claim]
                continue
        if f.status != UNVERIFIED:
            findings.append(f)
            continue
        judged = _judge_sentence(memory, f.claim, now, events)
        if judged is None:
            findings.append(f)
            continue
        finding, conflict = judged
        if known and finding.block:
            finding, conflict = beside_facts(finding, conflict, f, known, now)
        if conflict is not None and not has_owner(f.claim, turns):
            # "The Grand Canyon is a popular destination for family road trips": a sentence
            # about no one contradicts no one's life, however alike the words are
            findings.append(f)
            continue
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
    if not hits:
        return None
    # a sentence with no typed value may still give one beside a word the event says (slots.py)
    typed = bool(said.periods or said.numbers or said.names or thing)
    speakers = {e.role.lower() for e in hits if e.role}
    # "you" is the user where only the user and the assistant speak: the owners observations
    # name (people the user talks about) do not make it a conversation of named speakers
    said_by = {e.role.lower() for e in hits if e.role and not e.observation}
    subject = subject_of(sentence, speakers) or subject_of(sentence, said_by)
    names = set(said.names) - speakers
    opener = words_of(sentence)[:1]
    if opener and opener[0] in names and not _capitalised(opener[0], hits):
        names.discard(opener[0])  # "Rehearsals moved ...": capitalised for opening the sentence
    # A name the memory knows (said in any of these events) is not a wrong name: it may be
    # context ("lodged with Dublin City Council"), so only unknown names can contradict. An
    # image's caption is a model's guess at a picture, not something said: it knows no name.
    said_texts = [CAPTION_RE.sub(" ", e.text) for e in hits]
    known_names = {n for t in said_texts for n in claims.names(t)} | {
        bare(w) for t in said_texts for w in words_of(t) if len(w) > 3
    }
    # a misspelling in the conversation ("Xeonoblade") is the same name, not another one
    unknown = {n for n in names - known_names if not _near(n, known_names)}
    # A claim whose value is a name ("the cat is named Daisy"): its names are the value, not
    # words the event must share. Beside a date or a count, the names the memory knows say
    # which event is meant ("Eternal Sunshine"), and only unknown ones are set aside.
    index = memory.indexer.index
    # A thing the memory never mentions, said beside a date ("In December you made sushi"): set
    # aside like an unknown name, then judged by the event the rest of the sentence is about.
    tail = _tail(sentence, said)
    novel = _unheard(tail, speakers | names, index)
    # "with her aunt", "dyed his hair green": a value of a closed kind (a relative, a colour)
    kin = of_kinds(tail)
    if said.periods or said.numbers or names:
        thing = set()  # a typed value is the claim's value; the thing is only said beside it
    value_names = unknown if (said.periods or said.numbers) else names
    # A name given as the value ("the puppy is named Shadow") is one even beside a date, known
    # or not: the event about the rest of the sentence must give that name, not another.
    own_words = relation_words(sentence, said, speakers | {"user"})
    slot = named.value_names(sentence, own_words) - speakers
    relation = relation_words(
        sentence,
        said,
        speakers | value_names | slot | thing | novel | set().union(*kin.values()) | {"user"},
    )
    if not relation - LIGHT_LEMMAS:
        return None  # "Melanie went there on 7 May": nothing says which event
    owned = owners(sentence, None, subject)
    total = max(index.doc_count(), 1)
    # A rare word says more about which event is meant than a common one ("gym" vs "start").
    weights = {w: math.log(1.0 + total / (1.0 + index.frequency(w))) for w in relation}
    aligned = [
        a
        for a in (
            align(e, subject, relation, weights, said.names, owned, frozenset(speakers))
            for e in hits
        )
        if a is not None
    ]
    if not aligned:
        return None
    # A sentence of several clauses ("..., so your two review hours are free") says several
    # things: its values may belong to any of them, so an event must be plainly about it.
    needed = _ALIGNED if len(clauses) == 1 else _ALIGNED_CLAUSES
    # an event of another time is another occasion, whatever it gave beside a shared word
    same_time = [
        a
        for a in aligned
        if not (said.periods and a.values.periods)
        or any(_close(p, q) for p in said.periods for q in a.values.periods)
    ]
    beside = slots.beside(
        sentence,
        slots.Asked(relation - names, weights, speakers | {"user"}, needed),
        same_time,
        hits,
        lambda word: bool(_heard(word, index)),
    )
    if beside is not None:
        return _conflict_of(memory, sentence.strip(), beside, relation)
    if not typed:
        return None
    if thing:
        return _judge_object(memory, sentence.strip(), thing, aligned, relation, len(clauses))
    judged = [
        (a, v)
        for a in aligned
        if (v := _compare(said, a, names & known_names, unknown, speakers, slot, relation))
        is not None
    ]
    if not judged:
        return None
    # The events most about the sentence decide; a loosely related one that happens to share
    # the date does not outvote the one that is plainly about it.
    top = max(a.score for a, _ in judged)
    near = [(a, v) for a, v in judged if a.score >= top - _MARGIN]
    agree = [a for a, v in near if v]
    if novel:
        # the event about it agrees on the date but never names the thing the sentence ends on
        close = [a for a in agree if a.core and a.score >= needed]
        if close:
            best = max(close, key=lambda a: a.score)
            return _conflict_of(memory, sentence.strip(), best, relation)
        agree = []
    if kin:
        # the event about it agrees on the rest but says it was with someone else, or another
        # colour: of a kind the sentence gives, the event gives only other values
        close = [a for a in agree if a.core and a.score >= needed]
        other = [a for a in close if another_of_kind(kin, a.sentence)]
        if other and len(other) == len(close):
            return _conflict_of(
                memory, sentence.strip(), max(other, key=lambda a: a.score), relation
            )
        agree = [a for a in agree if a not in other]
    differ = [a for a, v in near if not v and a.score >= needed and a.core]
    if differ and any(v and a.core and a.score >= _ALIGNED for a, v in near):
        return None  # another event about it says the same value: maybe it changed, not a conflict
    if differ and said_elsewhere(said, differ, [a for a, v in judged if v], relation):
        return None
    claim = sentence.strip()
    if agree:
        best = max(agree, key=lambda a: a.score)
        return _finding(memory, claim, CONSISTENT, best, relation), None
    if not differ:
        return None
    return _conflict_of(memory, claim, max(differ, key=lambda a: a.score), relation)


def _current(f: Finding, result: CheckResult) -> bool:
    """Whether `f` is the fact path's conflict with a fact's current value (not a superseded
    value restated, which no event can clear: the event that said it is older)."""
    if f.status != CONFLICT or f.source != "fact":
        return False
    mine = [c for c in result.conflicts if c.claim == f.claim]
    return bool(mine) and all(c.kind == "current" for c in mine)


def _agreed(
    memory: MemoryLike,
    f: Finding,
    now: dt.datetime,
    events: list[EventLine],
    known: Sequence[Known],
) -> Finding | None:
    """The events' consistent verdict on a sentence the fact path found in conflict, read
    beside the facts the agreeing event gave (a value a later event replaced agrees with
    nothing); None when the events do not state the sentence's value."""
    if not read(f.claim, now).periods:
        return None  # a count, a name: the fact may be newer than the events that agree
    judged = _judge_sentence(memory, f.claim, now, events)
    if judged is None or judged[0].status != CONSISTENT:
        return None
    finding, conflict = judged
    said_at = dt.datetime.fromisoformat(finding.at) if finding.at else None
    told = read(finding.stored or "", said_at).periods
    if said_at is None or not told or any(p.end > said_at.date() for p in told):
        return None  # the event gives no date of its own, or a date still to come
    if known and finding.block:
        unjudged = dataclasses.replace(f, status=UNVERIFIED)
        finding, conflict = beside_facts(finding, conflict, unjudged, known, now)
    return finding if finding.status == CONSISTENT and conflict is None else None


def _conflict_of(
    memory: MemoryLike, claim: str, best: Aligned, relation: set[str]
) -> tuple[Finding, Conflict]:
    finding = _finding(memory, claim, CONFLICT, best, relation)
    conflict = Conflict(
        claim=claim,
        key=finding.about or "",
        stored=best.sentence,
        since=finding.at,
        file=finding.file or best.event.path,
        line=finding.line or 0,
        block=best.event.id,
        kind="current",
        old=None,
        old_period=None,
        entity=best.event.role or None,
        confidence=round(0.5 + 0.4 * best.score, 2),
        correction=finding.correction or "",
    )
    return finding, conflict


def _tail(sentence: str, said: Values) -> list[str]:
    """The words of the phrase `sentence` ends on, its values set aside ("a line of sneakers in
    June", "camping in the desert", "with her aunt"), last first: the thing it gives."""
    kept, last = [], 0
    for a, b in sorted(said.spans):
        kept.append(sentence[last:a])
        last = b
    kept.append(sentence[last:])
    words = words_of(" ".join(kept))
    while words and (words[-1] in lexicon.STOP_WORDS or lemma(words[-1]) in _WHEN_WORDS):
        words.pop()  # "for 4 years", "in early July": the value is gone, its framing too
    tail: list[str] = []
    # back to the verb or the word that opens the phrase: "... happened" ends on no thing
    while words and not (
        words[-1] in lexicon.STOP_WORDS or verb_form(words[-1]) or "'" in words[-1]
    ):
        tail.append(words.pop())
    if not tail and len(words) > 1 and words[-1].endswith("ing") and words[-2] in _COPULAS:
        tail.append(words.pop())  # "... was fencing": an activity named as the value
    # a thing is a phrase an article, a possessive, a preposition or "is" opens ("in the
    # desert", "with her aunt", "was sushi"), not what a subject does ("you'll turn")
    if not words or words[-1] not in _OPENERS:
        return []
    return tail[:_TAIL_WORDS]


def _unheard(tail: list[str], drop: set[str], index: Any) -> set[str]:
    """The words of a sentence's `tail` (`_tail`) the memory has never said in any form, as
    lemmas: the thing the sentence gives, where the memory cannot have stated it."""
    return {
        lemma(w)
        for w in tail
        # a name is judged as a name (evidence/named.py)
        if bare(w) not in drop
        and len(w) > 2
        and lemma(w) not in LIGHT_LEMMAS | _CALENDAR
        and not _heard(w, index)
    }


def _heard(word: str, index: Any) -> int:
    """How many documents hold `word` in either spelling ("colours" where the conversation
    says "colors"): a word the memory said the other way is no word it never said."""
    return int(index.frequency(word) or index.frequency(american(word)))


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
    words = [lemma(w) for w in words_of(m.group("value")) if w not in lexicon.STOP_WORDS]
    return set(words) if 0 < len(words) <= 3 else set()


def _judge_object(
    memory: MemoryLike,
    claim: str,
    thing: set[str],
    aligned: list[Aligned],
    relation: set[str],
    clauses: int,
) -> tuple[Finding, Conflict | None] | None:
    """ "The instrument she has played since she was young is the trumpet": consistent where an
    event about it names the thing; a conflict only where the memory has never mentioned the
    thing at all and an event is plainly about the rest of the sentence (it must say something
    else there); otherwise unverified."""
    naming = [a for a in aligned if thing <= {lemma(w) for w in words_of(a.event.text)}]
    if naming:
        best = max(naming, key=lambda a: a.score)
        return _finding(memory, claim, CONSISTENT, best, relation), None
    index = memory.indexer.index
    if clauses != 1 or any(_heard(w, index) for w in thing):
        return None
    close = [a for a in aligned if a.core and a.score >= _ALIGNED]
    if not close:
        return None
    best = max(close, key=lambda a: a.score)
    return _conflict_of(memory, claim, best, relation)


def _compare(
    said: Values,
    a: Aligned,
    known: set[str],
    unknown: set[str],
    speakers: set[str],
    slot: set[str],
    relation: set[str],
) -> bool | None:
    """True when the event states the sentence's values, False when it states another of a
    kind the sentence gives (and not this one), None when it says nothing comparable. Each kind
    is compared where both have it: "In June you went to Lisbon" against "I went to Rome last
    month" agrees on the month and differs on the place."""
    verdicts: list[bool] = []
    if said.periods and a.values.periods:
        close = any(_close(p, q) for p in said.periods for q in a.values.periods)
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
    if slot:
        # the name given as the value: the event names it, or gives another in its place
        said_here = {bare(w) for w in words_of(CAPTION_RE.sub(" ", a.event.text))}
        if all(n in said_here or _near(n, said_here) for n in slot):
            verdicts.append(True)
        else:
            nouns = relation & {lemma(w) for w in words_of(a.event.text)}
            given = named.value_names(CAPTION_RE.sub(" ", a.event.text), nouns)
            if given - slot - speakers - {a.event.role.lower()}:
                verdicts.append(False)
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
        and known <= set(a.values.names) | {bare(w) for w in words_of(a.sentence)}
    ):
        verdicts.append(True)
    if not verdicts:
        return None
    return all(verdicts)


def _close(p: Period, q: Period) -> bool:
    """Whether two dates may be the same: a few days apart at most ("last week" and "the week
    before 9 June" overlap loosely), but a month or a year said as such is that month or year
    ("in 2021" is not "last year" said in 2023, though 31 December and 1 January are a day
    apart)."""
    if min(p.end - p.start, q.end - q.start) >= _WHOLE_MONTH:
        return p.gap(q) == dt.timedelta(0)
    return p.gap(q) <= _DATE_SLACK


def _finding(
    memory: MemoryLike, claim: str, status: str, a: Aligned, relation: set[str]
) -> Finding:
    line = line_of(memory, a.event)
    at = a.event.at.strftime("%Y-%m-%d %H:%M") if a.event.at else None
    shared = sorted(relation & {lemma(w) for w in words_of(a.event.text)})
    who = f"{a.event.role} said" if a.event.role else "an event says"
    correction = None
    if status == CONFLICT and a.event.observation:
        source = f", from ^{a.event.id}" if a.event.id else ""
        correction = (
            f'You said "{claim}", but memory has the observation "{a.event.text}"'
            + (f" (noted {a.event.at.date().isoformat()})" if a.event.at else "")
            + f" ({a.event.path}:{line}{source})."
        )
    elif status == CONFLICT:
        correction = (
            f'You said "{claim}", but memory has {who}'
            + (f" on {at}" if at else "")
            + f': "{a.sentence}" ({a.event.path}:{line} ^{a.event.id}).'
        )
    return Finding(
        claim=claim,
        status=status,
        source="event",
        about=" ".join(shared),
        stored=a.sentence,
        file=a.event.path,
        line=line,
        block=a.event.id,
        at=at,
        correction=correction,
    )
