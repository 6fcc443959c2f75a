"""The indexed events as recall by meaning knows them, in arrays rather than Python objects.

semantic.py needs, for every indexed event, the digest of its text (which vector is its) and
its speaker (whose name a prompt asks about), and, for the texts with no vector yet, an event
that has each (its text is read back from the index by key when its turn comes). A large vault
has hundreds of thousands of events: held as dicts of Python ints and strings these tables took
over 150 bytes an event (about 50 MB at 100,000 notes), more than the vectors. Here an event
costs a pointer to its key (the string the index's own key -> document table holds already),
the key's hash, the digest and a speaker's number: 28 bytes, and 16 more while it waits.

`EventTable` keeps a dict's order (the order the events were learnt, a changed event in its
place, a new one last), so that the rows compared with a prompt, and among equal cosines the
ones kept, are those a dict gave. A key is found by its hash (`hash`, cached on the string,
compared over the whole array at once) and then compared whole, so a shared hash finds nothing
wrong. `Waiting` keeps the texts that wait for their vector, each digest once, in the order
found.

One concept: the events' compact tables (which exist, and which wait for a vector).
"""

from __future__ import annotations

import itertools
from array import array
from collections.abc import Callable, Collection, Iterable
from typing import Any

import numpy as np

# Each table's each state a number of its own, whichever table it is (`version`).
_VERSIONS = itertools.count()
# Rows of the waiting queue's head looked up at a time for vectors made meanwhile (`trim`).
_TRIM_WINDOW = 256


class EventTable:
    """Event key -> (digest of its text, its role), in the order a dict would keep."""

    def __init__(self) -> None:
        self.keys: list[str] = []
        self.digests: Any = np.empty(0, np.uint64)
        self._hashes: Any = np.empty(0, np.int64)
        self._roles: Any = np.empty(0, np.uint32)
        # One string a speaker, numbered; 0 is "no role". A role's string from each event's
        # stored fields is let go as soon as its number is known.
        self._names: list[str] = [""]
        self._number: dict[str, int] = {"": 0}
        # Another number after each update, never one an earlier table had: what a check of
        # the waiting texts against the digests was made for.
        self.version = next(_VERSIONS)

    @classmethod
    def of(cls, events: Iterable[tuple[str, int, str]]) -> EventTable:
        """The table of `events`, (key, digest, role), read one at a time (a key given twice:
        its first place, its last values)."""
        table = cls()
        keys: list[str] = []
        hashes, digests, roles = array("q"), array("Q"), array("L")
        for key, digest, role in events:
            keys.append(key)
            hashes.append(hash(key))
            digests.append(digest)
            roles.append(table._role_number(role))
        table.keys = keys
        table._hashes = np.array(hashes, np.int64)
        table.digests = np.array(digests, np.uint64)
        table._roles = np.array(roles, np.uint32)
        table._merge_repeated_keys()
        return table

    def __len__(self) -> int:
        return len(self.keys)

    @property
    def names(self) -> list[str]:
        """The speakers' names, each once (the first is "", no role)."""
        return self._names

    def _role_number(self, role: str) -> int:
        number = self._number.get(role)
        if number is None:
            number = self._number[role] = len(self._names)
            self._names.append(role)
        return number

    def positions(self, keys: Iterable[str]) -> list[int]:
        """The places of those of `keys` that are in the table, ascending."""
        wanted = keys if isinstance(keys, (set, frozenset)) else set(keys)
        if not wanted or not self.keys:
            return []
        hashes = np.fromiter((hash(k) for k in wanted), np.int64, len(wanted))
        found = np.flatnonzero(np.isin(self._hashes, hashes)).tolist()
        table_keys = self.keys
        return [p for p in found if table_keys[p] in wanted]  # a shared hash is not a match

    def speakers_of(self, keys: Collection[str]) -> set[str]:
        """The roles that speak in the events keyed `keys` (those in the table)."""
        numbers = np.unique(self._roles[self.positions(keys)]).tolist()
        return {self._names[n] for n in numbers if n}

    def update(self, added: Iterable[tuple[str, int, str]], deleted: Iterable[str]) -> None:
        """As a dict would: each deleted key popped, then each added (key, digest, role) set (a
        key already there keeps its place; a new one goes last)."""
        self.version = next(_VERSIONS)
        gone = self.positions(deleted)
        if gone:
            kept = np.ones(len(self.keys), bool)
            kept[gone] = False
            self._keep(kept)
        latest: dict[str, tuple[int, int]] = {}
        for key, digest, role in added:
            latest[key] = (digest, self._role_number(role))
        if not latest:
            return
        for p in self.positions(latest):
            self.digests[p], self._roles[p] = latest.pop(self.keys[p])
        if latest:
            fresh = list(latest)
            self.keys.extend(fresh)
            self._hashes = np.concatenate(
                [self._hashes, np.fromiter(map(hash, fresh), np.int64, len(fresh))]
            )
            values = np.array(list(latest.values()), np.uint64).reshape(-1, 2)
            self.digests = np.concatenate([self.digests, values[:, 0]])
            self._roles = np.concatenate([self._roles, values[:, 1].astype(np.uint32)])

    def _keep(self, kept: Any) -> None:
        self.keys = list(itertools.compress(self.keys, kept.tolist()))
        self._hashes = self._hashes[kept]
        self.digests = self.digests[kept]
        self._roles = self._roles[kept]

    def _merge_repeated_keys(self) -> None:
        """A key read twice (the index holds each live event once; a reader beside the daemon
        may see one in two segments) keeps its first place and takes its last values."""
        order = np.argsort(self._hashes, kind="stable")
        ordered = self._hashes[order]
        same = np.flatnonzero(ordered[1:] == ordered[:-1])
        if not len(same):
            return
        first: dict[str, int] = {}
        kept = np.ones(len(self.keys), bool)
        for p in sorted(set(order[same].tolist()) | set(order[same + 1].tolist())):
            q = first.setdefault(self.keys[p], p)
            if q != p:
                self.digests[q], self._roles[q] = self.digests[p], self._roles[p]
                kept[p] = False
        self._keep(kept)


