"""The context's search scores term at a time (index_scoring.py) and keeps what it read once per
searcher, and the notes it shows parsed while unchanged: every answer must be the one Whoosh's
own search and a fresh read of the files give, to the last bit of every score."""

from __future__ import annotations

import dataclasses
import math
import os
import random
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import Any

import pytest
from whoosh.codec import whoosh3
from whoosh.codec.whoosh3 import W3LeafMatcher
from whoosh.filedb import filetables
from whoosh.query import Or, Term

from brainiac import Memory
from brainiac.core.errors import NoteParseError
from brainiac.search import index_scoring, index_weighting, whoosh_internals
from brainiac.search.corpus import Document
from brainiac.search.index import _FEEDBACK_WEIGHT, _TEXT_FIELDS, Index
from brainiac.search.index_scoring import best, inside_and_outside, match_scores
from brainiac.search.index_weighting import SegmentLengthsBM25F
from brainiac.search.retrieval import ParsedNotes
from brainiac.search.scope_statistics import ScopeStatistics
from brainiac.store.vault import Vault

_WORDS = [
    "kiln", "glaze", "clay", "wheel", "studio", "firing", "ash", "cone", "bisque", "slip",
    "trip", "spain", "lisbon", "train", "budget", "invoice", "garden", "tomato", "basil", "rain",
]  # fmt: skip


def _docs(batch: int, rng: random.Random) -> list[Document]:
    docs = []
    for i in range(60):
        body = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(3, 30)))
        kind = "event" if i % 3 else "note"
        docs.append(
            Document(
                key=f"b{batch}-{i}.md" + ("#e" if kind == "event" else ""),
                path=f"b{batch}-{i}.md",
                kind=kind,
                title=f"{rng.choice(_WORDS)} {i}" if kind == "note" else "",
                body=body,
                text=body if kind == "event" else "",
                event_id=f"e{batch}x{i}" if kind == "event" else "",
                context=" ".join(rng.choice(_WORDS) for _ in range(5)) if i % 4 == 1 else "",
                projects=("atlas",) if i % 5 == 0 else ("*",),
            ).with_digest()
        )
    # Exact copies under other keys: equal scores, so the order of ties is tested too.
    docs += [
        dataclasses.replace(d, key=f"copy-{d.key}", path=f"copy-{d.path}").with_digest()
        for d in docs[:8]
    ]
    return docs


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Any:
    index = Index(tmp_path_factory.mktemp("scoring"))
    rng = random.Random(7)
    for batch in range(3):  # three commits: three segments, document numbers with offsets
        index.apply(_docs(batch, rng), [])
    index.apply([], ["b1-4.md", "b2-7.md#e"])  # deletions: Whoosh filters them per segment
    assert index.segment_count() >= 2
    yield index
    index.close()


def _query(index: Index, name: str) -> Any:
    fields = _TEXT_FIELDS
    if name == "tree":
        tree = Or([Term(f, t) for t in index.terms("kiln glaze trip rain") for f in fields])
        tree.matcher_type = Or.DEFAULT_MATCHER  # as Index._search builds it
        return tree
    if name == "boosted":  # Whoosh's own choice of matcher, as the feedback terms get
        weights = zip(index.terms("spain ash"), (0.5, 0.37), strict=True)
        return Or([Term(f, t, boost=b) for t, b in weights for f in fields])
    return Term("body", index.terms("clay")[0])


@pytest.mark.parametrize("name", ["tree", "boosted", "one-term"])
@pytest.mark.parametrize(
    "filter_q, mask_q",
    [(None, None), (Term("kind", "event"), None), (None, Term("projects", "atlas"))],
    ids=["all", "filtered", "masked"],
)
def test_every_match_scores_as_in_whooshs_unlimited_search(
    index: Index, name: str, filter_q: Any, mask_q: Any
) -> None:
    searcher = index._searcher
    query = _query(index, name)
    whoosh = list(searcher.search(query, limit=None, filter=filter_q, mask=mask_q).items())
    ours = match_scores(searcher, query, filter_q, mask_q)
    assert len(whoosh) > 10
    assert best(ours, len(ours)) == whoosh  # same documents, bit-identical scores, same order
    assert best(ours, 7) == whoosh[:7]


