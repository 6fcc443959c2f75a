"""A sentence said in the first person, as said of the speaker by name: "I also use a whiteboard
to plan my routines" → "Caroline also uses a whiteboard to plan their routines".

The speaker is named once, for the first "I", "me" or "my"; after that "they", "them" and
"their" (singular "they": the speaker's gender is not known), with the verb after the first
"I" said of one person ("I also use" → "also uses") and one after a later "I" said as "they"
takes it ("I was" → "they were"). "We" names the speaker and their family (or others) once and
is "they" after. Pure text: no I/O.
"""

from __future__ import annotations

import re

from brainiac.text.lexicon import word_set

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


def third_person(sentence: str, name: str, family: bool = False) -> str:
    """`sentence` as said about `name`: "I", "me" and the first "my" name them, a later "my" is
    "their"; verbs agree ("I also use" → "also uses"); "we" is them and their family (or others)."""
    s = sentence.replace("’", "'")
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
