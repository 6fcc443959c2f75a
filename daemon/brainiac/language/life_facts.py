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

Three modules read them: this one holds the entry points (`statements`, `relations`, `whose`)
and the rules about what a speaker has and is (people and pets by name, counts, since when,
work, origin, instruments, allergies, groups, a business, volunteering, family status, a named
favourite); `life_tastes` the rules about what they love, practise and aim for, and who they
say they are; `life_words` the nouns both name and the negation check both apply.

`whose` says whose a first-person fact is when the speaker is not the vault's user: in LoCoMo's
conversation between Caroline and Melanie, Melanie's "we got another cat named Bailey" is
`bailey: Melanie's cat`, and her "I play the clarinet" is `clarinet: Melanie's instrument`. What
the assistant says about itself is no fact about anyone.
"""

from __future__ import annotations

import datetime as dt
import re

from brainiac.language import lexicon as lex
from brainiac.language import life_tastes
from brainiac.language.life_words import (
    BUSINESSES,
    FRAME,
    GROUPS,
    INSTRUMENTS,
    KIN_PLURALS,
    NOT_PASTIMES,
    NUMBER,
    NUMBERS,
    PET_PLURALS,
    PETS,
    PLACES,
    RELATIVES,
    is_job,
    unless_negated,
)

# Roles whose "I" is the vault's user: a person's own events, typed lines in a note, imports.
USER_ROLES = lex.word_set("user me human you note")
# Roles whose "I" is no one to remember anything about.
NOBODY_ROLES = lex.word_set("assistant ai bot model system tool claude chatgpt gpt")

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
    rf"{_I_HAVE}\s+(?P<n>{NUMBER})\s+(?:(?:little|young|grown|grown-up|beautiful)\s+)?"
    r"(?P<noun>[a-z]+)\b",
    re.I,
)
_PETS_RE = re.compile(rf"{_I_HAVE}\s+(?P<pets>(?:a|an|one|{NUMBER})\s+.+)$")
_PET_ITEM_RE = re.compile(
    rf"^(?:a|an|one|{NUMBER})\s+(?:[a-z]+\s+)??(?P<noun>guinea\s+pigs?|[a-z-]+)$"
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
    rf"\s+for\s+(?:(?:about|almost|over|nearly|around)\s+)?(?P<n>{NUMBER}|a|an)\s+"
    r"(?P<unit>years?|months?)\b"
    rf"|\bI\s+(?:started|began|took\s+up)\s+(?P<what2>[a-z]+ing)(?:\s+(?P<obj2>{_OBJECT}))?"
    rf"\s+(?:about\s+|almost\s+|over\s+)?(?P<n2>{NUMBER}|a|an)\s+(?P<unit2>years?|months?)"
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


def statements(s: str, at: dt.datetime | None) -> list[tuple[str, str]]:
    """The first-person facts of one clause, (key, value), but for `relations`: "my" or "I" on
    the key or the value marks the speaker's own (`whose`)."""
    found: list[tuple[str, str]] = []
    rules = (_counted, _pets, _since, _role, _former_job, _origin, _plays, _allergy, _joined)
    for rule in (
        *rules,
        _business,
        _volunteers,
        life_tastes.loves,
        life_tastes.habit,
        life_tastes.goal,
        life_tastes.identity,
    ):
        found += rule(s, at)
    found += (
        _status(s) + _favourite_is(s) + life_tastes.favourite_alone(s) + life_tastes.passion_is(s)
    )
    return found


def relations(s: str) -> list[tuple[str, str]]:
    """Who someone is to the speaker, from a name said beside a family word or a pet: "we got
    another cat named Bailey", "my daughter Sara's birthday" (`bailey: my cat`)."""
    out: list[tuple[str, str]] = []
    for m in _NAMED_RE.finditer(s):
        noun = m.group("noun")
        if (noun in PETS or noun in RELATIVES) and lex.is_name(m.group("name")):
            out += unless_negated([(m.group("name"), f"my {noun}")], s, m.start())
    for m in _NAME_MY_RE.finditer(s):
        noun, name = " ".join(m.group("noun").split()), m.group("name")
        if (noun in PETS or noun in RELATIVES) and lex.is_name(name):
            out += unless_negated([(name, f"my {noun}")], s, m.start())
    for m in _MY_NAMED_RE.finditer(s):
        noun, name = m.group("noun"), m.group("name")
        if (noun in PETS or noun in RELATIVES) and lex.is_name(name):
            out += unless_negated([(name, f"my {noun}")], s, m.start())
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
    if noun in PETS or noun in RELATIVES or re.fullmatch(r"[a-z]+-(?:year|month)-old", noun):
        return unless_negated([(owned.group("name"), f"my {noun}")], s, owned.start())
    return []


