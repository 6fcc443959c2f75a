"""What a speaker loves, practises and aims for, and who they say they are: tastes, passions,
favourites, habits on a schedule, firm goals, identity and diet; one rule each, over one clause.

    I love camping / I'm a big fan of jazz   camping: something I love
    I enjoy board games                      board games: something I like
    I'm passionate about chess               chess: my passion
    Hiking in the Alps is my favourite       hiking in the alps: something I love
    Dance is my passion                      dance: my passion
    I run every morning                      running: every morning
    I practise yoga                          yoga: my practice
    I want to become a nurse                 become a nurse: my goal
    my story as a transgender man / I'm vegan  identity: transgender man / diet: vegan

A taste is the speaker's own thing loved, said without a pronoun or a pointer ("I love it", "I
love the colours", "I love your garden" are opinions about something in front of them); a goal
names a step one takes (become, start, open, apply ...), not a mood ("I want to be braver").
Each thing is keyed by itself: one loves several at once, and a second is no change of the first.

`life_facts.statements` runs these rules beside its own (people, pets, work, origin) and says
whose the facts are; the nouns both name are in `life_words`.
"""

from __future__ import annotations

import datetime as dt
import re

from brainiac.language import lexicon as lex
from brainiac.language.life_words import (
    BUSINESSES,
    FRAME,
    GROUPS,
    NOT_PASTIMES,
    is_job,
    unless_negated,
)

# What the speaker loves or likes, as a habit of taste: "I love camping", "I'm a big fan of
# pottery", "I've always had a love for horses", "my love for dance". Keyed by the thing (one
# loves several at once, and a second is no change of the first); the value says how much.
_ADVERBS = r"(?:(?:always|really|truly|absolutely|just|also|totally|so|very|super|still|do)\s+)*"
_LOVE_RE = re.compile(
    rf"\bI\s+{_ADVERBS}(?P<love>love|adore)\s+(?P<a>.+)$"
    rf"|\bI\s+{_ADVERBS}(?P<like>like|enjoy)\s+(?P<b>.+)$"
    rf"|\bI(?:'ve|\s+have)\s+{_ADVERBS}(?P<loved>loved|adored)\s+(?P<c>.+)$"
    rf"|\bI(?:'ve|\s+have)\s+{_ADVERBS}(?P<liked>liked|enjoyed)\s+(?P<d>.+)$"
    rf"|\bI(?:'m|\s+am|'ve\s+{_ADVERBS}been|\s+have\s+{_ADVERBS}been)\s+{_ADVERBS}"
    r"(?:an?\s+(?:(?:big|huge|great|massive)\s+)?fan\s+of|all\s+about|into)\s+(?P<e>.+)$"
    rf"|\bI(?:'ve|\s+have)\s+{_ADVERBS}had\s+a\s+love\s+for\s+(?P<f>.+)$"
    r"|\b[Mm]y\s+(?:(?:deep|huge|great|lifelong)\s+)?love\s+(?:for|of)\s+(?P<g>.+)$"
    # a passion, for a pastime or a cause ("I'm passionate about veterans' rights")
    rf"|\bI(?:'m|\s+am|'ve\s+{_ADVERBS}been|\s+have\s+{_ADVERBS}been)\s+{_ADVERBS}"
    r"passionate\s+about\s+(?P<h>.+)$"
    rf"|\bI(?:'ve|\s+have)\s+{_ADVERBS}had\s+a\s+passion\s+for\s+(?P<i>.+)$"
    r"|\b[Mm]y\s+(?:(?:deep|huge|great|lifelong|true|biggest)\s+)?passion\s+(?:for|of)\s+(?P<j>.+)$"
)
# Where the thing loved ends: a clause, a reason, a time, a place or company ("camping trips
# with my family", "dancing and it's my escape", "fashion so combining them").
_LOVED_STOP_RE = re.compile(
    r"\s*[,;:!?(—–\"]|\s+-\s+|\s+(?:because|'cause|cause|since|so|but|when|while|whenever|as"
    r"|than|too|lately|nowadays|these\s+days|anymore|again|now|every|each|most|more|best|the\s+most|a\s+lot"
    r"|is|are|was|were|has|have|had|makes|made|keeps|brings|gives|helps|means|reminds)\b"
    r"|\s+and\s+(?=(?:I|I'm|I've|it|it's|its|they|they're|that|this|we|he|she|you|my|so|how"
    r"|what|then|also)\b)"
)
# A cut here leaves the thing incomplete: "I love experimenting in the kitchen", "I love
# stories that make me cry": one word before it is not what is loved.
_LOVED_QUALIFIER_RE = re.compile(
    r"\s+(?:with|for|to|at|in|on|from|of|about|by|around|without|that|which|who|where)\b"
)
# ", inviting place": a comma inside a list of adjectives, not the end of the clause.
_LIST_GOES_ON_RE = re.compile(
    r",\s+(?!(?:I|it|it's|they|they're|that|this|which|but|so|and|or|because|'cause|especially"
    r"|plus|the|we|he|she|you|my|as|like|such|even|though|although|what|how|then|too|is)\b)"
    r"[a-z][\w-]*\s+[a-z]"
)
_RELATIVE_RE = re.compile(r"\s+(?:that|which|who|where)\b")
_FINITE_RE = re.compile(r"\s+(?:is|are|was|were|has|have|had)\b")
# Not a thing one loves as a taste: the way something is, a moment, a person or thing pointed at
# ("I love seeing them", "I love spending time with you"). "reading", "watching movies", "making
# pottery" are pastimes: a pronoun after them ("watching them") is rejected on its own.
_NOT_LOVED = lex.word_set(
    """
    being having getting seeing spending doing going trying feeling hearing knowing
    thinking looking talking saying telling hanging
    time times things thing stuff way ways lot idea thought moment moments part bit sound look
    feelings vibe vibes energy life everything something anything people one ones
    """
)
_PLACEHOLDER_WORDS = lex.word_set("time things thing stuff way lot it bit one kind sort")


