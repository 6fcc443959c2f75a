"""A reader of the index beside the daemon (a CLI search, the MCP server): the daemon commits,
merges and deletes the files a merge replaced whenever it likes, and the reader, in another
process, must answer from a whole commit all the same, or say in one line that the index is
damaged. Each race is held at its step: the daemon's writer is an `Index` in this process, run
at the exact point of the reader's open or search that the race needs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from whoosh.filedb.filestore import FileStorage
from whoosh.index import FileIndex

from brainiac.core.errors import SearchError
from brainiac.search.corpus import Document
from brainiac.search.index import Index

PATHS = [f"n{i}.md" for i in range(5)]


def five_segments(folder: Path) -> Index:
    """The daemon's writer, five commits in: five segments, none merged (Whoosh merges small
    segments from five on), each with its own stored-fields and length files."""
    writer = Index(folder)
    for i, path in enumerate(PATHS):
        words = " ".join(["cello"] * (i + 1) + ["filler"] * (3 * i))  # lengths that matter
        writer.apply([Document(key=path, path=path, kind="note", body=words).with_digest()], [])
    assert writer.segment_count() == 5
    return writer


def answers(index: Index) -> list[tuple[str, float]]:
    return [(h.path, round(h.score, 6)) for h in index.search("cello", limit=10)]


def test_a_search_beside_the_daemon_reads_the_commit_it_opened_after_a_merge_deleted_it(
    tmp_path: Path,
) -> None:
    """`brainiac search` beside the daemon opened the index, then the daemon's idle merge
    committed and deleted the five segments' files before the search read their stored fields
    (Whoosh opens those at the first read): the search failed, "the index could not be read
    ('NoneType' object is not subscriptable)". It answers from the commit it opened, with the
    same scores (the field lengths are that commit's too)."""
    writer = five_segments(tmp_path / "idx")
    expected = answers(writer)
    reader = Index(tmp_path / "idx", writable=False)
    assert writer.merge_segments(force=True)  # between the reader's open and its search
    assert len(list((tmp_path / "idx").glob("*._stored.col"))) == 1  # the five are gone
    assert answers(reader) == expected
    assert reader.catch_up()  # and the next search reads the merged commit
    assert answers(reader) == expected
    reader.close()
    writer.close()


def hold_once(
    monkeypatch: pytest.MonkeyPatch, owner: Any, name: str, meanwhile: Callable[[], object]
) -> None:
    """`owner.name` run as it is, except that its first call runs `meanwhile` (the daemon's
    step) right after the original returns."""
    original = getattr(owner, name)
    held_once: list[bool] = []

    def held(*args: Any, **kwargs: Any) -> Any:
        result = original(*args, **kwargs)
        if not held_once:
            held_once.append(True)
            meanwhile()
        return result

    monkeypatch.setattr(owner, name, held)


def test_a_reader_whose_commit_a_merge_replaces_while_it_opens_opens_the_newest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The merge lands between the reader's open of the segments and its first read: the
    segments' stored-fields files are gone before the reader got to them. It opens the newest
    commit instead, whose answers are the same."""
    writer = five_segments(tmp_path / "idx")
    expected = answers(writer)
    hold_once(monkeypatch, FileIndex, "searcher", lambda: writer.merge_segments(force=True))
    reader = Index(tmp_path / "idx", writable=False)
    monkeypatch.undo()
    assert writer.segment_count() == 1
    assert reader.segment_count() == 1  # the merged commit's, not the five deleted ones
    assert answers(reader) == expected
    reader.close()
    writer.close()


def test_a_reader_whose_table_of_contents_a_commit_deletes_as_it_reads_it_opens_the_newest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reader listed the folder and saw generation 5, and the daemon's merge wrote 6 and
    deleted 5 before the reader opened it: "the index is not ready yet (the daemon is building
    it)", which it was not. The reader opens generation 6."""
    writer = five_segments(tmp_path / "idx")
    expected = answers(writer)
    storage_open = FileStorage.open_file

    def merge_first(self: FileStorage, name: str, *args: Any, **kwargs: Any) -> Any:
        if name.endswith(".toc") and not merged:
            merged.append(name)  # first: the merge opens a table of contents too
            assert writer.merge_segments(force=True)
        return storage_open(self, name, *args, **kwargs)

    merged: list[str] = []
    monkeypatch.setattr(FileStorage, "open_file", merge_first)
    reader = Index(tmp_path / "idx", writable=False)
    monkeypatch.undo()
    assert merged == ["_MAIN_5.toc"]
    assert reader.segment_count() == 1
    assert answers(reader) == expected
    reader.close()
    writer.close()


def test_a_damaged_index_beside_the_daemon_is_still_one_clear_error(tmp_path: Path) -> None:
    """A file of the newest commit missing with no newer commit to read: damage, not a race.
    One line naming the index and what to do, at once (no retry loop)."""
    writer = five_segments(tmp_path / "idx")
    writer.close()
    missing = next((tmp_path / "idx").glob("*._stored.col"))
    missing.unlink()
    with pytest.raises(SearchError) as raised:
        Index(tmp_path / "idx", writable=False).search("cello")
    message = str(raised.value)
    assert "\n" not in message
    assert message.startswith(f"{tmp_path / 'idx'}: the index cannot be read")
    assert missing.name in message
    assert "brainiac reindex" in message
