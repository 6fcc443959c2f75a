"""The events' vectors on disk: one file of int8 rows, mapped into memory, and a table of ids.

Why mapped rather than loaded: the rows of a 10,000-note vault are 17 MB (44,854 events x 384
bytes) and grow with every event; mapped, they are pages of the file that the kernel keeps in its
cache and may drop under pressure, not a copy in the daemon's heap, and a search that reads only
some rows (semantic.py) brings in only their pages. Rows are appended as they are made, so a
first fill never holds more than a batch of them.

Two files in the vectors folder:

- `vectors.table`: a header (what made the vectors, how many rows are committed, a CRC-32 of the
  committed rows and of the committed table records, the generation of the rows file, and a
  CRC-32 of the header itself), then one 12-byte record per row: the text's digest (8 bytes) and
  the row's scale (a row times its scale is the unit vector).
- `vectors.<generation>.rows`: the rows, `dims` int8 each, contiguous (no header), with room
  past the committed ones that grows by doubling.

Crash safety: the vectors are derived data (docs/reliability.md, "derived files"), so a file that
does not check out is never trusted: it is removed and its vectors are made again. Rows and
records are written past the committed count first and the header last (after an fsync of both);
until then a reader sees the count of the last commit and the checksums that cover exactly it,
so a crash mid-append loses only the uncommitted rows. A header torn by a crash fails its own
CRC. A compaction (dropping rows no event has any more) writes a new rows file under a new
generation and a new table, and renames the table over the old one: the rename is the commit,
and the table names the rows file it goes with.

One concept: the vectors' file format, with append, commit, compaction and validation.
"""

from __future__ import annotations

import contextlib
import logging
import mmap
import os
import secrets
import struct
import time
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

TABLE_FILE = "vectors.table"
_ROWS_GLOB = "vectors.*.rows"
_MAGIC = b"brvec\x00\x01\n"
# magic, dims, count, rows CRC, table CRC, generation, model id; then the header's own CRC
_HEADER = struct.Struct("<8sIQIIQ128s")
_HEADER_SIZE = 256
_RECORD = np.dtype([("digest", "<u8"), ("scale", "<f4")])  # 12 bytes, unaligned
_CHECK_CHUNK = 1 << 20  # bytes read at a time when the rows are checked
# Rows appended between two commits during a long fill: what a crash can cost at most.
COMMIT_EVERY = 4096
_FIRST_CAPACITY = 1024
# A file's times tick coarsely (a kernel tick; seconds on some file systems): a commit written
# within the tick of the stat taken before a read leaves the stat unchanged. A stat that young
# is not trusted: the next look reads the header again (git's "racy" index entries' cure).
_RACY_NS = 2_000_000_000
# A reader caught in the middle of the writer's commit or compaction (a table half-written, a
# rows file replaced) reads again at once: a process that asks one context must not go without.
_READ_TRIES = 3
_REREAD_AFTER_S = 0.05
_OTHER_MODEL = "they were made by another model"


