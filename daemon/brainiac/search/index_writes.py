"""Writing the search index: one writer at a time, its commits and its merges.

It follows docs/foundations.md, section 4: one writer at a time (the `Index` owner; writers wait
for the lock rather than fail), commits with `merge=False` on the edit path and a merging commit
only when asked (idle time), never `optimize()` inline. A commit opens a new searcher before the
files it left unused are deleted (`IndexWrites._publish`), and a failed commit cancels its
writer so the lock is never left held. The large segments of a two-process build are merged
beside the writer (index_merge.py); this module starts that merge and swaps its copy in.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import logging
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import whoosh
from whoosh.index import TOC, clean_files

from brainiac.core.heap import release_freed_memory
from brainiac.search import whoosh_internals
from brainiac.search.corpus import Document
from brainiac.search.index_fields import Terms, document_fields
from brainiac.search.index_merge import POOL_MB, MergeBeside, swapped
from brainiac.search.index_open import WRITER_OPTIONS, OpenIndex
from brainiac.search.index_runs import install as _install_batched_runs

log = logging.getLogger(__name__)

_install_batched_runs()  # every writer's sorted runs, a batch per pickle (index_runs.py)
# The postings an edit's commit and a merging commit hold in memory, in the daemon's process
# (a build's writers: POOL_MB, index_merge.py): an edit never fills it, but a job that rewrites
# thousands of notes (organization) is one sync, and with the build's pool the daemon's heap
# would hold up to its size in postings, and keep it.
_EDIT_POOL_MB = 24
# Documents written above which a sync is large: the daemon hands the heap's freed pages back
# to the system after it (release_freed_memory).
LARGE_SYNC_DOCS = 500
_MERGE_ABOVE_SEGMENTS = 6
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


class IndexWrites(OpenIndex):
    """The index's writes: edits, the first build, merging commits and the merge beside."""

    def __init__(self, directory: Path, writable: bool = True) -> None:
        super().__init__(directory, writable)
        self._left_by_merge = 0  # segments the last merge left (see merge_segments)
        self._failed_beside: tuple[str, ...] = ()  # the sources of a merge beside that failed
        # True in the daemon, which merges beside its writer (index_merge.py): a purge of an
        # index too large for a two-process build's threshold is then left to
        # merge_beside_start, a child's copy, rather than rewritten in the writer's process.
        self.purges_beside = False

    # -- writing -----------------------------------------------------------------------------
    def apply(self, add: Sequence[Document], delete: Iterable[str]) -> None:
        """Add or replace `add` and delete the documents keyed `delete`, in one commit (an edit's
        path: no merge, see below). A first build of a whole vault goes through `build`."""
        delete = list(delete)
        if not add and not delete:
            return
        self._check_writable()
        with self._writing("updating the index"):
            writer = self._ix.writer(**WRITER_OPTIONS, limitmb=_EDIT_POOL_MB)
            terms = Terms()
            try:
                for key in delete:
                    writer.delete_by_term("key", key)
                for doc in add:
                    writer.update_document(**document_fields(doc, terms))
            except Exception:
                cancel(writer)
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
        options: dict[str, Any] = {**WRITER_OPTIONS, "limitmb": POOL_MB}
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
            cancel(writer)
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
        delete_unused_files = commit(writer, merge, optimize)
        self._refresh()
        delete_unused_files()

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
            writer = self._ix.writer(**WRITER_OPTIONS, limitmb=_EDIT_POOL_MB)
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
                writer = self._ix.writer(**WRITER_OPTIONS)
                try:
                    segments = swapped(writer.segments, merged, sources)
                    if segments is not None:
                        job.move_in(merged)
                        writer.segments = segments
                except Exception:
                    cancel(writer)
                    raise
                if segments is None:
                    cancel(writer)
                    return False
                self._publish(writer, merge=False)
            return True
        finally:
            job.discard()

    def _segment_ids(self) -> set[str]:
        return {segment.segment_id() for segment in self._searched_segments()}


def commit(writer: Any, merge: bool, optimize: bool = False) -> Callable[[], None]:
    """Commit and return the deletion of the files the commit left unused (see
    IndexWrites._publish), or cancel so that a failed commit never leaves the index locked
    (Whoosh 2.7.4 keeps the lock after a failed commit; whoosh3 releases it and its cancel()
    then raises)."""
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
        cancel(writer)
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


def cancel(writer: Any) -> None:
    with contextlib.suppress(Exception):
        writer.cancel()
    # A two-process build's writer (Whoosh's MpWriter) only flags its sub-writer processes in
    # its own copies of them: the processes wait on their job queue for ever, and an exiting
    # interpreter joins them, so a build that failed halfway would hang at exit. End them.
    for task in getattr(writer, "tasks", ()):
        with contextlib.suppress(Exception):
            task.terminate()
            task.join(5)
