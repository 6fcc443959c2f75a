"""A reply's line made whole from the question it answers: what the reply leaves unnamed, the
question named.

A reply names its thing by the question before it, and read alone, as an observation is, it
says too little:

- "How'd you come up with these cool designs?" "I got the idea from a fashion mag" → "I got
  the idea for my cool designs from a fashion mag": an idea, ideas or an inspiration with
  nothing it is for is for the one thing the question asked about ("come up with X", "ideas for
  X", "the inspiration behind X"); when the question says "them" or "it" there, the one thing
  its turn called "your X" ("That's a cool way into your characters. Where did you get your
  ideas for them?");
- "What inspired you to go on the hike?" "I wanted to make connections" → "I went on the hike
  because I wanted to make connections": a motive ("I wanted to", "I was hoping to", "I needed
  to") in reply to what made the speaker do something is the motive of that deed, said in the
  past ("What made you decide to run again?" → "I decided to run again because ...");
- "Seven years now, and I've found my muses" to "How long have you been into art?" opens on
  the bare answer: it is said whole ("I've been into art for seven years now, and ...");
- "the X" said bare is the one X the turns before described: "Check this pic from the last
  networking event!" "How was it?" "The event was awesome" → "The networking event was
  awesome" (two Xs described, or none, and it stays);
- a good time had nowhere said ("We had a great time last weekend") was had at the one place
  the question or the speaker's turn before it went to ("Do you take the kids to the park
  often?" → "We had a great time at the park last weekend").

Only a question that names its thing is read: "What gave you the idea for this?" names nothing
a line could say, and the line stays as it was. `earlier`, the speaker's own turn before the
question, is where a thing the question points at ("these designs") was named: a thing the
question names that the speaker named there is theirs. Pure text: no I/O.
"""

from __future__ import annotations

import re

from brainiac.language import answering
from brainiac.language.lexicon import word_set

