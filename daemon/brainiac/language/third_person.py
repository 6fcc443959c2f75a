"""A sentence said in the first person, as said of the speaker by name: "I also use a whiteboard
to plan my routines" → "Caroline also uses a whiteboard to plan their routines".

The speaker is named once, for the first "I", "me" or "my"; after that "they", "them" and
"their" (singular "they": the speaker's gender is not known), with the verb after the first
"I" said of one person ("I also use" → "also uses") and one after a later "I" said as "they"
takes it ("I was" → "they were"). "We" names the speaker and their family (or others) once and
is "they" after; a "we" the sentence itself says the company of ("we went camping with my fam")
is the speaker alone, and "we ... both" said to a listener is the speaker and the listener.
Pure text: no I/O.
"""

from __future__ import annotations

import re

from brainiac.language.lexicon import word_set

_ADVERBS = word_set(
    """
    also just really recently finally actually still always never usually often even already
    totally sometimes now currently mostly truly definitely only absolutely literally honestly
    """
)
# Verb forms the same after "I" and after a name: the past, modals, negations.
AS_IS = word_set(
    """
    was were did had could would should might must can will may shall used got went made took
    saw found felt thought bought brought came gave ran won lost met left kept told said knew
    began wrote put let hit cut set built sent spent taught caught heard held paid sat stood
    became drew grew threw flew drove rode swam sang ate fell forgot chose broke spoke woke wore
    hung learnt learned slept meant fed led shot sold started tried didn't wasn't couldn't
    wouldn't can't won't shouldn't hadn't mustn't needn't finally
    """
)
# The company a "we" went with, named in its own clause: "we" is then the speaker alone ("we
# went camping with my fam" is not "Melanie and family went camping with their fam").
_COMPANY_RE = re.compile(
    r"[^,;:.!?]*?\bwith\s+(?:(?:my|our)\s+(?:\w+\s+)?(?:fam|family|kids|children|son|sons|daughter|"
    r"daughters|husband|wife|partner|hubby|friends?|mom|dad|parents|sisters?|brothers?|siblings|"
    r"cousins|grandparents|folks|gang|crew|buddies|pals|colleagues|coworkers|team)"
    r"|the\s+(?:fam|family|gang|crew))\b",
    re.IGNORECASE,
)
# "Our" of a place the speaker shares with others: "how it affects our area".
_OUR_PLACE_RE = re.compile(
    r"\bour\s+(area|community|city|town|neighborhood|neighbourhood|country|district|region)\b",
    re.IGNORECASE,
)
_WE_RE = re.compile(r"\b[Ww]e('re|'ve|'d|'ll|)\b(\s+(?:are|were)\b)?")
# "We can both ...", "we'll both": the speaker and the one spoken to.
_BOTH_RE = re.compile(r"^(?:'re|'ll|'ve|'d)?(?:\s+(?!both\b)\w+){0,2}\s+both\b", re.IGNORECASE)
_BASE_ED = word_set("need feed bleed proceed succeed exceed speed breed seed shred wed embed")
_IRREGULAR = {
    "am": "is",
    "have": "has",
    "do": "does",
    "go": "goes",
    "don't": "doesn't",
    "haven't": "hasn't",
    "'m": " is",
    "'ve": " has",
}


