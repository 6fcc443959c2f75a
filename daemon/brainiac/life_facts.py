"""What a speaker says plainly about their own life: people and pets by name, how many, work,
where they come from, since when they do something; and whose fact it is.

`extract.facts` reads these forms beside its own (`the deadline is Friday`); this module holds
the first-person ones, each a regular expression over one clause:

    we got another cat named Bailey          bailey: my cat
    my daughter Sara's birthday was fun      sara: my daughter
    we have three kids                       kids: three
    we've got a pup and a kitty              pets: a pup and a kitty
    I've been painting for 7 years (2023)    painting: started in 2016
    I started running two years ago (2023)   running: started in 2021
    I'm an assistant manager                 role: assistant manager
    I lost my job as a banker                former job: banker
    my home country, Sweden                  home country: Sweden
    I'm from Sweden                          comes from: Sweden
    I play the clarinet                      clarinet: my instrument
    I'm allergic to cats                     cats: my allergy
    Bach is my favourite composer            favourite composer: Bach
    I joined a chess club last week          chess club: member
    I opened a small bakery                  business: bakery
    I volunteer at the food bank             food bank: my volunteer work
    I love camping / I'm a big fan of jazz   camping: something I love
    I enjoy board games                      board games: something I like
    I'm passionate about chess               chess: my passion
    Hiking in the Alps is my favourite       hiking in the alps: something I love
    I run every morning                      running: every morning
    I practise yoga                          yoga: my practice
    I want to become a nurse                 become a nurse: my goal
    my story as a transgender man / I'm vegan  identity: transgender man / diet: vegan

Precision first, as in `extract`: a rule names its nouns (a family word, a pet, a job's ending),
so "I'm a big fan", "I have a few plans" and "I've been trying for weeks" give nothing. A taste
is the speaker's own thing loved, said without a pronoun or a pointer ("I love it", "I love the
colours", "I love your garden" are opinions about something in front of them); a goal names a
step one takes (become, start, open, apply ...), not a mood ("I want to be braver").

`whose` says whose a first-person fact is when the speaker is not the vault's user: in LoCoMo's
conversation between Caroline and Melanie, Melanie's "we got another cat named Bailey" is
`bailey: Melanie's cat`, and her "I play the clarinet" is `clarinet: Melanie's instrument`. What
the assistant says about itself is no fact about anyone.
"""

from __future__ import annotations

import datetime as dt
import re

from brainiac import lexicon as lex

# Roles whose "I" is the vault's user: a person's own events, typed lines in a note, imports.
USER_ROLES = lex.word_set("user me human you note")
# Roles whose "I" is no one to remember anything about.
NOBODY_ROLES = lex.word_set("assistant ai bot model system tool claude chatgpt gpt")

_RELATIVES = lex.word_set(
    """
    sister brother mother mom mum father dad wife husband partner boyfriend girlfriend son
    daughter friend boss manager colleague cousin aunt uncle grandma grandmother grandpa
    grandfather granddaughter grandson niece nephew roommate flatmate neighbour neighbor fiance
    fiancé fiancee fiancée stepson stepdaughter stepmom stepdad coworker co-worker mentor
    """
)
_PETS = lex.word_set(
    """
    dog cat puppy pup kitten kitty turtle tortoise rabbit bunny hamster parrot bird horse pony
    goldfish fish snake lizard guinea-pig ferret
    """
) | {"guinea pig"}
_PET_PLURALS = frozenset(
    {p + "s" for p in _PETS if not p.endswith(("y", "sh"))}
    | {"puppies", "kitties", "bunnies", "ponies", "fish"}
)
_KIN_PLURALS = lex.word_set(
    """
    kids children sons daughters brothers sisters siblings grandchildren grandkids cousins
    nieces nephews
    """
)
_NUMBERS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20,
}  # fmt: skip
_NUMBER = r"(?:\d{1,2}|" + "|".join(_NUMBERS) + ")"
# A noun that names a job by its ending ("teacher", "counselor", "artist", "librarian",
# "accountant") or by name; an adjective in front only from this short list.
_JOB_ENDINGS = ("er", "or", "ist", "ian", "ant", "ent")
_JOBS = lex.word_set(
    """
    nurse chef cook doctor vet veterinarian lawyer architect student intern pilot dentist
    paramedic firefighter barista mechanic electrician plumber carpenter coach tutor
    """
)
_NOT_JOBS = lex.word_set(
    """
    believer fighter survivor lover dreamer winner loser keeper worrier member beginner fan
    parent student-athlete talker thinker doer go-getter perfectionist optimist pessimist
    introvert extrovert ambivert fanatic patient client customer resident citizen
    """
)
_JOB_MODIFIERS = lex.word_set(
    """
    assistant senior junior head chief lead retired former freelance professional part-time
    full-time registered licensed certified substitute
    """
)
_INSTRUMENTS = lex.word_set(
    """
    piano guitar violin viola cello clarinet flute saxophone sax trumpet trombone drums bass
    ukulele harp banjo harmonica accordion oboe bassoon keyboard keyboards
    """
)
_STATUSES = lex.word_set("married engaged divorced widowed separated")
# "I've been trying for weeks": a gerund that is no pastime or work of one's own.
_NOT_PASTIMES = lex.word_set(
    """
    trying thinking waiting looking feeling wanting meaning hoping planning struggling going
    doing getting saying talking wondering meaning dealing having being keeping missing
    """
)

