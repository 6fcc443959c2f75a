"""Statements that are whole and about the speaker, yet say nothing read alone: what observe.py
keeps no line for, and the frames around a statement that are no part of it.

Hollow: a feeling or a taste whose only thing is one pointed at ("I'll cherish that little
guy", "I'm super keen to spread that intensity", "The colors make me feel calm": shown or said
before); a mood ("I'm feeling a rollercoaster of emotions"); a resolve said back to
encouragement ("I won't quit", "I'm gonna keep grinding and moving ahead"); an act or a time
judged with nothing done ("Being able to show my vision is awesome", "Tomorrow's gonna be an
awesome night"); a thing valued in a word ("Family's super important to me"); leave-taking ("Gotta
go"). One that names
its thing ("I love the Harry Potter books", "my
new studio", "2 years", "last week") or says it plainly ("I love painting") stands alone.

Frames: a report to the listener ("I just wanted to let you know (that) ..."), an order to look
after the statement ("I've done an abstract painting too, take a look!"), a comment on how it
felt ("..., it's such an awesome feeling") and a thing shown that reminds one of a deed ("This
picture reminds me of a road trip we took last year") go; what they frame stays. Pure text: no I/O.
"""

from __future__ import annotations

import re

from brainiac.language.lexicon import word_set

# Words of a feeling, a taste or a judgement.
_EVALUATIVE = word_set(
    """
    love loved loves adore adored enjoy enjoyed enjoys cherish cherished appreciate appreciated
    feel feels felt feeling excited grateful thankful happy glad proud blessed lucky thrilled
    stoked relieved keen calm calming peaceful special important meaningful rewarding fun
    amazing awesome great wonderful beautiful gorgeous incredible fantastic worth nervous
    exciting scary tough hard inspiring inspired motivated determined
    """
)
# What is no noun after "that", "these" or "those": a time ("that day"), a verb or a pronoun
# ("stories that tackle", "furniture that looks great", "that I made").
_NOT_NOUN = (
    r"(?:day|days|week|weeks|weekend|month|months|year|years|time|times|morning|night|evening|"
    r"moment|moments|way|much|many|same|one|of|to|in|on|at|for|with|and|or|is|was|are|were|has|"
    r"had|have|looks?|makes?|made|helps?|helped|gives?|gave|means?|meant|feels?|felt|I|we|you|"
    r"they|he|she|it|my|our)\b"
)
# A thing pointed at: "that intensity", "that little guy", "those colors", a noun phrase that
# ends there ("I realized that self-care is ...", "stories that tackle issues" and "those books
# I read" are no pointer).
_POINTED_RE = re.compile(
    rf"\b(?:that|these|those)\s+(?:(?!{_NOT_NOUN})[a-z-]+\s+)?(?!{_NOT_NOUN})[a-z][a-z-]*"
    r"(?=\W*$|\s*[,.!;]|\s+(?:with|for|too|again|so|and|but|in|at|on|from)\b)",
)
# A feeling or a resolve that ends on a thing pointed at with "this": "I'm stoked to start this
# new chapter", "I'm determined to make this studio work" (which chapter, which studio, the
# turn before said; "I love making this cake with raspberries" says what it is, and "I'm stoked
# about this new script" that there is one).
_THIS_END_RE = re.compile(
    r"(?<!\babout )\bthis\s+(?:[a-z-]+\s+)?[a-z]+(?:\s+(?:work|happen|come true|a success))?\W*$"
)
# "The colors make me feel calm", "This journey has been amazing": what makes one feel, or what
# is judged, is named only by "the" or "this".
_THE_MAKES_RE = re.compile(
    r"^this\s+[a-z]+\s+(?:is|was|has been)\b"
    r"|^the\s+(?:(?!(?:has|have|had|is|was)\b)[\w'-]+\s+){1,2}?(?:make|makes|made)\s+me\s+feel\b",
    re.IGNORECASE,
)
# An act judged, with nothing done: "Being able to show my vision is awesome", "Realizing I can
# be me was the best part", a time judged: "Tomorrow's gonna be an awesome night", a thing
# valued in a word: "Family's super important to me".
_JUDGED_RE = re.compile(
    r"^(?:(?:being|having|seeing|knowing|getting|realizing|looking|feeling)\b.*"
    r"(?:\bis|\bwas|\bhas been|'s)|(?:tomorrow|tonight|today)(?:'s| is)(?: gonna be| going to be)?)"
    r"\s+(?:(?:so|really|just|truly|super|gonna be|going to be)\s+)*(?:an?\s+)?"
    r"(?:awesome|amazing|great|incredible|the best(?: part)?|beyond words|priceless|"
    r"a blessing|wonderful|fun|a mix)\b"
    r"|^[A-Za-z]+(?:'s| is| means)\s+(?:(?:so|super|really|very)\s+)?(?:important|everything|"
    r"the world|a lot)\s+to me\W*$",
    re.IGNORECASE,
)
# A feeling as what a thing or an act does to the speaker, and nothing else: "Being able to make
# a difference brings me joy", "Seeing the impact fills me with hope", "Mental health is
# important to me", "I'm proud of what I achieved" (with a thing of the speaker's named, "my
# daughter's recital", it is news: the caller checks that first).
# Thanks for one's people or one's luck, and nothing else: "I'm so lucky to have such a great
# support system around me", "I'm really grateful to have my family on this journey with me",
# "I'm grateful for the chance to share my story": said back to kind words, not news ("I'm lucky
# to have my husband and kids; they keep me motivated" says more, and stays).
_GRATEFUL_RE = re.compile(
    r"^I(?:'m| am| feel)\s+(?:(?:so|really|very|super|truly|just|also)\s+)*"
    r"(?:lucky|grateful|thankful|blessed)\s+(?:to have|for)\s+(?:(?:such|a|an|my|the|all|these|"
    r"our|great|amazing|awesome|wonderful|supportive|loving|good|solid|caring)\s+)*"
    r"(?:(?:family|friends|support system|support|people|fam|team|community|them|you)\b"
    r"(?:\s+(?:around|in|on|with|by|behind)\b[^,;:.!?]*)?"
    r"|(?:chance|opportunity|opportunities)\b[^,;:.!?]*)\W*$",
    re.IGNORECASE,
)
_FELT_RE = re.compile(
    r"^(?!(?:I|I'm|we|we're)\b)(?:(?!\bme\b)[\w' -]){2,80}?\s+"
    r"(?:brings?|brought|gives?|gave|fills?|filled)\s+me\s+(?:with\s+)?"
    r"(?:(?:so|such|much|a lot of|a sense of|great|real|true|pure|so much)\s+)*"
    r"(?:joy|happiness|hope|peace|comfort|fulfillment|satisfaction)\W*$"
    r"|^(?!(?:I|we|it|this|that)\b)[\w' -]{2,40}?\s+(?:is|are|means|'s)\s+(?:(?:so|super|really|"
    r"very|just)\s+)?(?:important|special|precious|everything|the world|a lot)\s+to me\W*$"
    r"|^I(?:'m| am)\s+(?:(?:so|really|very|super|just)\s+)?proud of what (?:I|we)\s+"
    r"(?:achieved|accomplished|did|have done|'ve done)\W*$"
    # "Seeing how huge the world is made me feel small"
    r"|^(?:seeing|having|knowing|being|watching|hearing|realizing)\b[^,;]*?\s+(?:made|makes)\s+"
    r"me\s+feel\b",
    re.IGNORECASE,
)
# Having someone near, judged to help, whoever they are: "Having my fam around helps a lot".
_HELPS_RE = re.compile(
    r"^(?:having|being|knowing)\b[^,;]*?\s+(?:helps|helped)\s+(?:(?:me\s+)?(?:a lot|so much|"
    r"a ton|loads))?\W*$",
    re.IGNORECASE,
)
# "This design reminds me of ...": what a thing shown means to one; with no name or time in it
# ("This picture reminds me of a road trip we took last year" has one), a reaction to it.
_SHOWN_RE = re.compile(r"^this\s+[a-z]+\s+(?:reminds|means)\b", re.IGNORECASE)
# What names a thing: a name, a number, a time, the speaker's own thing ("my new studio"; not
# "with all my heart", "my best", "my life", said of anything).
_NAMED_RE = re.compile(
    r"(?<=\w\s)(?!I\b)[A-Z][\w'-]+|\d|"
    r"\b(?i:yesterday|today|tonight|tomorrow|weekend|week|month|year|ago|monday|tuesday|"
    r"wednesday|thursday|friday|saturday|sunday)\b|"
    r"\b(?i:my|our)\s+(?!(?:heart|mind|soul|life|best|own|way|time|eyes|head|back|feelings|"
    r"emotions|journey)\b)[\w'-]+"
)
# A mood with no thing in it: "I'm feeling a rollercoaster of emotions", "all the feels", "...,
# I feel so at peace".
_MOOD_RE = re.compile(
    r"^I(?:'m| am| was| felt| feel|'m feeling| was feeling)\s+(?:(?:so|really|just)\s+)?"
    r"(?:a\s+(?:\w+\s+)?(?:mix|rollercoaster|roller coaster|range|whirlwind|flood|wave)\s+of\s+"
    r"(?:emotions|feelings)|all the feels)(?=\W*$|\s*[,.!;])",
    re.IGNORECASE,
)
_AT_PEACE_RE = re.compile(
    r"\bI (?:feel|felt) (?:(?:so|really|truly|totally)\s+)?(?:at peace|at home|alive|free|"
    r"relaxed|calm)\W*$",
    re.IGNORECASE,
)
# What one says back to encouragement or offers: "I won't quit", "I'll keep doing my best", "I'm
# here for you", "I'm gonna keep grinding and moving ahead", "I'm always up for book
# recommendations": a pleasantry, not news.
_PERSEVERE_RE = re.compile(
    r"\b(?:won't|will not|never|not gonna|not going to) (?:quit|give up|stop)\b"
    r"|\bkeep (?:on )?(?:going|pushing|trying|chasing|spreading|doing|at it|it up|working hard|"
    r"plugging|believing|moving|grinding|hustling|growing)\b"
    r"|\bmov(?:e|ing) (?:ahead|forward|on)\W*$"
    # good to come, unnamed: "there's nothing but good stuff coming", "great things ahead"
    r"|\b(?:good|great|better|big|awesome)\s+(?:stuff|things)\s+(?:coming|ahead|to come)\b"
    # a plan with nothing named: "I'm going to do some research"
    r"|\b(?:do|doing|did)\s+(?:some|more|a bit of|a little)\s+(?:research|reading|thinking|"
    r"digging|planning|reflecting)\W*$"
    r"|\bdo (?:my|our) best\b|\bhere (?:for|to help|to lend)\b|\balways (?:up|down) (?:for|to)\b"
    r"|\bremember this\b|\bmake (?:everything|it|things) (?:just )?right\b"
    # a promise said back: "I'll definitely stick up for our community", "I'm living my truth"
    r"|\b(?:will|'ll)\s+(?:definitely|always)\s+(?:stick|stand)\s+up\s+for\b"
    r"|^I(?:'m| am)\s+(?:\w+\s+)?living (?:my|our) (?:true self|best life|truth)\W*$"
    # a future "keep doing" is a resolve, whatever is kept at: "I'll definitely keep pursuing my
    # passion for writing" (said now, "I keep getting rejected", is news)
    r"|\b(?:will|'ll|gonna|going to)\s+(?:\w+ly\s+)?(?:just\s+)?keep\s+(?:on\s+)?\w+ing\b"
    # a wish with no thing in it: "I'm gonna make my dreams come true", "I'll start thinking
    # about what we can do" (what is to be done is not said)
    r"|\b(?:make|making|made)\s+(?:my|our)\s+dreams?\s+(?:\w+\s+)?come\s+true\W*$"
    r"|\b(?:will|'ll|gonna|going to)\s+(?:\w+ly\s+)?(?:start\s+)?(?:think(?:ing)?\s+about|"
    r"figur(?:e|ing)\s+out|look(?:ing)?\s+into)\s+(?:what|how)\s+(?:we|I)\s+(?:can|could|"
    r"should|will|'ll)\s+do\W*$",
    re.IGNORECASE,
)
# A resolve in a sentence: "I'm not gonna give up on my dreams - my dance studio and biz
# ventures need the hard work I'm putting in": the clause beside it is the resolve's reason,
# said back to encouragement, not news (observe.py skips every clause of such a sentence).
_GIVE_UP_RE = re.compile(
    r"\b(?:won't|will not|never|not gonna|not going to)\s+(?:ever\s+)?(?:quit|give up|stop)\b"
    r"(?!.*\b(?:yesterday|last|ago|\d)\b)",
    re.IGNORECASE,
)
# A statement of people at large, in the present: an act as its subject said to be how one
# grows ("Pushing boundaries is how we grow"), or things with no owner doing something now
# ("Worries and stress seem to vanish, ..."): no one's news. Its own clause must be free of
# the speaker ("People seem to really like my designs" is the speaker's).
_AT_LARGE_RE = re.compile(
    r"^[a-z]+ing\s+(?:[\w'-]+\s+){0,4}?(?:is|are)\s+(?:how|what|why)\s+(?:we|you|one|people)\b"
    r"|^(?!(?:this|that|these|those|the|my|our|your|his|her|their|some|any|all|people|"
    r"everyone|everybody|things|kids|we|they)\b)[a-z]+s(?:(?:,\s*|\s+and\s+)[a-z]+){0,3}\s+"
    r"(?:seem|tend|appear)s?\s+to\s+(?![^,;]*\b(?:I|me|my|I'm|I've|we|us|our)\b)[^,;]*(?:[,;]|$)",
    re.IGNORECASE,
)
# "I've been working on a project lately": which project is not said.
_SOME_PROJECT_RE = re.compile(
    r"\bworking\s+on\s+(?:a|an|some|this|that|the|my)\s+(?:(?:new|cool|big|fun|little|side|"
    r"secret|few|couple of)\s+)?(?:project|projects|thing|things|something|stuff)\b"
    r"(?:\s+(?:lately|recently|right now|these days|at the moment|for a while))?\W*$",
    re.IGNORECASE,
)
# Leave-taking: "Gotta go walk the dog", "I have to run", "I'm off to bake some cakes": going
# now, no plan (a time says it is one: "I have to go to Spain next week", "I'm off to Rome next
# month" is said as the plan it is, observe.py).
_SIGN_OFF_RE = re.compile(
    r"^(?:(?:I\s+)?(?:gotta|got to|have to|need to|must)\s+(?:go|run|head out|bounce)|"
    r"I(?:'m| am)\s+off\s+to)\b"
    r"(?!.*\b(?:tomorrow|tonight|next|week|weekend|month|year|monday|tuesday|wednesday|thursday|"
    r"friday|saturday|sunday|\d)\b)",
    re.IGNORECASE,
)
# A report to the listener around the statement: "I just wanted to let you know (that) ...".
_TOLD_RE = re.compile(
    r"^(?:I\s+)?(?:just\s+)?(?:wanted|want|had|have|got)\s+to\s+(?:let you know|tell (?:you|ya)|"
    r"share with you)\s+(?:that\s+)?(?=\w)",
    re.IGNORECASE,
)
# An order to look or a comment on how it felt, after the statement: "I've done an abstract
# painting too, take a look!", "My hard work is paying off, it's such an awesome feeling!"; an
# order to look at something, joined on ("I've sunk tons of time into the studio, and look at
# my students"), is a clause said to the listener: the statement ends before it, as it does
# before an aside to them at its end (", btw").
_TAIL_RE = re.compile(
    r",\s*(?:take a look|check it out|have a look|(?:it's|it is|it was|that's|what an?)\s+"
    r"(?:(?:such|so|really|truly|an?)\s+)*(?:[\w-]+\s+)?(?:feeling|experience|relief))\W*$"
    r"|,\s*(?:and|so|but)\s+(?:just\s+)?(?:look at|check out|guess what|imagine)\b.*$"
    r"|,\s*(?:btw|by the way|lol|haha+|tbh)\W*$",
    re.IGNORECASE,
)


