"""A large fill of the vectors made in a child process beside the daemon (search/fill_beside.py):
the daemon keeps its memory, and a killed child loses no vector already stored. A real daemon,
a real child, the real model and index."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import Any

import numpy as np

from brainiac.search import semantic as semantic_mod
from brainiac.search import sentence_model
from brainiac.search.fill_beside import FILL_BESIDE_FROM
from brainiac.search.sentence_model import SentenceModel
from brainiac.search.vector_store import VectorStore
from brainiac.store.daemon_requests import STATUS_FILE
from brainiac.store.locations import Locations
from conftest import load_benchmark
from helpers import DEADLINE_S, run_daemon, stop, wait_for

_CHILD = "brainiac.search.fill_beside"


def _fill_children(pid: int) -> list[int]:
    """The daemon's child processes that run the fill beside it."""
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            children = (task / "children").read_text().split()
        except OSError:
            continue
        for child in children:
            try:
                cmdline = Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if _CHILD.encode() in cmdline:
                found.append(int(child))
    return found


def _meaning(vault: Path) -> dict[str, Any]:
    try:
        status = json.loads((Locations.for_vault(vault).state / STATUS_FILE).read_text())
    except (OSError, ValueError):
        return {}
    return status.get("meaning") or {}


def _filled(vault: Path) -> bool:
    meaning = _meaning(vault)
    return bool(meaning.get("events")) and meaning.get("pending") == 0


def _stored(vault: Path) -> dict[int, Any]:
    """The committed vectors, digest -> unit vector (as a new process finds them)."""
    store = VectorStore(
        Locations.for_vault(vault).vectors_dir,
        sentence_model.MODEL_ID,
        sentence_model.DIMENSIONS,
        read_only=True,
    )
    store.open()
    rows = store.rows.astype(np.float32) * store.scales[:, None]
    return dict(zip(store.digests().tolist(), rows, strict=True))


def _vault(tmp_path: Path) -> tuple[Path, list[tuple[str, str, str]]]:
    """A vault indexed without vectors, with more events than a fill made in the daemon."""
    vault = tmp_path / "vault"
    load_benchmark("generate_vault").generate(vault, 150, 1)  # about 500 events
    from brainiac import Memory

    with Memory(vault, meaning=False) as memory:
        memory.reindex()
        events = memory.indexer.index.events()
    assert len(events) > 1.5 * FILL_BESIDE_FROM
    return vault, events


def test_a_first_fill_is_made_in_a_child_process_and_every_vector_is_its_events(
    tmp_path: Path,
) -> None:
    vault, events = _vault(tmp_path)
    with run_daemon(vault, tmp_path / "daemon.log") as proc:
        seen: set[int] = set()

        def child_or_filled() -> bool:
            seen.update(_fill_children(proc.pid))
            return bool(seen) or _filled(vault)

        wait_for(child_or_filled, "the fill beside the daemon")
        assert seen, "the vectors were made in the daemon's own process"
        wait_for(lambda: _filled(vault), "every vector", deadline_s=5 * DEADLINE_S)
        wait_for(lambda: not _fill_children(proc.pid), "the child's exit")
        stop(proc)
    stored = _stored(vault)
    texts = {semantic_mod.text_digest(text): text for _, text, _ in events}
    assert set(texts) <= set(stored)
    sample = sorted(texts)[:: max(1, len(texts) // 40)]
    made = SentenceModel().encode([texts[d] for d in sample])
    for digest, vector in zip(sample, made, strict=True):
        assert float(stored[digest] @ vector) > 0.99  # each row is its own text's


def test_a_killed_fill_child_loses_no_stored_vector_and_the_next_start_finishes(
    tmp_path: Path,
) -> None:
    vault, events = _vault(tmp_path)
    log = tmp_path / "daemon.log"
    with run_daemon(vault, log) as proc:
        children: list[int] = []

        def committed() -> bool:
            children[:] = children or _fill_children(proc.pid)
            return bool(children) and len(_stored(vault)) > 0

        wait_for(committed, "the child's first committed vectors", deadline_s=3 * DEADLINE_S)
        os.kill(children[0], signal.SIGKILL)
        before = _stored(vault)
        wait_for(lambda: not _fill_children(proc.pid), "the killed child to be reaped")
        stop(proc)  # the daemon goes on, and stops cleanly
    after = _stored(vault)
    assert set(before) <= set(after)  # nothing stored was lost
    for digest, vector in before.items():
        assert np.array_equal(after[digest], vector)
    with run_daemon(vault, tmp_path / "daemon2.log") as proc:
        wait_for(lambda: _filled(vault), "the rest of the fill", deadline_s=5 * DEADLINE_S)
        stop(proc)
    stored = _stored(vault)
    assert {semantic_mod.text_digest(text) for _, text, _ in events} <= set(stored)


def test_a_daemon_killed_during_the_fill_takes_its_child_with_it(tmp_path: Path) -> None:
    vault, _ = _vault(tmp_path)
    with run_daemon(vault, tmp_path / "daemon.log") as proc:
        children: list[int] = []
        wait_for(lambda: bool(children.extend(_fill_children(proc.pid)) or children), "a child")
        proc.kill()
        proc.wait(timeout=DEADLINE_S)

        def gone() -> bool:
            try:
                stat = Path(f"/proc/{children[0]}/stat").read_text()
            except OSError:
                return True
            return stat.rsplit(")", 1)[1].split()[0] == "Z"  # a zombie until init reaps it

        wait_for(gone, "the orphaned child's end")
