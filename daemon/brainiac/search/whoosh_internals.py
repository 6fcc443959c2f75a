"""The private names of Whoosh brainiac relies on: every use of them is here, and each is checked
once, when index.py is imported.

Both distributions brainiac installs (whoosh3 pinned, whoosh==2.7.4 the tested fallback) have
every one of them, with the same meaning. A Whoosh that renamed one would otherwise go unnoticed
outside the tests: a replaced method nobody calls any more is silent. So each name is looked
for where Whoosh keeps it, and where Whoosh's own code reads it (`co_names`: the globals and
attributes a function's code reads), before anything is written with it. The other modules
reach them only through the functions at the end of this one (tests/test_structure.py fails
when another module reads a private name of Whoosh's), so what brainiac asks of Whoosh's
insides is this page.

- Needed ones: without them an answer could be wrong or a query could fail, so the import stops
  with one line naming the Whoosh version, the missing name and the fix (`NEEDED`).
- Speed-only ones: without them Whoosh's own, slower code does the same work; the optimisation
  is left off and an error is logged, once, at import (`SPEED_ONLY`, `usable`).

One concept: what brainiac relies on of Whoosh's insides, each use beside the check that it is
still there (the checks at the top, the uses below them): its private names, and what its
writer does with a reader it copies (`ordered_reader`). Split by the part of Whoosh each
reaches into, a change of Whoosh would again be looked for in several places.
"""

from __future__ import annotations

import bisect
import errno
import itertools
import logging
import os
import pickle
from array import array
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from types import CodeType
from typing import Any, BinaryIO, NamedTuple

import whoosh
from whoosh import columns, externalsort, matching, reading, scoring, writing
from whoosh import index as windex
from whoosh.codec import whoosh3
from whoosh.filedb import filetables, structfile

log = logging.getLogger(__name__)


def _names(code: CodeType) -> set[str]:
    """The globals and attributes `code` reads, with those of the code nested in it (a
    comprehension's, before Python 3.12)."""
    read = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, CodeType):
            read |= _names(const)
    return read


def _reads(function: object, *names: str) -> bool:
    """Whether `function`'s own code reads each of `names` (as a global or an attribute)."""
    code = getattr(function, "__code__", None)
    return isinstance(code, CodeType) and set(names) <= _names(code)


def _has(owner: object, *methods: str) -> bool:
    return all(callable(getattr(owner, name, None)) for name in methods)


def _reads_anywhere(cls: type, *names: str) -> bool:
    """Whether the methods of `cls` (and of its bases) read each of `names`."""
    read: set[str] = set()
    for klass in cls.__mro__:
        for value in vars(klass).values():
            code = getattr(value, "__code__", None)
            if isinstance(code, CodeType):
                read |= _names(code)
    return set(names) <= read


# name shown -> (whether Whoosh has it as brainiac uses it, why brainiac needs it)
NEEDED: Mapping[str, tuple[Callable[[], bool], str]] = {
    "SegmentWriter._commit_toc": (
        lambda: (
            _has(writing.SegmentWriter, "_commit_toc")
            and _reads(writing.SegmentWriter.commit, "_commit_toc")
        ),
        "a commit's unused files are deleted after the searcher's swap (index_writes.py, _publish)",
    ),
    "W3PerDocReader's column files": (
        lambda: (
            _reads(reading.SegmentReader.__init__, "_perdoc")
            and _has(whoosh3.W3PerDocReader, "_get_column_file", "has_column", "column_reader")
            and _reads(whoosh3.W3PerDocReader._cached_reader, "has_column", "column_reader")
            and _reads(whoosh3.W3PerDocReader.column_reader, "_colfiles", "_get_column_file")
            and _reads(whoosh3.W3PerDocReader.close, "_colfiles")
            and _has(windex.TOC, "_latest_generation")
        ),
        "a reader beside the daemon opens every file of the commit it reads at once, so that "
        "the daemon's next merge cannot delete one under it (index_open.py, keep_column_files)",
    ),
    "FilterMatcher._ids and ._exclude": (
        lambda: _reads(matching.FilterMatcher.__init__, "_ids", "_exclude"),
        "a filtered query's scores are read from them (index_scoring.py)",
    ),
    "SegmentWriter.add_reader's map of document numbers": (
        lambda: (
            _reads(writing.SegmentWriter.add_reader, "write_per_doc", "add_postings_to_pool")
            and _reads(writing.SegmentWriter.write_per_doc, "has_deletions", "iter_docs")
            and _reads(writing.SegmentWriter.add_postings_to_pool, "iter_postings")
        ),
        "a merge beside the writer numbers its copy's documents by scope, through the order a "
        "reader gives them in (index_merge.py, whoosh_internals.ordered_reader)",
    ),
    "WeightLengthScorer._maxquality and ._score": (
        lambda: (
            _reads(scoring.WeightLengthScorer.max_quality, "_maxquality")
            and _reads(scoring.WeightLengthScorer.setup, "_maxquality", "_score")
            and _has(scoring.BM25FScorer, "_score")
        ),
        "a scorer's bound is made anew from the statistics it scores with, else a top-N search "
        "drops matches that belong in it (index_scoring.py)",
    ),
}

