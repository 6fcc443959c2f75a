"""The manifest: what the index holds of every vault file, kept in SQLite in the state directory.

For every indexed file it records size, mtime, ctime, inode and SHA-256, the keys and digests of
its documents, and the problem that kept it out, if any; and it names the index it describes
(`index_id`), so a deleted or rebuilt index turns the next sync into a full build (indexer.py).

Why SQLite rather than one JSON file: every CLI call (the agent hook's path) opens the manifest,
and parsing a 5 MB JSON file took 53 ms at 10,000 notes; a save rewrote all of it. Here the rows
stay in the database: a sync reads the row of each file it checks (a full sync a batch of rows
at a time) and decodes a file's document list only when it needs it (a changed file), so a
process holds no row per file, whatever the vault's size; a save writes only the rows that
changed, in one transaction, so a reader sees the manifest before or after a save, never half of
one.

Crash safety is the same as before: a save commits after the index did (the indexer's order), with
`synchronous=FULL` as the old fsync-then-rename; a crash before it costs only work (the next sync
re-reads the files whose stat differs). A manifest that cannot be read (damaged, another
version, damaged while open) is set aside and the index is built again from the vault. An old
`manifest.json` beside it is migrated on first load and then removed.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import sqlite3
from collections.abc import Iterable, Iterator, MutableMapping
from pathlib import Path
from typing import Any, NamedTuple

log = logging.getLogger(__name__)

_VERSION = 1  # PRAGMA user_version; another value reads as "no manifest" (a full build)
_LEGACY_JSON = "manifest.json"  # the format before this one (its version field was 1 too)
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    rel TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    ctime_ns INTEGER NOT NULL,
    ino INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    docs TEXT NOT NULL,
    problem TEXT
) WITHOUT ROWID;
"""
_COLUMNS = "rel, size, mtime_ns, ctime_ns, ino, sha256, docs, problem"
_BATCH = 500  # rows asked for in one query (SQLite allows 999 parameters in old builds)
_Row = tuple[int, int, int, int, str, str, str | None]


class FileState:
    """One file as the index last saw it. `docs` (document key -> digest) is decoded from the
    database on first use: a no-change sync compares only the stat fields."""

    __slots__ = ("_docs", "_docs_json", "ctime_ns", "ino", "mtime_ns", "problem", "sha256", "size")

    def __init__(
        self,
        size: int,
        mtime_ns: int,
        ctime_ns: int,
        ino: int,
        sha256: str,
        docs: dict[str, str] | None = None,
        problem: str | None = None,
    ) -> None:
        self.size, self.mtime_ns, self.ctime_ns, self.ino = size, mtime_ns, ctime_ns, ino
        self.sha256 = sha256
        self.problem = problem
        self._docs: dict[str, str] | None = docs if docs is not None else {}
        self._docs_json: str | None = None  # set only by _from_row: decoded on first use

    @classmethod
    def _from_row(cls, row: tuple[str, *_Row]) -> FileState:
        """From a database row (rel first), the document list left encoded. Sets the slots
        directly: a full sync makes one for every file."""
        state = cls.__new__(cls)
        _, state.size, state.mtime_ns, state.ctime_ns, state.ino, state.sha256 = row[:6]
        state._docs, state._docs_json, state.problem = None, row[6], row[7]
        return state

    @property
    def docs(self) -> dict[str, str]:
        if self._docs is None:
            decoded: dict[str, str] = json.loads(self._docs_json or "{}")
            self._docs, self._docs_json = decoded, None  # the dict may change from here on
        return self._docs

    @docs.setter
    def docs(self, value: dict[str, str]) -> None:
        self._docs, self._docs_json = value, None

    def same_stat(self, st: os.stat_result) -> bool:
        # ctime cannot be set by a sync tool (unlike mtime), so any rewrite shows here.
        return (self.size, self.mtime_ns, self.ctime_ns, self.ino) == (
            st.st_size,
            st.st_mtime_ns,
            st.st_ctime_ns,
            st.st_ino,
        )

    def row(self) -> _Row:
        docs = self._docs_json
        if docs is None:
            docs = json.dumps(self.docs, separators=(",", ":"), sort_keys=True)
        return (self.size, self.mtime_ns, self.ctime_ns, self.ino, self.sha256, docs, self.problem)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FileState):
            return NotImplemented
        return self.row()[:5] == other.row()[:5] and (self.problem, self.docs) == (
            other.problem,
            other.docs,
        )

    __hash__ = None  # type: ignore[assignment]  # mutable, like the dataclass it replaces

    def __repr__(self) -> str:
        return f"FileState(size={self.size}, sha256={self.sha256[:12]!r}, problem={self.problem!r})"


