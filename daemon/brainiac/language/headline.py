"""What a group of events is about, said as what happened: a note's title and its summary lines.

    Caroline: "I went to a LGBTQ support group yesterday and it was so powerful."
    → title "Caroline went to a LGBTQ support group", not the words said most ("Support and
      stories"); its summary the observations that say the most, not "Can't wait to catch up."

A title is the event the group turns on: a speaker's own news ("I joined ...", "my son got into
an accident", "I got mentored by ..."), in the third person, cut to its clause (what follows
"and", "but", a comma is another thought) and without its time words (the note's date says
when). Of the candidates, the one the rest of the group talks about wins (its words come back in
other turns), then news told early (a chat opens with its news) and with a time ("last week").
Without a clause of something done, the observation that says the most stands in; without
observations, the group's key phrases (topics.title).

One concept: choosing, offline, the statement that says what a group of events is about. The
optional model's title replaces `title_of` at its one call site (plan.py); nothing else here
needs a model.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from brainiac.formats import events as ev
from brainiac.language import extract, observe, third_person, topics
from brainiac.language.lexicon import STOP_WORDS, word_set
from brainiac.language.life_facts import NOBODY_ROLES, USER_ROLES

# Verbs of something done or undergone: a title names an act, not a taste ("I love dance").
_DONE = (
    "went|got|won|lost|took|made|started|began|joined|adopted|bought|met|gave|ran|left|moved|"
    "found|built|wrote|sold|signed|opened|launched|finished|graduated|married|passed|broke|"
    "became|held|hosted|threw|organized|organised|volunteered|painted|visited|traveled|"
    "travelled|celebrated|received|attended|set up|quit|completed|published|released|created|"
    "landed|earned|competed|performed|taught|decided|applied|welcomed|rescued|named|raised|"
    "donated|watched|baked|cooked|returned|planted|fixed|closed|shut down|enrolled|hired|"
    "retired|failed|camped|hiked|surfed|picked up|crashed|recovered|tried|saw|read|learned|"
    "spent|had to \\w+|ran into|got \\w+ed|"
    "(?:have|has) (?:started|joined|finished|signed|launched|opened|won|made|"
    "adopted|decided)|am (?:now|officially)"
)
_SUBJECT = (
    r"I|[Ww]e|(?:[Mm]y|[Oo]ur) (?:[a-z]\w* )?"
    r"(?!(?:has|have|had|is|was|were|will|would)\b)[a-z]\w*"  # "my son", "my best friend"
)
_ADVERB = r"just|recently|finally|also|even|actually|officially|now"
_DONE_RE = re.compile(
    rf"(?<![\w'])(?P<subject>{_SUBJECT})(?:\s+(?:{_ADVERB}))*\s+(?:{_DONE})\b(?!')"
)
# Contractions spelt out, so "I'm now part of" reads as "I am now".
_CONTRACTION_RE = re.compile(r"\b(I|[Ww]e)'(m|ve|re)\b")
_SPELT = {"m": "am", "ve": "have", "re": "are"}
# What ends the clause of the act: another thought begins.
_CLAUSE_END_RE = re.compile(
    r"\s*(?:[,;:!?()]|\s[-–—]\s|\.(?:\s|$)|\s(?:and(?! (?:others|family)\b)|but|so|because|"
    r"cause|cuz|which|who|while|when|where|since|as|though|although|until|after|before|than|"
    r"to help|to see)\s)"
)
# Times a title leaves to the note's date.
_TIME_RE = re.compile(
    r"\s*\b(?:yesterday|today|tonight|this (?:morning|afternoon|evening|weekend|week|month)|"
    r"last (?:\w+)|(?:a|one|two|three|four|few|couple of|\d+) (?:days?|weeks?|months?|years?) "
    r"ago|(?:just |)recently|the other day|earlier|on \d{4}-\d\d-\d\d|in \d{4}|"
    r"on (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday))\b",
    re.IGNORECASE,
)
_NEWS_RE = re.compile(
    r"\b(?:guess what|big news|you won't believe|news|finally|officially|just)\b", re.I
)
# Words every turn may say: they tie no turn to another.
_COMMON = word_set(
    """
    really great good awesome amazing cool nice thanks time things thing lot way day people
    something everything feel feeling felt love loved like know think make made going gonna
    got get keep new much many also just
    """
)
_LISTENER_RE = re.compile(r"\b(?:you|your|yours|yourself|ya|u)\b", re.I)
# What is not news: a resolve said back to encouragement, a plan ("won't quit", "will keep").
_NOT_NEWS_RE = re.compile(r"\b(?:won't|will|wont|can't|n't|gonna|going to|want|wanna)\b", re.I)
_MAX_WORDS = 10
_LEAD_WORDS = 4
# Words after which a clause starts: "... and I", "freaked when my son", "tell ya I just".
_CLAUSE_LEADS = word_set("and but so then that when after because ya you what")
_EARLY = 4  # the first turns of a group, where its news is told
# A short lead that is a noun phrase ("This book I read last year reminds me ...", "the trip we
# took") is what the clause after it qualifies: its act is not the news. Unless it is a time
# ("This morning I went", "The other day we hiked").
_NOUN_LEAD_RE = re.compile(r"(?i)^(?:this|that|these|those|the|a|an|my|our|his|her|their)\s")
_TIME_NOUNS = word_set(
    "morning afternoon evening night weekend week month year summer winter spring fall autumn "
    "day days weeks months years time"
)


@dataclass(frozen=True)
class _Candidate:
    text: str  # third person, its clause only
    index: int  # of its event in the group
    done: bool  # a clause of something done
    timed: bool
    news: bool


def title_of(events: Sequence[ev.Event], observations: Sequence[observe.Observation]) -> str:
    """What happened in `events`, as a short phrase ("Melanie's son got into an accident"),
    from their speakers' own news or, without any, their most telling observation; the key
    phrases of their texts when neither says anything (topics.title); "" for small talk."""
    speakers = {e.role for e in events if e.role}
    ranked = _ranked(events, observations)
    if ranked:
        return ranked[0]
    return topics.title([e.text for e in events], speakers)


def summary_of(
    events: Sequence[ev.Event], observations: Sequence[observe.Observation], n: int
) -> list[str]:
    """Up to `n` of `observations` that say most of what `events` are about (as `title_of`
    ranks them), whole, in the order they were said."""
    index = {e.id: i for i, e in enumerate(events)}
    words, banned = _words_by_event(events)
    scored = [
        (
            _tie_count(_content(o.text, banned), words, index.get(o.source, -1)),
            -index.get(o.source, 0),
            o,
        )
        for o in observations
    ]
    best = sorted(scored, key=lambda s: (-s[0], -s[1]))[:n]
    return [o.text for _s, _i, o in sorted(best, key=lambda s: -s[1])]


def _ranked(events: Sequence[ev.Event], observations: Sequence[observe.Observation]) -> list[str]:
    """The candidates' phrases, best first."""
    index = {e.id: i for i, e in enumerate(events)}
    candidates = [c for i, e in enumerate(events) for c in _acts(e, i)]
    candidates += [
        _Candidate(_clause(o.text), index[o.source], False, False, False)
        for o in observations
        if o.source in index and o.text.startswith(o.owner) and not _NOT_NEWS_RE.search(o.text)
    ]
    words, banned = _words_by_event(events)
    scored: list[tuple[float, int, str]] = []
    for c in candidates:
        if len(c.text.split()) < 3:
            continue
        score = 4.0 * c.done + 2.0 * c.timed + 1.0 * c.news
        score += 2.0 * (c.index < _EARLY) + 1.0 * (c.index < 2 * _EARLY)
        score += min(_tie_count(_content(c.text, banned), words, c.index), 6)
        scored.append((score, c.index, c.text))
    scored.sort(key=lambda s: (-s[0], s[1]))
    return [text for _s, _i, text in scored]


