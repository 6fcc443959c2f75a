"""What "this X" or "that X" in a turn stands for, when the turn or the one before names it once.

"I got a new guitar last week. This guitar sounds amazing!" read alone says "This guitar ...":
which guitar? The speaker named it a sentence before, so the line says "The new guitar sounds
amazing". Only a referent the listener cannot mistake is put in: the same noun, named exactly
once with "a", "an", "another", "the", "my" or "our" in the speaker's earlier sentences of the
turn or in their own turn before the question this one answers (answering.own_before), or with
"a", "an" or "the" in the other speaker's turn just before (their "my X" is theirs, their "your
X" the speaker's: answering.py says whose); or, for a titled work ("this book", "that film"),
the one title in quotes there. Two candidates, or a "this X" there too, and the
sentence stays as it was. Also the clauses a turn offers as its statements (observe.py picks
one).

"It" in a reply is the thing the other speaker's question asked about as "your X" ("So, what
about your new script?" "I've been networking non-stop for it" → "for my new script"), when the
question asks about exactly one such thing: the question names the topic a listener has in mind.
Only an "it" the sentence itself gives nothing to stand for (leaning.py), or one left at the end
after a preposition, is put. Likewise a work read, watched or played as "it", "this one" or "that
one", or "a copy" of nothing said, is the one title in quotes the turn or the one before names
("Have you seen "Arrival"?" "Yes! I even bought a copy" → "a copy of "Arrival""). Pure text: no
I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from brainiac.language import clauses, extract, hollow, leaning
from brainiac.language.lexicon import word_set

# "this X", "that delicious X": the pointer, one describing word, the noun.
# "this X", "that delicious X": the pointer, up to two describing words, the noun, which ends
# the phrase (a mark, a preposition, a verb or a pronoun follows: "this stained glass window to
# remind" is no "this stained glass").
_THIS_RE = re.compile(
    r"(?P<pre>\b(?:of|on|for|about|with|at|in|from|by|to)\s+)?\b(?P<det>[Tt]his|that)\s+(?P<adj>(?:[a-z-]+\s+){0,2}?)(?P<noun>[a-z]{3,})\b(?!['-])"
    r"(?=\s*(?:[,.!;:?)-]|$)|\s+(?:is|was|are|were|has|had|to|for|with|from|of|in|on|at|and|"
    r"but|so|that|which|because|since|when|always|really|I|we|you|it|last|yesterday|today|"
    r"twice|again|every|too|now)\b)"
)
# What is no thing after "this" or "that": a time, a way, a word of degree, a verb.
_NO_THING = word_set(
    """
    day days week weekend month year time morning night evening moment way much many kind sort
    one ones is was are were has had have feels made makes means gives helps looks
    """
)
# Works that have titles: "this book" is the one quoted title named before it.
# A describing word before a noun: no preposition nor joining word ("a piece of cake" is no
# "piece cake").
_WORD = r"(?:(?!(?:of|for|to|in|on|and|or|with|at|from|by)\b)[a-z-]+\s+)"
_TITLED = word_set("book novel film movie show series trilogy song album game play poem story")
_TITLE_RE = re.compile(r"[\"“]([^\"“”]{2,60})[\"”]")


def candidates(text: str, previous: str | None, earlier: str | None = None) -> Iterator[str]:
    """The clauses of `text` that may be its statement, each with "this X" put as what it
    stands for; a sentence that holds a resolve not to give up offers none (hollow.py).
    `earlier`: the speaker's own turn before `previous`, read as their words before `text`."""
    before = earlier or ""
    for sentence in extract.sentences(text):
        if not hollow.said_back(sentence):
            for clause in clauses.clauses(sentence):
                said = named(clause, before, previous or "")
                yield asked(titled(said, before, previous or ""), previous or "")
        before += " " + sentence


