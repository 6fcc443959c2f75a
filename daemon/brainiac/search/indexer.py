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
from typing import NoReturn

from brainiac.core.errors import (
    IndexLockedError,
    NoteParseError,
    SearchError,
    StorageError,
    VaultError,
    is_storage_problem,
)
from brainiac.search import corpus
from brainiac.search.index import Index
from brainiac.search.neighbours import with_neighbours_contexts
from brainiac.store import manifest as manifest_mod
from brainiac.store import privacy
from brainiac.store.manifest import FileState, Manifest
from brainiac.store.vault import KIND_BY_NAME, Vault, is_conflict_copy, kind_in, kind_of

log = logging.getLogger(__name__)

# An incremental sync larger than this is committed in batches (Indexer._applied_in_batches):
# files per batch, and characters of the documents' text per batch, whichever is reached first.
SYNC_BATCH_FILES = 500
SYNC_BATCH_CHARS = 4_000_000


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
    touched: bool = False  # a file's stat changed and its text did not (its new stat is kept)
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
        # Told, after each sync the index took, the event documents it added or changed, as
        # (key, text, role), the keys it deleted, and whether it was a full build (which replaces
        # everything told before): the semantic index's vectors follow the index this way.
        self.on_events_indexed: (
            Callable[[list[tuple[str, str, str]], list[str], bool], None] | None
        ) = None

    @property
    def manifest(self) -> Manifest:
        if self._manifest is None:
            self._manifest = Manifest.load(self.manifest_path)
        return self._manifest

    @manifest.setter
    def manifest(self, value: Manifest) -> None:
        self._manifest = value  # the one replaced closes its database as it is freed

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
        if full_build:
            written, deleted = self._built(sorted(candidates), progress, changes), 0
        else:
            written, deleted = self._applied_in_batches(sorted(candidates), progress, changes)
        changed, removed = changes.changed, changes.removed
        # Touched files too: unsaved, their new stats would differ from the manifest's at every
        # later process's reconcile, which would then read each of them again (_unchanged).
        if changed or removed or full_build or changes.touched:
            self._saved_if_due(self.defer_save)
        return SyncReport(
            len(candidates),
            tuple(changed),
            tuple(removed),
            written,
            deleted,
            self.manifest.problems,
            full_build,
            time.perf_counter() - started,
        )

    def _built(
        self, rels: list[str], progress: Callable[[int, int], None] | None, changes: _Changes
    ) -> int:
        """A full build of `rels` into the emptied index, in one commit; how many documents."""
        events: list[tuple[str, str, str]] = []  # what on_events_indexed is told
        found = self._checked(rels, progress, changes)
        try:
            # Streamed: the index's sub-writers index while the files are read and parsed.
            written = self.index.build(
                _noting_events(self._streamed_with_previous_messages(found), events),
                files=len(rels),
            )
        except BaseException as exc:
            self._undone(changes, exc)
        self._told(events, changes.delete, full_build=True)
        return written

    def _applied_in_batches(
        self, rels: list[str], progress: Callable[[int, int], None] | None, changes: _Changes
    ) -> tuple[int, int]:
        """An incremental sync of `rels`, committed a batch of files at a time (at most
        SYNC_BATCH_FILES files or SYNC_BATCH_CHARS characters of documents' text, a file never
        split); how many documents were written and deleted.

        A mass change (a job rewriting every note, a `git checkout`, a sync tool delivering a
        vault) would otherwise hold every changed document, its neighbours' contexts and one
        commit's postings in the heap at once. Each batch is a sync of its own: its documents
        with their neighbours' contexts read from the index as the earlier batches left it
        (so the last batch leaves every context a one-commit sync gives), one commit, then its
        part of the manifest saved. The manifest never claims a file of a batch the index did
        not take: a failure undoes that batch's entries only, and a crash between batches
        leaves the later files' old entries, which the next reconcile finds changed. Searches
        between two batches see the change in part."""
        written = deleted = 0
        pending: list[corpus.Document] = []
        chars = 0
        try:
            for docs in self._checked_files(rels, progress, changes):
                pending.extend(docs)
                chars += sum(len(d.text) + len(d.body) for d in docs)
                # changes.undo: the batch's files changed or removed (unchanged ones cost none)
                if len(changes.undo) >= SYNC_BATCH_FILES or chars >= SYNC_BATCH_CHARS:
                    batch = self._batch_applied(pending, changes)
                    written, deleted = written + batch[0], deleted + batch[1]
                    # Saved now, even when saves are deferred: what the index holds stays
                    # known after a crash, and the manifest's unsaved rows do not pile up. Its
                    # stat digest waits for the sync's last save (Manifest.save).
                    self._saved_if_due(deferred=False, digest=False)
                    pending, chars = [], 0
            batch = self._batch_applied(pending, changes)
        except BaseException as exc:
            self._undone(changes, exc)
        return written + batch[0], deleted + batch[1]

    def _batch_applied(self, add: list[corpus.Document], changes: _Changes) -> tuple[int, int]:
        """Commit one batch's documents and deletions with their neighbours' contexts, then tell
        the listeners; the batch's manifest entries are then the index's (no undo)."""
        delete = changes.delete
        if add or delete:
            add = with_neighbours_contexts(self.index, add, delete)
        self.index.apply(add, delete)
        changes.undo.clear()
        changes.delete = []
        events = [(d.key, d.text, d.role) for d in add if d.kind == corpus.EVENT]
        self._told(events, delete, full_build=False)
        return len(add), len(delete)

    def _undone(self, changes: _Changes, exc: BaseException) -> NoReturn:
        """Put back the manifest entries of what the index did not take (a full disk, a
        damaged index) and raise: a manifest claiming them would make the next sync find the
        files unchanged and never index them."""
        for rel, state in changes.undo.items():
            if state is None:
                self.manifest.files.pop(rel, None)
            else:
                self.manifest.files[rel] = state
        changes.undo.clear()
        if exc is changes.failure:
            raise exc  # reading the vault failed, not the index
        if is_storage_problem(exc) and not isinstance(exc, StorageError):
            raise StorageError(
                self.index.directory, exc, "search answers from the index as it was"
            ) from exc
        raise exc

    def _told(
        self, events: list[tuple[str, str, str]], delete: list[str], full_build: bool
    ) -> None:
        """Tell the listeners what a commit the index took added and took out."""
        if self.on_events_indexed is not None and (events or delete or full_build):
            self.on_events_indexed(events, delete, full_build)
        gone = [key for key in delete if key.rpartition("#")[2].startswith("e-")]
        if gone and self.on_events_removed is not None:
            self.on_events_removed(gone)

    def _saved_if_due(self, deferred: bool, digest: bool = True) -> None:
        """Mark the manifest changed, and save it unless `deferred` (`digest`: Manifest.save)."""
        self.dirty = True
        if not deferred:
            try:
                self.flush(digest)
            except OSError as exc:  # the index is current; the next start re-reads these
                log.warning("%s", exc)

    def _unchanged(
        self, progress: Callable[[int, int], None] | None, started: float
    ) -> SyncReport | None:
        """The report of a full sync that would find every file as the manifest has it, made
        without loading the manifest; None when anything may differ (the full sync then looks).

        Performance: a CLI call without the daemon reconciles
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
        seen: list[str] = []  # manifest.stat_line of each file indexed
        conflicts: list[str] = []
        scanned = 0
        private = self.private_folders
        # Folder by folder: kind_of's rules by place and a private folder are decided once for a
        # folder's files, whose name alone then decides (a conflict copy, a name kind_of knows,
        # a private_folders entry naming the file itself, a symlink's target).
        for prefix, listed in self.vault.markdown_folders():
            place = kind_in(prefix)
            shared = privacy.folder_refusal(prefix, private)
            rels: list[str] = []  # the folder's indexed files
            for rel in listed:
                if is_conflict_copy(rel):
                    conflicts.append(rel)  # kind_of: None
                elif kind_of(rel) if rel in KIND_BY_NAME else place:
                    rels.append(rel)
            if not rels:
                continue
            scanned += len(rels)
            cut = len(prefix)  # a path's name in the folder: rel[cut:]
            try:  # every file stat'ed, as _check does, even in a folder refused as a whole
                for rel, st, is_link in _stats_in(self._root_s + prefix, cut, rels):
                    if shared is not None or (
                        (private or is_link or rel.startswith(".", cut))
                        and privacy.refusal(self.vault, rel, private, is_link)
                    ):
                        continue  # not indexed; if it was (private since), the digests differ
                    seen.append(manifest_mod.stat_line(rel, st))
            except OSError:  # gone or unreadable since the walk: the full sync sees to it
                return None
        self._check_vault_folder()  # gone during the walk: the listing is not the vault
        if manifest_mod.lines_digest(seen) != snapshot.digest:
            return None  # a new, changed or deleted file, or one the walk does not list
        self.conflicts = conflicts
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
        """The documents to add of each file, in order, as _checked_files yields them."""
        for docs in self._checked_files(rels, progress, changes):
            yield from docs

    def _checked_files(
        self,
        rels: list[str],
        progress: Callable[[int, int], None] | None,
        changes: _Changes,
    ) -> Iterator[list[corpus.Document]]:
        """Check each file against the manifest, in order, yielding the documents to add of each
        file once it is parsed (a list reused for the next file); what changed, what to delete
        and the manifest's entries before go into `changes`."""
        add: list[corpus.Document] = []
        total = len(rels)
        for done, (rel, before) in enumerate(self.manifest.states(rels), 1):
            if progress is not None and (done % 100 == 0 or done == total):
                progress(done, total)
            try:
                outcome = self._check(rel, before, add, changes.delete)
            except BaseException as exc:
                changes.failure = exc
                raise
            if outcome == "changed":
                changes.changed.append(rel)
                changes.undo[rel] = before
            elif outcome == "removed":
                changes.removed.append(rel)
                changes.undo[rel] = before
            elif outcome == "touched":
                changes.touched = True
            yield add
            add.clear()

    def _streamed_with_previous_messages(
        self, found: Iterator[corpus.Document]
    ) -> Iterator[corpus.Document]:
        """A full build's documents as they are parsed, except the events of a session: those
        wait until every file is read, since the message before one may be filed in any of
        them (corpus.previous_messages). Notes and the rest keep the writer busy meanwhile."""
        waiting: list[corpus.Document] = []
        for doc in found:
            if doc.kind == corpus.EVENT and doc.session:
                waiting.append(doc)
            else:
                yield doc
        if waiting:
            previous = corpus.previous_messages(waiting)
            yield from (corpus.with_context(d, previous[d.key]) for d in waiting)

    def _check_vault_folder(self) -> None:
        """VaultError when the vault folder is gone (moved away or deleted while brainiac runs):
        every file would look deleted, and a full sync would empty the index."""
        if not self.vault.root.is_dir():
            raise VaultError(
                f"{self.vault.root}: the vault folder is gone (moved away or deleted); the index "
                "is left as it was until the folder is back"
            )

    def flush(self, digest: bool = True) -> None:
        """Save the manifest if it changed since the last save (`digest`: Manifest.save)."""
        if self.dirty:
            self.manifest.save(self.manifest_path, digest)
            self.dirty = False

    def _check(
        self, rel: str, known: FileState | None, add: list[corpus.Document], delete: list[str]
    ) -> str:
        """Compare one file with its manifest state, queueing its document changes; say what."""
        # Performance: one lstat on a string path per file; stat and the vault check only for a
        # symlink (not a Path join, a stat and is_symlink's second lstat per file). For a regular
        # file lstat and stat return the same result.
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
            return self._check(rel, known, add, delete) if known else "unchanged"
        except NoteParseError as exc:
            return self._record_problem(rel, st, known, str(exc))
        fp = text_file.fingerprint
        if known is not None and known.sha256 == fp.sha256 and not known.problem:
            known.size, known.mtime_ns, known.ino = fp.size, fp.mtime_ns, fp.ino
            known.ctime_ns = st.st_ctime_ns
            self.manifest.files[rel] = known  # a row read for this check: the change is saved
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
        if self._manifest is not None:
            self._manifest.close()  # a later use opens it again
        with contextlib.suppress(Exception):
            self.index.close()