# optimisation -> (whether Whoosh has the names it uses, the names, what is slower without it)
SPEED_ONLY: Mapping[str, tuple[Callable[[], bool], str, str]] = {
    "batched runs": (
        lambda: (
            _has(writing.PostingPool, "_write_run", "_read_run", "_open_run", "_remove_run")
            and _reads(writing.SegmentWriter.__init__, "PostingPool")
            and _reads(externalsort.SortingPool._merge_runs, "_read_run")
        ),
        "writing.PostingPool (its _write_run, _read_run, _open_run, _remove_run, and "
        "SegmentWriter.__init__ making its pool from that name)",
        "a build writes and reads its sorted runs a posting at a time (index_runs.py)",
    ),
    "block reads": (
        lambda: (
            _has(whoosh3.W3LeafMatcher, "_read_ids", "_read_weights", "_next_block", "_goto")
            and _reads_anywhere(
                whoosh3.W3LeafMatcher,
                "_atend",
                "_i",
                "_blocklength",
                "_ids",
                "_weights",
                "_nextoffset",
            )
            and _reads(whoosh3.W3LeafMatcher._next_block, "_goto", "_nextoffset")
            and _reads(whoosh3.W3LeafMatcher.reset, "_goto", "_baseoffset")
        ),
        "W3LeafMatcher's _read_ids, _read_weights, _next_block, _goto, _nextoffset, _baseoffset, "
        "_atend, _i, _blocklength",
        "queries score a posting at a time through Whoosh's matchers (index_scoring.py)",
    ),
    "block decoding": (
        lambda: (
            _reads(whoosh3.W3LeafMatcher._read_ids, "_data", "_read_data", "_byteids")
            and _reads(whoosh3.W3LeafMatcher._read_weights, "_data", "_read_data", "_blocklength")
            and _reads(whoosh3.W3LeafMatcher._read_data, "_data")
        ),
        "W3LeafMatcher's _data, _read_data and _byteids (read by its _read_ids, _read_weights)",
        "a block's document numbers and weights are decoded a posting at a time in Python "
        "(index_scoring.py)",
    ),
    "per-document reads": (
        lambda: (
            _reads(reading.SegmentReader.__init__, "_perdoc")
            and _has(whoosh3.W3PerDocReader, "_cached_reader", "stored_fields")
        ),
        "SegmentReader._perdoc (W3PerDocReader's _cached_reader and stored_fields)",
        "stored fields and field lengths are read through Whoosh's checks (index_open.py, "
        "index_scoring.py)",
    ),
    "stored field reads": (
        lambda: (
            _reads(whoosh3.W3PerDocReader.stored_fields, "_cached_reader")
            and _reads(columns.PickleColumn.Reader.__getitem__, "_child", "loads")
            and _reads(columns.CompressedBytesColumn.Reader.__getitem__, "_decompress")
            and _reads(
                columns.VarBytesColumn.Reader.__getitem__,
                "_lengths",
                "_offsets",
                "_dbfile",
                "_basepos",
            )
            and _reads(structfile.StructFile.__init__, "file")
        ),
        "the stored-fields column's reader (PickleColumn's _child over CompressedBytesColumn's "
        "_decompress over VarBytesColumn's _lengths, _offsets, _basepos, _dbfile) and "
        "StructFile.file",
        "each document's stored fields are read through a seek and a buffered read of the "
        "column file (index_open.py)",
    ),
    "exact length totals": (
        lambda: (
            _reads(whoosh3.W3PerDocWriter.close, "_fieldlengths")
            and _reads(whoosh3.W3PerDocReader.field_length, "_fieldlengths")
        ),
        "W3Segment._fieldlengths (set by W3PerDocWriter.close, read by W3PerDocReader's "
        "field_length)",
        "a merge beside the writer leaves each field's total length as Whoosh's merges do, "
        "summed from the one-byte stored lengths, so BM25F's average lengths (and the order of "
        "a few close results) shift slightly (index_merge.py)",
    ),
    "postings from a term info": (
        lambda: (
            _reads(reading.SegmentReader.postings, "_terms", "_text_to_bytes")
            and _reads(whoosh3.W3TermsReader.matcher, "_codec", "_postfile", "postings_reader")
        ),
        "SegmentReader._terms and _text_to_bytes (W3TermsReader's _codec and _postfile, read by "
        "its matcher)",
        "a scope's count of a word's postings looks the word up again to read them "
        "(index_scoring.py)",
    ),
    "term lookups kept": (
        lambda: (
            _reads(reading.SegmentReader.__init__, "_terms")
            and _reads(whoosh3.W3TermsReader.__init__, "_tindex")
            and all(
                _reads(method, "ranges_for_key")
                for method in (
                    filetables.HashReader.range_for_key,
                    filetables.HashReader.__contains__,
                    filetables.HashReader.all,
                )
            )
        ),
        "SegmentReader._terms (W3TermsReader._tindex, whose lookups all go through ranges_for_key)",
        "a term is looked up in a segment's on-disk table each time a search asks (index_open.py)",
    ),
    "term infos kept": (
        lambda: (
            _reads(reading.SegmentReader.__init__, "_terms")
            and _reads(reading.SegmentReader.term_info, "_terms", "term_info")
            and _reads(reading.SegmentReader.postings, "_terms", "matcher")
            and _reads(whoosh3.W3TermsReader.matcher, "term_info")
            and _reads(whoosh3.W3TermsReader.term_info, "from_bytes", "_tindex")
        ),
        "SegmentReader._terms (W3TermsReader.term_info, which its matcher and the reader's "
        "term_info call)",
        "a term's information (its postings' place, frequency, lengths) is read from a "
        "segment's file and decoded each time a search asks (index_open.py, index_scoring.py)",
    ),
}