def named(s: str, own: str, other: str) -> str:
    """`s` with its "this X" or "that X" put as the one X named in `own` (the speaker's words
    before it) or `other` (the other speaker's turn before), when exactly one is."""

    def put(m: re.Match[str]) -> str:
        pre, det, adj, noun = m.group("pre") or "", m.group("det"), m.group("adj"), m.group("noun")
        if {noun, *adj.lower().split()} & _NO_THING or (det == "that" and not pre):
            return m.group()  # "I'm thinking that counseling is ...": "that" opens a clause
        pointed = rf"\b(?:this|that|these|those|your)\s+(?:[\w'-]+\s+)?{noun}\b"
        if re.search(pointed, own + " " + other, re.IGNORECASE):
            return m.group()  # pointed at there too, or the listener's: not named once
        found = {
            f.group(0).lower()
            for text, dets in ((own, "a|an|another|the|my|our"), (other, "a|an|the"))
            for f in re.finditer(rf"\b(?:{dets})\s+{_WORD}{{0,2}}?{noun}\b(?![\w'-])", text, re.I)
        }
        titles = set(_TITLE_RE.findall(own + " " + other)) if noun in _TITLED else set()
        if len(found) + len(titles) != 1:
            return m.group()
        if titles:
            said = f'the {noun} "{titles.pop()}"'
        else:
            head = found.pop().split()
            first = head[0] if head[0] in ("my", "our") else "the"
            said = " ".join([first, *(head[1:-1] or adj.split()), noun])
        return pre + (said[0].upper() + said[1:] if m.start() == 0 else said)

    return _THIS_RE.sub(put, s)


# A question about one thing of the listener's: "what about your script?", "how's your new
# house coming along?", "any news on your book?". The words after "your" up to a word that ends
# the noun phrase are the thing.
_ASKED_RE = re.compile(
    r"\b(?:what about|how(?:'s|\s+is|\s+was|\s+are|\s+were|\s+did|\s+does)|"
    r"any (?:news|updates?|progress|luck) (?:on|with|about)|what's (?:new|up|happening) with)"
    r"\s+your\s+(?P<thing>(?:(?!(?:now|lately|going|coming|doing|so|been|for|to|with|at|in|on|of|"
    r"and|or|is|was|are|these|days)\b)[a-z'-]+\s*){1,3}"
    r"(?-i:(?:(?:to|in|at|from)\s+[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*)?))[^?.!]*\?",
    re.IGNORECASE,
)
# "It" at the end after a preposition: "networking non-stop for it", "I put a lot into it".
_END_IT_RE = re.compile(r"\b(?:for|on|into|with|about|at|to|from)\s+(?P<it>it)\W*$", re.I)


def asked(s: str, other: str) -> str:
    """`s` with its "it" put as the one thing the other speaker's question (in `other`, the
    turn before) asked about as "your X": "my X". `s` as it is when the question asks about no
    such thing, or about two, or when "it" stands for something the sentence names."""
    things = {" ".join(m.group("thing").split()) for m in _ASKED_RE.finditer(other)}
    if len(things) != 1 or len(re.findall(r"\byour\b", other, re.IGNORECASE)) != 1:
        return s  # "How was your trip? And your house?": which one "it" is, is not clear
    at = leaning.leaning(s)
    end = _END_IT_RE.search(s)
    if at is not None and re.match(r"it\b", s[at:]):
        start = at
    elif end is not None:
        start = end.start("it")
    else:
        return s
    return f"{s[:start]}my {things.pop()}{s[start + 2 :]}"


# A work pointed at by a pronoun: "I've been wanting to play this one", "I watched it twice",
# "I even got a physical copy".
_WORK_IT_RE = re.compile(
    r"\b(?P<verb>(?:read|reading|reads|watch|watched|watching|watches|seen|saw|see|play|played|"
    r"playing|plays|finish|finished|finishing|loved|love|enjoyed|enjoy|rewatched|rewatch|"
    r"listened to|listen to|recommend|recommended)(?:\s+(?:it|this one|that one)))\b"
    r"|\b(?P<copy>an?\s+(?:[a-z]+\s+)?copy)\b(?!\s+of\b)",
    re.IGNORECASE,
)


def titled(s: str, own: str, other: str) -> str:
    """`s` with a work it points at ("play this one", "watched it", "a physical copy") put as
    the one title in quotes in `own` (the speaker's words before it) or `other` (the turn
    before); `s` as it is with no title there, or two."""
    titles = set(_TITLE_RE.findall(own + " " + other))
    m = _WORK_IT_RE.search(s)
    if m is None or len(titles) != 1:
        return s
    title = f'"{titles.pop().strip()}"'
    if m.group("copy"):
        return f"{s[: m.end()]} of {title}{s[m.end() :]}"
    at = leaning.leaning(s)
    one = re.search(r"\b(?:this|that) one$", m.group("verb"), re.IGNORECASE) is not None
    if not one and (at is None or not m.start() <= at < m.end()):
        return s  # "I got a new puppy and love it": "it" is what the sentence names; "this
        # one" after a work's verb is a work, never the thing the sentence named before it
    verb = re.sub(r"\s+(?:it|this one|that one)$", "", m.group("verb"), flags=re.IGNORECASE)
    return f"{s[: m.start()]}{verb} {title}{s[m.end() :]}"
