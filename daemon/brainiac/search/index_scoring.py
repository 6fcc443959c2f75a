"""Every match of a query with its score, as Whoosh's unlimited search gives them, in less time.

The context's search scores every match (pseudo-relevance feedback adds to the score of matches
below the cut; index.py `_with_feedback`). Whoosh does that document at a time: its OR is a
binary tree of union matchers, and for each document every level of the tree asks its children
whether they are active, which document they are on, their score, and moves them on, in Python.
At 10,000 notes that protocol, not the BM25 arithmetic, was most of a context call.

Here the same matcher tree Whoosh builds (`query.matcher`, so the same huffman shape) is walked
once, term at a time: each leaf's postings are read block by block and scored into a dict, and
each union node adds its right child's scores to its left child's where both match a document,
`left + right` as Whoosh's `UnionMatcher.score` does. The floating-point sums are therefore the
same, and so are the scores and the order (score descending, then document number, as
`UnlimitedCollector`); tests/test_index_scoring.py compares them with Whoosh's own search.

Also the order of a search widened by feedback (`best_widened`). The BM25F weighting it scores
with is index_weighting.py's, a scope's statistics scope_statistics.py's, a scope's postings
kept between prompts scope_postings.py's. With index.py, index_fields.py, index_runs.py,
index_weighting.py, scope_statistics.py and whoosh_internals.py, the only modules that import
whoosh. The block reading goes through whoosh_internals.py, which holds the leaf matcher's
private names (the same in whoosh3 and 2.7.4); any matcher it does not know, or a leaf without
them, is read through the public matcher protocol instead: slower, same scores (and a Whoosh
that lacks them has said so at import).
"""

from __future__ import annotations

import bisect
import heapq
import itertools
from collections.abc import Callable, Collection, Iterable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Any

from whoosh.matching import FilterMatcher, UnionMatcher, WrappingMatcher
from whoosh.scoring import BM25FScorer

from brainiac.search import whoosh_internals
from brainiac.search.scope_docs import before_first, in_leaf, in_order
from brainiac.search.scope_postings import KeptSlices, ScopeSlices, Slice, sliced

Scores = dict[int, float]


def match_scores(
    searcher: Any,
    query: Any,
    filter_q: Any = None,
    mask_q: Any = None,
    allow: Collection[int] | None = None,
    restrict: Collection[int] | None = None,
    slices: KeptSlices | None = None,
) -> Scores:
    """The score of every match of `query` by document number, in no order: the scores of
    `searcher.search(query, limit=None, filter=filter_q, mask=mask_q)`. `allow` and `restrict`:
    the documents of `filter_q` and `mask_q` when the caller already has them; `slices`: where
    an `allow` of a scope keeps its postings (scope_postings.py)."""
    if allow is None and filter_q is not None:
        allow = set(searcher.docs_for_query(filter_q))
    if restrict is None and mask_q is not None:
        restrict = set(searcher.docs_for_query(mask_q))
    context = searcher.context()
    found: Scores = {}
    leaves = searcher.leaf_searchers()
    for subsearcher, offset in leaves:
        # Only the allowed postings are scored (a project's, in a vault shared by projects): the
        # others are read, as they must be to be skipped, but cost no score.
        keep = in_leaf(allow, offset, subsearcher.doc_count_all(), len(leaves) == 1)
        kept = _scope_slices(slices, subsearcher, keep)
        scores = _scores(query.matcher(subsearcher, context), keep, subsearcher, kept)
        if offset:
            scores = {d + offset: s for d, s in scores.items()}
        found.update(scores)  # (of `allow` only: each leaf's scores are of its part of it)
    if restrict:
        found = {d: s for d, s in found.items() if d not in restrict}
    return found


