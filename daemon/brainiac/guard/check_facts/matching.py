"""Which fact a clause speaks of: by its key (or a paraphrase) and, when several notes hold that
key, by the note's entity; whose fact it is (a possessive, a third person, someone else named).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from brainiac.guard.check_facts.clauses import (
    GENERIC,
    SYNONYMS,
    Clause,
    mentions_phrase,
    phrase_index,
    specific_words,
    stem,
    stem_options,
    stems,
)
from brainiac.guard.check_facts.judging import DETERMINER, LINKING, Match, number_in
from brainiac.guard.check_facts.verdicts import Conflict, Known, fact_conflict
from brainiac.language import claims, lexicon

_DETERMINERS = lexicon.word_set("the a an your my our his her their its this that")


# Verbs that commonly follow a key as its subject ("the meeting got moved", "the car needs").
_VERBS_AFTER = lexicon.word_set(
    """
    got get gets moved moves changed changes need needs starts start begins begin runs run ends
    end falls fall lands land goes go comes come takes take costs cost has have had will would
    can could should must may might did does do went came took stays stay remains remain
    """
)


# "after the meeting", "the last day of Bran's booking": the key marks a time or a part.
_TEMPORAL = lexicon.word_set("after before until till since during of")


# Words that only paraphrase a key ("due"): never a key's head on their own.
_PARAPHRASES = frozenset(
    w for options in SYNONYMS.values() for w in options if " " not in w and w not in SYNONYMS
)


GENERIC_ALIASES = {
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


_YOUR_THING_RE = re.compile(r"\b(?:your|you're on|you are on|you're with|you are with)\b", re.I)


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


def matches_of(
    known: Sequence[Known],
    candidates: list[Known],
    clauses: list[Clause],
    found: tuple[int, bool],
    in_sentence: set[str],
    focus: str | None,
) -> list[Match]:
    index, by_synonym = found
    in_clause = named_entities(known, clauses[index].words)
    clause = clauses[index]
    chosen = _choose(candidates, clause, in_clause, in_sentence, focus, by_synonym)
    return [
        Match(fact, index, by_synonym, weak=_weakly_chosen(fact, clause, in_clause, in_sentence))
        for fact in chosen
    ]


def _weakly_chosen(fact: Known, clause: Clause, in_clause: set[str], in_sentence: set[str]) -> bool:
    if fact.entity is None or fact.entity in in_clause | in_sentence:
        return False
    # "your GP": the user's own note, or a topic note of theirs (health, home), spoken of to them
    return not (not fact.named_only and _YOU & set(clause.words))


def named_entities(known: Sequence[Known], words: Sequence[str]) -> set[str]:
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


def role_matches(
    known: Sequence[Known], clauses: list[Clause], already: list[Match]
) -> list[Match]:
    """ "Anna is head of data", "you're a data engineer": a role said without its key."""
    taken = {id(m.fact) for m in already}
    out = []
    for index, clause in enumerate(clauses):
        m = _COPULA_RE.match(clause.text)
        if m is None:
            continue
        subject = " ".join(stems(re.sub(rf"^{DETERMINER}\s+", "", m.group("subject"), flags=re.I)))
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
                out.append(Match(fact, index, True, value))
            elif fact.key == "age" and age:  # "Saoirse's ten now"
                out.append(Match(fact, index, True, number=number_in(age.group(1))))
    return out


def generic_matches(
    known: Sequence[Known], clauses: list[Clause], already: list[Match]
) -> list[Match]:
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
            said = {GENERIC_ALIASES.get(w, w) for w in clause.words}
            for word in said & GENERIC:
                having = [k for k in facts_of if word in stems(k.key)]
                if len(having) == 1 and id(having[0]) not in taken:
                    out.append(Match(having[0], index, True))
    return out


def affiliations(
    sentence: str, known: Sequence[Known], clauses: list[Clause], matches: list[Match]
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


def most_specific(matches: list[Match], said: set[str]) -> list[Match]:
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


def key_match(clauses: list[Clause], key: str) -> list[tuple[int, bool]]:
    """Where the sentence names the key: each clause holding its head word (its last specific
    word, or a paraphrase), with whether a paraphrase was needed; empty if the sentence does not
    name it. The key's other words may stand in any clause of the sentence ("Atlas is due
    Friday, and the demo is Tuesday"), and a key of three or more may miss one that is not its
    head ("your 10K best" for `10K personal best`)."""
    words = [w for w in key.split() if w not in lexicon.STOP_WORDS]
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
        and after not in lexicon.STOP_WORDS
        and after not in LINKING
        and after not in key
        and after not in GENERIC
        and not after.endswith(("ed", "ing"))
        and after not in _VERBS_AFTER
    )


def key_head(key: str) -> str | None:
    """The last specific word of a key of two or more ("orion deadline" -> "deadline")."""
    specific = specific_words(key)
    return stem(specific[-1]) if len(specific) >= 2 else None


def head_match(clauses: list[Clause], key: str, heads: Counter[str]) -> list[tuple[int, bool]]:
    """ "The deadline is Friday" for the memory's only deadline, kept as `orion deadline`: the
    key's head alone names it when no other key has that head."""
    head = key_head(key)
    if head is None or heads[head] > 1 or head in _PARAPHRASES:
        return []
    said = {w for c in clauses for w in c.words}
    owners = {stem(w) for w in key.split() if w.endswith(("'s", "’s"))} - _OWNERS
    if owners - said:
        return []  # `lena's birthday` is not "your birthday": its owner must be named
    return [
        (i, True) for i, _ in _places(clauses, head, key=[stem(w) for w in specific_words(key)])
    ]
