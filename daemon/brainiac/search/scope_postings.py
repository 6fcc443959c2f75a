"""A scope's postings of each word in a segment, as a scoped search read them, kept.

In a vault shared by projects a word's posting list holds every project's postings, and a
short one is a single block of all of them: a scoped search decodes the block, picks out its
own documents and keeps the mixed blocks for the other projects' matches (index_scoring.py).
A project alone reads the same word's postings and scores them, nothing more. Kept here, the
scope's picked postings (`Slice`) make the next prompt with the word score them as a project
alone would: a conversation comes back to its names and subjects.

A segment's postings never change once written (a deletion only marks the document), so a
slice is good for the segment's life among the same live documents of the scope: it is kept
per segment and per scope (its live documents in the segment), across the searchers each
commit opens, and forgotten when a merge removes the segment. A deletion in the segment (a
note a job rewrote) makes the scope's documents fewer: its slices are then the earlier ones
less the deleted documents' postings, picked out as each word is asked again.
"""

from __future__ import annotations

import itertools
from array import array
from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any

from brainiac.search import whoosh_internals

# Bytes kept before starting afresh: 8 a posting of the scope's (a 4-byte number, a 4-byte
# weight), 70 a posting of a decoded block (Whoosh's tuples of Python numbers), 40 a block's
# place, and some 300 a slice (its objects, its key).
_BYTES_KEPT = 1 << 22
_POSTING_BYTES = 8
_DECODED_BYTES = 70
_PLACE_BYTES = 40
_SLICE_BYTES = 300
_ASKED_BYTES = 100  # a word asked once: its key in a set
# Scopes kept at most: a vault's projects each read by a few segments.
_SCOPES_KEPT = 256


@dataclass(frozen=True)
class Slice:
    """A word's postings in one segment as a scope sees them: the scope's own (`ids`, `weights`,
    in document order), the places of the blocks that hold other documents (`passed`: those
    passed over by their headers, holding none of the scope's, and those holding both), the
    decoded blocks holding both that have no place (`outer`: rare, a block the matcher had
    entered), and the word's term info in the segment (`info`)."""

    ids: array[int]
    weights: array[float]
    outer: tuple[whoosh_internals.Block, ...]
    passed: tuple[whoosh_internals.Passed, ...]
    info: Any

    def narrowed(self, docs: AbstractSet[int]) -> Slice:
        """This slice among `docs` only: the scope's documents after some were deleted (the
        blocks it passed over or kept for other documents are still those)."""
        mine = list(map(docs.__contains__, self.ids))
        ids = array("I", itertools.compress(self.ids, mine))
        weights = array("f", itertools.compress(self.weights, mine))
        return Slice(ids, weights, self.outer, self.passed, self.info)

    def cost(self) -> int:
        """About how many bytes the slice holds."""
        decoded = sum(end - first for _, _, first, end in self.outer)
        return (
            len(self.ids) * _POSTING_BYTES
            + decoded * _DECODED_BYTES
            + len(self.passed) * _PLACE_BYTES
            + _SLICE_BYTES
        )


class ScopeSlices:
    """One scope's slices in one segment, by (field name, term bytes); `before`: the scope's
    slices there before some of its documents were deleted."""

    def __init__(
        self,
        owner: KeptSlices,
        key: tuple[str, frozenset[int]],
        before: ScopeSlices | None = None,
    ) -> None:
        self._owner = owner
        self.key = key
        self._slices: dict[tuple[str, bytes], Slice] = {}
        self._asked: set[tuple[str, bytes]] = set()
        self.held = 0
        self.before = before

    def get(self, term: tuple[str, bytes]) -> Slice | None:
        found = self._slices.get(term)
        if found is None and self.before is not None:
            earlier = self.before._slices.get(term)
            if earlier is not None:
                found = earlier.narrowed(self.key[1])
                self.put(term, found)
        return found

    def asked_before(self, term: tuple[str, bytes]) -> bool:
        """Whether `term` was asked of this scope before (not kept then: a word is kept from
        its second reading, most of a prompt's words never coming back); from now on it was."""
        if term in self._asked:
            return True
        self._hold(_ASKED_BYTES)
        self._asked.add(term)
        return False

    def put(self, term: tuple[str, bytes], found: Slice) -> None:
        self._hold(found.cost())
        self._slices[term] = found

    def forget(self) -> None:
        """Nothing kept, no word asked (the owner has started afresh)."""
        self._slices.clear()
        self._asked.clear()
        self.held = 0
        self.before = None

    def _hold(self, cost: int) -> None:
        """Count `cost` more bytes here and in the owner, which makes room first."""
        self._owner.make_room(cost, self)
        self.held += cost
        self._owner.held += cost