def inside_and_outside(
    searcher: Any,
    query: Any,
    inside: AbstractSet[int],
    at_least: float,
    slices: KeptSlices | None = None,
) -> tuple[Scores, Scores]:
    """The scores of the matches of `query` in `inside` (document numbers), and of those outside
    it that score `at_least` times the best inside or more: each as `match_scores` gives it.

    A context in a project needs the other projects' matches only when one matches clearly
    better than the project's own (project_search.py), and in a vault shared by projects they
    are most of the postings. A match's score is the sum of its terms' (a union node adds its
    children's), and a term's is at most BM25F's at its largest weight and the shortest length
    it is found in: the terms whose bounds add up to less than the floor, the smallest first,
    cannot lift a match to it on their own, so only the matches outside that one of the other
    terms holds are scored (MaxScore). A posting block holding none of the inside documents
    (by the numbers its header spans: a merged segment holds each project's documents in one
    run, index_merge.py) is passed over, and read only when it may hold a match that can reach
    the floor; a block wholly inside (its numbers within one run of the inside documents) is
    scored without looking its documents up, and holds no match outside to look for. Each
    word's postings so read are kept in `slices` (scope_postings.py) when given."""
    context = searcher.context()
    found: Scores = {}
    outside: Scores = {}
    leaves = searcher.leaf_searchers()
    plans = []
    for subsearcher, offset in leaves:
        mine = in_leaf(inside, offset, subsearcher.doc_count_all(), len(leaves) == 1)
        assert mine is not None
        ordered = in_order(mine) if isinstance(mine, frozenset) else sorted(mine)
        kept = _scope_slices(slices, subsearcher, mine)
        matcher = query.matcher(subsearcher, context)
        plan, scores = _read(matcher, subsearcher, mine, ordered, kept)
        plans.append((plan, mine, offset))
        found.update({d + offset: s for d, s in scores.items()} if offset else scores)
    floor = at_least * max(found.values(), default=0.0)
    for plan, mine, offset in plans:
        candidates = _candidates(plan, mine, floor)
        if not candidates:  # a vault of one project, or no other can reach the floor here
            continue
        scores = _planned_scores(plan, candidates)
        # Below the floor a candidate is of no use either (its stored fields are not read).
        outside.update({d + offset: s for d, s in scores.items() if s >= floor})
    return found, outside


# A term's bound, and the sums of bounds, taken this much larger: a float sum of scores may
# exceed the exact one by a few units in the last place.
_BOUND_MARGIN = 1e-9
# A term info's largest weight taken this much larger: were it the weight the writer was given,
# the block would have the 32-bit float it stored (rounded to nearest: within 6e-8 of it).
_WEIGHT_MARGIN = 1e-6


@dataclass
class _Leaf:
    """A leaf matcher's postings as read that may hold a document outside the scope (`blocks`:
    one wholly inside holds none), or its scores when it cannot be read by blocks (`scored`),
    with what scores them and the term's information in the segment (`info`: its bound, the
    most any of them can score, is worked out from it only when asked); the blocks passed over
    by their headers (`passed`), which `_open` reads from `matcher`."""

    blocks: list[whoosh_internals.Block]
    scored: Scores | None
    scorer: Any
    info: Any
    passed: list[whoosh_internals.Passed] = field(default_factory=list)
    matcher: Any = None


def _read(
    m: Any,
    subsearcher: Any,
    inside: AbstractSet[int],
    ordered: Sequence[int],
    kept: ScopeSlices | None,
) -> tuple[Any, Scores]:
    """The matcher tree `m` with each leaf's postings read (`_Leaf`) where they may hold a
    document of `inside` (`ordered`: the same in order; `kept`: its slices, or None): ("union",
    a, b), ("boost", boost, child), ("filter", ids, exclude, child), a _Leaf, or None (no
    match); and the scores of its matches in `inside`, as `_planned_scores` of the tree would
    give them (each leaf scored as it is read, the nodes in the same order). The matchers are
    consumed, or left where they stand when a leaf's slice was kept."""
    if not m.is_active():
        return None, {}
    kind = type(m)
    if kind is UnionMatcher:
        a, left = _read(m.a, subsearcher, inside, ordered, kept)
        b, right = _read(m.b, subsearcher, inside, ordered, kept)
        return ("union", a, b), _union(left, right)
    if kind is WrappingMatcher or kind is FilterMatcher:
        child, inner = _read(m.child, subsearcher, inside, ordered, kept)
        if kind is FilterMatcher:
            ids, exclude = whoosh_internals.filter_kept(m)
            child = ("filter", ids, exclude, child)
            inner = {d: s for d, s in inner.items() if (d in ids) != exclude}
        boost = m.boost
        return ("boost", boost, child), (
            inner if boost == 1.0 else {d: s * boost for d, s in inner.items()}
        )
    if not _block_readable(m):  # scored through the matcher protocol, as `_scores` does
        scored = _one_by_one(m)
        return _Leaf([], scored, None, None), {d: s for d, s in scored.items() if d in inside}
    found, leaf = _kept_slice(m, subsearcher, inside, ordered, kept)
    if found is None:  # read and scored as they come
        passed: list[whoosh_internals.Passed] = []
        info, blocks = _postings(m, subsearcher, ordered, passed)
        outer: list[whoosh_internals.Block] = []
        scores = _block_scores(m.scorer, blocks, inside, ordered, outer)
        return _Leaf(outer, None, m.scorer, info, passed, m), scores
    if leaf is None:  # kept: the blocks holding other documents are read again when asked
        leaf = _Leaf(list(found.outer), None, m.scorer, found.info, list(found.passed), m)
    return leaf, _slice_scores(m.scorer, found)


