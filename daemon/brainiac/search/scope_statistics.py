"""A scope's BM25F statistics (`ScopeStatistics`): how many of a project's and the global
memories have each field and their average length, and how many hold each word, so that a
project ranks its memories in a vault shared by projects as it would in a vault of its own.

A word's count in the scope is taken, cheapest first, from its term info (a merged segment holds
each set of projects' documents in one run of numbers), from the merged segment's counts per run
(scope_runs.py), from a short posting list's numbers kept per segment (`KeptNumbers`), or from
its postings a block at a time (by the block headers where a block is all the scope's or none
of it).
"""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from typing import Any, Protocol

from whoosh.matching import FilterMatcher

from brainiac.search import whoosh_internals
from brainiac.search.scope_docs import before_first, in_leaf, in_order
from brainiac.search.scope_runs import ScopeRuns, SegmentRunCounts, scope_runs


class SegmentLengths(Protocol):
    """What a scope's field statistics read of the weighting (index_weighting.py's
    `SegmentLengthsBM25F`): each segment's field lengths, read once, and the length a stored
    byte stands for."""

    length_of_byte: list[int]

    def segment_lengths(
        self, reader: Any, fieldname: str
    ) -> tuple[array[int], int, bytes, int] | None: ...


class ScopeStatistics:
    """BM25F's statistics over the documents of one scope (a project's and the global ones):
    each field's document count and average length, each term's document frequency.

    A project's ranking in a vault shared with other projects is then the ranking it would have
    in a vault of its own: a word common in another project is not made less telling here, a
    word rare elsewhere not more, and the average length is that of the scope's own memories.
    Kept with the searcher it was counted on (Index's memo): a commit opens a new searcher and
    counts afresh (from the short posting lists' numbers kept per segment, `KeptNumbers`). A
    field's average length is the index's exact one scaled by the scope's share of the stored
    (one-byte, rounded) lengths, so an unscoped search's is unchanged.
    """

    def __init__(
        self,
        docs: frozenset[int],
        kept: KeptNumbers | None = None,
        run_counts: SegmentRunCounts | None = None,
    ) -> None:
        self.docs = docs
        self._fields: dict[str, tuple[int, float] | None] = {}
        self._df: dict[tuple[str, str], int] = {}
        self._kept = kept
        self._run_counts = run_counts
        # Each segment's reader, the scope's documents in it and its runs there, for the
        # searcher they were worked out for.
        self._segments: list[tuple[Any, AbstractSet[int], ScopeRuns | None]] = []
        self._segments_of: Any = None

    def field(
        self, weighting: SegmentLengths, searcher: Any, fieldname: str
    ) -> tuple[int, float] | None:
        """How many of the scope's documents have `fieldname`, and their average length; None
        when a segment's lengths cannot be read (scoring then keeps every document's)."""
        if fieldname not in self._fields:
            self._fields[fieldname] = self._count_field(weighting, searcher, fieldname)
        return self._fields[fieldname]

    def _count_field(
        self, weighting: SegmentLengths, searcher: Any, fieldname: str
    ) -> tuple[int, float] | None:
        holding = 0
        scope_sum = every_sum = 0
        table = weighting.length_of_byte  # (a byte of 0 is skipped below)
        for leaf, mine, _ in self._segments_in(searcher):
            lengths = weighting.segment_lengths(leaf, fieldname)
            if lengths is None:
                return None
            raw = lengths[2]
            every_sum += lengths[3]
            for local in mine:  # each segment's part of the scope only
                if raw[local]:
                    holding += 1
                    scope_sum += table[raw[local]]
        if not holding or not every_sum:
            return holding, 0.0
        exact = searcher.field_length(fieldname) * (scope_sum / every_sum)
        return holding, exact / holding

    def doc_frequency(self, searcher: Any, fieldname: str, text: Any) -> int:
        """How many of the scope's documents hold `text` in `fieldname`."""
        key = (fieldname, text)
        df = self._df.get(key)
        if df is None:
            df = 0
            # Each segment's own postings, not the searcher's: those would be scored, by us. One
            # term lookup a segment (a missing one kept as missing), not one for the whole index.
            for leaf, mine, runs in self._segments_in(searcher):
                info = whoosh_internals.term_info_or_none(leaf, fieldname, text)
                if info is None:
                    continue
                counted = _by_runs(runs, info, leaf, fieldname, text, self._kept)
                if counted is None:
                    counted = _count_of(info, mine, leaf, fieldname, text, self._kept)
                df += counted
            self._df[key] = df
        return df

    def _segments_in(self, searcher: Any) -> list[tuple[Any, AbstractSet[int], ScopeRuns | None]]:
        """Each segment reader of `searcher`, the scope's documents in it (by its numbers) and,
        for a merged segment with counts per run (scope_runs.py), the scope's runs there."""
        if self._segments_of is not searcher:
            leaves = searcher.reader().leaf_readers()
            segments = []
            for leaf, offset in leaves:
                mine = in_leaf(self.docs, offset, leaf.doc_count_all(), len(leaves) == 1)
                assert mine is not None
                segments.append((leaf, mine, self._scope_runs(leaf, mine)))
            self._segments, self._segments_of = segments, searcher
        return self._segments

    def _scope_runs(self, leaf: Any, mine: AbstractSet[int]) -> ScopeRuns | None:
        table = self._run_counts.of(leaf) if self._run_counts is not None else None
        if table is None:
            return None
        ordered = in_order(mine) if isinstance(mine, frozenset) else sorted(mine)
        segment = leaf.segment()
        deleted = segment.deleted_docs() if segment.has_deletions() else ()
        return scope_runs(table, ordered, deleted)


