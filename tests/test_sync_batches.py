"""A mass change of the vault (a job rewriting every note, a `git checkout`, a sync tool delivering
a vault) is synced in bounded batches (indexer.py, Indexer._applied_in_batches): one commit and
one manifest save per batch, the neighbours' contexts those of a one-commit sync, and a failure
or a crash between two batches loses nothing and doubles nothing at the next start."""

from __future__ import annotations

import datetime as dt
import errno
import hashlib
import os
import random
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from brainiac import Memory
from brainiac.core.errors import StorageError
from brainiac.search import indexer as indexer_mod
from brainiac.search.index import Index
from brainiac.search.index_documents import StoredEvent
from brainiac.search.whoosh_internals import latest_generation
from brainiac.store.manifest import Manifest
from helpers import JOBS_OFF, run_daemon, stop, wait_for
from test_session_neighbours import WORDS, T, _indexed_against_vault, _line, _write
from test_sync_bulk import LONG_TERM, _clean, _index, _note, _paths

NOTES = 60
BATCH = 8  # files per batch: NOTES / BATCH commits, boundaries inside every session
KILLED_NOTES = 1_600  # more than three batches of indexer.SYNC_BATCH_FILES


def _versions(seed: int) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """The notes before and after a mass rewrite: three sessions whose messages are spread over
    every note (a message's neighbours in time are in other notes, so in other batches); after
    it, every note's lines are retexted, and some lines are deleted or moved to another note."""
    rng = random.Random(seed)
    before: dict[str, list[str]] = {f"N{i:03d}": [] for i in range(NOTES)}
    lines: list[tuple[str, int, str, int]] = []  # (session, minute, text, id)
    for ident in range(1, NOTES * 4 + 1):
        session = f"s{ident % 3}"
        lines.append((session, ident, " ".join(rng.sample(WORDS, 3)), ident))
    names = sorted(before)
    placed = {ident: names[(ident * 7) % NOTES] for _, _, _, ident in lines}
    for session, minute, text, ident in lines:
        at = T + dt.timedelta(minutes=minute)
        before[placed[ident]].append(_line(at, session, text, ident))
    after: dict[str, list[str]] = {name: [] for name in names}
    for session, minute, text, ident in lines:
        fate = rng.random()
        if fate < 0.1:
            continue  # deleted
        name = rng.choice(names) if fate < 0.2 else placed[ident]  # moved, or kept in place
        at = T + dt.timedelta(minutes=minute)
        after[name].append(_line(at, session, f"{rng.choice(WORDS)} {text}", ident))
    return before, after


def _stored(memory: Memory) -> dict[str, tuple[str, str]]:
    """Every indexed session event: key -> (its text, the digest of its context)."""
    keys = [
        f"memory/long_term/N{i:03d}.md#e-{ident:010x}"
        for i in range(NOTES)
        for ident in range(1, NOTES * 4 + 1)
    ]
    found: list[StoredEvent] = memory.indexer.index.session_events_keyed(keys)
    return {e.doc.key: (e.doc.text, e.context_digest) for e in found}


def _commits(memory: Memory) -> int:
    return latest_generation(str(memory.indexer.index.directory))


def test_a_mass_rewrite_is_committed_in_batches_with_the_contexts_of_one_commit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before, after = _versions(seed=3)
    results: dict[str, dict[str, tuple[str, str]]] = {}
    for name, batch in (("batches", BATCH), ("one", 10_000)):
        vault = tmp_path / name
        Memory.init(vault)
        monkeypatch.setattr(indexer_mod, "SYNC_BATCH_FILES", batch)
        with Memory(vault, refresh_interval_s=0) as memory:
            _write(vault, before)
            memory.refresh(force=True)
            first = _commits(memory)
            _write(vault, after)
            report = memory.refresh(force=True)
            assert report is not None and not report.full_build
            assert len(report.changed) == NOTES
            commits = _commits(memory) - first
            total, wrong = _indexed_against_vault(memory, vault)
            assert wrong == [] and total > NOTES * 3
            results[name] = _stored(memory)
        if name == "batches":
            assert commits >= NOTES // BATCH  # one commit per batch of 8 files
        else:
            assert commits == 1
    assert results["batches"] == results["one"]
    assert len(results["one"]) == sum(len(lines) for lines in after.values())