def _kept_slice(
    m: Any,
    subsearcher: Any,
    inside: AbstractSet[int],
    ordered: Sequence[int],
    kept: ScopeSlices | None,
) -> tuple[Slice | None, _Leaf | None]:
    """Leaf matcher `m`'s postings as the scope of `inside` (`ordered`: the same in order) sees
    them (scope_postings.py): kept, (slice, None); read now, at the word's second reading in
    the scope, and kept, (slice, the leaf as read, its blocks holding other documents too at
    hand, decoded); or (None, None), the matcher untouched: a word read the first time, or no
    scope to keep it for (most words of a prompt are not asked again: picking them out costs
    more than reading them as they come)."""
    if kept is None:
        return None, None
    term = m.term()
    found = kept.get(term)
    if found is not None:
        return found, None
    if not kept.asked_before(term):
        return None, None
    passed: list[whoosh_internals.Passed] = []
    places: list[whoosh_internals.Passed | None] = []
    info, read = _postings(m, subsearcher, ordered, passed, places)
    blocks = list(read)
    # A block whose numbers all lie in one run of the scope's is the scope's alone.
    whole = [
        end > first and _within(ordered, ids[first], ids[end - 1]) for ids, _, first, end in blocks
    ]
    found = sliced(blocks, places, inside, whole, passed, info)
    kept.put(term, found)
    outer = [block for block, alone in zip(blocks, whole, strict=True) if not alone]
    return found, _Leaf(outer, None, m.scorer, info, passed, m)


def _postings(
    m: Any,
    subsearcher: Any,
    ordered: Sequence[int],
    passed: list[whoosh_internals.Passed] | None,
    places: list[whoosh_internals.Passed | None] | None = None,
    keep: AbstractSet[int] | None = None,
) -> tuple[Any, Iterable[whoosh_internals.Block]]:
    """Leaf matcher `m`'s term info in the segment, and its blocks that may hold a document of
    `ordered` (`posting_blocks`, the others appended to `passed` when given; with `keep`, the
    documents of `ordered`, a block holding none of them is not decoded either); the term info
    is looked up once: the skip and the bound ask it."""
    info = _term_info(m, subsearcher)
    return info, whoosh_internals.posting_blocks(
        m, keep, ordered, passed, before_first(info), places
    )


def _slice_scores(scorer: Any, found: Slice) -> Scores:
    """The scores of a slice's postings, all of them."""
    return _block_scores(scorer, ((found.ids, found.weights, 0, len(found.ids)),), None)


def _scope_slices(
    slices: KeptSlices | None, subsearcher: Any, mine: AbstractSet[int] | None
) -> ScopeSlices | None:
    """The slices kept for the scope of `mine` (its documents in `subsearcher`'s segment);
    None when there are none to keep (no scope, or not one kept per searcher)."""
    if slices is None or type(mine) is not frozenset:
        return None
    try:
        segment = subsearcher.reader().segment()
        segment_id = segment.segment_id()
    except AttributeError:  # a reader of no one segment
        return None

    def deleted() -> AbstractSet[int]:
        return frozenset(segment.deleted_docs()) if segment.has_deletions() else frozenset()

    return slices.of(segment_id, mine, deleted)


