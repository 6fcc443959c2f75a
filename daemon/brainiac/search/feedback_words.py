"""Which words of a search's best hits widen its query (pseudo-relevance feedback, RM3): each
word by how much it weighs in the hits and how rare it is (index.py `_with_feedback` searches
them at a lower weight).

A word found in one document only (the hit itself) finds nothing new, and a common one (in more
than `common` documents) would cost more than it finds. A word's count may read its postings (in
a project, its memories among the project's: scope_statistics.ScopeStatistics), so the words that
cannot be among the chosen are not counted at all.
"""

from __future__ import annotations

import bisect
import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence

from brainiac.search.index_documents import Hit


def weights(
    top: Sequence[Hit], query_terms: set[str], words_of: Callable[[str], Iterable[str]]
) -> dict[str, float]:
    """Each word of `top` (`words_of` a hit's text: its analysed terms; the query's own, short
    ones and numbers left out) by its weight there: each hit counting by its share of the best
    score, the word by its share of the hit's words."""
    best = top[0].score or 1.0
    found: dict[str, float] = {}
    for h in top:
        tokens = list(words_of(h.text))
        # Counted in one pass: a count of the list per distinct word is quadratic in a long note.
        for term, n in Counter(tokens).items():
            if term in query_terms or len(term) < 3 or term.isdigit():
                continue
            share = n / len(tokens)
            found[term] = found.get(term, 0.0) + (h.score / best) * share
    return found


def chosen(
    weighed: Mapping[str, float], total: int, count: Callable[[str], int], most: int, common: int
) -> dict[str, float]:
    """The `most` words of `weighed` scoring highest by weight x log(total / df) (`count`: a
    word's df among the `total` documents searched; only 2 to `common` qualify), in that order,
    each relative to the first (0-1); none when the best does not score above 0.

    A word scores at most its weight x log(total / 2) (df at least 2): taken heaviest first, the
    words that cannot reach the last of the best found so far are not counted. The same words as
    counting every one; with a weight below 0 (no bound holds) every one is counted."""
    ceiling = math.log(total / 2)
    pruned = all(w >= 0 for w in weighed.values())
    if pruned and ceiling <= 0:  # no word can score above 0: none would be chosen
        return {}
    best: list[tuple[float, str]] = []  # (-score, word), the best so far in order
    for term in sorted(weighed, key=lambda t: (-weighed[t], t)):
        w = weighed[term]
        if pruned and len(best) == most and w * ceiling < -best[-1][0]:
            break
        df = count(term)
        if 2 <= df <= common:
            bisect.insort(best, (-(w * math.log(total / df)), term))
            del best[most:]
    if not best or -best[0][0] <= 0:
        return {}
    first = -best[0][0]
    return {t: -negated / first for negated, t in best}