def _loved_thing(raw: str, subject: bool = False) -> str | None:
    """What is loved, as said: a noun phrase or a gerund phrase of at most five words, none a
    pronoun, a possessive or a verb; the first words before a pronoun when "and" joins them
    ("veterans and their rights": veterans). `subject`: the phrase may be followed by its
    sentence's verb ("sharing my love for baking has been fun"), not otherwise."""
    stop = _LOVED_STOP_RE.search(raw)
    if stop is not None and _LIST_GOES_ON_RE.match(raw, stop.start()):
        return None  # "creating a safe, inviting place": the phrase goes on past the comma
    if stop is not None and not subject and _FINITE_RE.match(raw, stop.start()):
        return None  # "passionate about making sure kids are fed": a clause, not a thing
    thing = (raw[: stop.start()] if stop else raw).strip().rstrip(".,;:!?…'\"")
    qualifier = _LOVED_QUALIFIER_RE.search(thing)
    if qualifier is not None:
        before = thing[: qualifier.start()]
        if _RELATIVE_RE.match(thing, qualifier.start()) or len(before.split()) < 2:
            return None
        thing = thing[: qualifier.start()]
    words = thing.split()
    for i, word in enumerate(words):
        if word.lower() in lex.PRONOUNS or word.lower() in lex.DETERMINERS - {"the"}:
            joined = [j for j in range(1, i) if words[j].lower() == "and"]
            if not joined:
                return None
            words = words[: joined[-1]]
            break
    if not words or len(words) > 5:
        return None
    first, last = words[0].lower(), words[-1].lower()
    if first in lex.BAD_VALUE_START - {"all"} or first in {"the", "a", "an", "to", "every", "both"}:
        return None  # "I love it", "I love the colour", "I love to help": no taste of one's own
    if first == "all" and (len(words) < 2 or words[1].lower() in lex.STOP_WORDS):
        return None  # "I love all the yellow leaves": the ones in front of the speaker
    if first in _NOT_LOVED or last in _NOT_LOVED or last in lex.STOP_WORDS:
        return None
    if any(w.lower() in lex.OPINIONS or w.lower() in lex.JUDGEMENTS for w in words):
        return None
    if any(w.lower() in {"am", "is", "are", "was", "were", "be"} for w in words):
        return None  # "making sure veterans are supported": a clause, not a thing
    if all(w.lower() in _PLACEHOLDER_WORDS or w.lower() in lex.STOP_WORDS for w in words):
        return None
    return " ".join(words)


