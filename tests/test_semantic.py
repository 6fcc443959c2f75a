"""Recall by meaning: the real sentence model (all-MiniLM-L6-v2, shipped in brainiac's package), a
real index and real files; the daemon as a real subprocess."""

from __future__ import annotations

import _thread
import hashlib
import itertools
import json
import logging
import os
import re
import shutil
import subprocess
import sys
import threading
import tracemalloc
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from numpy._core._multiarray_umath import __cpu_features__

import brainiac
from brainiac import Memory
from brainiac.runtime import daemon_socket
from brainiac.runtime.embedder import Embedder
from brainiac.search import semantic as semantic_mod
from brainiac.search import sentence_model
from brainiac.search.index import Index
from brainiac.search.semantic import SemanticIndex
from brainiac.search.sentence_model import ModelUnavailable, SentenceModel
from brainiac.search.vector_store import VectorStore
from brainiac.store.locations import Locations
from conftest import load_benchmark, run_cli
from helpers import wait_for
from test_real_editors import run_daemon, stop

BIKE = "I rode my bike to the office this morning"
DECOYS = [
    "The quarterly budget review is on Thursday",
    "Anna prefers green tea over coffee",
    "The printer on the third floor is broken again",
    "We adopted a cat called Miso last spring",
]
# More events than the recent window (10), so that the first ones are long-term memory, found
# by search (the same text twice is the same event).
FILLER = [f"Note {i}: the {w} report is filed" for i, w in enumerate("abcdefghijkl")]


@pytest.fixture(scope="module")
def model() -> SentenceModel:
    return SentenceModel()


def _saved(folder: Path) -> int:
    """How many vectors a process opening `folder` would find."""
    store = VectorStore(folder, sentence_model.MODEL_ID, sentence_model.DIMENSIONS)
    store.open()
    return store.count


def _events(memory: Memory, texts: list[str]) -> None:
    for text in texts:
        memory.remember(text)


def _blas_sums_alike_in_any_shape() -> bool:
    """Whether this machine's OpenBLAS kernel sums each output of a product in one order
    whatever the product's rows and column blocks, which the model's bit-for-bit promise rests
    on (sentence_model.py): its Sandybridge and SkylakeX kernels do; the Haswell and Zen ones,
    which it picks on AVX2 machines without AVX-512, sum some in another order (a vector then
    differs from its batch's in the last bits)."""
    core = os.environ.get("OPENBLAS_CORETYPE", "").lower()
    if core:
        return core not in ("haswell", "zen")
    features = __cpu_features__
    return bool(features.get("AVX512F")) or not (features.get("AVX2") and features.get("FMA3"))


BIT_FOR_BIT = _blas_sums_alike_in_any_shape()


def _same_vector(a: Any, b: Any) -> bool:
    """Bit for bit where the BLAS kernel sums alike in any shape; else within 1e-6."""
    return bool(np.array_equal(a, b) if BIT_FOR_BIT else np.allclose(a, b, rtol=0, atol=1e-6))