def _open(leaf: _Leaf, wanted: Sequence[int] | None = None) -> None:
    """Read into `leaf.blocks` the blocks passed over that may hold a document of `wanted`
    (in order; None: all of them)."""
    if not leaf.passed:
        return
    still = []
    for block in leaf.passed:
        if wanted is not None and whoosh_internals.none_within(wanted, block.after, block.last):
            still.append(block)
            continue
        leaf.blocks.append(whoosh_internals.read_passed(leaf.matcher, block))
    leaf.passed = still


def _bound(scorer: Any, info: Any) -> float | None:
    """The most a posting of the term `info` is of (its term info in the segment) can score:
    BM25F at its largest weight and shortest field length (Whoosh's, stored with the lengths'
    own rounding, so never above a document's); None when they cannot be had."""
    try:
        shortest = info.min_length()
        weight = info.max_weight() * (1 + _WEIGHT_MARGIN)
    except Exception:  # None, or a term info without them
        return None
    idf, avgfl, b, k1 = scorer.idf, scorer.avgfl, scorer.B, scorer.K1
    top = idf * ((weight * (k1 + 1)) / (weight + k1 * ((1 - b) + b * shortest / avgfl)))
    return float(max(top, 0.0) * (1 + _BOUND_MARGIN))


def _planned_scores(plan: Any, keep: AbstractSet[int]) -> Scores:
    """`_scores` of a read matcher tree (`_read`), for the documents `keep` holds (outside the
    scope it was read for: its leaves keep only the blocks that may hold one)."""
    if plan is None:
        return {}
    if isinstance(plan, _Leaf):
        if plan.scored is not None:
            return {d: s for d, s in plan.scored.items() if d in keep}
        return _block_scores(plan.scorer, plan.blocks, keep)
    if plan[0] == "union":
        return _union(_planned_scores(plan[1], keep), _planned_scores(plan[2], keep))
    if plan[0] == "filter":
        _, ids, exclude, child = plan
        return {d: s for d, s in _planned_scores(child, keep).items() if (d in ids) != exclude}
    boost = plan[1]
    inner = _planned_scores(plan[2], keep)
    return inner if boost == 1.0 else {d: s * boost for d, s in inner.items()}


def _candidates(plan: Any, inside: AbstractSet[int], floor: float) -> AbstractSet[int]:
    """The documents outside `inside` that may score `floor` or more (MaxScore): those in the
    postings of a term not among the smallest bounds adding up to less than the floor (all of
    them without a bound, or a floor of 0), whose score by those terms plus the bounds of the
    others still reaches it. A term whose every posting is inside adds nothing outside."""
    leaves: list[tuple[float, float, _Leaf]] = []
    if floor <= 0 or not _bounded(plan, 1.0, leaves):
        return _outside_all(plan, inside)
    leaves.sort(key=lambda item: item[0])
    # below[i]: the sum of the bounds of leaves[:i], each added in turn (never subtracted: a
    # float sum taken apart again could come out below what it was built from).
    below = [0.0]
    for bound, _, _ in leaves:
        below.append(below[-1] + bound)
    first = next(
        (i for i in range(len(leaves)) if below[i + 1] * (1 + _BOUND_MARGIN) >= floor),
        len(leaves),
    )
    found: set[int] = set()
    for _, _, leaf in leaves[first:]:
        _open(leaf)
        for ids, _, start, end in leaf.blocks:
            found.update(ids[start:end])
    found -= inside
    # Their scores by those terms (a filter above a term only takes a match away: never below
    # what they add to the whole score), then by each other term, the largest bound first,
    # while what the rest can add no longer lifts a candidate to the floor.
    partial: Scores = dict.fromkeys(found, 0.0)
    for _, boost, leaf in leaves[first:]:
        _add(partial, leaf, found, boost)
    for i in reversed(range(first)):
        rest = below[i + 1]  # what leaves[: i + 1], not read yet, can add at most
        partial = {d: p for d, p in partial.items() if (p + rest) * (1 + _BOUND_MARGIN) >= floor}
        if not partial:
            return set()
        _, boost, leaf = leaves[i]
        _open(leaf, sorted(partial))
        _add(partial, leaf, partial.keys(), boost)
    return {d for d, score in partial.items() if score * (1 + _BOUND_MARGIN) >= floor}