# A thing shown that reminds one of a deed of one's own: "This picture reminds me of a road trip
# we took last year; ..." is the deed, "we took a road trip last year".
_REMINDS_RE = re.compile(
    r"^(?:this|that|the|it)\s+(?:[a-z-]+\s+)?remind(?:s|ed)\s+me\s+of\s+(?P<det>a|an|the|my|our)"
    r"\s+(?P<thing>(?:[\w'-]+\s+){0,3}?[\w'-]+)\s+(?:that\s+)?(?P<who>I|we)\s+(?P<verb>[a-z]+ed|"
    r"took|had|went|made|did|saw|spent|built|wrote|ran|won|met|got)\b(?P<rest>[^,;:.!?]*)",
    re.IGNORECASE,
)


def hollow(s: str) -> bool:
    """Whether the statement `s` (first person, whole) says nothing read alone: a mood, a
    resolve said back, or a feeling whose thing is only pointed at (a thing after "that",
    "these" or "those" that ends there, or "the X makes me feel"), with no name, number, time
    or thing of the speaker's in it."""
    if _MOOD_RE.match(s) or _AT_PEACE_RE.search(s) or _JUDGED_RE.match(s) or _HELPS_RE.match(s):
        return True
    if _PERSEVERE_RE.search(s) or _SIGN_OFF_RE.match(s) or _GRATEFUL_RE.match(s):
        return True
    if _NAMED_RE.search(s):
        return False
    if _FELT_RE.match(s):
        return True  # "Seeing the impact fills me with joy": how one feels, of nothing named
    if _SHOWN_RE.match(s):
        return True  # "This design reminds me of the grit it takes": a thing shown
    words = set(re.findall(r"[a-z'-]+", s.replace("’", "'").lower()))
    if not words & _EVALUATIVE:
        return False
    pointed = _POINTED_RE.search(s) or _THIS_END_RE.search(s)
    return pointed is not None or _THE_MAKES_RE.match(s) is not None


