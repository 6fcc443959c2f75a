"""benchmarks/scale.py's wait for a words-only daemon, on the status file it reads."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from brainiac import Memory
from brainiac.store.daemon_requests import STATUS_FILE
from brainiac.store.locations import Locations
from conftest import load_benchmark

scale = load_benchmark("scale")


def _status(vault: Path, env: dict[str, str], **fields: object) -> None:
    state = Locations.for_vault(vault, env).state
    state.mkdir(parents=True, exist_ok=True)
    (state / STATUS_FILE).write_text(json.dumps({"meaning": None, **fields}), encoding="utf-8")


def test_words_only_daemon_caught_up_after_a_start_that_synced_nothing(tmp_path: Path) -> None:
    """A start with nothing changed reconciles but never syncs: ready all the same, at once."""
    vault = tmp_path / "vault"
    vault.mkdir()
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")}
    _status(vault, env, pid=os.getpid(), syncs=0, last_reconcile=1.0, pending_changes=0)
    done = scale._wait_caught_up(vault, env, os.getpid(), timeout=5)
    assert done["meaning"] is None and done["seconds"] < 5


def test_words_only_daemon_wait_ignores_the_last_daemons_status(tmp_path: Path) -> None:
    """The status file of the daemon that ran before (another pid) says nothing of this one;
    after edits, only a sync past the count before them says they are indexed."""
    vault = tmp_path / "vault"
    vault.mkdir()
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")}
    _status(vault, env, pid=os.getpid() + 1, syncs=3, last_reconcile=1.0, pending_changes=0)
    with pytest.raises(RuntimeError, match="did not catch up"):
        scale._wait_caught_up(vault, env, os.getpid(), timeout=0)
    _status(vault, env, pid=os.getpid(), syncs=3, last_reconcile=1.0, pending_changes=0)
    with pytest.raises(RuntimeError, match="did not catch up"):
        scale._wait_caught_up(vault, env, os.getpid(), 1, timeout=0, syncs_above=3)
    _status(vault, env, pid=os.getpid(), syncs=4, last_reconcile=1.0, pending_changes=0)
    assert scale._wait_caught_up(vault, env, os.getpid(), 1, timeout=0, syncs_above=3)


def test_daemon_with_a_fill_left_running_is_ready_without_waiting_for_the_vectors(
    tmp_path: Path,
) -> None:
    """`--vectors-kept`: a daemon that still has vectors to make (a stopped fill's vault) is
    timed while it makes them; waiting for none pending would wait hours at 100,000 notes."""
    vault = tmp_path / "vault"
    vault.mkdir()
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")}
    meaning = {"events": 350_200, "pending": 200_000, "vectors": 150_200}
    status = {"pid": os.getpid(), "syncs": 0, "last_reconcile": 1.0, "pending_changes": 0}
    _status(vault, env, **status, meaning=meaning)
    with pytest.raises(RuntimeError, match="did not catch up"):
        scale._wait_caught_up(vault, env, os.getpid(), timeout=0)
    done = scale._wait_caught_up(vault, env, os.getpid(), timeout=0, vectors=False)
    assert done["meaning"] == meaning


def test_after_edits_a_daemon_with_a_fill_left_running_waits_for_every_edits_event(
    tmp_path: Path,
) -> None:
    """`--vectors-kept`: a sync past the count before the edits may have taken only the first
    of them; the wait ends once the daemon knows every edit's event."""
    vault = tmp_path / "vault"
    vault.mkdir()
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")}
    known, edits = 350_200, 20
    meaning = {"events": known + edits - 1, "pending": 200_000, "vectors": 150_200}
    status = {"pid": os.getpid(), "syncs": 4, "last_reconcile": 1.0, "pending_changes": 0}
    args = (vault, env, os.getpid(), known + edits)
    _status(vault, env, **status, meaning=meaning)
    with pytest.raises(RuntimeError, match="did not catch up"):
        scale._wait_caught_up(*args, timeout=0, syncs_above=3, vectors=False)
    meaning["events"] += 1
    _status(vault, env, **status, meaning=meaning)
    assert scale._wait_caught_up(*args, timeout=0, syncs_above=3, vectors=False)


def test_after_edits_a_words_only_daemon_waits_until_the_index_holds_them(
    vault: Path, memory: Memory
) -> None:
    """Words only the status counts no events: the index, read beside the daemon, holds every
    edit's event before the wait ends."""
    memory.reindex()
    env = dict(os.environ)
    documents = scale._indexed_documents(vault, env)
    memory.remember("Edit 0: the bike was checked again today")
    _status(vault, env, pid=os.getpid(), syncs=4, last_reconcile=1.0, pending_changes=0)
    with pytest.raises(RuntimeError, match="did not catch up"):
        scale._wait_caught_up(
            vault, env, os.getpid(), timeout=0, syncs_above=3, documents=documents + 2
        )
    assert scale._wait_caught_up(
        vault, env, os.getpid(), timeout=0, syncs_above=3, documents=documents + 1
    )
