"""Concurrent editors, the short version of benchmarks/concurrent_edits.py for CI.

A person's editor saves `memory/short_term.md` and long-term notes in a tight loop (vim's
rename-save, nano's in-place write, Obsidian Sync's in-place write with a foreign mtime) while an
agent appends events and the real daemon runs its memory jobs every few seconds. No save of the
person's is lost, and every event is in memory/ exactly once after the journal's recovery run.
docs/reliability.md
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import load_benchmark

# The time a write spends in fsync on a real disk shapes where the kills and races land.
pytestmark = pytest.mark.on_disk


@pytest.mark.slow
@pytest.mark.timeout(900)  # a hang guard: beside three other workers on two cores
def test_no_edit_and_no_event_is_lost_to_concurrent_saves(tmp_path: Path) -> None:
    result = load_benchmark("concurrent_edits").run(15, seed=3, workdir=tmp_path)
    assert result.ok, result.report() + "\n" + result.daemon_log_tail
    # The loop really raced: many saves of both kinds of file, in every style, and events.
    assert sum(result.saves.values()) > 50, result.report()
    assert set(result.saves) == {"vim", "nano", "obsidian-sync"}, result.report()
    assert result.saves_by_target["long-term"] > 0, result.report()
    assert result.remembered > 50, result.report()