# An idea or inspiration with nothing it is for: "I got the idea from a fashion mag", "I got
# ideas from everywhere"; not "the idea for this script", "the idea of moving".
_IDEA_RE = re.compile(
    r"\b(?:the|an|my|some|a few|lots of|many|great|new)?\s*(?:ideas?|inspiration)\b"
    r"(?!\s+(?:for|of|behind|about|to|that|on|was|is|came|come|comes|i|we)\b)",
    re.IGNORECASE,
)
# What a question asks the idea for: "come up with these cool designs?", "your ideas for
# them?", "the inspiration behind your painting?", "What inspired you to write that song?".
_IDEA_ASKED_RE = re.compile(
    r"\b(?:(?:come|came|coming)\s+up\s+with|think\s+of|(?:ideas?|inspiration)\s+(?:for|behind)|"
    r"inspired\s+you\s+to\s+(?:create|make|write|paint|draw|design|build|compose)|"
    r"inspired)\s+(?:(?P<det>the|these|those|this|that|your)\s+(?P<thing>(?:[a-z'-]+\s+){0,2}?"
    r"[a-z'-]+)|(?P<pronoun>them|it))\s*\?",
    re.IGNORECASE,
)
# The one thing of the speaker's the other's turn names, for a question's "them" or "it".
_YOUR_RE = re.compile(r"\byour\s+(?P<thing>(?:[a-z-]+\s+)?[a-z-]+?)(?=[\s,.!?;:])", re.I)
# What made the speaker do something: "What inspired you to go on the hike?", "What made you
# decide to run again?", "What got you into running?".
_MOTIVE_ASKED_RE = re.compile(
    r"\b(?:what|who)\s+(?:inspired|made|motivated|led|prompted|drove|pushed|encouraged|got)\s+"
    r"you\s+(?:(?P<into>into)\s+|to\s+)?(?:(?P<decide>decide|choose)\s+to\s+)?"
    r"(?P<deed>[a-z][a-z' -]*?)\s*\?",
    re.IGNORECASE,
)
# A motive, said as the whole line: "I wanted to make connections", "We were hoping to".
_MOTIVE_RE = re.compile(
    r"^(?P<who>I|We)(?:\s+|(?='))(?:(?:just|really|always|also|simply)\s+)*"
    r"(?:wanted|want|needed|hoped|was hoping|were hoping|'m hoping|'re hoping|am hoping|"
    r"was trying|'m trying)\s+to\s",
)
# "the X" with nothing describing it, X a noun: the word after it is no noun's ("the event was",
# "at the park,", "the book got me").
_BARE_THE_RE = re.compile(
    r"\b(?P<the>[Tt]he)\s+(?P<noun>[a-z]{3,})\b(?![\w'-])(?=\s*[,.!;:?)]|\s*$|\s+(?:is|was|are|"
    r"were|has|had|got|gave|made|went|in|on|at|with|for|to|and|but|so|last|yesterday|today)\b)"
)
# A describing word: no preposition, joining word, pronoun or article ("a trip to the lake" is
# no "to the lake").
_WORD = (
    r"(?!(?:of|for|to|in|on|and|or|with|at|from|by|the|a|an|my|your|our|their|his|her|its|"
    r"this|that|very|so|really|such|more|most|other|same|whole|first|last|next|few)\b)[a-z-]+\s+"
)
# Nouns "the" makes no new thing of: a time, a part, a kind.
_NOT_DESCRIBED = word_set(
    """
    time times day days week weekend month year morning night evening moment way end start
    beginning rest most best same other others world lot kind sort thing things stuff idea
    ideas one ones news future past people everyone kids family
    """
)
# A good time had, with nowhere said: not "a blast at the fest", "a great time hiking", "fun
# with my kids", "a great time throwing a party".
_GOOD_TIME_RE = re.compile(
    r"\b(?:had|have|having)\s+(?:a\s+|so\s+much\s+|such\s+a\s+)?(?:(?:great|good|fun|"
    r"awesome|amazing|wonderful|lovely|fantastic)\s+)?(?:time|blast|fun)\b"
    r"(?=\W*$|\s*[,.!;]|\s+(?:last|yesterday|today|this|on\s+\d|together)\b)",
    re.IGNORECASE,
)
# A place gone to or been at: "to the park", "at the café last weekend".
_PLACE_RE = re.compile(
    r"\b(?:at|to)\s+the\s+(?P<place>(?:[a-z'-]+\s+)??[a-zé'-]{3,})"
    r"(?=\s*[,.!?;]|\s*$|\s+(?:last|yesterday|often|much|a lot|more|again|sometimes|every|"
    r"this|with|and|today|on)\b)",
    re.IGNORECASE,
)
# What a deed asked about may not hold: a pointer the line could not say ("to join it").
_POINTERS = word_set("it this that these those them there one here")
_PAST = {
    "be": "",
    "become": "became",
    "begin": "began",
    "build": "built",
    "buy": "bought",
    "choose": "chose",
    "come": "came",
    "do": "did",
    "draw": "drew",
    "drive": "drove",
    "eat": "ate",
    "feel": "felt",
    "find": "found",
    "fly": "flew",
    "get": "got",
    "give": "gave",
    "go": "went",
    "grow": "grew",
    "hang": "hung",
    "have": "had",
    "hold": "held",
    "keep": "kept",
    "leave": "left",
    "make": "made",
    "meet": "met",
    "pay": "paid",
    "put": "put",
    "quit": "quit",
    "read": "read",
    "ride": "rode",
    "run": "ran",
    "see": "saw",
    "sell": "sold",
    "send": "sent",
    "set": "set",
    "sing": "sang",
    "speak": "spoke",
    "spend": "spent",
    "swim": "swam",
    "take": "took",
    "teach": "taught",
    "tell": "told",
    "think": "thought",
    "wear": "wore",
    "win": "won",
    "write": "wrote",
}


def repaired(s: str, previous: str, earlier: str = "") -> str:
    """`s` (a first-person statement of a reply to `previous`, after the speaker's own
    `earlier` turn) with what it leaves unnamed named from them: a bare answer said whole, "the
    X" as described there, the thing an idea was for, the deed a motive was of, the place a good
    time was had. `s` as it is where they name none of these."""
    described = _described(_answer_opened(s, previous), previous, earlier)
    return _where(_motive(_idea(described, previous, earlier), previous), previous, earlier)


def _where(s: str, previous: str, earlier: str) -> str:
    """ "We had a great time last weekend" to "Do you take your kids to the park often?" → "We
    had a great time at the park last weekend": a good time had nowhere said was had at the
    one place the question or the speaker's turn before it went to."""
    time = _GOOD_TIME_RE.search(s)
    if time is None:
        return s
    places = {
        " ".join(m.group("place").lower().split())
        for text in (previous, earlier)
        for m in _PLACE_RE.finditer(text)
        if not set(m.group("place").lower().split()) & _NOT_DESCRIBED
    }
    if len(places) != 1:
        return s
    return f"{s[: time.end()]} at the {places.pop()}{s[time.end() :]}"


