"""A scope's documents in one segment of a searcher: by the segment's own numbers (`in_leaf`),
in order (`in_order`), and the number below a word's first posting there (`before_first`),
which a scoped search and a scope's word counts both start from when they pass over the
posting blocks that hold none of the scope's documents."""

from __future__ import annotations

import functools
from collections.abc import Collection
from collections.abc import Set as AbstractSet
from typing import Any


def in_leaf(
    allow: Collection[int] | None, offset: int, count: int, only: bool
) -> AbstractSet[int] | None:
    """The documents of `allow` (the searcher's numbers) in the leaf at `offset` holding
    `count`, by the leaf's own numbers; None: every one."""
    if allow is None:
        return None
    if only and not offset:
        # By type first: an ABC isinstance check is slow, and this runs for every term of a search.
        if type(allow) is frozenset or isinstance(allow, AbstractSet):
            return allow
        return frozenset(allow)
    if isinstance(allow, frozenset):
        return _leaf_part(allow, offset, count)
    return {d - offset for d in allow if offset <= d < offset + count}


@functools.lru_cache(maxsize=64)
def _leaf_part(allow: frozenset[int], offset: int, count: int) -> frozenset[int]:
    """`in_leaf` of a scope's documents (a frozenset kept per searcher, asked again by every
    query of a context: its hash is computed once, and the cache finds it by identity)."""
    return frozenset(d - offset for d in allow if offset <= d < offset + count)


@functools.lru_cache(maxsize=64)
def in_order(docs: frozenset[int]) -> list[int]:
    """A scope's documents in order (cached as `_leaf_part`: asked by every query of a
    context)."""
    return sorted(docs)


def before_first(info: Any) -> int:
    """A number below the first posting of the term `info` is of: its smallest, less one (-1
    when it cannot be had)."""
    try:
        return int(info.min_id()) - 1
    except Exception:  # None, or a term info without its smallest number
        return -1
