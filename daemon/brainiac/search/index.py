"""The search index's searches: Whoosh, kept outside the vault, a cache that can always be rebuilt.

`Index` is the one object the rest of brainiac holds: an open index (index_open.py: opening,
damage, the long-lived searcher swapped under a lock) with its writes (index_writes.py: edits,
builds, commits, merges), and here what is read through the searcher: searches, the notes'
listing, and the lookups of events and sessions (index_events.py). With index_fields.py (the
schema and the terms a document is indexed under), index_scoring.py (scoring matches),
index_weighting.py and scope_statistics.py (the BM25F weighting, over a scope's documents too),
index_runs.py (the sorted runs of a build), index_merge.py (the large segments merged beside the
writer) and whoosh_internals.py (every private name of Whoosh these use, checked at import),
these are the only modules that import whoosh; index_documents.py holds what comes back (hits,
note records, stored events). Every read holds the searcher's lock, and what one searcher told
(term frequencies, scopes, the stored-fields reader) is kept in a memo until the next commit
opens another.

Queries are never parsed as query syntax: the text is run through the same analyzer as the
documents and becomes an OR of its terms, so anything a person or a model types is a valid query.
"""

from __future__ import annotations

from collections.abc import (
    Collection,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from pathlib import Path
from typing import Any

import whoosh
from whoosh.query import Or, Term

from brainiac.core.errors import SearchError
from brainiac.language import when
from brainiac.search import feedback_words, index_events
from brainiac.search.index_documents import (
    Hit,
    NoteRecord,
    StoredEvent,
    hit,
    hit_fields,
    segment_notes,
)
from brainiac.search.index_events import EventReading, EventTables
from brainiac.search.index_fields import STOP_LIST
from brainiac.search.index_open import segments
from brainiac.search.index_scoring import best, best_widened, inside_and_outside, match_scores
from brainiac.search.index_writes import IndexWrites
from brainiac.search.scope_statistics import ScopeStatistics

# Skipping blocks whose best score cannot reach the top hits: Whoosh 2.7.4 (the fallback) can
# loop there for ever. Its union matcher asks one side to skip to `min - other side`; when
# rounding puts that side's block just above it, the side stays where it is and the loop asks
# again (a short question over a dozen events did it: tests/test_index.py). whoosh3 does not.
_SKIP_BY_QUALITY = not whoosh.versionstring().startswith("2.")

_TEXT_FIELDS = ("title", "aliases", "body", "note_body", "context")
# Where a word is in the text of a memory: an event's body or a note's (index_fields.py).
_BODY_FIELDS = ("body", "note_body")
_POSTINGS_BUDGET = 1500
_MAX_TERMS = 10
_KEYWORD_FIELDS = ("tags", "links")
# A month or year the prompt names weighs as much as one of its words (when.py).
_WHEN_WEIGHT = 1.0
# Pseudo-relevance feedback (see _search): words from the best few hits, at half a query word's
# weight. Neighbouring settings give the same gain in every development conversation, so the
# values are not a fine tuning (docs/changelog.md, "History of the measurements").
_FEEDBACK_HITS = 5
_FEEDBACK_TERMS = 5
_FEEDBACK_WEIGHT = 0.5
# What closeness in meaning adds to an event's score at most, as a share of the best event match's
# (semantic.py gives the nearness, 0-1). At most half: words lead, and meaning lifts what
# words missed or orders what they found alike (docs/architecture.md, "Recall by meaning").
_MEANING_WEIGHT = 0.5


class Index(IndexWrites):
    """Owns one on-disk Whoosh index: its writer, its searcher and their lifecycles."""

    def __init__(self, directory: Path, writable: bool = True) -> None:
        self._listings: dict[str, list[tuple[int, NoteRecord]]] = {}  # see notes()
        self._event_tables = EventTables()  # see _event_docnums
        super().__init__(directory, writable)

    # -- reading -----------------------------------------------------------------------------
    def frequency(self, word: str) -> int:
        """How many documents hold `word` (as analysed) in their body, an event's or a note's:
        how common it is, for weighting the words a claim and an event share (evidence/). 0 for
        a stop word."""
        terms = self.terms(word)
        with self._searching:
            return max(
                (sum(int(self._searcher.doc_frequency(f, t)) for f in _BODY_FIELDS) for t in terms),
                default=0,
            )

    def notes(self) -> list[NoteRecord]:
        """Every note document (not events), by path, from the stored fields: no file is read.

        As of the index's last commit; a reader beside the daemon first opens the daemon's
        latest commit if there is a newer one. Each segment's notes are read once and kept
        until a merge removes the segment (a segment never changes once written, except that
        documents in it get deleted, which is asked on every call): reading every note's stored
        fields is the cost of the first call only, not of every call.
        """
        try:
            with self._searching:
                self._refresh()
                leaves = segments(self._searcher)
                kept: dict[str, list[tuple[int, NoteRecord]]] = {}
                found: list[NoteRecord] = []
                for leaf, _ in leaves:
                    segment = leaf.segment().segment_id()
                    records = self._listings.get(segment)
                    if records is None:
                        records = segment_notes(leaf)
                    kept[segment] = records
                    found += [r for docnum, r in records if not leaf.is_deleted(docnum)]
                self._listings = kept
        except Exception as exc:
            raise SearchError(
                f"{self.directory}: the index could not be read ({exc}); run `brainiac reindex`, "
                "or, beside the daemon, try again in a moment"
            ) from exc
        return sorted(found, key=lambda r: r.path)

    def terms(self, text: str) -> list[str]:
        """The analysed terms of a query text, unique, in order (stop words dropped, stemmed)."""
        seen: dict[str, None] = {}
        for token in self._analyzer(text):
            seen.setdefault(token.text, None)
        return list(seen)

    def search(
        self,
        text: str,
        limit: int = 10,
        kind: str | None = None,
        projects: Sequence[str] = (),
        exclude: bool = False,
        feedback: bool = False,
        nearness: Mapping[str, float] | None = None,
    ) -> list[Hit]:
        """The documents matching any term of `text`, best first (BM25F). Never a syntax error;
        SearchError when the index cannot be read (damaged or deleted under us).

        `projects`: only documents in one of these scopes (projects.py), or with `exclude` only
        those in none of them. Either way scored on the statistics of those scopes' documents
        (ScopeStatistics): a project ranks its memories as it would alone, whatever other
        projects hold, and another project's matches are scored as if they were in it, so the
        two searches' scores compare.
        `feedback` widens the query with the words of its best hits (the context's search: see
        _with_feedback), and with it `nearness` (event key -> 0-1, semantic.py) lifts the events
        close to the prompt in meaning."""
        try:
            with self._searching:
                return self._search(
                    text, limit, kind, tuple(projects), exclude, feedback, nearness or {}
                )[0]
        except SearchError:
            raise
        except Exception as exc:
            raise self._read_error(exc) from exc

    def search_with_others(
        self,
        text: str,
        limit: int,
        projects: Sequence[str],
        others: int,
        nearness: Mapping[str, float] | None = None,
        at_least: float = 0.0,
    ) -> tuple[list[Hit], list[Hit]]:
        """`search(text, limit, projects=projects, feedback=True, nearness=nearness)`, and the
        `others` best of `search(text, others, projects=projects, exclude=True)` among those
        scoring at least `at_least` times the best match in `projects` (0: all): each term's
        postings are read once for both, and a match outside that cannot reach the floor is not
        scored (index_scoring.inside_and_outside)."""
        try:
            with self._searching:
                return self._search(
                    text,
                    limit,
                    None,
                    tuple(projects),
                    False,
                    True,
                    nearness or {},
                    others,
                    at_least,
                )
        except SearchError:
            raise
        except Exception as exc:
            raise self._read_error(exc) from exc

    def searcher_token(self) -> object:
        """An object that stays the same as long as the open searcher does (a commit or a
        refresh opens another): what was learnt from the index may be kept while it is."""
        with self._searching:
            return self._memo()

    def project_counts(self) -> dict[str, int]:
        """Documents per scope term (project names and "*"), for `status` and for every
        context in a project (which names it may be about): counted once per searcher."""
        with self._searching:
            memo = self._memo()
            if memo.project_counts is None:
                memo.project_counts = index_events.project_counts(self._searcher)
            return dict(memo.project_counts)

    def session_events_keyed(self, keys: Iterable[str]) -> list[StoredEvent]:
        """The indexed events keyed `keys` that have a session (as stored, context left empty)."""
        with self._searching:
            return index_events.session_events_keyed(self._searcher, keys)

    def session_times(
        self, session: str, start: str = "", end: str | None = None, limit: int | None = None
    ) -> list[str]:
        """The times (time_key) at which `session` (a thread: corpus.thread) has indexed events,
        from `start` on and before `end`, in order, at most `limit`: a walk over that stretch of
        the lexicon only.
        A time may be left over from deleted events (session_events_at tells)."""
        with self._searching:
            return index_events.session_times(self._searcher, session, start, end, limit)

    def session_events_at(self, session: str, time: str) -> list[StoredEvent]:
        """The indexed events of `session` (a thread: corpus.thread) at `time` (a time_key), in
        the order they were indexed."""
        with self._searching:
            return index_events.session_events_at(self._searcher, session, time)

    def _search(
        self,
        text: str,
        limit: int,
        kind: str | None,
        projects: tuple[str, ...] = (),
        exclude: bool = False,
        feedback: bool = False,
        nearness: Mapping[str, float] | None = None,
        others: int = 0,
        at_least: float = 0.0,
    ) -> tuple[list[Hit], list[Hit]]:
        # Bytes that were not UTF-8 arrive as lone surrogates (a shell argument, a file read with
        # surrogateescape), which the analyser cannot encode: they are no word anyway.
        text = text.encode("utf-8", "replace").decode("utf-8")
        scope = self._scope_statistics(projects) if projects else None
        self._weighting.scope = scope
        try:
            return self._scored_search(
                text, limit, kind, scope, exclude, feedback, nearness, others, at_least
            )
        finally:
            self._weighting.scope = None

    def _scored_search(
        self,
        text: str,
        limit: int,
        kind: str | None,
        scope: ScopeStatistics | None,
        exclude: bool,
        feedback: bool,
        nearness: Mapping[str, float] | None,
        others: int = 0,
        at_least: float = 0.0,
    ) -> tuple[list[Hit], list[Hit]]:
        """The hits, and with `others` (a feedback search in a scope) the `others` best matches
        outside the scope by their first scores, of those scoring at least `at_least` times
        the best inside."""
        terms = self._selective(self.terms(text), scope)
        words = {w.lower().strip(".,;:!?\"'()[]") for w in text.split()}
        # Only words that are tags or link targets somewhere: each clause costs a matcher even
        # when it matches nothing, and a long prompt has dozens of words.
        keyword_clauses = [
            Term(f, w)
            for w in sorted(words)
            if len(w) > 1 and w not in STOP_LIST
            for f in _KEYWORD_FIELDS
            if self._doc_frequency(f, w, scope)
        ]
        keyword_clauses += [
            Term("when", w, boost=_WHEN_WEIGHT)
            for w in when.prompt_terms(text)
            if self._doc_frequency("when", w, scope)
        ]
        if not terms and not keyword_clauses and not (feedback and nearness):
            return [], []
        clauses: list[Any] = [Term(f, t) for t in terms for f in _TEXT_FIELDS]
        clauses += keyword_clauses
        query = Or(clauses)
        # Below 5,000 documents Whoosh would preload every match of the Or into arrays; its
        # binary tree of union matchers costs less CPU there too, and is the one index_scoring.py
        # walks.
        query.matcher_type = Or.DEFAULT_MATCHER
        allow: frozenset[int] | None = None
        hidden: frozenset[int] | None = None
        if kind:
            allow = frozenset(self._searcher.docs_for_query(Term("kind", kind)))
        if scope is not None:
            if exclude:
                hidden = scope.docs
            else:
                allow = scope.docs if allow is None else allow & scope.docs
        if feedback:
            # Every match scored (no more postings than without: the query is the same), so that
            # feedback can add to the score of a match below the cut; stored fields are read
            # only for what is returned.
            outside: list[Hit] = []
            if others and scope is not None and allow is not None and clauses:
                # Read once: the matches outside the scope, with the same query and the same
                # statistics, are what the search for them alone would score.
                matches, beyond = inside_and_outside(
                    self._searcher, query, allow, at_least, self._slices
                )
                stored = self._stored_fields()
                outside = [hit_fields(stored(d), sc) for d, sc in best(beyond, others)]
            else:
                matches = (
                    match_scores(
                        self._searcher, query, allow=allow, restrict=hidden, slices=self._slices
                    )
                    if clauses
                    else {}
                )
            found = self._with_feedback(terms, matches, limit, allow, hidden, nearness or {}, scope)
            return found, outside
        results = self._searcher.search(
            query,
            limit=limit,
            filter=set(allow) if allow is not None else None,
            mask=set(hidden) if hidden is not None else None,
            optimize=_SKIP_BY_QUALITY,
        )
        return [hit(r) for r in results], []

    def _scope_statistics(self, projects: tuple[str, ...]) -> ScopeStatistics:
        """The documents of `projects` and their statistics, counted once per searcher."""
        memo = self._memo()
        found = memo.scopes.get(projects)
        if found is None:
            docs = self._searcher.docs_for_query(Or([Term("projects", p) for p in projects]))
            found = memo.scopes[projects] = ScopeStatistics(
                frozenset(docs), self._numbers, self._run_counts
            )
        return found

    def scope_event_keys(self, projects: Sequence[str]) -> frozenset[str]:
        """The keys of the live events in one of `projects`' scopes: the events a scoped
        search's nearness in meaning is taken among (semantic.py), once per searcher."""
        wanted = tuple(projects)
        with self._searching:
            memo = self._memo()
            found = memo.scope_keys.get(wanted)
            if found is None:
                docs = self._scope_statistics(wanted).docs
                found = self._event_tables.keys_in(self._searcher, docs)
                memo.scope_keys[wanted] = found
            return found

    def _with_feedback(
        self,
        terms: list[str],
        scores: dict[int, float],
        limit: int,
        allow: frozenset[int] | None,
        hidden: frozenset[int] | None,
        nearness: Mapping[str, float],
        scope: ScopeStatistics | None,
    ) -> list[Hit]:
        top = best(scores, limit)
        stored = self._stored_fields()
        # By document number: stored fields are read once, and only for the feedback's few best
        # hits and what makes the final cut (reading them is most of a search's time; the first
        # search's `limit` best were read up front before, ~200 documents a context instead of
        # ~150); a hit is made once, with its final score.
        fields: dict[int, dict[str, Any]] = {}

        def read(docnum: int) -> dict[str, Any]:
            found = fields.get(docnum)
            if found is None:
                found = fields[docnum] = stored(docnum)
            return found

        if not top:
            # No word of the prompt is in any memory ("bicycle" for "I rode my bike"): what is
            # nearest in meaning, if anything, at the weight it would have beside a match of 1.
            near = self._near(nearness, 1.0, allow, hidden)
            return [hit_fields(stored(d), s) for d, s in best(near, limit)]
        # Pseudo-relevance feedback (RM3): the words that weigh most in the best hits join the
        # query at a lower weight, so a memory that says the same thing in other words ("trip",
        # "Spain" for "countries visited") is found too. The query's own clauses keep their weight.
        # The best hits are the best by words and meaning together (meaning's lift below): a
        # feedback word taken from a hit only the words liked would pull in more of the same.
        # Meaning lifts events, on the scale of the best event's match: a note's score is on its
        # own fields' statistics (index_scoring.py), and where a note topped the words its
        # score would make every lift larger. The feedback's best hits may be notes (the best
        # events alone lost recall: docs/changelog.md, "History of the measurements").
        notes = self._note_docnums()
        best_event = next((s for d, s in top if d not in notes), None)
        if best_event is None:
            best_event = max((s for d, s in scores.items() if d not in notes), default=top[0][1])
        near = self._near(nearness, best_event, allow, hidden)
        if near:
            fused = dict(scores)
            for docnum, lift in near.items():
                fused[docnum] = fused.get(docnum, 0.0) + lift
            best_hits = [hit_fields(read(d), s) for d, s in best(fused, _FEEDBACK_HITS)]
        else:
            best_hits = [hit_fields(read(d), s) for d, s in top[:_FEEDBACK_HITS]]
        expansion = self._feedback_terms(best_hits, set(terms), scope)
        widened: dict[int, float] = {}
        if expansion:
            # Scored on their own and added to every match's score: the same sum as searching
            # again with the widened query, at the cost of the few rare feedback terms only.
            extra = Or(
                [
                    Term(f, t, boost=_FEEDBACK_WEIGHT * w)
                    for t, w in expansion.items()
                    for f in ("body", "context")
                ]
            )
            # The union tree index_scoring.py reads block by block, as the query's: Whoosh's
            # default for a small index preloads arrays as long as the whole index, which in a
            # vault shared by projects costs a scoped search for every project's documents.
            extra.matcher_type = Or.DEFAULT_MATCHER
            widened = match_scores(
                self._searcher, extra, allow=allow, restrict=hidden, slices=self._slices
            )
        # Meaning: an event's nearness to the prompt (0-1 over all events) adds up to
        # _MEANING_WEIGHT of the best event match's score, so words lead and meaning lifts what they
        # missed, or orders what they found alike.
        for docnum, lift in near.items():
            widened[docnum] = widened.get(docnum, 0.0) + lift
        if not widened:
            return [hit_fields(read(d), s) for d, s in top]
        total = dict(scores)
        for docnum, score in widened.items():
            total[docnum] = total.get(docnum, 0.0) + score
        first_best = [d for d, _ in top]
        return [
            hit_fields(read(d), total[d])
            for d in best_widened(limit, total, scores, widened, first_best)
        ]

    def _near(
        self,
        nearness: Mapping[str, float],
        best_score: float,
        allow: frozenset[int] | None,
        hidden: frozenset[int] | None,
    ) -> dict[int, float]:
        """Each near event's lift by document number: its nearness times _MEANING_WEIGHT times
        `best_score`, for the events `allow` admits (None: all) and `hidden` does not hide."""
        if not nearness:
            return {}
        found = self._event_docnums(nearness)
        if allow is not None or hidden is not None:
            found = {
                k: d
                for k, d in found.items()
                if (allow is None or d in allow) and (hidden is None or d not in hidden)
            }
        lift = _MEANING_WEIGHT * best_score
        return {d: lift * nearness[k] for k, d in found.items()}

    def _event_docnums(self, keys: Iterable[str]) -> dict[str, int]:
        """The document numbers of the live event documents keyed `keys` (a key not indexed is
        left out), from each segment's key -> number table, read once and kept (EventTables)."""
        return self._event_tables.docnums(self._searcher, keys)

    def events(self) -> list[tuple[str, str, str]]:
        """Every indexed event, as (key, text, role) (each_event's, in a list)."""
        return list(self.each_event())

    def each_event(self) -> Iterator[tuple[str, str, str]]:
        """Every indexed event, as (key, text, role), one at a time: what semantic.py needs to
        know on opening an index it did not see built, digested as it comes, so that no list
        of every text is ever made (its heap outlived it: tens of MB at 100,000 notes). Reads
        each event's stored fields (about 0.6 s at 10,000 notes), and keeps each segment's
        key -> number table on the way (_event_docnums): read at the first context instead,
        they made it 0.5 s slower than the next. The search lock is held while a piece of them
        is read (`EventReading`), never while the caller digests them: a search waits for one
        piece at most, however slow the caller."""
        reading = EventReading(self._event_tables)
        while True:
            with self._searching:
                piece = reading.piece(self._searcher)
            if piece is None:
                return
            yield from piece

    def segment_events(
        self, known: Collection[str]
    ) -> tuple[list[str], dict[str, list[tuple[str, str, str]]]]:
        """The searcher's segments, in order, and the events of each one not in `known`, as
        (key, text, role): what a reader of another process's index reads as that index grows
        (daemon_vectors.py), a new segment at a time; a segment's events are never re-read."""
        with self._searching:
            return self._event_tables.segment_events(self._searcher, known)

    def event_texts(self, keys: Iterable[str]) -> dict[str, str]:
        """The text of each live indexed event keyed `keys` (a key not indexed is left out):
        what semantic.py reads back to embed, rather than keep every text while it waits."""
        with self._searching:
            stored = self._stored_fields()
            return {
                key: stored(docnum).get("text") or ""
                for key, docnum in self._event_docnums(keys).items()
            }

    def _feedback_terms(
        self, top: Sequence[Hit], query_terms: set[str], scope: ScopeStatistics | None = None
    ) -> dict[str, float]:
        """The `_FEEDBACK_TERMS` words that weigh most in `top` (feedback_words.py), the query's
        own left out; weights relative to the first, 0-1. In a scope, rarity among its own
        documents, as the search's scores (ScopeStatistics)."""
        total = max(len(scope.docs) if scope is not None else int(self._searcher.doc_count()), 1)
        return feedback_words.chosen(
            self._feedback_weights(top, query_terms),
            total,
            lambda word: self._doc_frequency("body", word, scope),
            _FEEDBACK_TERMS,
            _POSTINGS_BUDGET // 10,
        )

    def _feedback_weights(self, top: Sequence[Hit], query_terms: set[str]) -> dict[str, float]:
        """Each word of `top` by its weight there (feedback_words.weights)."""
        return feedback_words.weights(
            top, query_terms, lambda text: (t.text for t in self._analyzer(text))
        )

    def _doc_frequency(self, field: str, term: str, scope: ScopeStatistics | None = None) -> int:
        """How many documents hold `term` in `field` (in `scope`, its documents), asked of
        Whoosh once per searcher: a context asks it of every prompt word (each a lookup in the
        term table) and prompts repeat words."""
        if scope is not None:
            return scope.doc_frequency(self._searcher, field, term)
        known = self._memo().doc_frequency
        df = known.get((field, term))
        if df is None:
            df = known[(field, term)] = int(self._searcher.doc_frequency(field, term))
        return df

    def _selective(self, terms: list[str], scope: ScopeStatistics | None = None) -> list[str]:
        """The query terms worth scoring, within a budget of postings (documents to score).

        Whoosh scores every posting of every query term in Python, so a word found in thousands
        of documents costs more than the rest of the query while its BM25 weight (idf) is near
        the bottom. Terms are taken rarest first while the documents they match add up to at most
        `_POSTINGS_BUDGET`; the rarest term is always kept. A small index (LoCoMo's conversations,
        a few hundred notes) loses nothing; a 10,000-note index keeps its latency bounded.
        """
        if len(terms) <= 1:
            return terms
        # Whoosh's cost grows with the number of clauses as well as with postings: a long prompt
        # (or the working memory plus recent events, the query when there is no prompt) keeps
        # its `_MAX_TERMS` rarest terms, which carry most of the BM25 weight anyway.
        freq = {
            t: sum(self._doc_frequency(f, t, scope) for f in (*_BODY_FIELDS, "context"))
            for t in terms
        }
        kept: set[str] = set()
        spent = 0
        # A term no document has matches nothing: taken "rarest first" it would only crowd the
        # ones that can match out of the `_MAX_TERMS` (a working-memory query is full of dates,
        # times and ^g- marks that are in no document).
        present = [t for t in terms if freq[t]] or terms[:1]
        for term in sorted(present, key=lambda t: freq[t])[:_MAX_TERMS]:
            if kept and spent + freq[term] > _POSTINGS_BUDGET:
                break
            kept.add(term)
            spent += freq[term]
        return [t for t in terms if t in kept]