@pytest.mark.parametrize("name", ["tree", "boosted", "one-term"])
@pytest.mark.parametrize("at_least", [0.0, 0.5, 1.0, 1.5, 3.0])
def test_inside_and_the_outside_that_can_reach_the_floor_score_as_in_whoosh(
    index: Index, name: str, at_least: float
) -> None:
    searcher = index._searcher
    query = _query(index, name)
    inside = frozenset(searcher.docs_for_query(Term("projects", "atlas")))
    every = dict(searcher.search(query, limit=None).items())
    mine, outside = inside_and_outside(searcher, query, inside, at_least)
    assert mine == {d: s for d, s in every.items() if d in inside}  # bit-identical scores
    floor = at_least * max(mine.values())
    assert outside == {d: s for d, s in every.items() if d not in inside and s >= floor}


def test_only_the_outside_matches_that_can_reach_the_floor_are_scored_in_full(
    index: Index, monkeypatch: pytest.MonkeyPatch
) -> None:
    # MaxScore: a match outside whose score by the terms read so far, plus the bounds of the
    # terms not read yet, stays below the floor is dropped before it is scored in full.
    searcher = index._searcher
    query = _query(index, "tree")
    inside = frozenset(searcher.docs_for_query(Term("projects", "atlas")))
    every = dict(searcher.search(query, limit=None).items())
    scored: list[AbstractSet[int]] = []
    planned = index_scoring._planned_scores

    def recording(plan: Any, keep: AbstractSet[int]) -> Any:
        scored.append(keep)
        return planned(plan, keep)

    monkeypatch.setattr(index_scoring, "_planned_scores", recording)
    mine, outside = inside_and_outside(searcher, query, inside, 1.0)
    floor = max(mine.values())
    reaching = {d for d, s in every.items() if d not in inside and s >= floor}
    matching = {d for d in every if d not in inside}
    assert outside == {d: every[d] for d in reaching}
    candidates = set().union(*scored)
    # Only the reaching ones, and at most the deleted documents a segment's filter takes out.
    assert reaching <= candidates and len(candidates - reaching) <= 2
    assert len(matching) > 3 * len(candidates) + 10


class _CountedScope(frozenset[int]):
    """A scope's documents that count how often a document is looked up in them."""

    lookups = 0

    def __contains__(self, docnum: object) -> bool:
        type(self).lookups += 1
        return super().__contains__(docnum)


def test_a_block_wholly_inside_the_scope_is_scored_without_looking_its_documents_up(
    tmp_path: Path,
) -> None:
    # One segment, the project's documents first (one run of numbers, as a merge leaves them):
    # "kiln" has 300 postings there, three blocks of Whoosh's 128, and 100 after them.
    docs = [
        Document(
            key=f"d{i}.md#e",
            path=f"d{i}.md",
            kind="event",
            body="kiln " * (1 + i % 7) + ("glaze" if i % 3 else "ash"),
            text="kiln",
            event_id=f"e{i}",
            projects=("atlas",) if i < 300 else ("other",),
        ).with_digest()
        for i in range(400)
    ]
    index = Index(tmp_path / "index")
    index.apply(docs, [])
    try:
        searcher = index._searcher
        assert index.segment_count() == 1
        atlas = sorted(searcher.docs_for_query(Term("projects", "atlas")))
        assert atlas == list(range(300))
        query = Term("body", index.terms("kiln")[0])
        every = dict(searcher.search(query, limit=None).items())
        _CountedScope.lookups = 0
        mine, outside = inside_and_outside(searcher, query, _CountedScope(atlas), 0.0)
        assert mine == {d: s for d, s in every.items() if d < 300}  # bit-identical scores
        assert outside == {d: s for d, s in every.items() if d >= 300}
        # Only the block that holds documents of both is looked up, a posting at a time.
        assert 0 < _CountedScope.lookups <= 128
        _CountedScope.lookups = 0  # and so in the feedback's search, scoped the same way
        assert match_scores(searcher, query, allow=_CountedScope(atlas)) == mine
        assert 0 < _CountedScope.lookups <= 128
    finally:
        index.close()


