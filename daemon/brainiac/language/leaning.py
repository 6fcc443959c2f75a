"""Whether a sentence leans on what was said before it: a pronoun or a demonstrative with nothing
in the sentence it could stand for ("I've had them for 3 years": what is "them"?). Such a
sentence, read alone as an observation is, says nothing; observe.py keeps none.

What a pronoun may stand for is looked for before it in the same sentence, by its kind: "he" and
"she" a name or a word for a person or a pet, "they" a plural or a group, "it" a noun after a
determiner, a name, a plural or a gerund. "It" that stands for no thing ("it's hard to switch
off", "we made it to the top") leans on nothing; "this" before a noun introduces it ("I adopted
this cute pup"), while "that", "these" and "those" before one point at something shown or said
before ("that place", "those topics"), as does "like this". Parts of a thing listed and judged
with the thing never named ("The plot and the music were amazing": of which film?) lean too.
Pure text: no I/O.
"""

from __future__ import annotations

import re

from brainiac.language.lexicon import STOP_WORDS, word_set

# Who or what a pronoun stands for: "it", "they", "them", "he", "her" and the like, "this" and
# "that" alone ("dreaming of this", "sad about that"), "these" and "those" before a noun ("those
# topics"; "these days" is a time), "something similar", "the same".
_REFERENT_RE = re.compile(
    r"\b(?:(?P<it>it)|its|(?P<they>they|them|their|theirs)|(?P<person>he|him|his|she|her|hers)|"
    r"(?P<this>this)|(?<=\s)(?:about|of|with|into|for|from|like|by|on|to|in|at) (?P<that>that)|"
    r"(?<=\s)(?:when|after|before|since|because|and|but|how) that(?=\s+(?:was|is|happened|made|"
    r"makes|means|meant|felt|feels|'s)\b)|"
    r"(?P<these>these|those)(?!\s+(?:who|days|weeks|months|years|times)\b)|"
    r"something similar|(?:the|that) same|"
    r"another(?=\W*$|\s*[,.!;]|\s+(?:at|in|on|with|from|one)\b)|"
    r"the other(?=\W*$|\s*[,.!;]|\s+(?:is|was|one|and)\b)|"
    r"(?<=\s)one(?=\W*$|\s*[,.!;']|\s+(?:with|for|that|which|called|and|but|so|at|in)\b)|"
    r"(?<=\s)(?:a few|some|a couple|any)(?: more)?"
    r"(?=\W*$|\s*[,.!;]|\s+(?:to|for|that|which|last|yesterday|today|this|ago)\b))"
    r"\b(?P<after>\W*[\w']*)",
    re.IGNORECASE,
)
# "It" that stands for no thing: "it's hard to switch off", "it was cool to see", "we made it to
# the top".
# "it's made such an improvement", "it's helped me": "it" has done something, so it is a thing
# ("it's called the X", "it's crowded" are no deed).
_DEED = (
    r"(?:'s|\s+has)\s+(?:really\s+|just\s+|already\s+)?"
    r"(?!(?:been|called|named|located|based|set|supposed|meant|got)\b)(?:\w+ed|made|given|taught|"
    r"brought|become|shown|done|kept|gotten)\s+(?:a|an|such|me|my|us|our|so|all|everything)\b"
)
_DEED_RE = re.compile(_DEED, re.IGNORECASE)
_EMPTY_IT_RE = re.compile(
    r"^(?!(?:'s|\s+is|\s+was)\s+(?:a|an|the|my|our|one)\b)"
    r"(?!" + _DEED + ")"
    r"(?:'s\b|\s+(?:is|was|feels|felt|seems|seemed|takes|took|has|had|really|just)\b)",
    re.IGNORECASE,
)
# Where a subject stands: the start, after punctuation or a conjunction.
_SUBJECT_SLOT_RE = re.compile(
    r"(?:^|[,;:.!-]|\b(?:and|but|so|because|as|since|that|when|if|how|until|while))\s*$",
    re.IGNORECASE,
)
# "We made it to the top"; not "make it through without incident" (through what?).
_MADE_IT_RE = re.compile(
    r"\b(?:make|made|making)\s+it\s+(?:to|through)\b(?!\s+without\b|\W*$)", re.IGNORECASE
)
_ANTECEDENT_RE = re.compile(
    r"\b(?i:a|an|the|my|our|his|her|their|this|that|these|those|some|any|every|each|one|two|"
    r"three|four|five|\d+)\s+(?P<noun>[\w'-]+)"
    r"|(?<=\w\s)[A-Z][a-z]\w*"
    r"|\b(?!(?:is|was|has|does|its|this|us|yes|as|his|hers|theirs|always|sometimes|perhaps|"
    r"thanks|less|unless|across|towards|besides|plus|thus|yours|ours|whereas|lots|tons|loads|"
    r"ways)\b)[a-z]{2,}[a-rt-z]s\b"
)
_FUNCTION = word_set("of to and or but the a an in on at for with from by as is was are were it")
_LIKE_THIS_RE = re.compile(
    r"\blike (?:this|these|those)\b(?!\s+(?:of|one)\b)|\blike that(?=\W*$|\s*[,.!;])", re.I
)
# A gerund names a thing ("I love painting and it calms me"); after "be" it is a verb ("I've
# been working on it").
_GERUND_RE = re.compile(
    r"(?<![\w'])(?!(?:am|is|be|been|being|was|were|are)\b|\w+'(?:m|re|s)\b|\w+ly\b|just\b|"
    r"already\b|still\b)[\w']+\s+[a-z]{2,}ing\b"
)


