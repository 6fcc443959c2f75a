"""The vectors' files (search/vector_store.py): real files in a temporary folder, the real sentence
model where meaning is compared, and a real subprocess killed in the middle of a first fill."""

from __future__ import annotations

import mmap
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from brainiac import Memory
from brainiac.search import semantic as semantic_mod
from brainiac.search import vector_store
from brainiac.search.semantic import SemanticIndex, text_digest
from brainiac.search.sentence_model import DIMENSIONS, MODEL_ID, SentenceModel
from brainiac.search.vector_store import TABLE_FILE, VectorStore
from brainiac.store.locations import Locations

DIMS = 8


def _unit(rng: np.random.Generator, count: int) -> np.ndarray:
    vectors = rng.standard_normal((count, DIMS)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def _opened(folder: Path, model_id: str = "m") -> VectorStore:
    store = VectorStore(folder, model_id, DIMS)
    store.open()
    return store


def _rows_file(folder: Path) -> Path:
    (path,) = folder.glob("vectors.*.rows")
    return path


def test_committed_vectors_come_back_mapped_from_the_file(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    vectors = _unit(rng, 3000)
    store = _opened(tmp_path)
    for at in range(0, 3000, 64):  # as a fill appends them, a batch at a time
        store.append(list(range(at + 10, min(at + 64, 3000) + 10)), vectors[at : at + 64])
    store.commit()
    assert store.rows_of([3009, 5, 11]).tolist() == [2999, -1, 1]  # appended since the open
    again = _opened(tmp_path)
    assert again.problem == "" and again.count == 3000
    restored = again.rows.astype(np.float32) * again.scales[:, None]
    np.testing.assert_allclose(restored, vectors, atol=0.01)
    assert again.row_of(10) == 0 and again.row_of(3009) == 2999 and again.row_of(5) is None
    assert again.rows_of([3009, 5, 11]).tolist() == [2999, -1, 1]
    # Mapped from the file, not read into the heap.
    assert not again.rows.flags.owndata and not again.rows.flags.writeable
    base = again.rows
    while isinstance(base, np.ndarray):
        base = base.base
    assert isinstance(base, memoryview) and isinstance(base.obj, mmap.mmap)


def test_appended_rows_not_committed_are_dropped_and_the_rest_kept(tmp_path: Path) -> None:
    rng = np.random.default_rng(2)
    store = _opened(tmp_path)
    store.append([1, 2, 3], _unit(rng, 3))
    store.commit()
    store.append([4, 5], _unit(rng, 2))  # written, never committed: a crash here
    reader = _opened(tmp_path)
    assert reader.count == 3 and reader.row_of(4) is None
    reader.append([4], _unit(rng, 1))  # the leftovers are overwritten, not counted
    reader.commit()
    assert _opened(tmp_path).rows_of([1, 2, 3, 4, 5]).tolist() == [0, 1, 2, 3, -1]


@pytest.mark.parametrize("damage", ["torn header", "flipped row byte", "short rows", "garbage"])
def test_a_damaged_file_is_never_trusted_and_made_again(tmp_path: Path, damage: str) -> None:
    rng = np.random.default_rng(3)
    store = _opened(tmp_path)
    store.append(list(range(100)), _unit(rng, 100))
    store.commit()
    store.close()
    table, rows = tmp_path / TABLE_FILE, _rows_file(tmp_path)
    if damage == "torn header":
        data = bytearray(table.read_bytes())
        data[20] ^= 0xFF
        table.write_bytes(bytes(data))
    elif damage == "flipped row byte":
        data = bytearray(rows.read_bytes())
        data[50 * DIMS + 3] ^= 0x01  # inside the committed rows (the file has room past them)
        rows.write_bytes(bytes(data))
    elif damage == "short rows":
        os.truncate(rows, 50 * DIMS)
    else:
        table.write_bytes(b"not a table at all" * 40)
    again = _opened(tmp_path)
    assert again.count == 0 and again.problem
    assert not table.exists() and not list(tmp_path.glob("vectors.*.rows"))  # removed
    again.append([7], _unit(rng, 1))
    again.commit()
    assert _opened(tmp_path).rows_of([7]).tolist() == [0]


def test_compaction_keeps_the_live_rows_and_removes_the_old_file(tmp_path: Path) -> None:
    rng = np.random.default_rng(4)
    vectors = _unit(rng, 500)
    store = _opened(tmp_path)
    store.append(list(range(500)), vectors)
    store.commit()
    old_rows = _rows_file(tmp_path)
    keep = np.arange(0, 500, 7)
    store.compact(keep)
    assert store.count == len(keep)
    assert not old_rows.exists()
    again = _opened(tmp_path)
    assert again.count == len(keep)
    for digest in (0, 7, 497):
        row = again.row_of(digest)
        assert row is not None
        restored = again.rows[row].astype(np.float32) * again.scales[row]
        np.testing.assert_allclose(restored, vectors[digest], atol=0.01)
    assert again.row_of(1) is None


def test_another_models_vectors_are_not_used(tmp_path: Path) -> None:
    store = _opened(tmp_path, "model-a")
    store.append([1], _unit(np.random.default_rng(5), 1))
    store.commit()
    other = _opened(tmp_path, "model-b")
    assert other.count == 0 and "another model" in other.problem


_KILLED_FILL = """
import os, sys
from pathlib import Path
from brainiac.search import vector_store
from brainiac.search.semantic import SemanticIndex
vector_store.COMMIT_EVERY = 64
semantic = SemanticIndex(Path(sys.argv[1]))
semantic.known([(f"k{i}", f"event {i} about the garden and topic {i % 11}", "user")
                for i in range(300)])
semantic.fill()
os.kill(os.getpid(), 9)  # no save, no close: as a crash or `kill -9` in a first fill
"""


def test_a_first_fill_killed_midway_keeps_what_it_had_committed(tmp_path: Path) -> None:
    folder = tmp_path / "vectors"
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(_KILLED_FILL), str(folder)], check=False
    )
    assert done.returncode == -9
    semantic = SemanticIndex(folder)
    semantic.known(
        [(f"k{i}", f"event {i} about the garden and topic {i % 11}", "user") for i in range(300)]
    )
    # Committed every 64 rows: at most the rows since the last commit are made again.
    assert semantic.stats()["vectors"] >= 256 and semantic.pending <= 300 - 256


