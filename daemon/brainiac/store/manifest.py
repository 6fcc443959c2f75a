"""The manifest: what the index holds of every vault file, kept in SQLite in the state directory.

For every indexed file it records size, mtime, ctime, inode and SHA-256, the keys and digests of
its documents, and the problem that kept it out, if any; and it names the index it describes
(`index_id`), so a deleted or rebuilt index turns the next sync into a full build (indexer.py).

Why SQLite rather than one JSON file: every CLI call (the agent hook's path) opens the manifest,
and parsing a 5 MB JSON file took 53 ms at 10,000 notes; a save rewrote all of it. Here a load
reads the stat columns of every row in one query and decodes a file's document list only when
the sync needs it (a changed file), and a save writes only the rows that changed, in one
transaction, so a reader sees the manifest before or after a save, never half of one.

Crash safety is the same as before: a save commits after the index did (the indexer's order), with
`synchronous=FULL` as the old fsync-then-rename; a crash before it costs only work (the next sync
re-reads the files whose stat differs). A manifest that cannot be read (damaged, another
version) is set aside and the index is built again from the vault, as before. An old
`manifest.json` beside it is migrated on first load and then removed.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import sqlite3
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import NamedTuple

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
_Row = tuple[int, int, int, int, str, str, str | None]
# A file's stat as the manifest holds it, with its path: (rel, size, mtime_ns, ctime_ns, ino).
StatRow = tuple[str, int, int, int, int]


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
        directly: 10,000 of these are made on every CLI call's load."""
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
    """The files the index holds (`files`, relative path -> FileState) and the index it names."""

    def __init__(self, index_id: str = "", files: dict[str, FileState] | None = None) -> None:
        self.index_id = index_id
        self.files: dict[str, FileState] = files if files is not None else {}
        # The rows as last read or saved, to write only what changed; None: the database is not
        # known to hold this manifest (a new one, after a full build), so a save rewrites it all.
        self._saved: dict[str, _Row] | None = None
        self._saved_rows: list[tuple[str, *_Row]] | None = None  # as read; made `_saved` on save
        self._saved_index_id: str | None = None

    @classmethod
    def load(cls, path: Path) -> Manifest:
        try:
            if not path.exists():
                return cls._migrate(path)
            with _connect(path) as db:
                manifest = cls._read(db, path)
        except sqlite3.OperationalError as exc:  # locked past the timeout, an I/O error: the
            # file may be sound, so it stays; this process works from an empty manifest
            log.warning("manifest %s unreadable (%s); the index will be rebuilt", path, exc)
            return cls()
        except sqlite3.Error as exc:  # not a database, malformed: set aside for a fresh one
            log.warning("manifest %s damaged (%s); the index will be rebuilt", path, exc)
            _set_aside(path)
            return cls()
        except OSError as exc:
            log.warning("manifest %s unreadable (%s); the index will be rebuilt", path, exc)
            return cls()
        return manifest

    @classmethod
    def _read(cls, db: sqlite3.Connection, path: Path) -> Manifest:
        (version,) = db.execute("PRAGMA user_version").fetchone()
        if version != _VERSION:
            if version:  # 0: created but never written (a crash before the first save)
                log.warning("manifest %s is version %s; rebuilding the index", path, version)
            return cls()
        found = db.execute("SELECT value FROM meta WHERE key = 'index_id'").fetchone()
        rows = db.execute(
            "SELECT rel, size, mtime_ns, ctime_ns, ino, sha256, docs, problem FROM files"
        ).fetchall()
        files = {row[0]: FileState._from_row(row) for row in rows}
        manifest = cls(str(found[0]) if found else "", files)
        manifest._saved_rows, manifest._saved_index_id = rows, manifest.index_id
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

    def save(self, path: Path) -> None:
        """Write the rows that changed since the last load or save, in one transaction.
        OSError (with the path) when it cannot be written."""
        try:
            self._write(path)
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, sqlite3.OperationalError):
                raise OSError(f"{path}: the manifest cannot be written ({exc})") from exc
            # Damaged under us: start the file again with everything this manifest holds.
            log.warning("manifest %s damaged (%s); writing it afresh", path, exc)
            _set_aside(path)
            self._saved = self._saved_rows = None
            try:
                self._write(path)
            except sqlite3.Error as again:
                raise OSError(f"{path}: the manifest cannot be written ({again})") from again

    def _write(self, path: Path) -> None:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        rows = {rel: state.row() for rel, state in self.files.items()}
        if self._saved_rows is not None:  # built here, not on load: most loads never save
            self._saved = {row[0]: row[1:] for row in self._saved_rows}
            self._saved_rows = None
        saved = self._saved
        with _connect(path) as db:
            db.execute("BEGIN IMMEDIATE")
            try:
                if saved is None:
                    db.execute("DELETE FROM files")
                    changed = rows
                    gone: list[str] = []
                else:
                    changed = {rel: row for rel, row in rows.items() if saved.get(rel) != row}
                    gone = [rel for rel in saved if rel not in rows]
                db.executemany("DELETE FROM files WHERE rel = ?", ((rel,) for rel in gone))
                db.executemany(
                    "INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    ((rel, *row) for rel, row in changed.items()),
                )
                if saved is None or self._saved_index_id != self.index_id:
                    db.execute(
                        "INSERT OR REPLACE INTO meta VALUES ('index_id', ?)", (self.index_id,)
                    )
                # On a save only: what every later CLI call's reconcile compares its walk with
                # (indexer.Indexer._unchanged).
                digest = stat_digest((rel, *row[:4]) for rel, row in rows.items())
                db.execute("INSERT OR REPLACE INTO meta VALUES ('stat_digest', ?)", (digest,))
                db.execute(f"PRAGMA user_version = {_VERSION}")
                db.execute("COMMIT")
            except BaseException:
                with contextlib.suppress(sqlite3.Error):
                    db.execute("ROLLBACK")
                raise
        self._saved, self._saved_index_id = rows, self.index_id

    @property
    def problems(self) -> dict[str, str]:
        return {rel: s.problem for rel, s in sorted(self.files.items()) if s.problem}


