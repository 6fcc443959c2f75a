"""Exchanges: the turns of a session that are read together, and so are filed together.

A turn is bound to the one before it when it answers a question that turn asked ("What did you
name him?" / "Buddy!"), or when it only reacts to it and tells no news of its own ("Congrats!
That's so sweet"): read apart, either half loses its meaning. plan.py keeps an exchange whole
when a name's note takes one of its turns, and when a later run goes on with a session an
earlier run began.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from brainiac.text import events as ev
from brainiac.text import extract, lexicon, mentions, observe
from brainiac.text.extract import sentences

# The fewest events that make a topic of their own: news, a question about it and its answer,
# from each side (three turns each). Fewer, left over from a session an earlier run filed, are
# a remark that ends its talk, and alone they would make a stub note of one exchange.
MIN_SEGMENT_EVENTS = 6

# Words by which a turn points back at the one before it ("Congrats! That's so sweet", "Is he
# getting along?") or reacts to it ("Wow!", "Aw"): a turn with none, sharing no word with the one
# before, opens something new ("I just got back from a hike").
POINTING_BACK = lexicon.word_set(
    "it its it's that that's this these those there he him his he's she her she's they them "
    "their they're congrats congratulations wow aw aww omg haha lol yay sorry same too"
)


# Words that react to what the other just said, opening a turn: "Thanks!", "Congrats, Nate!".
REACTIONS = lexicon.word_set(
    "thanks thank congrats congratulations sorry wow aw aww awesome amazing great cool nice "
    "yay omg ugh oh"
)
_REACTION_WORDS = 5  # "Sorry to hear that, Joanna": a reaction is a few words, not news


def exchanges(group: Sequence[ev.Event], turn_before: dict[str, str]) -> list[list[ev.Event]]:
    """`group` as runs of turns bound to the turn before them (`bound`)."""
    units: list[list[ev.Event]] = []
    for i, event in enumerate(group):
        before = group[i - 1] if i else None
        chained = before is not None and turn_before.get(event.id) == before.id
        if units and before is not None and chained and bound(event, before):
            units[-1].append(event)
            continue
        units.append([event])
    return units


def bound(event: ev.Event, before: ev.Event) -> bool:
    """Whether `event`, the next turn after `before`, belongs to its exchange: it opens with a
    reaction to it, it only reacts or answers, telling no news of its own ("Congrats! That's
    so sweet", "Buddy!"), or it takes up the words of the question `before` asked ("What did
    you name the studio?" / "I named the studio Groove"). A turn with news of its own after a
    question that names nothing ("How about you?") opens what it tells."""
    if not replies_to(event, before):
        return False
    asked = extract.questions(before.text)
    if _reacts_first(event):
        return True  # "Thanks, Joanna! Winning was ...": the thanks belongs to the congrats
    if not observe.observations(event, previous=before):
        # No news of its own: a reaction, or an answer, to the turn before.
        return bool(asked) or answers(event, before)
    topic = set(mentions.keywords(asked, 20)) if asked else set()
    return bool(topic & set(mentions.keywords([event.text], 20)))


def replies_to(event: ev.Event, before: ev.Event) -> bool:
    """Whether `event` is the next turn after `before` in the same conversation."""
    return bool(event.session) and event.session == before.session and event.role != before.role


def answers(reply: ev.Event, event: ev.Event) -> bool:
    """Whether `reply` answers `event` (points back at it, reacts to it, or shares a content
    word with it), rather than opening a topic of its own."""
    words = set(re.findall(r"[\w']+", reply.text.replace("’", "'").lower()))
    if words & POINTING_BACK:
        return True
    said = set(mentions.keywords([reply.text], 20))
    return bool(said & set(mentions.keywords([event.text], 20)))


def asks_for(event: ev.Event, before: ev.Event) -> bool:
    """Whether `before` is a question the other speaker asked just before `event`, its answer."""
    return replies_to(event, before) and extract.questions(before.text) != []


def _reacts_first(event: ev.Event) -> bool:
    """Whether the turn opens with a short reaction ("Thanks!", "Congrats, Nate!", "Sorry to
    hear that."): said to the turn before, whatever follows."""
    first = next(iter(sentences(event.text)), "")
    words = re.findall(r"[\w']+", first.replace("’", "'").lower())
    return 0 < len(words) <= _REACTION_WORDS and bool(set(words) & REACTIONS)