def loves(s: str, _at: dt.datetime | None) -> list[tuple[str, str]]:
    """`I love camping`, `I'm a big fan of jazz`: the thing, `something I love` (or like);
    `I'm passionate about dance`: `my passion`."""
    m = _LOVE_RE.search(s)
    if m is None:
        return []
    raw = next(g for g in (m.group(x) for x in "abcdefghij") if g is not None)
    if m.group("g") is not None or m.group("j") is not None:
        raw = re.split(r"\s+and\s+", raw, maxsplit=1)[0]  # "my love of gaming and connect(ing)"
    thing = _loved_thing(raw, subject=m.group("g") is not None or m.group("j") is not None)
    if thing is None:
        return []
    if any(m.group(x) is not None for x in "hij"):
        how = "my passion"
    elif m.group("like") or m.group("liked"):
        how = "something I like"
    else:
        how = "something I love"
    return unless_negated([(thing, how)], s, m.start())


# "Painting landscapes is my favourite!": no noun after it, so the thing is keyed by itself; two
# words at least ("Blue is my favourite" says nothing without the sentence before it). "X is my
# top pick" is left out: said of one thing among those just shown (tests/test_readable_notes.py).
_FAVOURITE_ALONE_RE = re.compile(
    r"^(?P<value>(?:[\w'&-]+\s+){0,5}?[\w'&-]+)\s+(?:is|are)\s+(?:definitely\s+|still\s+)?"
    r"my\s+(?:all-time\s+|absolute\s+)?(?:favou?rite|fave)$",
    re.I,
)


def favourite_alone(s: str) -> list[tuple[str, str]]:
    m = _FAVOURITE_ALONE_RE.search(s.strip())
    if m is None:
        return []
    words = m.group("value").split()
    if len(words) < 2:
        return []  # "Blue is my favourite": a capital at the start of a sentence is no name
    lowered = [w.lower() for w in words]
    if lowered[0] in lex.STOP_WORDS or any(w in lex.PRONOUNS or w in FRAME for w in lowered):
        return []  # "This one is my favourite", "The blue one is my fave"
    if words[0].lower() in _NOT_LOVED or words[0].lower() in lex.OPINIONS:
        return []
    return unless_negated([(" ".join(words), "something I love")], s, m.start())


# "Dance is my passion", "Knitting has been my hobby for years": the thing keyed by itself.
_PASSION_IS_RE = re.compile(
    r"^(?P<thing>(?:[\w'&-]+\s+){0,4}?[\w'&-]+)\s+(?:is|are|has\s+been|have\s+been)\s+"
    r"(?:really\s+|always\s+|definitely\s+|still\s+)?my\s+(?:(?:true|biggest|main|real|big|one)\s+)?"
    r"(?P<what>passion|hobby|hobbies)\b"
)


def passion_is(s: str) -> list[tuple[str, str]]:
    m = _PASSION_IS_RE.search(s.strip())
    if m is None:
        return []
    words = m.group("thing").split()
    if any(w.lower() in lex.STOP_WORDS - {"and"} or w.lower() in lex.PRONOUNS for w in words):
        return []  # "That is my passion", "It has been my hobby"
    if words[0].lower() in _NOT_LOVED or words[0].lower() in lex.OPINIONS:
        return []
    what = "hobby" if m.group("what").startswith("hobb") else "passion"
    return unless_negated([(" ".join(words), f"my {what}")], s, m.start())


