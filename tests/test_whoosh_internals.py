"""Whoosh's private names the index relies on (search/whoosh_internals.py): present in the Whoosh
installed (whoosh3, and whoosh==2.7.4 in CI's fallback run), and a Whoosh without one says so
loudly, in a real process that imports brainiac after taking the name away, instead of passing
quietly."""

from __future__ import annotations

import logging
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import whoosh
import whoosh.writing
from whoosh.codec import whoosh3
from whoosh.writing import SegmentWriter

from brainiac.search import whoosh_internals
from brainiac.search.corpus import Document
from brainiac.search.index import Index
from brainiac.search.index_runs import BatchedPostingPool


def _python(code: str) -> subprocess.CompletedProcess[str]:
    """`code` in a fresh interpreter (the test's environment: its XDG dirs)."""
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_installed_whoosh_has_every_name_the_index_uses() -> None:
    assert set(whoosh_internals.SPEED_ONLY) == whoosh_internals.USABLE
    assert whoosh_internals.check() == whoosh_internals.USABLE
    assert whoosh.writing.PostingPool is BatchedPostingPool


def test_a_whoosh_without_commit_toc_stops_the_import_with_one_line() -> None:
    done = _python(
        """
        import whoosh.writing
        del whoosh.writing.SegmentWriter._commit_toc
        import brainiac.search.index
        """
    )
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last == (
        f"ImportError: brainiac: Whoosh {whoosh.versionstring()} has no "
        "SegmentWriter._commit_toc, which brainiac needs (a commit's unused files are deleted "
        "after the searcher's swap (index_writes.py, _publish)); install the Whoosh pyproject.toml "
        "names (whoosh3==3.54.0, or whoosh==2.7.4)"
    )


def test_a_whoosh_whose_writer_makes_its_pool_otherwise_keeps_it_logs_and_still_indexes(
    vault: Path,
) -> None:
    """The batched runs only save time: without the names they replace, Whoosh's own pool
    builds the same index, and an error says the optimisation is off."""
    done = _python(
        f"""
        import whoosh.writing
        stock_pool, stock_init = whoosh.writing.PostingPool, whoosh.writing.SegmentWriter.__init__
        def renamed(self, *args, **kwargs):  # a writer that no longer reads `PostingPool`
            stock_init(self, *args, **kwargs)
        whoosh.writing.SegmentWriter.__init__ = renamed
        from brainiac import Memory
        from brainiac.search import whoosh_internals
        assert whoosh.writing.PostingPool is stock_pool, whoosh.writing.PostingPool
        assert "batched runs" not in whoosh_internals.USABLE
        with Memory({str(vault)!r}) as memory:
            memory.remember("The sea kayak is stored in the boathouse.")
            print([hit.path for hit in memory.search("kayak boathouse")][:1])
        """
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "['memory/short_term.md']\n", done.stdout
    errors = [line for line in done.stderr.splitlines() if "PostingPool" in line]
    assert len(errors) == 1, done.stderr
    assert f"Whoosh {whoosh.versionstring()} has no writing.PostingPool" in errors[0]
    assert "batched runs are off" in errors[0]


def test_a_commit_whose_deferred_deletion_was_not_captured_logs_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A Whoosh whose commit no longer calls the replaced `_commit_toc` deletes the unused files
    itself, under the open searcher: the commit still counts, and an error says so."""
    original = SegmentWriter.commit

    def commit_past_the_replacement(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        vars(self).pop("_commit_toc", None)  # Whoosh's own method runs, as after a rename
        return original(self, *args, **kwargs)

    monkeypatch.setattr(SegmentWriter, "commit", commit_past_the_replacement)
    index = Index(tmp_path / "idx")
    doc = Document(key="a.md", path="a.md", kind="note", body="alpha").with_digest()
    with caplog.at_level(logging.ERROR, logger="brainiac.search.index_writes"):
        index.apply([doc], [])
    assert [h.path for h in index.search("alpha")] == ["a.md"]
    index.close()
    errors = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1, errors
    assert "committed without calling SegmentWriter._commit_toc" in errors[0]
    assert str(tmp_path / "idx") in errors[0]


def test_stored_fields_are_whooshs_own_read_at_their_offsets_without_moving_the_file(
    tmp_path: Path,
) -> None:
    """Each document's stored fields are the ones Whoosh's reader gives, read with a positioned
    read: the column file Whoosh shares between its readers is neither sought nor read."""
    index = Index(tmp_path / "idx")
    docs = [
        Document(key=f"n{i}.md", path=f"n{i}.md", kind="note", title=f"Note {i}", body=body)
        for i, body in enumerate(["alpha", "beta gamma " * 200, "", "delta"])
    ]
    index.apply([d.with_digest() for d in docs], [])
    searcher = index._searcher
    (leaf, _), *_ = searcher.reader().leaf_readers()
    read = whoosh_internals.stored_fields_reader(leaf)
    column = leaf._perdoc._cached_reader("_stored", whoosh3.STORED_COLUMN)._child._dbfile
    column.seek(0)
    count = searcher.doc_count_all()
    assert [read(d) for d in range(count)] == [searcher.stored_fields(d) for d in range(count)]
    column.seek(3)
    column.file = _NoReads(column.file)
    try:
        assert [read(d)["path"] for d in range(count)] == [f"n{i}.md" for i in range(4)]
        assert column.tell() == 3
    finally:
        column.file = column.file.inner
    index.close()


class _NoReads:
    """A column file whose buffered reads and seeks fail: only its descriptor may be used."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def fileno(self) -> int:
        return int(self.inner.fileno())

    def tell(self) -> int:
        return int(self.inner.tell())

    def read(self, *args: Any) -> bytes:
        raise AssertionError("the column file was read through its buffer")

    def seek(self, *args: Any) -> int:
        raise AssertionError("the column file was sought")