def test_a_sync_failing_between_batches_keeps_its_committed_part_and_the_next_start_ends_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The index refuses the third batch (a full disk): the sync says so, the manifest saved
    claims exactly the files of the two batches committed, and the next start re-reads only the
    others and leaves every event indexed once, with its context."""
    vault = tmp_path / "vault"
    Memory.init(vault)
    monkeypatch.setattr(indexer_mod, "SYNC_BATCH_FILES", BATCH)
    before, after = _versions(seed=5)
    applied = Index.apply
    calls: list[int] = []

    def failing_third(self: Index, add: Any, delete: Any) -> None:
        calls.append(len(add))
        if len(calls) == 3:
            raise OSError(errno.ENOSPC, "No space left on device")
        applied(self, add, delete)

    with Memory(vault, refresh_interval_s=0) as memory:
        _write(vault, before)
        memory.refresh(force=True)
        _write(vault, after)
        monkeypatch.setattr(Index, "apply", failing_third)
        with pytest.raises(StorageError):
            memory.refresh(force=True)
        monkeypatch.setattr(Index, "apply", applied)
        manifest_path = memory.indexer.manifest_path
    # What a crash at that moment leaves on disk: the manifest as saved.
    saved = Manifest.load(manifest_path)
    current = {rel: state.sha256 for rel, state in saved.files.items()}
    saved.close()
    new = {
        f"memory/long_term/{name}.md": _sha(vault / f"memory/long_term/{name}.md") for name in after
    }
    claimed = sorted(rel for rel, sha in new.items() if current.get(rel) == sha)
    assert claimed == sorted(new)[: 2 * BATCH]  # the two batches the index took, in order
    copy = tmp_path / "copy"
    shutil.copytree(vault, copy)  # the same vault, synced in one commit from the start
    with Memory(vault, refresh_interval_s=0) as memory:  # the next start
        report = memory.refresh(force=True)
        assert report is not None and not report.full_build
        assert sorted(report.changed) == sorted(new)[2 * BATCH :]
        total, wrong = _indexed_against_vault(memory, vault)
        assert wrong == [] and total > NOTES * 3
        resumed = _stored(memory)
        # Each event once: none lost, none left in a note it moved out of.
        assert len(resumed) == sum(len(lines) for lines in after.values())
    with Memory(copy, refresh_interval_s=0) as memory:
        memory.refresh(force=True)
        assert _stored(memory) == resumed


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.slow
@pytest.mark.timeout(600)  # a hang guard: beside other workers on two cores
def test_a_daemon_killed_between_two_batches_of_its_start_loses_and_doubles_nothing(
    tmp_path: Path,
) -> None:
    """1,600 notes rewritten while the daemon was down: its start's reconcile commits them a
    batch at a time; `kill -9` once the index holds part of the change, and the next start
    leaves every note indexed once, as the vault has it."""
    vault = tmp_path / "vault"
    Memory.init(vault)
    notes = vault / LONG_TERM
    for i in range(KILLED_NOTES):
        (notes / f"n{i:05d}.md").write_bytes(_note(i, "aardvark"))
    log = tmp_path / "daemon.log"
    with run_daemon(vault, log, JOBS_OFF) as proc:
        with _index(vault) as index:
            assert len(_paths(index, "aardvark")) == KILLED_NOTES
            before = index.doc_count()
        stop(proc)
    for i in range(KILLED_NOTES):
        (notes / f"n{i:05d}.md").write_bytes(_note(i, "bumblebee"))
    started = subprocess.Popen(
        [sys.executable, "-m", "brainiac", "--vault", str(vault), "run"],
        env={**os.environ, **JOBS_OFF},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:

        def in_part() -> bool:
            with _index(vault) as index:
                return bool(
                    index.search("bumblebee", limit=1) and index.search("aardvark", limit=1)
                )

        wait_for(in_part, "a batch of the start's reconcile committed", deadline_s=300)
        started.send_signal(signal.SIGKILL)
    finally:
        if started.poll() is None:
            started.kill()
        started.wait(timeout=10)
    with _index(vault) as index:
        taken = len(_paths(index, "bumblebee"))
    assert 0 < taken < KILLED_NOTES
    after = tmp_path / "after.log"
    with run_daemon(vault, after, JOBS_OFF) as proc:  # the next start
        with _index(vault) as index:
            assert _paths(index, "bumblebee") == sorted(
                f"{LONG_TERM}/n{i:05d}.md" for i in range(KILLED_NOTES)
            )
            assert not index.search("aardvark", limit=1)
            assert index.doc_count() == before  # each note once
        stop(proc)
    _clean(after)
