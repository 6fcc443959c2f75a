"""Recall by meaning: a vector for each indexed event, and the events nearest a prompt.

A question rarely uses the words of the memory that answers it ("How many children does
Melanie have?" and "my son got into an accident"). The sentence model (sentence_model.py) puts
texts that mean the same near each other; the context's search (index.py `_with_feedback`) adds
each event's closeness to the prompt to its BM25F score, so words still lead and meaning lifts
what words missed (docs/architecture.md, "Recall by meaning").

The vectors are a cache, like the index: kept in the cache directory beside it (`vectors/`), by the
digest of the event's text, so moving an event between files, a reindex or a restart embeds nothing
again; any of it can be deleted and is made again from the vault. Which events exist is the index's
to say: the indexer reports what it adds and deletes (`update`), and a process that finds the index
already built reads the events from it once (`known`). Embedding is the slow part (minutes for a
large vault: docs/benchmarks.md, "Ingest"), so it is done apart from the edit (`fill`): the daemon's
embedder thread fills after each sync (runtime/embedder.py), a library caller before its context;
the search meanwhile uses the vectors there are, and an event without one is found by its words
only.

Stored as int8 with a scale per vector (388 bytes an event: 17 MB at 44,854 events, the 10,000-note
vault; cosines within 0.01 of the float32 ones), in a file mapped into memory and appended to as
vectors are made (vector_store.py: crash-safe, a damaged file is made again). Up to SCAN_ALL_UP_TO
events the prompt is compared with every row in slices, so no float copy of the whole is ever made
(float16 rows would be converted slowly by numpy), or, for a project's events (`among`), with the
slices that hold them (`_cosines`); above it, with each row's signs first and only the likeliest
rows in full (`_sketched`). The texts that wait for their vector while a process
learns every event at once are read back from the index in batches rather than kept; the events
themselves (each one's key, text digest and speaker) are held in arrays (event_table.py), a few
tens of bytes an event rather than the hundred and more of dicts of Python objects. Thread-safe:
the daemon's socket threads search while its embedder fills.

One concept: the events' vectors and the nearness of a prompt to each.
"""

from __future__ import annotations

import _thread
import contextlib
import hashlib
import itertools
import logging
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from brainiac.core.heap import release_freed_memory
from brainiac.search.event_table import EventTable, Waiting
from brainiac.search.indexer import Indexer
from brainiac.search.sentence_model import DIMENSIONS, MODEL_ID, ModelUnavailable, SentenceModel
from brainiac.search.vector_store import VectorStore, sketch

log = logging.getLogger(__name__)

# The format before vector_store.py's: read once into the new files, then removed.
_LEGACY_FILES = ("vectors.npy", "vectors.scales.npy", "vectors.digests")
# After a write of the vectors failed (a full disk), fills wait this long before trying again:
# each try embeds a batch for nothing.
_RETRY_WRITE_S = 60.0
# Rows compared with the prompt at a time: their float32 copy (384 KB) stays in the core's
# cache for the product, with room to spare for what the product itself keeps there;
# each row's cosine is the same whatever the slice.
_SLICE = 256
# Rows above which the cosines are made on two threads (`_cosines`): below it, starting the
# helper thread costs what it saves.
_HALVES_ABOVE = 8192
_FILL_BATCH = 64  # texts read from the index at a time, between two looks at the clock
# Texts given to the model at a time: a daemon's call waits at most for the end of one short
# part (runtime/embedder.py), and the model's temporaries are those of a few hundred tokens, not
# of the thousand it would take at once (sentence_model.py), so a fill keeps less memory
# resident, for no more time per text.
_ENCODE_AT_ONCE = 8
# Maximal marginal relevance (`diversified`): how much a memory's relevance counts against its
# likeness to what is already placed. Mostly relevance: with more weight on difference the
# second-best memory about the asked thing gives way (docs/changelog.md, "History of the
# measurements").
_RELEVANCE_SHARE = 0.85
# The events whose nearness is handed to the search (the rest get none): more than a context
# shows (a 4,000-token context shows about 120 events); past that, weak likeness only lifts
# noise, and fewer take less time.
NEAREST = 200
# Events above which a prompt is not compared with every vector (`_sketched`): up to here every
# cosine is made (3 ms at 45,000 events, the 10,000-note vault), so contexts there are exact.
SCAN_ALL_UP_TO = 100_000
# Above it, the rows compared in full: the nearest by their signs (`_sketched`), and the farthest,
# for the nearness's bottom of the scale.
_SKETCH_NEAREST = 8_192
_SKETCH_FARTHEST = 1_024
_PROMPTS_KEPT = 32
# The scopes (sets of event keys) whose speakers and live rows are kept (_kept).
_AMONG_KEPT = 8
_T = TypeVar("_T")
_TEXTS_KEPT = 4096  # texts likeness compares: the titles of a few chats' notes