class KeptSlices:
    """Every scope's slices, per segment, for the index's life (bounded: `_BYTES_KEPT` bytes,
    `_SCOPES_KEPT` scopes: a deletion in a segment makes its scopes new ones)."""

    def __init__(self) -> None:
        self._scopes: dict[tuple[str, frozenset[int]], ScopeSlices] = {}
        self.held = 0

    def of(
        self, segment_id: str, docs: frozenset[int], deleted: Callable[[], AbstractSet[int]]
    ) -> ScopeSlices:
        """The slices of the scope whose live documents in segment `segment_id` are `docs` (by
        the segment's own numbers); `deleted`: the segment's deleted documents, asked only
        when a scope of more documents was kept (it may be this one before deletions)."""
        key = (segment_id, docs)
        found = self._scopes.get(key)
        if found is None:
            if len(self._scopes) >= _SCOPES_KEPT:
                self.clear()
            before = self._before_deletions(segment_id, docs, deleted)
            found = self._scopes[key] = ScopeSlices(self, key, before)
        return found

    def _before_deletions(
        self, segment_id: str, docs: frozenset[int], deleted: Callable[[], AbstractSet[int]]
    ) -> ScopeSlices | None:
        """A kept scope of the segment whose documents are `docs` and deleted ones (taken out
        of the registry: its documents are no scope's now), or None. Only then are its slices
        this scope's less the deleted postings: a scope of more live documents has passed over
        or scored whole blocks that hold documents outside this one."""
        gone: AbstractSet[int] | None = None
        for key, scope in self._scopes.items():
            earlier = key[1]
            if key[0] != segment_id or len(earlier) <= len(docs) or not docs <= earlier:
                continue
            if gone is None:
                gone = deleted()
            if earlier - docs <= gone:
                del self._scopes[key]
                if scope.before is not None:  # one step back is kept, no more
                    self.held -= scope.before.held
                    scope.before = None
                return scope
        return None

    def make_room(self, cost: int, filling: ScopeSlices) -> None:
        """Start afresh when a slice of `cost` would not fit, but for the scope `filling`
        (emptied too: its search goes on filling it)."""
        if self.held + cost > _BYTES_KEPT:
            self.clear()
            self._scopes[filling.key] = filling

    def keep_only(self, segment_ids: set[str]) -> None:
        """Forget the slices of segments a merge removed."""
        for key in [k for k in self._scopes if k[0] not in segment_ids]:
            scope = self._scopes.pop(key)
            self.held -= scope.held + (scope.before.held if scope.before is not None else 0)

    def clear(self) -> None:
        """Forget every scope's slices (and the words asked once)."""
        for scope in self._scopes.values():
            scope.forget()
        self._scopes.clear()
        self.held = 0


def sliced(
    blocks: Sequence[whoosh_internals.Block],
    places: Sequence[whoosh_internals.Passed | None],
    inside: AbstractSet[int],
    whole: Sequence[bool],
    passed: Sequence[whoosh_internals.Passed],
    info: Any,
) -> Slice:
    """The `Slice` of a word's decoded `blocks` for the scope of `inside` (its documents in the
    segment): `places[i]`, where block i lies (`posting_blocks`'s), `whole[i]`, whether its
    numbers all lie in one run of the scope's; `passed`, the blocks passed over. A block
    holding other documents too is kept by its place, to be read again when the other
    projects' matches are asked of it (most prompts ask few), decoded only without one."""
    ids: array[int] = array("I")
    # 32-bit, as Whoosh's postings writer holds every weight before it stores it: no rounding.
    weights: array[float] = array("f")
    outer = []
    elsewhere = list(passed)
    for block, place, all_inside in zip(blocks, places, whole, strict=True):
        numbers, block_weights, first, end = block
        if all_inside:
            ids.extend(numbers[first:end])
            weights.extend(block_weights[first:end])
            continue
        if place is None:
            outer.append(block)
        else:
            elsewhere.append(place)
        mine = list(map(inside.__contains__, numbers[first:end]))
        ids.extend(itertools.compress(numbers[first:end], mine))
        weights.extend(itertools.compress(block_weights[first:end], mine))
    return Slice(ids, weights, tuple(outer), tuple(elsewhere), info)
