"""Requests to the running daemon (daemon_requests.py): files in the state directory that the
daemon carries out on its writer loop, even when no signal woke it."""

from __future__ import annotations

import json
from pathlib import Path

from brainiac import Memory
from brainiac.store import daemon_requests
from conftest import run_cli
from helpers import Notifications, running_daemon, wait_for


def test_requests_left_while_no_daemon_ran_are_answered_when_it_starts(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    run_cli("init", str(vault), check=True)
    said = "My locker code is 3141 at the Riverside gym."
    run_cli("--vault", str(vault), "remember", said, check=True)
    with Memory(vault) as memory:
        state = memory.locations.state
    folder = state / daemon_requests.REQUESTS_DIR
    folder.mkdir(parents=True)
    # Left behind by an asker whose signal never arrived (here: no daemon ran at all).
    (folder / "1-forget.json").write_text(
        json.dumps({"kind": "forget", "args": {"matching": ["locker code"]}}), encoding="utf-8"
    )
    (folder / "2-nap.json").write_text(json.dumps({"kind": "nap", "args": {}}), encoding="utf-8")
    (folder / "3-garbled.json").write_text("{not json", encoding="utf-8")
    ready = Notifications(tmp_path / "notify.sock")
    try:
        with running_daemon(vault, ready):
            answers = [
                folder / f"{n}{daemon_requests.ANSWER_SUFFIX}"
                for n in ("1-forget", "2-nap", "3-garbled")
            ]
            wait_for(lambda: all(a.exists() for a in answers), "the daemon's answers")
            forgot, nap, garbled = (json.loads(a.read_text(encoding="utf-8")) for a in answers)
            assert forgot["ok"] is True and forgot["result"]["counts"]["events"] == 1
            assert said not in (vault / "memory/short_term.md").read_text(encoding="utf-8")
            assert nap["ok"] is False and "not a request this daemon carries out" in nap["error"]
            assert garbled["ok"] is False and "3-garbled.json" in garbled["error"]
            # Each request is gone once answered; only the answers are left for their askers.
            assert sorted(p.name for p in folder.iterdir()) == sorted(a.name for a in answers)
    finally:
        ready.close()