def attached(indexer: Indexer, folder: Path) -> SemanticIndex | None:
    """A SemanticIndex in `folder` that follows `indexer`'s index: it reads the indexed events
    from the index once, and every later sync tells it what changed (a full build replaces
    it all). None when the model cannot be had (semantic.py has logged why)."""
    semantic = SemanticIndex(folder, texts_of=indexer.index.event_texts)
    if not semantic.available:
        return None
    semantic.known(indexer.index.each_event())

    def told(added: list[tuple[str, str, str]], deleted: list[str], full: bool) -> None:
        if full:
            semantic.known(added)
        else:
            semantic.update(added, deleted)

    indexer.on_events_indexed = told
    return semantic


def text_digest(text: str) -> int:
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "little")


def _kept(memo: dict[int, tuple[Collection[str], _T]], among: Collection[str], value: _T) -> None:
    """`value` kept for `among` in `memo` (by its id; the entry holds `among`, so the id is not
    another's while it is kept), the oldest let go past _AMONG_KEPT; under the index's lock."""
    while len(memo) >= _AMONG_KEPT:
        del memo[next(iter(memo))]
    memo[id(among)] = (among, value)


def _names_pattern(names: Iterable[str]) -> re.Pattern[str]:
    """Any of `names` as a whole word, with a possessive: the longest first."""
    ordered = sorted((n for n in names if n.strip()), key=len, reverse=True)
    alternatives = "|".join(re.escape(n) for n in ordered)
    return re.compile(rf"\b(?:{alternatives})(?:'s|’s)?\b" if alternatives else r"(?!)", re.I)