def _counted(s: str, _at: dt.datetime | None) -> list[tuple[str, str]]:
    m = _COUNT_RE.search(s)
    if m is None or m.group("n").lower() == "one":
        return []
    noun = m.group("noun").lower()
    if noun not in KIN_PLURALS and noun not in PET_PLURALS:
        return []
    return unless_negated([(f"my {noun}", m.group("n").lower())], s, m.start())


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
    if len(nouns) != len(items) or not all(n in PETS or n in PET_PLURALS for n in nouns):
        return []
    if len(items) == 1 and nouns[0] in PET_PLURALS:
        return []  # "two dogs" is a count (`_counted`)
    return unless_negated([("my pets", pets)], s, m.start())


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
    if what in NOT_PASTIMES or what in lex.STOP_WORDS:
        return []
    # "volunteering here about a year ago": the pastime is the gerund
    words = [w for w in (obj or "").lower().split() if w not in _NOT_OBJECTS]
    if any(w in lex.STOP_WORDS for w in words):
        return []  # "working on it", "playing with them": the thing is not said
    obj = " ".join(words)
    n = 1 if n_text in ("a", "an") else NUMBERS.get(n_text) or int(n_text)
    key = f"my {what} {obj}" if obj else f"my {what}"
    if what == "married":
        key = "my family status"
    if at is None:
        married = "married " if what == "married" else ""
        return unless_negated([(key, f"{married}for {n_text} {unit}")], s, m.start())
    # "started in 2016", not "since 2016": the line's tail says since when the fact is known
    if unit.startswith("year"):
        value = f"started in {at.year - n}"
    else:
        months = at.year * 12 + at.month - 1 - n
        value = f"started in {months // 12}-{months % 12 + 1:02d}"
    if what == "married":
        value = value.replace("started", "married")
    return unless_negated([(key, value)], s, m.start())


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
    if not is_job(role):
        return []
    return unless_negated([("my role", role)], s, m.start())


def _former_job(s: str, _at: dt.datetime | None) -> list[tuple[str, str]]:
    m = _FORMER_JOB_RE.search(s)
    if m is None:
        return []
    if m.group("role"):
        role = m.group("role")
        words = role.split()
        if len(words) == 2 and not is_job(role):
            role = words[0]  # "as a banker yesterday"
        return unless_negated([("my former job", role)], s, m.start()) if is_job(role) else []
    at = lex.clip(m.group("at"), _WHEN_STOP_RE)
    # a name ("Door Dash"), or a kind of employer ("the mechanical engineering company")
    place = lex.place_phrase(at) or _thing(re.sub(r"^(?:the|a|an)\s+", "", at), BUSINESSES)
    return unless_negated([("my former job", place)], s, m.start()) if place else []


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
    return unless_negated([(f"{'my' if m.group('kind') else 'I'} {key}", place)], s, m.start())


def _plays(s: str, _at: dt.datetime | None) -> list[tuple[str, str]]:
    m = _PLAY_RE.search(s)
    what = m and (m.group("what") or m.group("mine")).lower()
    if m is None or what not in INSTRUMENTS:
        return []
    # Keyed by the instrument: one plays several, and a second is no change of the first.
    return unless_negated([(what, "my instrument")], s, m.start())


def _allergy(s: str, _at: dt.datetime | None) -> list[tuple[str, str]]:
    m = _ALLERGY_RE.search(s)
    if m is None:
        return []
    value = lex.fact_value(m.group("what"))
    # Keyed by what: one is allergic to several things at once.
    return unless_negated([(value, "my allergy")], s, m.start()) if value else []


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
    group = m and _thing(m.group("what"), GROUPS)
    return unless_negated([(f"my {group}", "member")], s, m.start()) if m and group else []


def _business(s: str, _at: dt.datetime | None) -> list[tuple[str, str]]:
    """`I opened an online clothing store`: the speaker's business."""
    m = _BUSINESS_RE.search(s)
    business = m and _thing(m.group("what"), BUSINESSES)
    return unless_negated([("my business", business)], s, m.start()) if m and business else []


def _volunteers(s: str, _at: dt.datetime | None) -> list[tuple[str, str]]:
    """`I volunteer at a food bank`: where (a named place, or one said with a place's noun)."""
    m = _VOLUNTEER_RE.search(s) or _VOLUNTEER_AT_RE.search(s)
    if m is None:
        return []
    where = lex.clip(m.group("where"), _THING_STOP_RE)
    words = where.split()
    if len(words) < 2 or len(words) > 5 or words[-1].lower() not in PLACES:
        return []
    # Keyed by the place: one volunteers at several, and a second is no change of the first.
    place = re.sub(r"^(?:the|a|an)\s+", "", where)
    return unless_negated([(place, "my volunteer work")], s, m.start())


def _status(s: str) -> list[tuple[str, str]]:
    m = _STATUS_RE.search(s)
    if m is None:
        return []
    status = re.sub(r"^a\s+", "", m.group("status").lower())
    return unless_negated([("my family status", status)], s, m.start())


def _favourite_is(s: str) -> list[tuple[str, str]]:
    """`Bach is my favourite composer`: the thing named first, not "this" or "that"."""
    m = _FAVOURITE_IS_RE.search(s.strip())
    if m is None:
        return []
    noun = m.group("noun").lower()
    value = lex.fact_value(m.group("value"))
    if not value or any(w in FRAME or w in lex.STOP_WORDS for w in noun.split()):
        return []
    if any(w.lower() in lex.STOP_WORDS or w.lower() in lex.PRONOUNS for w in value.split()):
        return []  # "Honestly this", "The one I got": not the thing's name
    return unless_negated([(f"my favourite {noun}", value)], s, m.start())


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


# What `whose` leaves in the value of a fact keyed by the thing itself: whose it is and what it
# is to them ("camping: something Melanie loves", "bailey: Melanie's cat", "chess: my passion").
_OWNER = r"(?:I|we|[A-Z][\w.-]*(?:\s+[A-Z][\w.-]*)?)"
_OWNED_VALUE_RE = re.compile(
    rf"^something\s+{_OWNER}\s+(?:loves?|likes?)$|^(?:my|our|{_OWNER}'s)\s+[a-z][a-z -]*$"
)


def keyed_by_thing(value: str) -> bool:
    """Whether a fact's value says whose its key is ("bailey: Melanie's cat", "camping: something
    I love"): such a key names a thing, not something's attribute (as "orion deadline" does), so
    a word of it alone ("trips" of "camping trips") is no mention of it."""
    return _OWNED_VALUE_RE.match(value) is not None


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
