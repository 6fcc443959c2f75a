"""Which remembered events a sentence is about: the events among the search's hits
(`EventLine`, at most `_CANDIDATES`, the lines llm_check.py sends too), whom the sentence is
about (`subject_of`), how closely each event holds its relation words (`align`: said by or
naming the subject, most of the sentence's content words, rare words weighing more), and the
line an event is on when a finding cites it (`line_of`).

Not whether an aligned event agrees (evidence/__init__.py decides that).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from brainiac.guard.evidence.values import Period, Values, read, relation_words
from brainiac.guard.evidence.words import (
    FIRST_PERSON,
    LIGHT_LEMMAS,
    VERB_FORMS,
    YOU,
    bare,
    lemma,
    owners,
    words_of,
)
from brainiac.language import extract, lexicon
from brainiac.language.life_facts import USER_ROLES

if TYPE_CHECKING:
    from brainiac.search.index_documents import Hit
    from brainiac.search.memory_protocol import MemoryLike

_THIRD_PERSON = lexicon.word_set("he she they his her their he's she's they're")
# words before the verb of a sentence whose "I" is dropped ("Just started", "Finally got")
_LEADS = lexicon.word_set("just finally recently also still actually so and but oh")
# what follows a subject that opens a sentence ("Max is", "She has")
_SAYS_OF = lexicon.word_set("is was has had loves likes are were")
CAPTION_RE = re.compile(r"\[image:[^\]]*\]")  # a shared picture's caption, a model's guess
_JOINT = frozenset({"you and", "and you", "and i", "me and", "i and"})
_CANDIDATES = 40  # events compared, best first
# The share of the sentence's relation words an event must hold to confirm it (an agreement
# costs nothing if wrong: it only withholds); to contradict it, it needs more (evidence/__init__).
_RELATED = 0.4


@dataclass(frozen=True)
class EventLine:
    """A remembered event as the index found it (llm_check.py sends the same lines)."""

    id: str
    path: str
    role: str
    at: dt.datetime | None
    text: str
    # An observation (a note's `## Observations` line, evidence/observations.py) rather than the
    # turn itself: `id` is the event it was read from, `line` where it is written (1-based).
    observation: bool = False
    line: int | None = None
    # the turns this one answers (exchange.py): which event it is, not what it states
    context: str = ""


@dataclass(frozen=True)
class Aligned:
    """An event aligned with a sentence: its sentence most about it, how much of the sentence's
    relation it holds, and the values it states."""

    event: EventLine
    sentence: str  # the event's sentence most about the claim
    score: float  # the share of the claim's relation words the event holds
    values: Values
    timed: bool  # the event states a time of its own (else its own time stands in)
    core: bool  # its sentence shares a word with the claim that is neither light nor a name


def event_lines(hits: Sequence[Hit]) -> list[EventLine]:
    """The distinct events among search hits, best first, at most `_CANDIDATES`."""
    seen: set[str] = set()
    out: list[EventLine] = []
    for hit in hits:
        if len(out) >= _CANDIDATES:
            break
        if hit.event_id in seen or not hit.text:
            continue  # an event is indexed where it is logged and where a note quotes it
        seen.add(hit.event_id)
        out.append(EventLine(hit.event_id, hit.path, hit.role, hit.at, hit.text))
    return out


def subject_of(sentence: str, speakers: set[str]) -> str | None:
    """Whom the sentence is about: the first speaker it names, the user for "you"."""
    words = words_of(sentence)
    for i, w in enumerate(words):
        base = bare(w)
        if base in speakers:
            if _JOINT & {" ".join(words[max(i - 2, 0) : i]), " ".join(words[i + 1 : i + 3])}:
                return None  # "you and Melanie", "Melanie and I": either may have said it
            return base
    if YOU & set(words) and "user" in speakers and not speakers - {"user", "assistant"}:
        return "user"
    # "you" in a memory of a conversation between named people (no `user` role): whoever is
    # spoken to is not known, so any speaker may be meant
    return None


def _share(shared: set[str], weights: dict[str, float]) -> float:
    return sum(weights[w] for w in shared) / (sum(weights.values()) or 1.0)


def align(
    event: EventLine,
    subject: str | None,
    relation: set[str],
    weights: dict[str, float],
    names: frozenset[str],
    owned: dict[str, str],
    speakers: frozenset[str] = frozenset(),
) -> Aligned | None:
    """`event` aligned with a sentence about `subject` saying `relation` (module docstring);
    `speakers`: the conversation's, whose names in a reply ("Thanks, Caroline!") state nothing."""
    role = event.role.lower()
    text = event.text
    lowered = set(words_of(text))
    if subject is not None:
        # a speaker's turn is about them when it says "I", or, between named people, when it
        # speaks to no one: chat drops the pronoun ("Just started doing aerial yoga, it's
        # great"), where a user's message to an assistant is often a note about someone else
        # ("Gary is sending someone Monday"); a turn that says "you" outside its questions may
        # be about the one spoken to
        by_subject = role == subject and (
            bool(FIRST_PERSON & lowered)
            or (role not in USER_ROLES and _drops_i(text, bool(event.context)))
        )
        names_subject = subject in {bare(w) for w in lowered}
        if not (by_subject or names_subject):
            return None
    best: tuple[float, str, Values, bool] | None = None
    # Words first (cheap), values only for a turn that holds enough of the claim's words.
    words_all = {lemma(w) for w in lowered}
    # a reply's question says what it is about ("How often do you work out?" "Three times")
    turn_score = _share(relation & words_all, weights)
    # only a turn that is not about the sentence on its own words is read as a reply: one
    # that is keeps the verdict it had, and the turns after it do not take its words
    replying = turn_score < _RELATED
    asked: set[str] = set()
    if replying:
        asked = {lemma(w) for w in words_of(event.context)} & relation - {role}
        if _share(relation & (words_all | asked), weights) < _RELATED:
            return None
    whole = read(text, event.at)
    for sentence in extract.sentences(text):
        if subject is not None and role != subject:
            # Another speaker's turn is about the subject only where it names them and does not
            # speak of itself ("Hey Maria! My car broke down" is about the speaker's car).
            words = set(words_of(sentence))
            if subject not in {bare(w) for w in words} or FIRST_PERSON & words:
                continue
        if sentence.startswith("[image:") or sentence.rstrip().endswith("?"):
            continue  # a picture's caption, a question: not something said to be so
        theirs = owners(sentence, role, None)
        if any(theirs.get(w, owner) != owner for w, owner in owned.items()):
            continue  # "your birthday" is not "my sister Lena's birthday"
        values = read(sentence, event.at)
        shared = relation & relation_words(sentence, values, {role})
        if replying and (shared - LIGHT_LEMMAS or _states(values, speakers | {role})):
            shared |= asked  # "It was Matt Patterson!": about what it was asked
        if not shared - LIGHT_LEMMAS:
            continue
        score = _share(shared, weights)
        # Names say who took part, not what happened ("Max" in both: not the same event).
        named = {lemma(n) for n in names}
        # (a sentence whose only words are a name, "you were in Paris on ...", has it as core)
        core = bool(shared - LIGHT_LEMMAS - named) or bool(
            shared and not relation - LIGHT_LEMMAS - named
        )
        if best is None or (score, core) > (best[0], best[3]):
            best = (score, sentence, values, core)
    if best is None:
        return None
    score, sentence, values, core = best
    # The turn's other sentences often carry the time ("It was awesome! I talked about ...");
    # a reply aligned only through its question states no time but its own
    timed = bool(values.periods)
    if replying and not timed:
        return Aligned(event, sentence, max(score, turn_score * 0.9), values, timed, core)
    if not timed and len({(p.start, p.end) for p in whole.periods}) == 1:
        values = dataclasses.replace(values, periods=whole.periods)
        timed = True
    if not timed and event.at is not None:
        day = event.at.date()
        values = dataclasses.replace(values, periods=(Period(day - dt.timedelta(days=1), day),))
    return Aligned(event, sentence, max(score, turn_score * 0.9), values, timed, core)


