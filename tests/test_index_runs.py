"""Whoosh's sorted runs written a batch at a time (search/index_runs.py): the index is the same."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import whoosh.writing
from whoosh import index as windex
from whoosh.filedb.filestore import FileStorage

from brainiac import Memory
from brainiac.formats import events as ev
from brainiac.search import corpus, index_writes
from brainiac.search.index_fields import Terms, document_fields, index_schema
from brainiac.search.index_runs import BATCH, BatchedPostingPool

T = dt.datetime(2026, 3, 1, 9, 0)
STOCK_POOL = BatchedPostingPool.__base__  # Whoosh's own PostingPool


def _events(count: int) -> str:
    words = [
        "harbour",
        "kettle",
        "violin",
        "meadow",
        "lantern",
        "orbit",
        "saddle",
        "quartz",
        "ember",
        "thistle",
    ]
    return "".join(
        ev.render(
            ev.make_event(
                f"day {i}: the {words[i % 10]} and the {words[(i * 3) % 10]}, note{i}",
                at=T + dt.timedelta(minutes=i),
            )
        )
        for i in range(count)
    )


def _documents(vault: Path) -> list[corpus.Document]:
    Memory.init(vault)
    stm = vault / "memory/short_term.md"
    stm.write_text(stm.read_text() + _events(700))
    return corpus.documents("memory/short_term.md", stm.read_text())


def _build(directory: Path, pool: type, docs: list[corpus.Document], monkeypatch: Any) -> int:
    """Index `docs` in one process with `pool` and a pool limit of a few kilobytes; how many
    runs the writer wrote before its commit."""
    monkeypatch.setattr(whoosh.writing, "PostingPool", pool)
    directory.mkdir()
    ix = windex.create_in(str(directory), index_schema())
    writer = ix.writer(limitmb=0.02)
    assert type(writer.pool) is pool
    terms = Terms()
    for doc in docs:
        writer.add_document(**document_fields(doc, terms))
    runs = len(writer.pool.runs)
    writer.commit()
    return runs


def _contents(directory: Path) -> dict[str, Any]:
    with windex.open_dir(str(directory)).reader() as reader:
        fields = [name for name in reader.schema.names() if reader.schema[name].indexed]
        return {
            "postings": {
                (name, term): list(reader.postings(name, term).items_as("weight"))
                for name in fields
                for term in reader.lexicon(name)
            },
            "lengths": [
                [reader.doc_field_length(n, name) for name in fields]
                for n in range(reader.doc_count_all())
            ],
            "stored": [reader.stored_fields(n) for n in range(reader.doc_count_all())],
        }


def test_batched_runs_index_the_same_postings_as_whoosh_own(
    tmp_path: Path, monkeypatch: Any
) -> None:
    docs = _documents(tmp_path / "vault")
    stock_runs = _build(tmp_path / "stock", STOCK_POOL, docs, monkeypatch)
    batched_runs = _build(tmp_path / "batched", BatchedPostingPool, docs, monkeypatch)
    # The pool's size estimate is Whoosh's: the same runs, so the same memory held.
    assert stock_runs == batched_runs > 5
    stock, batched = _contents(tmp_path / "stock"), _contents(tmp_path / "batched")
    assert len(stock["postings"]) > 1000 and len(stock["stored"]) == len(docs)
    assert batched == stock


def test_a_run_longer_than_a_batch_and_a_stock_run_read_back_whole(tmp_path: Path) -> None:
    # A stock pool's run (one pickle per posting) must read back through the batched pool: a
    # sub-writer started without index_runs.py (the spawn start method) writes those.
    storage = FileStorage(str(tmp_path))
    postings = sorted(("body", f"t{i % 97}".encode(), i, 1.0, None) for i in range(BATCH * 3 + 5))
    batched = BatchedPostingPool(storage, None)
    for source in (STOCK_POOL(storage, None), batched):
        path, f = source._new_run()
        source._write_run(f, iter(postings))
        assert list(batched._read_run(path)) == postings
        assert not storage.file_exists(path)  # read once, then removed, as Whoosh's runs are


def test_the_index_writes_every_run_batched_in_a_two_process_build(
    tmp_path: Path, monkeypatch: Any
) -> None:
    assert whoosh.writing.PostingPool is BatchedPostingPool  # installed by the index module
    # Two sub-writers (forked: they inherit the pool), each writing runs of a few kilobytes.
    monkeypatch.setattr(index_writes, "MULTIPROCESS_ABOVE", 300)
    monkeypatch.setattr(index_writes, "POOL_MB", 0.02)
    vault = tmp_path / "vault"
    docs = _documents(vault)
    with Memory(vault, refresh_interval_s=0) as memory:
        report = memory.reindex()
        assert report.full_build and memory.indexer.index.segment_count() >= 2
        # Every event, and the template's notes beside them.
        assert memory.indexer.index.doc_count() == report.docs_written > len(docs)
        # Every event first, then the one after it (found through its preceding message).
        for i in range(len(docs) - 1):
            found = [h.excerpt for h in memory.search(f"note{i}")]
            assert found[0].endswith(f"note{i}") and found[1].endswith(f"note{i + 1}")