def test_the_earlier_formats_vectors_are_imported_not_made_again(tmp_path: Path) -> None:
    model = SentenceModel()
    texts = ["I rode my bike to work", "Anna prefers green tea"]
    vectors = model.encode(texts)
    scale = np.abs(vectors).max(axis=1) / 127.0
    rows = np.rint(vectors / scale[:, None]).astype(np.int8)
    folder = tmp_path / "vectors"
    folder.mkdir()
    np.save(folder / "vectors.npy", rows)
    np.save(folder / "vectors.scales.npy", scale.astype(np.float32))
    hexes = [text_digest(t).to_bytes(8, "little").hex() for t in texts]
    (folder / "vectors.digests").write_text("\n".join([MODEL_ID, *hexes]) + "\n")
    semantic = SemanticIndex(folder, lambda: model)
    semantic.known([(f"k{i}", t, "user") for i, t in enumerate(texts)])
    assert semantic.pending == 0
    assert list(semantic.nearness("bicycle", nearest=1)) == ["k0"]
    assert not (folder / "vectors.npy").exists() and (folder / TABLE_FILE).is_file()
    assert VectorStore(folder, MODEL_ID, DIMENSIONS).dims == DIMENSIONS


def test_nearness_from_the_mapped_file_is_the_brute_force_scan_on_a_real_vault(
    vault: Path,
) -> None:
    texts = [
        "I rode my bike to the office this morning",
        "The quarterly budget review is on Thursday",
        "Anna prefers green tea over coffee",
        "We adopted a cat called Miso last spring",
        "The printer on the third floor is broken again",
        "Our flight to Lisbon leaves at seven",
    ]
    with Memory(vault, refresh_interval_s=0) as memory:
        for text in texts:
            memory.remember(text)
        memory.refresh(force=True)
        semantic = memory.semantic
        assert semantic is not None
        semantic.fill()
        keys_texts = {k: t for k, t, _ in memory.indexer.index.events()}
    with Memory(vault, refresh_interval_s=0) as reopened:
        semantic = reopened.semantic
        assert isinstance(semantic, SemanticIndex) and semantic.pending == 0
        model = SentenceModel()
        for prompt in ("cycling to work", "a pet", "travel plans"):
            near = semantic.nearness(prompt, nearest=4)
            keys = list(keys_texts)
            full = model.encode([keys_texts[k] for k in keys]) @ model.encode([prompt])[0]
            expected = {keys[i] for i in np.argsort(-full)[:4]}
            assert set(near) == expected
            assert max(near.values()) == pytest.approx(1.0)


