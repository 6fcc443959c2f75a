"""A segment's event key -> document number table (search/key_numbers.py) answers as the dict
it replaces, and loads no numpy into a words-only process."""

from __future__ import annotations

import subprocess
import sys

from brainiac.search.key_numbers import KeyNumbers


class _SameHash(str):
    """A key whose hash every other one shares: found by its whole text, not its hash."""

    def __hash__(self) -> int:
        return 7


def test_a_segments_key_numbers_answer_as_its_dict_did() -> None:
    """The index's key -> document number table of a segment (index.py `_event_docnums`): a
    key read twice keeps its last number, a shared hash finds only its own key, and the keys
    asked come back in their order."""
    keys = [f"notes/n{i % 9}.md#e-{i % 23}" for i in range(60)]
    keys += [_SameHash("a"), _SameHash("b"), _SameHash("a")]
    expected = {key: number for number, key in enumerate(keys)}
    table = KeyNumbers(keys, range(len(keys)))
    assert len(table) == len(expected) and dict(table.items()) == expected
    asked = [*reversed(keys), "notes/n0.md#e-99", _SameHash("c")]
    assert table.found(asked) == [(k, expected[k]) for k in asked if k in expected]
    empty = KeyNumbers([], [])
    assert empty.found(asked) == [] and list(empty.items()) == []


def test_the_index_loads_no_numpy_for_a_words_only_process() -> None:
    """A CLI call by words only imports the index, not numpy (tens of ms and MB a call)."""
    code = "import sys, brainiac.search.index; print('numpy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