def _states(values: Values, speakers: frozenset[str] | set[str]) -> bool:
    """Whether a sentence states a value: a date, a count, a name other than a speaker's."""
    return bool(values.periods or values.numbers or values.names - speakers)


def _drops_i(text: str, answers: bool) -> bool:
    """Whether a turn that never says "I" is still about its speaker: a sentence of it opens
    on what the speaker did ("Just started doing aerial yoga", "Been busy", "Took a trip"), or
    it `answers` the other's question ("There were 9 people there"); and it speaks to no one
    ("you", outside its questions: "Congrats on the new job!" is about the one spoken to,
    said or not) and no sentence opens on someone else ("Max is a good boy", "She loves it").
    """
    dropped = answers
    for sentence in extract.sentences(text):
        if sentence.rstrip().endswith("?"):
            continue
        words = words_of(sentence)
        if YOU & set(words):
            return False
        if words and (words[0] in _THIRD_PERSON or _opens_on_subject(words)):
            return False
        acts = [w for w in words[:3] if w not in _LEADS]
        dropped = dropped or bool(acts and _did(acts[0]))
    return dropped


def _did(word: str) -> bool:
    """A verb's past or -ing form opening a sentence: what the speaker did or is doing."""
    return (
        word in VERB_FORMS or word == "been" or (word.endswith(("ed", "ing")) and "-" not in word)
    )


def _opens_on_subject(words: list[str]) -> bool:
    """Whether a sentence opens on what it is about ("Max is a good boy", "Yoga is great"),
    not on a greeting or a dropped "I" ("Hey John!", "Just started doing yoga")."""
    first = bare(words[0])
    if first in lexicon.COMMON_STARTS or first in lexicon.STOP_WORDS:
        return False
    return len(words) > 1 and words[1] in _SAYS_OF


def line_of(memory: MemoryLike, event: EventLine) -> int | None:
    """The 1-based line of the event in its file (read only when a finding cites it)."""
    if event.line is not None:
        return event.line
    try:
        text = memory.vault.read(event.path).text
    except (OSError, ValueError):
        return None
    mark = f"^{event.id}"
    for i, line in enumerate(text.splitlines(), 1):
        if mark in line:
            return i
    return None