def test_a_first_fill_reads_the_texts_back_from_the_index_rather_than_holding_them(
    vault: Path,
) -> None:
    """A process that opens a built index learns every event at once (`known`): what waits for
    its vector is the event's key, its text read back from the index when its batch comes, so
    a first fill at 100,000 notes does not hold half a million texts meanwhile. An event edited
    before its turn is embedded under its new text only."""
    texts = ["I rode my bike to the office", "Anna prefers green tea", "We adopted a cat"]
    with Memory(vault, refresh_interval_s=0, meaning=False) as memory:
        for text in texts:
            memory.remember(text)
        memory.refresh(force=True)
    with Memory(vault, refresh_interval_s=float("inf")) as memory:
        memory.refresh(force=True)
        semantic = memory.semantic
        assert semantic is not None
        waiting = semantic.pending
        assert waiting >= 3 and not semantic._texts  # keys wait, not texts
        stm = vault / "memory" / "short_term.md"
        stm.write_text(stm.read_text().replace("green tea", "black coffee"), encoding="utf-8")
        memory.refresh(force=True)  # the edit is told to the semantic index with its text
        assert semantic.fill() == waiting  # the old text dropped, the new one embedded
        assert semantic.pending == 0
        near = semantic.nearness("a hot drink in the morning", nearest=1)
        (key,) = near
        assert "black coffee" in memory.indexer.index.event_texts([key])[key]


_PEOPLE = ["Anna", "Ben", "Chloe", "Dev", "Emma", "Farid"]
_DOINGS = [
    "went hiking in the mountains over the weekend",
    "adopted a small grey kitten from the shelter",
    "is learning to play the cello with a teacher",
    "baked sourdough bread for the neighbours",
    "fixed the leaking kitchen tap herself",
    "booked flights to Lisbon for the spring holiday",
    "started running five kilometres every morning",
    "painted the garden fence a pale blue",
    "lost her phone on the night bus home",
    "signed up for a pottery class on Thursdays",
    "planted tomatoes and basil on the balcony",
    "passed the driving test at the second attempt",
    "moved into a flat near the river",
    "reads a crime novel every week",
    "repaired an old bicycle found in the shed",
    "volunteers at the food bank on Saturdays",
    "caught a cold after the swim in the lake",
    "is saving money to buy a piano",
    "took the kids camping by the sea",
    "was promoted to team lead in March",
]


