"""Deterministic extraction: facts, goals, tasks and questions from event text (the names and
keywords an event mentions: mentions.py).

Pure functions over conversational English, no model and no I/O, fast enough to run on every
event of a vault. Each extractor is a handful of regular expressions over one sentence at a time.

Precision matters more than recall: the facts found here are written to `## Facts` lines and a
consistency checker later compares what is said against them, so a wrong fact costs more than a
missed one. Hence the refusals: questions, conditionals, hedges and negations give no fact, a
subject must be a definite noun phrase (`the deadline`, `my sister's name`, `Anna's birthday`) or
a name, and a value that is an opinion (`great`), a pronoun or a whole clause is dropped.
"""

from __future__ import annotations

import datetime as dt
import re

from brainiac.language import hedges, life_facts, when
from brainiac.language.facts import Fact
from brainiac.language.lexicon import (
    DETERMINERS,
    NAME,
    NEGATIONS_RE,
    PRONOUNS,
    STOP_WORDS,
    TIME_WORDS,
    TRAILING_PUNCT,
    WEEKDAYS,
    fact_value,
    is_name,
    negated_before,
    place_phrase,
    word_set,
)

# --- sentences -----------------------------------------------------------------------------------

_ABBREVIATIONS = word_set(
    "dr mr mrs ms prof st jr sr vs etc e.g i.e a.m p.m approx no fig inc ltd co mt ave"
)
_INITIALS_RE = re.compile(r"(?:[^\W\d_]\.)*[^\W\d_]")  # "j", "j.k" (the last dot is the end's)
_END_RE = re.compile(r"[.!?]+[\"')\]]*(?=\s|$)")
_QUESTION_END_RE = re.compile(r"\?[.!?]*[\"')\]]*$")


def sentences(text: str) -> list[str]:
    """Sentences, split after . ! ? followed by a space or the end, and at line breaks; "Dr.",
    "e.g." and initials ("J. Smith", "J.K. Rowling") do not end a sentence."""
    out: list[str] = []
    for line in text.replace("’", "'").split("\n"):
        start = 0
        for m in _END_RE.finditer(line):
            if m.group().startswith(".") and _is_abbreviation(line[start : m.start()]):
                continue
            _keep(out, line[start : m.end()])
            start = m.end()
        _keep(out, line[start:])
    return out


def _is_abbreviation(before: str) -> bool:
    words = before.split()
    if not words:
        return False
    last = words[-1].lower().lstrip("(\"'")
    return last in _ABBREVIATIONS or _INITIALS_RE.fullmatch(last) is not None


def _keep(out: list[str], sentence: str) -> None:
    sentence = sentence.strip().lstrip("-*>•").strip()
    if sentence:
        out.append(sentence)


# --- shared vocabulary ---------------------------------------------------------------------------

# Only something on a calendar "moves to" a value; "we moved the couch to the hall" is no fact.
_SCHEDULED = word_set(
    """
    deadline deadlines meeting meetings appointment call date launch release flight trip
    interview dinner lunch breakfast party wedding exam test event demo review presentation
    standup stand-up sync kickoff kick-off delivery vacation holiday holidays session class
    lesson concert game match show visit handover cutover go-live golive start end due
    milestone sprint check-in checkin workshop training ceremony reservation booking
    """
)
_PEOPLE = word_set(
    """
    sister brother mother mom mum father dad parents wife husband partner boyfriend girlfriend
    son daughter friend boss manager colleague cousin aunt uncle grandma grandmother grandpa
    grandfather roommate flatmate neighbour neighbor fiance fiancé fiancee fiancée kids family
    """
)
# "the problem is ...", "the thing is ...": a frame for a clause, not an attribute.
_FRAME_NOUNS = word_set(
    "thing things problem point issue idea question plan goal reason truth fact way one other rest"
)

# --- facts ---------------------------------------------------------------------------------------