class Manifest:
    """The files the index holds (`files`, relative path -> FileState) and the index it names.

    A loaded manifest keeps its rows in the database and reads a file's row when a sync asks
    for it: what this object holds is only the changes not saved yet, and the number of files
    and the problems (counted once, then kept up to date), so a daemon's memory does not grow
    with the vault. A new one (`Manifest(index_id, files)`, as a full build makes) is held
    whole until its first save writes it. Not thread-safe: one owner (the indexer's) uses it."""

    def __init__(self, index_id: str = "", files: dict[str, FileState] | None = None) -> None:
        self.index_id = index_id
        # The changes not saved yet: path -> its state, None where the file left the index.
        self._pending: dict[str, FileState | None] = dict(files) if files else {}
        # The database the saved rows are read from; None: this manifest is all in `_pending` (a
        # new one, or one whose database was lost), so a save writes the database afresh with it.
        self._path: Path | None = None
        self._db: sqlite3.Connection | None = None  # `_path` opened; None: closed (reopened)
        self._saved_index_id: str | None = None
        self._totals: _Totals | None = None  # counted on first use, then kept up to date
        self.files = ManifestFiles(self)

    @classmethod
    def load(cls, path: Path) -> Manifest:
        db: sqlite3.Connection | None = None
        try:
            if not path.exists():
                return cls._migrate(path)
            db = _open(path)
            manifest = cls._read(db, path)
        except sqlite3.OperationalError as exc:  # locked past the timeout, an I/O error: the
            # file may be sound, so it stays; this process works from an empty manifest
            _close(db)
            log.warning("manifest %s unreadable (%s); the index will be rebuilt", path, exc)
            return cls()
        except sqlite3.Error as exc:  # not a database, malformed: set aside for a fresh one
            _close(db)
            log.warning("manifest %s damaged (%s); the index will be rebuilt", path, exc)
            _set_aside(path)
            return cls()
        except OSError as exc:
            _close(db)
            log.warning("manifest %s unreadable (%s); the index will be rebuilt", path, exc)
            return cls()
        if manifest._db is not db:
            _close(db)
        return manifest

    @classmethod
    def _read(cls, db: sqlite3.Connection, path: Path) -> Manifest:
        (version,) = db.execute("PRAGMA user_version").fetchone()
        if version != _VERSION:
            if version:  # 0: created but never written (a crash before the first save)
                log.warning("manifest %s is version %s; rebuilding the index", path, version)
            return cls()
        found = db.execute("SELECT value FROM meta WHERE key = 'index_id'").fetchone()
        manifest = cls(str(found[0]) if found else "")
        manifest._path, manifest._db = path, db
        manifest._saved_index_id = manifest.index_id
        return manifest

    @classmethod
    def _migrate(cls, path: Path) -> Manifest:
        """The manifest.json of earlier versions, moved into the database (then deleted)."""
        legacy = path.with_name(_LEGACY_JSON)
        try:
            raw = json.loads(legacy.read_text(encoding="utf-8"))
            if raw.get("version") != 1:
                return cls()
            files = {
                rel: FileState(
                    int(s["size"]),
                    int(s["mtime_ns"]),
                    int(s["ctime_ns"]),
                    int(s["ino"]),
                    str(s["sha256"]),
                    {str(k): str(v) for k, v in s["docs"].items()},
                    s.get("problem"),
                )
                for rel, s in raw["files"].items()
            }
            manifest = cls(str(raw.get("index_id", "")), files)
        except FileNotFoundError:
            return cls()
        except (OSError, ValueError, TypeError, KeyError, AttributeError) as exc:
            log.warning("manifest %s unreadable (%s); the index will be rebuilt", legacy, exc)
            return cls()
        try:
            manifest.save(path)
        except OSError as exc:  # kept in memory; the JSON stays until a save succeeds
            log.warning("%s", exc)
            return manifest
        with contextlib.suppress(OSError):
            legacy.unlink()
        log.info("manifest %s moved into %s", legacy, path)
        return manifest

    def close(self) -> None:
        """Close the database; a later read or save opens it again."""
        _close(self._db)
        self._db = None

    # -- reading ----------------------------------------------------------------------------
    def state(self, rel: str) -> FileState | None:
        """The file's state as the index has it; None when the index holds none."""
        if rel in self._pending:
            return self._pending[rel]
        return self._saved_state(rel)

    def states(self, rels: list[str]) -> Iterator[tuple[str, FileState | None]]:
        """Each of `rels` with its state (as `state`), in order, their rows read a batch at a
        time: a full sync asks for every file, and one query per row would cost several
        times the sync's stat of it."""
        for start in range(0, len(rels), _BATCH):
            batch = rels[start : start + _BATCH]
            ask = [rel for rel in batch if rel not in self._pending]
            found: dict[str, FileState] = {}
            if ask and self._path is not None:
                marks = ",".join("?" * len(ask))
                query = f"SELECT {_COLUMNS} FROM files WHERE rel IN ({marks})"
                found = {row[0]: FileState._from_row(row) for row in self._query(query, ask)}
            for rel in batch:
                yield rel, self._pending[rel] if rel in self._pending else found.get(rel)

    def paths(self) -> list[str]:
        """Every file's path (a full sync's candidates)."""
        saved = [row[0] for row in self._query("SELECT rel FROM files")] if self._path else []
        pending = self._pending
        out = [rel for rel in saved if rel not in pending]
        out += [rel for rel, state in pending.items() if state is not None]
        return out

    @property
    def problems(self) -> dict[str, str]:
        return dict(sorted(self._counted().problems.items()))

    def count(self) -> int:
        """How many files the index holds, skipped ones (with a problem) included."""
        return self._counted().files

    def set(self, rel: str, state: FileState | None) -> None:
        """Record the file's new state (None: it left the index), saved by the next save."""
        before = self.state(rel) if self._totals is not None else None
        if self._totals is not None:  # (None again when the read found the database damaged)
            self._totals.change(rel, before, state)
        self._pending[rel] = state

    def _counted(self) -> _Totals:
        if self._totals is None:
            totals = _Totals(0, {})
            if self._path is not None:
                counted = self._query("SELECT COUNT(*) FROM files")
                totals.files = int(counted[0][0]) if counted else 0
            if self._path is not None:  # (None when the count found the database damaged)
                query = "SELECT rel, problem FROM files WHERE problem != ''"
                totals.problems = {str(rel): str(p) for rel, p in self._query(query)}
            for rel, state in self._pending.items():
                totals.change(rel, self._saved_state(rel), state)
            self._totals = totals
        return self._totals

    def _saved_state(self, rel: str) -> FileState | None:
        if self._path is None:
            return None
        rows = self._query(f"SELECT {_COLUMNS} FROM files WHERE rel = ?", (rel,))
        return FileState._from_row(rows[0]) if rows else None

    def _query(self, sql: str, params: Iterable[object] = ()) -> list[tuple[Any, ...]]:
        """The rows the query finds. A database damaged since it was opened is set aside and
        the manifest then names no index (the next sync builds it again from the vault);
        OSError (with the path) when it cannot be read for now (locked, an I/O error)."""
        path = self._path
        assert path is not None
        try:
            return self._connection(path).execute(sql, tuple(params)).fetchall()
        except sqlite3.OperationalError as exc:
            raise OSError(f"{path}: the manifest cannot be read ({exc})") from exc
        except sqlite3.DatabaseError as exc:
            self._lose_saved(exc, path)
            return []

    def _connection(self, path: Path) -> sqlite3.Connection:
        if self._db is None:
            self._db = _open(path)
        return self._db

    def _lose_saved(self, exc: sqlite3.DatabaseError, path: Path) -> None:
        """The database is damaged: set it aside. The saved rows are lost with it (unless this
        manifest is held whole), so it names no index from here: the next sync builds it
        again."""
        log.warning("manifest %s damaged (%s); the index will be rebuilt", path, exc)
        _close(self._db)
        self._db = None
        if self._path is not None:
            self._path = None
            self.index_id = ""
            self._totals = None
        _set_aside(path)

    # -- saving -----------------------------------------------------------------------------
    def save(self, path: Path, digest: bool = True) -> None:
        """Write the changes since the last load or save, in one transaction.
        OSError (with the path) when it cannot be written. `digest=False` (a save between two
        batches of one sync): the stat digest is removed, not summed again from every row, which
        would make a mass sync's saves grow with the vault times its batches; a reconcile then
        reads the manifest, as it must for the files the later batches have yet to take."""
        try:
            self._write(path, digest)
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, sqlite3.OperationalError):
                raise OSError(f"{path}: the manifest cannot be written ({exc})") from exc
            # Damaged under us: start the file again with everything this manifest holds.
            self._lose_saved(exc, path)
            try:
                self._write(path, digest)
            except sqlite3.Error as again:
                raise OSError(f"{path}: the manifest cannot be written ({again})") from again

    def _write(self, path: Path, digest: bool) -> None:
        if self._path is not None and self._path != path:
            raise ValueError(f"{path}: a manifest is saved where it was loaded ({self._path})")
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        whole = self._path is None
        db = _open(path) if whole else self._connection(path)
        pending = self._pending
        try:
            db.execute("BEGIN IMMEDIATE")
            try:
                if whole:
                    db.execute("DELETE FROM files")
                gone = [(rel,) for rel, state in pending.items() if state is None]
                db.executemany("DELETE FROM files WHERE rel = ?", gone)
                db.executemany(
                    "INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    ((rel, *state.row()) for rel, state in pending.items() if state is not None),
                )
                if whole or self._saved_index_id != self.index_id:
                    db.execute(
                        "INSERT OR REPLACE INTO meta VALUES ('index_id', ?)", (self.index_id,)
                    )
                # On a save only: what every later CLI call's reconcile compares its walk with
                # (indexer.Indexer._unchanged).
                if digest:
                    summed = _saved_stat_digest(db)
                    db.execute("INSERT OR REPLACE INTO meta VALUES ('stat_digest', ?)", (summed,))
                else:
                    db.execute("DELETE FROM meta WHERE key = 'stat_digest'")
                db.execute(f"PRAGMA user_version = {_VERSION}")
                db.execute("COMMIT")
            except BaseException:
                with contextlib.suppress(sqlite3.Error):
                    db.execute("ROLLBACK")
                raise
        except BaseException:
            if whole:
                _close(db)
            raise
        self._path, self._db = path, db
        pending.clear()
        self._saved_index_id = self.index_id