def _by_runs(
    runs: ScopeRuns | None,
    info: Any,
    leaf: Any,
    fieldname: str,
    text: Any,
    kept: KeptNumbers | None,
) -> int | None:
    """A scope's count of the word of `info` in segment `leaf` from the segment's counts per
    scope run (scope_runs.py), less the deleted documents of the scope's `runs` that hold it;
    None without them."""
    if runs is None:
        return None
    total = runs.table.count(info, runs.inside)
    if total and runs.deleted:
        total -= _count_of(info, runs.deleted, leaf, fieldname, text, kept)
    return total


def _count_of(
    info: Any,
    docs: AbstractSet[int],
    leaf: Any,
    fieldname: str,
    text: Any,
    kept: KeptNumbers | None = None,
) -> int:
    """How many of `docs` (live documents of segment `leaf`) hold the term of `info`, its term
    info there, in `fieldname`.

    A merged segment holds each set of projects' documents in one run of numbers (index_merge.py),
    so many words of a project lie, from their first posting to their last (the term info's
    smallest and largest numbers), within the project's run or wholly outside the scope. When
    every number of that span is one of `docs` (live ones: no deleted or other document lies
    between), each posting is one of them and the term info's count is the answer; when none
    is, 0. Neither reads a posting. The other words' postings are counted: a short list's
    numbers from `kept` when another scope or searcher read them before."""
    ordered = in_order(docs) if isinstance(docs, frozenset) else sorted(docs)
    try:
        first, last = int(info.min_id()), int(info.max_id())
    except Exception:  # a term info without its numbers: the postings tell
        first, last = 0, -1
    if first <= last:
        within = bisect.bisect_right(ordered, last) - bisect.bisect_left(ordered, first)
        if within == 0:
            return 0
        if within == last - first + 1:
            return int(info.doc_frequency())
    if kept is not None and info.doc_frequency() <= _SHORT:
        numbers = kept.numbers(leaf, fieldname, text, info)
        return sum(map(docs.__contains__, numbers))
    postings = whoosh_internals.postings_from_info(leaf, fieldname, text, info)
    return _count_in(postings, docs, ordered, before_first(info))


# A posting list this long at most is one block (Whoosh's blocks hold 128): its numbers are
# decoded to be counted anyway, and kept. Longer ones are counted by block headers in part.
_SHORT = 128
# What KeptNumbers holds before it starts afresh, in 4-byte units: a document number is one,
# a list's key and array some 64 more. A megabyte or so.
_NUMBERS_KEPT = 1 << 18
_LIST_COST = 64


class KeptNumbers:
    """The document numbers of short posting lists a scope's count read, per segment, for the
    index's life: a segment's postings never change once written (a deletion only marks the
    document), and each project's scope, and each searcher a commit opens, counts a prompt's
    words again, among the same postings of the same merged segment."""

    def __init__(self) -> None:
        self._numbers: dict[tuple[str, str, Any], array[int]] = {}
        self._held = 0

    def numbers(self, leaf: Any, fieldname: str, text: Any, info: Any) -> array[int]:
        """Every document number of `text`'s postings in `fieldname` of segment `leaf` (its
        term info there `info`), the segment's deleted documents among them or not: a scope
        holds live ones only."""
        key = (leaf.segment().segment_id(), fieldname, text)
        found = self._numbers.get(key)
        if found is None:
            postings = whoosh_internals.postings_from_info(leaf, fieldname, text, info)
            if type(postings) is FilterMatcher:
                postings = postings.child  # its deleted documents are in no scope
            found = whoosh_internals.all_numbers(postings)
            if self._held + len(found) + _LIST_COST > _NUMBERS_KEPT:
                self._numbers.clear()
                self._held = 0
            self._numbers[key] = found
            self._held += len(found) + _LIST_COST
        return found

    def keep_only(self, segment_ids: set[str]) -> None:
        """Forget the numbers of segments a merge removed."""
        for key in [k for k in self._numbers if k[0] not in segment_ids]:
            self._held -= len(self._numbers.pop(key)) + _LIST_COST


def _count_in(m: Any, docs: AbstractSet[int], ordered: Sequence[int], after: int) -> int:
    """How many of leaf matcher `m`'s postings are of `docs` (`ordered`: the same in order),
    `after` a number below its first: counted a block at a time, the weights never decoded,
    and a block whose numbers (by its header) are all of `docs` counted by its length."""
    if type(m) is FilterMatcher and whoosh_internals.filter_kept(m)[1]:
        # A segment's deleted documents left out: `docs` holds live ones only, so the count
        # is the same without the filter, and the postings underneath read by blocks.
        m = m.child
    if not whoosh_internals.block_readable(m):
        return sum(1 for d in m.all_ids() if d in docs)
    return whoosh_internals.count_postings(m, docs, ordered, after)