def _answer_opened(s: str, previous: str) -> str:
    """ "Seven years now, and I've found my muses" to "How long have you been into art?" → "I've
    been into art for seven years now, and I've found my muses": a line that opens on the bare
    answer says it whole (answering.answered), the rest kept."""
    if re.match(r"(?:I|We)\b", s):
        return s
    head = re.match(r"[^,;:]+", s)
    whole = answering.answered(s, previous)
    if head is None or whole is None:
        return s
    answer = head.group().strip().lower()
    if not whole.lower().endswith(answer):
        return s  # the answer is not the whole opening: "Since I was 17 I've painted"
    return whole + s[head.end() :]


def _described(s: str, previous: str, earlier: str) -> str:
    """ "The event was awesome" after "the last networking event" was named: "the X" said bare
    is the one X the turns before described ("The networking event was awesome")."""

    def put(m: re.Match[str]) -> str:
        noun = m.group("noun")
        if noun.lower() in _NOT_DESCRIBED:
            return m.group()
        found = {
            " ".join(f.group("words").lower().split())
            for text in (earlier, previous)
            for f in re.finditer(
                rf"\b(?:a|an|the|my|our|your|this|that)\s+(?:(?:last|next|first|other)\s+)?"
                rf"(?P<words>(?:{_WORD}){{1,2}}?)"
                rf"{re.escape(noun)}\b(?![\w'-])",
                text,
                re.IGNORECASE,
            )
        }
        if len(found) != 1:
            return m.group()
        return f"{m.group('the')} {found.pop()} {noun}"

    return _BARE_THE_RE.sub(put, s)


def _idea(s: str, previous: str, earlier: str) -> str:
    """ "I got the idea from a fashion mag" to "How'd you come up with these designs?" → "I got
    the idea for my designs from a fashion mag"."""
    idea = _IDEA_RE.search(s)
    if idea is None:
        return s
    m = _asked_once(_IDEA_ASKED_RE, previous)
    if m is None:
        return s
    if m.group("pronoun"):  # "your ideas for them?": the one other thing called "your X"
        yours = {
            " ".join(y.group("thing").lower().split())
            for y in _YOUR_RE.finditer(previous)
            if not re.match(r"(?:ideas?|inspiration)\b", y.group("thing"), re.I)
        }
        if len(yours) != 1:
            return s
        thing = f"my {yours.pop()}"
    else:
        det, words = m.group("det").lower(), " ".join(m.group("thing").split())
        if set(words.lower().split()) & _POINTERS:
            return s
        # "your X" is the speaker's, and "these X" when X is what the speaker named before
        noun = words.split()[-1]
        named = re.search(rf"\b{re.escape(noun)}\b", earlier, re.IGNORECASE) is not None
        thing = f"{'my' if det == 'your' or (det != 'the' and named) else 'the'} {words}"
    return f"{s[: idea.end()]} for {thing}{s[idea.end() :]}"


def _motive(s: str, previous: str) -> str:
    """ "I wanted to make connections" to "What inspired you to go on the hike?" → "I went on
    the hike because I wanted to make connections"."""
    said = _MOTIVE_RE.match(s)
    if said is None:
        return s
    m = _asked_once(_MOTIVE_ASKED_RE, previous)
    if m is None:
        return s
    deed = re.sub(r"\byour\b", "my", " ".join(m.group("deed").split()), flags=re.IGNORECASE)
    words = deed.split()
    if not words or len(words) > 6 or {w.lower() for w in words} & (_POINTERS | {"you"}):
        return s
    if m.group("into"):
        did = f"got into {deed}"
    elif m.group("decide"):
        did = f"{_past(m.group('decide').lower())} to {deed}"
    else:
        verb = _past(words[0].lower())
        if not verb:
            return s
        did = " ".join([verb, *words[1:]])
    motive = "we" + s[2:] if said.group("who") == "We" else s
    return f"{said.group('who')} {did} because {motive}"


def _past(verb: str) -> str:
    """The past of a verb's plain form ("go" → "went", "plan" → "planned"); "" for "be" (a
    motive of being something is no deed)."""
    if verb in _PAST:
        return _PAST[verb]
    if verb.endswith("e"):
        return verb + "d"
    if re.search(r"[^aeiou]y$", verb):
        return verb[:-1] + "ied"
    if re.fullmatch(r"[^aeiou]*[aeiou][bdgmnprt]", verb):  # "plan", "stop": one short vowel
        return verb + verb[-1] + "ed"
    return verb + "ed"


def _asked_once(pattern: re.Pattern[str], previous: str) -> re.Match[str] | None:
    """The one place the questions of `previous` match `pattern`; None for none or several (what
    was asked about is then not one thing)."""
    asked = [m for q in answering.questions(previous) for m in pattern.finditer(q)]
    return asked[0] if len(asked) == 1 else None