class ManifestFiles(MutableMapping[str, FileState]):
    """A manifest's files as a mapping, path -> FileState: each lookup reads that file's row
    (Manifest.state); setting or deleting one is a change the next save writes."""

    def __init__(self, manifest: Manifest) -> None:
        self._manifest = manifest

    def __getitem__(self, rel: str) -> FileState:
        state = self._manifest.state(rel)
        if state is None:
            raise KeyError(rel)
        return state

    def get(self, rel: str, default: FileState | None = None) -> FileState | None:  # type: ignore[override]
        state = self._manifest.state(rel)
        return default if state is None else state

    def __contains__(self, rel: object) -> bool:
        return isinstance(rel, str) and self._manifest.state(rel) is not None

    def __setitem__(self, rel: str, state: FileState) -> None:
        self._manifest.set(rel, state)

    def __delitem__(self, rel: str) -> None:
        if rel not in self:
            raise KeyError(rel)
        self._manifest.set(rel, None)

    def __iter__(self) -> Iterator[str]:
        return iter(self._manifest.paths())

    def __len__(self) -> int:
        return self._manifest.count()

    def __repr__(self) -> str:
        return f"ManifestFiles({len(self)} files)"


class _Totals:
    """How many files a manifest holds and which have a problem, kept as its files change."""

    __slots__ = ("files", "problems")

    def __init__(self, files: int, problems: dict[str, str]) -> None:
        self.files, self.problems = files, problems

    def change(self, rel: str, before: FileState | None, after: FileState | None) -> None:
        self.files += (after is not None) - (before is not None)
        self.problems.pop(rel, None)
        if after is not None and after.problem:
            self.problems[rel] = after.problem