_DET = r"(?:the|my|our|your|his|her|their)"
_WORD = r"[A-Za-zÀ-ÖØ-öø-ÿ][\w'&-]*"
# A definite noun phrase (`the Atlas deadline`, `my sister's name`, `Anna's birthday`) or a name.
_SUBJECT = (
    rf"(?P<subject>(?:\b{_DET}\s+|\b{NAME}'s\s+)(?:{_WORD}\s+){{0,3}}?{_WORD}"
    rf"|(?<![\w'])(?P<name>{NAME}(?:\s+{NAME})?))"
)
_COPULA_RE = re.compile(
    rf"{_SUBJECT}\s+(?:is|are|was|were)\s+(?:now\s+|still\s+|actually\s+|officially\s+)?"
    r"(?P<value>.+)$",
    re.I,
)
_CHANGED_RE = re.compile(
    rf"{_SUBJECT}\s+(?:has\s+been\s+|have\s+been\s+|had\s+been\s+|was\s+|were\s+|is\s+|got\s+)?"
    r"(?P<verb>moved|pushed|changed|postponed|rescheduled|shifted|delayed|brought)"
    # "moved again, to Friday": a repeated change is still the new value
    r"(?:\s+(?:again|once\s+more|yet\s+again))?,?"
    r"\s+(?:back\s+|forward\s+|up\s+|out\s+)?(?:(?:again|once\s+more),?\s+)?"
    r"(?:from\s+.+?\s+)?to\s+(?P<value>.+)$",
    re.I,
)
_MOVE_RE = re.compile(
    r"(?P<lead>\b[\w']+(?:\s+to)?\s+)?"
    r"\b(?P<verb>move|moved|push|pushed|shift|shifted|change|changed|postpone|postponed"
    r"|reschedule|rescheduled|delay|delayed|bring|brought)"
    rf"\s+{_DET}\s+(?P<subject>(?:{_WORD}\s+){{0,3}}?{_WORD})"
    r"\s+(?:back\s+|forward\s+|up\s+|out\s+)?(?:from\s+.+?\s+)?to\s+(?P<value>.+)$",
    re.I,
)
_PAST_TENSE = word_set("moved pushed shifted changed postponed rescheduled delayed brought")
_AGREED = word_set("agreed decided voted chose approved confirmed managed")
_NOT_DONE = word_set("to will shall can must let's please")
_HOME_RE = re.compile(
    r"\b(?:I|[Ww]e)(?:\s+(?:now\s+|currently\s+|still\s+)?live|\s+am\s+living|'m\s+living"
    r"|\s+are\s+living|'re\s+living|\s+have\s+been\s+living|'ve\s+been\s+living)"
    r"\s+in\s+(?P<value>.+)$"
    r"|\b(?:I|[Ww]e)(?:\s+just|\s+recently|\s+finally|\s+have|'ve)?\s+(?:moved|relocated)"
    r"\s+(?:back\s+)?to\s+(?P<value2>.+)$",
)
_WORK_RE = re.compile(
    r"\bI(?:\s+am|'m)?\s+(?:now\s+|currently\s+|still\s+)?(?:work|working)\s+(?:at|for)\s+"
    r"(?P<value>.+)$"
)
_ROLE_RE = re.compile(
    r"\bI(?:\s+am|'m)?\s+(?:now\s+|currently\s+|still\s+)?(?:work|working)\b"
    r"(?:\s+(?:at|for)\s+[^,;]+?)?\s+as\s+(?:an?|the)\s+(?P<value>.+)$"
)
_FAVOURITE_RE = re.compile(
    rf"\bmy\s+favou?rite\s+(?P<subject>(?:{_WORD}\s+){{0,2}}?{_WORD})\s+(?:is|are)\s+"
    r"(?P<value>.+)$",
    re.I,
)
_AGE_RE = re.compile(
    r"\bI(?:\s+am|'m)\s+(?P<value>\d{1,3})(?:\s+years?\s+old\b|\s*[.!]?$)"
    r"|\bI\s+(?:just\s+)?turned\s+(?P<value2>\d{1,3})\b"
)
# "My name is Sam and I live in Oslo" states two things.
_CLAUSE_RE = re.compile(r"\s*;\s*|,?\s+(?:and|but)\s+(?=(?:I|[Ww]e|[Mm]y|[Oo]ur|[Tt]he)\b)")


def facts(
    text: str,
    at: dt.datetime | None = None,
    source: str | None = None,
    speaker: str | None = None,
) -> list[Fact]:
    """Attribute and relation facts stated in `text`, in order, the first per key. `speaker`
    (the event's role) says whose the first-person ones are (`life_facts.whose`): the user's
    as said, another speaker's under their name, none of the assistant's."""
    out: dict[str, Fact] = {}
    for sentence in _plain_statements(text):
        for key, value in _sentence_facts(sentence.rstrip(TRAILING_PUNCT), at):
            fact = speaker_fact(key, value, speaker, at, source)
            if fact is not None:
                out.setdefault(fact.key, fact)
    return list(out.values())


def speaker_fact(
    key: str, value: str, speaker: str | None, at: dt.datetime | None, source: str | None
) -> Fact | None:
    """A (key, value) that `speaker` stated, as the vault keeps it (`life_facts.whose`): the
    user's as said, another speaker's under their name; None for the assistant's own, or when
    nothing is left of the key or the value."""
    kept = life_facts.whose(key, value, speaker)
    if kept is None:
        return None
    fact = Fact(*kept, at, source)
    return fact if fact.key and fact.value else None


