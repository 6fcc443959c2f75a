"""The large segments of a two-process build merged into one beside the writer
(search/index_merge.py): edits never wait for the merge, and none is lost to its swap."""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from whoosh.query import Or, Term

from brainiac import Memory
from brainiac.core import faults
from brainiac.core.errors import SearchError
from brainiac.search import index_writes, whoosh_internals
from brainiac.search.corpus import Document
from brainiac.search.index import Index
from brainiac.search.index_merge import FOLDER
from brainiac.search.index_scoring import inside_and_outside
from brainiac.store.locations import Locations
from helpers import DEADLINE_S, JOBS_OFF, run_daemon, wait_for

T = dt.datetime(2026, 11, 20, 9, 0)


def _note(i: int, body: str | None = None) -> Document:
    # Lengths that Whoosh's one-byte stored length rounds (see the scoring test).
    text = body if body is not None else f"word{i} shared" + " filler" * (i % 41)
    return Document(key=f"n{i}.md", path=f"n{i}.md", kind="note", body=text).with_digest()


def two_large_segments(
    directory: Path,
    monkeypatch: pytest.MonkeyPatch,
    make: Callable[[int], Document],
    count: int = 900,
) -> Index:
    """`count` documents in two large segments, as a large vault's two-process build leaves them
    (the threshold lowered: 900 documents are a large vault). Made by two commits in this
    process, 300 and the rest: the build's two processes share the documents as they start and
    take them, and under load one takes nearly all, which leaves one large segment and nothing
    to merge beside the writer."""
    monkeypatch.setattr(index_writes, "MULTIPROCESS_ABOVE", 300)
    index = Index(directory)
    assert index.build(make(i) for i in range(300)) == 300  # not above it: in one process
    index.apply([make(i) for i in range(300, count)], [])
    assert index.segment_count() == 2 and len(index.merge_beside_sources()) == 2
    return index


