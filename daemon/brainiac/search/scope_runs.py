"""How many documents of each scope's run hold each word, in a segment merged by scope.

A search in a project ranks its memories on the statistics of its own scope (scope_statistics.py,
`ScopeStatistics`): each word of the prompt, and each word feedback may add, is counted among
the scope's documents. index_merge.py's copy holds each set of projects' documents in one run
of numbers, so a word found in one run only is counted by its term info (its first and last
numbers, its count); a word found in several has its postings counted, a few dozen words per
context, which is most of what a scoped context costs over the same memories in a vault of
their own. The merge child reads every posting anyway: it writes beside the segment, for each
word whose postings span two runs or more, how many of each run's documents hold it
(`write`). A scope's count is then a sum of the runs it covers (`RunCounts.count`), less the
documents deleted since the merge that held the word (counted from the postings: a deletion
only marks a document, and they are few until the next merge).

The file is the segment's (`<segment id>.scopes`, a name Whoosh's clean-up deletes with the
segment): a line of JSON (format, byte order, the segment's id and document count, the runs),
then four arrays: the postings offset of each such word (its key: unique in a segment, and in
its term info), sorted; where each word's pairs start; each pair's run and count.
"""

from __future__ import annotations

import bisect
import json
import logging
import os
import sys
from array import array
from collections.abc import Hashable, Iterable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from brainiac.search import whoosh_internals

log = logging.getLogger(__name__)

SUFFIX = ".scopes"
_FORMAT = "brainiac scope runs 1"
# The field whose terms say a document's scopes: its runs are the scopes, not counted in them.
_SCOPE_FIELD = "projects"


@dataclass(frozen=True)
class Run:
    """Documents `start` to `end` (not included) of a merged segment: one set of projects'."""

    start: int
    end: int


def runs_of(keys: Sequence[Hashable]) -> list[Run]:
    """The runs of a copy whose documents, in order, have the scope keys `keys` (index_merge's
    `ScopeKey`, equal keys side by side)."""
    runs: list[Run] = []
    start = 0
    for i in range(1, len(keys) + 1):
        if i == len(keys) or keys[i] != keys[start]:
            runs.append(Run(start, i))
            start = i
    return runs


def path_for(folder: Path, segment_id: str) -> Path:
    return folder / f"{segment_id}{SUFFIX}"


def write(folder: Path, leaf: Any, runs: Sequence[Run]) -> None:
    """Write segment reader `leaf`'s counts per run into `folder`, for a segment of `runs`
    (with no deleted document: a fresh copy); nothing for a segment of fewer than two runs
    (every word is then in one run) or a Whoosh that does not tell where postings are."""
    if len(runs) < 2:
        return None
    starts = [run.start for run in runs]
    keyed: list[tuple[int, list[tuple[int, int]]]] = []
    for fieldname in sorted(leaf.indexed_field_names()):
        if fieldname == _SCOPE_FIELD:
            continue
        for tbytes, info in leaf.iter_field(fieldname):
            first = bisect.bisect_right(starts, info.min_id()) - 1
            last = bisect.bisect_right(starts, info.max_id()) - 1
            if first == last:
                continue
            offset = postings_offset(info)
            if offset is None:  # postings kept in the term info: no key to find them by
                return None
            postings = whoosh_internals.postings_from_info(leaf, fieldname, tbytes, info)
            numbers = whoosh_internals.all_numbers(postings)
            keyed.append((offset, _per_run(numbers, runs)))
    keyed.sort(key=lambda item: item[0])
    offsets = array("q", (offset for offset, _ in keyed))
    begins = array("I", [0])
    pair_runs = array("I")
    counts = array("I")
    for _, pairs in keyed:
        for run, count in pairs:
            pair_runs.append(run)
            counts.append(count)
        begins.append(len(counts))
    header = {
        "format": _FORMAT,
        "byteorder": sys.byteorder,
        "segment": leaf.segment().segment_id(),
        "documents": leaf.doc_count_all(),
        "runs": [[r.start, r.end] for r in runs],
        "words": len(offsets),
        "pairs": len(counts),
    }
    with open(path_for(folder, leaf.segment().segment_id()), "wb") as f:
        f.write(json.dumps(header).encode() + b"\n")
        for table in (offsets, begins, pair_runs, counts):
            table.tofile(f)
        f.flush()
        os.fsync(f.fileno())


def postings_offset(info: Any) -> int | None:
    """Where the postings of term info `info` start in its segment's postings file; None when
    they are kept in the term info itself (a word of one document) or it does not say."""
    try:
        return None if info.is_inlined() else int(info.extent()[0])
    except (AttributeError, TypeError):
        return None