# What follows "this" standing alone, as an object: a preposition, a joining word, an adverb
# ("include this at the start", "I made this too").
_AFTER_ALONE = word_set(
    """
    at in on for to with from by about into and or but so because when as too again now lately
    already yet anymore before out up today yesterday
    """
)
# What "this" before it makes a pointer, not a noun it introduces: "making this lately".
_NOT_A_NOUN = word_set("one lately now too again recently already yet anymore before more")
# A verb that judges its subject: "this" before it is no noun introduced but what was judged,
# a thing said before ("this seemed like the perfect way to do it").
_JUDGING = word_set("seemed seems felt feels sounded sounds looked looks")
# A noun phrase just before "it" or "they" and the verb a clause about it opens with ("the
# freedom and connection it brings"): what "it" is is not that phrase.
_REDUCED_RE = re.compile(r"\b(?:the|a|an|all the|such)\s+[a-z][\w\s'-]{0,40}?\s*$", re.I)
_GIVES_RE = re.compile(r"\s+(?:brings?|gives?|gave|offers?|provides?|has|had|creates?)\b", re.I)
_OF_RE = re.compile(r"\b(?:a|an|the|my|our|some|any)\s+(?:[\w'-]+\s+){0,3}?of\s*$", re.I)
# Going, how often, with nowhere named: "we go a few times a week", "we don't go often".
_GO_HOW_OFTEN_RE = re.compile(
    r"\b(?:go|goes|went|going)\s+(?:there\s+)?(?=(?:often|much|a lot|regularly|sometimes|"
    r"every|once|twice|a few times|a couple of times|\w+ times|all the time)\b)",
    re.IGNORECASE,
)
# Parts of a thing, listed and judged, with the thing never named: "The world building, battles,
# and storytelling always blow me away", "The plot and the music were amazing" (of which book,
# which film?). With "of ..." the sentence says whose parts they are.
_ASPECTS_RE = re.compile(
    r"^The\s+(?![^.!?]*\bof\b)[a-z -]+(?:,\s*(?:the\s+)?[a-z -]+)*,?\s+and\s+(?:the\s+)?"
    r"[a-z -]+?\s+(?:(?:always|really|totally|just|all|so|truly)\s+)*"
    r"(?:(?:blow|blew|amaze|amazed|impress|impressed|grab|grabbed|hook|hooked|inspire|inspired|"
    r"get|got|move|moved|draw|drew)\s+me\b|(?:are|were)\s+(?:(?:so|just|really|all)\s+)*"
    r"(?:amazing|awesome|incredible|great|stunning|epic|beautiful|fantastic|brilliant|top-notch|"
    r"spot on|on point|mind-blowing)\b)",
)
# A preposition with nothing after it: "I powered through", "so I'm looking forward to".
_STRANDED_RE = re.compile(r"\b(?:through|about|with|for|to|of|into|from)\W*$", re.IGNORECASE)
_WH_RE = re.compile(r"\b(?:what|which|who|whom|where|that)\b", re.IGNORECASE)
# "It" at the end as what one lived through or tried: "a few weren't able to handle it", "I felt
# it", "I'm gonna try it out", or what one's effort went into ("I put a lot of effort into it"):
# a situation, an idea or a work said before, whatever things the sentence names ("friends", "a
# dance class" are no "it" one handles or feels).
_LIVED_IT_RE = re.compile(
    r"\b(?:handle|handled|handling|felt|feel|feeling|(?:deal|dealt|cope|coped)\s+with|"
    r"(?:get|got|gotten)\s+over|try|tried|trying)\s+it(?:\s+out)?\W*$"
    r"|\b(?:put|putting|poured|pouring)\s+(?:[\w']+\s+){1,5}?into\s+it\b",
    re.IGNORECASE,
)


# What says which things "these" or "that" are, after their noun: "these notebooks with my
# early writings", "these figurines I bought yesterday", "that trip to England".
_DEFINED_RE = re.compile(
    r"(?:\s+[\w'-]+){0,2}?\s+(?:with|from|to|called|named)\s+(?:[Mm]y\b|[Oo]ur\b|[A-Z])"
    r"|\s+[\w'-]+\s+(?:I|we)\s+\w+ed\b"
)


