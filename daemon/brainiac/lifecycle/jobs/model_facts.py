"""The facts a configured model reads in events, beside the rules' (issue 13: with a model, the
jobs also extract with it).

The rules (`extract.facts`) find a few shapes of sentence and are precise (docs/benchmarks.md,
"Knowledge"); a model finds a fact however it is said. So with
an endpoint configured, reflection asks it once per event, when the event is new to the Event
Log (the `extracted_through` watermark goes with goals and tasks), and adds what it reads to what
the rules found; without one, or when it does not answer, the rules' facts stand alone.

What the model reads is kept as the rules' facts are (`extract.speaker_fact`): the user's as said,
another speaker's under their name, none of the assistant's; a fact of the event whose value the
rules already found is not added again under the model's wording of the key.

Promotion carries the facts the short-term Facts hold for the events it moves (`learned`), so a
fact the model read goes to the long-term note with its event instead of leaving when reflection
prunes the short-term Facts a week later.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from brainiac.formats import events as ev
from brainiac.language import extract
from brainiac.language import facts as facts_mod
from brainiac.language.facts import Fact, normalise_value

if TYPE_CHECKING:
    from brainiac.model.llm import LLM


def read(llm: LLM, event: ev.Event) -> list[Fact] | None:
    """The facts the model reads in `event`, as the vault keeps them; None when it did not
    answer (its `last_error` says why)."""
    pairs = llm.extract_facts(event.text, speaker=event.role or None)
    if pairs is None:
        return None
    found = (extract.speaker_fact(k, v, event.role, event.at, event.id) for k, v in pairs)
    return [f for f in found if f is not None]


def stated(
    events: Sequence[ev.Event],
    model: Mapping[str, Sequence[Fact]] | None = None,
) -> list[Fact]:
    """The facts `events` state, in order: for each event the rules' facts, then those `model`
    (by event id: the model's reading, or the facts learned earlier) holds for it whose value
    the rules did not find."""
    found: list[Fact] = []
    for event in events:
        ruled = extract.facts(event.text, event.at, event.id, event.role)
        found += ruled
        values = {normalise_value(f.value) for f in ruled}
        for fact in (model or {}).get(event.id, ()):
            if normalise_value(fact.value) not in values:
                values.add(normalise_value(fact.value))
                found.append(fact)
    return found


def learned(facts_section: str) -> dict[str, list[Fact]]:
    """The current facts of a Facts section, by the event each was learned from (a person's
    lines, which name no event, are not among them)."""
    out: dict[str, list[Fact]] = {}
    for line in facts_mod.parse(facts_section):
        if line.fact.source:
            out.setdefault(line.fact.source, []).append(line.fact)
    return out