class VectorStore:
    """The committed and appended rows of one model's vectors in `folder`; not thread-safe
    (semantic.py holds its lock around every call).

    `read_only`: another process's store (the daemon's, read by a server beside it), followed by
    `catch_up` as its writer commits; nothing is ever written or removed, so files that do not
    check out (a compaction caught halfway) are only left unused until they do."""

    def __init__(self, folder: Path, model_id: str, dims: int, read_only: bool = False) -> None:
        self.folder = folder
        self.model_id = model_id
        self.dims = dims
        self.read_only = read_only
        self._seen: tuple[int, int, int] | None = None  # the table's stat when last read
        self.count = 0  # rows written (committed or not)
        self._committed = 0
        self._rows_crc = 0
        self._table_crc = 0
        self._generation = 0
        self._rows_fd: int | None = None
        self._table_fd: int | None = None
        self._capacity = 0
        self._map: Any = np.zeros((0, dims), np.int8)
        self._digests: Any = np.zeros(0, np.uint64)
        self._scales: Any = np.zeros(0, np.float32)
        self._sketches: Any = np.zeros((0, _sketch_words(dims)), np.uint64)
        # digest -> row: a sorted copy of the digests and their rows (no dict of every digest),
        # and a dict for the rows appended since it was sorted
        self._sorted: Any = np.zeros(0, np.uint64)
        self._sorted_rows: Any = np.zeros(0, np.int64)
        self._recent: dict[int, int] = {}
        self.problem = ""  # why the files found were not used, if they were not

    # -- reading ---------------------------------------------------------------------------------
    @property
    def rows(self) -> Any:
        """The rows in use, int8 (count x dims), a view of the mapped file."""
        return self._map[: self.count]

    @property
    def scales(self) -> Any:
        return self._scales[: self.count]

    def row_of(self, digest: int) -> int | None:
        row = self._recent.get(digest)
        if row is not None:
            return row
        at = int(np.searchsorted(self._sorted, np.uint64(digest)))
        if at < len(self._sorted) and int(self._sorted[at]) == digest:
            return int(self._sorted_rows[at])
        return None

    def rows_of(self, digests: Any) -> Any:
        """The row of each digest (uint64 array), -1 where there is none."""
        digests = np.asarray(digests, np.uint64)
        out = np.full(len(digests), -1, np.int64)
        tables = [(self._sorted, self._sorted_rows)]
        if self._recent:  # a few thousand at most: sorted here, not a loop over `digests`
            count = len(self._recent)
            recent = np.fromiter(self._recent, np.uint64, count)
            rows = np.fromiter(self._recent.values(), np.int64, count)
            order = np.argsort(recent)
            tables.append((recent[order], rows[order]))
        for keys, rows in tables:
            if len(keys):
                at = np.minimum(np.searchsorted(keys, digests), len(keys) - 1)
                hit = keys[at] == digests
                out[hit] = rows[at[hit]]
        return out

    def digests(self) -> Any:
        return self._digests[: self.count]

    @property
    def sketches(self) -> Any:
        """Each row's signs, a bit a dimension (uint64 words, count x dims / 64): a near row
        mostly has the prompt's signs (semantic.py compares these first in a large vault). Made
        as rows are appended or checked, so a search never reads every row for them."""
        return self._sketches[: self.count]

    # -- opening ---------------------------------------------------------------------------------
    def open(self) -> None:
        """Use the committed vectors in the folder, if they check out; otherwise start empty
        (the files that did not check out are removed: their vectors are made again)."""
        for attempt in range(_READ_TRIES if self.read_only else 1):
            if attempt:
                time.sleep(_REREAD_AFTER_S)
            self.problem = ""
            seen = _trusted(self._table_stat())
            try:
                found = self._read()
            except OSError as exc:
                found = None
                self.problem = f"the vectors could not be read ({exc})"
            if found is not None or self.problem in ("", _OTHER_MODEL):
                break  # read, or nothing there, or nothing another read could change
        if found is None:
            if self.read_only:
                log.debug("%s: %s", self.folder, self.problem or "no vectors yet")
                return  # what was read before stays in use
            if self.problem:
                log.info("%s: %s; made again", self.folder, self.problem)
            self._start_empty()
            return
        digests, scales = found
        self._digests, self._scales = digests, scales
        self.count = self._capacity = self._committed
        self._index_digests()
        self._seen = seen
        if not self.read_only:
            self._remove_other_rows_files()

    def catch_up(self) -> bool:
        """Read-only: use the writer's latest commit when the table changed since it was read (a
        stat when it did not); whether anything changed. A table that does not check out now (a
        commit or a compaction caught halfway) leaves the vectors read before in use, and is
        read again at the next look."""
        if not self.changed():
            return False
        count, generation = self._committed, self._generation
        self.open()
        return (self._committed, self._generation) != (count, generation)

    def changed(self) -> bool:
        """Whether the table on disk names another commit than the one last read: a stat, and
        its header when the stat moved or was too young to trust."""
        seen = self._table_stat()
        if seen is None or seen == self._seen:
            return False
        if self._commit_on_disk() != self._commit:
            return True
        self._seen = _trusted(seen)  # the same commit: its stat moved, or was too young
        return False

    @property
    def _commit(self) -> tuple[int, int, int, int]:
        return (self._committed, self._generation, self._rows_crc, self._table_crc)

    def _commit_on_disk(self) -> tuple[int, int, int, int] | None:
        """The commit the table's header names (count, generation, checksums), unchecked."""
        try:
            with open(self.folder / TABLE_FILE, "rb") as f:
                data = f.read(_HEADER.size)
        except OSError:
            return None
        if len(data) < _HEADER.size:
            return None
        _, _, count, rows_crc, table_crc, generation, _ = _HEADER.unpack(data)
        return (count, generation, rows_crc, table_crc)

    def _table_stat(self) -> tuple[int, int, int] | None:
        try:
            st = os.stat(self.folder / TABLE_FILE)
        except OSError:
            return None
        return (st.st_ino, st.st_size, st.st_mtime_ns)

    def _read(self) -> tuple[Any, Any] | None:
        """The committed digests and scales, after checking the header and both checksums;
        None (and `problem` set, unless there is simply nothing) when they do not check out."""
        table = self.folder / TABLE_FILE
        try:
            data = table.read_bytes()
        except FileNotFoundError:
            return None
        if len(data) < _HEADER_SIZE:
            self.problem = f"{TABLE_FILE} is cut short"
            return None
        fields = _HEADER.unpack_from(data)
        magic, dims, count, rows_crc, table_crc, generation, model = fields
        (header_crc,) = struct.unpack_from("<I", data, _HEADER.size)
        if magic != _MAGIC or zlib.crc32(data[: _HEADER.size]) != header_crc:
            self.problem = f"{TABLE_FILE} has a damaged header"
            return None
        if model.rstrip(b"\0").decode("utf-8", "replace") != self.model_id or dims != self.dims:
            self.problem = _OTHER_MODEL
            return None
        records = data[_HEADER_SIZE : _HEADER_SIZE + count * _RECORD.itemsize]
        if len(records) != count * _RECORD.itemsize or zlib.crc32(records) != table_crc:
            self.problem = f"{TABLE_FILE} does not match its checksum"
            return None
        rows_path = self._rows_path(generation)
        crc = 0
        remaining = count * dims
        sketches = np.zeros((count, _sketch_words(dims)), np.uint64)
        done = 0
        with open(rows_path, "rb") as f:  # read, not mapped: these pages stay out of the RSS
            chunk = _CHECK_CHUNK // dims * dims
            buffer = bytearray(chunk)
            view = memoryview(buffer)
            while remaining:
                got = f.readinto(view[: min(remaining, chunk)])
                if not got or got % dims:
                    break
                crc = zlib.crc32(view[:got], crc)
                rows = np.frombuffer(buffer, np.int8, got).reshape(-1, dims)
                sketches[done : done + len(rows)] = sketch(rows)
                done += len(rows)
                remaining -= got
            if remaining or crc != rows_crc:
                self.problem = f"{rows_path.name} does not match its checksum"
                return None
            if count:  # the file checked, not the name (a compaction may replace it meanwhile)
                self._map_rows(f.fileno(), count)
        table_records = np.frombuffer(records, _RECORD)
        self._committed, self._rows_crc, self._table_crc = count, rows_crc, table_crc
        self._generation = generation
        self._sketches = sketches
        return table_records["digest"].copy(), table_records["scale"].copy()

    def _start_empty(self) -> None:
        self.close()
        for path in [self.folder / TABLE_FILE, *self.folder.glob(_ROWS_GLOB)]:
            with contextlib.suppress(OSError):
                path.unlink()
        self._generation = secrets.randbits(63)
        self.count = self._committed = self._capacity = 0
        self._rows_crc = self._table_crc = 0
        self._map = np.zeros((0, self.dims), np.int8)
        self._digests = np.zeros(0, np.uint64)
        self._scales = np.zeros(0, np.float32)
        self._sketches = np.zeros((0, _sketch_words(self.dims)), np.uint64)
        self._index_digests()

    def _rows_path(self, generation: int) -> Path:
        return self.folder / f"vectors.{generation:016x}.rows"

    def _open_files(self) -> None:
        """Open both files for appending, drop whatever lies past the committed count (a crash's
        leftovers) and map the rows with room for more."""
        self.folder.mkdir(parents=True, exist_ok=True)
        flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
        self._rows_fd = os.open(self._rows_path(self._generation), flags, 0o600)
        self._table_fd = os.open(self.folder / TABLE_FILE, flags, 0o600)
        os.ftruncate(self._table_fd, _HEADER_SIZE + self._committed * _RECORD.itemsize)
        self._write_header()  # the committed count's, as read (a new file gets its first)
        self._capacity = max(self.count, _FIRST_CAPACITY)
        os.ftruncate(self._rows_fd, self.count * self.dims)
        os.ftruncate(self._rows_fd, self._capacity * self.dims)  # room: a hole, no blocks
        self._map_rows(self._rows_fd, self._capacity)

    def _map_rows(self, fd: int, rows: int) -> None:
        mapped = mmap.mmap(fd, rows * self.dims, prot=mmap.PROT_READ)
        # The map stays open as long as an array made from it is in use (a search that took it
        # before a compaction); it is closed when the last one goes.
        self._map = np.frombuffer(mapped, np.int8).reshape(rows, self.dims)

    def _remove_other_rows_files(self) -> None:
        keep = self._rows_path(self._generation).name
        for path in self.folder.glob(_ROWS_GLOB):
            if path.name != keep:
                with contextlib.suppress(OSError):
                    path.unlink()

    def close(self) -> None:
        for fd in (self._rows_fd, self._table_fd):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._rows_fd = self._table_fd = None

    def _index_digests(self) -> None:
        digests = self._digests[: self.count]
        order = np.argsort(digests, kind="stable")
        self._sorted, self._sorted_rows = digests[order], order.astype(np.int64)
        self._recent = {}

    # -- writing ---------------------------------------------------------------------------------
    def append(self, digests: Sequence[int], vectors: Any) -> None:
        """Add the unit vectors (float32, one row per digest) of texts that have none yet, as
        int8 rows with a scale each (cosines within 0.01 of the float32 ones). Written to the
        files at once; committed by `commit`, or on the way every COMMIT_EVERY rows."""
        if self.read_only:
            raise OSError(f"{self.folder}: the vectors are another process's, read-only here")
        if self._rows_fd is None:
            self._open_files()
        fresh = [i for i, d in enumerate(digests) if self.row_of(d) is None]
        if len(fresh) < len(digests):
            digests = [digests[i] for i in fresh]
            vectors = vectors[fresh]
        if not digests:
            return
        vectors = np.asarray(vectors, np.float32)
        scale = (np.maximum(np.abs(vectors).max(axis=1), 1e-9) / 127.0).astype(np.float32)
        quantized = np.rint(vectors / scale[:, None]).astype(np.int8)
        records = np.zeros(len(digests), _RECORD)
        records["digest"] = np.asarray(digests, np.uint64)
        records["scale"] = scale
        needed = self.count + len(digests)
        if needed > self._capacity:
            self._grow(needed)
        assert self._rows_fd is not None and self._table_fd is not None
        row_bytes, record_bytes = quantized.tobytes(), records.tobytes()
        _write_all(self._rows_fd, row_bytes, self.count * self.dims)
        _write_all(self._table_fd, record_bytes, _HEADER_SIZE + self.count * _RECORD.itemsize)
        self._rows_crc = zlib.crc32(row_bytes, self._rows_crc)
        self._table_crc = zlib.crc32(record_bytes, self._table_crc)
        if needed > len(self._digests):
            size = max(needed, 2 * len(self._digests), _FIRST_CAPACITY)
            self._digests = _grown(self._digests, size, self.count)
            self._scales = _grown(self._scales, size, self.count)
            self._sketches = _grown(self._sketches, size, self.count)
        self._digests[self.count : needed] = records["digest"]
        self._scales[self.count : needed] = scale
        self._sketches[self.count : needed] = sketch(quantized)
        for row, digest in enumerate(digests, self.count):
            self._recent[int(digest)] = row
        self.count = needed
        if len(self._recent) > max(COMMIT_EVERY, len(self._sorted) // 4):
            self._index_digests()  # a sorted copy again, so the dict stays small
        if self.count - self._committed >= COMMIT_EVERY:
            self.commit()

    def _grow(self, needed: int) -> None:
        assert self._rows_fd is not None
        self._capacity = max(needed, 2 * self._capacity, _FIRST_CAPACITY)
        os.ftruncate(self._rows_fd, self._capacity * self.dims)
        self._map_rows(self._rows_fd, self._capacity)

    def commit(self) -> None:
        """Make the rows written so far the ones a later process reads: both files on disk,
        then the header that counts them."""
        if self.count == self._committed or self._table_fd is None or self._rows_fd is None:
            return  # nothing appended since the last commit (appending opens the files)
        os.fsync(self._rows_fd)
        os.fsync(self._table_fd)
        self._committed = self.count
        self._write_header()
        os.fsync(self._table_fd)

    def _write_header(self) -> None:
        assert self._table_fd is not None
        _write_all(self._table_fd, self._header(self._committed), 0)

    def _header(self, count: int) -> bytes:
        model = self.model_id.encode("utf-8")[:128]
        fields = _HEADER.pack(
            _MAGIC, self.dims, count, self._rows_crc, self._table_crc, self._generation, model
        )
        header = fields + struct.pack("<I", zlib.crc32(fields))
        return header.ljust(_HEADER_SIZE, b"\0")

    def compact(self, keep: Any) -> None:
        """Keep only the rows numbered `keep` (in that order): written to a new rows file and a
        new table, which is renamed over the old one (the commit), so a crash leaves either."""
        if self.read_only:
            raise OSError(f"{self.folder}: the vectors are another process's, read-only here")
        keep = np.asarray(keep, np.int64)
        generation = secrets.randbits(63)
        rows_path = self._rows_path(generation)
        tmp_table = self.folder / f".{TABLE_FILE}.{os.getpid()}.tmp"
        records = np.zeros(len(keep), _RECORD)
        records["digest"] = self._digests[keep]
        records["scale"] = self._scales[keep]
        rows_crc = 0
        try:
            with open(rows_path, "wb") as f:
                step = max(1, _CHECK_CHUNK // self.dims)
                for at in range(0, len(keep), step):
                    chunk = np.ascontiguousarray(self._map[keep[at : at + step]]).tobytes()
                    rows_crc = zlib.crc32(chunk, rows_crc)
                    f.write(chunk)
                f.flush()
                os.fsync(f.fileno())
            old = (self._generation, self._rows_crc, self._table_crc)
            self._generation, self._rows_crc = generation, rows_crc
            self._table_crc = zlib.crc32(records.tobytes())
            try:
                header = self._header(len(keep))
            finally:
                self._generation, self._rows_crc, self._table_crc = old
            with open(tmp_table, "wb") as f:
                f.write(header)
                f.write(records.tobytes())
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp_table, self.folder / TABLE_FILE)
        except BaseException:
            for path in (rows_path, tmp_table):
                with contextlib.suppress(OSError):
                    path.unlink()
            raise
        self.close()
        self.open()


def _write_all(fd: int, data: bytes, offset: int) -> None:
    view = memoryview(data)
    while view:
        written = os.pwrite(fd, view, offset)
        view, offset = view[written:], offset + written


def _trusted(stat: tuple[int, int, int] | None) -> tuple[int, int, int] | None:
    """A table's stat, or None while it is too young for a later commit to change it."""
    if stat is not None and time.time_ns() - stat[2] < _RACY_NS:
        return None
    return stat


def _grown(array: Any, size: int, used: int) -> Any:
    bigger = np.zeros((size, *array.shape[1:]), array.dtype)
    bigger[:used] = array[:used]
    return bigger


def _sketch_words(dims: int) -> int:
    return -(-dims // 64)


def sketch(vectors: Any) -> Any:
    """The sign bits of each row of `vectors` (n x dims), packed in uint64 words."""
    words = _sketch_words(vectors.shape[1])
    bits = np.packbits(np.asarray(vectors) > 0, axis=1)
    padded = np.zeros((len(bits), words * 8), np.uint8)
    padded[:, : bits.shape[1]] = bits
    return padded.view(np.uint64)