def leaning(s: str) -> int | None:
    """Where `s` leans on what was said before it, if it does: a pronoun or demonstrative with
    nothing it could stand for earlier in the sentence ("I've had them for 3 years", "I also use
    it to speak up", "I had to dig deep into those topics"). Read alone, such a line says
    nothing."""
    if _ASPECTS_RE.match(s):
        return 0  # "The world building, battles and storytelling blow me away": of what?
    like = _LIKE_THIS_RE.search(s)
    if like is not None:
        return like.start()  # "a doll like this", "moments like these": what one is shown
    going = _GO_HOW_OFTEN_RE.search(s)
    if going is not None:
        return going.start()  # "We go a few times a week": go where, the turn before said
    lived = _LIVED_IT_RE.search(s)
    if lived is not None:
        return lived.start()  # "a few weren't able to handle it": handle what
    stranded = _STRANDED_RE.search(s)
    if stranded is not None and not _WH_RE.search(s):
        return stranded.start()  # "I powered through": through what
    for m in _REFERENT_RE.finditer(s):
        after = m.group("after")
        word = re.sub(r"^\W+", "", after).lower()
        introduces = word not in STOP_WORDS | _NOT_A_NOUN and not word.endswith("ly")
        if m.group("this") and word in _JUDGING:
            return m.start()  # "and this seemed like the perfect way": what was, said before
        if m.group("this") and introduces and after[:1].isspace():
            continue  # "this" before a noun introduces it: "I adopted this cute pup"
        alone = not word or word in _AFTER_ALONE
        if m.group("this") and alone and not _SUBJECT_SLOT_RE.search(s[: m.start()]):
            return m.start()  # "I decided to include this at the start": "this" alone, as an
            # object, is a thing shown or said before, whatever the sentence names
        if (
            m.group("that")
            and after[:1].isspace()
            and (word in STOP_WORDS or re.fullmatch(r"\w+(?:[^s]s|ed)", word))
        ):
            continue  # "that" before "I", "the", a verb ("a company I like that needs"): which
        if (m.group("that") or m.group("these")) and word and word not in STOP_WORDS:
            if _DEFINED_RE.match(s, m.end()):
                continue  # "these old notebooks with my early writings": said what they are
            return m.start()  # "that place", "those topics": a thing shown or said before
        subject = _SUBJECT_SLOT_RE.search(s[: m.start()])
        if m.group("it") and subject and _EMPTY_IT_RE.match(s[m.end("it") :]):
            continue  # "it's hard to switch off", "it was cool": no thing
        if m.group("it") and _MADE_IT_RE.search(s[: m.start()] + "it" + s[m.end("it") :]):
            continue  # "we made it to the top"
        # "a huge fan of it": the noun "of it" belongs to is not what "it" stands for; nor is
        # the one a clause after it says "it" gives: "I love the freedom it brings"
        before = _OF_RE.sub("", s[: m.start()])
        if m.group("it") or m.group("they"):
            before = _REDUCED_RE.sub("", before) if _GIVES_RE.match(after) else before
        gerund = _GERUND_RE.search(re.sub(r"\S+\s*$", "", before))  # not "keep doing it"
        if gerund is None and m.group("it") and _DEED_RE.match(s, m.end("it")):
            # what has done something may be what one has been doing: "I've been networking
            # and it's gotten me some good stuff"
            gerund = re.search(r"\b[a-z]{3,}ing\b", before)
        if m.group("person"):
            found = _PERSON_RE.search(before) is not None
        elif m.group("they"):
            found = _PLURAL_RE.search(before) is not None
        else:
            found = _antecedent(before) or (gerund is not None and m.group("it") is not None)
        if not found:
            return m.start()
    return None


def _antecedent(before: str) -> bool:
    """Whether `before` names something a pronoun after it may stand for: a noun after a
    determiner ("my turtles", not "some of"), a name, a plural."""
    return any(
        m.group("noun") is None or m.group("noun").lower() not in _FUNCTION
        for m in _ANTECEDENT_RE.finditer(before)
    )


# Who "he" or "she" may be: a name, or a word for a person or a pet.
_PERSON_RE = re.compile(
    r"(?<=\w\s)[A-Z][a-z]+|\b(?i:son|daughter|brother|sister|mom|mother|dad|father|friend|"
    r"husband|wife|kid|child|boy|girl|guy|man|woman|baby|one-year-old|cousin|aunt|uncle|grandma|"
    r"grandpa|grandmother|grandfather|partner|boss|coworker|colleague|neighbor|teacher|mentor|"
    r"dog|cat|pup|puppy|kitten|youngest|oldest|niece|nephew|fiance|fiancé|boyfriend|girlfriend|"
    r"actors?|actress|artist|writer|student|customer|client|volunteer|resident|veteran|player|"
    r"coach|doctor|nurse|lady|ladies|person|someone|somebody)"
    r"\b"
)
# What "they" may be: a plural, a group.
_PLURAL_RE = re.compile(
    r"\b(?!(?:is|was|has|does|its|this|us|yes|as|his|hers|theirs|always|sometimes|perhaps|"
    r"thanks|unless|across|towards|besides|plus|thus|yours|ours|whereas|less)\b)"
    r"[a-z]{2,}[a-rt-z]s\b|\b(?:family|fam|team|group|people|crew|club|class|community|folks|"
    r"kids|children|everyone|everybody|parents|friends)\b",
    re.IGNORECASE,
)