# A habit: a pastime done on a schedule ("I run every morning", "I go hiking every weekend",
# "I play tennis twice a week") or a discipline one practises ("I practise yoga").
_HABIT_VERBS = lex.word_set(
    """
    run jog swim cycle bike walk hike climb row surf skate ski paint draw sketch write read cook
    bake knit sew crochet garden meditate dance sing train journal pray play practice practise
    """
)
_WEEKDAY_PLURALS = r"(?:mondays|tuesdays|wednesdays|thursdays|fridays|saturdays|sundays|weekends)"
_HABIT_RE = re.compile(
    r"\bI\s+(?:usually\s+|often\s+|always\s+|regularly\s+|still\s+|also\s+|now\s+)?"
    r"(?:go\s+(?P<go>[a-z]+ing)|(?P<verb>[a-z]+)(?:\s+(?P<obj>[a-z]+))?)\s+"
    r"(?P<when>(?i:every\s+(?:single\s+)?(?:day|morning|night|evening|week|weekend|month|monday"
    r"|tuesday|wednesday|thursday|friday|saturday|sunday)|(?:once|twice|three\s+times)\s+a\s+"
    rf"(?:day|week|month)|daily|weekly|on\s+{_WEEKDAY_PLURALS}))\b"
)
_PRACTICE_RE = re.compile(
    r"\bI\s+(?:also\s+|still\s+|regularly\s+)?(?:practice|practise|do)\s+"
    r"(?P<what>yoga|pilates|meditation|karate|judo|taekwondo|aikido|tai\s+chi|kung\s+fu|ballet"
    r"|archery|calligraphy|fencing|boxing|kickboxing|jiu-jitsu|capoeira)\b"
)
_DOUBLED = lex.word_set("run jog swim shop skip")


def _gerund(verb: str) -> str:
    if verb in _DOUBLED:
        return verb + verb[-1] + "ing"
    if verb.endswith("e") and not verb.endswith(("ee", "ye")):
        return verb[:-1] + "ing"
    return verb + "ing"


def habit(s: str, _at: dt.datetime | None) -> list[tuple[str, str]]:
    """`I run every morning`: `running: every morning`; `I practise yoga`: `yoga: my practice`."""
    m = _PRACTICE_RE.search(s)
    if m is not None:
        return unless_negated([(" ".join(m.group("what").split()), "my practice")], s, m.start())
    m = _HABIT_RE.search(s)
    if m is None:
        return []
    when = " ".join(m.group("when").split())
    if m.group("go"):
        what = m.group("go").lower()
        if what in NOT_PASTIMES or what in _NOT_LOVED:
            return []  # "I go shopping" is a pastime; "I go visiting" is not said
        return unless_negated([(f"my {what}", when)], s, m.start())
    verb, obj = m.group("verb").lower(), (m.group("obj") or "").lower()
    if verb not in _HABIT_VERBS:
        return []
    if obj and (obj in lex.STOP_WORDS or obj in lex.PRONOUNS or obj in _PLACEHOLDER_WORDS):
        return []  # "I read it every day", "I walk there every day": what is not said
    if verb in {"play", "practice", "practise"} and not obj:
        return []  # "I play every day": what is not said
    return unless_negated(
        [(f"my {' '.join(filter(None, (_gerund(verb), obj)))}", when)], s, m.start()
    )


# A goal stated firmly, with a verb that names something to do ("I want to become a
# counselor", "my goal is to open a bakery"), not a wish for a mood ("I want to be brave").
_GOAL_RE = re.compile(
    r"\bI(?:\s+(?:really\s+|still\s+|also\s+|eventually\s+)?(?:want|plan|intend|aim)\s+to|\s+wanna"
    r"|(?:'m|\s+am)\s+(?:going\s+to|gonna|planning\s+to))\s+(?P<what>.+)$"
    r"|\b[Mm]y\s+(?:(?:big|main|next|new)\s+)?(?:goal|dream|plan|aim)\s+is\s+to\s+(?P<what2>.+)$"
)
_GOAL_VERBS = lex.word_set(
    """
    become start open apply adopt launch found study learn publish write run move retire
    join build earn finish complete get create give
    """
)
# Verbs that name a step in a life whatever follows ("apply for a grant", "study law"); the
# others only with a life's project after them ("start a podcast", "write a novel", "give kids a
# home"), not an errand ("start dinner", "write an email", "open the window").
_LIFE_STEP_VERBS = lex.word_set("become apply adopt study learn retire publish")
_LIFE_PROJECTS = (
    BUSINESSES
    | GROUPS
    | lex.word_set(
        """
        book novel memoir podcast channel family home degree career charity foundation
        nonprofit non-profit campaign blog brand marathon album website app
        """
    )
)
_GOAL_STOP_RE = re.compile(
    r"\s*[,;:!?(—–\"]|\s+-\s+|\s+(?:because|'cause|cause|so|but|when|while|as\s+soon|once|if"
    r"|and\s+(?=(?:I|it|they|we|he|she|you|my|then|also)\b)|or"
    r"|to\s+(?:help|make|show|share|give|see|support)|for\s+(?:the|a)\s+(?:future|change|while)"
    r"|someday|one\s+day|soon|eventually|asap|too|next|this|last|by|after|before|within"
    r"|in\s+(?:\d|a\s+few|the\s+(?:future|spring|summer|autumn|fall|winter)))\b"
)
# "get" needs what one gets to name a step: a degree, a licence, a job, a place.
_GOAL_GETS = lex.word_set(
    "degree diploma license licence certificate certification job master's masters phd visa"
)