def test_a_large_vaults_search_by_signs_finds_what_the_full_scan_finds(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Above SCAN_ALL_UP_TO events, nearness compares every row's signs and only the likeliest
    rows' vectors: on a real vault (120 events, the real model), with the comparison cut to a
    third of the rows, the nearest are those the full scan finds, scaled alike."""
    with Memory(vault, refresh_interval_s=0) as memory:
        for person in _PEOPLE:
            for doing in _DOINGS:
                memory.remember(f"{person} {doing}")
        memory.refresh(force=True)
        semantic = memory.semantic
        assert isinstance(semantic, SemanticIndex)
        semantic.fill()
        prompts = ["a new pet cat", "travel abroad by plane", "making music", "gardening"]
        exact = [semantic.nearness(p, nearest=5) for p in prompts]
        monkeypatch.setattr(semantic_mod, "SCAN_ALL_UP_TO", 0)
        monkeypatch.setattr(semantic_mod, "_SKETCH_NEAREST", 40)
        monkeypatch.setattr(semantic_mod, "_SKETCH_FARTHEST", 10)
        for prompt, full in zip(prompts, exact, strict=True):
            sketched = semantic.nearness(prompt, nearest=5)
            assert set(sketched) == set(full), prompt
            best = max(full, key=full.__getitem__)
            assert sketched[best] == pytest.approx(1.0)
            for key, value in sketched.items():  # the farthest found may not be the farthest
                assert value == pytest.approx(full[key], abs=0.15)


def test_a_closed_memory_leaves_the_vectors_table_closed(vault: Path) -> None:
    """The table is open for appending while a fill runs and closed with the Memory (the rows
    stay mapped: the map holds its own descriptor until the last search using it is done)."""

    table = str(Locations.for_vault(vault).vectors_dir.resolve() / TABLE_FILE)

    def table_open() -> bool:
        return any(os.path.realpath(f) == table for f in Path("/proc/self/fd").iterdir())

    with Memory(vault, refresh_interval_s=0) as memory:
        memory.remember("I rode my bike to the office")
        memory.context("bicycle", budget=300)
        assert table_open()  # appended to while it fills
    assert not table_open()
    with Memory(vault, refresh_interval_s=0) as again:  # and a later fill opens it again
        again.remember("Anna prefers green tea")
        again.context("a hot drink", budget=300)
        assert again.semantic is not None and again.semantic.pending == 0


def test_a_reader_follows_the_writers_commits_and_never_removes_its_files(
    tmp_path: Path,
) -> None:
    """Beside a daemon a server reads the daemon's vectors (daemon_vectors.py): it sees each
    commit, never what is appended but not committed, and a table caught mid-write (here torn)
    leaves what it read before in use, the daemon's files where they are."""
    rng = np.random.default_rng(5)
    writer = _opened(tmp_path)
    writer.append(list(range(100)), _unit(rng, 100))
    writer.commit()
    reader = VectorStore(tmp_path, "m", DIMS, read_only=True)
    reader.open()
    assert reader.count == 100 and not reader.catch_up()  # unchanged: a stat
    writer.append(list(range(100, 150)), _unit(rng, 50))
    assert not reader.catch_up() and reader.count == 100  # appended, not committed
    writer.commit()
    assert reader.catch_up() and reader.count == 150 and reader.rows_of([149]).tolist() == [149]
    table = tmp_path / TABLE_FILE
    good = table.read_bytes()
    table.write_bytes(good[:20] + bytes([good[20] ^ 0xFF]) + good[21:])
    assert not reader.catch_up() and reader.count == 150 and reader.problem
    assert table.exists() and _rows_file(tmp_path).exists()  # left for the daemon
    with pytest.raises(OSError, match="read-only"):
        reader.append([999], _unit(rng, 1))
    table.write_bytes(good)  # the writer's next commit
    writer.compact(np.arange(0, 150, 2))
    assert reader.catch_up() and reader.count == 75 and reader.row_of(148) == 74


def test_a_commit_within_the_tick_of_the_readers_stat_is_still_seen(tmp_path: Path) -> None:
    """A file's times tick coarsely: the writer's rows appended, the reader's stat and read, then
    the writer's commit can all fall in one tick, and the table's stat is then the same before
    and after the commit. The reader trusts no stat that young: it looks at the header again."""
    rng = np.random.default_rng(6)
    writer = _opened(tmp_path)
    writer.append(list(range(40)), _unit(rng, 40))
    writer.commit()
    writer.append(list(range(40, 60)), _unit(rng, 20))  # appended: the table's size grows
    reader = VectorStore(tmp_path, "m", DIMS, read_only=True)
    reader.open()
    table = tmp_path / TABLE_FILE
    stat = table.stat()
    writer.commit()  # rewrites the header in place: the size stays
    os.utime(table, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # ... and, in the same tick, the time
    assert (table.stat().st_size, table.stat().st_mtime_ns) == (stat.st_size, stat.st_mtime_ns)
    assert reader.count == 40
    assert reader.catch_up() and reader.count == 60
    assert not reader.catch_up()  # the same commit again: its header read, nothing reloaded
    # Once the table is older than any tick, its stat is trusted again: a stat, not a read.
    old = time.time_ns() - 10_000_000_000
    os.utime(table, ns=(old, old))
    assert not reader.catch_up()
    table.write_bytes(b"")  # a stat that moved: the header is read; unreadable, what was read stays
    os.utime(table, ns=(old, old))
    assert not reader.catch_up() and reader.count == 60


def test_a_reader_caught_mid_commit_reads_again_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process that asks one context beside the daemon (`brainiac mcp`, a hook) opens the
    vectors once: caught while the table is half-written, it reads again a moment later instead
    of answering without them; a table that stays damaged is given up after a few reads."""
    rng = np.random.default_rng(7)
    writer = _opened(tmp_path)
    writer.append(list(range(30)), _unit(rng, 30))
    writer.commit()
    table = tmp_path / TABLE_FILE
    good = table.read_bytes()
    table.write_bytes(good[:20] + bytes([good[20] ^ 0xFF]) + good[21:])  # mid-write, as read
    waits: list[float] = []

    def the_writer_finishes(seconds: float) -> None:
        waits.append(seconds)
        table.write_bytes(good)

    monkeypatch.setattr(vector_store.time, "sleep", the_writer_finishes)
    reader = VectorStore(tmp_path, "m", DIMS, read_only=True)
    reader.open()
    assert len(waits) == 1 and not reader.problem
    assert reader.count == 30 and reader.rows_of([29]).tolist() == [29]
    table.write_bytes(good[:20] + bytes([good[20] ^ 0xFF]) + good[21:])
    monkeypatch.setattr(vector_store.time, "sleep", waits.append)
    again = VectorStore(tmp_path, "m", DIMS, read_only=True)
    again.open()
    assert len(waits) == 1 + 2 and again.count == 0 and "damaged" in again.problem
    other = VectorStore(tmp_path, "another model", DIMS, read_only=True)
    table.write_bytes(good)
    other.open()  # nothing another read could change: no wait
    assert len(waits) == 3 and other.problem == "they were made by another model"