_I_HAVE = (
    r"\b(?:I|[Ww]e)(?:\s+(?:also|just|recently|finally|now|still))?"
    r"(?:\s+have|'ve|\s+have\s+got|'ve\s+got|\s+got|\s+adopted|\s+own|\s+rescued|\s+welcomed)"
)
_NAMED_RE = re.compile(
    rf"{_I_HAVE}\s+(?:a|an|another|one|two|a\s+second|a\s+new)\s+"
    r"(?:(?:new|little|baby|young|old|sweet|second|third)\s+)?(?P<noun>[a-z-]+)"
    rf"\s+(?:named|called)\s+(?P<name>{lex.NAME}(?:\s+{lex.NAME})?)"
)
_MY_NAMED_RE = re.compile(
    r"\b[Mm]y\s+(?:(?:new|little|baby|young|old|older|younger|big|best|late)\s+)?"
    rf"(?P<noun>[a-z-]+),?\s+(?:(?:named|called)\s+)?(?P<name>{lex.NAME})(?!\w)"
)
# "Oscar, my guinea pig": the name first, then who they are
_NAME_MY_RE = re.compile(
    rf"(?<![\w'])(?P<name>{lex.NAME}),\s+my\s+(?:(?:new|little|baby|young|old|older|younger|big"
    r"|best|late)\s+)?(?P<noun>guinea\s+pig|[a-z-]+)\b(?!')"
)
# "our one-year-old is so cute, his name is Kyle": "his" is the one just said to be the
# speaker's (the only one said in the sentence)
_OWNED_THEN_NAMED_RE = re.compile(
    r"\b(?:[Mm]y|[Oo]ur)\s+(?:(?:new|little|baby|young|old|older|younger|big|best)\s+)?"
    r"(?P<noun>[a-z]+(?:-[a-z]+)*)\b(?P<between>[^.!?]*?),\s+(?:his|her|their)\s+name\s+is\s+"
    rf"(?P<name>{lex.NAME})(?!\w)"
)
_ANOTHER_RE = re.compile(r"\b(?:a|an|the|another|some|this|that|his|her|their|your)\b", re.I)
_COUNT_RE = re.compile(
    rf"{_I_HAVE}\s+(?P<n>{_NUMBER})\s+(?:(?:little|young|grown|grown-up|beautiful)\s+)?"
    r"(?P<noun>[a-z]+)\b",
    re.I,
)
_PETS_RE = re.compile(rf"{_I_HAVE}\s+(?P<pets>(?:a|an|one|{_NUMBER})\s+.+)$")
_PET_ITEM_RE = re.compile(
    rf"^(?:a|an|one|{_NUMBER})\s+(?:[a-z]+\s+)??(?P<noun>guinea\s+pigs?|[a-z-]+)$"
)
# Where a list of pets ends: "named", a preposition, a clause ("a dog named Rex", "a cat at home").
_PETS_STOP_RE = re.compile(
    r"\s+(?:named|called|who|that|which|at|in|from|with|for|since|now|too|as\s+well)\b|[;:(—–]"
    r"|\s+-\s+|\s+and\s+(?!(?:a|an|one|two|three|four|five)\b)"
)
_OBJECT = r"[a-z]+(?:\s+[a-z]+)?"
_NOT_OBJECTS = lex.word_set("here there again now about almost over nearly around")
_SINCE_RE = re.compile(
    rf"\bI(?:'ve|\s+have)\s+been\s+(?P<what>[a-z]+ing|married)(?:\s+(?P<obj>{_OBJECT}))?"
    rf"\s+for\s+(?:(?:about|almost|over|nearly|around)\s+)?(?P<n>{_NUMBER}|a|an)\s+"
    r"(?P<unit>years?|months?)\b"
    rf"|\bI\s+(?:started|began|took\s+up)\s+(?P<what2>[a-z]+ing)(?:\s+(?P<obj2>{_OBJECT}))?"
    rf"\s+(?:about\s+|almost\s+|over\s+)?(?P<n2>{_NUMBER}|a|an)\s+(?P<unit2>years?|months?)"
    r"\s+ago\b",
    re.I,
)
_ROLE_RE = re.compile(
    r"\bI(?:'m|\s+am)\s+(?:now\s+|currently\s+|still\s+)?(?:a|an)\s+"
    r"(?P<role>(?:[a-z-]+\s+)?[a-z-]+)(?P<after>\s+\w+|[^\w\s]|$)"
)
_FORMER_JOB_RE = re.compile(
    r"\bI\s+(?:just\s+|recently\s+|finally\s+)?(?:lost|quit|left)\s+my\s+(?:old\s+)?job"
    r"(?:\s+as\s+(?:a|an)\s+(?P<role>[a-z-]+(?:\s+[a-z-]+)?)|\s+(?:at|with)\s+(?P<at>.+))"
)
_FROM_RE = re.compile(
    r"\bI(?:'m|\s+am|\s+come|\s+originally\s+come|'m\s+originally|\s+am\s+originally)\s+from\s+"
    r"(?P<from>.+)$"
    r"|\bI\s+grew\s+up\s+in\s+(?P<grew>.+)$"
    r"|\bI\s+was\s+born\s+in\s+(?P<born>.+)$"
    r"|\b[Mm]y\s+(?P<kind>home\s+country|hometown|home\s+town|homeland),?\s+(?P<home>.+)$"
)
_PLAY_RE = re.compile(
    r"\bI\s+(?:also\s+|still\s+)?play\s+(?:the\s+|my\s+)?(?P<what>[a-z]+)\b"
    r"|\bplaying\s+my\s+(?P<mine>[a-z]+)\b"
)
_ALLERGY_RE = re.compile(
    r"\bI(?:'m|\s+am)\s+(?:really\s+|very\s+|severely\s+|super\s+)?allergic\s+to\s+(?P<what>.+)$"
)
_STATUS_RE = re.compile(
    r"\bI(?:'m|\s+am)\s+(?:now\s+|happily\s+)?(?P<status>married|engaged|divorced|widowed"
    r"|separated|a\s+single\s+(?:parent|mom|mum|dad|mother|father))\b"
    r"(?!\s+(?:to|with)\s+(?:the|my|it|this|that)\b)"  # "married to my work"
)
_FAVOURITE_IS_RE = re.compile(
    r"^(?P<value>(?:[\w'&-]+\s+){0,3}?[\w'&-]+)\s+(?:is|are|was)\s+(?:still\s+)?"
    r"(?:definitely\s+)?my\s+(?:all-time\s+)?favou?rite\s+(?P<noun>[a-z]+(?:\s+[a-z]+)?)$",
    re.I,
)
# "at Deloitte in June", "at the bank last year": where ends before when.
_WHEN_STOP_RE = re.compile(r"\s+(?:in|on|last|this|after|before|back|around)\b")
# What one joins (and is a member of from then on) and what one runs as one's business.
_GROUPS = lex.word_set(
    """
    group club gym church team band choir class program programme course society association
    league union brigade committee council organisation organization network guild chapter
    crew troupe orchestra party congregation synagogue mosque temple
    """
)
_BUSINESSES = lex.word_set(
    """
    store shop business company studio restaurant bakery cafe café salon practice firm startup
    agency boutique clinic gallery bar pub
    """
)
_PLACES = lex.word_set(
    """
    shelter bank hospital school library center centre church kitchen clinic home museum zoo
    hospice charity garden park camp
    """
)
_JOINED_RE = re.compile(
    r"\bI\s+(?:just\s+|recently\s+|finally\s+|also\s+|officially\s+)?joined\s+(?:a|an|the)\s+"
    r"(?:(?:new|nearby|local)\s+)?(?P<what>.+)$"
)
_BUSINESS_RE = re.compile(
    r"\bI\s+(?:just\s+|recently\s+|finally\s+|also\s+)?(?:opened|started|launched|founded"
    r"|set\s+up|run|own)\s+(?:my\s+own|my|an?)\s+(?:(?:new|own|little|small)\s+)?(?P<what>.+)$"
)
# "a homeless shelter I volunteer at"
_VOLUNTEER_AT_RE = re.compile(
    r"\b(?P<where>(?:a|an|the)\s+(?:[\w-]+\s+){0,3}?[\w-]+)\s+I\s+(?:still\s+)?volunteer\s+at\b"
)
_VOLUNTEER_RE = re.compile(
    r"\bI(?:\s+(?:just\s+|recently\s+|also\s+)?(?:started|began)\s+volunteering"
    r"|'ve\s+been\s+volunteering|\s+have\s+been\s+volunteering|'m\s+volunteering"
    r"|\s+am\s+volunteering|\s+(?:still\s+|also\s+)?volunteer)\s+(?:at|with|for)\s+"
    r"(?P<where>(?:a|an|the)\s+.+)$"
)
# Where the name of a group or a business ends: "a gym last week", "a store and it's great".
_THING_STOP_RE = re.compile(
    r"\s+(?:for|in|at|with|on|near|to|from|and|or|that|which|who|where|because|so|but|last"
    r"|this|yesterday|today|not|recently|a\s+while|about|back|when|after|before|since|once"
    r"|twice|every|each)\b"
    r"|\s+\d|[,;:!(—–]|\s+-\s+"
)
_FRAME = lex.word_set("part thing things one way bit moment time day kind sort ever")

