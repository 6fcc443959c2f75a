"""The search index opened: Whoosh, kept outside the vault, a cache that can always be rebuilt.

`OpenIndex` opens the index folder (or creates it, or rebuilds it when nothing usable is there),
says what a write's or a read's error means in the errors.py tree, and keeps the one long-lived
searcher, refreshed after each commit, with a memo of what it told (term frequencies, scopes,
the notes' numbers, its stored-fields reader) until the next one opens. It follows
docs/foundations.md, section 4: the searcher is read and swapped under a lock (the daemon's
writer loop swaps it after a commit while its job and socket threads search: a closed searcher
mid-query would fail the query), and any error reading the index makes the caller rebuild it.
Beside the daemon (`writable=False`) it reads the daemon's commits and never writes.
index_writes.py adds the writes, index.py the searches.
"""

from __future__ import annotations

import bisect
import contextlib
import dataclasses
import gc
import logging
import os
import threading
import uuid
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from whoosh import index as windex
from whoosh.index import LockError
from whoosh.query import Term

from brainiac.core.errors import BrainiacError, IndexLockedError, SearchError, is_storage_problem
from brainiac.search import whoosh_internals
from brainiac.search.corpus import NOTE
from brainiac.search.index_fields import index_schema
from brainiac.search.index_merge import remove_leftovers as remove_merge_leftovers
from brainiac.search.index_weighting import SegmentLengthsBM25F
from brainiac.search.scope_postings import KeptSlices
from brainiac.search.scope_runs import SegmentRunCounts
from brainiac.search.scope_statistics import KeptNumbers, ScopeStatistics

log = logging.getLogger(__name__)

SCHEMA_VERSION = "13"
_ID_FILE = "brainiac-index-id"
_WRITER_TIMEOUT_S = 30.0
# Segments as separate files, not Whoosh's default compound file: a compound segment is read
# through an mmap, and Whoosh wraps each part of it in a BytesIO, which copies it: a second,
# anonymous copy of the whole index in the daemon's memory.
WRITER_OPTIONS: dict[str, Any] = {"timeout": _WRITER_TIMEOUT_S, "delay": 0.05, "compound": False}
# How often a reader beside the daemon opens the newest commit when the one it was opening had
# its files deleted by a newer commit meanwhile (OpenIndex._fresher): each try is a few file opens,
# and a newer commit each time would mean the daemon commits faster than a reader opens.
_READER_ATTEMPTS = 5
_MOVED_ON = object()  # _try_open's answer when a newer commit deleted what it was reading


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


class OpenIndex:
    """One on-disk Whoosh index, opened (or created afresh), and its one long-lived searcher."""

    def __init__(self, directory: Path, writable: bool = True) -> None:
        self.directory = directory
        self.writable = writable  # False: a reader beside the daemon, which owns the writer
        self.rebuilt = False  # True when opening found nothing usable and started afresh
        self._weighting = SegmentLengthsBM25F()
        self._numbers = KeptNumbers()  # see ScopeStatistics
        self._run_counts = SegmentRunCounts(directory)  # see ScopeStatistics
        self._slices = KeptSlices()  # a scope's postings as its searches read them
        self._seen = _SearcherMemo(None)  # see _memo
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
                f"(waited {WRITER_OPTIONS['timeout']:g} s); stop the other brainiac process "
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

    def _check_writable(self) -> None:
        if not self.writable:
            raise SearchError(
                f"{self.directory}: opened read-only beside the daemon, which is the "
                "index's only writer"
            )

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
            leaves = segments(self._searcher)
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
        leaves = [leaf for leaf, _ in segments(searcher)]
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
        self._run_counts.keep_only(segment_ids)
        self._slices.keep_only(segment_ids)
        for leaf in leaves:
            whoosh_internals.keep_term_lookups(leaf)
        return searcher

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

    # -- reading -----------------------------------------------------------------------------
    def doc_count(self) -> int:
        with self._searching:
            return int(self._searcher.doc_count())

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


def segments(searcher: Any) -> list[tuple[Any, int]]:
    """The readers of `searcher`'s segments, each with the number of its first document; none
    for an empty index (Whoosh's reader of no segment stands as its own one leaf, with no
    segment)."""
    reader = searcher.reader()
    return reader.leaf_readers() if reader.doc_count_all() else []


def _stored_fields_reader(searcher: Any) -> Callable[[int], dict[str, Any]]:
    """`searcher.stored_fields`, each document read from its segment's per-document reader
    (whoosh_internals.stored_fields_reader; without it, Whoosh's own method)."""
    leaves = segments(searcher)
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
