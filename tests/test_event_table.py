"""The events' compact tables (search/event_table.py) answer as the dicts they replace would,
through every change a daemon makes to them: the rows a prompt is compared with, and which of
equal cosines are kept, follow that order."""

from __future__ import annotations

import random

import numpy as np

from brainiac.search.event_table import EventTable, Waiting


class _SameHash(str):
    """A key whose hash every other one shares: found by its whole text, not its hash."""

    def __hash__(self) -> int:
        return 7


def _as_dict(table: EventTable) -> dict[str, tuple[int, str]]:
    return {
        key: (int(table.digests[p]), next(iter(table.speakers_of([key])), ""))
        for p, key in enumerate(table.keys)
    }


def test_the_event_table_keeps_a_dicts_order_and_values_through_every_change() -> None:
    chance = random.Random(34)
    keys = [f"notes/n{i % 40}.md#e-{i}" for i in range(120)] + [_SameHash("a"), _SameHash("b")]
    roles = ["", "Caroline", "Melanie"]

    def some(count: int) -> list[tuple[str, int, str]]:
        return [
            (chance.choice(keys), chance.getrandbits(64), chance.choice(roles))
            for _ in range(count)
        ]

    first = some(80)  # keys given twice: their first place, their last values
    expected = {key: (digest, role) for key, digest, role in first}
    table = EventTable.of(first)
    assert _as_dict(table) == expected and list(_as_dict(table)) == list(expected)
    for _ in range(60):
        added = some(chance.randrange(0, 12))
        deleted = chance.sample(keys, chance.randrange(0, 6))
        for key in deleted:
            expected.pop(key, None)
        for key, digest, role in added:
            expected[key] = (digest, role)
        table.update(added, deleted)
        assert list(_as_dict(table)) == list(expected)
        assert _as_dict(table) == expected
        assert table.digests.dtype == np.uint64 and len(table) == len(expected)
    assert table.names == ["", "Caroline", "Melanie"]  # each speaker once, however many events
    present = [k for k in expected if k in ("a", "b")]
    asked = [_SameHash("a"), _SameHash("b"), _SameHash("c")]  # "c": its hash, not its text
    assert [table.keys[p] for p in table.positions(asked)] == present


def test_the_waiting_texts_keep_a_dicts_order_and_let_go_of_those_embedded() -> None:
    chance = random.Random(35)
    waiting = Waiting()
    expected: dict[int, str] = {}
    embedded: set[int] = set()

    def rows_of(digests: np.ndarray) -> np.ndarray:
        return np.array([0 if int(d) in embedded else -1 for d in digests.tolist()], np.int64)

    for step in range(200):
        pairs = [(chance.randrange(300), f"k{step}-{i}") for i in range(chance.randrange(0, 6))]
        waiting.add(pairs)
        expected.update(pairs)
        if step % 3 == 0:  # the head's batch embedded, in order
            for digest, _ in waiting.head(chance.randrange(1, 5)):
                embedded.add(digest)
                del expected[digest]
            waiting.trim(rows_of)
        if step % 7 == 0 and expected:  # some texts changed before their turn
            gone = chance.sample(sorted(expected), min(2, len(expected)))
            waiting.remove(gone)
            for digest in gone:
                del expected[digest]
        embedded.difference_update(expected)  # a text embedded, then waiting again
        assert waiting.head(len(expected) + 1) == list(expected.items())
        assert len(waiting) == len(expected)