@pytest.fixture
def built(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Index:
    """An index of a large vault: two large segments."""
    return two_large_segments(tmp_path / "idx", monkeypatch, _note)


def _paths(index: Index, query: str) -> list[str]:
    return [h.path for h in index.search(query)]


def test_a_save_and_a_delete_during_the_merge_hold_after_the_swap(built: Index) -> None:
    job = built.merge_beside_start()
    assert job is not None
    # Edits while the child copies: each is committed and searchable at once (the writer is
    # free), deleting documents in the very segments being copied.
    built.apply([_note(5, "rewritten five"), _note(2000, "a brand new note")], ["n7.md"])
    assert _paths(built, "rewritten") == ["n5.md"] and _paths(built, "brand") == ["n2000.md"]
    assert _paths(built, "word7") == [] and _paths(built, "word5") == []
    built.apply([], ["n800.md"])
    assert built.merge_beside_finish(job)
    # The copy took the sources' place: one large segment, and the first edit's own.
    assert built.segment_count() == 2
    assert built.merge_beside_sources() == ()
    assert _paths(built, "rewritten") == ["n5.md"] and _paths(built, "brand") == ["n2000.md"]
    for gone in ("word5", "word7", "word800"):
        assert _paths(built, gone) == [], gone
    for kept in (0, 6, 8, 299, 300, 799, 801, 899):
        assert _paths(built, f"word{kept}") == [f"n{kept}.md"]
    assert built.doc_count() == 900 - 2 + 1
    assert not (built.directory / FOLDER).exists()
    built.close()
    reopened = Index(built.directory)  # what the swap committed is what is on disk
    assert reopened.doc_count() == 899 and _paths(reopened, "word800") == []
    reopened.close()


def test_the_merged_segment_scores_as_the_two_did(built: Index) -> None:
    """Whoosh's own merges sum a copy's field lengths from the rounded one-byte lengths stored
    per document, which moves BM25F's average lengths and with them close results' order; the
    merge beside the writer keeps the exact totals."""
    queries = ("word5 shared", "shared", "word899 word0 shared")
    before = [[(h.path, h.score) for h in built.search(q, limit=50)] for q in queries]
    job = built.merge_beside_start()
    assert job is not None and built.merge_beside_finish(job)
    assert built.segment_count() == 1
    assert [[(h.path, h.score) for h in built.search(q, limit=50)] for q in queries] == before
    built.close()


def test_a_merge_whose_sources_were_merged_meanwhile_is_dropped(built: Index) -> None:
    job = built.merge_beside_start()
    assert job is not None
    # A third of the documents deleted: the idle merge rewrites the whole index without them,
    # under the writer, and the copy's sources are gone.
    built.apply([_note(1000)], [f"n{i}.md" for i in range(300)])
    assert built.merge_segments()
    assert not built.merge_beside_finish(job)
    assert built.segment_count() == 1 and built.doc_count() == 601
    assert _paths(built, "word1000") == ["n1000.md"]
    assert not (built.directory / FOLDER).exists()
    built.close()


def test_a_merge_killed_halfway_leaves_the_index_as_it_was(
    built: Index, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = built.directory / FOLDER
    # The child kills itself once it has copied the documents, before its commit: killed from
    # here once its first files showed, a child quicker than the look would finish first.
    monkeypatch.setenv(faults.ENV, "merge.copied")
    job = built.merge_beside_start()
    assert job is not None
    wait_for(job.done, "the merge's child to die")
    monkeypatch.delenv(faults.ENV)
    assert any(folder.iterdir())  # what it wrote before it died
    with pytest.raises(RuntimeError, match="merging segments beside the writer failed"):
        built.merge_beside_finish(job)
    assert built.segment_count() == 2 and built.doc_count() == 900
    assert built.merge_beside_start() is None  # not retried over the same segments
    built.close()
    # The daemon itself killed mid-merge: what the child wrote is left behind. The index opens
    # as it was, without it, and the next daemon's merge starts afresh.
    folder.mkdir()
    (folder / "_MAIN_1.toc").write_bytes(b"half written")
    index = Index(built.directory)
    assert not folder.exists()  # as large as what it copied: not kept
    assert index.segment_count() == 2 and _paths(index, "word450") == ["n450.md"]
    job = index.merge_beside_start()
    assert job is not None and index.merge_beside_finish(job)
    assert index.segment_count() == 1 and index.doc_count() == 900
    index.close()


@pytest.mark.slow
def test_the_daemon_leaves_a_two_process_build_in_one_segment(tmp_path: Path) -> None:
    """A vault large enough for a two-process build: after `brainiac reindex` the index has two
    large segments, and the running daemon merges them once it is idle."""
    from brainiac.formats import events as ev

    vault = tmp_path / "vault"
    Memory.init(vault)
    lines = [
        ev.render(ev.make_event(f"entry {i} mentions marker{i}", at=T + dt.timedelta(minutes=i)))
        for i in range(index_writes.MULTIPROCESS_ABOVE + 100)
    ]
    stm = vault / "memory/short_term.md"
    stm.write_text(stm.read_text() + "".join(lines))
    with Memory(vault, refresh_interval_s=0, meaning=False) as memory:
        memory.reindex()
        assert memory.indexer.index.segment_count() == 2

    def segments() -> int:
        try:
            beside = Index(Locations.for_vault(vault).index_dir, writable=False)
        except SearchError:  # opened as a commit deleted the files it replaced: look again
            return 0
        try:
            return beside.segment_count()
        finally:
            beside.close()

    env = {**JOBS_OFF, "BRAINIAC_RETRIEVAL_MEANING": "false"}  # no vectors to make meanwhile
    with run_daemon(vault, tmp_path / "daemon.log", env):
        # The merge runs at low priority: on a machine busy with other tests it takes longer.
        wait_for(lambda: segments() == 1, "the daemon's merge", deadline_s=3 * DEADLINE_S)
        with Memory(vault, index_writes=False, meaning=False) as beside:
            assert [h.excerpt for h in beside.search("marker1234")][:1] == [
                "entry 1234 mentions marker1234"
            ]


def test_the_daemon_purges_a_large_index_beside_its_writer(built: Index) -> None:
    """A third of a large index's documents replaced (a job rewrote many notes): the daemon's
    idle merge leaves them out in a copy made by a child process, not in an `optimize` that
    rewrites every document in the daemon's own heap."""
    built.purges_beside = True  # as the daemon's service sets it
    built.apply([_note(1000)], [f"n{i}.md" for i in range(0, 900, 3)])
    assert built.deleted_share() >= index_writes._PURGE_DELETED_SHARE
    assert not built.merge_segments()  # nothing rewritten in this process
    assert built.deleted_share() >= index_writes._PURGE_DELETED_SHARE
    job = built.merge_beside_start()
    assert job is not None and job.pid != os.getpid()
    built.apply([], ["n1.md"])  # deleted while the child copies: deleted in the copy too
    assert built.merge_beside_finish(job)
    assert built.segment_count() == 1
    assert built.doc_count() == 900 - 300 + 1 - 1
    assert built.deleted_share() <= 1 / 601  # n1 only, if the child copied it before
    assert _paths(built, "word1000") == ["n1000.md"] and _paths(built, "word3") == []
    assert _paths(built, "word1") == [] and _paths(built, "word2") == ["n2.md"]
    assert built.merge_beside_start() is None  # purged: nothing left to do
    built.close()
    # A library caller (no daemon) still purges in its own process.
    library = Index(built.directory)
    library.apply([], [f"n{i}.md" for i in range(2, 900, 3)])
    assert library.merge_segments() and library.deleted_share() == 0.0
    library.close()


def _scoped(i: int) -> Document:
    """A tenth of the notes in project alpha, a tenth global, the rest in beta and gamma: a
    shared vault's documents, interleaved as their sessions were."""
    projects = {0: ("alpha",), 1: ("*",)}.get(i % 10, ("beta",) if i % 10 < 6 else ("gamma",))
    body = f"word{i} shared" + " filler" * (i % 41)
    doc = Document(key=f"n{i}.md", path=f"n{i}.md", kind="note", body=body, projects=projects)
    return doc.with_digest()


@pytest.fixture
def shared(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Index:
    """`built`, of a vault shared by three projects."""
    return two_large_segments(tmp_path / "idx", monkeypatch, _scoped)


def _in_order(index: Index) -> list[tuple[tuple[str, ...], int]]:
    """Each live document's projects and note number, by document number."""
    searcher = index._searcher
    found = []
    for docnum in range(searcher.doc_count_all()):
        if not searcher.reader().is_deleted(docnum):
            fields = searcher.stored_fields(docnum)
            scope = tuple(fields.get("projects", "").split(","))
            found.append((scope, int(fields["key"][1:-3])))
    return found


def _runs(order: list[tuple[tuple[str, ...], int]]) -> list[tuple[str, ...]]:
    """The scopes of `order` as they come, one entry per run of documents of one scope."""
    return [scope for i, (scope, _) in enumerate(order) if i == 0 or order[i - 1][0] != scope]


def test_a_merged_shared_index_holds_each_project_in_one_run_in_its_order(shared: Index) -> None:
    """The copy numbers the documents by scope, the global ones first: a project's postings
    are then blocks of its own, which a search in another passes over by their headers."""
    before = _in_order(shared)
    assert len(_runs(before)) > 4  # interleaved as written
    job = shared.merge_beside_start()
    assert job is not None and shared.merge_beside_finish(job)
    assert shared.segment_count() == 1
    order = _in_order(shared)
    assert _runs(order) == [("*",), ("alpha",), ("beta",), ("gamma",)]
    for scope in _runs(order):  # each project's documents in the order they had
        assert [n for s, n in order if s == scope] == [n for s, n in before if s == scope]
    assert sorted(order) == sorted(before)
    shared.close()


def test_a_vault_without_projects_keeps_its_order_in_the_merged_copy(built: Index) -> None:
    before = _in_order(built)
    job = built.merge_beside_start()
    assert job is not None and built.merge_beside_finish(job)
    assert _in_order(built) == before
    built.close()


def test_deletions_during_the_merge_hold_in_the_copy_ordered_by_scope(shared: Index) -> None:
    """A document's number in the copy is not its source's base plus its rank any more: the
    deletions made while the child copied are mapped through the numbers it printed."""
    job = shared.merge_beside_start()
    assert job is not None
    wait_for(job.done, "the merge's copy")  # so that every deletion below is made after it
    # One of each scope, in both sources, and one rewritten (deleted in its source, added new).
    gone = [10, 1, 2, 6, 801, 890]
    rewritten = dataclasses.replace(_scoped(455), body="rewritten").with_digest()
    shared.apply([rewritten], [f"n{i}.md" for i in gone])
    assert shared.merge_beside_finish(job)
    assert _runs(_in_order(shared))[:4] == [("*",), ("alpha",), ("beta",), ("gamma",)]
    for i in [*gone, 455]:
        assert _paths(shared, f"word{i}") == [], i
    assert _paths(shared, "rewritten") == ["n455.md"]
    for i in (0, 3, 5, 7, 11, 20, 300, 451, 800, 802, 899):
        assert _paths(shared, f"word{i}") == [f"n{i}.md"], i
    assert shared.doc_count() == 900 - len(gone)
    shared.close()


def test_a_scoped_search_after_the_merge_reads_no_block_of_other_projects_alone(
    shared: Index, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After the merge a project's postings are blocks of their own: a search in the project
    decodes none of the blocks that hold only other projects' documents (passed over by their
    headers), and finds what it found before, with the same scores."""
    scope = ("alpha", "*")
    queries = ("shared word10 word21", "filler shared", "word30 word45 word11")

    def searched() -> list[Any]:
        found = []
        for q in queries:
            hits = shared.search(q, limit=200, projects=scope, feedback=True)
            mine, others = shared.search_with_others(q, 200, scope, 12, None, 1.5)
            for got in (hits, mine, others):
                found.append(sorted((-h.score, h.path) for h in got))
        return found

    before = searched()
    job = shared.merge_beside_start()
    assert job is not None and shared.merge_beside_finish(job)
    read_ids = whoosh_internals._read_ids
    decoded: list[tuple[int, int]] = []

    def counted(m: Any) -> None:
        read_ids(m)
        decoded.append((m.id(), m.block_max_id()))  # the numbers the block holds

    monkeypatch.setattr(whoosh_internals, "_read_ids", counted)
    assert searched() == before
    docs = sorted(shared._searcher.docs_for_query(Or([Term("projects", p) for p in scope])))
    assert len(docs) == 180 and decoded
    for first, last in decoded:
        assert any(first <= d <= last for d in docs), (first, last)
    shared.close()


@pytest.mark.parametrize("at_least", [0.0, 0.3, 0.6, 1.0, 1.5])
def test_after_the_merge_the_outside_that_can_reach_the_floor_scores_as_in_whoosh(
    shared: Index, at_least: float
) -> None:
    """The other projects' blocks passed over for the scope's scores are read where a match may
    reach the floor (each term's bound counts their headers' largest weights), and the matches
    read there are scored with every term's postings."""
    job = shared.merge_beside_start()
    assert job is not None and shared.merge_beside_finish(job)
    searcher = shared._searcher
    inside = frozenset(searcher.docs_for_query(Or([Term("projects", p) for p in ("alpha", "*")])))
    for words in (["shared", "word10", "word305"], ["filler", "word4", "word10"]):
        query = Or([Term("note_body", t) for t in shared.terms(" ".join(words))])
        query.matcher_type = Or.DEFAULT_MATCHER
        every = dict(searcher.search(query, limit=None).items())
        mine, outside = inside_and_outside(searcher, query, inside, at_least)
        assert mine == {d: s for d, s in every.items() if d in inside}
        floor = at_least * max(mine.values())
        assert outside == {d: s for d, s in every.items() if d not in inside and s >= floor}
        assert outside or at_least >= 1.0
    shared.close()
