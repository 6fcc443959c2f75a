"""The observations a configured model writes, in place of the rules' (issue 30: with a model,
the model writes the observations; without one, language/observe.py's rules do, offline).

The rules take one sentence of a turn as it was said and put it in the third person; a model can
say what a turn tells however it was said ("Got the keys today!!" → "Caroline moved into her new
flat on 2023-05-08."). So with an endpoint configured, the jobs ask it once per batch of events
(a session's events, at most `_BATCH_EVENTS` of them and `_BATCH_CHARS` of text: one request,
not one per turn), each event given with its id, its date and its speaker, and keep its lines
as observe.py writes the rules' (`observe.Observation`, the event's date and id in the tail).

The model's answer is checked line by line, as a person would check a note-taker's: a line must
name an event of the batch (a model may invent an id), not one of the assistant's, and be one
statement about its speaker, naming them: one line, no question, no "X said ...", no pleasantry,
not a fragment, no block id or link (the tail is written here). What fails is dropped; relative
times the model left are made absolute from the event's time, as the rules do (`when.absolute`).
An event the model wrote nothing for has no observation: the model judged it says nothing.

The fallback: when the model does not answer, answers no JSON array, or gives a batch only
unusable lines, that batch's events get the rules' observations (`LLM` logs one line). No event
is ever lost by this: observations sit beside the events, which stay in the Event Log or the
note's Sources whatever is written here.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from brainiac.formats import events as ev
from brainiac.formats.observation_lines import ID
from brainiac.language import extract, observe, when
from brainiac.language.life_facts import NOBODY_ROLES, USER_ROLES
from brainiac.store import projects

if TYPE_CHECKING:
    from brainiac.model.llm import LLM

log = logging.getLogger(__name__)

Observer = Callable[[ev.Event], list[observe.Observation]]

_BATCH_EVENTS = 40  # a session's events asked about in one request, at most
_BATCH_CHARS = 10_000  # and their text (llm.MAX_INPUT_CHARS with room for the instructions)
_EVENT_CHARS = 1_500  # one event's text as sent; a long paste is cut with "…"
_MIN_WORDS = 3
_MAX_WORDS = 45
_MAX_CHARS = 320

# What no observation is: a question, speech reported ("Caroline said ..."), a pleasantry, a
# block id, link or tail (the line's tail is written here, from the event itself).
_REPORTED_RE = re.compile(
    r"^\S+(?:\s+\S+)?\s+(?:said|says|asked|asks|told|tells|replied|replies|answered|responded|"
    r"thanked|greeted|greets|congratulated|congratulates|wished|wishes|mentioned|mentions|"
    r"expressed|expresses|shared that)\b",
    re.IGNORECASE,
)
_PLEASANTRY_RE = re.compile(
    r"^(?:hi|hello|hey|thanks|thank you|congrat|good luck|bye|goodbye|see you|take care|"
    r"nice to|glad to|great to|wow|sure|ok|okay|yes|no)\b",
    re.IGNORECASE,
)
_MARKUP_RE = re.compile(rf"\^|\[\[|\]\]|{ID}|\n")
_TAIL_RE = re.compile(r"\s*\(\d{4}-\d\d-\d\d[^()]*\)\s*$")  # "(2023-05-08)" the model copied


def observer(
    llm: LLM,
    events: Sequence[ev.Event],
    user: str = "the user",
    before: Mapping[str, ev.Event] | None = None,
    earlier: Mapping[str, ev.Event] | None = None,
) -> Observer:
    """The observations of each of `events` as the model writes them, asked once per batch up
    front; the rules' for an event whose batch the model did not answer (and for any event not
    among `events`), each read with the turn `before` it and the speaker's own turn `earlier`
    (by event id). `user` is how the vault's user is named, as in observe.observations."""
    written: dict[str, list[observe.Observation]] = {}
    for batch in batches(events):
        read = observations(llm, batch, user)
        if read is not None:
            written.update(read)

    def observe_event(event: ev.Event) -> list[observe.Observation]:
        if event.id in written:
            return written[event.id]
        return observe.observations(
            event, user, (before or {}).get(event.id), (earlier or {}).get(event.id)
        )

    return observe_event