def test_the_model_puts_texts_that_mean_the_same_together(model: SentenceModel) -> None:
    vectors = model.encode(["a bicycle", "a bike", "a tax return", ""])
    assert vectors.shape == (4, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    bicycle, bike, tax = vectors[0], vectors[1], vectors[2]
    assert bicycle @ bike > 0.8
    assert bicycle @ bike > bicycle @ tax + 0.3
    # batching and length sorting do not change a text's vector
    alone = model.encode(["a bike"])[0]
    assert _same_vector(alone, bike)


# Texts of 3 to about 60 tokens: a one-word prompt, a question, an event's line.
SHORT_TEXTS = [
    "bike",
    "Who is Anna?",
    "How did I get to work on my bicycle last Tuesday?",
    " ".join(DECOYS),
    " ".join([BIKE, *DECOYS, *FILLER[:2]]),
]


def test_a_short_texts_vector_is_the_whole_products_bit_for_bit(
    model: SentenceModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A prompt's products go a block of columns at a time; its vector is exactly the one the
    whole matrices give (an event's vector made alone or in a batch compares with it)."""
    blocked = [model.encode([t])[0] for t in SHORT_TEXTS]
    monkeypatch.setattr(sentence_model, "_BLOCKED_TOKENS", 0)  # every product whole
    whole = [model.encode([t])[0] for t in SHORT_TEXTS]
    for text, a, b in zip(SHORT_TEXTS, blocked, whole, strict=True):
        assert _same_vector(a, b), text


def test_a_texts_vector_is_the_same_bit_for_bit_whatever_it_is_embedded_with(
    model: SentenceModel,
) -> None:
    """Texts of many lengths embedded together (as a fill's batch is) get exactly the vectors
    they get alone: a batch is packed without padding, so no text's vector depends on which
    others share its batch (the store's vectors and a context do not depend on the order the
    events were embedded in)."""
    texts = [
        *SHORT_TEXTS,
        *FILLER,
        BIKE,
        *DECOYS,
        " ".join(FILLER),
        "a bike",
        "Anna prefers green tea over coffee, and the printer is broken again.",
    ]
    together = model.encode(texts)
    in_halves = np.concatenate([model.encode(texts[::2]), model.encode(texts[1::2])])
    in_halves = in_halves[np.argsort(np.r_[0 : len(texts) : 2, 1 : len(texts) : 2])]
    for i, text in enumerate(texts):
        alone = model.encode([text])[0]
        assert _same_vector(together[i], alone), text
        assert _same_vector(in_halves[i], alone), text


def test_attention_row_maxima_are_numpys_for_every_length() -> None:
    """A short text's attention scores take their row maxima a column at a time: the same
    numbers as numpy's reduction, on both sides of the length where the two ways meet."""
    rng = np.random.default_rng(34)
    for length in (1, 2, 3, 30, 48, 49, 128):
        scores = rng.standard_normal((2, 12, length, length)).astype(np.float32)
        expected = scores.max(-1, keepdims=True)
        assert np.array_equal(sentence_model._row_max(scores), expected), length


def test_a_prompt_is_embedded_without_a_float_copy_of_a_whole_weight_matrix(
    model: SentenceModel,
) -> None:
    """The int8 weights of a short input's products are turned into floats a block at a time,
    in a buffer that stays in the core's cache; the widest matrix as floats is 2.4 MB."""
    import tracemalloc

    whole_matrix = 384 * 1536 * 4
    model.encode(["warm-up"])
    # From 4 tokens on (a text of 2 or 3 takes blocks as tall as the tallest matrix is wide).
    for text in SHORT_TEXTS[1:4]:
        tracemalloc.start()
        try:
            model.encode([text])
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert peak < whole_matrix, (text, peak)


def test_bicycle_finds_bike_though_no_word_is_shared(vault: Path) -> None:
    with Memory(vault, refresh_interval_s=0) as memory:
        _events(memory, [BIKE, *DECOYS, *FILLER])
        ctx = memory.context("How did I get to work on my bicycle?", budget=300)
        long_term = ctx.text.split("## Relevant Long-Term Memory", 1)[1]
        assert BIKE in long_term
        # and words alone do not find it
    with Memory(vault, refresh_interval_s=0, meaning=False) as words_only:
        ctx = words_only.context("How did I get to work on my bicycle?", budget=300)
        assert BIKE not in ctx.text.split("## Relevant Long-Term Memory", 1)[1]


def test_meaning_lifts_among_word_matches(vault: Path) -> None:
    # Both share one word with the prompt ("office"); meaning decides which ranks first.
    with Memory(vault, refresh_interval_s=0) as memory:
        _events(
            memory,
            [
                "The office printer jams every day",
                "I cycled along the river to the office",
                *DECOYS,
                *FILLER,
            ],
        )
        memory.refresh(force=True)
        semantic = memory.semantic
        assert semantic is not None
        semantic.fill()
        prompt = "Which bicycle did I take to the office?"
        index = memory.indexer.index
        words = [h.text for h in index.search(prompt, limit=5, feedback=True)]
        assert set(words[:2]) == {
            "The office printer jams every day",
            "I cycled along the river to the office",
        }
        nearness = semantic.nearness(prompt)
        hits = index.search(prompt, limit=5, feedback=True, nearness=nearness)
        assert [h.text for h in hits][:2] == [
            "I cycled along the river to the office",
            "The office printer jams every day",
        ]


def test_vectors_are_kept_in_the_cache_and_not_made_twice(vault: Path) -> None:
    with Memory(vault, refresh_interval_s=0) as memory:
        _events(memory, [BIKE, *DECOYS])
        memory.context("bicycle", budget=500)
        semantic = memory.semantic
        assert semantic is not None
        stats = semantic.stats()
        assert stats["vectors"] == stats["events"] >= 5  # the template's example events too
    folder = Locations.for_vault(vault).vectors_dir
    assert _saved(folder) == stats["vectors"]
    with Memory(vault, refresh_interval_s=0) as again:
        semantic = again.semantic
        assert semantic is not None
        assert semantic.pending == 0  # every one found in the cache
        assert semantic.fill() == 0


def test_an_unreadable_vector_cache_is_made_again(vault: Path) -> None:
    with Memory(vault, refresh_interval_s=0) as memory:
        _events(memory, [BIKE, *DECOYS])
        memory.context("bicycle", budget=500)
    folder = Locations.for_vault(vault).vectors_dir
    (folder / "vectors.table").write_bytes(b"not a table")
    with Memory(vault, refresh_interval_s=0) as again:
        ctx = again.context("How did I get to work on my bicycle?", budget=500)
        assert BIKE in ctx.text
        assert again.semantic is not None and again.semantic.pending == 0
    with Memory(vault, refresh_interval_s=0) as third:  # saved whole again
        assert third.semantic is not None and third.semantic.pending == 0


def test_an_edited_or_deleted_event_leaves_its_old_meaning_behind(vault: Path) -> None:
    with Memory(vault, refresh_interval_s=0) as memory:
        _events(memory, [BIKE, *DECOYS, *FILLER])
        memory.context("bicycle", budget=500)
        stm = vault / "memory" / "short_term.md"
        text = stm.read_text(encoding="utf-8")
        stm.write_text(text.replace(BIKE, "I took the bus to the office"), encoding="utf-8")
        ctx = memory.context("How did I get to work on my bicycle?", budget=300)
        assert BIKE not in ctx.text
        semantic = memory.semantic
        assert semantic is not None
        near = semantic.nearness("bicycle", nearest=3)
        assert all("bike" not in key for key in near)


def test_reading_the_events_keeps_the_tables_the_first_context_would_read(vault: Path) -> None:
    """Index.events() keeps each segment's key -> number table on the way: the same tables a
    fresh reader builds at its first context, with an edited event at its new place only."""
    with Memory(vault, refresh_interval_s=0, meaning=False) as memory:
        for text in [BIKE, *DECOYS, *FILLER]:  # a sync each: several segments
            memory.remember(text)
            memory.refresh(force=True)
        stm = vault / "memory" / "short_term.md"
        text = stm.read_text(encoding="utf-8")
        stm.write_text(text.replace(BIKE, "I took the bus to the office"), encoding="utf-8")
        memory.refresh(force=True)
        directory = memory.locations.index_dir
    reading, fresh = Index(directory, writable=False), Index(directory, writable=False)
    try:
        events = reading.events()
        keys = [key for key, _, _ in events]
        assert len(keys) == len(set(keys))  # the edited event once, at its new place
        assert not any(BIKE in text for _, text, _ in events)
        assert len(reading._event_tables) > 1  # a table per segment, read on the way
        assert reading._event_docnums(keys) == fresh._event_docnums(keys)
        assert len(fresh._event_docnums(keys)) == len(keys)
    finally:
        reading.close()
        fresh.close()


def test_without_the_model_the_search_goes_on_by_words(
    vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    missing = tmp_path / "no_such_model.onnx"
    monkeypatch.setattr(sentence_model, "MODEL_FILE", missing)
    with caplog.at_level(logging.WARNING), Memory(vault, refresh_interval_s=0) as memory:
        _events(memory, [BIKE, *DECOYS, *FILLER])
        ctx = memory.context("Which bike did I ride to the office?", budget=500)
        assert BIKE in ctx.text  # found by its words
        assert memory.semantic is None
        memory.context("and the bicycle?", budget=500)
    warnings = [r.getMessage() for r in caplog.records if "sentence model" in r.getMessage()]
    assert len(warnings) == 1  # said once, not at every context
    assert warnings[0].startswith(f"{missing}: the sentence model cannot be read")
    assert "pip install" in warnings[0] and "\n" not in warnings[0]


def test_the_model_ships_inside_the_package_and_passes_its_sha256_check() -> None:
    """The weights are brainiac's own files, not another package's (a release deleted from
    PyPI cannot take them away), and they are the file the pinned SHA-256 names."""
    assert sentence_model.MODEL_FILE.is_relative_to(Path(brainiac.__file__).parent)
    data = sentence_model.MODEL_FILE.read_bytes()
    assert hashlib.sha256(data).hexdigest() == sentence_model._SHA256
    notice = (sentence_model.MODEL_FILE.parent / "NOTICE").read_text(encoding="utf-8")
    assert sentence_model._SHA256 in notice and "Apache License" in notice
    license_text = (sentence_model.MODEL_FILE.parent / "LICENSE").read_text(encoding="utf-8")
    assert "Apache License" in license_text and "Version 2.0" in license_text


def _damaged_copy(tmp_path: Path) -> Path:
    """The shipped model file, copied, with one byte of its weights changed."""
    copy = tmp_path / "all-MiniLM-L6-v2-int8.onnx"
    data = bytearray(sentence_model.MODEL_FILE.read_bytes())
    data[len(data) // 2] ^= 0x01
    copy.write_bytes(bytes(data))
    return copy


def test_a_damaged_or_missing_model_file_is_refused_in_one_line(tmp_path: Path) -> None:
    damaged = _damaged_copy(tmp_path)
    with pytest.raises(ModelUnavailable) as refused:
        SentenceModel(damaged)
    message = str(refused.value)
    assert message.startswith(f"{damaged}: not the sentence model brainiac was built for")
    assert "SHA-256" in message and "pip install" in message and "\n" not in message
    with pytest.raises(ModelUnavailable) as missing:
        SentenceModel(tmp_path / "gone.onnx")
    message = str(missing.value)
    assert message.startswith(f"{tmp_path / 'gone.onnx'}: the sentence model cannot be read")
    assert "No such file" in message and "pip install" in message and "\n" not in message


def _threads_after_numpy(setup: str, environ: dict[str, str]) -> int:
    code = f"{setup}; import os, numpy; print(len(os.listdir('/proc/self/task')))"
    out = subprocess.run(
        [sys.executable, "-c", code], env=environ, capture_output=True, text=True, check=True
    )
    return int(out.stdout)


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="counts threads in /proc")
def test_the_brainiac_command_does_its_matrix_products_on_one_thread() -> None:
    clean = {k: v for k, v in os.environ.items() if not k.endswith("_NUM_THREADS")}
    setup = "from brainiac.interfaces import entry; entry.one_matrix_thread()"
    assert _threads_after_numpy(setup, clean) == 1
    if (os.cpu_count() or 1) > 1:  # without it OpenBLAS starts one per core
        assert _threads_after_numpy("pass", clean) > 1
        # A count the person chose is theirs.
        assert _threads_after_numpy(setup, {**clean, "OPENBLAS_NUM_THREADS": "2"}) == 2


def test_turning_meaning_off_in_the_config_is_words_only(vault: Path) -> None:
    config = vault / ".brainiac" / "config.toml"
    config.write_text(
        config.read_text(encoding="utf-8").replace("# meaning = true", "meaning = false"),
        encoding="utf-8",
    )
    with Memory(vault, refresh_interval_s=0) as memory:
        _events(memory, [BIKE, *DECOYS, *FILLER])
        assert memory.semantic is None
        ctx = memory.context("How did I get to work on my bicycle?", budget=300)
        assert BIKE not in ctx.text.split("## Relevant Long-Term Memory", 1)[1]
    assert not Locations.for_vault(vault).vectors_dir.exists()


@pytest.mark.parametrize(
    "made_by",
    [
        "some-other-model",
        # the same weights, but a tokenizer that dropped spacing marks: "हिंदी" lost its vowels
        "all-MiniLM-L6-v2/int8-1",
    ],
)
def test_vectors_of_another_model_are_not_used(
    tmp_path: Path, model: SentenceModel, made_by: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "vectors"
    events = [("k1", "a bike", "user"), ("k2", "हिंदी भाषा", "user")]
    with monkeypatch.context() as patch:
        patch.setattr(semantic_mod, "MODEL_ID", made_by)
        first = SemanticIndex(folder, lambda: model)
        first.known(events)
        assert first.fill() == 2
        first.save()
    second = SemanticIndex(folder, lambda: model)
    second.known(events)
    assert second.pending == 2


def test_nearness_is_scaled_over_all_events_and_cut_to_the_nearest(
    tmp_path: Path, model: SentenceModel
) -> None:
    semantic = SemanticIndex(tmp_path / "v", lambda: model)
    semantic.known([(f"k{i}", t, "user") for i, t in enumerate([BIKE, *DECOYS])])
    semantic.fill()
    near = semantic.nearness("bicycle", nearest=2)
    assert len(near) == 2
    assert near["k0"] == pytest.approx(1.0)
    everything = semantic.nearness("bicycle", nearest=100)
    assert min(everything.values()) == pytest.approx(0.0)
    semantic.update([], ["k0"])
    assert "k0" not in semantic.nearness("bicycle")


def test_nearness_among_some_events_is_theirs_as_if_alone(
    tmp_path: Path, model: SentenceModel
) -> None:
    # A project's events in a vault shared with others (project_search.own_event_keys): the
    # nearest of them, scaled among them, as in an index holding only them.
    texts = [BIKE, *DECOYS]
    mine = {f"k{i}" for i in range(0, len(texts), 2)}
    shared = SemanticIndex(tmp_path / "shared", lambda: model)
    shared.known([(f"k{i}", t, "user") for i, t in enumerate(texts)])
    shared.fill()
    alone = SemanticIndex(tmp_path / "alone", lambda: model)
    alone.known([(f"k{i}", t, "user") for i, t in enumerate(texts) if f"k{i}" in mine])
    alone.fill()
    for nearest in (2, 100):
        among = shared.nearness("bicycle", nearest=nearest, among=frozenset(mine))
        assert among == pytest.approx(alone.nearness("bicycle", nearest=nearest), abs=1e-6)


def test_each_scopes_speakers_and_rows_are_found_once_while_prompts_go_from_scope_to_scope(
    tmp_path: Path, model: SentenceModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A daemon asked from two projects in turn: each project's speakers (taken out of the
    # prompt) and its events' rows are found once, not again each time the project changes,
    # and each nearness is what it was the first time.
    texts = [BIKE, *DECOYS]
    semantic = SemanticIndex(tmp_path / "v", lambda: model)
    semantic.known([(f"k{i}", t, "Anna" if i % 2 else "Ben") for i, t in enumerate(texts)])
    semantic.fill()
    made: list[int] = []
    names_pattern = semantic_mod._names_pattern

    def counting(names: Any) -> Any:
        made.append(1)
        return names_pattern(names)

    monkeypatch.setattr(semantic_mod, "_names_pattern", counting)
    scopes = [frozenset(f"k{i}" for i in range(j, len(texts), 2)) for j in (0, 1)]
    first = [semantic.nearness("Anna's bicycle", among=among) for among in scopes]
    assert len(made) == 2
    rows = [semantic._live_rows(among)[0] for among in scopes]
    again = [semantic.nearness("Anna's bicycle", among=among) for among in scopes]
    assert len(made) == 2
    assert again == first
    assert [semantic._live_rows(among)[0] for among in scopes] == rows
    assert all(semantic._live_rows(a)[0] is r for a, r in zip(scopes, rows, strict=True))


def test_many_vectors_are_compared_in_two_halves_to_the_same_cosines(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rng = np.random.default_rng(7)
    count = 8 * 1024 + 777  # above the two-thread threshold, not a whole number of slices
    matrix = rng.integers(-127, 128, (count + 100, 384), dtype=np.int8)  # room to grow, unused
    scales = rng.random(count + 100, dtype=np.float32)
    query = rng.random(384, dtype=np.float32)
    expected = (matrix[:count].astype(np.float64) @ query) * scales[:count]
    assert count > semantic_mod._HALVES_ABOVE
    halves = semantic_mod._cosines(matrix, scales, count, query)
    monkeypatch.setattr(semantic_mod, "_HALVES_ABOVE", 10**9)
    one_thread = semantic_mod._cosines(matrix, scales, count, query)
    assert halves.shape == (count,)
    np.testing.assert_array_equal(halves, one_thread)
    np.testing.assert_allclose(halves, expected, rtol=1e-5, atol=1e-2)


def test_a_scopes_cosines_are_made_from_the_slices_holding_its_rows_only(
    tmp_path: Path, model: SentenceModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A project's nearness in a vault shared with others (or the live rows among stale ones)
    compares the prompt only with the slices of vectors that hold its rows, each slice as the
    whole scan makes it: the cosines are the whole scan's bit for bit, the last rows' too (a
    gather would sum those past a multiple of four in another order)."""
    slice_rows = 8  # slices of a few rows, so that a few texts fill three of them
    monkeypatch.setattr(semantic_mod, "_SLICE", slice_rows)
    texts = [f"Event {i}: the {i % 7} crates reached dock {i % 11}" for i in range(2 * slice_rows)]
    texts += ["I rode my bike to work", "Anna prefers green tea", "The printer is broken"]
    semantic = SemanticIndex(tmp_path / "v", lambda: model)
    semantic.known([(f"k{i}", t, "user") for i, t in enumerate(texts)])
    semantic.fill()
    store = semantic._store
    matrix, scales, count = store.rows, store.scales, store.count
    assert count == len(texts) and count % 4 == 3
    read: list[slice] = []

    class Recorded:
        """The rows, with a note of each slice read."""

        shape = matrix.shape

        def __getitem__(self, rows: slice) -> Any:
            read.append(rows)
            return matrix[rows]

    # A project's nearness: only the slices that hold its events' vectors are read.
    mine = [0, 1, 2, count - 1]
    holding = {
        int(r) // slice_rows * slice_rows
        for r in store.rows_of([semantic_mod.text_digest(texts[i]) for i in mine])
    }
    with monkeypatch.context() as recorded:
        recorded.setattr(VectorStore, "rows", property(lambda _: Recorded()))
        near = semantic.nearness("bicycle", among=frozenset(f"k{i}" for i in mine))
    assert set(near) == {f"k{i}" for i in mine}
    assert {r.start for r in read} == holding and len(holding) < 3
    # Each slice made as the whole scan makes it: the same cosines bit for bit.
    query = model.encode(["How did I get to the office on my bicycle?"])[0]
    whole = semantic_mod._cosines(matrix, scales, count, query)
    rows = np.array([count - 1, 5, count - 3, 7, 5])  # the first slice and the last: not the middle
    read.clear()
    scoped = semantic_mod._cosines(Recorded(), scales, count, query, rows)
    assert scoped.tobytes() == whole[rows].tobytes()
    assert sorted(r.start for r in read) == [0, 2 * slice_rows]


def test_the_cosines_do_not_wait_for_their_helper_thread_to_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """On a busy machine a new thread may not run for a while: the caller makes every slice
    itself meanwhile, the same cosines, and the helper, once it runs, finds none left."""
    rng = np.random.default_rng(11)
    count = 8 * 1024 + 777
    matrix = rng.integers(-127, 128, (count, 384), dtype=np.int8)
    scales = rng.random(count, dtype=np.float32)
    query = rng.random(384, dtype=np.float32)
    with monkeypatch.context() as one_thread:
        one_thread.setattr(semantic_mod, "_HALVES_ABOVE", 10**9)
        expected = semantic_mod._cosines(matrix, scales, count, query)
    start = _thread.start_new_thread
    held: list[tuple[Any, tuple[Any, ...]]] = []  # threads asked for, not yet running

    def held_back(function: Any, args: tuple[Any, ...], *rest: Any) -> int:
        held.append((function, args))
        return 0

    go, done = threading.Event(), threading.Event()
    found: list[Any] = []

    def caller() -> None:
        go.wait()
        found.append(semantic_mod._cosines(matrix, scales, count, query))
        done.set()

    threading.Thread(target=caller, daemon=True).start()
    with monkeypatch.context() as busy:
        busy.setattr(_thread, "start_new_thread", held_back)
        busy.setattr(threading, "_start_new_thread", held_back)
        go.set()
        finished_alone = done.wait(timeout=20)
    for function, args in held:  # now they run (a caller waiting for one is let go)
        start(function, args)
    assert done.wait(timeout=20)
    assert finished_alone, "the cosines waited for the helper thread to run"
    assert len(held) == 1
    np.testing.assert_array_equal(found[0], expected)


def test_speakers_names_are_not_what_a_prompt_means(tmp_path: Path, model: SentenceModel) -> None:
    semantic = SemanticIndex(tmp_path / "v", lambda: model)
    semantic.known(
        [
            ("k0", "Thanks, Melanie! Bye for now.", "Caroline"),
            ("k1", "I signed up for a pottery class yesterday.", "Melanie"),
            ("k2", "The bus was late again.", "Caroline"),
        ]
    )
    semantic.fill()
    near = semantic.nearness("What hobby did Melanie's friend say she took up?", nearest=1)
    assert list(near) == ["k1"]
    # A prompt that is nothing but a speaker's name means nothing to compare.
    assert semantic.nearness("melanie") == {}


def test_the_events_read_from_the_index_hold_each_speaker_once(vault: Path) -> None:
    """Index.events() unpickles each event's stored fields apart: the roles it hands on are
    one string a speaker, so that the copies are never all alive at once in a large vault."""
    stm = vault / "memory" / "short_term.md"
    lines = [
        f"- 2026-11-0{1 + i % 9}T10:00 **{('Caroline', 'Melanie')[i % 2]}** (s1): line {i} ^e-{i}"
        for i in range(40)
    ]
    stm.write_text(stm.read_text(encoding="utf-8") + "\n".join(lines) + "\n", "utf-8")
    with Memory(vault, refresh_interval_s=0, meaning=False) as memory:
        memory.refresh(force=True)
        directory = memory.locations.index_dir
    index = Index(directory, writable=False)
    try:
        roles = [role for _, _, role in index.events() if role in ("Caroline", "Melanie")]
    finally:
        index.close()
    assert len(roles) == 40
    assert len({id(role) for role in roles}) == 2


def test_a_speaker_is_held_once_however_many_events_it_speaks(tmp_path: Path) -> None:
    """The index hands each event's role as a string of its own (its stored fields are read
    apart): a large vault's hundreds of thousands of events would hold as many copies of a
    few speakers' names."""
    semantic = SemanticIndex(tmp_path / "v", read_only=True)
    names = ("Caroline", "Melanie")
    semantic.known(
        (f"k{i}", f"line {i}", "".join(list(names[i % 2]))) for i in range(1000)
    )  # a join makes a new string each time, as unpickling does
    assert semantic._events.names == ["", "Caroline", "Melanie"]
    assert semantic._events.speakers_of([f"k{i}" for i in range(0, 1000, 2)]) == {"Caroline"}


def _chat_keys(count: int) -> list[str]:
    """Keys as a chat import's events have them (a note's path, then the event's id)."""
    return [f"chats/2026-11/conversation-{i // 7:05d}.md#e-{i % 7}" for i in range(count)]


def test_the_events_a_process_learns_take_a_few_bytes_each_beside_their_keys(
    tmp_path: Path,
) -> None:
    """A process that opens a built index learns every event (`known`): the digest of each
    one's text, its speaker, and, for those with no vector yet, a key to read it back by. At
    100,000 notes (350,200 events) these were dicts of Python ints and strings, over 150 bytes
    an event; held in arrays they take a pointer to the key the index holds already, its hash,
    the digest, a speaker's number and the waiting text's digest and key."""
    count = 20_000
    keys = _chat_keys(count)  # the caller's, as the index's key -> number tables hold them
    semantic = SemanticIndex(tmp_path / "v", texts_of=lambda wanted: {})
    events = (
        (key, f"line {i} of the chat", ("Caroline", "Melanie")[i % 2]) for i, key in enumerate(keys)
    )
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        semantic.known(events)
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert semantic.stats() == {"events": count, "pending": count, "vectors": 0}
    assert kept / count < 56, f"{kept / count:.0f} bytes an event"


def test_opening_an_index_digests_each_text_as_it_is_read(vault: Path) -> None:
    """Which events exist is read from the index once on opening: each event's text is
    digested as its stored fields are read and let go, so no list of every event's text is
    made (at 100,000 notes its heap stayed, tens of MB past the 150 MB a daemon may take)."""
    long = " and then".join(f" a long day {i}" for i in range(200))  # 4 KB a text
    stm = vault / "memory" / "short_term.md"
    lines = [f"- 2026-11-01T10:00 **user** (s1): {i}{long} ^e-{i}" for i in range(150)]
    stm.write_text(stm.read_text(encoding="utf-8") + "\n".join(lines) + "\n", "utf-8")
    with Memory(vault, refresh_interval_s=0, meaning=False) as memory:
        memory.refresh(force=True)
        directory = memory.locations.index_dir
    index = Index(directory, writable=False)
    semantic = SemanticIndex(vault / "v", texts_of=index.event_texts)
    try:
        tracemalloc.start()
        try:
            semantic.known(index.each_event())
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert semantic.pending >= 150
        texts = sum(len(t) for _, t, _ in index.events())
    finally:
        index.close()
    assert texts > 500_000
    assert peak < texts / 4, f"{peak} bytes at the peak, for {texts} bytes of texts"


def test_memories_that_say_the_same_make_room_for_others(
    tmp_path: Path, model: SentenceModel
) -> None:
    texts = [
        "I signed up for a pottery class yesterday.",
        "The pottery class was so relaxing, I love it.",
        "I made a bowl in my pottery class!",
        "We went camping in the mountains with the kids.",
    ]
    semantic = SemanticIndex(tmp_path / "v", lambda: model)
    semantic.known([(f"k{i}", t, "Melanie") for i, t in enumerate(texts)])
    semantic.fill()
    order = semantic.diversified([*texts, ""], [1.0, 0.95, 0.92, 0.88, 0.9])
    assert order[0] == 0  # the best stays first
    assert order.index(3) < order.index(2)  # camping before the third pottery turn
    assert sorted(order) == [0, 1, 2, 3, 4]
    assert order.index(4) < order.index(2)  # a text with no vector goes by its relevance


def _mmr_over_all(gain: np.ndarray, known: list[int], vectors: np.ndarray) -> list[int]:
    """Maximal marginal relevance over every text at each step, texts without a vector
    included (as `diversified` placed them): what `_mmr_order` must give."""
    count = len(gain)
    similar = np.zeros((count, count), np.float32)
    if known:
        similar[np.ix_(known, known)] = vectors @ vectors.T
    closest = np.zeros(count, np.float32)
    value = np.empty(count, np.float32)
    order = []
    for _ in range(count):
        np.multiply(closest, 1.0 - semantic_mod._RELEVANCE_SHARE, out=value)
        np.subtract(gain, value, out=value)
        i = int(np.argmax(value))
        order.append(i)
        np.maximum(closest, similar[i], out=closest)
        closest[i] = np.inf
    return order


def test_texts_without_a_vector_are_placed_as_when_every_text_was_compared() -> None:
    rng = np.random.default_rng(5)
    for trial in range(400):
        count = int(rng.integers(1, 40))
        known = sorted(int(i) for i in np.flatnonzero(rng.random(count) < 0.6))
        vectors = rng.standard_normal((len(known), 8)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        if len(known) > 2:
            vectors[1] = vectors[0]  # the same text twice
        # Ties on purpose: equal relevances, between texts with and without a vector too.
        relevance = rng.choice([0.0, 0.3, 0.5, 0.8, 1.0], count).tolist()
        if trial % 2:
            relevance = rng.random(count).round(1).tolist()
        best = max(max(relevance), 1e-9)
        for gain in (
            semantic_mod._RELEVANCE_SHARE * np.asarray(relevance, np.float32) / best,
            semantic_mod._RELEVANCE_SHARE * np.asarray(relevance) / np.float64(best),
        ):
            assert semantic_mod._mmr_order(gain, known, vectors) == _mmr_over_all(
                gain, known, vectors
            )


def test_a_prompt_asked_again_is_not_embedded_again(tmp_path: Path, model: SentenceModel) -> None:
    calls: list[int] = []

    class Counting:
        def encode(self, texts: list[str]) -> object:
            calls.append(len(texts))
            return model.encode(texts)

    semantic = SemanticIndex(tmp_path / "v", lambda: Counting())  # type: ignore[arg-type, return-value]
    semantic.known([("k0", BIKE, "user"), ("k1", DECOYS[0], "user")])
    semantic.fill()
    embedded = len(calls)
    first = semantic.nearness("bicycle")
    assert semantic.nearness("bicycle") == first
    assert len(calls) == embedded + 1  # the second ask used the kept vector
    semantic.nearness("tea")
    assert len(calls) == embedded + 2


def test_fill_with_a_time_limit_leaves_the_rest_for_later(
    tmp_path: Path, model: SentenceModel
) -> None:
    # A batch and a few texts more, no more: each text is embedded by the real model, whose
    # time a machine shared with other work multiplies.
    n = semantic_mod._FILL_BATCH + 16
    semantic = SemanticIndex(tmp_path / "v", lambda: model)
    semantic.known([(f"k{i}", f"event number {i} about topic {i % 7}", "user") for i in range(n)])
    made = semantic.fill(seconds=0.0)  # one batch, then the clock says stop
    assert 0 < made < n
    assert semantic.pending == n - made
    assert semantic.fill() == n - made
    assert semantic.pending == 0


def test_attached_follows_the_indexer(vault: Path) -> None:
    with Memory(vault, refresh_interval_s=0) as memory:
        memory.refresh(force=True)
        examples = memory.indexer.index.events()  # the template's example events
        _events(memory, DECOYS)
        memory.refresh(force=True)
        semantic = semantic_mod.attached(memory.indexer, memory.locations.vectors_dir)
        assert semantic is not None
        assert semantic.stats()["events"] == len(examples) + len(DECOYS)  # read from the index
        memory.remember(BIKE)
        memory.refresh(force=True)
        assert semantic.stats()["events"] == len(examples) + len(DECOYS) + 1  # told by the sync


def test_the_daemon_makes_vectors_in_the_background_and_answers_by_meaning(
    tmp_path: Path,
) -> None:
    vault = tmp_path / "vault"
    run_cli("init", str(vault), check=True)
    for text in [BIKE, *DECOYS, *FILLER]:
        run_cli("--vault", str(vault), "remember", text, check=True)
    with run_daemon(vault, tmp_path / "daemon.log") as proc:
        folder = Locations.for_vault(vault).vectors_dir
        answer = ""
        for _ in range(300):  # the daemon starts, embeds and answers over its socket
            done = run_cli(
                "--vault",
                str(vault),
                "context",
                "--prompt",
                "my bicycle commute",
                "--budget",
                "300",
            )
            answer = done.stdout
            if _saved(folder) and BIKE in answer.split("Long-Term", 1)[-1]:
                break
        assert BIKE in answer.split("## Relevant Long-Term Memory", 1)[1]
        assert _saved(folder)
        status = ""
        for _ in range(300):  # the status file follows within a pass of the daemon's loop
            status = run_cli("--vault", str(vault), "status", check=True).stdout
            if re.search(r"recall by meaning: (\d+) of \1 events embedded\n", status):
                break
        assert re.search(r"recall by meaning: (\d+) of \1 events embedded\n", status), status
        stop(proc)  # and it exits cleanly


def test_a_daemon_whose_model_file_is_damaged_answers_by_words_and_says_so_once(
    tmp_path: Path,
) -> None:
    """An installation whose model file was damaged (a copy of the package, its file changed by
    one byte): the daemon starts, answers by words, and its log says why in one line."""
    source = tmp_path / "installed"
    package = Path(brainiac.__file__).parent
    shutil.copytree(
        package,
        source / "brainiac",
        ignore=shutil.ignore_patterns("__pycache__", "*.onnx", "vault_template"),
    )
    model_dir = source / "brainiac" / "search" / "minilm"
    _damaged_copy(model_dir)
    env = {"PYTHONPATH": str(source)}
    vault = tmp_path / "vault"
    run_cli("init", str(vault), check=True)
    with Memory(vault, meaning=False) as memory:
        _events(memory, [BIKE, *DECOYS, *FILLER])
    log = tmp_path / "daemon.log"
    with run_daemon(vault, log, env=env) as proc:
        answer = run_cli(
            "--vault", str(vault), "context", "--prompt", "which bike", "--budget", "300", env=env
        )
        assert answer.returncode == 0, answer.stderr
        assert BIKE in answer.stdout.split("## Relevant Long-Term Memory", 1)[1]
        status = run_cli("--vault", str(vault), "status", check=True, env=env).stdout
        assert "running" in status and "recall by meaning" not in status
        stop(proc)
    said = [line for line in log.read_text().splitlines() if "sentence model" in line]
    assert len(said) == 1, log.read_text()
    assert str(model_dir / "all-MiniLM-L6-v2-int8.onnx") in said[0]
    assert "SHA-256" in said[0] and "words only" in said[0] and "pip install" in said[0]


def test_a_fill_looks_for_waiting_calls_every_few_texts(
    tmp_path: Path, model: SentenceModel
) -> None:
    semantic = SemanticIndex(tmp_path / "v", lambda: model)
    semantic.known([(f"k{i}", f"event number {i} about topic {i % 7}", "user") for i in range(100)])
    seen: list[int] = []
    assert semantic.fill(before_batch=lambda: seen.append(semantic.stats()["vectors"])) == 100
    # Before each part of at most 8 texts (a tenth of a second of the model's time), so a call
    # waits for at most one part.
    assert seen[0] == 0
    assert all(0 < b - a <= 8 for a, b in itertools.pairwise(seen))
    assert 100 - seen[-1] <= 8


def test_no_batch_is_embedded_while_a_call_is_answered(
    tmp_path: Path, model: SentenceModel
) -> None:
    semantic = SemanticIndex(tmp_path / "v", lambda: model)
    # Two parts (semantic.py's _ENCODE_AT_ONCE texts each): the second starts after the call as
    # well, and the model's work, many times longer on a shared machine, stays small.
    n = 2 * semantic_mod._ENCODE_AT_ONCE
    semantic.known([(f"k{i}", f"event number {i} about topic {i % 7}", "user") for i in range(n)])
    caught_up: list[int] = []
    embedder = Embedder(semantic, caught_up.append)
    try:
        with embedder.answering():
            embedder.start()
            wait_for(lambda: embedder.held, "the embedder to wait for the call")
            assert semantic.stats()["vectors"] == 0  # the call has the cores to itself
        wait_for(lambda: caught_up == [n], "the vectors, once the call is answered")
        assert semantic.pending == 0
    finally:
        embedder.stop()


def test_a_call_during_a_first_fill_is_answered_by_the_daemon_before_the_fill_ends(
    tmp_path: Path,
) -> None:
    vault = tmp_path / "vault"
    load_benchmark("generate_vault").generate(vault, 150, 1)  # about 500 events to embed
    with run_daemon(vault, tmp_path / "daemon.log") as proc:
        event = {"session_id": "s", "hook_event_name": "UserPromptSubmit", "prompt": "the budget"}
        done = run_cli("--vault", str(vault), "hook", "user-prompt-submit", input=json.dumps(event))
        assert done.returncode == 0, done.stderr
        answered = daemon_socket.stats(
            daemon_socket.socket_path(str(Locations.for_vault(vault).runtime))
        )
        assert answered["stats"]["answered"] == 1
        # The fill goes on (beside the daemon, committed a slice at a time: fill_beside.py).
        index = Index(Locations.for_vault(vault).index_dir, writable=False)
        events = len(index.events())
        index.close()
        assert _saved(Locations.for_vault(vault).vectors_dir) < events
        stop(proc)