def _present(check: Callable[[], bool]) -> bool:
    try:
        return check()
    except AttributeError:  # the class or module that holds the name is gone too
        return False


def check() -> frozenset[str]:
    """Raise ImportError for a missing needed name; return the speed-only optimisations this
    Whoosh allows, having logged an error for each it does not."""
    version = whoosh.versionstring()
    for name, (present, why) in NEEDED.items():
        if not _present(present):
            raise ImportError(
                f"brainiac: Whoosh {version} has no {name}, which brainiac needs ({why}); "
                "install the Whoosh pyproject.toml names (whoosh3==3.54.0, or whoosh==2.7.4)"
            )
    usable = set()
    for what, (present, names, cost) in SPEED_ONLY.items():
        if _present(present):
            usable.add(what)
        else:
            log.error(
                "Whoosh %s has no %s: %s are off, so %s; install the Whoosh pyproject.toml "
                "names (whoosh3==3.54.0, or whoosh==2.7.4)",
                version,
                names,
                what,
                cost,
            )
    return frozenset(usable)


USABLE = check()  # once per process, before the index writes or reads anything with them


# -- the uses ------------------------------------------------------------------------------------
def pool_with_runs(
    name: str,
    write_run: Callable[[BinaryIO, Iterable[Any]], None],
    read_run: Callable[[BinaryIO], Iterator[Any]],
) -> Any:
    """Whoosh's posting pool with its sorted runs written by `write_run(file, postings)` (which
    closes the file) and read back by `read_run(file)`; each run is removed once read, as
    Whoosh's are. Over a stand-in base when Whoosh has no `PostingPool` (then `use_pool` does
    nothing)."""
    base: Any = getattr(writing, "PostingPool", object)

    def _write_run(self: Any, f: BinaryIO, items: Iterable[Any]) -> None:
        write_run(f, items)

    def _read_run(self: Any, path: str) -> Iterator[Any]:
        f = self._open_run(path)
        try:
            yield from read_run(f)
        finally:
            f.close()
            self._remove_run(path)

    return type(name, (base,), {"_write_run": _write_run, "_read_run": _read_run})