def batches(events: Sequence[ev.Event]) -> list[list[ev.Event]]:
    """`events` in batches of one session (or one day outside a session) each, in order, at
    most `_BATCH_EVENTS` events and `_BATCH_CHARS` of text a batch."""
    groups: dict[str, list[ev.Event]] = {}
    for e in events:
        groups.setdefault(projects.group_key(e), []).append(e)
    out: list[list[ev.Event]] = []
    for group in groups.values():
        batch: list[ev.Event] = []
        size = 0
        for e in group:
            length = len(_message(e))
            if batch and (len(batch) >= _BATCH_EVENTS or size + length > _BATCH_CHARS):
                out.append(batch)
                batch, size = [], 0
            batch.append(e)
            size += length
        if batch:
            out.append(batch)
    return out


def observations(
    llm: LLM, batch: Sequence[ev.Event], user: str = "the user"
) -> dict[str, list[observe.Observation]] | None:
    """Event id -> the model's observation of it (an empty list: none worth writing), for every
    event of `batch`; None when the batch falls back to the rules (the reason logged)."""
    asked = [e for e in batch if _owner(e, user) is not None]
    if not asked:
        return {e.id: [] for e in batch}
    answer = llm.observe([_message(e) for e in batch])
    if answer is None:
        return None
    by_id = {e.id: e for e in asked}
    written: dict[str, list[observe.Observation]] = {e.id: [] for e in batch}
    kept = 0
    for source, said in answer:
        event = by_id.get(source)
        if event is None or written[source]:
            continue  # an id it was not given (or the assistant's), or a second line for one
        owner = _owner(event, user)
        text = checked(said, owner or "", event)
        if owner is not None and text is not None:
            written[source] = [observe.Observation(owner, text, event.at, event.id)]
            kept += 1
    if answer and not kept:
        # A model that misses the format misses it for every line: its silence is no judgement.
        llm.last_error = "no usable observation in the answer"
        log.warning("LLM observations failed (%s); using the deterministic method", llm.last_error)
        return None
    return written


def checked(said: str, owner: str, event: ev.Event) -> str | None:
    """The model's line as the vault writes it (relative times made absolute, one full stop),
    or None when it is no observation of `owner`'s: several lines or sentences, a question,
    speech reported, a pleasantry, markup, too short or too long, or not naming them."""
    if _MARKUP_RE.search(_TAIL_RE.sub("", said.strip())):
        return None
    text = " ".join(_TAIL_RE.sub("", said).split()).lstrip("-*• ").strip()
    words = text.split()
    if not _MIN_WORDS <= len(words) <= _MAX_WORDS or len(text) > _MAX_CHARS:
        return None
    if "?" in text or _REPORTED_RE.match(text) or _PLEASANTRY_RE.match(text):
        return None
    if len(extract.sentences(text)) > 1:  # a line per statement
        return None
    if not _names(text, owner):
        return None
    if event.at is not None:
        text = when.absolute(text, event.at)
    text = text.rstrip(" .!,;:…-") + "."
    return text[0].upper() + text[1:]


def _owner(event: ev.Event, user: str) -> str | None:
    """Whose an event's observation is (as observe.observations names them); None for the
    assistant's and the tools' events, which give none."""
    role = " ".join((event.role or "").split())
    if role.casefold() in NOBODY_ROLES:
        return None
    return user if not role or role.casefold() in USER_ROLES else role


def _names(text: str, owner: str) -> bool:
    """Whether `text` names `owner` (their whole name, or its first word: "Caroline" for
    "Caroline Smith"; "user" for "the user")."""
    words = [w for w in re.findall(r"[\w'-]+", owner.casefold()) if w not in ("the", "a")]
    said = set(re.findall(r"[\w-]+", text.casefold().replace("’", "'").replace("'s", " ")))
    return bool(words) and words[0] in said


def _message(event: ev.Event) -> str:
    """One event as the model reads it: `<id> | <date time> | <speaker>: <text>`."""
    at = event.at.strftime("%Y-%m-%d %H:%M") if event.at is not None else "undated"
    speaker = " ".join((event.role or "user").split())
    text = " ".join(event.text.split())
    if len(text) > _EVENT_CHARS:
        text = text[:_EVENT_CHARS] + "…"
    return f"{event.id} | {at} | {speaker}: {text}"
