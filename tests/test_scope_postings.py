"""A scope's postings of a word, kept per segment as its searches read them (scope_postings.py):
the scores are Whoosh's whether the postings come from the segment or from what was kept,
after deletions and beside new segments; a word searched again in the same scope, by this
searcher or the next a commit opens, reads none of the merged segment's postings; what is kept
is bounded, and forgotten with its segment."""

from __future__ import annotations

from array import array
from pathlib import Path
from typing import Any

import pytest
from whoosh.query import Or, Term

from brainiac.search import scope_postings, whoosh_internals
from brainiac.search.index import Index
from brainiac.search.index_scoring import inside_and_outside, match_scores
from brainiac.search.scope_postings import KeptSlices, Slice
from brainiac.search.whoosh_internals import Passed
from test_scope_statistics import ALPHA_AND_GLOBAL, ONLY, SCOPES, WORDS, _document, merged_index

# Queries as a context's: each word in several fields (Whoosh's binary tree of unions, a leaf
# per word and field), words common to every project, rare ones, one project's own.
QUERIES = {
    "common": ["kernel", "docker", "budget"],
    "rare": ["zebra", "lunch", ALPHA_AND_GLOBAL],
    "own": [*ONLY.values(), "rollback"],
}


def _query(words: list[str]) -> Any:
    query = Or([Term(f, w) for w in words for f in ("body", "title", "context")])
    query.matcher_type = Or.DEFAULT_MATCHER  # the tree index_scoring.py reads, as Index's
    return query


def _whooshs(searcher: Any, query: Any, docs: frozenset[int]) -> dict[int, float]:
    """Whoosh's own scores of every match of `query` among `docs`."""
    results = searcher.search(query, limit=None, filter=set(docs))
    return {hit.docnum: hit.score for hit in results}


@pytest.fixture
def merged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Index:
    return merged_index(tmp_path, monkeypatch)


def _every_scope_scores_as_whoosh(index: Index) -> int:
    """Each query in each scope, searched three times with the index's kept slices (the first
    as read, the second kept, the third from them) both ways a context searches
    (`match_scores`; `inside_and_outside`, whose outside matches come from the blocks kept by
    their places): the same scores as Whoosh's. The matches compared."""
    searcher = index._searcher
    compared = 0
    for scope in SCOPES:
        docs = index._scope_statistics(scope).docs
        index._weighting.scope = index._scope_statistics(scope)
        try:
            for words in QUERIES.values():
                query = _query(words)
                expected = _whooshs(searcher, query, docs)
                everyone = {hit.docnum: hit.score for hit in searcher.search(query, limit=None)}
                for _ in range(3):
                    found = match_scores(searcher, query, allow=docs, slices=index._slices)
                    assert found == expected, (scope, words)
                    inside, outside = inside_and_outside(searcher, query, docs, 0.5, index._slices)
                    assert inside == expected, (scope, words)
                    floor = 0.5 * max(expected.values(), default=0.0)
                    assert outside == {
                        d: s for d, s in everyone.items() if d not in docs and s >= floor
                    }
                compared += len(expected)
        finally:
            index._weighting.scope = None
    return compared


def test_scores_from_kept_postings_are_whooshs_after_deletions_and_beside_new_segments(
    merged: Index,
) -> None:
    assert _every_scope_scores_as_whoosh(merged) > 3000
    # Deleted since the merge, the merged segment's first documents and some of alpha's
    # among them: the scope's live documents there change, so do its postings.
    stored = merged._searcher.stored_fields
    alpha = sorted(merged._scope_statistics(("alpha",)).docs)
    gone = {stored(d)["key"] for d in [*range(4), *alpha[:5], *alpha[-3:]]}
    merged.apply([], sorted(gone))
    assert merged.segment_count() == 1
    assert _every_scope_scores_as_whoosh(merged) > 3000
    # A segment written since, not in scope order, beside the merged one.
    merged.apply([_document(i) for i in range(1200, 1290)], [])
    assert merged.segment_count() == 2
    assert _every_scope_scores_as_whoosh(merged) > 3000
    merged.close()


