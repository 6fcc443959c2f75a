"""A person renames the `## Event Log` heading of memory/short_term.md (issue 14, item 7): the
events under it stay events, `status` says so, and nothing starts a second log."""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from pathlib import Path

import pytest

from brainiac import Memory
from brainiac.store.vault import SHORT_TERM
from conftest import run_cli

T = dt.datetime(2026, 11, 20, 9, 0)
ID_RE = re.compile(r"\^(e-[0-9a-f]{6,32})\b")


def _renamed(memory: Memory, vault: Path, heading: str = "## Events") -> list[str]:
    ids = [
        memory.remember(f"step {i}: the greenhouse heater is set to {10 + i} degrees", at=T).id
        for i in range(3)
    ]
    path = vault / SHORT_TERM
    path.write_text(path.read_text().replace("## Event Log", heading))
    return ids


def _ids_everywhere(vault: Path) -> Counter[str]:
    found: Counter[str] = Counter()
    for path in (vault / "memory").rglob("*.md"):
        found.update(ID_RE.findall(path.read_text()))
    return found


def test_status_reports_the_missing_event_log_with_the_fix(memory: Memory, vault: Path) -> None:
    _renamed(memory, vault)
    proc = run_cli("--vault", str(vault), "status", check=True, in_process=True)
    assert "problems: 1" in proc.stdout, proc.stdout
    [line] = [x for x in proc.stdout.splitlines() if "Event Log" in x]
    assert SHORT_TERM in line and "## Events" in line and "rename" in line
    assert "short_term_events: 3" in proc.stdout


def test_status_is_quiet_for_a_heading_in_other_letter_case(memory: Memory, vault: Path) -> None:
    _renamed(memory, vault, "## event log")
    proc = run_cli("--vault", str(vault), "status", check=True, in_process=True)
    assert "problems: 0" in proc.stdout, proc.stdout


def test_remember_keeps_writing_under_the_renamed_heading(memory: Memory, vault: Path) -> None:
    ids = _renamed(memory, vault)
    new = memory.remember("the heater broke", at=T + dt.timedelta(hours=1))
    text = (vault / SHORT_TERM).read_text()
    assert "## Event Log" not in text  # no second log
    assert text.index("## Events") < text.index(new.id)
    assert [e.id for e in memory.short_term().events] == [*ids, new.id]


def test_events_under_the_renamed_heading_are_searched_used_and_not_put_back(
    memory: Memory, vault: Path
) -> None:
    ids = _renamed(memory, vault)
    assert any(r.event_id == ids[1] for r in memory.search("greenhouse heater 11 degrees"))
    assert "set to 12 degrees" in memory.context(budget=2000, now=T).text
    [report] = memory.run_job("recovery", now=T + dt.timedelta(hours=1))
    assert "no journalled event is missing" in report.summary
    assert all(_ids_everywhere(vault)[i] == 1 for i in ids)


@pytest.mark.parametrize("heading", ["## Events", "## Log"])
def test_promotion_moves_events_out_of_the_renamed_section_once(
    memory: Memory, vault: Path, heading: str
) -> None:
    ids = [
        memory.remember(f"day {i}: watered the tomatoes", at=T + dt.timedelta(minutes=i)).id
        for i in range(15)
    ]
    path = vault / SHORT_TERM
    path.write_text(path.read_text().replace("## Event Log", heading))
    [report] = memory.run_job("promotion", now=T + dt.timedelta(days=1))
    assert report.ok, report.summary
    counts = _ids_everywhere(vault)
    assert [counts[i] for i in ids] == [1] * 15
    assert len(memory.short_term().events) == memory.config.short_term_window


def test_status_reports_event_lines_left_outside_the_log(memory: Memory, vault: Path) -> None:
    ids = _renamed(memory, vault, "")  # the heading deleted: its lines now end the Tasks section
    memory.remember("the heater broke", at=T + dt.timedelta(hours=1))  # a new Event Log
    assert all(_ids_everywhere(vault)[i] == 1 for i in ids)  # nothing lost or doubled
    proc = run_cli("--vault", str(vault), "status", check=True, in_process=True)
    assert "problems: 1" in proc.stdout, proc.stdout
    [line] = [x for x in proc.stdout.splitlines() if "outside" in x]
    assert SHORT_TERM in line and "3 event line(s)" in line and "## Tasks" in line
