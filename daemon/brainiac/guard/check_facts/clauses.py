"""A response read into clauses (`clauses_of`): what each says, asks, supposes, negates or plans,
with the light stemming and phrase finding the fact path matches keys with.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from brainiac.language import hedges, lexicon

# Paraphrases of common key words (all lowercase, compared after a light stemming).
SYNONYMS: dict[str, tuple[str, ...]] = {
    "deadline": (
        "due",
        "due date",
        "has to be in by",
        "have to be in by",
        "must be in by",
        "needs to be in by",
        "finished by",
        "submitted by",
    ),
    "due": ("deadline",),
    "home": ("live", "living", "based", "reside", "you moved to", "you've moved to"),
    "employer": ("work at", "work for", "working at", "working for", "job at", "employed"),
    "company": ("work at", "work for", "working at", "working for", "employer"),
    "job": ("work as", "working as", "role", "position"),
    "role": ("work as", "working as", "job", "position", "title"),
    "manager": ("boss", "team lead", "lead", "supervisor", "report to", "reports to"),
    "boss": ("manager", "supervisor"),
    "owner": ("own", "owned by"),
    "stakeholder": ("involved in", "involved with"),
    "allergy": ("allergic",),
    "partner": ("wife", "husband", "spouse", "girlfriend", "boyfriend", "fiancé", "fiancée"),
    "birthday": ("born", "birth"),
    "salary": ("earn", "paid", "pay"),
    "budget": ("funding", "budgeted"),
    "car": ("drive", "driving"),
    "phone": ("mobile", "number", "phone number"),
    "age": ("years old", "turned"),
    "weight": ("weigh", "kilo", "kg"),
    "hourly": ("an hour", "per hour"),
    "rehearsal": ("practice",),
    "pickup": ("pick up", "pick-up", "collect", "collecting", "gets out"),
    "standup": ("stand-up",),
    "stand-up": ("standup",),
    "user": ("you", "your"),
    "assistant": ("i", "my", "me"),
    "meeting": ("meet", "sync"),
    "gym": ("workout", "train at", "work out at"),
    "rent": ("rental",),
    "dentist": ("dental",),
    "doctor": ("gp", "physician"),
}


# Generic words that name the same kind of thing: "Miso's check-up" is his vet appointment.
_WORD_RE = re.compile(r"[\w'’-]+")


# A word right after these is a verb, not the key ("I'll address it", "you should focus").
_VERB_BEFORE = lexicon.word_set(
    "i i'll we we'll you'll they to will can could should would i'd let's please"
)


# Words a key shares with many others; they identify a fact only when nothing else does.
GENERIC = lexicon.word_set(
    """
    time day days date name city town place number status value type location current new
    appointment schedule plan amount count info details reservation booking visit check-up rate
    lesson lessons class classes session sessions
    """
)


# Where a sentence divides into clauses that each say one thing. Not at every comma: "Monday,
# the 30th" is one value and "your manager, Marco Lenz" an apposition.
_CLAUSE_RE = re.compile(
    r"\s*;\s*|\s+[—–-]\s+|:\s+"
    r"|,\s+(?=(?:so|but|because|since|while|whereas|although|though|which|who|who's|then"
    r"|and then)\b)"
    r"|\s+and\s+(?=(?:[\w'-]+\s+){0,4}(?:is|are|was|were)\b)"
    r"|\s+(?=because\b)"
    r"|,?\s+(?:and|but)\s+(?=(?:the|your|my|our|his|her|their|it|it's|this|that|she|he|they|we"
    r"|you|you're|i|i'll)\s+(?!\d))"
    r"|,\s+(?=(?:the|your|my|our|his|her|their|it|this|that|she|he|they|we|you|i)\s+(?!\d)"
    r"[\w'-]+\s+(?:is|are|was|were|has|have|will|moved|goes|comes)\b)",
    re.I,
)


_LEADING_CLAUSE_RE = re.compile(
    r"^(?:since|because|as|with|given|now that|when|while|if|although|though|once|after|before)"
    r"\b[^,]{3,}?,\s+",
    re.I,
)


_QUESTION_RE = re.compile(r"\?\s*[\"')\]]*$")


_ASKING_RE = re.compile(
    r"^(?:is|are|was|were|do|does|did|can|could|will|would|shall|should|has|have|had|when|what"
    r"|where|which|who|how|why|want|need)\b",
    re.I,
)


_PLANNING_RE = re.compile(
    r"^(?:(?:so|then|and|also|just|please)\s+)*"
    r"(?:i'll|i will|i'd|i can|i could|i've (?:set|added|booked|blocked|put)|let me|let's|shall i"
    r"|want me|remember to|don't forget|leave|bring|take|book|call|send|ask|tell|check|set|plan"
    r"|try|make|buy|pack|add|move|cancel|schedule|drop|get|go|give|keep|put|use|email|text"
    r"|reply|pick|remind|block|aim|budget)\b",
    re.I,
)


_HISTORY_RE = re.compile(
    r"\b(?:used to|originally|previously|formerly|initially|at first|back then|had been|was once"
    r"|old|earlier|prior|back in|until recently)\b",
    re.I,
)


_NEGATION_RE = re.compile(r"\b(?:not|never|no longer|isn't|aren't|wasn't|weren't)\b|n't\b", re.I)


_NOT_UNTIL_RE = re.compile(r"(?:\bnot|n't)\b[^,;]*\buntil\b", re.I)  # "isn't due until May"


@dataclass(frozen=True)
class Clause:
    """One statement within a sentence, with what kind of statement it is."""

    text: str
    words: tuple[str, ...]  # stemmed
    asks: bool  # a question
    supposes: bool  # a condition or a hedge
    plans: bool  # the assistant's plan or a suggestion: its times are the plan's, not facts
    negated: bool
    history: bool  # speaks of the past as the past

    def followed_by(self, index: int) -> str | None:
        """The word right after word `index` as written, if only a space stands between them
        (None at the end or after punctuation: "manager, Marco")."""
        spans = [m.span() for m in _WORD_RE.finditer(self.text)]
        if index + 1 >= len(spans):
            return None
        gap = self.text[spans[index][1] : spans[index + 1][0]]
        return self.text[slice(*spans[index + 1])] if gap.isspace() else None


def clauses_of(sentence: str) -> list[Clause]:
    """The statements of a sentence, each marked as a question, a condition, a plan or negated
    (evidence/ reads them too)."""
    asked = bool(_QUESTION_RE.search(sentence))
    parts: list[str] = []
    lead = _LEADING_CLAUSE_RE.match(sentence)
    rest = sentence
    if lead:
        parts.append(lead.group().rstrip(", "))
        rest = sentence[lead.end() :]
    parts += [p for p in _CLAUSE_RE.split(rest) if p and p.strip()]
    supposed = hedges.opens_a_condition(sentence)  # "If they drop the attic, the fee falls"
    out = []
    for i, part in enumerate(parts):
        stripped = part.strip().rstrip(".!")
        out.append(
            Clause(
                stripped,
                tuple(stems(stripped)),
                asks=stripped.endswith("?")
                or (asked and (i == len(parts) - 1 or bool(_ASKING_RE.match(stripped)))),
                supposes=supposed or hedges.supposes(stripped),
                plans=bool(_PLANNING_RE.match(stripped)),
                negated=bool(_NEGATION_RE.search(stripped)) and not _NOT_UNTIL_RE.search(stripped),
                history=bool(_HISTORY_RE.search(stripped)),
            )
        )
    return out


def stem_options(word: str) -> tuple[str, ...]:
    return (word, *(SYNONYMS.get(word) or SYNONYMS.get(stem(word)) or ()))


def stem(word: str) -> str:
    word = word.lower().replace("’", "'").removesuffix("'s").rstrip("'")
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def stems(text: str) -> list[str]:
    return [stem(w) for w in _WORD_RE.findall(text.lower())]


def _phrase_at(words: Sequence[str], phrase: str, as_noun: bool = False) -> bool:
    return phrase_index(words, phrase, as_noun) is not None


def phrase_index(words: Sequence[str], phrase: str, as_noun: bool = False) -> int | None:
    wanted = stems(phrase)
    n = len(wanted)
    for i in range(len(words) - n + 1) if n else ():
        if list(words[i : i + n]) == wanted and not (
            as_noun and i and words[i - 1] in _VERB_BEFORE
        ):
            return i
    return None


def specific_words(key: str) -> list[str]:
    words = [w for w in key.split() if w not in lexicon.STOP_WORDS]
    return [w for w in words if stem(w) not in GENERIC]


def mentions_phrase(words: Sequence[str], phrases: Iterable[str]) -> bool:
    return any(_phrase_at(words, p) for p in phrases)
