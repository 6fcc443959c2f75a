"""The search index: Whoosh, kept outside the vault, a cache that can always be rebuilt.

With index_fields.py (the schema and the terms a document is indexed under), index_scoring.py
(scoring matches), index_runs.py (the sorted runs of a build), index_merge.py (the large
segments merged beside the writer) and whoosh_internals.py (every private name of Whoosh these
use, checked at import), the only modules that import whoosh;
index_documents.py holds what comes back (hits, note records, stored events). It follows
docs/foundations.md, section 4: one writer at a time (the `Index` owner; writers wait for the lock
rather than fail), commits with `merge=False` on the edit path and a merging commit only when asked
(idle time), never `optimize()` inline, one long-lived searcher refreshed after each commit (the
term frequencies it told are kept until the next one), no term vectors. The searcher is read and
swapped under a lock: the daemon's writer loop swaps it after a commit while its job and socket
threads search (a closed searcher mid-query would fail the query). A failed commit cancels its
writer so the lock is never left held. Any error reading the index makes the caller rebuild it.

Queries are never parsed as query syntax: the text is run through the same analyzer as the
documents and becomes an OR of its terms, so anything a person or a model types is a valid query.

One concept: the `Index` object, one open Whoosh index with its one writer and its one
long-lived searcher. Its writes (apply, build, merges), its searches (query, feedback, the
postings budget) and its lookups (notes, sessions) all go through that searcher and the lock it
is swapped under, and ask the same per-searcher memo; split apart, each part would need the
others' private state. What does not touch that state lives in the three modules above.
"""

from __future__ import annotations

import bisect
import contextlib
import dataclasses
import functools
import gc
import itertools
import logging
import math
import os
import sys
import threading
import uuid
import warnings
from array import array
from collections.abc import (
    Callable,
    Collection,
    Iterable,
    Iterator,
    Mapping,
    MutableSequence,
    Sequence,
)
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import whoosh
from whoosh import index as windex
from whoosh.index import TOC, LockError, clean_files
from whoosh.query import Or, Term

from brainiac.core.errors import BrainiacError, IndexLockedError, SearchError, is_storage_problem
from brainiac.core.heap import release_freed_memory
from brainiac.language import when
from brainiac.search import whoosh_internals
from brainiac.search.corpus import EVENT, NOTE, Document, thread
from brainiac.search.index_documents import (
    SESSION_HASH_LEN,
    Hit,
    NoteRecord,
    StoredEvent,
    hit,
    hit_fields,
    segment_notes,
    session_time_term,
    stored_session_event,
)
from brainiac.search.index_fields import STOP_LIST, Terms, document_fields, index_schema
from brainiac.search.index_merge import MergeBeside, Source
from brainiac.search.index_merge import remove_leftovers as remove_merge_leftovers
from brainiac.search.index_runs import install as _install_batched_runs
from brainiac.search.index_scoring import (
    KeptNumbers,
    ScopeStatistics,
    SegmentLengthsBM25F,
    best,
    best_widened,
    inside_and_outside,
    match_scores,
)
from brainiac.search.key_numbers import KeyNumbers

log = logging.getLogger(__name__)

# Skipping blocks whose best score cannot reach the top hits: Whoosh 2.7.4 (the fallback) can
# loop there for ever. Its union matcher asks one side to skip to `min - other side`; when
# rounding puts that side's block just above it, the side stays where it is and the loop asks
# again (a short question over a dozen events did it: tests/test_index.py). whoosh3 does not.
_SKIP_BY_QUALITY = not whoosh.versionstring().startswith("2.")

SCHEMA_VERSION = "13"
_install_batched_runs()  # every writer's sorted runs, a batch per pickle (index_runs.py)
_ID_FILE = "brainiac-index-id"
_WRITER_TIMEOUT_S = 30.0
# Segments as separate files, not Whoosh's default compound file: a compound segment is read
# through an mmap, and Whoosh wraps each part of it in a BytesIO, which copies it: a second,
# anonymous copy of the whole index in the daemon's memory.
_WRITER_OPTIONS: dict[str, Any] = {"timeout": _WRITER_TIMEOUT_S, "delay": 0.05, "compound": False}
# The postings a writer holds in memory before it sorts them into a run on disk (Whoosh's
# default). More would skip the runs of a large build (index_runs.py) at the cost of holding
# every posting of each sub-writer in memory, and the room needed grows with the vault.
_POOL_MB = 128
# The same for an edit's commit and a merging commit, in the daemon's process: an edit never
# fills it, but a job that rewrites thousands of notes (organization) is one sync, and with the
# build's pool the daemon's heap would hold up to its size in postings, and keep it.
_EDIT_POOL_MB = 24
# Documents written above which a sync is large: the daemon hands the heap's freed pages back
# to the system after it (release_freed_memory).
LARGE_SYNC_DOCS = 500
_MERGE_ABOVE_SEGMENTS = 6
# How often a reader beside the daemon opens the newest commit when the one it was opening had
# its files deleted by a newer commit meanwhile (Index._fresher): each try is a few file opens,
# and a newer commit each time would mean the daemon commits faster than a reader opens.
_READER_ATTEMPTS = 5
_MOVED_ON = object()  # _try_open's answer when a newer commit deleted what it was reading
# A build of more documents than this indexes in two processes (Whoosh's `procs=2`).
MULTIPROCESS_ABOVE = 2000
_MERGE_AT_SEGMENTS = 10
# A segment holding at least 1/this of the index's documents is large: Whoosh's merging commits
# leave it alone, and two of them are merged beside the writer (merge_beside_sources).
_LARGE_SEGMENT_PARTS = 8
# Whoosh keeps a replaced document in its segment, marked deleted, until that segment is merged,
# and BM25 counts it in its statistics: two devices holding the same synced files, whose indexes
# saw different streams of changes, ranked the same search differently (tests/test_syncthing.py).
# An idle merge with this share of documents deleted rewrites the index without them.
_PURGE_DELETED_SHARE = 0.25


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