def use_pool(pool: Any) -> None:
    """Make every Whoosh writer of this process (and of the processes it forks) gather its
    postings in `pool`: `SegmentWriter` makes its pool from the module-level name (its
    `poolclass` argument is accepted and ignored), when Whoosh has the names it uses."""
    if "batched runs" in USABLE:
        writing.PostingPool = pool


def commit_with_toc(
    writer: Any, write_toc: Callable[[list[Any]], None], merge: bool, optimize: bool
) -> None:
    """`writer.commit(merge, optimize)` with the table of contents written by
    `write_toc(segments)` instead of Whoosh's `_commit_toc`, which also deletes the files the
    commit left unused."""
    # The instance's own, for this one commit, and taken away after it: left in place, it would
    # hold the writer in a reference cycle, and a two-process writer's queue threads with it.
    writer._commit_toc = write_toc
    try:
        writer.commit(merge=merge, optimize=optimize)
    finally:
        vars(writer).pop("_commit_toc", None)


def stored_fields_reader(leaf: Any) -> Callable[[int], dict[str, Any]]:
    """One segment's `stored_fields` read from its per-document reader, past the schema check
    of Whoosh's method (which stays the reader without it); each document's bytes read at their
    offset in the column file (`_stored_at_offsets`) where Whoosh keeps them as it does here."""
    perdoc = getattr(leaf, "_perdoc", None)
    plain = getattr(perdoc, "stored_fields", None)
    if plain is None:
        return leaf.stored_fields  # type: ignore[no-any-return]
    direct = _stored_at_offsets(perdoc) if "stored field reads" in USABLE else None
    return direct if direct is not None else plain


def _stored_at_offsets(perdoc: Any) -> Callable[[int], dict[str, Any]] | None:
    """The stored fields of a segment's document as Whoosh's column reader gives them (the same
    bytes, decompressed and unpickled the same way), each read with one positioned read of the
    column file: Whoosh's seeks its buffered file and reads a buffer's worth around them, two
    calls into the file system and a copy per document, for the few hundred a context reads.
    A positioned read leaves the file's position alone, so it is also safe beside another
    reader of the same file. None where the column is kept otherwise (another column type, a
    file with no descriptor, a system without positioned reads): Whoosh's reader then."""
    pread = getattr(os, "pread", None)  # POSIX only
    if pread is None:
        return None
    reader = perdoc._cached_reader("_stored", whoosh3.STORED_COLUMN)
    child: Any = getattr(reader, "_child", None)
    if type(reader) is not columns.PickleColumn.Reader:
        return None
    if type(child) is not columns.CompressedBytesColumn.Reader:
        return None
    raw: Any = getattr(child._dbfile, "file", None)
    try:
        raw.fileno()
    except (AttributeError, OSError, ValueError):
        return None
    # The file object's own fileno at each read, not its number now: once the searcher closes
    # it, a read fails (ValueError) rather than reading whatever file took the number.
    fileno = raw.fileno
    lengths, offsets, base = child._lengths, child._offsets, child._basepos
    decompress, loads = child._decompress, pickle.loads

    def stored_fields(docnum: int) -> dict[str, Any]:
        length = lengths[docnum]
        if not length:
            return {}
        data = decompress(pread(fileno(), length, base + offsets[docnum]))
        fields: dict[str, Any] = loads(data) if data else {}
        return fields

    return stored_fields


def length_bytes(leaf: Any, fieldname: str) -> bytes:
    """One segment's stored length byte of `fieldname` for each document, in one read (b"" when
    the segment has no such column); any exception when Whoosh keeps them otherwise."""
    column = leaf._perdoc._cached_reader(f"_{fieldname}_len", whoosh3.LENGTHS_COLUMN)
    if not column:
        return b""
    raw: bytes = column._dbfile.get(column._basepos, column._count)
    return raw


def bound_anew(scorer: Any, info: Any) -> None:
    """Make a length-weighted scorer's `max_quality()` its score at the term's largest weight
    and shortest length (`info`, its term info) as it scores now: Whoosh computes it once, when
    the scorer is made, with the statistics it was made with."""
    scorer._maxquality = scorer._score(info.max_weight(), info.min_length())