def weak(s: str) -> bool:
    """Whether the statement `s` says little read alone, so that it is the turn's line only when
    the turn gives no other: a statement of people at large ("Pushing boundaries is how we
    grow", "Worries and stress seem to vanish") or a project never named ("I've been working on
    a project lately"). Annotators note such turns when nothing else is said in them."""
    return _AT_LARGE_RE.match(s) is not None or _SOME_PROJECT_RE.search(s) is not None


def said_back(sentence: str) -> bool:
    """Whether `sentence` holds a resolve not to give up, so that none of its clauses is news:
    "I'm not gonna give up on my dreams - my studio needs the hard work I'm putting in"."""
    return _GIVE_UP_RE.search(sentence) is not None


# Things shown, named by a deed of the speaker's: "These figurines I bought yesterday remind me
# of family love", "Check out these kids I met at the shelter!" say "I bought some figurines
# yesterday", "I met some kids at the shelter"; what the things do after it goes.
_SHOWN_DEED_RE = re.compile(
    r"^(?:(?:check out|look at|here are|meet)\s+)?(?P<det>these|those|this|"
    r"(?:it's|it is|that's|this is)\s+(?:a|an))\s+"
    r"(?P<thing>(?:[\w'-]+\s+){0,2}?[\w'-]+)\s+(?:that\s+)?(?P<who>I|we)\s+"
    r"(?P<verb>[a-z]+ed|bought|made|met|took|got|found|saw|built|drew|wrote|won|did|"
    r"go to|visit|use)\b"
    r"(?P<rest>(?:\s+(?!(?:remind|reminds|reminded|is|are|was|were|make|makes|made|mean|means|"
    r"look|looks|have|has|bring|brings|and)\b)[\w'-]+)*)",
    re.IGNORECASE,
)


def unframed(s: str) -> str:
    """`s` without a report to the listener around it or an order to look after it."""
    reminds = _REMINDS_RE.match(s)
    if reminds is not None:
        det, thing, who, verb, rest = reminds.group("det", "thing", "who", "verb", "rest")
        det = "a" if det.lower() == "the" else det  # "the film camera I had": one, read alone
        s = f"{who} {verb} {det} {thing}{rest}"
    shown = _SHOWN_DEED_RE.match(s)
    if shown is not None:
        det, thing, who, verb, rest = shown.group("det", "thing", "who", "verb", "rest")
        # one shown, read alone, is "a" one: "it's a studio I go to" is "I go to a studio"
        det = det.split()[-1] if " " in det else "a" if det.lower() == "this" else "some"
        s = f"{who} {verb} {det} {thing}{rest}"
    return _TOLD_RE.sub("", _TAIL_RE.sub("", s))
