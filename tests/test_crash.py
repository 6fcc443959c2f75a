"""Crash consistency, the short version of benchmarks/crash.py for CI.

The real CLI is SIGKILLed at random instants (and at the import's named fault points) during
`remember`, `import`, `jobs run all` and `context --write`, and so is the daemon (`run`, with an
export in its inbox and its jobs due every few seconds); after every kill each note still
parses, no event is written twice, and every event whose command completed is there exactly
once; after a recovery run, every event ever attempted is there at most once. docs/reliability.md
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import load_benchmark

# The time a write spends in fsync on a real disk shapes where the kills and races land.
pytestmark = pytest.mark.on_disk


@pytest.mark.slow
@pytest.mark.timeout(900)  # a hang guard: beside three other workers on two cores
def test_random_kills_leave_every_note_whole_and_every_event_once(tmp_path: Path) -> None:
    result = load_benchmark("crash").crash_run(30, seed=6, workdir=tmp_path)
    assert result.trials == 30
    assert not result.violations, result.report()
    # Both kinds of trial happened: kills mid-command and commands that completed first.
    assert sum(result.killed.values()) > 0, result.report()
    assert sum(result.completed.values()) > 0, result.report()
    assert result.completed_events > 0 and result.present_events >= result.completed_events
    assert result.killed["daemon"] > 0, result.report()