def goal(s: str, _at: dt.datetime | None) -> list[tuple[str, str]]:
    """`I want to become a counselor`: the goal, keyed by itself (one has several at once)."""
    m = _GOAL_RE.search(s)
    if m is None:
        return []
    goal = lex.clip(m.group("what") or m.group("what2"), _GOAL_STOP_RE)
    words = goal.split()
    if len(words) < 2 or len(words) > 7 or words[0].lower() not in _GOAL_VERBS:
        return []
    lowered = [w.lower() for w in words]
    if any(w in lex.PRONOUNS or w in {"my", "our", "your", "his", "their"} for w in lowered[1:]):
        return []  # "start it", "join them", "write my own story": what is meant is not said
    if lowered[0] == "get" and not set(lowered[1:]) & _GOAL_GETS:
        return []  # "get it done", "get stronger"
    if lowered[-1] in lex.STOP_WORDS or lowered[-1] in {"working", "going", "up"}:
        return []
    role = " ".join(w for w in lowered[1:] if w not in {"a", "an"})
    if lowered[0] == "become" and not is_job(role):
        return []  # "become a better person": no role one takes
    moving = lowered[0] == "move" and lowered[1] == "to" and lex.is_name(words[-1])
    project = set(lowered[1:]) & (_LIFE_PROJECTS | _GOAL_GETS)
    if lowered[0] not in _LIFE_STEP_VERBS and not moving and not project:
        return []  # "I'm going to start dinner", "I want to write an email": an errand
    return unless_negated([(goal, "my goal")], s, m.start())


# Who the speaker is, said of themselves: "as a transgender woman", "I'm vegan".
_IDENTITY_NOUNS = lex.word_set("woman man person girl guy")
_IDENTITY_ADJECTIVES = lex.word_set(
    """
    trans transgender cis cisgender nonbinary non-binary gay lesbian bisexual bi queer straight
    intersex genderqueer genderfluid
    """
)
_DIETS = lex.word_set("vegan vegetarian pescatarian")
_IDENTITY_RE = re.compile(
    r"\b(?:[Mm]y\s+(?:own\s+)?[a-z]+\s+as|^As|\bI(?:'m|\s+am)(?:\s+proud\s+to\s+be)?)\s+"
    r"(?:an?\s+)?(?P<what>[a-z-]+(?:\s+[a-z-]+)?)\b(?P<after>.*)$"
)


def identity(s: str, _at: dt.datetime | None) -> list[tuple[str, str]]:
    """`my journey as a transgender woman`, `As a gay man, I ...`, `I'm vegan`."""
    m = _IDENTITY_RE.search(s)
    if m is None:
        return []
    words = m.group("what").lower().split()
    if s.startswith("As") and not re.match(r",\s+I\b", m.group("after")):
        return []  # "As a trans woman, she ...": not the speaker
    if words[0] in _DIETS and (len(words) == 1 or words[1] in {"now"}):
        return unless_negated([("my diet", words[0])], s, m.start())
    if words[0] in _DIETS and len(words) == 2 and words[1] in {"and", "since", "for"}:
        return unless_negated([("my diet", words[0])], s, m.start())
    if len(words) == 2 and words[0] in _IDENTITY_ADJECTIVES and words[1] in _IDENTITY_NOUNS:
        return unless_negated([("my identity", " ".join(words))], s, m.start())
    if words[0] in _IDENTITY_ADJECTIVES and words[0] != "straight":
        return unless_negated([("my identity", words[0])], s, m.start())  # "I'm gay and proud"
    return []
