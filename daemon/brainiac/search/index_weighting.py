"""The BM25F weighting the index searches with (`SegmentLengthsBM25F`): each field's statistics
over the documents that have it, or over a scope's (scope_statistics.py), each segment's field
lengths read once, and the scorers made kept per searcher."""

from __future__ import annotations

import math
import weakref
from array import array
from typing import TYPE_CHECKING, Any

from whoosh import scoring
from whoosh.scoring import BM25FScorer
from whoosh.util.numeric import byte_to_length

from brainiac.search import whoosh_internals

if TYPE_CHECKING:
    from brainiac.search.scope_statistics import ScopeStatistics

# Scorers SegmentLengthsBM25F keeps for one searcher, the least recently used given up first:
# a few hundred bytes each (a few megabytes in all). A context asks for a few dozen, each
# project of a vault shared by projects for its own (a term's statistics are its scope's), and
# a prompt's common words are asked again by the next prompts: room for every project's recent
# contexts keeps those made.
_SCORERS_KEPT = 8192


class SegmentLengthsBM25F(scoring.BM25F):  # type: ignore[misc]
    """BM25F with each field's statistics over the documents that have it, reading each
    segment's field lengths once, not once per posting it scores.

    A field's statistics: Whoosh divides a field's total length, and the count in each term's
    inverse document frequency, by every document of the index. An event has no title and a
    note no event body, so a note counted in the events' statistics (as if its body were empty)
    and an event in the notes': the more notes, the shorter the average event body and the
    rarer every word, and an event's score depended on how many notes the jobs had written.
    Here a field's average length and its document count are over the documents holding it
    (a non-zero length byte), so the events of a vault score as they would with no note at all.
    The inverse document
    frequency is Whoosh's, log(n / (df + 1)) + 1, with n the documents holding the field: its
    own value plus log(n / all documents), so the searcher's cache of it still serves.

    The lengths: Whoosh looks up a document's field length for every posting it scores: a seek
    and a one-byte read of the segment's length column, a third of a query's time at 10,000
    notes. Segments never change once written (a deletion does not touch lengths), so the column
    is read in one go per segment and field and kept until the segment is merged away. This
    reaches into Whoosh's per-document reader (whoosh_internals.length_bytes); if its names ever
    differ, scoring falls back to Whoosh's own lookup and statistics, slower and over every
    document.
    """

    def __init__(self) -> None:
        super().__init__()
        # (segment, field) -> each document's length, how many documents have the field, the
        # length bytes as stored (0: the document has no such field) and the sum of the lengths
        # of those that have it (every scope's share is of it).
        self._lengths: dict[tuple[str, str], tuple[array[int], int, bytes, int]] = {}
        self.length_of_byte = [byte_to_length(b) or 1 for b in range(256)]
        # The statistics a search scores with when it is scoped to projects (Index._search sets
        # it for the search's duration, under the index's search lock); None: every document's.
        self.scope: ScopeStatistics | None = None
        # (searcher, field, term, query frequency, scope) -> its scorer, for the searcher
        # `_scorers_for` refers to (a weak reference: a searcher closed after a commit goes),
        # the least recently asked first.
        self._scorers: dict[tuple[Any, ...], Any] = {}
        self._scorers_for: weakref.ref[Any] | None = None

    def scorer(self, searcher: Any, fieldname: str, text: str, qf: int = 1) -> Any:
        """The scorer of `text` in `fieldname` for `searcher` (a segment's, or the whole
        index's), made once per open searcher and scope: its statistics (a term's document
        frequency, a field's length over every segment) stay what they are until a commit opens
        a new searcher, and a context's queries ask for the same terms' scorers again (each
        field of each prompt word, in each segment; the words prompts share)."""
        parent = searcher.get_parent()
        if self._scorers_for is None or self._scorers_for() is not parent:
            self._scorers.clear()
            self._scorers_for = weakref.ref(parent)
        key = (searcher, fieldname, text, qf, self.scope)
        scorers = self._scorers
        scorer = scorers.pop(key, None)
        if scorer is None:
            if len(scorers) >= _SCORERS_KEPT:
                del scorers[next(iter(scorers))]  # the least recently used
            scorer = self._made_scorer(searcher, fieldname, text, qf)
            if type(scorer) is BM25FScorer:
                # Whoosh's top-N search drops a term's documents below its bound (max_quality),
                # which Whoosh made of the statistics _made_scorer replaced: a longer average
                # length scores a long document above it.
                whoosh_internals.bound_anew(scorer, searcher.term_info(fieldname, text))
        scorers[key] = scorer  # (a dict keeps its keys in the order they were put in)
        return scorer

    def _made_scorer(self, searcher: Any, fieldname: str, text: str, qf: int) -> Any:
        scorer = super().scorer(searcher, fieldname, text, qf)
        if hasattr(scorer, "dfl"):
            lengths = self.segment_lengths(searcher.reader(), fieldname)
            if lengths is not None:
                scorer.dfl = lengths[0].__getitem__
            parent = searcher.get_parent()
            scope = self.scope
            if scope is not None:
                found = scope.field(self, parent, fieldname)
                if found is not None:
                    holding, avgfl = found
                    df = scope.doc_frequency(parent, fieldname, text)
                    scorer.idf = math.log(holding / (df + 1)) + 1 if holding else 1.0
                    scorer.avgfl = avgfl or 1
                    return scorer
            holding = self._holding(parent.reader(), fieldname)
            everything = parent.doc_count_all()
            if holding and everything:  # a BM25F scorer (it has `dfl`): idf and avgfl too
                scorer.idf += math.log(holding / everything)
                scorer.avgfl = parent.field_length(fieldname) / holding or 1
        return scorer

    def keep_only(self, segment_ids: set[str]) -> None:
        """Forget the lengths of segments a merge removed."""
        for key in [k for k in self._lengths if k[0] not in segment_ids]:
            del self._lengths[key]

    def _holding(self, reader: Any, fieldname: str) -> int:
        """How many documents of `reader` have `fieldname` (deleted ones too, as Whoosh counts
        documents and lengths); 0 when a segment's lengths cannot be read."""
        total = 0
        for leaf, _ in reader.leaf_readers():
            lengths = self.segment_lengths(leaf, fieldname)
            if lengths is None:
                return 0
            total += lengths[1]
        return total

    def segment_lengths(
        self, reader: Any, fieldname: str
    ) -> tuple[array[int], int, bytes, int] | None:
        try:
            key = (reader.segment().segment_id(), fieldname)
            if key not in self._lengths:
                count = reader.doc_count_all()
                raw = whoosh_internals.length_bytes(reader, fieldname).ljust(count, b"\0")
                # A length byte of 0 means "none"; Whoosh's scorer then uses 1. (A map over
                # the table's lookups runs in C: every document of every segment, per field.)
                lengths = array("I", map(self.length_of_byte.__getitem__, raw))
                absent = raw.count(0)
                total = sum(lengths) - absent * self.length_of_byte[0]
                self._lengths[key] = (lengths, len(raw) - absent, raw, total)
            return self._lengths[key]
        except Exception:
            return None