# ", so I joined ...", "; but I ...": a clause that asserts on its own, whatever the one before it
# wondered ("it made me think how I could help, so I just joined a choir")
_ASSERTING_CLAUSE_RE = re.compile(r"\s*;\s*|,\s+(?:so|but)\s+")


def _plain_statements(text: str) -> list[str]:
    """The sentences of `text` that say something is so, and of a hedged one the clauses that
    do on their own: not a question, a conditional, nor a hedge."""
    out = []
    for sentence in sentences(text):
        if _plain_statement(sentence):
            out.append(sentence)
        elif not _asks(sentence) and not re.match(
            r"(?:if|unless|when|what\s+if)\b", sentence, re.I
        ):
            out += [c for c in _ASSERTING_CLAUSE_RE.split(sentence) if _plain_statement(c)]
    return out


def _plain_statement(sentence: str) -> bool:
    """Not a question, a conditional or a hedge: something said to be so."""
    if _asks(sentence):
        return False
    return not hedges.unasserted(sentence) and not sentence.lower().startswith(("what if", "when "))


def _sentence_facts(sentence: str, at: dt.datetime | None = None) -> list[tuple[str, str]]:
    """(key, value) pairs; "my" on a key or a value marks the speaker's own (`life_facts`)."""
    found: list[tuple[str, str]] = []
    for s in _CLAUSE_RE.split(sentence):
        specific = [f for fn in (_home, _work, _age, _favourite, _moved, _changed) for f in fn(s)]
        specific += life_facts.statements(s, at)
        # The generic "X is Y" only when nothing more specific matched ("my favorite color is
        # blue" is one fact, not a second one under the key "favorite color"); who someone is
        # ("my sister Lena") stands beside either.
        found.extend(specific or _copula(s, at))
        found.extend(life_facts.relations(s))
    return found


def _home(s: str) -> list[tuple[str, str]]:
    m = _HOME_RE.search(s)
    if m is None or negated_before(s, m.start()):
        return []
    value = place_phrase(m.group("value") or m.group("value2"))
    return [("my home", value)] if value else []


def _work(s: str) -> list[tuple[str, str]]:
    out = []
    m = _WORK_RE.search(s)
    if m is not None and not negated_before(s, m.start()):
        value = place_phrase(m.group("value"))
        if value:
            out.append(("I works at", value))
    r = _ROLE_RE.search(s)
    if r is not None and not negated_before(s, r.start()):
        role = fact_value(r.group("value"))
        if role and len(role.split()) <= 3:
            out.append(("my role", role))
    return out


def _age(s: str) -> list[tuple[str, str]]:
    m = _AGE_RE.search(s)
    if m is None or negated_before(s, m.start()):
        return []
    return [("my age", m.group("value") or m.group("value2"))]


def _favourite(s: str) -> list[tuple[str, str]]:
    m = _FAVOURITE_RE.search(s)
    if m is None or negated_before(s, m.start()):
        return []
    value = fact_value(m.group("value"))
    return [(f"my favourite {m.group('subject')}", value)] if value else []


def _moved(s: str) -> list[tuple[str, str]]:
    """`Anna agreed to move the Atlas deadline to Monday`: only something scheduled moves, and only
    in the past tense or after "agreed/decided to" (not "we should move ...")."""
    m = _MOVE_RE.search(s)
    if m is None or negated_before(s, m.start("verb")):
        return []
    lead = (m.group("lead") or "").lower().split()
    if m.group("verb").lower() not in _PAST_TENSE:
        if len(lead) != 2 or lead[0] not in _AGREED:
            return []
    elif lead and lead[0] in _NOT_DONE:
        return []
    subject = m.group("subject")
    value = fact_value(m.group("value"))
    if not value or subject.split()[-1].lower() not in _SCHEDULED:
        return []
    return [(subject, value)]


def _changed(s: str) -> list[tuple[str, str]]:
    """`The deadline has been pushed to Monday`; `My sister moved to Paris` (a person's home)."""
    m = _CHANGED_RE.search(s)
    if m is None or negated_before(s, m.start()):
        return []
    subject = m.group("subject") or ""
    name = m.group("name")
    head = (name or subject).split()[-1].lower().removesuffix("'s")
    if head in _SCHEDULED and subject:
        value = fact_value(m.group("value"))
        return [(subject, value)] if value else []
    is_person = head in _PEOPLE or (name is not None and is_name(name))
    if m.group("verb").lower() == "moved" and is_person:
        value = place_phrase(m.group("value"))
        return [(f"{_owner(name or subject)}'s home", value)] if value else []
    return []