def filter_kept(matcher: Any) -> tuple[Any, bool]:
    """A `FilterMatcher`'s documents, and whether they are the ones it leaves out."""
    return matcher._ids, matcher._exclude


_BLOCK_NAMES = (
    "_atend",
    "_i",
    "_blocklength",
    "_read_ids",
    "_read_weights",
    "_next_block",
    "_goto",
    "_nextoffset",
    "_baseoffset",
    "block_max_id",
)
_BLOCK_READING = "block reads" in USABLE


def block_readable(matcher: Any) -> bool:
    """Whether `posting_blocks` can read `matcher` (a leaf matcher of Whoosh's own codec, and
    a Whoosh that has the names it reads)."""
    return _BLOCK_READING and all(hasattr(matcher, name) for name in _BLOCK_NAMES)


Block = tuple[Sequence[int], Sequence[float], int, int]


class Passed(NamedTuple):
    """A posting block passed over by its header, its documents never decoded: they are
    numbered above `after` and up to `last`, and it starts at `at` in the postings file
    (`read_passed` reads it)."""

    after: int
    last: int
    at: int


def none_within(ordered: Sequence[int], after: int, last: int) -> bool:
    """Whether none of `ordered` (document numbers in order) is above `after` and up to `last`:
    a posting block spanning those numbers (by its header) holds none of them."""
    i = bisect.bisect_right(ordered, after)
    return i == len(ordered) or ordered[i] > last


def posting_blocks(
    matcher: Any,
    keep: AbstractSet[int] | None = None,
    ordered: Sequence[int] | None = None,
    passed: list[Passed] | None = None,
    after: int = -1,
    places: list[Passed | None] | None = None,
) -> Iterator[Block]:
    """A leaf matcher's postings from where it stands, a block at a time: (document numbers,
    weights, first, end), the block's postings being those from `first` to `end`. With `keep`,
    a block holding none of its documents is passed over, its weights never decoded; with
    `ordered` (`keep`'s documents in order) too, a block whose numbers (above the one before's
    last, up to its own last, both in the block headers) hold none of them is passed over
    without decoding its document numbers either, and appended to `passed` when given (then
    the matcher is as made, at its first block, or in a block it decoded). `after`: a number
    below the postings' first (the term's smallest, less one). `places`: where each block
    yielded lies, as a `Passed` that `read_passed` reads again (None for a block the matcher
    had entered before: it may not be read whole), appended before the block is yielded. The
    matcher is consumed."""
    m = matcher
    decode = _DECODING
    # The numbers of a block's documents are above the last of the block before it; a block
    # not decoded yet was entered at its start (a matcher moves within a block by its ids).
    at: int | None = m._baseoffset if m._ids is None else None  # where the block starts
    while not m._atend and m._i < m._blocklength:
        last = m.block_max_id()
        if (
            ordered is not None
            and m._ids is None
            and (at is not None or passed is None)
            and none_within(ordered, after, last)
        ):
            if passed is not None and at is not None:
                passed.append(Passed(after, last, at))
            after, at = last, m._nextoffset
            m._i = m._blocklength
            m._next_block()
            continue
        if m._ids is None:
            _read_ids(m) if decode else m._read_ids()
        if keep is None or not keep.isdisjoint(m._ids[m._i : m._blocklength]):
            if m._weights is None:
                _read_weights(m) if decode else m._read_weights()
            if places is not None:
                places.append(Passed(after, last, at) if at is not None else None)
            yield m._ids, m._weights, m._i, m._blocklength
        after, at = last, m._nextoffset
        m._i = m._blocklength
        m._next_block()


def read_passed(matcher: Any, block: Passed) -> Block:
    """The postings of a block `posting_blocks` passed over in `matcher` (consumed by it)."""
    m = matcher
    m._goto(block.at)
    if _DECODING:
        _read_ids(m)
        _read_weights(m)
    else:
        m._read_ids()
        m._read_weights()
    return m._ids, m._weights, 0, m._blocklength


def postings_from_info(leaf: Any, fieldname: str, text: Any, info: Any) -> Any:
    """Segment reader `leaf`'s postings of `text` in `fieldname`, whose term info `info` the
    caller looked up there: a leaf matcher, as `leaf.postings` makes it but for the filter of
    the segment's deleted documents (they stay in the postings: the caller leaves them out),
    without looking the term up again. `leaf.postings` itself where Whoosh keeps them
    otherwise."""
    terms: Any = getattr(leaf, "_terms", None)
    if not _POSTINGS_FROM_INFO or type(terms) is not whoosh3.W3TermsReader:
        return leaf.postings(fieldname, text)
    tbytes = leaf._text_to_bytes(fieldname, text)
    format_ = leaf.schema[fieldname].format
    return terms._codec.postings_reader(terms._postfile, info, format_, term=(fieldname, tbytes))