@dataclass
class _SearcherMemo:
    """Answers one searcher gave (Index._doc_frequency), valid as long as that searcher is the
    open one: a committed change opens a new searcher, and with it a new memo."""

    searcher: Any
    doc_frequency: dict[tuple[str, str], int] = dataclasses.field(default_factory=dict)
    stored: Callable[[int], dict[str, Any]] | None = None  # _stored_fields_reader's
    notes: frozenset[int] | None = None  # the note documents' numbers
    scopes: dict[tuple[str, ...], ScopeStatistics] = dataclasses.field(default_factory=dict)
    scope_keys: dict[tuple[str, ...], frozenset[str]] = dataclasses.field(default_factory=dict)
    project_counts: dict[str, int] | None = None  # Index.project_counts's


class Index:
    """Owns one on-disk Whoosh index: its writer, its searcher and their lifecycles."""

    def __init__(self, directory: Path, writable: bool = True) -> None:
        self.directory = directory
        self.writable = writable  # False: a reader beside the daemon, which owns the writer
        self.rebuilt = False  # True when opening found nothing usable and started afresh
        self._left_by_merge = 0  # segments the last merge left (see merge_segments)
        self._failed_beside: tuple[str, ...] = ()  # the sources of a merge beside that failed
        # True in the daemon, which merges beside its writer (index_merge.py): a purge of an
        # index too large for a two-process build's threshold is then left to
        # merge_beside_start, a child's copy, rather than rewritten in the writer's process.
        self.purges_beside = False
        self._weighting = SegmentLengthsBM25F()
        self._numbers = KeptNumbers()  # see ScopeStatistics
        self._listings: dict[str, list[tuple[int, NoteRecord]]] = {}  # see notes()
        self._event_tables: dict[str, KeyNumbers] = {}  # see _event_docnums
        self._seen = _SearcherMemo(None)  # see _doc_frequency
        # Held while the searcher (and the weighting's per-segment cache) is used or replaced.
        self._searching = threading.RLock()
        self._ix = self._open_or_create()
        if self.writable:
            remove_merge_leftovers(self.directory)
        try:
            self._searcher: Any = self._new_searcher()
        except Exception as exc:  # a table of contents that opens over damaged segments
            if not self.writable:
                raise SearchError(
                    f"{self.directory}: the index cannot be read ({exc}); the daemon rebuilds it "
                    "on its next update, or run `brainiac reindex` when it is stopped"
                ) from exc
            log.warning("index at %s is unreadable (%s); rebuilding", self.directory, str(exc))
            self.reset()
        # The open searcher's schema, not the index's: that one is read from the table of
        # contents on disk, which may have been deleted since the searcher opened.
        self._analyzer = self._searcher.schema["body"].analyzer

    # -- lifecycle ---------------------------------------------------------------------------
    def _open_or_create(self) -> Any:
        # A failed Whoosh open leaves its files in reference cycles; collect them here, quietly,
        # rather than as ResourceWarnings at some later moment.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ResourceWarning)
            ix = self._try_open()
            # Beside the daemon, a table of contents the daemon's next commit deleted between
            # the listing and the read (_fresher): the newest one is read instead.
            for _ in range(_READER_ATTEMPTS - 1):
                if ix is not _MOVED_ON:
                    break
                ix = self._try_open()
            if ix is None or ix is _MOVED_ON:
                ix = None
                gc.collect()
        if ix is None and not self.writable:
            raise SearchError(
                f"{self.directory}: the index is not ready yet (the daemon is "
                "building it); try again in a moment"
            )
        return ix if ix is not None else self._create()

    def _try_open(self) -> Any:
        """The open index; None when nothing usable is there (a writer builds one afresh);
        _MOVED_ON when a reader beside the daemon met a commit's deletion (_fresher)."""
        generation = self._generation()
        try:
            if (self.directory / _ID_FILE).is_file() and windex.exists_in(self.directory):
                ix = windex.open_dir(self.directory)
                if ix.schema.names() == index_schema().names() and self.identity.endswith(
                    ":" + SCHEMA_VERSION
                ):
                    return ix
                ix.close()
                log.info("index at %s has an older schema; rebuilding", self.directory)
        except Exception as exc:  # any read error means: rebuild from the vault
            if self._fresher(exc, generation):
                return _MOVED_ON
            # Log the text, not the exception: a kept log record would keep its traceback's frames
            # alive, and with them the files Whoosh opened.
            log.warning("index at %s is unreadable (%s); rebuilding", self.directory, str(exc))
        return None

    def _create(self) -> Any:
        self._check_writable()
        # Twice: a person clearing the cache may delete the folder while it is being made; a
        # second deletion in a row is an error (one line), not a loop.
        for attempt in (1, 2):
            try:
                with self._writing("creating the index"):
                    import shutil  # here only: a CLI call that searches never needs it

                    shutil.rmtree(self.directory, ignore_errors=True)
                    self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
                    ix = windex.create_in(self.directory, index_schema())
                    (self.directory / _ID_FILE).write_text(f"{uuid.uuid4().hex}:{SCHEMA_VERSION}")
            except IndexLockedError:
                raise
            except SearchError:
                if attempt == 2:
                    raise
                continue
            self.rebuilt = True
            return ix
        raise AssertionError("unreachable")

    @contextlib.contextmanager
    def _writing(self, doing: str) -> Iterator[None]:
        """Whoosh's and the file system's errors while `doing` a write, in the errors.py tree
        (`_write_error`)."""
        try:
            yield
        except Exception as exc:
            translated = self._write_error(exc, doing)
            if translated is exc:
                raise
            raise translated from exc

    def _write_error(self, exc: Exception, doing: str) -> Exception:
        """What a write's error means, in the errors.py tree.

        A full disk, a read-only file system or a refused permission stays the OSError it is
        (the caller says what it means for its own work: indexer.py, service.py). Whoosh's lock
        waits out `_WRITER_TIMEOUT_S` and then fails: IndexLockedError. Anything else, mostly
        files that vanished because the folder was deleted (a person clearing the cache):
        SearchError, which makes the indexer build the index again once.
        """
        if isinstance(exc, BrainiacError) or is_storage_problem(exc):
            return exc
        if isinstance(exc, LockError):
            return IndexLockedError(
                f"{self.directory}: {doing} failed: another writer holds the index's write lock "
                f"(waited {_WRITER_OPTIONS['timeout']:g} s); stop the other brainiac process "
                "writing this index (`brainiac status` names a running daemon), then try again"
            )
        return SearchError(
            f"{self.directory}: {doing} failed ({type(exc).__name__}: {exc}); if the folder "
            "was deleted meanwhile, try again and the index is rebuilt from the vault; "
            "otherwise run `brainiac reindex`"
        )

    @property
    def identity(self) -> str:
        """A token that changes whenever the index is created afresh (the manifest records it)."""
        try:
            return (self.directory / _ID_FILE).read_text().strip()
        except OSError:
            return ""

    def reset(self) -> None:
        """Drop everything and start an empty index (reindex)."""
        with self._searching:
            self.close()
            self._ix = self._create()
            with self._writing("opening the new index"):
                self._searcher = self._new_searcher()

    def close(self) -> None:
        with self._searching:
            with contextlib.suppress(Exception):
                self._searcher.close()
            with contextlib.suppress(Exception):
                self._ix.close()

    # -- writing -----------------------------------------------------------------------------
    def apply(self, add: Sequence[Document], delete: Iterable[str]) -> None:
        """Add or replace `add` and delete the documents keyed `delete`, in one commit (an edit's
        path: no merge, see below). A first build of a whole vault goes through `build`."""
        delete = list(delete)
        if not add and not delete:
            return
        self._check_writable()
        with self._writing("updating the index"):
            writer = self._ix.writer(**_WRITER_OPTIONS, limitmb=_EDIT_POOL_MB)
            terms = Terms()
            try:
                for key in delete:
                    writer.delete_by_term("key", key)
                for doc in add:
                    writer.update_document(**document_fields(doc, terms))
            except Exception:
                _cancel(writer)
                raise
            # Edits commit without merging (a merge can take seconds at 10,000 notes), but each
            # commit adds a segment, and queries and the searcher reopened after each commit
            # slow down with every one. Once they pile up (a burst of saves never leaves the
            # daemon idle long enough to merge), the commit lets Whoosh's policy merge the small
            # segments.
            self._publish(writer, merge=self.segment_count() >= _MERGE_AT_SEGMENTS)

    def build(self, docs: Iterable[Document], files: int = 0) -> int:
        """Add `docs` to an index that holds none of them yet (a first build, after `reset`),
        in one commit; how many were added. `files`: how many files they come from, if known.

        `docs` is consumed while the writer runs, so a caller that parses files as it yields
        their documents has Whoosh's sub-writers indexing while it reads the rest of the vault
        (parsing everything first would leave a core idle). Above `MULTIPROCESS_ABOVE`
        documents Whoosh indexes in two processes, each writing its own segment. From more files
        than that (a note is at least one document) those processes start with the first
        document instead of once that many are parsed: a full build holds a session's events
        back, so the sub-writers would otherwise wait for that many notes. An exception raised
        by `docs` itself cancels the writer and reaches the caller as it is.
        """
        self._check_writable()
        source = iter(docs)
        many = files > MULTIPROCESS_ABOVE
        first = list(itertools.islice(source, 1 if many else MULTIPROCESS_ABOVE + 1))
        if not first:
            return 0
        options: dict[str, Any] = {**_WRITER_OPTIONS, "limitmb": _POOL_MB}
        if many or len(first) > MULTIPROCESS_ABOVE:
            options.update(procs=2, multisegment=True)
        with self._writing("building the index"):
            writer = self._ix.writer(**options)
        added = 0
        terms = Terms()
        try:
            for doc in itertools.chain(first, source):  # the source's errors: as they are
                with self._writing("building the index"):
                    writer.add_document(**document_fields(doc, terms))
                added += 1
        except BaseException:
            _cancel(writer)
            raise
        with self._writing("building the index"):
            self._publish(writer, merge=False)
        return added

    def _publish(self, writer: Any, merge: bool, optimize: bool = False) -> None:
        """Commit `writer`, open a searcher on the commit, and only then delete the files the
        commit left unused.

        Whoosh deletes them inside the commit, but the commit runs outside the searching lock
        (a merge can take seconds, and queries must not wait for it) and the open searcher
        reads some of a segment's files lazily (a column such as the stored fields, on its
        first use): deleted before the swap, they would be gone for a query that runs between
        a merging commit and the swap. The swap waits for the queries under way, so once it is
        done no query can read them, and the deletion needs no lock. A failure in between leaves
        them to the next commit's deletion, which removes every file no segment of the index
        uses."""
        delete_unused_files = _commit(writer, merge, optimize)
        self._refresh()
        delete_unused_files()

    def _check_writable(self) -> None:
        if not self.writable:
            raise SearchError(
                f"{self.directory}: opened read-only beside the daemon, which is the "
                "index's only writer"
            )

    def merge_segments(self, force: bool = False) -> bool:
        """A merging commit when segments have piled up (call when idle). True if it merged.

        Whoosh's merge policy may leave more than `_MERGE_ABOVE_SEGMENTS` segments; then nothing
        is tried again until more segments arrive (each try writes a new generation, and an idle
        daemon must not burn CPU retrying).
        """
        self._check_writable()
        count = self.segment_count()
        purge = self.deleted_share() >= _PURGE_DELETED_SHARE and not (
            self.purges_beside and not force and self._purged_beside()
        )
        if (
            not force
            and not purge
            and (count <= _MERGE_ABOVE_SEGMENTS or count <= self._left_by_merge)
        ):
            return False
        with self._writing("merging the index's segments"):
            writer = self._ix.writer(**_WRITER_OPTIONS, limitmb=_EDIT_POOL_MB)
            self._publish(writer, merge=True, optimize=purge)
        release_freed_memory()
        self._left_by_merge = self.segment_count()
        return True

    def _purged_beside(self) -> bool:
        """Whether a purge of this index is a copy beside the writer (merge_beside_sources)
        rather than an `optimize` in the writer's process: an index of more documents than a
        build does in one process, whose rewrite would hold all of its postings in memory."""
        total: int = sum(s.doc_count_all() for s in self._searched_segments())
        return total > MULTIPROCESS_ABOVE

    def merge_beside_sources(self) -> tuple[str, ...]:
        """The segments worth merging beside the writer (index_merge.py), in the index's order,
        or none. Every segment when `_PURGE_DELETED_SHARE` of the documents are deleted (the
        copy leaves them out: a purge, made beside the writer); otherwise the large ones (each
        holding at least 1/`_LARGE_SEGMENT_PARTS` of the documents) when there are two or
        more, in an index a two-process build writes. Whoosh's merging commits leave large
        segments alone, and small ones are theirs to merge."""
        segments = self._searched_segments()
        total = sum(s.doc_count_all() for s in segments)
        if total <= MULTIPROCESS_ABOVE:
            return ()
        if self.deleted_share() >= _PURGE_DELETED_SHARE:
            return tuple(s.segment_id() for s in segments)
        large = tuple(
            s.segment_id() for s in segments if s.doc_count_all() * _LARGE_SEGMENT_PARTS >= total
        )
        return large if len(large) >= 2 else ()

    def merge_beside_start(self) -> MergeBeside | None:
        """Start merging the large segments in a child process, without the writer (see
        index_merge.py); None when there is nothing worth merging. Edits go on meanwhile;
        `merge_beside_finish` swaps the copy in."""
        self._check_writable()
        sources = self.merge_beside_sources()
        # Not again over the segments it failed on: an idle daemon must not burn CPU retrying.
        if not sources or sources == self._failed_beside:
            return None
        return MergeBeside(self.directory, sources)

    def merge_beside_finish(self, job: MergeBeside) -> bool:
        """Wait for `job`'s copy and swap it in for its sources, holding the writer only for the
        swap (index_merge.py, step 3). False, the copy dropped, when a source left the index
        meanwhile; RuntimeError when the child failed."""
        self._check_writable()
        try:
            try:
                copied = job.result()
            except Exception:
                if not set(job.segment_ids) <= self._segment_ids():
                    return False  # taken by a merge or a rebuild while the child read them
                self._failed_beside = job.segment_ids
                raise
            if copied is None:
                return False
            merged, sources = copied
            with self._writing("swapping in the merged segments"):
                writer = self._ix.writer(**_WRITER_OPTIONS)
                try:
                    segments = _swapped(writer.segments, merged, sources)
                    if segments is not None:
                        job.move_in(merged)
                        writer.segments = segments
                except Exception:
                    _cancel(writer)
                    raise
                if segments is None:
                    _cancel(writer)
                    return False
                self._publish(writer, merge=False)
            return True
        finally:
            job.discard()

    def _segment_ids(self) -> set[str]:
        return {segment.segment_id() for segment in self._searched_segments()}

    def deleted_share(self) -> float:
        """The share of the index's documents that were replaced or removed but are still in
        their segments (0.0 for an empty index)."""
        with self._searching:
            reader = self._searcher.reader()
            total = reader.doc_count_all()
            return (total - reader.doc_count()) / total if total else 0.0

    def segment_count(self) -> int:
        return len(self._searched_segments())

    def _searched_segments(self) -> list[Any]:
        """The index's segments, in order. Of the searcher's view (current after every commit):
        asking the index itself reads and unpickles its table of contents from disk each time."""
        with self._searching:
            leaves = _segments(self._searcher)
            return [leaf.segment() for leaf, _ in leaves]

    def catch_up(self) -> bool:
        """Open the index's latest commit if the searcher is older: what a reader beside the
        daemon calls before it reads (the daemon's own searcher is swapped at each commit).
        Whether it was older."""
        try:
            return self._refresh()
        except Exception as exc:
            raise SearchError(
                f"{self.directory}: the daemon's latest index could not be opened ({exc}); "
                "try again in a moment, or run `brainiac reindex` when the daemon is stopped"
            ) from exc

    def _refresh(self) -> bool:
        # A fresh searcher after every commit, not Searcher.refresh(): refresh reuses the readers
        # of unchanged segments and misses deletions made in them, so a deleted note stayed
        # findable and an updated one was found twice (whoosh3 3.54.0). The cost is
        # one reader open per commit, on the edit path only; queries keep the long-lived searcher.
        with self._searching:
            if self._searcher.up_to_date():
                return False
            old = self._searcher
            self._searcher = self._new_searcher()
            old.close()
            return True

    def _generation(self) -> int:
        """The newest commit's generation on disk (-1: none, or the folder unreadable)."""
        try:
            return whoosh_internals.latest_generation(str(self.directory))
        except OSError:
            return -1

    def _fresher(self, exc: Exception, generation: int) -> bool:
        """Whether `exc`, met by a reader beside the daemon reading the commit that was the
        newest at `generation`, is a file that commit named deleted by a newer one: the daemon
        deletes a commit's unused files once its next commit is written. Then the newest
        commit is worth reading. A file missing from the newest commit is damage (an error)."""
        return (
            not self.writable
            and isinstance(exc, FileNotFoundError)
            and self._generation() != generation
        )

    def _new_searcher(self) -> Any:
        """A searcher on the index's newest commit. Beside the daemon, every file it may read
        is opened with it (whoosh_internals.keep_column_files): the daemon deletes the files a
        merge replaced as soon as its own searcher moved on, and a search here must read the
        commit it opened whole, rather than fail ('NoneType' object is not subscriptable) or
        score with lengths it could not read."""
        if self.writable:
            return self._opened_searcher()
        for attempt in range(1, _READER_ATTEMPTS + 1):
            generation = self._generation()
            try:
                return self._opened_searcher()
            except Exception as exc:
                if attempt == _READER_ATTEMPTS or not self._fresher(exc, generation):
                    raise
        raise AssertionError("unreachable")

    def _opened_searcher(self) -> Any:
        searcher = self._ix.searcher(weighting=self._weighting)
        leaves = [leaf for leaf, _ in _segments(searcher)]
        if not self.writable:
            try:
                names = os.listdir(self.directory)  # after the reader read its commit
                for leaf in leaves:
                    whoosh_internals.keep_column_files(leaf, names)
            except BaseException:
                searcher.close()
                raise
        segment_ids = {leaf.segment().segment_id() for leaf in leaves}
        self._weighting.keep_only(segment_ids)
        self._numbers.keep_only(segment_ids)
        for leaf in leaves:
            whoosh_internals.keep_term_lookups(leaf)
        return searcher

    # -- reading -----------------------------------------------------------------------------
    def doc_count(self) -> int:
        with self._searching:
            return int(self._searcher.doc_count())

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
                leaves = _segments(self._searcher)
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

    def _read_error(self, exc: Exception) -> SearchError:
        """What a search that could not read the index says, with the fix."""
        if not (self.directory / _ID_FILE).is_file():
            fix = "its folder was deleted meanwhile; try again and it is rebuilt from the vault"
        elif self.writable:
            fix = "run `brainiac reindex`"
        else:
            fix = "the daemon rebuilds it on its next update; try again in a moment"
        problem = f"the index could not be read ({exc})"
        return SearchError(f"{self.directory}: {problem}; {fix}")

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
                reader = self._searcher.reader()
                memo.project_counts = (
                    {
                        (t.decode("utf-8") if isinstance(t, bytes) else str(t)): int(
                            self._searcher.doc_frequency("projects", t)
                        )
                        for t in reader.lexicon("projects")
                    }
                    if "projects" in reader.schema.names()
                    else {}
                )
            return dict(memo.project_counts)

    def session_events_keyed(self, keys: Iterable[str]) -> list[StoredEvent]:
        """The indexed events keyed `keys` that have a session (as stored, context left empty)."""
        found: list[StoredEvent] = []
        with self._searching:
            for key in keys:
                for docnum in self._searcher.document_numbers(key=key):
                    fields = self._searcher.stored_fields(docnum)
                    if fields.get("kind") == EVENT and fields.get("session"):
                        found.append(stored_session_event(docnum, fields))
        return found

    def session_times(
        self, session: str, start: str = "", end: str | None = None, limit: int | None = None
    ) -> list[str]:
        """The times (time_key) at which `session` (a thread: corpus.thread) has indexed events,
        from `start` on and before `end`, in order, at most `limit`: a walk over that stretch of
        the lexicon only.
        A time may be left over from deleted events (session_events_at tells)."""
        prefix = session_time_term(session, None)[:SESSION_HASH_LEN]
        out: list[str] = []
        with self._searching:
            reader = self._searcher.reader()
            if "session_time" not in reader.schema.names():
                return out
            for fieldname, term in reader.terms_from("session_time", f"{prefix} {start}".encode()):
                text = term.decode("utf-8") if isinstance(term, bytes) else str(term)
                if fieldname != "session_time" or not text.startswith(prefix):
                    break
                time = text[SESSION_HASH_LEN + 1 :]
                if (end is not None and time >= end) or (limit is not None and len(out) >= limit):
                    break
                out.append(time)
        return out

    def session_events_at(self, session: str, time: str) -> list[StoredEvent]:
        """The indexed events of `session` (a thread: corpus.thread) at `time` (a time_key), in
        the order they were indexed."""
        term = f"{session_time_term(session, None)[:SESSION_HASH_LEN]} {time}"
        out: list[StoredEvent] = []
        with self._searching:
            for docnum in self._searcher.document_numbers(session_time=term):
                fields = self._searcher.stored_fields(docnum)
                if fields.get("kind") == EVENT and fields.get("session"):
                    stored = stored_session_event(docnum, fields)
                    if thread(stored.doc) == session:
                        out.append(stored)
        return out

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
                matches, beyond = inside_and_outside(self._searcher, query, allow, at_least)
                stored = self._stored_fields()
                outside = [hit_fields(stored(d), sc) for d, sc in best(beyond, others)]
            else:
                matches = (
                    match_scores(self._searcher, query, allow=allow, restrict=hidden)
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
            found = memo.scopes[projects] = ScopeStatistics(frozenset(docs), self._numbers)
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
                leaves = _segments(self._searcher)
                keys: set[str] = set()
                for leaf, offset in leaves:
                    table = self._kept_event_table(leaf)
                    keys.update(k for k, d in table.items() if offset + d in docs)
                found = memo.scope_keys[wanted] = frozenset(keys)
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
            widened = match_scores(self._searcher, extra, allow=allow, restrict=hidden)
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
        left out). Each segment's key -> number table is read once (`_event_table`) and kept
        until a merge removes the segment (as `notes` keeps its notes): a term lookup per key,
        for every one of a prompt's nearest events, would cost more than the search."""
        leaves = _segments(self._searcher)
        tables: dict[str, KeyNumbers] = {}
        found: dict[str, int] = {}
        wanted = list(keys)
        for leaf, offset in leaves:
            table = tables[leaf.segment().segment_id()] = self._kept_event_table(leaf)
            deletions = leaf.has_deletions()  # a segment's deletions grow after its table is read
            for key, docnum in table.found(wanted):
                if not (deletions and leaf.is_deleted(docnum)):
                    found[key] = offset + docnum
        self._event_tables = tables
        return found

    def _kept_event_table(self, leaf: Any) -> KeyNumbers:
        """`leaf`'s key -> number table of its events (`_event_table`), read once and kept until
        a merge removes the segment."""
        segment = leaf.segment().segment_id()
        table = self._event_tables.get(segment)
        if table is None:
            table = self._event_tables[segment] = _event_table(leaf)
        return table

    def events(self) -> list[tuple[str, str, str]]:
        """Every indexed event, as (key, text, role) (each_event's, in a list)."""
        return list(self.each_event())

    def each_event(self) -> Iterator[tuple[str, str, str]]:
        """Every indexed event, as (key, text, role), one at a time: what semantic.py needs to
        know on opening an index it did not see built, digested as it comes, so that no list
        of every text is ever made (its heap outlived it: tens of MB at 100,000 notes). Reads
        each event's stored fields (about 0.6 s at 10,000 notes), and keeps each segment's
        key -> number table on the way (_event_docnums): read at the first context instead,
        they made it 0.5 s slower than the next. The searcher is held until the last event is
        read: read them all, in one thread."""
        with self._searching:
            tables: dict[str, KeyNumbers] = {}
            for leaf, _ in _segments(self._searcher):
                keys: list[str] = []
                numbers = array("l")
                yield from _read_event_table(leaf, keys, numbers)
                tables[leaf.segment().segment_id()] = KeyNumbers(keys, numbers)
            self._event_tables = tables

    def segment_events(
        self, known: Collection[str]
    ) -> tuple[list[str], dict[str, list[tuple[str, str, str]]]]:
        """The searcher's segments, in order, and the events of each one not in `known`, as
        (key, text, role): what a reader of another process's index reads as that index grows
        (daemon_vectors.py), a new segment at a time; a segment's events are never re-read."""
        with self._searching:
            leaves = _segments(self._searcher)
            order: list[str] = []
            read: dict[str, list[tuple[str, str, str]]] = {}
            for leaf, _ in leaves:
                segment = leaf.segment().segment_id()
                order.append(segment)
                if segment not in known:
                    keys: list[str] = []
                    numbers = array("l")
                    read[segment] = list(_read_event_table(leaf, keys, numbers))
                    self._event_tables[segment] = KeyNumbers(keys, numbers)
            return order, read

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
        """The `_FEEDBACK_TERMS` terms that weigh most in `top` (each hit counting by its share
        of the best score, each term by its share of the hit's words and by its rarity), the
        query's own left out; weights relative to the first, 0-1.

        A term found in one document only (the hit itself) finds nothing new; a common one
        (in more than a tenth of the postings budget) would cost more than it finds.
        """
        best = top[0].score or 1.0
        # In a scope, rarity among its own documents, as the search's scores (ScopeStatistics).
        total = max(len(scope.docs) if scope is not None else int(self._searcher.doc_count()), 1)
        weights: dict[str, float] = {}
        for h in top:
            tokens = [t.text for t in self._analyzer(h.text)]
            for term in set(tokens):
                if term in query_terms or len(term) < 3 or term.isdigit():
                    continue
                share = tokens.count(term) / len(tokens)
                weights[term] = weights.get(term, 0.0) + (h.score / best) * share
        scored: dict[str, float] = {}
        for term, w in weights.items():
            df = self._doc_frequency("body", term, scope)
            if 2 <= df <= _POSTINGS_BUDGET // 10:
                scored[term] = w * math.log(total / df)
        chosen = sorted(scored, key=lambda t: (-scored[t], t))[:_FEEDBACK_TERMS]
        if not chosen or scored[chosen[0]] <= 0:
            return {}
        return {t: scored[t] / scored[chosen[0]] for t in chosen}

    def _memo(self) -> _SearcherMemo:
        """What the open searcher has told so far; a new searcher (after a commit) starts afresh."""
        if self._seen.searcher is not self._searcher:
            self._seen = _SearcherMemo(self._searcher)
        return self._seen

    def _stored_fields(self) -> Callable[[int], dict[str, Any]]:
        """The open searcher's `stored_fields`, read from each segment's stored-fields column
        directly: Whoosh's own checks every field name of every document against the schema,
        a large share of each read, and a context reads a few hundred. The schema of
        a stored document is always the index's (a change of it rebuilds the index)."""
        memo = self._memo()
        if memo.stored is None:
            memo.stored = _stored_fields_reader(self._searcher)
        return memo.stored

    def _note_docnums(self) -> frozenset[int]:
        """The document numbers of the notes (every other document is an event), read once a
        searcher: a few milliseconds at 10,000 notes, then a set lookup a match."""
        memo = self._memo()
        if memo.notes is None:
            memo.notes = frozenset(self._searcher.docs_for_query(Term("kind", NOTE)))
        return memo.notes

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


