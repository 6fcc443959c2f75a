"""The words of the event path: a word's plain form (`lemma`), the light words that say little
about which event is meant, the words that point at the speaker or the one spoken to, and whose
each thing is ("my sister Lena's birthday").

Not the values a sentence states (dates, counts, names: values.py), and not the stop words and
value cutting every text reader shares (lexicon.py).
"""

from __future__ import annotations

import functools
import re

from brainiac.language import lexicon

_WORD_RE = re.compile(r"[^\W\d_][\w'’-]*")  # "siobhán" is one word
# Verbs and nouns that say little about which event is meant.
_LIGHT = lexicon.word_set(
    """
    go get have make do take be feel like love want need come see know think thing time day
    really lot year week month people way also new great good fun
    """
)
_IRREGULAR = {
    "went": "go",
    "gone": "go",
    "goes": "go",
    "going": "go",
    "ran": "run",
    "running": "run",
    "took": "take",
    "taken": "take",
    "made": "make",
    "met": "meet",
    "had": "have",
    "has": "have",
    "got": "get",
    "bought": "buy",
    "saw": "see",
    "seen": "see",
    "gave": "give",
    "given": "give",
    "began": "begin",
    "begun": "begin",
    "wrote": "write",
    "written": "write",
    "drew": "draw",
    "drawn": "draw",
    "flew": "fly",
    "found": "find",
    "left": "leave",
    "felt": "feel",
    "told": "tell",
    "said": "say",
    "won": "win",
    "lost": "lose",
    "kids": "child",
    "kid": "child",
    "children": "child",
    "sang": "sing",
    "swam": "swim",
    "ate": "eat",
    "taught": "teach",
    "brought": "bring",
    "thought": "think",
    "spoke": "speak",
    "chose": "choose",
    "held": "hold",
    "built": "build",
    "sold": "sell",
    "paid": "pay",
    "heard": "hear",
    "mom": "mother",
    "mum": "mother",
    "dad": "father",
    "fest": "festival",
}
# The irregular verb forms above ("met Jean" says whom, not what someone is called).
VERB_FORMS = frozenset(_IRREGULAR) - lexicon.word_set("kids kid children mom mum dad fest")


def verb_form(word: str) -> bool:
    """A verb's past or -ing form ("ran", "happened", "going"); "pie-eating" is a thing's name."""
    return word in VERB_FORMS or (word.endswith(("ed", "ing")) and "-" not in word)


FIRST_PERSON = lexicon.word_set("i i'm i've i'll i'd me my mine myself we we're we've us our")
YOU = lexicon.word_set("you you're you've your yours yourself")


# A response and the conversation it is checked against may spell one word two ways ("your
# favourite superhero" against "Spider-Man has always been a favorite of mine"): the spelling
# says nothing of which event is meant, so British forms are read as the American ones. Each
# rule only joins words that differ in the spelling alone ("flour", "four", "tour", "hour":
# too short before "our" to be "colour").
_OUR_RE = re.compile(
    r"(?<=[a-z]{2}[b-df-hj-np-tv-z])our(?=s|ed|ing|ite|ites|able|ful|$)|(?<=vi)our"
)
_ISE_RE = re.compile(r"(?<=[a-z]{3})([iy])s(e|ed|es|ing|ation|ations|er|ers)$")
_SPELLED = {
    "practise": "practice",
    "practised": "practiced",
    "practises": "practices",
    "practising": "practicing",
    "centre": "center",
    "centres": "centers",
    "theatre": "theater",
    "theatres": "theaters",
    "metre": "meter",
    "metres": "meters",
    "litre": "liter",
    "litres": "liters",
    "fibre": "fiber",
    "grey": "gray",
    "programme": "program",
    "programmes": "programs",
    "jewellery": "jewelry",
    "cosy": "cozy",
    "catalogue": "catalog",
    "dialogue": "dialog",
    "pyjamas": "pajamas",
    "aeroplane": "airplane",
    "moustache": "mustache",
    "doughnut": "donut",
    "doughnuts": "donuts",
    "sceptical": "skeptical",
    "ageing": "aging",
    "licence": "license",
    "defence": "defense",
    "offence": "offense",
    "mould": "mold",
    "skilful": "skillful",
    "enrol": "enroll",
}


def american(word: str) -> str:
    """`word` (lower case) spelt as in American English: "favourite" is "favorite", "organising"
    is "organizing", "practise" is "practice"; any other word as it is."""
    if word in _SPELLED:
        return _SPELLED[word]
    return _ISE_RE.sub(r"\1z\2", _OUR_RE.sub("or", word))


@functools.lru_cache(maxsize=65536)  # a conversation repeats its words: read each once
def lemma(word: str) -> str:
    """A word's plain form, enough to match "went" with "go", "painted" with "paint" and
    "donated" with "donate" (both "donat": a final e is dropped, so only compare lemmas)."""
    base = _lemma(word)
    return base[:-1] if len(base) > 3 and base.endswith("e") else base


def _lemma(word: str) -> str:
    word = american(word.lower().replace("’", "'").removesuffix("'s").strip("'"))
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    for suffix, keep in (
        ("ies", "y"),
        ("ied", "y"),
        ("ing", ""),
        ("ed", ""),
        ("es", ""),
        ("s", ""),
    ):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            base = word[: -len(suffix)] + keep
            if suffix in ("ing", "ed") and len(base) > 3 and base[-1] == base[-2]:
                base = base[:-1]  # "running" -> "run", "planned" -> "plan"
            if suffix == "es" and not base.endswith(("sh", "ch", "x", "ss", "z")):
                base = word[:-1]  # "races" -> "race"
            if suffix == "s" and word.endswith(("ss", "us", "is")):
                return word
            return base
    return word


LIGHT_LEMMAS = frozenset(lemma(w) for w in _LIGHT)


def bare(word: str) -> str:
    """A word without its possessive ("Nate's", "the Murphys'")."""
    return word.removesuffix("'s").rstrip("'")


def words_of(text: str) -> list[str]:
    return _WORD_RE.findall(text.lower().replace("’", "'"))


_OWNED_RE = re.compile(
    r"\b(?P<owner>(?i:my|your|his|her|our|their)|[A-Z][\w-]+'s)\s+(?:[\w-]+\s+){0,2}?(?P<thing>[\w-]+)"
)


def owners(text: str, me: str | None, you: str | None) -> dict[str, str]:
    """Whose each thing is ("my sister Lena's birthday": Lena's), for the things said with an
    owner: "my" is `me`'s, "your" is `you`'s, "Lena's" is lena's."""
    out: dict[str, str] = {}
    for m in _OWNED_RE.finditer(text):
        raw = m.group("owner")
        owner = {"my": me, "our": me, "your": you}.get(raw.lower(), raw.lower().removesuffix("'s"))
        if raw.lower() in {"his", "her", "their"}:
            continue  # whose is not said
        if owner:
            out[lemma(m.group("thing"))] = owner
    return out