def _add(partial: Scores, leaf: _Leaf, docs: AbstractSet[int], boost: float) -> None:
    """Add to `partial` the scores of `docs` in `leaf`'s blocks, times `boost`."""
    for d, score in _block_scores(leaf.scorer, leaf.blocks, docs).items():
        partial[d] += score * boost


def _bounded(plan: Any, boost: float, out: list[tuple[float, float, _Leaf]]) -> bool:
    """Each leaf of `plan` that holds a posting outside the scope it was read for, with its
    bound times the boosts above it and those boosts, into `out`; False when a leaf has no
    bound (or a boost is negative): every match must then be scored."""
    if plan is None:
        return True
    if isinstance(plan, _Leaf):
        if plan.scored is not None:
            return False
        if plan.blocks or plan.passed:  # else every posting is inside: it adds nothing outside
            bound = _bound(plan.scorer, plan.info)
            if bound is None:
                return False
            out.append((bound * boost, boost, plan))
        return True
    if plan[0] == "union":
        return _bounded(plan[1], boost, out) and _bounded(plan[2], boost, out)
    if plan[0] == "filter":
        return _bounded(plan[3], boost, out)
    return plan[1] >= 0 and _bounded(plan[2], boost * plan[1], out)


def _outside_all(plan: Any, inside: AbstractSet[int]) -> AbstractSet[int]:
    """Every document of `plan`'s postings outside `inside`."""
    found: set[int] = set()

    def walk(node: Any) -> None:
        if node is None:
            return
        if isinstance(node, _Leaf):
            if node.scored is not None:
                found.update(node.scored)
            _open(node)
            for ids, _, start, end in node.blocks:
                found.update(ids[start:end])
        elif node[0] == "union":
            walk(node[1])
            walk(node[2])
        else:
            walk(node[-1])

    walk(plan)
    return found - inside


def best(scores: Scores, limit: int) -> list[tuple[int, float]]:
    """The `limit` best of `scores` in Whoosh's order (score descending, then document number),
    without sorting all of them: a context keeps ~150 of a few thousand matches."""
    if limit <= 0 or not scores:
        return []
    if limit < len(scores):
        # The `limit`-th best score, found among the bare floats (compared in C, no tuple
        # made); only the matches that reach it are ordered, the ties at the cut with them.
        cut = heapq.nlargest(limit, scores.values())[-1]
        kept = [(-s, d) for d, s in scores.items() if s >= cut]
    else:
        kept = [(-s, d) for d, s in scores.items()]
    kept.sort()
    return [(d, -negated) for negated, d in kept[:limit]]


def _scores(
    m: Any, keep: AbstractSet[int] | None, subsearcher: Any, kept: ScopeSlices | None = None
) -> Scores:
    """The scores of the postings `m` has from where it stands, of the documents `keep` holds
    (None: all), in the segment of `subsearcher` (`kept`: the slices of the scope of `keep`):
    the matcher is consumed."""
    if not m.is_active():
        return {}
    kind = type(m)
    if kind is UnionMatcher:
        return _union(_scores(m.a, keep, subsearcher, kept), _scores(m.b, keep, subsearcher, kept))
    if kind is WrappingMatcher or kind is FilterMatcher:
        inner = _scores(m.child, keep, subsearcher, kept)
        if kind is FilterMatcher:
            # The matcher skips to its first kept posting when made; its child stands there.
            ids, exclude = whoosh_internals.filter_kept(m)
            inner = {d: s for d, s in inner.items() if (d in ids) != exclude}
        boost = m.boost
        return inner if boost == 1.0 else {d: s * boost for d, s in inner.items()}
    if not _block_readable(m):
        return _one_by_one(m, keep)
    return _leaf_blocks(m, keep, subsearcher, kept)


def _union(left: Scores, right: Scores) -> Scores:
    """A union node's scores: a document both sides match scores `left + right`."""
    both = left.keys() & right.keys()
    if not both:
        left.update(right)
        return left
    kept = {d: left[d] for d in both}
    left.update(right)
    for d in both:
        left[d] = kept[d] + right[d]
    return left


def _one_by_one(m: Any, keep: AbstractSet[int] | None = None) -> Scores:
    out: Scores = {}
    while m.is_active():
        d = m.id()
        if keep is None or d in keep:
            out[d] = m.score()
        m.next()
    return out