def _owner(phrase: str) -> str:
    # "my sister" stays the speaker's sister (`life_facts.whose`); "the neighbour" is anyone's
    words = phrase.split()
    keep = words[0].lower() in {"my", "our"}
    return " ".join(words[1:] if words[0].lower() in DETERMINERS and not keep else words)


def _copula(s: str, at: dt.datetime | None = None) -> list[tuple[str, str]]:
    """`the deadline is Friday`, `my sister's name is Lena`, `Anna is my manager`; a relative
    time said at `at` made a date ("the opening night is tomorrow": its day), since the fact is
    read long after "tomorrow" has passed."""
    for m in _COPULA_RE.finditer(s):
        if negated_before(s, m.start()):
            return []
        name = m.group("name")
        raw = m.group("value")
        if name is not None:
            # A bare name as subject only for a relation to a person: "Anna is my manager" (not
            # "Dance is my stress fix", "Iron Man is my top pick").
            if not is_name(name) or not _RELATION_RE.match(raw):
                continue
            subject = name
        else:
            subject = _possessor(m.group("subject"))
            if _bad_subject(subject):
                continue
        value = fact_value(re.sub(r"^(?:on|at)\s+", "", raw))
        if value and (name is not None or _value_shaped(value)):
            dated = when.absolute(value, at) if at is not None else value
            return [(subject, re.sub(r"^(?:on|in) (?=\d)", "", dated) if dated != value else value)]
    return []


_RELATION_RE = re.compile(
    rf"(?:my|our)\s+(?:(?:best|close|old|new|older|younger|little|big)\s+)?(?:{'|'.join(sorted(_PEOPLE))})\b"
    r"(?!['’])",
    re.I,
)
_TIME_VALUE_RE = re.compile(
    rf"^(?:(?:this|next|last)\s+(?:{'|'.join(sorted(TIME_WORDS | WEEKDAYS))})\b"
    r"|(?:tomorrow|today|tonight|noon|midnight)\b)",
    re.I,
)


def _value_shaped(value: str) -> bool:
    """Whether `X is VALUE` states a value rather than describes X: a name, a date or a time, a
    number ("Friday", "12 May", "tomorrow", "40k", "Lena"). "The room was electric", "my store
    is open", "the best part was the energy", "customers are key": descriptions and opinions,
    not facts (precision first; `my favourite X is Y` has a rule of its own)."""
    words = value.split()
    if any(c.isdigit() for c in value) or _TIME_VALUE_RE.match(value):
        return True
    head = words[0].lstrip("\"'“(")
    return head[:1].isupper() and head.lower() not in PRONOUNS and head.lower() not in STOP_WORDS


_POSSESSOR_RE = re.compile(rf"(?<![\w'])({NAME})'s\s+\S")


def _possessor(subject: str) -> str:
    """ "my sister Lena's birthday" is Lena's birthday, not the speaker's: a named owner inside
    the phrase is whose the attribute is, and the words before it only say who they are."""
    m = _POSSESSOR_RE.search(subject)
    if m is None or m.start() == 0 or not is_name(m.group(1)):
        return subject
    return subject[m.start() :]


def _bad_subject(subject: str) -> bool:
    words = subject.split()
    if words[0].lower() in {"his", "her", "their", "your"}:
        # "her name is Shadow": whose is not said; "your son is okay": the listener's, said
        # back to them, not news about anyone
        return True
    if words[0].lower() not in DETERMINERS:
        return not is_name(words[0].removesuffix("'s"))  # "Anna's birthday", not "It's name"
    rest = [w.lower() for w in words[1:]]
    return rest[-1] in _FRAME_NOUNS or any(
        w in STOP_WORDS and w not in {"of", "next"} for w in rest
    )


# --- goals, tasks, questions ---------------------------------------------------------------------