# --- tastes, goals, identity ---------------------------------------------------------------------
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


def _loves(s: str, _at: dt.datetime | None) -> list[tuple[str, str]]:
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
    return _clean([(thing, how)], s, m.start())


# "Painting landscapes is my favourite!": no noun after it, so the thing is keyed by itself; two
# words at least ("Blue is my favourite" says nothing without the sentence before it). "X is my
# top pick" is left out: said of one thing among those just shown (tests/test_readable_notes.py).
_FAVOURITE_ALONE_RE = re.compile(
    r"^(?P<value>(?:[\w'&-]+\s+){0,5}?[\w'&-]+)\s+(?:is|are)\s+(?:definitely\s+|still\s+)?"
    r"my\s+(?:all-time\s+|absolute\s+)?(?:favou?rite|fave)$",
    re.I,
)


def _favourite_alone(s: str) -> list[tuple[str, str]]:
    m = _FAVOURITE_ALONE_RE.search(s.strip())
    if m is None:
        return []
    words = m.group("value").split()
    if len(words) < 2:
        return []  # "Blue is my favourite": a capital at the start of a sentence is no name
    lowered = [w.lower() for w in words]
    if lowered[0] in lex.STOP_WORDS or any(w in lex.PRONOUNS or w in _FRAME for w in lowered):
        return []  # "This one is my favourite", "The blue one is my fave"
    if words[0].lower() in _NOT_LOVED or words[0].lower() in lex.OPINIONS:
        return []
    return _clean([(" ".join(words), "something I love")], s, m.start())


