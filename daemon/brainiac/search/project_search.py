"""The hits a context or a search in a project ranks (projects.py says which memories and why).

P's own memories and the global ones, ranked as they match; another project's only when the
prompt names that project, or when one matches at least `CLEARLY` times as well as the best of
P's (the prompt is plainly about something only the other project knows), at most `MAX_OTHER`
of them, at `OTHER_WEIGHT` of their score; with isolation, never.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping

from brainiac.search.index import Index
from brainiac.search.index_documents import Hit
from brainiac.store.projects import GLOBAL, Scope, named

CLEARLY = 1.5
MAX_OTHER = 3
OTHER_WEIGHT = 0.5
_WORD_RE = re.compile(r"[^\W_]+(?:[-.][^\W_]+)*")


def own_event_keys(index: Index, scope: Scope) -> frozenset[str] | None:
    """The keys of the events a search in `scope` ranks as its own (its project's and the
    global ones), among which nearness in meaning is taken; None unscoped (every event)."""
    if scope.project is None:
        return None
    return index.scope_event_keys([scope.project, GLOBAL])


def search(
    index: Index,
    query: str,
    limit: int,
    scope: Scope,
    feedback: bool = False,
    nearness: Mapping[str, float] | None = None,
) -> list[Hit]:
    """The hits a context or search in `scope` ranks (see the module's docstring); `feedback` and
    `nearness` as Index.search (the hits of this project and global ones widen the query)."""
    if scope.project is None:
        return index.search(query, limit=limit, feedback=feedback, nearness=nearness)
    own = [scope.project, GLOBAL]
    if scope.isolate:
        return index.search(query, limit=limit, projects=own, feedback=feedback, nearness=nearness)
    words = _words(query)
    if feedback:
        # A hit's score is at least its first (feedback and nearness only add), so another
        # project's match can pass the rule below only at CLEARLY times the best first score of
        # P's and the global ones, unless the prompt names its project: the others that cannot
        # are not scored (they are most of the postings of a vault shared by many projects).
        names = [p for p in named(index.project_counts()) if p != scope.project]
        at_least = 0.0 if any(p.casefold() in words for p in names) else CLEARLY
        hits, others = index.search_with_others(
            query, limit, own, MAX_OTHER * 4, nearness, at_least
        )
    else:
        hits = index.search(query, limit=limit, projects=own)
        others = index.search(query, limit=MAX_OTHER * 4, projects=own, exclude=True)
    best = max((h.score for h in hits), default=0.0)
    admitted = [
        dataclasses.replace(h, score=h.score * OTHER_WEIGHT)
        for h in others
        if h.score >= CLEARLY * best or any(p.casefold() in words for p in named(h.projects))
    ][:MAX_OTHER]
    return sorted([*hits, *admitted], key=lambda h: (-h.score, h.key))


def named_in(text: str, names: Iterable[str]) -> list[str]:
    """The projects among `names` that `text` names (a word of it, in any case): another
    project's memories come into a context, or a check, whose prompt names that project."""
    words = _words(text)
    return [p for p in names if p.casefold() in words]


def _words(text: str) -> set[str]:
    return {w.casefold() for w in _WORD_RE.findall(text)}
