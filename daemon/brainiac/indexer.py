"""Keeping the index true to the vault: a manifest of what was indexed, and incremental syncs.

The manifest (manifest.py: SQLite in the state directory, outside the vault) records for every
indexed file its size, mtime, ctime, inode and SHA-256, the keys and digests of its documents,
and the problem that kept it out, if any. A sync stats every file; only a file whose stat
changed is read, and only a file whose hash changed is parsed; only documents whose digest
changed are written. So a start with no change reads nothing, and an edit re-indexes the one
event or note it touched.

The manifest names the index it describes (`index_id`); if the index was deleted or rebuilt, the
mismatch turns the next sync into a full build.
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from brainiac import corpus, privacy
from brainiac import manifest as manifest_mod
from brainiac.errors import (
    IndexLockedError,
    NoteParseError,
    SearchError,
    StorageError,
    VaultError,
    is_storage_problem,
)
from brainiac.index import Index, context_digest
from brainiac.manifest import FileState, Manifest, StatRow
from brainiac.vault import Vault, is_conflict_copy, kind_of

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SyncReport:
    scanned: int
    changed: tuple[str, ...]
    removed: tuple[str, ...]
    docs_written: int
    docs_deleted: int
    problems: dict[str, str]
    full_build: bool
    seconds: float


@dataclass
class _Changes:
    """What one sync's check of the files found, filled in as the files are read."""

    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    delete: list[str] = field(default_factory=list)  # keys of documents to take out
    undo: dict[str, FileState | None] = field(default_factory=dict)  # manifest entries before
    failure: BaseException | None = None  # what reading the files raised, if anything