def _cosines(matrix: Any, scales: Any, count: int, query: Any, rows: Any = None) -> Any:
    """The cosine of `query` with each of the first `count` rows, in order (no gather of the
    matrix); with `rows` (row numbers below `count`), with those rows, in their order. Above
    `_HALVES_ABOVE` rows, a helper thread shares the slices: numpy lets go of the GIL for each
    slice's conversion and product, so the two run on two cores.

    With `rows`, only the slices that hold one of them are made (a project's events among a
    shared vault's, rows whose text no event has any more left out), each the slice the whole
    scan makes: OpenBLAS sums a product's last rows past a multiple of four in another order
    than the others, so a gather of the rows would give other cosines in their last bits, and
    a context that differs from the whole scan's.

    The slices are shared, not split in halves: each thread takes the next one not taken, and
    the caller never waits for the helper to start. On a busy machine a new thread may not run
    for milliseconds; the caller then does every slice itself and waits at most for the one
    slice the helper is doing. Each slice is made the same way whichever thread makes it."""
    every = np.empty(count, np.float32)
    if rows is None:
        made: Any = range(0, count, _SLICE)
    else:
        holding = np.zeros((count + _SLICE - 1) // _SLICE, bool)
        holding[np.asarray(rows, np.intp) // _SLICE] = True
        made = (np.flatnonzero(holding) * _SLICE).tolist()
    starts = iter(made)  # taken one at a time by either thread
    failed: list[BaseException] = []

    def product(at: int) -> None:
        stop = min(at + _SLICE, count)
        every[at:stop] = matrix[at:stop].astype(np.float32) @ query

    if len(made) * _SLICE > _HALVES_ABOVE:
        # Held by the helper while it takes and makes a slice: once the caller has run out of
        # slices and holds it, every slice is made.
        busy = threading.Lock()

        def helper() -> None:
            try:
                while True:
                    with busy:
                        at = next(starts, None)
                        if at is None:
                            return
                        product(at)
            except BaseException as exc:  # re-raised in the caller's thread
                failed.append(exc)

        # Started without waiting for it to run (threading's start waits until the new thread
        # is scheduled); a thread per call, not a pool, so none is kept between prompts.
        _thread.start_new_thread(helper, ())
        try:
            for at in starts:
                product(at)
        finally:
            with busy:
                pass
        if failed:
            raise failed[0]
    else:
        for at in starts:
            product(at)
    if rows is not None:
        return every[rows] * scales[rows]
    every *= scales[:count]
    return every


def _sketched(
    matrix: Any, scales: Any, sketches: Any, rows: Any, query: Any, nearest: int
) -> tuple[Any, Any]:
    """For a large vault: the cosine of `query` with the live rows most likely to be nearest
    and farthest, as (positions in `rows`, cosines). Each row's signs (vector_store.py's
    sketch, 48 bytes a row against 384) are compared with the query's first: the rows that
    share the most signs are the nearest candidates, those sharing the fewest the farthest;
    only these rows' vectors are read (their pages of the mapped file) and compared in full.
    Approximate: a near row with unusually many differing signs can be missed."""
    query_sketch = sketch(query[None, :])[0]
    # Over every row in order (no gather), then picked by `rows`; each word's bit count added
    # as a column: numpy's sum along a six-wide axis took twice as long.
    differing = np.zeros(len(sketches), np.uint16)
    step = 65_536
    for at in range(0, len(sketches), step):
        counts = np.bitwise_count(np.bitwise_xor(sketches[at : at + step], query_sketch))
        total = counts[:, 0].astype(np.uint16)
        for word in range(1, counts.shape[1]):
            total += counts[:, word]
        differing[at : at + step] = total
    differing = differing[rows]
    near = max(_SKETCH_NEAREST, nearest)
    if near >= len(rows):
        return np.arange(len(rows)), _cosines_of(matrix, scales, rows, query)
    far = min(_SKETCH_FARTHEST, len(rows) - 1)
    positions = np.union1d(
        np.argpartition(differing, near)[:near],
        np.argpartition(-differing.astype(np.int32), far)[:far],
    )
    return positions, _cosines_of(matrix, scales, rows[positions], query)


def _cosines_of(matrix: Any, scales: Any, picked: Any, query: Any) -> Any:
    """The cosine of `query` with the rows numbered `picked`."""
    cosine = np.empty(len(picked), np.float32)
    for at in range(0, len(picked), _SLICE):
        part = picked[at : at + _SLICE]
        cosine[at : at + _SLICE] = (matrix[part].astype(np.float32) @ query) * scales[part]
    return cosine


def _mmr_order(gain: Any, known: list[int], vectors: Any) -> list[int]:
    """Maximal marginal relevance over texts of `gain` (float32, each text's share of the
    relevance), of which those numbered `known` (ascending) have `vectors` (unit rows): each
    next text the one whose gain less (1 - _RELEVANCE_SHARE) x its cosine with the closest
    placed text is the highest, the lowest number on a tie. Its cosine is never below 0 (a text
    unlike every placed one is placed by its gain).

    A text with no vector is like no other, so its value is its gain throughout: those are
    taken in the order of their gains, and only the texts with a vector are compared anew after
    each placing of one of them (the same float32 operations on each as over all of them: the
    same order).
    """
    order: list[int] = []
    # A text's value as the value array holds it, float32 (as `gain` is when made of floats).
    alone_value = gain.astype(np.float32)
    alone = sorted(set(range(len(gain))) - set(known), key=lambda i: (-float(alone_value[i]), i))
    next_alone = 0
    gain_known = gain[known]
    similar = vectors @ vectors.T
    # Each text's cosine with the nearest placed one; a placed text's is infinite, so that its
    # value is minus infinity and it is not picked again.
    closest = np.zeros(len(known), np.float32)
    value = np.empty(len(known), np.float32)
    left = len(known)
    stale = True
    while left or next_alone < len(alone):
        if left and stale:
            np.multiply(closest, 1.0 - _RELEVANCE_SHARE, out=value)
            np.subtract(gain_known, value, out=value)
            j = int(np.argmax(value))
            stale = False
        if next_alone < len(alone):
            i = alone[next_alone]
            mine = alone_value[i]
            if not left or mine > value[j] or (mine == value[j] and i < known[j]):
                order.append(i)
                next_alone += 1
                continue
        order.append(known[j])
        np.maximum(closest, similar[j], out=closest)
        closest[j] = np.inf
        left -= 1
        stale = True
    return order


class SemanticIndex:
    """The vectors of the indexed events' texts, in `folder`, and prompts' nearness to them.

    `model` makes the model when it is first needed (the default loads all-MiniLM-L6-v2);
    when it cannot be had, `available` turns False, the reason is logged once and the search
    goes on by words alone."""

    def __init__(
        self,
        folder: Path,
        model: Callable[[], SentenceModel] = SentenceModel,
        texts_of: Callable[[list[str]], Mapping[str, str]] | None = None,
        read_only: bool = False,
    ) -> None:
        self.folder = folder
        # Another process's vectors (the daemon's, read beside it: daemon_vectors.py): only
        # prompts are embedded here; the events' vectors are what its last commit holds.
        self.read_only = read_only
        self._make_model = model
        # Where the texts of `known` events are read back when their turn to be embedded comes
        # (the index), so that a first fill does not hold every event's text meanwhile; None:
        # they are kept.
        self._texts_of = texts_of
        self._model: SentenceModel | None = None
        self.unavailable = ""  # why there is no model, once that is known
        self._lock = threading.RLock()
        # the rows, mapped from disk
        self._store = VectorStore(folder, MODEL_ID, DIMENSIONS, read_only=read_only)
        self._events = EventTable()  # event key -> digest of its text, and its role
        self._checked = -1  # the table's version the waiting texts were last checked against
        self._texts: dict[int, str] = {}  # digest -> text, for those with no row yet
        self._waiting = Waiting()  # the same by an event's key, its text read back to embed
        self._write_failed = -float("inf")  # when writing the vectors last failed (monotonic)
        self._known = False  # every indexed event is in _events (see known())
        self._speakers: set[str] = set()  # the events' roles: who speaks (see nearness)
        self._speaker_names: re.Pattern[str] | None = None
        # By id(among): (among, the names of its events' speakers), _without_speakers for the
        # last few `among` asked (_AMONG_KEPT: a daemon asked from several projects in turn)
        self._speakers_among: dict[int, tuple[Collection[str], re.Pattern[str]]] = {}
        self._live: tuple[list[str], Any] | None = None  # (keys, rows) with a vector, cached
        # By id(among): (among, its (keys, rows)), _live_rows for the last few `among` asked
        self._live_among: dict[int, tuple[Collection[str], tuple[list[str], Any]]] = {}
        self._prompts: OrderedDict[str, Any] = OrderedDict()  # see _prompt_vector
        self._texts_seen: OrderedDict[str, Any] = OrderedDict()  # see likeness
        self._loaded = False
        # The files handed to a fill in a child process (fill_beside.py): read here meanwhile,
        # written by the child alone.
        self._beside = False

    # -- the model ---------------------------------------------------------------------------
    @property
    def available(self) -> bool:
        return self._get_model() is not None

    def _get_model(self) -> SentenceModel | None:
        if self._model is None and not self.unavailable:
            with self._lock:
                if self._model is None and not self.unavailable:
                    try:
                        self._model = self._make_model()
                    except ModelUnavailable as exc:
                        self.unavailable = str(exc)
                        log.warning("%s", exc)
        return self._model

    # -- which events exist ------------------------------------------------------------------
    def known(self, events: Iterable[tuple[str, str, str]]) -> None:
        """All the indexed events, as (key, text, role): what a process that opens a built
        index reads from it once (Index.each_event: a bounded piece of events at a time, each
        text digested and let go as it comes). Replaces what was reported before."""
        with self._lock:
            self._load()
            self._texts = {}
            self._events = EventTable.of(self._digested(events))
            self._waiting = Waiting()
            if self._texts_of is not None and not self.read_only:
                missing = np.flatnonzero(self._store.rows_of(self._events.digests) < 0)
                self._waiting = Waiting.of(self._events, missing)
            self._known = True
            self._live = None
        release_freed_memory()  # what reading every event's stored fields left in the heap

    def update(self, added: Iterable[tuple[str, str, str]], deleted: Iterable[str]) -> None:
        """Events the index added or changed, as (key, text, role), and the keys it deleted."""
        with self._lock:
            self._load()
            digested = list(self._digested(added))
            self._events.update(digested, deleted)
            if self._texts_of is not None and not self.read_only:
                # By key where the index can give the text back: a job that rewrites thousands
                # of notes must not leave all their texts in the daemon's heap until their turn.
                digests = np.fromiter((d for _, d, _ in digested), np.uint64, len(digested))
                missing = (self._store.rows_of(digests) < 0).tolist()
                self._waiting.add(
                    (d, k) for (k, d, _), m in zip(digested, missing, strict=True) if m
                )
            if self._beside:
                # No fill runs here to drop them while the child holds the files: `pending`
                # would count texts no event has any more, more than there are events.
                self._drop_dead_texts()
            self._live = None

    def _drop_dead_texts(self) -> None:
        """The texts waiting for a vector that no live event has any more (deleted or changed
        before it was embedded) wait no longer; a text two events share stays while one lives.
        Checked again only when the events changed."""
        if self._checked == self._events.version:
            return
        self._checked = self._events.version
        live = self._events.digests
        texts = np.fromiter(self._texts, np.uint64, len(self._texts))
        for digest in texts[~np.isin(texts, live)].tolist():
            del self._texts[digest]
        self._waiting.keep(np.isin(self._waiting.digests(), live))

    def _digested(self, events: Iterable[tuple[str, str, str]]) -> Iterable[tuple[str, int, str]]:
        """(key, digest of the text, role) of each of `events`, the speakers noted, and the
        texts with no vector kept where they cannot be read back from the index."""
        keep_texts = self._texts_of is None and not self.read_only
        for key, text, role in events:
            if role and role not in self._speakers:
                self._speakers.add(role)
                self._speaker_names = None
            digest = text_digest(text)
            if keep_texts and self._store.row_of(digest) is None:
                self._texts[digest] = text
            yield key, digest, role

    @property
    def pending(self) -> int:
        """Texts waiting for their vector. One whose event was deleted meanwhile counts until
        the next `fill` drops it (at once while a child fills): kept cheap, as the daemon's
        status asks every few seconds."""
        return len(self._texts) + len(self._waiting)

    # -- embedding ---------------------------------------------------------------------------
    def fill(
        self, seconds: float | None = None, before_batch: Callable[[], object] | None = None
    ) -> int:
        """Embed the events that have no vector yet: a batch at least, then more while
        `seconds` allows (None: all); how many were embedded. Nothing when there is no model.
        `before_batch` is called before each batch, without the lock (the daemon's embedder
        waits there for the calls being answered)."""
        if self.read_only or self._beside or (not self._texts and not self._waiting):
            return 0  # read without the lock: a stale answer is harmless
        if time.monotonic() - self._write_failed < _RETRY_WRITE_S:
            return 0
        started = time.monotonic()
        done = 0
        model = self._get_model()
        if model is None:
            return 0
        with self._lock:  # once a call, not a batch, and only when events changed meanwhile
            self._drop_dead_texts()
        while True:  # a batch at least, then as long as `seconds` allows
            batch = self._next_batch()
            if batch is None:
                break
            written = True  # a part's texts need no order: the model packs them (encode)
            for at in range(0, len(batch), _ENCODE_AT_ONCE):
                part = batch[at : at + _ENCODE_AT_ONCE]
                if before_batch is not None:
                    before_batch()
                written = self._embed(model, part)
                if not written:
                    break
                done += len(part)
            if not written or (seconds is not None and time.monotonic() - started >= seconds):
                break
        with self._lock:
            self._live = None  # the rows made now, for the next nearness
        if done > _FILL_BATCH:
            release_freed_memory()
        return done

    def _embed(self, model: SentenceModel, part: list[tuple[int, str]]) -> bool:
        """The vectors of `part`, (digest, text), added to the store; False when they could
        not be written."""
        vectors = model.encode([text for _, text in part])  # outside the lock: slow
        with self._lock:
            try:
                self._store.append([d for d, _ in part], vectors)
            except OSError as exc:  # a cache: the search goes on with the vectors it has
                self._write_failed = time.monotonic()
                log.warning("%s: the vectors could not be written (%s)", self.folder, exc)
                return False
            for digest, _ in part:
                self._texts.pop(digest, None)
            self._waiting.trim(self._store.rows_of)
        return True

    def _next_batch(self) -> list[tuple[int, str]] | None:
        """Up to _FILL_BATCH (digest, text) to embed, None when none waits. Texts waiting by
        their event's key are read back from the index; one whose text changed meanwhile (its
        new text waits under its new digest) or that went is dropped."""
        with self._lock:
            batch = list(itertools.islice(self._texts.items(), _FILL_BATCH))
            if batch:
                return batch
            self._waiting.trim(self._store.rows_of)
            waiting = self._waiting.head(_FILL_BATCH)
        if not waiting:
            return None
        assert self._texts_of is not None
        texts = self._texts_of([key for _, key in waiting])
        found = []
        gone = []
        with self._lock:
            for digest, key in waiting:
                text = texts.get(key)
                if text is not None and text_digest(text) == digest:
                    found.append((digest, text))
                else:
                    gone.append(digest)
            if gone:
                self._waiting.remove(gone)
        return found or self._next_batch()

    # -- nearness ----------------------------------------------------------------------------
    def nearness(
        self, prompt: str, nearest: int = NEAREST, among: Collection[str] | None = None
    ) -> dict[str, float]:
        """The `nearest` events closest in meaning to `prompt`, key -> nearness from 0 (the
        farthest of all the events) to 1 (the closest): the cosine, scaled over every event
        with a vector, so that a prompt close to nothing in particular still lifts its best
        the most. Empty when there is no model or no vector. `among`: only the events with
        these keys, nearest and scaled among themselves (a project's: as if alone)."""
        model = self._get_model()
        prompt = self._without_speakers(prompt, among)
        if model is None or not prompt.strip():
            return {}
        with self._lock:
            self._load()
            keys, rows = self._live_rows(among)
            # Rows are only ever added (a compaction makes new arrays): what these hold up to
            # `count` stays valid while the lock is let go for the model.
            matrix, scales, count = self._store.rows, self._store.scales, self._store.count
            sketches = self._store.sketches if len(rows) > SCAN_ALL_UP_TO else None
        if not keys:
            return {}
        query = self._prompt_vector(model, prompt)
        if sketches is not None:
            rows, cosine = _sketched(matrix, scales, sketches, rows, query, nearest)
            keys = [keys[i] for i in rows]
        elif len(rows) < count:
            cosine = _cosines(matrix, scales, count, query, rows)
        else:
            cosine = _cosines(matrix, scales, count, query)[rows]
        lo, hi = float(cosine.min()), float(cosine.max())
        if nearest < len(cosine):
            best = np.argpartition(-cosine, nearest)[:nearest]
        else:
            best = np.arange(len(cosine))
        spread = max(hi - lo, 1e-6)
        return {keys[i]: (float(cosine[i]) - lo) / spread for i in best}

    def _prompt_vector(self, model: SentenceModel, prompt: str) -> Any:
        """The prompt's vector, kept for the last `_PROMPTS_KEPT` prompts: an agent's prompt hook
        and its context tool often ask about the same prompt, and its embedding is most of what
        meaning costs a context."""
        with self._lock:
            vector = self._prompts.get(prompt)
            if vector is not None:
                self._prompts.move_to_end(prompt)
                return vector
        vector = model.encode([prompt])[0]
        with self._lock:
            self._prompts[prompt] = vector
            while len(self._prompts) > _PROMPTS_KEPT:
                self._prompts.popitem(last=False)
        return vector

    def likeness(self, text: str, others: Sequence[str]) -> list[float] | None:
        """The cosine of `text`'s vector with each of `others`' (the texts as given), None
        without a model. Each text's vector is kept (the last `_TEXTS_KEPT`): the jobs compare
        a new note's title with the same earlier titles run after run (continuing.py)."""
        model = self._get_model()
        if model is None:
            return None
        texts = [text, *others]
        with self._lock:
            missing = [t for t in dict.fromkeys(texts) if t not in self._texts_seen]
        made = model.encode(missing) if missing else []
        with self._lock:
            for t, vector in zip(missing, made, strict=True):
                self._texts_seen[t] = vector
            vectors = [self._texts_seen[t] for t in texts]
            for t in texts:
                self._texts_seen.move_to_end(t)
            while len(self._texts_seen) > _TEXTS_KEPT:
                self._texts_seen.popitem(last=False)
        return [float(np.dot(vectors[0], v)) for v in vectors[1:]]

    def diversified(self, texts: Sequence[str], relevance: Sequence[float]) -> list[int]:
        """An order of `texts` (best first by `relevance`) that lets through fewer texts that
        say what an earlier one said: maximal marginal relevance, each next text the one with
        the most of _RELEVANCE_SHARE x its relevance (as a share of the best) less the rest x
        its cosine with the closest text already placed. A text with no vector (a note, an
        event not embedded yet) is placed by its relevance alone.

        A question about several things ("What activities does Melanie partake in?") is
        answered by several memories, and the best-matching ones often tell the same thing
        (the pottery class, four times): a budget spent on them leaves out the camping trip."""
        count = len(texts)
        if count < 3:
            return list(range(count))
        with self._lock:
            self._load()
            store = self._store
            digests = np.fromiter((text_digest(t) for t in texts), np.uint64, count)
            rows = store.rows_of(digests)  # one lookup for them all, -1 where none
            known = [i for i, r in enumerate(rows.tolist()) if texts[i] and r >= 0]
            picked = rows[known]
            vectors = store.rows[picked].astype(np.float32) * store.scales[picked][:, None]
        best = max(max(relevance), 1e-9)
        gain = _RELEVANCE_SHARE * np.asarray(relevance, np.float32) / best
        if len(known) < 2:
            known, vectors = [], vectors[:0]  # alone, a vector is like nothing placed
        return _mmr_order(gain, known, vectors)

    def _without_speakers(self, prompt: str, among: Collection[str] | None = None) -> str:
        """`prompt` with the names of the events' speakers taken out ("What does Melanie paint?"
        is asked as "What does paint?"). An event is embedded without its speaker, so a name in
        the prompt can only bring the meaning of the turns that say the name, mostly greetings
        ("Thanks, Melanie!"); who said it is the words' part (retrieval.named_speaker).
        `among`: the speakers of those events only (a project's: a name that speaks only in
        another project is a word of the prompt here, as it would be in a vault of its own)."""
        with self._lock:
            if among is None:
                if self._speaker_names is None:
                    self._speaker_names = _names_pattern(self._speakers)
                pattern = self._speaker_names
            elif (found := self._speakers_among.get(id(among))) and found[0] is among:
                pattern = found[1]
            else:
                pattern = _names_pattern(self._events.speakers_of(among))
                _kept(self._speakers_among, among, pattern)
        return pattern.sub(" ", prompt)

    def _live_rows(self, among: Collection[str] | None = None) -> tuple[list[str], Any]:
        if self._live is None:
            rows = self._store.rows_of(self._events.digests)
            have = rows >= 0
            keys = list(itertools.compress(self._events.keys, have.tolist()))
            self._live = (keys, rows[have])
            self._live_among.clear()

        if among is None:
            return self._live
        # The same `among` (a scope's keys, kept per index searcher) comes prompt after prompt,
        # or, in a daemon asked from several projects, every few prompts.
        found = self._live_among.get(id(among))
        if found is not None and found[0] is among:
            return found[1]
        keys, rows = self._live
        kept = [i for i, k in enumerate(keys) if k in among]
        live = ([keys[i] for i in kept], rows[kept])
        _kept(self._live_among, among, live)
        return live

    # -- the cache on disk -------------------------------------------------------------------
    def _load(self) -> None:
        """The vectors saved by an earlier process (once; files that do not check out are
        removed and their vectors made again: vector_store.py)."""
        if self._loaded:
            return
        self._loaded = True
        self._store.open()
        if not self.read_only:
            self._import_legacy()
        self._drop_embedded()

    def follow(self, digests: Iterable[tuple[str, int]] | None, roles: Collection[str]) -> None:
        """Read-only: the writer's latest committed vectors, and, when given, the events as the
        index has them now, (key, digest of the text) in the index's order (a key given twice:
        its later digest), with the roles that speak in them."""
        with self._lock:
            if not self._loaded:
                self._loaded = True
                self._store.open()
                changed = True
            else:
                changed = self._store.catch_up()
            if digests is not None:
                self._events = EventTable.of((k, d, "") for k, d in digests)
                self._known = True
                if not self._speakers.issuperset(roles):
                    self._speakers.update(roles)
                    self._speaker_names = None
            if changed or digests is not None:
                self._live = None

    def _import_legacy(self) -> None:
        """The vectors of the format before vector_store.py's (three .npy and text files), added
        to the store once and removed: not made again on an upgrade."""
        paths = [self.folder / name for name in _LEGACY_FILES]
        if not paths[2].exists():
            return
        try:
            lines = paths[2].read_text(encoding="ascii").splitlines()
            if self._store.count == 0 and lines and lines[0] == MODEL_ID:
                rows = np.load(paths[0], allow_pickle=False)
                scales = np.load(paths[1], allow_pickle=False)
                digests = [int.from_bytes(bytes.fromhex(d), "little") for d in lines[1:]]
                if rows.shape == (len(digests), DIMENSIONS) and scales.shape == (len(digests),):
                    for at in range(0, len(digests), 4096):
                        part = slice(at, at + 4096)
                        vectors = rows[part].astype(np.float32) * scales[part][:, None]
                        self._store.append(digests[part], vectors)
                    self._store.commit()
        except (OSError, ValueError, UnicodeDecodeError) as exc:
            log.info("%s: the earlier format's vectors were not read (%s)", self.folder, exc)
        for path in paths:
            with contextlib.suppress(OSError):
                path.unlink()

    def save(self, compact: bool = True) -> None:
        """Make the vectors appended since the last save the ones a later process finds (they
        are in the file already: vector_store.py). Vectors of texts no event has any more are
        dropped when they are most of the file, when `compact` (a fill beside the daemon saves
        each slice without: the daemon follows each, and the look costs every event's digest)."""
        with self._lock:
            if not self._loaded or self.read_only or self._beside:
                return
            try:
                keep = self._kept_if_compacted() if compact else None
                if keep is not None:
                    self._store.compact(keep)
                    self._live = None
                self._store.commit()
            except OSError as exc:  # a cache: what is not saved is made again next time
                log.warning("%s: the vectors could not be saved (%s)", self.folder, exc)

    # -- a fill in a child process (fill_beside.py) --------------------------------------------
    def hand_over(self) -> None:
        """Commit the vectors made here and leave the files to a child's fill: until
        `take_back`, they are only read here (`follow_beside`) and nothing is embedded."""
        self.save()
        with self._lock:
            self._store.close()
            self._store = self._opened(read_only=True)
            self._beside = True
            self._live = None

    def follow_beside(self) -> bool:
        """The vectors the child committed since the last look (a stat when none): whether
        there were any. The files are read without the lock, so searches go on meanwhile."""
        with self._lock:
            store = self._store
        if not self._beside or not store.changed():
            return False
        fresh = self._opened(read_only=True)
        if fresh.problem or fresh.count < store.count:
            return False  # a commit caught halfway: read again at the next look
        self._use(fresh)
        return True

    def take_back(self) -> None:
        """The child has exited: its last commit is read, and the files are written here again
        (what it left missing is embedded by the next `fill`)."""
        fresh = self._opened(read_only=False)
        with self._lock:
            self._store.close()
            self._beside = False
        self._use(fresh)

    def _opened(self, read_only: bool) -> VectorStore:
        store = VectorStore(self.folder, MODEL_ID, DIMENSIONS, read_only=read_only)
        store.open()
        return store

    def _use(self, store: VectorStore) -> None:
        """`store` in place of the one in use, and the texts that now have a vector no longer
        waiting."""
        with self._lock:
            self._store = store
            self._live = None
            self._drop_embedded()

    def _drop_embedded(self) -> None:
        """The texts that have a vector in the store no longer waiting (an array lookup for
        them all, not one per text)."""
        digests = np.fromiter(self._texts, np.uint64, len(self._texts))
        for digest in digests[self._store.rows_of(digests) >= 0].tolist():
            del self._texts[digest]
        self._waiting.keep(self._store.rows_of(self._waiting.digests()) < 0)

    def close(self) -> None:
        """Save, and let go of the files (a later fill opens them again)."""
        self.save()
        with self._lock:
            self._store.close()

    def _kept_if_compacted(self) -> Any:
        """The rows that still have an event, in row order, when rows of texts no event has
        any more are most of the rows (worth dropping); None otherwise."""
        if not self._known:
            return None  # which digests are live is not known yet
        live = np.unique(self._events.digests)
        rows = self._store.rows_of(live)
        rows = np.sort(rows[rows >= 0])
        if self._store.count - len(rows) <= max(1000, len(rows)):
            return None
        return rows

    def stats(self) -> Mapping[str, int]:
        """How many events there are, how many of them still wait for their vector, and how
        many vectors are kept (stale ones too, until a save drops them)."""
        with self._lock:
            vectors = self._store.count
            return {"events": len(self._events), "pending": self.pending, "vectors": vectors}
