"""Exchanges: the turns of a session read together, which a name's note takes whole.

The answer after a turn placed by the name it says goes with it when it answers that turn
(points back at it, reacts to it, or shares a content word with it), and so does the question
before it that the turn answers ("What did you name him?" / "I named him Buddy!"): read apart,
either half loses its meaning (plan.py).
"""

from __future__ import annotations

import re

from brainiac.formats import events as ev
from brainiac.language import extract, lexicon, mentions

# Words by which a turn points back at the one before it ("Congrats! That's so sweet", "Is he
# getting along?") or reacts to it ("Wow!", "Aw"): a turn with none, sharing no word with the one
# before, opens something new ("I just got back from a hike").
POINTING_BACK = lexicon.word_set(
    "it its it's that that's this these those there he him his he's she her she's they them "
    "their they're congrats congratulations wow aw aww omg haha lol yay sorry same too"
)


def replies_to(event: ev.Event, before: ev.Event) -> bool:
    """Whether `event` is the next turn after `before` in the same conversation (one session of
    one project: two projects' `session 1` interleave in the log, and are two conversations)."""
    return (
        bool(event.session)
        and event.session == before.session
        and event.project == before.project
        and event.role != before.role
    )


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
