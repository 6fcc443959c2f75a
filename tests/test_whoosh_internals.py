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

import pytest
import whoosh
import whoosh.writing
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
        "after the searcher's swap (index.py, _publish)); install the Whoosh pyproject.toml "
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
    with caplog.at_level(logging.ERROR, logger="brainiac.search.index"):
        index.apply([doc], [])
    assert [h.path for h in index.search("alpha")] == ["a.md"]
    index.close()
    errors = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1, errors
    assert "committed without calling SegmentWriter._commit_toc" in errors[0]
    assert str(tmp_path / "idx") in errors[0]