def _acts(event: ev.Event, i: int) -> list[_Candidate]:
    """The clauses of something the speaker did or went through, in the third person."""
    role = " ".join((event.role or "").split())
    if role.casefold() in NOBODY_ROLES:
        return []
    owner = "The user" if not role or role.casefold() in USER_ROLES else role
    out: list[_Candidate] = []
    for sentence in extract.sentences(re.sub(r"\[image: [^\]]*\]", "", event.text)):
        if "?" in sentence or "if " in sentence.lower():
            continue
        sentence = _CONTRACTION_RE.sub(lambda m: f"{m.group(1)} {_SPELT[m.group(2)]}", sentence)
        for m in _DONE_RE.finditer(sentence):
            if not _opens_clause(sentence[: m.start()]):
                continue  # "a trip we took": the act of a relative clause, not the news
            rest = sentence[m.start() :]
            end = _CLAUSE_END_RE.search(rest, m.end() - m.start())
            clause = rest[: end.start()] if end else rest
            if _LISTENER_RE.search(clause):
                continue
            timed = bool(_TIME_RE.search(sentence))
            said = third_person.third_person(clause.strip(), owner)
            out.append(_Candidate(_clause(said), i, True, timed, bool(_NEWS_RE.search(sentence))))
            break
    return out


def _opens_clause(before: str) -> bool:
    """Whether a subject after `before` opens its clause: at the start, after a comma or a
    conjunction, or after a short lead ("Last week", "After finishing my screenplay") that is
    not the noun the clause qualifies ("This book I read")."""
    before = before.strip()
    words = before.split()
    return (
        not before
        or before[-1] in ",;:-–—"
        or words[-1].lower() in _CLAUSE_LEADS
        or (
            len(words) <= _LEAD_WORDS
            and not (_NOUN_LEAD_RE.match(before) and words[-1].lower() not in _TIME_NOUNS)
        )
    )


def _clause(text: str) -> str:
    """`text` cut to its first clause, without time words, at most `_MAX_WORDS` words (ending
    on a content word), capitalised."""
    end = _CLAUSE_END_RE.search(text)
    text = text[: end.start()] if end else text
    text = _TIME_RE.sub("", text)
    text = re.sub(r"\s*\b(?:just|finally|actually|even|now|more)\b(?=\s|$)", "", text)
    text = " ".join(text.split()).rstrip(" .!,;:-–—")
    words = text.split()
    if len(words) > _MAX_WORDS:
        words = words[:_MAX_WORDS]
        while words and words[-1].lower().strip(".,'\"") in STOP_WORDS:
            words.pop()
    text = " ".join(words)
    return text[:1].upper() + text[1:]


def _content(text: str, banned: Collection[str] = ()) -> set[str]:
    """The words of `text` that can tie it to another turn: no stop word, no word every turn
    may say, no speaker's name (said in every other turn to the one spoken to)."""
    words = set(re.findall(r"[a-z][a-z'-]+", text.lower()))
    return {
        w
        for w in words
        if w not in STOP_WORDS and w not in _COMMON and len(w) > 2 and w not in banned
    }


def _words_by_event(events: Sequence[ev.Event]) -> tuple[list[set[str]], frozenset[str]]:
    banned = topics.speaker_words({e.role for e in events if e.role})
    return [_content(e.text, banned) for e in events], banned


def _tie_count(words: Collection[str], by_event: Sequence[set[str]], own: int) -> int:
    """In how many other events of the group a word of `words` comes back: what the group
    talks about, not a word said once."""
    if not words:
        return 0
    return sum(1 for i, other in enumerate(by_event) if i != own and other & set(words))