# "Dance is my passion", "Knitting has been my hobby for years": the thing keyed by itself.
_PASSION_IS_RE = re.compile(
    r"^(?P<thing>(?:[\w'&-]+\s+){0,4}?[\w'&-]+)\s+(?:is|are|has\s+been|have\s+been)\s+"
    r"(?:really\s+|always\s+|definitely\s+|still\s+)?my\s+(?:(?:true|biggest|main|real|big|one)\s+)?"
    r"(?P<what>passion|hobby|hobbies)\b"
)


def _passion_is(s: str) -> list[tuple[str, str]]:
    m = _PASSION_IS_RE.search(s.strip())
    if m is None:
        return []
    words = m.group("thing").split()
    if any(w.lower() in lex.STOP_WORDS - {"and"} or w.lower() in lex.PRONOUNS for w in words):
        return []  # "That is my passion", "It has been my hobby"
    if words[0].lower() in _NOT_LOVED or words[0].lower() in lex.OPINIONS:
        return []
    what = "hobby" if m.group("what").startswith("hobb") else "passion"
    return _clean([(" ".join(words), f"my {what}")], s, m.start())


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


def _habit(s: str, _at: dt.datetime | None) -> list[tuple[str, str]]:
    """`I run every morning`: `running: every morning`; `I practise yoga`: `yoga: my practice`."""
    m = _PRACTICE_RE.search(s)
    if m is not None:
        return _clean([(" ".join(m.group("what").split()), "my practice")], s, m.start())
    m = _HABIT_RE.search(s)
    if m is None:
        return []
    when = " ".join(m.group("when").split())
    if m.group("go"):
        what = m.group("go").lower()
        if what in _NOT_PASTIMES or what in _NOT_LOVED:
            return []  # "I go shopping" is a pastime; "I go visiting" is not said
        return _clean([(f"my {what}", when)], s, m.start())
    verb, obj = m.group("verb").lower(), (m.group("obj") or "").lower()
    if verb not in _HABIT_VERBS:
        return []
    if obj and (obj in lex.STOP_WORDS or obj in lex.PRONOUNS or obj in _PLACEHOLDER_WORDS):
        return []  # "I read it every day", "I walk there every day": what is not said
    if verb in {"play", "practice", "practise"} and not obj:
        return []  # "I play every day": what is not said
    return _clean([(f"my {' '.join(filter(None, (_gerund(verb), obj)))}", when)], s, m.start())


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
    _BUSINESSES
    | _GROUPS
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