def _block_readable(m: Any) -> bool:
    scorer = getattr(m, "scorer", None)
    return (
        type(scorer) is BM25FScorer
        and whoosh_internals.block_readable(m)
        and all(hasattr(scorer, name) for name in ("idf", "avgfl", "B", "K1", "dfl"))
    )


def _leaf_blocks(
    m: Any, keep: AbstractSet[int] | None, subsearcher: Any, kept: ScopeSlices | None
) -> Scores:
    """A leaf's postings block by block (a block holding nothing `keep` holds is not decoded:
    in a vault shared by projects, most of a common word's postings are other projects'; one
    holding only documents `keep` holds is scored whole), or a scope's as `_kept_slice` gives
    them."""
    if not isinstance(keep, frozenset):
        return _block_scores(m.scorer, whoosh_internals.posting_blocks(m, keep), keep)
    ordered = in_order(keep)
    found, _ = _kept_slice(m, subsearcher, keep, ordered, kept)
    if found is not None:
        return _slice_scores(m.scorer, found)
    _, blocks = _postings(m, subsearcher, ordered, None, keep=keep)
    return _block_scores(m.scorer, blocks, keep, ordered)


def _term_info(m: Any, subsearcher: Any) -> Any | None:
    """Leaf matcher `m`'s term info in the segment of `subsearcher`; None when it cannot be
    had."""
    try:
        fieldname, tbytes = m.term()
        return whoosh_internals.term_info_or_none(subsearcher.reader(), fieldname, tbytes)
    except Exception:
        return None


def _block_scores(
    scorer: Any,
    blocks: Iterable[whoosh_internals.Block],
    keep: AbstractSet[int] | None,
    ordered: Sequence[int] | None = None,
    outer: list[whoosh_internals.Block] | None = None,
) -> Scores:
    """The postings of `blocks` that `keep` holds (None: all; picked in C), each scored with
    Whoosh's BM25F formula (`scoring.bm25`, written out with the same operations in the same
    order). With `ordered` (`keep`'s documents in order), a block whose numbers all lie in one
    run of them is scored whole, and every other block is appended to `outer`."""
    idf, avgfl, b, k1 = scorer.idf, scorer.avgfl, scorer.B, scorer.K1
    dfl: Callable[[int], float] = scorer.dfl
    out: Scores = {}
    for ids, weights, first, end in blocks:
        postings: Iterable[tuple[int, float]] = zip(ids[first:end], weights[first:end], strict=True)
        if keep is not None and not (
            ordered is not None and end > first and _within(ordered, ids[first], ids[end - 1])
        ):
            if outer is not None:
                outer.append((ids, weights, first, end))
            postings = itertools.compress(postings, map(keep.__contains__, ids[first:end]))
        for d, tf in postings:
            out[d] = idf * ((tf * (k1 + 1)) / (tf + k1 * ((1 - b) + b * dfl(d) / avgfl)))
    return out


def _within(ordered: Sequence[int], low: int, high: int) -> bool:
    """Whether every number from `low` to `high` is in `ordered` (distinct numbers in order):
    they are when `ordered` has `low`, and `high` as many places further on."""
    i = bisect.bisect_left(ordered, low)
    j = i + high - low
    return j < len(ordered) and ordered[i] == low and ordered[j] == high


def best_widened(
    limit: int,
    total: dict[int, float],
    first: dict[int, float],
    widened: dict[int, float],
    first_best: Iterable[int],
) -> list[int]:
    """The `limit` best documents of a search widened by feedback: by total score, ties as
    they always fell (the first search's matches in its order, then those only the feedback
    terms match, in theirs), so the hits are the same as when both searches were sorted in full.

    Only the first search's `limit` best (`first_best`) and what the feedback terms match can
    make the cut: a match feedback did not raise still has its `limit` betters ahead of it (a
    raise never lowers anyone). Should a feedback score ever be negative, all are ordered."""
    if all(s >= 0.0 for s in widened.values()):
        candidates: Iterable[int] = {*first_best, *widened}
    else:
        candidates = total
    order = [
        (-total[d], 0, -first[d], d) if d in first else (-total[d], 1, -widened[d], d)
        for d in candidates
    ]
    return [d for *_, d in heapq.nsmallest(limit, order)]