def _per_run(numbers: Sequence[int], runs: Sequence[Run]) -> list[tuple[int, int]]:
    """(run, how many of `numbers`, in order, lie in it) for each run holding some."""
    pairs = []
    at = 0
    for r, run in enumerate(runs):
        end = bisect.bisect_left(numbers, run.end, at)
        if end > at:
            pairs.append((r, end - at))
        at = end
        if at == len(numbers):
            break
    return pairs


class RunCounts:
    """One merged segment's counts per run, as `write` left them."""

    def __init__(
        self,
        runs: Sequence[Run],
        offsets: array[int],
        begins: array[int],
        pair_runs: array[int],
        counts: array[int],
    ) -> None:
        self.runs = tuple(runs)
        self._starts = [run.start for run in runs]
        self._offsets = offsets
        self._begins = begins
        self._pair_runs = pair_runs
        self._counts = counts

    @classmethod
    def read(cls, path: Path, segment_id: str, documents: int) -> RunCounts | None:
        """The counts in `path` for segment `segment_id` of `documents` documents; None when
        there is no such file, or it is of another segment, format or machine, or cut short
        (the scoped counts are then taken from the postings: slower, the same)."""
        try:
            with open(path, "rb") as f:
                header = json.loads(f.readline())
                if (
                    header.get("format") != _FORMAT
                    or header.get("byteorder") != sys.byteorder
                    or header.get("segment") != segment_id
                    or header.get("documents") != documents
                ):
                    return None
                tables = []
                for code, length in (
                    ("q", header["words"]),
                    ("I", header["words"] + 1),
                    ("I", header["pairs"]),
                    ("I", header["pairs"]),
                ):
                    table = array(code)
                    table.fromfile(f, length)
                    tables.append(table)
            runs = [Run(int(start), int(end)) for start, end in header["runs"]]
        except FileNotFoundError:
            return None
        except (OSError, ValueError, EOFError, KeyError, TypeError) as exc:
            log.warning("%s: unreadable (%s); scoped word counts read the postings", path, exc)
            return None
        return cls(runs, *tables)

    def run_at(self, docnum: int) -> int:
        return bisect.bisect_right(self._starts, docnum) - 1

    def count(self, info: Any, inside: AbstractSet[int]) -> int | None:
        """How many documents of the runs `inside` (their indexes) hold the word of term info
        `info`, deleted ones included; None when the table does not say (a term info without
        its numbers or its place)."""
        try:
            first, last = int(info.min_id()), int(info.max_id())
        except Exception:
            return None
        run = self.run_at(first)
        if run == self.run_at(last):
            return int(info.doc_frequency()) if run in inside else 0
        offset = postings_offset(info)
        if offset is None:
            return None
        i = bisect.bisect_left(self._offsets, offset)
        if i == len(self._offsets) or self._offsets[i] != offset:
            return None
        total = 0
        for j in range(self._begins[i], self._begins[i + 1]):
            if self._pair_runs[j] in inside:
                total += self._counts[j]
        return total


@dataclass(frozen=True)
class ScopeRuns:
    """A scope's part of one merged segment: the runs it covers (their indexes) and the
    documents deleted in them, in order."""

    table: RunCounts
    inside: frozenset[int]
    deleted: frozenset[int]


def scope_runs(
    table: RunCounts, ordered: Sequence[int], deleted: Iterable[int]
) -> ScopeRuns | None:
    """The runs of `table` a scope whose live documents in the segment are `ordered` (in order)
    covers, the segment's deleted documents being `deleted`: each run's live documents all in
    the scope or none of them. None when a run is only partly in it (the scope is not a union
    of runs: its counts are then taken from the postings)."""
    gone = sorted(deleted)
    inside: set[int] = set()
    deleted_inside: list[int] = []
    for r, run in enumerate(table.runs):
        mine = bisect.bisect_left(ordered, run.end) - bisect.bisect_left(ordered, run.start)
        if not mine:
            continue
        low, high = bisect.bisect_left(gone, run.start), bisect.bisect_left(gone, run.end)
        if mine + (high - low) != run.end - run.start:
            return None
        inside.add(r)
        deleted_inside.extend(gone[low:high])
    return ScopeRuns(table, frozenset(inside), frozenset(deleted_inside))


class SegmentRunCounts:
    """Each segment's `RunCounts`, read from the index folder once and kept for the index's
    life (a segment's postings never change once written); None kept for a segment without."""

    def __init__(self, directory: Path) -> None:
        self._directory = directory
        self._tables: dict[str, RunCounts | None] = {}

    def of(self, leaf: Any) -> RunCounts | None:
        segment_id = leaf.segment().segment_id()
        if segment_id not in self._tables:
            path = path_for(self._directory, segment_id)
            self._tables[segment_id] = RunCounts.read(path, segment_id, leaf.doc_count_all())
        return self._tables[segment_id]

    def keep_only(self, segment_ids: set[str]) -> None:
        """Forget the tables of segments a merge removed."""
        for segment_id in [s for s in self._tables if s not in segment_ids]:
            del self._tables[segment_id]