class Snapshot(NamedTuple):
    """What a check that nothing changed needs of the manifest (stat_snapshot)."""

    index_id: str
    digest: str  # stat_digest of every file's path and stat, as last saved
    problems: dict[str, str]  # path -> the problem that kept it out


def stat_digest(stats: Iterable[StatRow]) -> str:
    """One SHA-256 of the files' paths and stats, whatever their order. A save stores it with
    the rows it sums up (meta `stat_digest`, in the same transaction); a reconcile that computes
    the same from its walk knows every file is as the manifest has it, without reading a row."""
    lines = [f"{rel}\0{size}\0{mtime}\0{ctime}\0{ino}\n" for rel, size, mtime, ctime, ino in stats]
    lines.sort()
    return hashlib.sha256("".join(lines).encode("utf-8", "surrogateescape")).hexdigest()


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


def saved_counts(path: Path) -> tuple[int, dict[str, str]] | None:
    """How many files the manifest as last saved holds, and the problems that keep some of them
    out (path -> problem), read without a row object per file; None when it is not there as a
    whole (as stat_snapshot): the caller then loads it."""
    if not path.is_file():
        return None
    try:
        db = sqlite3.connect(f"{path.as_uri()}?mode=rw", uri=True, isolation_level=None)
    except (sqlite3.Error, ValueError):
        return None
    try:
        db.execute("BEGIN")  # the count and the problems of one save
        (version,) = db.execute("PRAGMA user_version").fetchone()
        if version != _VERSION:
            return None
        (files,) = db.execute("SELECT count(*) FROM files").fetchone()
        problems = dict(db.execute("SELECT rel, problem FROM files WHERE problem != ''"))
        return int(files), dict(sorted(problems.items()))
    except sqlite3.Error:
        return None
    finally:
        db.close()


@contextlib.contextmanager
def _connect(path: Path) -> Iterator[sqlite3.Connection]:
    # isolation_level=None: transactions are begun and ended here, explicitly.
    db = sqlite3.connect(path, isolation_level=None, timeout=10.0)
    try:
        db.execute("PRAGMA synchronous = FULL")
        # WAL: a CLI call reads while the daemon writes, neither waiting for the other.
        (mode,) = db.execute("PRAGMA journal_mode = WAL").fetchone()
        if mode != "wal":  # a file system without shared memory: the rollback journal works too
            log.debug("manifest %s: journal mode %s", path, mode)
        db.executescript(_SCHEMA)
        yield db
    finally:
        db.close()


def _set_aside(path: Path) -> None:
    """Remove a damaged manifest (and its WAL); the next save starts a new one."""
    for p in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        with contextlib.suppress(OSError):
            p.unlink()
