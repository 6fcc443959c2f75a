from __future__ import annotations

import os
from pathlib import Path

import pytest

from brainiac.core.errors import StaleWriteError
from brainiac.store import safe_io

# The time a write spends in fsync on a real disk shapes where the kills and races land.
pytestmark = pytest.mark.on_disk


def _leftovers(d: Path) -> list[str]:
    return [p.name for p in d.iterdir() if p.name.endswith(safe_io.TMP_SUFFIX)]


def test_round_trip_keeps_mode_and_leaves_no_temp(tmp_path: Path) -> None:
    p = tmp_path / "n.md"
    p.write_text("old")
    p.chmod(0o640)
    _, fp = safe_io.read_bytes(p)
    safe_io.write_bytes(p, b"new", fp)
    assert p.read_bytes() == b"new"
    assert (p.stat().st_mode & 0o777) == 0o640
    assert _leftovers(tmp_path) == []


def test_new_files_are_private(tmp_path: Path) -> None:
    p = tmp_path / "sub" / "n.md"
    safe_io.write_bytes(p, b"x", None)
    assert (p.stat().st_mode & 0o777) == 0o600
    assert (p.parent.stat().st_mode & 0o777) == 0o700


def test_in_place_edit_since_read_wins(tmp_path: Path) -> None:
    p = tmp_path / "n.md"
    p.write_text("old")
    _, fp = safe_io.read_bytes(p)
    with open(p, "a") as f:  # nano / Obsidian: in place
        f.write(" and the person's words")
    with pytest.raises(StaleWriteError):
        safe_io.write_bytes(p, b"ours", fp)
    assert p.read_text() == "old and the person's words"
    assert _leftovers(tmp_path) == []


def test_same_bytes_same_mtime_but_new_content_is_caught(tmp_path: Path) -> None:
    p = tmp_path / "n.md"
    p.write_text("aaaa")
    _, fp = safe_io.read_bytes(p)
    st = p.stat()
    p.write_text("bbbb")  # same size; a sync tool restores the old mtime
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))
    with pytest.raises(StaleWriteError):
        safe_io.write_bytes(p, b"ours", fp)
    assert p.read_text() == "bbbb"


def test_rename_save_with_identical_bytes_is_caught(tmp_path: Path) -> None:
    p = tmp_path / "n.md"
    p.write_text("same")
    _, fp = safe_io.read_bytes(p)
    tmp = tmp_path / "n.md~"
    tmp.write_text("same")
    os.replace(tmp, p)  # vim: a new inode
    with pytest.raises(StaleWriteError):
        safe_io.write_bytes(p, b"ours", fp)


def test_create_refuses_when_the_file_appeared(tmp_path: Path) -> None:
    p = tmp_path / "n.md"
    p.write_text("theirs")
    with pytest.raises(StaleWriteError):
        safe_io.write_bytes(p, b"ours", None)
    assert p.read_text() == "theirs"


def test_stale_temps_are_swept_and_fresh_ones_kept(tmp_path: Path) -> None:
    old = tmp_path / f".n.md.abc{safe_io.TMP_SUFFIX}"
    old.write_text("x")
    os.utime(old, (1000, 1000))
    fresh = tmp_path / f".m.md.def{safe_io.TMP_SUFFIX}"
    fresh.write_text("y")
    other = tmp_path / ".n.md.swp"
    other.write_text("vim")
    removed = safe_io.remove_stale_temps(tmp_path, older_than_s=300)
    assert removed == [old]
    assert fresh.exists() and other.exists()