def _goal(s: str, _at: dt.datetime | None) -> list[tuple[str, str]]:
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
    if lowered[0] == "become" and not _is_job(role):
        return []  # "become a better person": no role one takes
    moving = lowered[0] == "move" and lowered[1] == "to" and lex.is_name(words[-1])
    project = set(lowered[1:]) & (_LIFE_PROJECTS | _GOAL_GETS)
    if lowered[0] not in _LIFE_STEP_VERBS and not moving and not project:
        return []  # "I'm going to start dinner", "I want to write an email": an errand
    return _clean([(goal, "my goal")], s, m.start())


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


def _identity(s: str, _at: dt.datetime | None) -> list[tuple[str, str]]:
    """`my journey as a transgender woman`, `As a gay man, I ...`, `I'm vegan`."""
    m = _IDENTITY_RE.search(s)
    if m is None:
        return []
    words = m.group("what").lower().split()
    if s.startswith("As") and not re.match(r",\s+I\b", m.group("after")):
        return []  # "As a trans woman, she ...": not the speaker
    if words[0] in _DIETS and (len(words) == 1 or words[1] in {"now"}):
        return _clean([("my diet", words[0])], s, m.start())
    if words[0] in _DIETS and len(words) == 2 and words[1] in {"and", "since", "for"}:
        return _clean([("my diet", words[0])], s, m.start())
    if len(words) == 2 and words[0] in _IDENTITY_ADJECTIVES and words[1] in _IDENTITY_NOUNS:
        return _clean([("my identity", " ".join(words))], s, m.start())
    if words[0] in _IDENTITY_ADJECTIVES and words[0] != "straight":
        return _clean([("my identity", words[0])], s, m.start())  # "I'm gay and proud"
    return []


def statements(s: str, at: dt.datetime | None) -> list[tuple[str, str]]:
    """The first-person facts of one clause, (key, value), but for `relations`: "my" or "I" on
    the key or the value marks the speaker's own (`whose`)."""
    found: list[tuple[str, str]] = []
    rules = (_counted, _pets, _since, _role, _former_job, _origin, _plays, _allergy, _joined)
    for rule in (*rules, _business, _volunteers, _loves, _habit, _goal, _identity):
        found += rule(s, at)
    found += _status(s) + _favourite_is(s) + _favourite_alone(s) + _passion_is(s)
    return found


def _clean(pairs: list[tuple[str, str]], s: str, start: int) -> list[tuple[str, str]]:
    return [] if lex.negated_before(s, start) else pairs