class Waiting:
    """The digests of texts waiting for their vector, each once, in the order found, each with
    the key of an event whose text it is (read back from the index when its turn comes)."""

    def __init__(self) -> None:
        self._digests: Any = np.empty(0, np.uint64)
        self._keys: list[str] = []
        self._at = 0  # the queue starts here: the ones before it are embedded

    def __len__(self) -> int:
        return len(self._keys) - self._at

    @classmethod
    def of(cls, table: EventTable, missing: Any) -> Waiting:
        """The texts of `table`'s events at the places `missing` (ascending), each digest once
        at its first event's place, with that event's key."""
        waiting = cls()
        digests = table.digests[missing]
        _, first = np.unique(digests, return_index=True)
        first.sort()
        waiting._digests = digests[first]
        waiting._keys = [table.keys[p] for p in np.asarray(missing)[first].tolist()]
        return waiting

    def digests(self) -> Any:
        return self._digests[self._at :]

    def head(self, count: int) -> list[tuple[int, str]]:
        """The first `count` (digest, key) in the queue."""
        digests = self._digests[self._at : self._at + count].tolist()
        return list(zip(digests, self._keys[self._at : self._at + len(digests)], strict=True))

    def add(self, pairs: Iterable[tuple[int, str]]) -> None:
        """(digest, key) pairs, as a dict digest -> key would take them: a digest waiting
        already keeps its place and takes the later key; a new one goes last."""
        latest = dict(pairs)
        if not latest:
            return
        waiting = self.digests()
        asked = np.fromiter(latest, np.uint64, len(latest))
        for p in np.flatnonzero(np.isin(waiting, asked)).tolist():
            self._keys[self._at + p] = latest.pop(int(waiting[p]))
        if latest:
            self._digests = np.concatenate([waiting, np.fromiter(latest, np.uint64, len(latest))])
            self._keys = self._keys[self._at :] + list(latest.values())
            self._at = 0

    def keep(self, kept: Any) -> None:
        """Only the waiting texts where `kept` (a bool a waiting text, in order) is True."""
        if kept.all():
            return
        self._keys = list(itertools.compress(self._keys[self._at :], kept.tolist()))
        self._digests = self.digests()[kept]
        self._at = 0

    def remove(self, digests: Collection[int]) -> None:
        self.keep(~np.isin(self.digests(), np.fromiter(digests, np.uint64, len(digests))))

    def trim(self, rows_of: Callable[[Any], Any]) -> None:
        """Let go of the queue's first texts that have a vector now (`rows_of`: the store's
        row of each digest, -1 where none): the batch just embedded."""
        while self._at < len(self._keys):
            window = self._digests[self._at : self._at + _TRIM_WINDOW]
            made = rows_of(window) >= 0
            done = len(window) if made.all() else int(np.argmin(made))
            self._at += done
            if done < len(window):
                break
        if self._at > max(4096, len(self._keys) // 2):  # the embedded part's memory back
            self._digests = self._digests[self._at :].copy()
            self._keys = self._keys[self._at :]
            self._at = 0
