"""One index segment's events, key -> document number within the segment (index_events.py
`EventTables`), in arrays rather than a dict.

The index keeps this table for each segment, read once from the events' stored fields, so that
a context finds the documents of the events nearest its prompt in meaning without a term lookup
each. A dict took over 40 bytes an event beside the key (about 15 MB at 100,000 notes); here an
event costs a pointer to its key, the key's hash and the number, 20 bytes, the three sorted by
the hash: a key is found by a binary search of its hash, then compared whole, so keys that share
a hash find only themselves. Standard library only: the index is read by words-only processes,
which never load numpy.

One concept: a segment's event key -> document number table.
"""

from __future__ import annotations

import bisect
import itertools
from array import array
from collections.abc import Iterable, Iterator, Sequence


class KeyNumbers:
    """Event key -> document number: `keys` and their `numbers` in the segment's order (a key
    given twice keeps its last number, as a dict would)."""

    def __init__(self, keys: list[str], numbers: Iterable[int]) -> None:
        hashes = array("q", map(hash, keys))
        numbered = array("l", numbers)
        order = sorted(range(len(keys)), key=hashes.__getitem__)  # stable: a repeat's order
        self._hashes = array("q", (hashes[i] for i in order))
        self._keys = [keys[i] for i in order]
        self._numbers = array("l", (numbered[i] for i in order))
        del hashes, numbered, order
        self._drop_repeated()

    def __len__(self) -> int:
        return len(self._keys)

    def items(self) -> Iterator[tuple[str, int]]:
        return zip(self._keys, self._numbers, strict=True)

    def found(self, keys: Sequence[str]) -> list[tuple[str, int]]:
        """(key, number) of those of `keys` in the table, in their order."""
        hashes, table_keys, count = self._hashes, self._keys, len(self._keys)
        out = []
        for key in keys:
            h = hash(key)
            at = bisect.bisect_left(hashes, h)
            while at < count and hashes[at] == h:  # a shared hash: the key itself decides
                if table_keys[at] == key:
                    out.append((key, self._numbers[at]))
                    break
                at += 1
        return out

    def _drop_repeated(self) -> None:
        """A key twice (a dict's last number kept): the earlier places dropped."""
        hashes = self._hashes
        group = [p for p in range(1, len(hashes)) if hashes[p] == hashes[p - 1]]
        if not group:
            return
        places = sorted({*group, *(p - 1 for p in group)})
        last: dict[str, int] = {}
        for p in places:  # the places of one hash follow the segment's order (a stable sort)
            last[self._keys[p]] = p
        dropped = {p for p in places if last[self._keys[p]] != p}
        if not dropped:
            return
        kept = [p not in dropped for p in range(len(hashes))]
        self._keys = list(itertools.compress(self._keys, kept))
        self._hashes = array("q", itertools.compress(hashes, kept))
        self._numbers = array("l", itertools.compress(self._numbers, kept))