def third_person(sentence: str, name: str, family: bool = False, listener: str = "") -> str:
    """`sentence` as said about `name`: "I", "me" and the first "my" name them, a later "my" is
    "their"; verbs agree ("I also use" → "also uses"); "we" is them and their family (or others),
    them alone when the clause names their company, them and `listener` for "we ... both"."""
    s = _alone(sentence.replace("’", "'"))
    s = re.sub(r"\bI'm\b|\bI am\b", "I 'm", s)
    s = re.sub(r"\bI've\b|\bI have\b", "I 've", s)
    s = re.sub(r"\bI'd\b", "I would", s)
    s = re.sub(r"\bI'll\b", "I will", s)
    adverb = "(?:" + "|".join(_ADVERBS) + r"|\w+ly)"
    subject = r"\bI((?:\s+" + adverb + r")*)\s+(['\w]+(?:-\w+)?)"
    if s.startswith("I "):  # "I went and I loved it": one subject, said once
        joined = r"\b(and|but|then),?\s+" + subject[2:]
        s = "I " + re.sub(joined, lambda m: f"{m.group(1)}{_agreed(m.group(2), m.group(3))}", s[2:])
    seen: list[str] = []
    # Others called "they", "he" or "she" in the sentence: the speaker stays named.
    others = re.search(
        r"\b(?:they|them|their|they're|they've|he|him|his|she|her)\b", sentence, re.IGNORECASE
    )

    def subjects(m: re.Match[str]) -> str:
        # The first "I" is named ("Jon is", "Jon goes"), a later one is "they" ("they were").
        seen.append(m.group(0))
        if len(seen) == 1 or others:
            return "\x05" + _agreed(m.group(1), m.group(2))
        plural = {"am": "are", "'m": "are", "was": "were", "'ve": "have", "wasn't": "weren't"}
        return f"\x06{m.group(1)} {plural.get(m.group(2).lower(), m.group(2))}"

    s = re.sub(subject, subjects, s)
    named = name in s  # before "we" names them
    group = f"{name} and {'family' if family else 'others'}"
    first_we = _WE_RE.search(s)
    if listener and first_we is not None and _BOTH_RE.match(s[first_we.end() :]):
        group = f"{name} and {listener}"  # "so we can both share desserts"
    verbs = {"'re": " are", "'ve": " have", "'d": " would", "'ll": " will", "": ""}
    groups: list[str] = []

    def we(m: re.Match[str]) -> str:  # the group named once, "they" after
        groups.append(m.group(0))
        return group + verbs[m.group(1).lower()] if len(groups) == 1 else "they" + m.group(1)

    s = re.sub(r"\b[Ww]e('re|'ve|'d|'ll|)\b", we, s)
    s = re.sub(r"\bmyself\b|\bourselves\b", "themself", s, flags=re.I)
    s = re.sub(r"\b(?:mine|ours)\b", f"{name}'s", s, flags=re.I)
    s = re.sub(r"\b(?:[Mm]y|[Oo]ur)\b", "\x01", s)
    s = re.sub(r"(?<![\w-])me(?![\w-])", "\x02", s)
    s = re.sub(r"(?<![\w-])us(?![\w-])", "\x04", s)
    s = re.sub(r"\bI\b", "\x05", s)
    out: list[str] = []
    said = False  # whether the name has stood for "I" or "me" yet
    for part in re.split(r"([\x01\x02\x04\x05\x06])", s):
        if part == "\x01":
            out.append("their" if named else f"{name}'s")
            named = True
        elif part in ("\x05", "\x06"):  # the first "I" names them, a later one is "they"
            out.append("they" if part == "\x06" and said else name)
            named = said = True
        elif part == "\x02":  # "me" too: in "they gave me a medal", "them" is anyone
            out.append("them" if said and not others else name)
            named = said = True
        elif part == "\x04":  # "us" names them once, then it is a wider "them"
            out.append("them" if named else name)
            named = True
        else:
            out.append(part)
            named = named or name in part  # "we ... our trip": "their trip" once named
    return "".join(out)


def placed(statement: str, turn: str) -> str:
    """`statement` with "our" said as the place's when its `turn` speaks of "our area" (or town,
    community ...) and the statement is the speaker's alone: "I'm upset seeing the state of our
    education" → "... of the area's education", not the speaker's own ("our area" itself stays
    theirs)."""
    place = _OUR_PLACE_RE.search(turn)
    if place is None or re.search(r"\b(?:we|we're|we've|us)\b", statement, re.I):
        return statement
    noun = place.group(1).lower()

    def ours(m: re.Match[str]) -> str:
        if m.group(1).lower() == noun or _COMPANY_RE.match(f"with my {m.group(1)}"):
            return m.group(0)  # "our area", "our kids": the speaker's
        return f"the {noun}'s {m.group(1)}"

    return re.sub(r"\b[Oo]ur\s+([\w'-]+)", ours, statement)


def _alone(s: str) -> str:
    """`s` with its first "we" said as "I" when its clause names the company it went with: "we
    went camping with my fam" → "I went camping with my fam"."""
    m = _WE_RE.search(s)
    if m is None or not _COMPANY_RE.match(s, m.end()):
        return s
    contracted = {"'re": "'m"}.get(m.group(1).lower(), m.group(1))
    verb = {"are": "am", "were": "was"}.get((m.group(2) or "").strip().lower(), "")
    return f"{s[: m.start()]}I{contracted}{' ' + verb if verb else ''}{s[m.end() :]}"


def _agreed(adverbs: str, verb: str) -> str:
    """Adverbs and verb as said of one person: " also use" → " also uses", " color-code" →
    " color-codes"."""
    if "-" in verb:  # a compound verb agrees at its end
        head, _, tail = verb.rpartition("-")
        agreed = _agreed(adverbs, tail)
        return f"{adverbs} {head}-{agreed[len(adverbs) + 1 :]}"
    low = verb.lower()
    if low in _IRREGULAR:
        return f"{adverbs} {_IRREGULAR[low].strip()}"
    past = low.endswith("ed") and low not in _BASE_ED
    prefixed = re.sub(r"^(?:re|over|under|out|mis|up|with|for)", "", low)  # "retook"
    if prefixed in AS_IS and prefixed != low:
        past = True
    if low in AS_IS or past or low.endswith("n't") or not low.replace("'", "").isalpha():
        return f"{adverbs} {verb}"
    if low.endswith(("s", "sh", "ch", "x", "z", "o")):
        return f"{adverbs} {verb}es"
    if low.endswith("y") and low[-2:-1] not in ("a", "e", "i", "o", "u"):
        return f"{adverbs} {verb[:-1]}ies"
    return f"{adverbs} {verb}s"
