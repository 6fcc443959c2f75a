"""A scope's word counts (scope_statistics.py, ScopeStatistics): how many of a project's and the
global memories hold a word, taken from the word's term info where a merged segment's order
(each set of projects in one run of numbers) makes its postings all the scope's or none of
them, and by the block headers where a block is all the scope's; never different from a
count of the postings, whatever is deleted after the merge."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest
from whoosh.codec.whoosh3 import W3LeafMatcher

from brainiac.search import whoosh_internals
from brainiac.search.corpus import Document
from brainiac.search.index import Index
from brainiac.search.scope_runs import SUFFIX, RunCounts
from brainiac.search.scope_statistics import ScopeStatistics
from test_index_merge import two_large_segments

# A memory's projects: one, the global scope ("*"), two at once (a note whose sources are in
# both), or none (a note made before projects).
PROJECTS = [("alpha",), ("beta",), ("gamma",), ("*",), ("alpha", "beta"), ()]
SCOPES = [("alpha", "*"), ("beta", "*"), ("gamma", "*"), ("alpha",), ("alpha", "beta")]
# Words every project uses, in more and fewer documents than a posting block holds (128).
WORDS = ["kernel", "docker", "python", "rollback", "budget", "lunch", "zebra"]
# A word of one project's memories only, and one of alpha's and the global ones (other
# projects' runs lie between theirs in a merged segment).
ONLY = {("alpha",): "kiln", ("beta",): "glaze", ("gamma",): "lathe"}
ALPHA_AND_GLOBAL = "harbour"


def _document(i: int) -> Document:
    projects = PROJECTS[i % 6]
    words = [w for k, w in enumerate(WORDS) if i % (k + 1) == 0 and (w != "zebra" or i < 90)]
    if projects in ONLY:
        words.append(ONLY[projects])
    if projects in (("alpha",), ("*",)):
        words.append(ALPHA_AND_GLOBAL)
    body = " ".join([*words, f"item{i}"])
    tags = ("ops",) if i % 7 == 0 else ()
    return Document(
        key=f"e{i}.md",
        path=f"e{i}.md",
        kind="note" if i % 5 == 0 else "event",
        title=f"{words[0]} {i}" if i % 5 == 0 else "",
        body=body,
        context="deploy friday" if i % 4 == 1 else "",
        tags=tags,
        projects=projects,
    ).with_digest()


def merged_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Index:
    """Two large segments, as a large vault's build leaves them, merged beside the writer: one
    segment holding each set of projects' documents in one run of numbers."""
    index = two_large_segments(tmp_path / "idx", monkeypatch, _document, 1200)
    job = index.merge_beside_start()
    assert job is not None and index.merge_beside_finish(job)
    assert index.segment_count() == 1
    return index


@pytest.fixture
def merged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Index:
    return merged_index(tmp_path, monkeypatch)


def _counted(searcher: Any, docs: frozenset[int], field: str, word: str) -> int:
    """The scope's documents among `word`'s postings in `field`, each posting looked at: the
    count with no shortcut (deleted documents are not among `docs`)."""
    count = 0
    for leaf, offset in searcher.reader().leaf_readers():
        try:
            postings = leaf.postings(field, word)
        except Exception:  # no such term (or field) in this segment
            continue
        count += sum(1 for d in postings.all_ids() if d + offset in docs)
    return count


def _every_count_is_the_postings(index: Index) -> int:
    """Check every word of every field, in every scope, each counted afresh, with the short
    lists' numbers the index keeps (read by an earlier scope or searcher), and with the merged
    segment's counts per run (scope_runs.py); the number of counts checked."""
    searcher = index._searcher
    checked = 0
    for scope, kept, runs in itertools.product(
        SCOPES, (None, index._numbers), (None, index._run_counts)
    ):
        docs = index._scope_statistics(scope).docs
        counts = ScopeStatistics(docs, kept, runs)
        for leaf, _ in searcher.reader().leaf_readers():
            for field in sorted(leaf.indexed_field_names()):
                for term in leaf.lexicon(field):
                    word = term.decode("utf-8")
                    expected = _counted(searcher, docs, field, word)
                    assert counts.doc_frequency(searcher, field, word) == expected, (
                        scope,
                        field,
                        word,
                    )
                    checked += 1
    return checked