def _segments(searcher: Any) -> list[tuple[Any, int]]:
    """The readers of `searcher`'s segments, each with the number of its first document; none
    for an empty index (Whoosh's reader of no segment stands as its own one leaf, with no
    segment)."""
    reader = searcher.reader()
    return reader.leaf_readers() if reader.doc_count_all() else []


def _stored_fields_reader(searcher: Any) -> Callable[[int], dict[str, Any]]:
    """`searcher.stored_fields`, each document read from its segment's per-document reader
    (whoosh_internals.stored_fields_reader; without it, Whoosh's own method)."""
    leaves = _segments(searcher)
    if not leaves:
        return searcher.stored_fields  # type: ignore[no-any-return]
    reads = [whoosh_internals.stored_fields_reader(leaf) for leaf, _ in leaves]
    offsets = [offset for _, offset in leaves]
    if len(reads) == 1:
        return reads[0]

    def stored_fields(docnum: int) -> dict[str, Any]:
        at = bisect.bisect_right(offsets, docnum) - 1
        return reads[at](docnum - offsets[at])

    return stored_fields


def _commit(writer: Any, merge: bool, optimize: bool = False) -> Callable[[], None]:
    """Commit and return the deletion of the files the commit left unused (see Index._publish),
    or cancel so that a failed commit never leaves the index locked (Whoosh 2.7.4 keeps the lock
    after a failed commit; whoosh3 releases it and its cancel() then raises)."""
    deletions: list[Callable[[], None]] = []

    def write_toc(segments: list[Any]) -> None:
        # Whoosh's own table of contents (whoosh_internals.commit_with_toc) without its
        # clean_files, which is returned instead.
        TOC(writer.schema, segments, writer.generation).write(writer.storage, writer.indexname)
        deletions.append(
            functools.partial(
                clean_files, writer.storage, writer.indexname, writer.generation, segments
            )
        )

    try:
        whoosh_internals.commit_with_toc(writer, write_toc, merge, optimize)
    except Exception:
        _cancel(writer)
        raise
    if not deletions:
        # Whoosh committed without calling the replacement, so it deleted the unused files
        # itself, under the open searcher: its queries may fail until the swap. A renamed
        # internal must not pass quietly.
        log.error(
            "%s: Whoosh %s committed without calling SegmentWriter._commit_toc (%s): the "
            "commit's unused files were deleted before the searcher moved on; install the "
            "Whoosh pyproject.toml names (whoosh3==3.54.0, or whoosh==2.7.4)",
            getattr(writer.storage, "folder", "the index"),
            whoosh.versionstring(),
            type(writer).__name__,
        )
        return lambda: None
    return deletions[0]