class Snapshot(NamedTuple):
    """What a check that nothing changed needs of the manifest (stat_snapshot)."""

    index_id: str
    digest: str  # lines_digest of every file's path and stat, as last saved
    problems: dict[str, str]  # path -> the problem that kept it out


def stat_line(rel: str, st: os.stat_result) -> str:
    """A file's line in lines_digest, from its stat: a walk keeps these, not tuples (smaller)."""
    return _line(rel, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


def lines_digest(lines: list[str]) -> str:
    """One SHA-256 of the files' paths and stats (their `stat_line`s, sorted here, in place),
    whatever their order. A save stores it with the rows it sums up (meta `stat_digest`, in the
    same transaction, `_saved_stat_digest`); a reconcile that computes the same from its walk
    knows every file is as the manifest has it, without reading a row."""
    lines.sort()
    digest = hashlib.sha256()
    for start in range(0, len(lines), _BATCH * 4):  # not joined whole: two more copies of it
        chunk = "".join(lines[start : start + _BATCH * 4])
        digest.update(chunk.encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


def _line(rel: str, size: int, mtime_ns: int, ctime_ns: int, ino: int) -> str:
    return f"{rel}\0{size}\0{mtime_ns}\0{ctime_ns}\0{ino}\n"


def _saved_stat_digest(db: sqlite3.Connection) -> str:
    """lines_digest of the rows the database holds, read in order a batch at a time rather than
    all at once. The order is lines_digest's: SQLite orders `rel` by its UTF-8 bytes, which is
    the order of its code points, and a path has no NUL, so a line's NUL after the path sorts
    a path before every longer path it begins."""
    digest = hashlib.sha256()
    rows = db.execute("SELECT rel, size, mtime_ns, ctime_ns, ino FROM files ORDER BY rel")
    while batch := rows.fetchmany(_BATCH * 4):
        lines = "".join(_line(*row) for row in batch)
        digest.update(lines.encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


def stat_snapshot(path: Path) -> Snapshot | None:
    """The manifest's index, its stat digest and the problems, read without a row per file;
    None when it is not there as a whole (missing, never written, another version, written
    before the digest was kept, locked, damaged, an old manifest.json): the caller then loads
    the manifest, which says why and repairs what it can.

    Performance: a small share of Manifest.load's time, which a CLI call without the daemon
    would pay only to learn that nothing changed. Reads only:
    no journal-mode or schema statement (which write), and `mode=rw` so that a manifest
    deleted meanwhile is not created empty here."""
    if not path.is_file():
        return None
    try:
        db = sqlite3.connect(f"{path.as_uri()}?mode=rw", uri=True, isolation_level=None)
    except (sqlite3.Error, ValueError):  # ValueError: a relative path has no file URI
        return None
    try:
        db.execute("BEGIN")  # the reads see one save, not parts of two
        (version,) = db.execute("PRAGMA user_version").fetchone()
        if version != _VERSION:
            return None
        meta = dict(db.execute("SELECT key, value FROM meta"))
        if "stat_digest" not in meta:
            return None
        problems = dict(db.execute("SELECT rel, problem FROM files WHERE problem != ''"))
        return Snapshot(str(meta.get("index_id", "")), str(meta["stat_digest"]), problems)
    except sqlite3.Error:
        return None
    finally:
        db.close()


def _open(path: Path) -> sqlite3.Connection:
    """The manifest's database, kept open by its Manifest: a sync reads a row per changed file.
    `check_same_thread=False`: opened by whichever thread first needs it, then used by the
    manifest's one owner."""
    # isolation_level=None: transactions are begun and ended here, explicitly.
    db = sqlite3.connect(path, isolation_level=None, timeout=10.0, check_same_thread=False)
    try:
        db.execute("PRAGMA synchronous = FULL")
        # WAL: a CLI call reads while the daemon writes, neither waiting for the other.
        (mode,) = db.execute("PRAGMA journal_mode = WAL").fetchone()
        if mode != "wal":  # a file system without shared memory: the rollback journal works too
            log.debug("manifest %s: journal mode %s", path, mode)
        db.executescript(_SCHEMA)
    except BaseException:
        db.close()
        raise
    return db


def _close(db: sqlite3.Connection | None) -> None:
    if db is not None:
        with contextlib.suppress(sqlite3.Error):
            db.close()


def _set_aside(path: Path) -> None:
    """Remove a damaged manifest (and its WAL); the next save starts a new one."""
    for p in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        with contextlib.suppress(OSError):
            p.unlink()