_GOAL_RES = (
    re.compile(
        r"\b(?:I|we)(?:(?:\s+really|\s+still|\s+also|\s+eventually|\s+finally)?"
        r"\s+(?:want|would\s+like|hope|intend|aim|plan)\s+to|\s+wanna|'d\s+like\s+to"
        r"|(?:\s+am|'m|\s+are|'re)\s+planning\s+to)\s+(?P<what>.+)$",
        re.I,
    ),
    re.compile(r"\b(?:my|our)\s+(?:\w+\s+)?(?:goal|aim|plan)\s+is\s+to\s+(?P<what>.+)$", re.I),
    re.compile(r"\bwe\s+need\s+to\s+(?P<what>.+)$", re.I),
)
_TASK_RES = (
    # Asked for, not said of something ("Moments like these remind me to appreciate ..."):
    re.compile(
        r"^(?:(?:please|pls|can|could|would|will|you|and|also|oh|hey|so|just)[\s,]+)*"
        r"remind\s+me\s+to\s+(?P<what>.+)$",
        re.I,
    ),
    re.compile(r"\b(?:don't|do\s+not)\s+(?:let\s+me\s+)?forget\s+to\s+(?P<what>.+)$", re.I),
    re.compile(
        r"\bI(?:(?:\s+really|\s+still|\s+also)?\s+(?:have\s+to|need\s+to|have\s+got\s+to|must)"
        r"|'ve\s+got\s+to)\s+(?P<what>.+)$",
        re.I,
    ),
    re.compile(r"^(?:TODO|To-?do)\s*:\s*(?P<what>.+)$", re.I),
)
_PHRASE_STOP_RE = re.compile(
    r"\s*(?:[;(]|:(?!\d))|\s+[-–—]\s+|,\s*|\s+(?:because|but|though|although|so\s+that|and\s+then)\b"
)
# "I want to say thanks" is conversation, not a goal.
_TALK_VERBS = word_set(
    "say ask know thank tell mention clarify confirm understand add apologize apologise share "
    "be do go see it"
)
_MAX_PHRASE_WORDS = 15
# Words that stand for something said elsewhere, or for the one spoken to: a goal or task holding
# one ("Help make that happen", "Pass it on to others", "Take breaks when you need to destress")
# says nothing when read alone under Goals or Tasks, weeks later.
_POINTING = word_set("it its them they their theirs he him his she her hers you your yours")
_DEMONSTRATIVES = word_set("this that these those")
_TIMES = word_set(
    "morning afternoon evening night week weekend month year time summer winter spring fall "
    "autumn monday tuesday wednesday thursday friday saturday sunday"
)


def goals(text: str) -> list[str]:
    """What the user (or "we") wants to achieve: "I want to run a marathon" → "Run a marathon"."""
    return _phrases(text, _GOAL_RES, ())


def tasks(text: str) -> list[str]:
    """Things to do: "Remind me to call the landlord tomorrow" → "Call the landlord tomorrow"."""
    # "Can you remind me to call Anna?" is a request worth keeping, question or not.
    return _phrases(text, _TASK_RES, _TASK_RES[:1])


def _phrases(
    text: str,
    patterns: tuple[re.Pattern[str], ...],
    question_patterns: tuple[re.Pattern[str], ...],
) -> list[str]:
    out: dict[str, None] = {}
    for sentence in sentences(text):
        asks = _asks(sentence)
        if re.match(r"(?:if|unless|when|what\s+if)\b", sentence, re.I):
            continue
        for pattern in question_patterns if asks else patterns:
            m = pattern.search(sentence)
            if m is None or NEGATIONS_RE.search(sentence[: m.start()]):
                continue
            phrase = _phrase(m.group("what"))
            if phrase:
                out.setdefault(phrase, None)
                break
    return list(out)


def _phrase(raw: str) -> str | None:
    m = _PHRASE_STOP_RE.search(raw)
    phrase = (raw[: m.start()] if m else raw).strip().rstrip(TRAILING_PUNCT)
    phrase = re.sub(r"\s+please$", "", phrase, flags=re.I)
    words = phrase.split()
    if not words or len(words) > _MAX_PHRASE_WORDS:
        return None
    if words[0].lower() in _TALK_VERBS or words[0].lower() in PRONOUNS:
        return None
    if _points_elsewhere([w.lower().strip(TRAILING_PUNCT + "'\"") for w in words]):
        return None
    return phrase[0].upper() + phrase[1:]


def _points_elsewhere(words: list[str]) -> bool:
    """Whether the phrase leans on what was said before it: a pronoun, or a demonstrative as
    one (the phrase's last word, or right after its verb: "try baking that", "make that happen"
    and not "this weekend"); further on, "that" joins a clause ("a place that teaches kids")."""
    if any(w in _POINTING for w in words):
        return True
    last = len(words) - 1
    return any(
        w in _DEMONSTRATIVES and (i == last or (i <= 2 and words[i + 1] not in _TIMES))
        for i, w in enumerate(words)
    )


def questions(text: str) -> list[str]:
    return [s for s in sentences(text) if _asks(s)]


def _asks(sentence: str) -> bool:
    """Ends in a question mark ("Really?!" and "Friday?)" too)."""
    return _QUESTION_END_RE.search(sentence) is not None