def relations(s: str) -> list[tuple[str, str]]:
    """Who someone is to the speaker, from a name said beside a family word or a pet: "we got
    another cat named Bailey", "my daughter Sara's birthday" (`bailey: my cat`)."""
    out: list[tuple[str, str]] = []
    for m in _NAMED_RE.finditer(s):
        noun = m.group("noun")
        if (noun in _PETS or noun in _RELATIVES) and lex.is_name(m.group("name")):
            out += _clean([(m.group("name"), f"my {noun}")], s, m.start())
    for m in _NAME_MY_RE.finditer(s):
        noun, name = " ".join(m.group("noun").split()), m.group("name")
        if (noun in _PETS or noun in _RELATIVES) and lex.is_name(name):
            out += _clean([(name, f"my {noun}")], s, m.start())
    for m in _MY_NAMED_RE.finditer(s):
        noun, name = m.group("noun"), m.group("name")
        if (noun in _PETS or noun in _RELATIVES) and lex.is_name(name):
            out += _clean([(name, f"my {noun}")], s, m.start())
    return out + _named_after(s)


def _named_after(s: str) -> list[tuple[str, str]]:
    """`our one-year-old is so cute, his name is Kyle`, unless someone else is said between
    ("my friend met a girl, her name is Ines": the girl's name)."""
    owned = _OWNED_THEN_NAMED_RE.search(s)
    if owned is None or not lex.is_name(owned.group("name")):
        return []
    between = re.sub(r"\b(?:is|was|'s)\s+(?:such\s+)?an?\b", "", owned.group("between"))
    noun = owned.group("noun")
    if _ANOTHER_RE.search(between):
        return []
    if noun in _PETS or noun in _RELATIVES or re.fullmatch(r"[a-z]+-(?:year|month)-old", noun):
        return _clean([(owned.group("name"), f"my {noun}")], s, owned.start())
    return []


def _counted(s: str, _at: dt.datetime | None) -> list[tuple[str, str]]:
    m = _COUNT_RE.search(s)
    if m is None or m.group("n").lower() == "one":
        return []
    noun = m.group("noun").lower()
    if noun not in _KIN_PLURALS and noun not in _PET_PLURALS:
        return []
    return _clean([(f"my {noun}", m.group("n").lower())], s, m.start())


def _pets(s: str, _at: dt.datetime | None) -> list[tuple[str, str]]:
    """`we've got a pup and a kitty`: only when every thing listed is a pet."""
    m = _PETS_RE.search(s)
    if m is None:
        return []
    pets = lex.clip(m.group("pets"), _PETS_STOP_RE)
    if re.match(r"\s*(?:named|called)\b", m.group("pets")[len(pets) :]):
        return []  # a named one is `_named`'s
    items = [i.strip() for i in re.split(r",\s*and\s+|,\s*|\s+and\s+", pets)]
    found = [_PET_ITEM_RE.match(i) for i in items]
    nouns = [f.group("noun").lower() for f in found if f is not None]
    if len(nouns) != len(items) or not all(n in _PETS or n in _PET_PLURALS for n in nouns):
        return []
    if len(items) == 1 and nouns[0] in _PET_PLURALS:
        return []  # "two dogs" is a count (`_counted`)
    return _clean([("my pets", pets)], s, m.start())


def _since(s: str, at: dt.datetime | None) -> list[tuple[str, str]]:
    """`I've been painting for 7 years`: since when, from the time it was said (a value that
    stays true), or "for 7 years" when the time is not known."""
    m = _SINCE_RE.search(s)
    if m is None:
        return []
    what = (m.group("what") or m.group("what2")).lower()
    obj = m.group("obj") or m.group("obj2")
    n_text = (m.group("n") or m.group("n2")).lower()
    unit = (m.group("unit") or m.group("unit2")).lower()
    if what in _NOT_PASTIMES or what in lex.STOP_WORDS:
        return []
    # "volunteering here about a year ago": the pastime is the gerund
    words = [w for w in (obj or "").lower().split() if w not in _NOT_OBJECTS]
    if any(w in lex.STOP_WORDS for w in words):
        return []  # "working on it", "playing with them": the thing is not said
    obj = " ".join(words)
    n = 1 if n_text in ("a", "an") else _NUMBERS.get(n_text) or int(n_text)
    key = f"my {what} {obj}" if obj else f"my {what}"
    if what == "married":
        key = "my family status"
    if at is None:
        married = "married " if what == "married" else ""
        return _clean([(key, f"{married}for {n_text} {unit}")], s, m.start())
    # "started in 2016", not "since 2016": the line's tail says since when the fact is known
    if unit.startswith("year"):
        value = f"started in {at.year - n}"
    else:
        months = at.year * 12 + at.month - 1 - n
        value = f"started in {months // 12}-{months % 12 + 1:02d}"
    if what == "married":
        value = value.replace("started", "married")
    return _clean([(key, value)], s, m.start())