def _blocks_decoded(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The postings files (each segment's own) `posting_blocks` reads, from now on (one entry
    a word)."""
    read: list[int] = []
    posting_blocks = whoosh_internals.posting_blocks

    def reading(m: Any, *args: Any, **kwargs: Any) -> Any:
        read.append(id(m._postfile))
        return posting_blocks(m, *args, **kwargs)

    monkeypatch.setattr(whoosh_internals, "posting_blocks", reading)
    return read


def test_a_word_searched_again_in_a_scope_reads_none_of_the_merged_segments_postings(
    merged: Index, monkeypatch: pytest.MonkeyPatch
) -> None:
    read = _blocks_decoded(monkeypatch)
    words = [*WORDS, ALPHA_AND_GLOBAL]
    first = merged.search_with_others(" ".join(words), 10, ("alpha", "*"), others=5)
    assert len(read) >= len(words)  # each word's postings read, in several fields
    # Read as they come the first time (most words of a prompt never come back), kept from
    # the second.
    merged.search_with_others(" ".join(words), 10, ("alpha", "*"), others=5)
    read.clear()
    again = merged.search_with_others(" ".join(words), 10, ("alpha", "*"), others=5)
    assert read == []
    assert [(h.path, h.score) for h in again[0]] == [(h.path, h.score) for h in first[0]]
    assert [(h.path, h.score) for h in again[1]] == [(h.path, h.score) for h in first[1]]
    # Another scope reads its own.
    merged.search_with_others(" ".join(words), 10, ("beta", "*"), others=5)
    assert len(read) >= len(words)
    merged_postings = set(read)
    assert len(merged_postings) == 1
    # A deletion in the merged segment (alpha's documents fewer): its kept postings less the
    # deleted ones', none read again, and the hits are as if read afresh.
    stored = merged._searcher.stored_fields
    alpha = sorted(merged._scope_statistics(("alpha",)).docs)
    merged.apply([], sorted({stored(d)["key"] for d in alpha[:6]}))
    read.clear()
    narrowed = merged.search_with_others(" ".join(words), 10, ("alpha", "*"), others=5)
    assert read == []
    kept, merged._slices = merged._slices, KeptSlices()
    afresh = merged.search_with_others(" ".join(words), 10, ("alpha", "*"), others=5)
    assert read
    merged._slices = kept
    assert [(h.path, h.score) for h in narrowed[0]] == [(h.path, h.score) for h in afresh[0]]
    assert [(h.path, h.score) for h in narrowed[1]] == [(h.path, h.score) for h in afresh[1]]
    # A commit of a new segment opens a new searcher: only the new segment is read.
    merged.apply([_document(i) for i in range(1200, 1290)], [])
    read.clear()
    merged.search_with_others(" ".join(words), 10, ("alpha", "*"), others=5)
    assert read and len(set(read)) == 1 and not set(read) & merged_postings
    merged.close()


def _no_deletions() -> frozenset[int]:
    return frozenset()


def _slice(postings: int, outer: int = 0) -> Slice:
    block = (tuple(range(outer)), (1.0,) * outer, 0, outer)  # a decoded block without a place
    return Slice(array("I", range(postings)), array("f", [1.0] * postings), (block,), (), None)


def test_what_is_kept_is_bounded_and_forgotten_with_its_segment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(scope_postings, "_BYTES_KEPT", 20_000)
    kept = KeptSlices()
    one, two = frozenset({1, 2}), frozenset({3})
    kept.of("a", one, _no_deletions).put(("body", b"kiln"), _slice(300, outer=100))
    kept.of("b", two, _no_deletions).put(("body", b"kiln"), _slice(200))
    # Equal documents are the same scope, whichever set holds them (a new searcher's).
    assert kept.of("a", frozenset({2, 1}), _no_deletions).get(("body", b"kiln")) is not None
    assert kept.of("a", two, _no_deletions).get(("body", b"kiln")) is None
    assert kept.held == 300 * 8 + 100 * 70 + 300 + 200 * 8 + 300
    kept.keep_only({"b"})  # segment a merged away
    assert kept.of("a", one, _no_deletions).get(("body", b"kiln")) is None
    assert kept.held == 200 * 8 + 300
    # Past the bound everything kept goes, and the newcomer is kept.
    filling = kept.of("b", two, _no_deletions)
    filling.put(("body", b"glaze"), _slice(2300))
    assert kept.of("b", two, _no_deletions) is filling
    assert filling.get(("body", b"kiln")) is None
    assert filling.get(("body", b"glaze")) is not None
    assert kept.held == 2300 * 8 + 300


def test_a_mixed_block_is_kept_by_its_place_with_the_scopes_postings_picked_out() -> None:
    inside = frozenset({2, 3, 4, 9})
    blocks = [
        ((2, 3, 4), (1.5, 2.0, 1.0), 0, 3),  # within one run of the scope's
        ((5, 9, 12), (1.0, 3.25, 0.5), 0, 3),  # mixed
        ((13, 16, 20, 21), (1.0, 2.0, 0.5, 2.0), 1, 4),  # mixed, entered by the matcher
    ]
    places = [Passed(1, 4, 10), Passed(4, 12, 60), None]
    passed = [Passed(21, 40, 200)]
    inside |= {16}
    found = scope_postings.sliced(blocks, places, inside, [True, False, False], passed, None)
    assert list(found.ids) == [2, 3, 4, 9, 16]
    assert list(found.weights) == [1.5, 2.0, 1.0, 3.25, 2.0]
    assert isinstance(found.ids, array) and isinstance(found.weights, array)
    # The mixed block with a place is read again when asked; the other is kept decoded.
    assert found.passed == (Passed(21, 40, 200), Passed(4, 12, 60))
    assert found.outer == (blocks[2],)


def test_a_scope_less_its_deleted_documents_narrows_its_slices_and_no_other_does() -> None:
    kept = KeptSlices()
    before = kept.of("a", frozenset({1, 2, 3, 4}), _no_deletions)
    before.put(
        ("body", b"kiln"), Slice(array("I", [1, 3, 4]), array("f", [1.0, 2.0, 3.0]), (), (), None)
    )
    # 2 and 4 deleted since: the same scope, its postings less 4's.
    after = kept.of("a", frozenset({1, 3}), lambda: frozenset({2, 4}))
    found = after.get(("body", b"kiln"))
    assert found is not None
    assert (list(found.ids), list(found.weights)) == ([1, 3], [1.0, 2.0])
    # A smaller scope whose missing documents are live is another scope: nothing kept.
    other = kept.of("a", frozenset({1}), lambda: frozenset({2, 4}))
    assert other.get(("body", b"kiln")) is None
    # Another segment's scope of the same numbers neither.
    assert kept.of("b", frozenset({1, 3}), lambda: frozenset({2, 4})).get(("body", b"kiln")) is None


def test_a_word_is_kept_from_its_second_reading_in_the_scope() -> None:
    kept = KeptSlices()
    scope = kept.of("a", frozenset({1, 2}), _no_deletions)
    assert not scope.asked_before(("body", b"kiln"))
    assert scope.asked_before(("body", b"kiln"))
    assert not scope.asked_before(("title", b"kiln"))  # another field's postings
    assert not kept.of("a", frozenset({1}), _no_deletions).asked_before(("body", b"kiln"))