class Indexer:
    """Brings an Index up to date with a Vault. Not thread-safe: one owner calls it."""

    def __init__(
        self, vault: Vault, index: Index, manifest_path: Path, private_folders: tuple[str, ...] = ()
    ) -> None:
        self.vault = vault
        self.index = index
        self.manifest_path = manifest_path
        self.private_folders = private_folders
        self._root_s = os.path.join(vault.root, "")  # with the separator: `_root_s + rel`
        self._manifest: Manifest | None = None  # loaded on first use: a reader may never need it
        self.conflicts: list[str] = []  # sync-conflict copies seen by the last full sync
        # The daemon defers saving the manifest (a transaction and a disk sync) off the edit
        # path and flushes it when idle and on stop. Losing an unsaved manifest in a crash only
        # costs work: the next start re-reads the files whose stat differs, and re-adding a
        # document is idempotent (keys are unique).
        self.defer_save = False
        self.dirty = False
        # Told the keys (`path#event-id`) of the event documents a sync took out of the index:
        # event lines that left a file, or a file that went. The daemon sets it to put back at
        # once what a save removed (journal.py), whichever sync (an edit's, a rescan's) saw it.
        self.on_events_removed: Callable[[list[str]], None] | None = None

    @property
    def manifest(self) -> Manifest:
        if self._manifest is None:
            self._manifest = Manifest.load(self.manifest_path)
        return self._manifest

    @manifest.setter
    def manifest(self, value: Manifest) -> None:
        self._manifest = value

    def sync(
        self,
        paths: Iterable[str] | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> SyncReport:
        """Reconcile the whole vault (`paths=None`) or just the given relative paths;
        `progress(done, total)` hears about the files checked."""
        try:
            return self._sync(paths, progress)
        except IndexLockedError:
            raise
        except SearchError as exc:
            if self.index.identity == self.manifest.index_id and self.index.directory.is_dir():
                raise  # the same index as before: building it again would fail the same way
            # The index folder went away under the write (a person clearing the cache): build
            # it again from the vault, once. A second failure is the one-line SearchError.
            log.info("%s; building the index again from the vault", exc)
            self.manifest.index_id = ""
            return self._sync(None, progress)

    def _sync(
        self, paths: Iterable[str] | None, progress: Callable[[int, int], None] | None
    ) -> SyncReport:
        started = time.perf_counter()
        self._check_vault_folder()
        if paths is None and self._manifest is None:  # a fresh process's first reconcile
            unchanged = self._unchanged(progress, started)
            if unchanged is not None:
                return unchanged
        full_build = self.manifest.index_id != self.index.identity
        if full_build:
            if self.manifest.index_id:
                log.info(
                    "the index at %s is not the one last written (deleted or replaced); "
                    "building it again from the vault",
                    self.index.directory,
                )
            self.index.reset()
            self.manifest = Manifest(index_id=self.index.identity)
            paths = None
        if paths is None:
            listing = list(self.vault.markdown_files())
            self._check_vault_folder()  # gone during the walk: the listing is not the vault
            self.conflicts = [rel for rel in listing if is_conflict_copy(rel)]
            wanted = [rel for rel in listing if kind_of(rel)]
            candidates = set(wanted) | set(self.manifest.files)
        else:
            candidates = {p for p in paths if kind_of(p)}
        changes = _Changes()
        found = self._checked(sorted(candidates), progress, changes)
        try:
            if full_build:
                # Streamed: the index's sub-writers index while the files are read and parsed.
                written = self.index.build(self._streamed_with_previous_messages(found))
            else:
                add = list(found)
                if add or changes.delete:
                    add = self._with_previous_messages(add, changes.delete, full_build=False)
                written = len(add)
                self.index.apply(add, changes.delete)
        except BaseException as exc:
            # The index did not take these changes (a full disk, a damaged index): the
            # manifest must not claim it did, or the next sync would find the files unchanged
            # and never index them.
            for rel, state in changes.undo.items():
                if state is None:
                    self.manifest.files.pop(rel, None)
                else:
                    self.manifest.files[rel] = state
            if exc is changes.failure:
                raise  # reading the vault failed, not the index
            if is_storage_problem(exc) and not isinstance(exc, StorageError):
                raise StorageError(
                    self.index.directory, exc, "search answers from the index as it was"
                ) from exc
            raise
        changed, removed, delete = changes.changed, changes.removed, changes.delete
        gone = [key for key in delete if key.rpartition("#")[2].startswith("e-")]
        if gone and self.on_events_removed is not None:
            self.on_events_removed(gone)
        if changed or removed or full_build:
            self.dirty = True
            if not self.defer_save:
                try:
                    self.flush()
                except OSError as exc:  # the index is current; the next start re-reads these
                    log.warning("%s", exc)
        return SyncReport(
            len(candidates),
            tuple(changed),
            tuple(removed),
            written,
            len(delete),
            self.manifest.problems,
            full_build,
            time.perf_counter() - started,
        )

    def _unchanged(
        self, progress: Callable[[int, int], None] | None, started: float
    ) -> SyncReport | None:
        """The report of a full sync that would find every file as the manifest has it, made
        without loading the manifest; None when anything may differ (the full sync then looks).

        Performance (scale benchmark, 10,000 notes): a CLI call without the daemon reconciles
        once, and nearly always finds nothing changed. The full sync loads the manifest (an
        object per file) and checks file by file; this compares one digest of every (path,
        stat), stored by the manifest's last save, with the same digest of the walk's files,
        stat'ed relative to their open folder. It decides exactly as _check does: the same
        stat (lstat; stat through a symlink), the same privacy rule, the same candidates (every
        file the walk lists that is indexed, and every file of the manifest); a file rewritten
        in place changes its own mtime and ctime, which is why every file is stat'ed, not only
        folders. A manifest saved before the digest was kept has none: the full sync runs
        until the next save stores one.
        """
        snapshot = manifest_mod.stat_snapshot(self.manifest_path)
        if snapshot is None or snapshot.index_id != self.index.identity:
            return None
        listing = list(self.vault.markdown_files())
        self._check_vault_folder()  # gone during the walk: the listing is not the vault
        seen: list[StatRow] = []
        scanned = 0
        with _FolderStat(self._root_s) as stat_of:
            for rel in listing:
                if not kind_of(rel):
                    continue
                scanned += 1
                try:
                    st, is_link = stat_of(rel)
                except OSError:  # gone or unreadable since the walk: the full sync sees to it
                    return None
                if privacy.refusal(self.vault, rel, self.private_folders, is_link):
                    continue  # not indexed; if it was (private since), the digests differ
                seen.append((rel, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino))
        if manifest_mod.stat_digest(seen) != snapshot.digest:
            return None  # a new, changed or deleted file, or one the walk does not list
        self.conflicts = [rel for rel in listing if is_conflict_copy(rel)]
        if progress is not None:
            progress(scanned, scanned)
        return SyncReport(
            scanned,
            (),
            (),
            0,
            0,
            dict(sorted(snapshot.problems.items())),
            False,
            time.perf_counter() - started,
        )

    def _checked(
        self,
        rels: list[str],
        progress: Callable[[int, int], None] | None,
        changes: _Changes,
    ) -> Iterator[corpus.Document]:
        """Check each file against the manifest, in order, yielding the documents to add as each
        file is parsed; what changed, what to delete and the manifest's entries before go into
        `changes`."""
        add: list[corpus.Document] = []
        total = len(rels)
        for done, rel in enumerate(rels, 1):
            if progress is not None and (done % 100 == 0 or done == total):
                progress(done, total)
            before = self.manifest.files.get(rel)
            try:
                outcome = self._check(rel, add, changes.delete)
            except BaseException as exc:
                changes.failure = exc
                raise
            if outcome == "changed":
                changes.changed.append(rel)
                changes.undo[rel] = before
            elif outcome == "removed":
                changes.removed.append(rel)
                changes.undo[rel] = before
            yield from add
            add.clear()

    def _streamed_with_previous_messages(
        self, found: Iterator[corpus.Document]
    ) -> Iterator[corpus.Document]:
        """A full build's documents as they are parsed, except the events of a session: those
        wait until every file is read, since the message before one may be filed in any of
        them (_with_previous_messages). Notes and the rest keep the writer busy meanwhile."""
        waiting: list[corpus.Document] = []
        for doc in found:
            if doc.kind == corpus.EVENT and doc.session:
                waiting.append(doc)
            else:
                yield doc
        if waiting:
            yield from self._with_previous_messages(waiting, [], full_build=True)

    def _with_previous_messages(
        self, add: list[corpus.Document], delete: list[str], full_build: bool
    ) -> list[corpus.Document]:
        """`add` with each event's context set to the message before it in its session, wherever
        either is filed (corpus.previous_messages), plus the indexed events of the same sessions
        whose preceding message this sync changed (one added before them, or deleted: a
        forgotten message must not live on in the next one's context)."""
        sessions = {d.session for d in add if d.kind == corpus.EVENT and d.session}
        if not full_build:  # a full build starts from an empty index
            sessions |= self.index.sessions_of(k for k in delete if "#" in k)
        if not sessions:
            return add
        pending = {d.key for d in add}
        gone = set(delete)
        known = [] if full_build else self.index.session_events(sessions)
        known = [(d, digest) for d, digest in known if d.key not in pending and d.key not in gone]
        members = [d for d, _ in known] + [d for d in add if d.session in sessions]
        previous = corpus.previous_messages(members)
        out = [corpus.with_context(d, previous[d.key]) if d.key in previous else d for d in add]
        out += [
            corpus.with_context(d, previous[d.key])
            for d, digest in known
            if context_digest(previous[d.key]) != digest
        ]
        return out

    def _check_vault_folder(self) -> None:
        """VaultError when the vault folder is gone (moved away or deleted while brainiac runs):
        every file would look deleted, and a full sync would empty the index."""
        if not self.vault.root.is_dir():
            raise VaultError(
                f"{self.vault.root}: the vault folder is gone (moved away or deleted); the index "
                "is left as it was until the folder is back"
            )

    def flush(self) -> None:
        """Save the manifest if it changed since the last save."""
        if self.dirty:
            self.manifest.save(self.manifest_path)
            self.dirty = False

    def _check(self, rel: str, add: list[corpus.Document], delete: list[str]) -> str:
        """Compare one file with the manifest, queueing its document changes; say what it was."""
        known = self.manifest.files.get(rel)
        # Performance (scale benchmark, 10k notes): one lstat on a string path per file; stat and
        # the vault check only for a symlink. Before: Path join + stat + is_symlink (a second
        # lstat) per file. For a regular file lstat and stat return the same result.
        path_s = self._root_s + rel
        is_link = False
        try:
            st = os.lstat(path_s)
            is_link = stat.S_ISLNK(st.st_mode)
            if is_link:
                st = os.stat(path_s)
        except (FileNotFoundError, NotADirectoryError):
            st = None
        # Private by where it is or where it leads (privacy.py), judged on every sync before the
        # stat shortcut: a folder made private since the last sync leaves the index now, not at
        # the next edit of each of its notes.
        private = st is not None and privacy.refusal(self.vault, rel, self.private_folders, is_link)
        if st is None or private:
            if known is None:
                return "unchanged"
            delete.extend(known.docs)
            del self.manifest.files[rel]
            return "removed"
        if known is not None and known.same_stat(st):
            return "unchanged"
        try:
            text_file = self.vault.read(rel)
        except FileNotFoundError:
            return self._check(rel, add, delete) if known else "unchanged"
        except NoteParseError as exc:
            return self._record_problem(rel, st, known, str(exc))
        fp = text_file.fingerprint
        if known is not None and known.sha256 == fp.sha256 and not known.problem:
            known.size, known.mtime_ns, known.ino = fp.size, fp.mtime_ns, fp.ino
            known.ctime_ns = st.st_ctime_ns
            return "touched"
        try:
            docs = corpus.documents(rel, text_file.text)
        except NoteParseError as exc:
            return self._record_problem(rel, st, known, str(exc))
        new_docs = {d.key: d.digest for d in docs}
        old_docs = known.docs if known else {}
        add.extend(d for d in docs if old_docs.get(d.key) != d.digest)
        delete.extend(k for k in old_docs if k not in new_docs)
        self.manifest.files[rel] = FileState(
            fp.size, fp.mtime_ns, st.st_ctime_ns, fp.ino, fp.sha256, new_docs, None
        )
        return "changed"

    def _record_problem(
        self, rel: str, st: os.stat_result, known: FileState | None, problem: str
    ) -> str:
        # The last good documents stay searchable: a half-typed YAML edit should not make a
        # memory vanish. The file itself is never touched.
        if known is None or known.problem != problem:
            log.warning("%s", problem)
        docs = known.docs if known else {}
        sha = known.sha256 if known else ""
        self.manifest.files[rel] = FileState(
            st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, sha, docs, problem
        )
        return "changed"

    def close(self) -> None:
        try:
            self.flush()
        except OSError as exc:  # the next start re-reads what changed; nothing is lost
            log.warning("could not save %s (%s)", self.manifest_path, exc.strerror)
        with contextlib.suppress(Exception):
            self.index.close()


class _FolderStat:
    """Stats vault files relative to their folder's open descriptor (fstatat), the folder opened
    once for its run of files: the walk lists a folder's files together. At 10,000 notes ~25%
    less system time than a full path per file, whose every part the kernel looks up again.
    `stat_of(rel)` gives (the stat as _check takes it, whether the file is a symlink)."""

    def __init__(self, root_s: str) -> None:
        self._root_s = root_s
        self._folder: str | None = None
        self._fd: int | None = None
        self._relative = os.lstat in os.supports_dir_fd and os.stat in os.supports_dir_fd

    def __enter__(self) -> Callable[[str], tuple[os.stat_result, bool]]:
        return self._stat

    def __exit__(self, *exc: object) -> None:
        self._close()

    def _stat(self, rel: str) -> tuple[os.stat_result, bool]:
        if not self._relative:
            path = self._root_s + rel
            st = os.lstat(path)
            is_link = stat.S_ISLNK(st.st_mode)
            return (os.stat(path) if is_link else st), is_link
        folder, _, name = rel.rpartition("/")
        if folder != self._folder:
            self._close()
            self._fd = os.open(self._root_s + folder, os.O_RDONLY | os.O_DIRECTORY)
            self._folder = folder
        st = os.lstat(name, dir_fd=self._fd)
        is_link = stat.S_ISLNK(st.st_mode)
        return (os.stat(name, dir_fd=self._fd) if is_link else st), is_link

    def _close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = self._folder = None