def _is_job(role: str) -> bool:
    words = role.lower().split()
    if len(words) == 2 and words[0] not in _JOB_MODIFIERS:
        return False
    noun = words[-1]
    if noun in _NOT_JOBS or noun in lex.STOP_WORDS:
        return False
    return noun in _JOBS or (len(noun) > 4 and noun.endswith(_JOB_ENDINGS))


def _role(s: str, _at: dt.datetime | None) -> list[tuple[str, str]]:
    """`I'm an assistant manager`, `I'm a nurse`: a job, not "I'm a big believer"."""
    m = _ROLE_RE.search(s)
    if m is None:
        return []
    role = m.group("role")
    after = m.group("after").strip().lower()
    if after and after not in {"at", "for", "in", "with", "and", "now", "here", "there"}:
        if after.isalpha() and len(role.split()) == 1:
            role = f"{role} {after}"  # "I'm a substitute teacher"
        elif after.isalpha():
            return []
    if not _is_job(role):
        return []
    return _clean([("my role", role)], s, m.start())


def _former_job(s: str, _at: dt.datetime | None) -> list[tuple[str, str]]:
    m = _FORMER_JOB_RE.search(s)
    if m is None:
        return []
    if m.group("role"):
        role = m.group("role")
        words = role.split()
        if len(words) == 2 and not _is_job(role):
            role = words[0]  # "as a banker yesterday"
        return _clean([("my former job", role)], s, m.start()) if _is_job(role) else []
    at = lex.clip(m.group("at"), _WHEN_STOP_RE)
    # a name ("Door Dash"), or a kind of employer ("the mechanical engineering company")
    place = lex.place_phrase(at) or _thing(re.sub(r"^(?:the|a|an)\s+", "", at), _BUSINESSES)
    return _clean([("my former job", place)], s, m.start()) if place else []


def _origin(s: str, _at: dt.datetime | None) -> list[tuple[str, str]]:
    m = _FROM_RE.search(s)
    if m is None:
        return []
    if m.group("kind"):
        key = " ".join(m.group("kind").lower().split()).replace("home town", "hometown")
        raw = m.group("home")
    else:
        key = (
            "comes from" if m.group("from") else "grew up in" if m.group("grew") else "was born in"
        )
        raw = m.group("from") or m.group("grew") or m.group("born")
    place = lex.place_phrase(raw)
    if not place or not place[:1].isupper():
        return []
    return _clean([(f"{'my' if m.group('kind') else 'I'} {key}", place)], s, m.start())


def _plays(s: str, _at: dt.datetime | None) -> list[tuple[str, str]]:
    m = _PLAY_RE.search(s)
    what = m and (m.group("what") or m.group("mine")).lower()
    if m is None or what not in _INSTRUMENTS:
        return []
    # Keyed by the instrument: one plays several, and a second is no change of the first.
    return _clean([(what, "my instrument")], s, m.start())


def _allergy(s: str, _at: dt.datetime | None) -> list[tuple[str, str]]:
    m = _ALLERGY_RE.search(s)
    if m is None:
        return []
    value = lex.fact_value(m.group("what"))
    # Keyed by what: one is allergic to several things at once.
    return _clean([(value, "my allergy")], s, m.start()) if value else []


def _thing(raw: str, heads: frozenset[str]) -> str | None:
    """A group's or a business's name as said ("LGBTQ activist group"), if it ends in one of
    `heads`; at most four words."""
    thing = lex.clip(raw, _THING_STOP_RE)
    words = thing.split()
    if not words or len(words) > 4 or words[-1].lower() not in heads:
        return None
    if any(w.lower() in lex.STOP_WORDS or w.lower() in lex.OPINIONS for w in words[:-1]):
        return None  # "a really great team": a description
    return thing


