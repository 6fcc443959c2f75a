"""The words the text readers share: stop words, pronouns, opinions, names, and how a stated
value is cut out of its sentence (`clip`, `fact_value`, `place_phrase`). Pure; extract.py,
life_facts.py, claims.py and the guard build on it."""

from __future__ import annotations

import re


def word_set(text: str) -> frozenset[str]:
    # Word lists are written as prose blocks; one word a line would make this file unreadable.
    return frozenset(text.split())


STOP_WORDS = word_set(
    """
    a about above after again against all almost also although always am an and another any
    anyone anything are around as at away back be because been before being below between both
    but by can cannot could did do does doing done down during each either else enough even ever
    every everyone everything few for from further get gets getting got had has have having he
    her here hers herself him himself his how however i if in into is it its itself just least
    less let like made make many may maybe me might mine more most much must my myself near need
    neither never next no nor not now of off often on once one only or other others our ours
    ourselves out over own perhaps please quite rather really same say said see seem seems she
    should since so some someone something sometimes soon still such than that the their theirs
    them themselves then there these they thing things this those though through thus till to
    today tomorrow too toward towards under until up upon us very via want was way we well were
    what whatever when where whether which while who whom whose why will with within without
    would yes yet you your yours yourself yourselves
    yeah yep yup nope okay ok lol haha hah hmm umm uh oh ah wow thanks thank thx pls gonna
    wanna gotta kinda sorta dunno stuff actually basically literally totally pretty guess
    think know sure right cool nice great good fine anyway btw hey hello hi bye
    """
)


WEEKDAYS = word_set(
    "monday tuesday wednesday thursday friday saturday sunday mon tue tues wed thu thur thurs "
    "fri sat sun"
)


MONTHS = word_set(
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec"
)


TIME_WORDS = word_set("week weekend month year morning afternoon evening night time")


# Capitalised only because they open a sentence (or always capitalised but never a name).
COMMON_STARTS = word_set(
    """
    i i'm i've i'll i'd it's that's there's here's what's let's don't can't won't didn't
    doesn't isn't wasn't aren't couldn't shouldn't wouldn't
    sounds looks seems sorry sure great good nice cool awesome perfect right thanks thank
    hi hey hello yes no yeah yep nope ok okay todo fyi btw lol also just maybe please
    tonight tomorrow yesterday today morning evening afternoon night weekend
    remind call send book buy make take tell ask find help add remember note see try give
    put keep show write read set move schedule cancel check update plan start stop get go
    did do does is are was were have has had will would could should can may might must
    honestly hopefully unfortunately luckily apparently basically finally first second next
    last oh ah um hmm wow anyway anyways well so then now still again sometimes usually
    dear regards cheers best
    """
)


PRONOUNS = word_set(
    "i me you he him she her it we us they them this that these those there here something "
    "nothing everything anything someone everyone nobody somebody"
)


DETERMINERS = word_set("the my our your his her their")


# Words that open a value that is not a value: a clause, a hedge, a pronoun, an adverb.
BAD_VALUE_START = PRONOUNS | word_set(
    """
    not no never n't going coming being been getting to that because so very really too just
    also still all about like kind sort pretty quite such how what why where who which when
    if whether done over gone up out off back sure probably maybe perhaps definitely always
    usually sometimes already even only almost more less much many
    """
)


# Opinions and moods: "the food was great" is not something to keep as a fact.
OPINIONS = word_set(
    """
    great good nice fun bad awesome amazing terrible awful horrible ok okay fine cool hard easy
    boring interesting important difficult beautiful weird crazy annoying funny sad happy
    tired busy late early wrong correct true false real fake possible impossible perfect
    wonderful lovely excellent fantastic brilliant stupid silly strange odd huge tiny big small
    better worse best worst same different right clear obvious enough ready done over
    """
)


NEGATIONS_RE = re.compile(r"\b(?:not|never|no longer|nobody|nothing|no)\b|n't\b", re.I)


