"""Merging an index's large segments beside its writer, and swapping the merged one in.

A build of a large vault indexes in two processes and leaves two large segments, and every
search then looks each term up in both. Whoosh merges them only in a merging commit, which holds
the index's one writer for as long as it rewrites every document of them: a save made meanwhile
would wait for all of it, far past what an edit may take. Segments never change once
written (only the set of their deleted documents does, in the table of contents), so the merged
copy does not need the writer:

1. `Index.merge_beside_start` (a `MergeBeside`) runs this module as a child process (`python -m
   brainiac.search.index_merge INDEX_DIR SEGMENT_ID...`), niced, so the daemon keeps its core for
   edits and queries. The child opens the index as it is, copies the live documents of the named
   segments into a private index of one segment in `INDEX_DIR/merging/` (its own table of
   contents, lock and sorted runs: nothing it writes is a name the index's writer knows, uses or
   cleans up), and prints which documents of each source were already deleted, where each live
   one went in the copy, and each field's total length as the sources had it (less the deleted
   documents'), which the copy is given in place of the rounded sum Whoosh's copy makes (so
   BM25F scores as before). The copy holds the documents by scope (`in_scope_order`): the
   global ones first, then each set of projects' in one run of numbers, each run in the
   sources' order. A search in a project then finds the project's postings in posting blocks of
   their own, and passes over the other projects' blocks by their headers
   (whoosh_internals.posting_blocks); a vault without projects keeps the sources' order.
2. The daemon keeps indexing meanwhile; its commits add segments and mark replaced documents
   deleted in the sources.
3. `Index.merge_beside_finish` (index_writes.py) takes the writer for the swap alone: when
   every source is still in the index, it moves the merged segment's files into the index
   folder, marks deleted in it the documents deleted in the sources since the copy (a
   document's number in the copy is the one the child printed for its rank among its source's
   documents live at the copy), and commits a table of contents with the copy in place of the
   sources (`swapped`). Otherwise (a merge or a rebuild replaced a source meanwhile) the copy
   is dropped.

A crash anywhere leaves the last table of contents and the segments it names untouched: the
folder `merging/` is deleted when the index is next opened for writing (and by the next merge),
and files moved in before a swap's commit are named by no table of contents, so the next commit
deletes them.
"""

from __future__ import annotations

import bisect
import json
import os
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from whoosh import index as windex

from brainiac.core import faults
from brainiac.core.child_process import ChildProcess, in_the_background
from brainiac.search import scope_runs, whoosh_internals
from brainiac.store.projects import GLOBAL

# The private index the child writes, inside the index folder (the same file system, so its
# files move in by renaming) under a name Whoosh's clean-up of the index never matches.
FOLDER = "merging"
# The postings a writer holds in memory before it sorts them into a run on disk (Whoosh's
# default): a build's writers' (index_writes.py) and the child's here. More would skip the runs
# of a large build (index_runs.py) at the cost of holding every posting of each sub-writer in
# memory, and the room needed grows with the vault.
POOL_MB = 128


# Which scopes a document is in: its projects, and whether it is outside the global scope.
ScopeKey = tuple[tuple[str, ...], bool]
# The field whose terms order the copy (index_fields.py: the scopes a memory is found in).
_SCOPE_FIELD = "projects"


@dataclass(frozen=True)
class Source:
    """One segment copied: its id, its documents deleted when it was copied, the number of its
    first live document in the copy, and the number in the copy of each of its live documents
    (None: `base` plus its rank, the sources' order)."""

    segment_id: str
    deleted: tuple[int, ...]
    base: int
    numbers: tuple[int, ...] | None = None

    def moved(self, docnum: int) -> int:
        """The number in the copy of the source's live document `docnum`."""
        rank = docnum - bisect.bisect_left(self.deleted, docnum)
        return self.base + rank if self.numbers is None else self.numbers[rank]


class MergeBeside(ChildProcess):
    """One merge beside the writer: its child process, until `result` is read."""

    def __init__(self, directory: Path, segment_ids: Sequence[str]) -> None:
        self.directory = directory
        self.segment_ids = tuple(segment_ids)
        self.folder = directory / FOLDER
        remove_leftovers(directory)
        super().__init__(__name__, [str(directory), *self.segment_ids], keep_output=True)

    def result(self) -> tuple[Any, list[Source]] | None:
        """Wait for the child; the merged segment (its files still in `folder`) and its sources,
        or None when a source had left the index before the child opened it. OSError or
        RuntimeError (saying why) when the child failed."""
        out, why = self.outcome()
        if why:
            raise RuntimeError(
                f"{self.directory}: merging segments beside the writer failed ({why})"
            )
        copied = json.loads(out)
        if copied is None:
            return None
        sources = [
            Source(
                s["id"],
                tuple(s["deleted"]),
                s["base"],
                None if s.get("numbers") is None else tuple(s["numbers"]),
            )
            for s in copied["sources"]
        ]
        try:
            merged = windex.open_dir(self.folder)
            try:
                reader = merged.reader()
                try:
                    segment = reader.segment()
                finally:
                    reader.close()
            finally:
                merged.close()
        except Exception as exc:  # the index stays as it is: a failed merge, not a broken index
            raise RuntimeError(
                f"{self.folder}: the merged copy cannot be read ({type(exc).__name__}: {exc})"
            ) from exc
        whoosh_internals.set_length_totals(segment, copied["lengths"])
        return segment, sources

    def cancel(self) -> None:
        """End the child (if it runs) and delete what it wrote."""
        self.end()
        self.discard()

    def discard(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)

    def move_in(self, segment: Any) -> None:
        """Rename the merged segment's files into the index folder (only under the writer)."""
        prefix = segment.segment_id() + "."
        for name in os.listdir(self.folder):
            if name.startswith(prefix):
                os.replace(self.folder / name, self.directory / name)


