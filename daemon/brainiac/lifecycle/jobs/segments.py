"""Where a session's talk turns to something else: its topic segments, exchanges kept whole.

A session mixes both speakers' news: Jon's bank account and Gina's store in one hour. One note
per session mixes them too, so promotion files a session's events by topic: this module cuts
the session where the talk moves on, and plan.py gives each segment its note (or the earlier
topic note it continues).

An exchange is never cut. A turn is bound to the one before it when it answers a question that
turn asked ("What did you name him?" / "Buddy!"), or when it only reacts to it and tells no news
of its own ("Congrats! That's so sweet"): read apart, either half loses its meaning. The cuts
fall only between exchanges, where the words (or, given a SemanticIndex, the meaning; plan.py
cuts by words, as embedding every exchange would double an import's time) of what comes before
and what comes after are furthest apart: a depth
score, as TextTiling measures topic shifts (Hearst 1997), judged against the session's own
scores rather than a fixed cosine, so a chatty session and a terse one are cut alike.
"""

from __future__ import annotations

import itertools
import re
import statistics
from collections.abc import Sequence
from typing import TYPE_CHECKING

from brainiac.text import events as ev
from brainiac.text import extract, lexicon, mentions, observe
from brainiac.text.extract import sentences

if TYPE_CHECKING:
    from brainiac.search.semantic import SemanticIndex

# The fewest events a segment keeps: news, a question about it and its answer, from each side
# (three turns each). A shorter run is a remark inside another topic, and alone it would make a
# stub note of one exchange.
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


def segments(
    group: Sequence[ev.Event],
    turn_before: dict[str, str],
    semantic: SemanticIndex | None = None,
) -> list[list[ev.Event]]:
    """`group` (one session's events, in order) cut into topic segments, each a run of whole
    exchanges of `MIN_SEGMENT_EVENTS` events or more. `turn_before`: event id -> the id of the
    turn said just before it. `semantic`: compares by meaning where given, else by words."""
    units = exchanges(group, turn_before)
    if len(units) < 3:
        return [list(group)] if group else []
    texts = [" ".join(e.text for e in unit) for unit in units]
    # The likeness across each gap between exchanges: the two exchanges before it against the
    # two after, so one short aside does not read as a new topic.
    gaps = [
        _across(texts[max(0, k - 2) : k], texts[k : k + 2], semantic) for k in range(1, len(units))
    ]
    depths = _depths(gaps)
    # A cut where the drop is deeper than the session's own drops are on average: judged
    # against the session, not a fixed cosine, so a chatty session and a terse one are cut
    # alike (a session that drifts evenly has no drop above its mean and is not cut). Hearst's
    # cutoffs lie below the mean (mean less half or all of a deviation); the mean cuts fewer,
    # as a note per topic wants topics, not every aside.
    floor = statistics.fmean(depths)
    order = sorted(range(len(depths)), key=lambda k: -depths[k])
    cuts: list[int] = []  # unit indexes a new segment starts at
    for k in order:
        if depths[k] <= floor or depths[k] <= 0:
            break
        at = k + 1
        bounds = sorted([0, *cuts, at, len(units)])
        sizes = [sum(len(u) for u in units[a:b]) for a, b in itertools.pairwise(bounds)]
        if min(sizes) >= MIN_SEGMENT_EVENTS:
            cuts.append(at)
    bounds = sorted([0, *cuts, len(units)])
    return [[e for unit in units[a:b] for e in unit] for a, b in itertools.pairwise(bounds)]


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


def _across(left: Sequence[str], right: Sequence[str], semantic: SemanticIndex | None) -> float:
    """How alike the exchanges on either side of a gap are: by meaning, the mean cosine of each
    pair across it (each exchange embedded once, SemanticIndex.likeness keeps its vector); by
    words, the share of content words the two sides have in common."""
    if semantic is not None:
        cosines = [semantic.likeness(r, list(left)) for r in right]
        if all(c is not None for c in cosines):
            return statistics.fmean(x for c in cosines if c is not None for x in c)
    a, b = _content(" ".join(left)), _content(" ".join(right))
    return len(a & b) / len(a | b) if a | b else 0.0


def _content(text: str) -> set[str]:
    return set(mentions.keywords([text], 50))


def _depths(gaps: Sequence[float]) -> list[float]:
    """How far each gap's likeness lies below the peaks on either side of it (TextTiling's
    depth score): a valley between two topics is deep, a dip inside one is shallow."""
    out: list[float] = []
    for k, here in enumerate(gaps):
        left = right = k
        while left > 0 and gaps[left - 1] >= gaps[left]:
            left -= 1
        while right < len(gaps) - 1 and gaps[right + 1] >= gaps[right]:
            right += 1
        out.append((gaps[left] - here) + (gaps[right] - here))
    return out