def _swapped(segments: list[Any], merged: Any, sources: Sequence[Source]) -> list[Any] | None:
    """`segments` with `merged` in place of `sources` (at the first one's place), `merged`
    given the deletions made in the sources since they were copied; None when a source is no
    longer among `segments`."""
    current = {segment.segment_id(): segment for segment in segments}
    if any(source.segment_id not in current for source in sources):
        return None
    for source in sources:
        segment = current[source.segment_id]
        if segment.has_deletions():
            for docnum in set(segment.deleted_docs()).difference(source.deleted):
                merged.delete_document(source.moved(docnum))
    replaced = {source.segment_id for source in sources}
    at = next(i for i, segment in enumerate(segments) if segment.segment_id() in replaced)
    rest = [segment for segment in segments if segment.segment_id() not in replaced]
    return [*rest[:at], merged, *rest[at:]]


def _cancel(writer: Any) -> None:
    with contextlib.suppress(Exception):
        writer.cancel()
    # A two-process build's writer (Whoosh's MpWriter) only flags its sub-writer processes in
    # its own copies of them: the processes wait on their job queue for ever, and an exiting
    # interpreter joins them, so a build that failed halfway would hang at exit. End them.
    for task in getattr(writer, "tasks", ()):
        with contextlib.suppress(Exception):
            task.terminate()
            task.join(5)


def _event_table(leaf: Any) -> KeyNumbers:
    """One segment's live events, key -> document number within the segment, read from their
    stored fields."""
    keys: list[str] = []
    numbers = array("l")
    for _ in _read_event_table(leaf, keys, numbers):
        pass
    return KeyNumbers(keys, numbers)


def _read_event_table(
    leaf: Any, keys: list[str], numbers: MutableSequence[int]
) -> Iterator[tuple[str, str, str]]:
    """One segment's live events, their keys and document numbers within the segment appended
    to `keys` and `numbers`, each one's (key, text, role) given on the way."""
    if ("kind", EVENT) not in leaf:
        return
    deletions = leaf.has_deletions()
    stored = whoosh_internals.stored_fields_reader(leaf)
    for docnum in leaf.postings("kind", EVENT).all_ids():
        if deletions and leaf.is_deleted(docnum):
            continue
        fields = stored(docnum)
        keys.append(fields["key"])
        numbers.append(docnum)
        # The role as one string a speaker, before the next event is read: a copy of its own
        # per event would stay in the heap among the keys kept, freed or not.
        yield fields["key"], fields.get("text") or "", sys.intern(fields.get("role") or "")