_POSTINGS_FROM_INFO = "postings from a term info" in USABLE


def count_postings(
    matcher: Any, docs: AbstractSet[int], ordered: Sequence[int], after: int = -1
) -> int:
    """How many of a leaf matcher's postings from where it stands are of `docs` (`ordered`:
    the same numbers in order; `after` as in `posting_blocks`), the weights never decoded: a
    block whose numbers (above the one before's last, up to its own last, by the headers) hold
    none of `docs` is passed over, and one whose every number is of `docs` counted by its
    length, neither decoded; the others' document numbers are decoded and looked up. The
    matcher is consumed."""
    m = matcher
    decode = _DECODING
    count = 0
    while not m._atend and m._i < m._blocklength:
        last = m.block_max_id()
        if m._ids is None:  # entered at its start: its numbers are above `after`
            within = bisect.bisect_right(ordered, last) - bisect.bisect_right(ordered, after)
            if within == last - after:
                count += m._blocklength
            if within in (0, last - after):
                after = last
                m._i = m._blocklength
                m._next_block()
                continue
            _read_ids(m) if decode else m._read_ids()
        count += sum(map(docs.__contains__, m._ids[m._i : m._blocklength]))
        after = last
        m._i = m._blocklength
        m._next_block()
    return count


def all_numbers(matcher: Any) -> array[int]:
    """Every document number of a leaf matcher's postings from where it stands, the weights
    never decoded where `posting_blocks` can read it. The matcher is consumed."""
    if not block_readable(matcher):
        return array("I", matcher.all_ids())
    m = matcher
    decode = _DECODING
    numbers = array("I")
    while not m._atend and m._i < m._blocklength:
        if m._ids is None:
            _read_ids(m) if decode else m._read_ids()
        numbers.extend(m._ids[m._i : m._blocklength])
        m._i = m._blocklength
        m._next_block()
    return numbers


_DECODING = "block decoding" in USABLE


def _read_ids(m: Any) -> None:
    """W3LeafMatcher._read_ids, the running sum of the stored gaps taken in C (its own sums
    them in a Python generator): the same document numbers."""
    if m._data is None:
        m._read_data()
    ids = m._data[0]
    m._ids = ids if m._byteids else tuple(itertools.accumulate(ids))


def _read_weights(m: Any) -> None:
    """W3LeafMatcher._read_weights, a block of equal weights (stored once, or not at all for
    1.0) repeated in C (its own fills the array from a Python generator): the same floats."""
    if m._data is None:
        m._read_data()
    weights = m._data[1]
    if weights is None:
        weights = array("f", (1.0,)) * m._blocklength
    elif isinstance(weights, float):
        weights = array("f", (weights,)) * m._blocklength
    m._weights = weights


# Lookups a segment's term table keeps before it starts afresh: each is a key of a few dozen
# bytes and its place in the file, so at most a megabyte a segment.
_LOOKUPS_KEPT = 4096


def keep_term_lookups(leaf: Any) -> None:
    """Make one segment reader answer a term it was asked about before without reading its
    on-disk term table again. Building a query's matchers looks each term up four times (is it
    there, its postings, its frequency for the scorer, its size for the matcher tree), each a
    hash, seeks and reads in Python; a segment never changes once written, so its answer
    stays right for as long as the reader lives; so do its terms' decoded information
    (`_keep_term_infos`). Nothing is done when Whoosh keeps the table otherwise."""
    terms = getattr(leaf, "_terms", None)
    if terms is not None:
        _keep_term_infos(terms)
    if "term lookups kept" not in USABLE:
        return
    table = getattr(terms, "_tindex", None)
    if table is None or "ranges_for_key" in vars(table):
        return
    lookup = table.ranges_for_key
    found: dict[bytes, tuple[tuple[int, int], ...]] = {}

    def ranges_for_key(key: bytes) -> Iterator[tuple[int, int]]:
        ranges = found.get(key)
        if ranges is None:
            ranges = tuple(lookup(key))
            if len(found) >= _LOOKUPS_KEPT:
                found.clear()
            found[key] = ranges
        return iter(ranges)

    # An instance attribute: the table's own range_for_key, __contains__ and all (its
    # __getitem__) call self.ranges_for_key, and so find this one.
    table.ranges_for_key = ranges_for_key