def test_every_words_scoped_count_is_its_postings_count_after_merge_and_deletions(
    merged: Index,
) -> None:
    assert _every_count_is_the_postings(merged) > 1000
    # Deleted after the merge (the segment keeps their postings), the segment's first
    # documents among them: a word's first postings may be deleted ones, and a term info's
    # smallest number a deleted document's.
    stored = merged._searcher.stored_fields
    gone = [stored(d)["key"] for d in range(4)]
    gone += [f"e{i}.md" for i in (1, 3, 6, 12, 60, 64, 420, 601, 1199)]
    merged.apply([], sorted(set(gone)))
    assert merged.segment_count() == 1
    assert _every_count_is_the_postings(merged) > 1000
    # A segment written since, not in scope order, beside the merged one.
    merged.apply([_document(i) for i in range(1200, 1290)], [])
    assert merged.segment_count() == 2
    assert _every_count_is_the_postings(merged) > 1000
    merged.close()


def _postings_read(monkeypatch: pytest.MonkeyPatch) -> tuple[list[Any], list[Any]]:
    """The posting lists opened and the blocks whose document numbers were decoded, from now
    on."""
    opened: list[Any] = []
    decoded: list[Any] = []
    init, read_ids, own_read_ids = (
        W3LeafMatcher.__init__,
        whoosh_internals._read_ids,
        W3LeafMatcher._read_ids,
    )

    def opening(self: Any, *args: Any, **kwargs: Any) -> None:
        opened.append(kwargs.get("term"))
        init(self, *args, **kwargs)

    def decoding(m: Any) -> None:
        decoded.append(m)
        read_ids(m)

    def own_decoding(self: Any) -> None:
        decoded.append(self)
        own_read_ids(self)

    monkeypatch.setattr(W3LeafMatcher, "__init__", opening)
    monkeypatch.setattr(whoosh_internals, "_read_ids", decoding)
    monkeypatch.setattr(W3LeafMatcher, "_read_ids", own_decoding)
    return opened, decoded