@pytest.mark.parametrize("scope", ["atlas", "*"])
def test_a_scopes_word_counts_are_of_its_live_documents_read_without_weights(
    index: Index, scope: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A context in a project counts how many of the project's documents hold each new word of
    # its prompt: the postings' document numbers are all that takes, so their weights are
    # never decoded, and the documents a segment deleted (still in its postings) not counted.
    def decoded(*args: Any) -> None:
        raise AssertionError("a posting's weight was decoded to count documents")

    monkeypatch.setattr(whoosh_internals, "_read_weights", decoded)
    monkeypatch.setattr(W3LeafMatcher, "_read_weights", decoded)
    searcher = index._searcher
    docs = frozenset(searcher.docs_for_query(Term("projects", scope)))
    assert 0 < len(docs) < searcher.doc_count()
    counted = 0
    for word in ["zanzibar", *_WORDS]:
        for field in ("body", "context"):
            terms = index.terms(word)
            held = set(searcher.docs_for_query(Term(field, terms[0]))) if terms else set()
            found = ScopeStatistics(docs).doc_frequency(searcher, field, terms[0])
            assert found == len(docs & held), (word, field)
            counted += found
    assert counted


def _reference_feedback_search(index: Index, text: str, limit: int) -> list[tuple[str, float]]:
    """Index.search(text, limit, feedback=True) as it was before index_scoring: Whoosh sorts
    every match of the query, then every match of the feedback terms."""
    searcher = index._searcher
    terms = index._selective(index.terms(text))
    query = Or([Term(f, t) for t in terms for f in _TEXT_FIELDS])
    query.matcher_type = Or.DEFAULT_MATCHER
    scored = list(searcher.search(query, limit=None).items())
    top = scored[:limit]
    hits = [searcher.stored_fields(d) | {"score": s} for d, s in top]
    from brainiac.search.index_documents import hit_fields

    expansion = index._feedback_terms([hit_fields(h, h["score"]) for h in hits[:5]], set(terms))
    scores = dict(scored)
    if expansion:
        extra = Or(
            [
                Term(f, t, boost=_FEEDBACK_WEIGHT * w)
                for t, w in expansion.items()
                for f in ("body", "context")
            ]
        )
        extra.matcher_type = Or.DEFAULT_MATCHER
        for docnum, score in searcher.search(extra, limit=None).items():
            scores[docnum] = scores.get(docnum, 0.0) + score
    ordered = sorted(scores, key=lambda d: -scores[d])[:limit]
    return [(searcher.stored_fields(d)["key"], scores[d]) for d in ordered]


@pytest.mark.parametrize("text", ["kiln glaze firing", "trip to spain by train", "basil rain"])
@pytest.mark.parametrize("limit", [3, 12, 200])
def test_feedback_search_gives_the_hits_of_full_sorts(index: Index, text: str, limit: int) -> None:
    ours = [(h.key, h.score) for h in index.search(text, limit=limit, feedback=True)]
    assert ours == _reference_feedback_search(index, text, limit)


def test_what_a_searcher_told_is_forgotten_with_it(index: Index) -> None:
    index.search("lisbon invoice", limit=5, feedback=True)
    told = index._memo()
    assert told.doc_frequency
    extra = Document(
        key="new.md", path="new.md", kind="note", title="Lisbon", body="lisbon invoice " * 9
    )
    index.apply([extra.with_digest()], [])  # a commit: a new searcher, document numbers anew
    after = [(h.key, h.score) for h in index.search("lisbon invoice", limit=5, feedback=True)]
    assert index._memo() is not told and index._memo().searcher is index._searcher
    assert after[0][0] == "new.md"
    assert after == _reference_feedback_search(index, "lisbon invoice", 5)
    index.apply([], ["new.md"])
    assert "new.md" not in [h.key for h in index.search("lisbon invoice", limit=5, feedback=True)]


def _note(title: str, summary: str) -> str:
    return f"---\ntitle: {title}\ntags: [pottery]\n---\n## Summary\n{summary}\n"


def test_a_note_is_parsed_again_only_when_its_file_changes(vault: Path) -> None:
    notes = ParsedNotes(Vault.open(vault), keep=2)
    path = vault / "memory/long_term/kiln.md"
    path.write_text(_note("Kiln", "Cone 6 glaze."), encoding="utf-8")
    first = notes.parse("memory/long_term/kiln.md")
    assert first.section("Summary") == "Cone 6 glaze."
    assert notes.parse("memory/long_term/kiln.md") is first  # unchanged: not read again

    path.write_text(_note("Kiln", "Cone 10 glaze"), encoding="utf-8")  # same size
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    assert notes.parse("memory/long_term/kiln.md").section("Summary") == "Cone 10 glaze"

    path.write_text("---\ntitle: [unclosed\n---\nbody\n", encoding="utf-8")
    for _ in range(2):  # a broken note is an error every time, never a kept old parse
        with pytest.raises(NoteParseError):
            notes.parse("memory/long_term/kiln.md")
    path.unlink()
    with pytest.raises(FileNotFoundError):
        notes.parse("memory/long_term/kiln.md")

    for name in ("a", "b", "c"):
        (vault / f"memory/long_term/{name}.md").write_text(_note(name, name), encoding="utf-8")
        notes.parse(f"memory/long_term/{name}.md")
    assert list(notes._parsed) == ["memory/long_term/b.md", "memory/long_term/c.md"]


def test_a_context_shows_an_edited_note_and_identity_at_once(vault: Path) -> None:
    note = vault / "memory/long_term/kiln.md"
    identity = vault / "system/core_identity.md"
    note.write_text(_note("Kiln", "The kiln fires to cone 6."), encoding="utf-8")
    with Memory(vault, refresh_interval_s=0) as m:
        first = m.context("what does the kiln fire to?", budget=2000).text
        assert "cone 6" in first
        note.write_text(_note("Kiln", "The kiln fires to cone 10 now."), encoding="utf-8")
        identity.write_text(identity.read_text(encoding="utf-8") + "\nI am a potter.\n")
        second = m.context("what does the kiln fire to?", budget=2000).text
        assert "cone 10 now" in second and "cone 6" not in second
        assert "I am a potter." in second and "I am a potter." not in first
        identity.unlink()
        third = m.context("what does the kiln fire to?", budget=2000)
        assert "I am a potter." not in third.text
        assert any("core_identity.md is missing" in w for w in third.warnings)


def test_an_events_score_does_not_depend_on_the_notes_beside_it(tmp_path: Path) -> None:
    # Each field's average length and document count are over the documents that have it
    # (SegmentLengthsBM25F): the events of an index holding notes, in several segments, score
    # exactly as in an index of the events alone. Whoosh's statistics count every document.
    rng = random.Random(7)
    # A note has no preceding message (corpus.documents): its context field stays empty.
    batches = [
        [d if d.kind == "event" else dataclasses.replace(d, context="").with_digest() for d in docs]
        for docs in (_docs(batch, rng) for batch in range(2))
    ]
    with_notes, alone = Index(tmp_path / "with-notes"), Index(tmp_path / "alone")
    for docs in batches:  # a segment each
        with_notes.apply(docs, [])
    alone.apply([d for docs in batches for d in docs if d.kind == "event"], [])
    try:
        for query in ("kiln glaze trip", "spain ash rain", "basil"):
            ours = {h.key: h.score for h in with_notes.search(query, limit=500, kind="event")}
            theirs = {h.key: h.score for h in alone.search(query, limit=500)}
            assert len(ours) > 5 and ours.keys() == theirs.keys()
            assert all(abs(ours[k] - theirs[k]) < 1e-9 for k in ours), query
    finally:
        with_notes.close()
        alone.close()


def test_stored_fields_read_past_whoosh_are_whooshs(index: Index) -> None:
    # Index._stored_fields reads each segment's column directly (no schema check per field).
    searcher = index._searcher
    reader = searcher.reader()
    assert len(reader.leaf_readers()) >= 2
    stored = index._stored_fields()
    live = [d for d in range(reader.doc_count_all()) if not reader.is_deleted(d)]
    assert len(live) > 100
    assert all(stored(d) == searcher.stored_fields(d) for d in live)


def _scorers_made(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """Every scorer SegmentLengthsBM25F makes from now on, as (field, word)."""
    made: list[tuple[str, str]] = []
    make = SegmentLengthsBM25F._made_scorer

    def counted(self: Any, searcher: Any, fieldname: str, text: str, qf: int) -> Any:
        made.append((fieldname, text))
        return make(self, searcher, fieldname, text, qf)

    monkeypatch.setattr(SegmentLengthsBM25F, "_made_scorer", counted)
    return made


def _two_batches(directory: Path, seed: int) -> Index:
    """An index of two commits of `_docs`: two segments."""
    index = Index(directory)
    rng = random.Random(seed)
    for batch in range(2):
        index.apply(_docs(batch, rng), [])
    return index


def test_a_scorer_is_made_once_per_searcher_and_anew_after_a_commit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = _scorers_made(monkeypatch)
    index = _two_batches(tmp_path / "index", 3)
    try:
        first = [(h.key, h.score) for h in index.search("kiln glaze", limit=50, feedback=True)]
        assert made
        made.clear()
        again = [(h.key, h.score) for h in index.search("kiln glaze", limit=50, feedback=True)]
        assert again == first and made == []  # the same searcher: every scorer kept
        # A commit changes the statistics (more documents hold "kiln"): new scorers, and the
        # scores of an index opened afresh on the same files.
        extra = Document(key="k.md", path="k.md", kind="note", title="Kiln", body="kiln " * 5)
        index.apply([extra.with_digest()], [])
        after = [(h.key, h.score) for h in index.search("kiln glaze", limit=50, feedback=True)]
        assert made and after != first and "k.md" in dict(after)
        fresh = Index(tmp_path / "index", writable=False)
        try:
            assert after == [
                (h.key, h.score) for h in fresh.search("kiln glaze", limit=50, feedback=True)
            ]
        finally:
            fresh.close()
    finally:
        index.close()


def test_a_scorer_asked_again_is_kept_while_other_words_come_and_go(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = _scorers_made(monkeypatch)
    index = _two_batches(tmp_path / "index", 5)
    try:
        first = [(h.key, h.score) for h in index.search("kiln glaze", limit=50, feedback=True)]
        # Room for this prompt's scorers and a few more: the other words below need more than
        # that in all, as a vault shared by projects asks each project's own.
        kept = len(index._weighting._scorers)
        monkeypatch.setattr(index_weighting, "_SCORERS_KEPT", kept + 12)
        for word in _WORDS[2:]:
            assert index.search(word, limit=5)
            made.clear()
            again = [(h.key, h.score) for h in index.search("kiln glaze", limit=50, feedback=True)]
            assert again == first and made == []  # the prompt asked again: none made anew
        assert len(index._weighting._scorers) == kept + 12
    finally:
        index.close()


def test_a_segments_terms_are_looked_up_in_its_file_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    looked_up: list[bytes] = []
    lookup = filetables.HashReader.ranges_for_key

    def counted(self: Any, key: bytes) -> Any:
        looked_up.append(key)
        return lookup(self, key)

    monkeypatch.setattr(filetables.HashReader, "ranges_for_key", counted)
    index = Index(tmp_path / "index")
    index.apply(_docs(0, random.Random(4)), [])
    try:
        first = [(h.key, h.score) for h in index.search("spain trip", limit=20, feedback=True)]
        assert looked_up
        # Each term of each field was asked several times (is it there, its postings, its
        # frequency, its size) and read once.
        assert len(looked_up) == len(set(looked_up))
        looked_up.clear()
        again = [(h.key, h.score) for h in index.search("spain trip", limit=20, feedback=True)]
        assert again == first and looked_up == []
        assert index.search("zanzibar", limit=5) == []
        extra = Document(key="z.md", path="z.md", kind="note", title="Z", body="zanzibar ferry")
        index.apply([extra.with_digest()], [])  # a new segment, and a new reader of the old
        assert [h.key for h in index.search("zanzibar", limit=5)] == ["z.md"]
    finally:
        index.close()


def test_a_segments_term_infos_are_decoded_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    decoded: list[tuple[int, str, bytes]] = []
    decode = whoosh3.W3TermsReader.term_info

    def counted(self: Any, fieldname: str, tbytes: bytes) -> Any:
        decoded.append((id(self), fieldname, tbytes))
        return decode(self, fieldname, tbytes)

    monkeypatch.setattr(whoosh3.W3TermsReader, "term_info", counted)
    index = _two_batches(tmp_path / "index", 6)  # two segments: each reader decodes its own
    decoded.clear()  # (the writer's)
    try:
        # A scoped search asks each term's information of each segment for its matcher, its
        # scorer, the scorer's bound and the blocks the scope passes over: decoded once.
        first = index.search_with_others("kiln glaze trip", 20, ["atlas"], 3)
        assert decoded and len(decoded) == len(set(decoded))
        decoded.clear()
        assert index.search_with_others("kiln glaze trip", 20, ["atlas"], 3) == first
        assert decoded == []
    finally:
        index.close()


def test_a_context_finds_the_words_a_note_gains_and_not_those_it_lost(vault: Path) -> None:
    note = vault / "memory/long_term/ferry.md"
    with Memory(vault, refresh_interval_s=0) as m:
        assert "Ferry" not in m.context("when does the zanzibar ferry leave?", budget=2000).text
        note.write_text(_note("Ferry", "The zanzibar ferry leaves at nine."), encoding="utf-8")
        assert "leaves at nine" in m.context("when does the zanzibar ferry leave?").text
        note.write_text(_note("Ferry", "The lamu dhow leaves at ten."), encoding="utf-8")
        assert "zanzibar ferry leaves" not in m.context("when does the zanzibar ferry leave?").text
        assert "lamu dhow leaves at ten" in m.context("when does the lamu dhow leave?").text


def test_the_best_of_many_matches_are_a_full_sorts_first() -> None:
    rng = random.Random(11)
    for _ in range(200):
        count = rng.randint(0, 2000)
        # Ties on purpose (equal scores, broken by document number), among thousands.
        values = [
            rng.choice([0.5, 2.25]) if rng.random() < 0.3 else rng.random() for _ in "x" * count
        ]
        scores = dict(zip(rng.sample(range(50_000), count), values, strict=True))
        ordered = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
        for limit in (0, 1, 5, 150, count, count + 3):
            assert best(scores, limit) == ordered[:limit]


def _outnumbered_events(holding: int) -> list[Document]:
    """Notes that all mention "kiln", then a few long events, one of them about "glaze": the
    events' body field is held by few documents, so its statistics over them (a longer average
    length, a lower idf) score "glaze" well above what Whoosh's statistics over every document
    would."""
    notes = [
        Document(
            key=f"kiln-{i}.md",
            path=f"kiln-{i}.md",
            kind="note",
            title=f"Studio {i}",
            body="kiln " + "pottery studio notes " * (5 + i % 3),
            projects=("atlas",) if i % 2 else ("*",),
        ).with_digest()
        for i in range(30)
    ]
    bodies = [("glaze " if i == holding - 1 else "other ") + "word " * 20 for i in range(holding)]
    events = [
        Document(
            key=f"chat.md#e{i}",
            path="chat.md",
            kind="event",
            body=body,
            text=body,
            event_id=f"e{i}",
            projects=("atlas",),
        ).with_digest()
        for i, body in enumerate(bodies)
    ]
    return notes + events


@pytest.mark.parametrize("projects", [(), ("atlas",)], ids=["all", "scoped"])
def test_a_top_n_search_keeps_what_the_full_search_ranks_first(
    tmp_path: Path, projects: tuple[str, ...]
) -> None:
    # Whoosh's top-N search drops a term's documents once its bound (max_quality) is below the
    # N-th best score so far; the bound must be of the statistics the term is scored with.
    index = Index(tmp_path / "index")
    try:
        for holding in (2, 4):  # a segment each
            index.apply(_outnumbered_events(holding), [])
        full = [(h.key, h.score) for h in index.search("kiln glaze", 1000, projects=projects)]
        assert full[0][0] == "chat.md#e3"  # the event outranks every note
        for limit in (1, 2, 3, 5, 10):
            top = index.search("kiln glaze", limit=limit, projects=projects)
            assert [(h.key, h.score) for h in top] == full[:limit], limit
    finally:
        index.close()


def test_no_posting_scores_above_its_scorers_bound(index: Index) -> None:
    searcher = index._searcher
    checked = 0
    for sub, _ in searcher.leaf_searchers():
        for field in _TEXT_FIELDS:
            for term in index.terms(" ".join(_WORDS)):
                if (field, term) not in sub.reader():
                    continue
                scorer = searcher.weighting.scorer(sub, field, term)
                matcher = sub.reader().postings(field, term, scorer=scorer)
                while matcher.is_active():
                    assert matcher.score() <= matcher.max_quality(), (field, term)
                    checked += 1
                    matcher.next()
    assert checked > 500


def _every_word_counted(
    index: Index, top: list[Any], query_terms: set[str], scope: ScopeStatistics | None
) -> tuple[dict[str, float], int]:
    """Index._feedback_terms as it was, counting every candidate word: its expansion, and how
    many words it counted."""
    total = max(len(scope.docs) if scope is not None else int(index._searcher.doc_count()), 1)
    weights = index._feedback_weights(top, query_terms)
    scored = {}
    for term, w in weights.items():
        df = index._doc_frequency("body", term, scope)
        if 2 <= df <= 150:
            scored[term] = w * math.log(total / df)
    chosen = sorted(scored, key=lambda t: (-scored[t], t))[:5]
    if not chosen or scored[chosen[0]] <= 0:
        return {}, len(weights)
    return {t: scored[t] / scored[chosen[0]] for t in chosen}, len(weights)


@pytest.mark.parametrize("scoped", [False, True])
def test_feedback_counts_only_the_words_that_can_be_among_the_best(
    tmp_path: Path, scoped: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The best hits hold a few words many times and many words once: a word's score is its
    # weight times log(total / df), at most log(total / 2), so once five words are scored the
    # words too light to reach the fifth are not counted (in a project a count may read the
    # word's postings). The expansion is the one counting every word gives, in its order.
    heavy = [f"heavy{c}" for c in "abcdef"]
    light = [f"light{c}{d}" for c in "abcdef" for d in "abcde"]
    hits = [f"kiln {' '.join(heavy * 4)} {' '.join(light[i * 6 : i * 6 + 6])}" for i in range(5)]
    docs = [
        Document(
            key=f"hit{i}.md#e",
            path=f"hit{i}.md",
            kind="event",
            body=text,
            text=text,
            event_id=f"h{i}",
            projects=("atlas",),
        ).with_digest()
        for i, text in enumerate(hits)
    ]
    docs += [
        Document(
            key=f"other{i}.md#e",
            path=f"other{i}.md",
            kind="event",
            body=f"{heavy[i % 6]} {light[i % 30]} {light[(i + 7) % 30]} filler",
            event_id=f"o{i}",
            projects=("atlas",) if i % 2 else ("beta",),
        ).with_digest()
        for i in range(80)
    ]
    index = Index(tmp_path / "idx")
    index.apply(docs, [])
    scope = index._scope_statistics(("atlas", "*")) if scoped else None
    top = index.search("kiln", limit=5, projects=["atlas", "*"] if scoped else [])
    assert len(top) == 5
    expected, candidates = _every_word_counted(index, top, {"kiln"}, scope)
    counted: list[str] = []
    counting = index._doc_frequency

    def count(field: str, term: str, in_scope: ScopeStatistics | None = None) -> int:
        counted.append(term)
        return counting(field, term, in_scope)

    monkeypatch.setattr(index, "_doc_frequency", count)
    found = index._feedback_terms(top, {"kiln"}, scope)
    assert list(found.items()) == list(expected.items()) and len(found) == 5
    assert candidates == 36 and len(counted) < 12, counted
    index.close()