def _keep_term_infos(terms: Any) -> None:
    """Make a segment's terms reader decode a term's information once: a scoped search asks it
    of each term in each segment up to four times (its matcher, its scorer, the scorer's bound,
    the blocks a scope passes over), each a read of the term table's file and a decoding.

    A term info is only read once made (the matcher takes its postings' place; an inlined
    term's postings are lists that a ListMatcher reads and, for a value that is a list, replaces
    by the same value combined), so one object can serve every matcher of the segment."""
    if "term infos kept" not in USABLE or "term_info" in getattr(terms, "__dict__", {}):
        return
    decode = terms.term_info
    found: dict[tuple[str, bytes], Any] = {}

    def term_info_or_none(fieldname: str, tbytes: bytes) -> Any | None:
        key = (fieldname, tbytes)
        info = found.get(key)
        if info is None:
            try:
                info = decode(fieldname, tbytes)
            except reading.TermNotFound:
                info = _MISSING  # a segment's terms never change: missing stays missing
            if len(found) >= _LOOKUPS_KEPT:
                found.clear()
            found[key] = info
        return None if info is _MISSING else info

    def term_info(fieldname: str, tbytes: bytes) -> Any:
        info = term_info_or_none(fieldname, tbytes)
        if info is None:
            raise reading.TermNotFound(f"No term {fieldname}:{tbytes!r}")
        return info

    # Instance attributes: the reader's term_info and the terms reader's own matcher call
    # self.term_info, and so find this one; `term_info_or_none` finds the other.
    terms.term_info = term_info
    terms.term_info_or_none = term_info_or_none


_MISSING = object()


def term_info_or_none(leaf: Any, fieldname: str, text: Any) -> Any | None:
    """Segment reader `leaf`'s term info of `text` in `fieldname`, None when the segment has no
    such term: a scope's count asks it of every word of a prompt in every field, and most are
    in none of the keyword fields (a missing term is an exception raised through three frames
    otherwise, and looked up again the next time)."""
    lookup = getattr(getattr(leaf, "_terms", None), "term_info_or_none", None)
    if lookup is not None and type(text) is bytes:
        # The term as the segment holds it (a matcher's `term()`): looked up as it is.
        return lookup(fieldname, text)
    if lookup is None or fieldname not in leaf.schema:
        try:
            return leaf.term_info(fieldname, text)
        except reading.TermNotFound:
            return None
    return lookup(fieldname, leaf._text_to_bytes(fieldname, text))


def set_length_totals(segment: Any, totals: Mapping[str, int]) -> None:
    """Give a segment written by copying others their fields' exact total lengths: Whoosh
    sums a copy's from the documents' one-byte (rounded) lengths, and BM25F divides these totals
    into its average lengths. Nothing is done when Whoosh keeps them otherwise."""
    if "exact length totals" in USABLE and isinstance(
        getattr(segment, "_fieldlengths", None), dict
    ):
        segment._fieldlengths = dict(totals)


def latest_generation(directory: str) -> int:
    """The generation of the newest table of contents in the index folder `directory` (-1: none):
    a commit writes the next one before it deletes the files the previous one named."""
    from whoosh.filedb.filestore import FileStorage

    return int(windex.TOC._latest_generation(FileStorage(directory), windex._DEF_INDEX_NAME))