def remove_leftovers(directory: Path) -> None:
    """Delete what a merge that never finished left in the index folder (a crash, a kill): its
    private index is as large as the segments it copied."""
    shutil.rmtree(directory / FOLDER, ignore_errors=True)


def swapped(segments: list[Any], merged: Any, sources: Sequence[Source]) -> list[Any] | None:
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


def copy(directory: Path, segment_ids: Sequence[str]) -> dict[str, Any] | None:
    """The child's work: the live documents of `segment_ids` (in the index's order) copied into
    a one-segment index in `directory/FOLDER`, by scope (`in_scope_order`); what each source had
    deleted, its base and the numbers of its live documents in the copy, and each field's total
    length. None when one of them is no longer in the index (a merge or a rebuild took it)."""
    from brainiac.search.index_runs import install

    install()  # the same batched sorted runs as the index's own writers
    ix = windex.open_dir(directory)
    reader = ix.reader()
    leaves = [leaf for leaf, _ in reader.leaf_readers()] if reader.doc_count_all() else []
    chosen = [leaf for leaf in leaves if leaf.segment().segment_id() in segment_ids]
    if len(chosen) != len(segment_ids):
        reader.close()
        return None
    folder = directory / FOLDER
    folder.mkdir()
    side = windex.create_in(folder, ix.schema)
    writer = side.writer(limitmb=POOL_MB, compound=False)
    sources = []
    lengths = dict.fromkeys(ix.schema.scorable_names(), 0)
    base = 0
    try:
        keyed = in_scope_order(chosen)
        order = [(i, docnum) for _, i, docnum in keyed]
        numbers = _numbers(order, len(chosen))
        for i, leaf in enumerate(chosen):
            segment = leaf.segment()
            deleted = sorted(segment.deleted_docs()) if segment.has_deletions() else []
            live = segment.doc_count_all() - len(deleted)
            mine = numbers[i]
            # The sources' order kept (a vault without projects): base plus rank, not printed.
            kept = mine == list(range(base, base + live))
            sources.append(
                {"id": segment.segment_id(), "deleted": deleted, "base": base}
                | ({} if kept else {"numbers": mine})
            )
            base += live
            # Whoosh's exact totals (they count deleted documents until a merge), less the
            # deleted documents' stored lengths: the copy's would be summed from the rounded
            # stored lengths of all (whoosh_internals.set_length_totals).
            for field in lengths:
                lengths[field] += leaf.field_length(field) - sum(
                    leaf.doc_field_length(docnum, field) for docnum in deleted
                )
        writer.add_reader(whoosh_internals.ordered_reader(chosen, order))
        faults.point("merge.copied")  # a test's child dies here: the copy half written
        writer.commit(merge=False)
    except BaseException:
        writer.cancel()
        raise
    finally:
        reader.close()
    _write_run_counts(side, folder, scope_runs.runs_of([key for key, _, _ in keyed]))
    return {"sources": sources, "lengths": lengths}


def _write_run_counts(side: Any, folder: Path, runs: Sequence[scope_runs.Run]) -> None:
    """The copy's word counts per scope run beside it (scope_runs.py), moved in with it."""
    reader = side.reader()
    try:
        scope_runs.write(folder, reader, runs)
    finally:
        reader.close()


def in_scope_order(leaves: Sequence[Any]) -> list[tuple[ScopeKey, int, int]]:
    """The live documents of `leaves` as (scope key, leaf, document number), the global ones
    first, then each set of projects' together (by their names, a project's with and without
    the global scope side by side), each set's in the leaves' order (a stable sort: a vault
    without projects keeps its order). A scope key is (the document's projects, whether it is
    outside the global scope). Read from the scope field's postings, not the stored fields."""
    order: list[tuple[ScopeKey, int, int]] = []
    for i, leaf in enumerate(leaves):
        scopes: dict[int, list[str]] = {}
        if _SCOPE_FIELD in leaf.indexed_field_names():
            for term in leaf.lexicon(_SCOPE_FIELD):
                name = term.decode("utf-8") if isinstance(term, bytes) else term
                for docnum in leaf.postings(_SCOPE_FIELD, term).all_ids():
                    scopes.setdefault(docnum, []).append(name)
        for docnum in leaf.all_doc_ids():
            names = scopes.get(docnum, [])
            projects = tuple(sorted(n for n in names if n != GLOBAL))
            order.append(((projects, GLOBAL not in names), i, docnum))
    order.sort(key=lambda item: item[0])  # stable: each scope's documents keep their order
    return order


def _numbers(order: Sequence[tuple[int, int]], count: int) -> list[list[int]]:
    """For each of `count` leaves, the number in the copy of each of its live documents, in
    their order."""
    placed: list[list[tuple[int, int]]] = [[] for _ in range(count)]
    for new, (i, docnum) in enumerate(order):
        placed[i].append((docnum, new))
    return [[new for _, new in sorted(found)] for found in placed]


def main(argv: Sequence[str]) -> int:
    directory, *segment_ids = argv
    in_the_background()
    sys.stdout.write(json.dumps(copy(Path(directory), segment_ids)) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