# "the deadline was my fault": a judgement, not a value.
JUDGEMENTS = word_set("fault mistake idea problem pleasure joke disaster mess nightmare")


NAME = r"[A-ZÀ-ÖØ-Þ][\w&-]*"


# Where a value ends: a clause after a comma (not "Monday, 30 November" or "Berlin, Germany"), a
# conjunction that starts a new clause, a dash, a colon or a parenthesis.
_VALUE_STOP_RE = re.compile(
    r"\s*(?:[;(]|:(?!\d))|\s+[-–—]\s+|,(?=\s*I\b|\s*I')|,(?!\s*[A-Z0-9])"
    r"|\s+(?:because|but|though|although|which|who|so\s+that|so|while|whereas|unless|if|since"
    r"|until|when|and\s+then|and\s+(?:I|we|he|she|they|it|you|my|our|the|that|this|also)"
    r"|then)\b"
)


_PLACE_STOP_RE = re.compile(
    r"\s+(?:with|for|to|and|last|this|next|a\s+few|few|recently|now|already|again|in\s+\d{4}"
    r"|\d+\s+\w+\s+ago|years?|months?|weeks?|yesterday|today|as)\b"
)


_TRAILING_FILLER_RE = re.compile(
    r"\s+(?:now|anyway|again|too|then|already|as\s+well|apparently|officially|btw|lol)$", re.I
)


TRAILING_PUNCT = " .,;:!?…\"'"


_MAX_VALUE_WORDS = 8


def negated_before(s: str, end: int) -> bool:
    # "I don't think the deadline is Friday": a negation ahead of the claim voids it.
    return NEGATIONS_RE.search(s[:end]) is not None


def is_name(word: str) -> bool:
    """Whether `word` (a phrase: its first word) is capitalised and not a stop word, weekday,
    month, pronoun or common sentence start."""
    first = word.split()[0].lower()
    return word[:1].isupper() and not any(
        first in vocabulary
        for vocabulary in (STOP_WORDS, COMMON_STARTS, WEEKDAYS, MONTHS, PRONOUNS)
    )


def clip(raw: str, stop: re.Pattern[str]) -> str:
    """`raw` cut where `stop` first matches, without trailing punctuation and filler words."""
    m = stop.search(raw)
    value = (raw[: m.start()] if m else raw).strip().rstrip(TRAILING_PUNCT)
    while True:
        shorter = _TRAILING_FILLER_RE.sub("", value)
        if shorter == value:
            return value
        value = shorter


def fact_value(raw: str) -> str | None:
    """The value of a fact, cut at the end of its clause; None if it is not a plain value."""
    value = clip(raw, _VALUE_STOP_RE)
    words = value.split()
    if not words or len(words) > _MAX_VALUE_WORDS:
        return None
    first = words[0].lower()
    second = words[1].lower() if len(words) > 1 else ""
    if first in {"this", "next", "last"} and (second in TIME_WORDS or second in WEEKDAYS):
        return value  # "this Friday", "next week": a time, not a pronoun
    if first in BAD_VALUE_START or first in OPINIONS:
        return None
    if words[0].islower() and first.endswith("ing"):
        return None  # "is going", "are playing": something happening, not a value
    if first in {"a", "an", "the"} and second in OPINIONS:
        return None
    if words[-1].lower() in JUDGEMENTS:
        return None
    return value


def place_phrase(raw: str) -> str | None:
    """A place or organisation: a name, cut before "with my partner", "last year" and the like."""
    value = clip(clip(raw, _VALUE_STOP_RE), _PLACE_STOP_RE)
    words = value.split()
    if not words or len(words) > 5:
        return None
    if words[0].lower() == "the" and len(words) > 1:
        return value if words[1][:1].isupper() else None
    return value if words[0][:1].isupper() and words[0].lower() not in PRONOUNS else None