def keep_column_files(leaf: Any, names: Collection[str]) -> None:
    """Open now each per-document column file of one segment reader (`names`: the index
    folder's file names, listed after the reader opened) and make the reader take its columns
    from these open files only.

    Whoosh opens a column file at its first read, and asks whether it exists first: a reader in
    another process than the writer (a CLI search beside the daemon) whose segment the daemon
    merged away meanwhile found the stored fields' file deleted, and failed ('NoneType' object
    is not subscriptable), or read no field lengths at all and scored with wrong ones. An open
    file stays readable once deleted (POSIX), so the reader keeps reading the commit it opened.
    FileNotFoundError when the segment's files are gone already: a commit since the reader read
    the table of contents, whose newest one the caller opens instead."""
    segment = leaf.segment()
    if segment.is_compound():
        return  # its one file was opened with the reader
    prefix, suffix = segment.segment_id() + ".", whoosh3.W3Codec.COLUMN_EXT
    perdoc = leaf._perdoc
    kept = [
        name[len(prefix) : -len(suffix)]
        for name in names
        if name.startswith(prefix) and name.endswith(suffix)
    ]
    if "_stored" not in kept:  # every segment has one, even with no document stored
        raise FileNotFoundError(
            errno.ENOENT, "the segment's files are gone", f"{prefix}_stored{suffix}"
        )
    for fieldname in kept:
        if fieldname not in perdoc._colfiles:
            perdoc._colfiles[fieldname] = perdoc._get_column_file(fieldname)
    # An instance attribute: the reader's _cached_reader asks self.has_column, then
    # column_reader takes the file opened here.
    perdoc.has_column = frozenset(kept).__contains__


def ordered_reader(leaves: Sequence[Any], order: Sequence[tuple[int, int]]) -> Any:
    """One reader of the live documents of `leaves` (segment readers) for a writer's
    `add_reader`, which numbers them in `order` ((leaf, document number) pairs, each live one
    once): Whoosh's writer copies a reader's documents in the order of its `iter_docs` and, for
    a reader with deletions, numbers the postings through the map it makes of them (`docmap`).
    This reader says it has deletions, so the map is made, and gives the leaves' documents one
    range of numbers (each leaf's after the one before)."""
    return _OrderedReader(leaves, order)


class _OrderedReader:
    def __init__(self, leaves: Sequence[Any], order: Sequence[tuple[int, int]]) -> None:
        self._leaves = list(leaves)
        self._order = order
        self._offsets = list(itertools.accumulate([0, *(r.doc_count_all() for r in leaves)]))

    def where(self, docnum: int) -> tuple[int, int]:
        """The leaf of `docnum` (its index) and the number it has there."""
        i = bisect.bisect_right(self._offsets, docnum) - 1
        return i, docnum - self._offsets[i]

    def _local(self, docnum: int) -> tuple[Any, int]:
        i, local = self.where(docnum)
        return self._leaves[i], local

    def indexed_field_names(self) -> set[str]:
        return {name for leaf in self._leaves for name in leaf.indexed_field_names()}

    def has_deletions(self) -> bool:
        return True  # so that the writer numbers the postings by the order of iter_docs

    def iter_docs(self) -> Iterator[tuple[int, dict[str, Any]]]:
        for i, docnum in self._order:
            yield self._offsets[i] + docnum, self._leaves[i].stored_fields(docnum)

    def doc_field_length(self, docnum: int, fieldname: str, default: Any = 0) -> Any:
        leaf, local = self._local(docnum)
        return leaf.doc_field_length(local, fieldname, default)

    def has_vector(self, docnum: int, fieldname: str) -> bool:
        leaf, local = self._local(docnum)
        return bool(leaf.has_vector(local, fieldname))

    def vector(self, docnum: int, fieldname: str, format_: Any = None) -> Any:
        leaf, local = self._local(docnum)
        return leaf.vector(local, fieldname, format_)

    def has_column(self, fieldname: str) -> bool:
        return any(leaf.has_column(fieldname) for leaf in self._leaves)

    def column_reader(self, fieldname: str, column: Any) -> Any:
        parts = []
        for leaf in self._leaves:
            part = leaf.column_reader(fieldname, column)
            if isinstance(part, columns.TranslatingColumnReader):
                part = part.raw_column()  # as the writer does with a reader's own column
            parts.append(part)
        return _OrderedColumn(self, parts)

    def iter_postings(self) -> Iterator[tuple[str, Any, int, float, Any]]:
        for leaf, offset in zip(self._leaves, self._offsets, strict=False):
            for fieldname, text, docnum, weight, value in leaf.iter_postings():
                yield fieldname, text, offset + docnum, weight, value


class _OrderedColumn:
    """A column of `_OrderedReader`'s leaves, by its document numbers."""

    def __init__(self, reader: _OrderedReader, parts: list[Any]) -> None:
        self._reader = reader
        self._parts = parts

    def __getitem__(self, docnum: int) -> Any:
        i, local = self._reader.where(docnum)
        return self._parts[i][local]
