"""The private names of Whoosh the index relies on, checked once, when index.py is imported.

Both distributions brainiac installs (whoosh3 pinned, whoosh==2.7.4 the tested fallback) have
every one of them, with the same meaning. A Whoosh that renamed one would otherwise go unnoticed
outside the tests: a replaced method nobody calls any more is silent. So each name is looked
for where Whoosh keeps it, and where Whoosh's own code reads it (`co_names`: the globals and
attributes a function's code reads), before anything is written with it.

- Needed ones: without them an answer could be wrong or a query could fail, so the import stops
  with one line naming the Whoosh version, the missing name and the fix (`NEEDED`).
- Speed-only ones: without them Whoosh's own, slower code does the same work; the optimisation
  is left off and an error is logged, once, at import (`SPEED_ONLY`, `usable`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from types import CodeType

import whoosh
from whoosh import externalsort, matching, reading, writing
from whoosh.codec import whoosh3

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
        "a commit's unused files are deleted after the searcher's swap (index.py, _publish)",
    ),
    "FilterMatcher._ids and ._exclude": (
        lambda: _reads(matching.FilterMatcher.__init__, "_ids", "_exclude"),
        "a filtered query's scores are read from them (index_scoring.py)",
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
            _has(whoosh3.W3LeafMatcher, "_read_ids", "_read_weights", "_next_block")
            and _reads_anywhere(
                whoosh3.W3LeafMatcher, "_atend", "_i", "_blocklength", "_ids", "_weights"
            )
        ),
        "W3LeafMatcher's _read_ids, _read_weights, _next_block, _atend, _i, _blocklength",
        "queries score a posting at a time through Whoosh's matchers (index_scoring.py)",
    ),
    "per-document reads": (
        lambda: (
            _reads(reading.SegmentReader.__init__, "_perdoc")
            and _has(whoosh3.W3PerDocReader, "_cached_reader", "stored_fields")
        ),
        "SegmentReader._perdoc (W3PerDocReader's _cached_reader and stored_fields)",
        "stored fields and field lengths are read through Whoosh's checks (index.py, "
        "index_scoring.py)",
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