def _stats_in(
    folder_s: str, cut: int, rels: list[str]
) -> Iterator[tuple[str, os.stat_result, bool]]:
    """(path, the stat as _check takes it, whether the file is a symlink) of files of one folder,
    `rels[i][cut:]` their names in `folder_s`, one at a time (a folder's stat results held
    together would cost memory in proportion to its files), stat'ed relative to the folder's
    descriptor (fstatat), opened once: the kernel looks up the folder's path once, not again for
    every file as a full path would make it."""
    if not (os.lstat in os.supports_dir_fd and os.stat in os.supports_dir_fd):
        for rel in rels:
            path = folder_s + rel[cut:]
            st = os.lstat(path)
            is_link = stat.S_ISLNK(st.st_mode)
            yield rel, (os.stat(path) if is_link else st), is_link
        return
    fd = os.open(folder_s, os.O_RDONLY | os.O_DIRECTORY)
    try:
        lstat, is_symlink = os.lstat, stat.S_ISLNK
        for rel in rels:
            name = rel[cut:]
            st = lstat(name, dir_fd=fd)
            if is_symlink(st.st_mode):
                yield rel, os.stat(name, dir_fd=fd), True
            else:
                yield rel, st, False
    finally:
        os.close(fd)


def _noting_events(
    docs: Iterable[corpus.Document], events: list[tuple[str, str, str]]
) -> Iterator[corpus.Document]:
    """`docs` as they are, each event's (key, text, role) noted in `events` on the way."""
    for doc in docs:
        if doc.kind == corpus.EVENT:
            events.append((doc.key, doc.text, doc.role))
        yield doc