def _joined(s: str, _at: dt.datetime | None) -> list[tuple[str, str]]:
    """`I joined a writers group`: a member from then on (the line's date says since when)."""
    m = _JOINED_RE.search(s)
    group = m and _thing(m.group("what"), _GROUPS)
    return _clean([(f"my {group}", "member")], s, m.start()) if m and group else []


def _business(s: str, _at: dt.datetime | None) -> list[tuple[str, str]]:
    """`I opened an online clothing store`: the speaker's business."""
    m = _BUSINESS_RE.search(s)
    business = m and _thing(m.group("what"), _BUSINESSES)
    return _clean([("my business", business)], s, m.start()) if m and business else []


def _volunteers(s: str, _at: dt.datetime | None) -> list[tuple[str, str]]:
    """`I volunteer at a food bank`: where (a named place, or one said with a place's noun)."""
    m = _VOLUNTEER_RE.search(s) or _VOLUNTEER_AT_RE.search(s)
    if m is None:
        return []
    where = lex.clip(m.group("where"), _THING_STOP_RE)
    words = where.split()
    if len(words) < 2 or len(words) > 5 or words[-1].lower() not in _PLACES:
        return []
    # Keyed by the place: one volunteers at several, and a second is no change of the first.
    place = re.sub(r"^(?:the|a|an)\s+", "", where)
    return _clean([(place, "my volunteer work")], s, m.start())


def _status(s: str) -> list[tuple[str, str]]:
    m = _STATUS_RE.search(s)
    if m is None:
        return []
    status = re.sub(r"^a\s+", "", m.group("status").lower())
    return _clean([("my family status", status)], s, m.start())


def _favourite_is(s: str) -> list[tuple[str, str]]:
    """`Bach is my favourite composer`: the thing named first, not "this" or "that"."""
    m = _FAVOURITE_IS_RE.search(s.strip())
    if m is None:
        return []
    noun = m.group("noun").lower()
    value = lex.fact_value(m.group("value"))
    if not value or any(w in _FRAME or w in lex.STOP_WORDS for w in noun.split()):
        return []
    if any(w.lower() in lex.STOP_WORDS or w.lower() in lex.PRONOUNS for w in value.split()):
        return []  # "Honestly this", "The one I got": not the thing's name
    return _clean([(f"my favourite {noun}", value)], s, m.start())


# "my role" / "bailey: my cat": the speaker's, said with a possessive; "I works at": said with
# the speaker as the subject of the key's verb.
_MINE_RE = re.compile(r"^(?:my|our)\s+", re.I)
_I_RE = re.compile(r"^I\s+")


# "camping: something I love": the speaker is the subject of the value's verb.
_I_VALUE_RE = re.compile(r"\bI\s+(?P<verb>love|like)$")


def is_mine(key: str, value: str) -> bool:
    """Whether a fact as a rule wrote it is the speaker's own."""
    said_by_me = _MINE_RE.match(value) or _I_VALUE_RE.search(value)
    return bool(_MINE_RE.match(key) or _I_RE.match(key) or said_by_me)


def whose(key: str, value: str, speaker: str | None) -> tuple[str, str] | None:
    """A fact as the vault should keep it. Rules write the speaker's own facts with "my" on the
    key or the value ("my role", "bailey: my cat") or "I" before a verb ("I works at"): for the
    vault's user they read as said ("role", "my cat", "works at"); for another speaker their
    name takes the place of "my" or "I" ("melanie's business: bakery", "bailey: Melanie's
    cat", "jon works at"); what the assistant says about itself is None. Other facts ("the
    deadline is Friday") pass as they are."""
    role = " ".join((speaker or "").split())
    if not is_mine(key, value):
        return key, value
    if not role or role.casefold() in USER_ROLES:
        return _I_RE.sub("", key, count=1), value
    if role.casefold() in NOBODY_ROLES:
        return None
    if _I_RE.match(key):
        return _I_RE.sub(f"{role} ", key, count=1), value
    said = _I_VALUE_RE.search(value)
    if said is not None:  # "something Melanie loves"
        return key, f"{value[: said.start()]}{role} {said.group('verb')}s"
    if _MINE_RE.match(key):
        return _MINE_RE.sub(f"{role}'s ", key, count=1), value
    return key, _MINE_RE.sub(f"{role}'s ", value, count=1)