def test_a_scoped_count_of_a_word_in_one_projects_run_reads_no_posting(
    merged: Index, monkeypatch: pytest.MonkeyPatch
) -> None:
    searcher = merged._searcher
    alpha = merged._scope_statistics(("alpha", "*")).docs
    beta = merged._scope_statistics(("beta", "*")).docs
    words = ("kiln", "glaze", ALPHA_AND_GLOBAL)
    expected = {(s, w): _counted(searcher, s, "body", w) for s in (alpha, beta) for w in words}
    opened, decoded = _postings_read(monkeypatch)
    # kiln: alpha's memories only, all of its postings within alpha's run; glaze: beta's
    # only, none of them in alpha's scope. Their term info tells, no posting is read.
    assert ScopeStatistics(alpha).doc_frequency(searcher, "body", "kiln") == expected[alpha, "kiln"]
    assert ScopeStatistics(alpha).doc_frequency(searcher, "body", "glaze") == 0
    assert ScopeStatistics(beta).doc_frequency(searcher, "body", "glaze") == expected[beta, "glaze"]
    assert expected[alpha, "kiln"] > 128 and expected[beta, "glaze"] > 128
    assert opened == [] and decoded == []
    # harbour: alpha's and the global memories', other memories' runs between them: its
    # postings are read, but a block within alpha's run or the global one is counted by its
    # header, its document numbers never decoded.
    found = ScopeStatistics(alpha).doc_frequency(searcher, "body", ALPHA_AND_GLOBAL)
    assert found == expected[alpha, ALPHA_AND_GLOBAL] > 256
    assert len(opened) == 1
    assert len(decoded) < -(-found // 128)
    merged.close()


def test_a_short_posting_list_is_read_once_for_every_scope_and_searcher(
    merged: Index, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Without the merged segment's counts per run (a segment from Whoosh's own merge has none).
    monkeypatch.setattr(RunCounts, "read", classmethod(lambda cls, *args: None))
    # zebra: a few memories of every project, at the start of the merged segment's runs.
    searcher = merged._searcher
    expected = {
        scope: _counted(searcher, merged._scope_statistics(scope).docs, "body", "zebra")
        for scope in SCOPES
    }
    opened, decoded = _postings_read(monkeypatch)
    for scope in SCOPES:
        assert (
            merged._doc_frequency("body", "zebra", merged._scope_statistics(scope))
            == (expected[scope])
        )
    assert len(opened) == 1 and len(decoded) == 1
    # A commit opens a new searcher, and every scope counts its words again: the merged
    # segment's short lists are not read again (the new segment holds no zebra).
    gone = [f"e{i}.md" for i in range(0, 90, 7)][:3]  # memories holding zebra
    merged.apply([_document(i) for i in range(1200, 1290)], gone)
    assert merged.segment_count() == 2
    searcher = merged._searcher
    for scope in SCOPES:
        docs = merged._scope_statistics(scope).docs
        expected[scope] = _counted(searcher, docs, "body", "zebra")
        opened.clear()
        decoded.clear()
        found = merged._doc_frequency("body", "zebra", merged._scope_statistics(scope))
        assert found == expected[scope]
        assert opened == [] and decoded == []
    merged.close()


def _run_table(index: Index) -> Path:
    (leaf, _), *_ = index._searcher.reader().leaf_readers()
    return index.directory / f"{leaf.segment().segment_id()}{SUFFIX}"


def test_a_merged_segment_counts_every_scope_by_its_runs_reading_no_posting(
    merged: Index, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _run_table(merged).is_file()  # written by the merge child, moved in with the segment
    searcher = merged._searcher
    words = [*WORDS, ALPHA_AND_GLOBAL, *ONLY.values()]
    scopes = {scope: merged._scope_statistics(scope).docs for scope in SCOPES}
    expected = {
        (scope, w): _counted(searcher, docs, "body", w)
        for scope, docs in scopes.items()
        for w in words
    }
    opened, decoded = _postings_read(monkeypatch)
    for (scope, word), count in expected.items():
        assert merged._doc_frequency("body", word, merged._scope_statistics(scope)) == count
    # harbour spans alpha's and the global runs with other runs between, the common words
    # every run: each a lookup in the table, no posting list opened.
    assert opened == [] and decoded == []
    assert expected[("alpha", "*"), ALPHA_AND_GLOBAL] > 256
    # Deleted since the merge, in alpha's run and the global one: the table still counts them,
    # so their postings are read to take them out, and the counts stay those of the postings.
    stored = searcher.stored_fields
    alpha_docs = sorted(scopes[("alpha",)])
    gone = {stored(d)["key"] for d in alpha_docs[:3] + alpha_docs[-2:]}
    merged.apply([], sorted(gone))
    searcher = merged._searcher
    for scope in SCOPES:
        docs = merged._scope_statistics(scope).docs
        for word in words:
            found = merged._doc_frequency("body", word, merged._scope_statistics(scope))
            assert found == _counted(searcher, docs, "body", word), (scope, word)
    merged.close()


@pytest.mark.parametrize("damage", ["cut short", "another segment's"])
def test_a_damaged_or_foreign_run_table_is_set_aside_and_counts_stay_right(
    merged: Index, damage: str, caplog: pytest.LogCaptureFixture
) -> None:
    table = _run_table(merged)
    raw = table.read_bytes()
    header, _, rest = raw.partition(b"\n")
    if damage == "cut short":
        table.write_bytes(raw[: len(header) + 1 + len(rest) // 2])
    else:
        table.write_bytes(header.replace(b'"segment": "', b'"segment": "x') + b"\n" + rest)
    merged.close()
    index = Index(merged.directory)
    assert _every_count_is_the_postings(index) > 1000
    if damage == "cut short":
        assert any(str(table) in r.getMessage() for r in caplog.records)
    index.close()
