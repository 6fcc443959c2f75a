"""Times that cannot be right: a future-dated event, a clock months ahead, the hour repeated when
the clocks go back (issue 14, item 6)."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import logging
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from brainiac import Memory
from brainiac.core import clock
from brainiac.formats import events as ev
from brainiac.formats import stm
from brainiac.store.vault import ARCHIVE_DIR, LONG_TERM_DIR, SHORT_TERM
from conftest import run_cli

NOW = dt.datetime(2026, 11, 22, 12, 0)
TYPO = dt.datetime(2062, 1, 1, 10, 0)  # `--at 2062-01-01T10:00` for 2026-01-01


def _write_future_event(vault: Path) -> ev.Event:
    """A future-dated event already in the log (from a typo before this fix, or a person)."""
    typo = ev.Event(TYPO, "user", "the typo", None, ev.event_id(TYPO, "user", None, "the typo"))
    path = vault / SHORT_TERM
    path.write_text(stm.append_events(path.read_text(), [typo])[0])
    return typo


def _jsonl(path: Path, n: int) -> Path:
    rows = [
        {"text": f"message {i} about the kiln", "session": "kiln", "at": f"2026-11-22T09:{i:02d}"}
        for i in range(n)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


# -- future times ---------------------------------------------------------------------------------


def test_cli_remember_at_a_future_time_is_refused_and_writes_nothing(vault: Path) -> None:
    before = (vault / SHORT_TERM).read_text()
    proc = run_cli(
        "--vault", str(vault), "remember", "--at", "2062-01-01T10:00", "a typo", in_process=True
    )
    assert proc.returncode == 2, proc.stdout
    [line] = proc.stderr.strip().splitlines()
    assert "--at 2062-01-01T10:00" in line and "in the future" in line and "nothing" in line
    assert (vault / SHORT_TERM).read_text() == before


def test_cli_remember_a_minute_ahead_is_taken_as_given(vault: Path) -> None:
    soon = (clock.now() + dt.timedelta(minutes=1)).isoformat(timespec="seconds")
    run_cli(
        "--vault",
        str(vault),
        "remember",
        "--at",
        soon,
        "a clock a minute fast",
        check=True,
        in_process=True,
    )
    assert f"- {soon} **user**: a clock a minute fast" in (vault / SHORT_TERM).read_text()


def test_api_remember_in_the_future_is_clamped_to_now_with_a_warning(
    memory: Memory, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        event = memory.remember("a typo from a program", at=TYPO, now=NOW)
    assert event.at == NOW
    assert "2062-01-01T10:00:00" in caplog.text and "clamped" in caplog.text
    assert memory.short_term().events[-1].at == NOW
    # Without `now`, the real clock is the reference.
    real = memory.remember("another typo", at=TYPO)
    assert real.at is not None and real.at <= clock.now()


def test_an_imported_message_from_the_future_is_clamped_to_the_import_time(
    memory: Memory, tmp_path: Path
) -> None:
    path = tmp_path / "future.jsonl"
    path.write_text(json.dumps({"text": "hi", "session": "s", "at": "2062-01-01T10:00"}) + "\n")
    (report,) = memory.import_files([path], now=NOW)
    assert report.new == 1
    assert [e.at for e in memory.short_term().events] == [NOW]


def test_one_future_event_in_the_log_does_not_send_later_imports_to_history(
    memory: Memory, vault: Path, tmp_path: Path
) -> None:
    typo = _write_future_event(vault)
    (report,) = memory.import_files([_jsonl(tmp_path / "kiln.jsonl", 3)], now=NOW)
    assert (report.to_short_term, report.to_long_term) == (3, 0)
    texts = [e.text for e in memory.short_term().events]
    assert texts[:3] == [f"message {i} about the kiln" for i in range(3)]
    assert typo.id in (vault / SHORT_TERM).read_text()  # the person's line stays


def test_one_future_event_in_the_log_does_not_send_put_back_events_to_history(
    memory: Memory, vault: Path
) -> None:
    path = vault / SHORT_TERM
    older_copy = path.read_text()
    lost = memory.remember("the kiln reached 900 degrees", at=NOW - dt.timedelta(hours=1))
    path.write_text(older_copy)  # a save from an older copy takes it away
    _write_future_event(vault)
    [report] = memory.run_job("recovery", now=NOW)
    assert "put back 1 event(s)" in report.summary
    assert lost.id in path.read_text()
    assert not list((vault / LONG_TERM_DIR).glob("*kiln*"))


# -- time jumps -----------------------------------------------------------------------------------


def test_organization_with_the_clock_months_ahead_does_not_archive_every_note(
    memory: Memory, vault: Path
) -> None:
    notes = sorted(p.name for p in (vault / LONG_TERM_DIR).glob("*.md"))
    memory.run_job("organization", now=NOW)
    [report] = memory.run_job("organization", now=NOW + dt.timedelta(days=200))
    assert report.ok, report.summary
    assert sorted(p.name for p in (vault / LONG_TERM_DIR).glob("*.md")) == notes
    assert not list((vault / ARCHIVE_DIR / "notes").glob("*.md"))
    assert "200 days after the last run" in report.summary, report.summary
    atlas = (vault / LONG_TERM_DIR / "project-atlas.md").read_text()
    strength = float(re.search(r"^strength: (.+)$", atlas, re.M).group(1))  # type: ignore[union-attr]
    # Decay from last_accessed 2026-11-20T09:30 up to 30 days after the last run, no further.
    applied = NOW + dt.timedelta(days=30) - dt.datetime(2026, 11, 20, 9, 30)
    assert strength == pytest.approx(1.5 * 0.98**applied.days, rel=1e-3)


def test_time_a_jump_left_out_is_applied_by_later_runs(memory: Memory, vault: Path) -> None:
    memory.run_job("organization", now=NOW)
    later = NOW + dt.timedelta(days=200)
    for _ in range(8):  # the daemon's next runs catch up, a bounded step at a time
        memory.run_job("organization", now=later)
    assert (vault / ARCHIVE_DIR / "notes" / "anna-berg.md").exists()


# -- the hour repeated when the clocks go back -----------------------------------------------------


@pytest.fixture
def berlin() -> Iterator[None]:
    """The process's zone is Europe/Berlin for the test (a zone with DST), then what it was."""
    before = os.environ.get("TZ")
    os.environ["TZ"] = "Europe/Berlin"
    time.tzset()
    try:
        yield
    finally:
        if before is None:
            del os.environ["TZ"]
        else:
            os.environ["TZ"] = before
        time.tzset()


def _old_id(at: dt.datetime, role: str, session: str | None, text: str) -> str:
    """event_id as it was before ambiguous times were told apart."""
    key = "\x1f".join((at.isoformat(), role, session or "", " ".join(text.split())))
    return "e-" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:10]


@pytest.mark.usefixtures("berlin")
def test_the_same_text_an_hour_apart_across_a_fall_back_gets_two_ids(memory: Memory) -> None:
    first = dt.datetime(2026, 10, 25, 0, 30, tzinfo=dt.UTC)  # 02:30 CEST
    second = dt.datetime(2026, 10, 25, 1, 30, tzinfo=dt.UTC)  # 02:30 CET, an hour later
    a = memory.remember("took the medicine", at=first, now=NOW)
    b = memory.remember("took the medicine", at=second, now=NOW)
    assert a.at == b.at == dt.datetime(2026, 10, 25, 2, 30)  # the wall clock read the same
    assert a.id != b.id
    assert [e.id for e in memory.short_term().events] == [a.id, b.id]
    # Every id that existed stays the same: the first 02:30 and any unambiguous time.
    assert a.id == _old_id(dt.datetime(2026, 10, 25, 2, 30), "user", None, "took the medicine")
    plain = ev.make_event("x", at=dt.datetime(2026, 10, 25, 4, 0))
    assert plain.id == _old_id(dt.datetime(2026, 10, 25, 4, 0), "user", None, "x")


@pytest.mark.usefixtures("berlin")
def test_the_clock_in_the_repeated_hour_is_told_apart(memory: Memory) -> None:
    second = dt.datetime(2026, 10, 25, 1, 30, tzinfo=dt.UTC).timestamp()
    local = dt.datetime.fromtimestamp(second)  # what clock.now() reads then: fold=1
    a = ev.make_event("ping", at=local.replace(fold=0))
    b = ev.make_event("ping", at=local)
    assert a.id != b.id


@pytest.mark.usefixtures("berlin")
def test_the_newer_of_two_facts_across_a_fall_back_wins_and_check_agrees(vault: Path) -> None:
    """Said twenty minutes apart, at 02:50 summer time and 02:10 winter time: the later one (the
    earlier wall-clock reading) is the current value, in the short-term Facts and in the note
    promotion moves both to, and `check` confirms it rather than flagging it."""
    (vault / ".brainiac/config.toml").write_text("[lifecycle]\nshort_term_window = 3\n")
    cli = ("--vault", str(vault))
    said = [
        ("The kiln firing is on Friday.", "2026-10-25T02:50+02:00"),  # 00:50 UTC
        ("Correction: the kiln firing is on Monday.", "2026-10-25T02:10+01:00"),  # 01:10 UTC
        *((f"I swept the studio floor, round {i}.", f"2026-10-25T0{3 + i}:00") for i in (1, 2, 3)),
    ]
    for text, at in said:
        run_cli(*cli, "remember", text, "--at", at, check=True, in_process=True)
    run_cli(*cli, "jobs", "run", "all", "--now", "2026-10-25T12:00", check=True, in_process=True)

    right = run_cli(
        *cli, "check", "The kiln firing is on Monday.", "--now", "2026-10-25T12:00", in_process=True
    )
    assert right.returncode == 0, right.stdout
    assert "consistent: The kiln firing is on Monday." in right.stdout + right.stderr
    wrong = run_cli(
        *cli, "check", "The kiln firing is on Friday.", "--now", "2026-10-25T12:00", in_process=True
    )
    assert wrong.returncode == 1 and "CONFLICT" in wrong.stdout

    holders = [p for p in (vault / "memory").rglob("*.md") if "- kiln firing: " in p.read_text()]
    assert {p.name for p in holders} >= {"short_term.md"} and len(holders) == 2
    for path in holders:
        text = path.read_text()
        assert "- kiln firing: Monday (since 2026-10-25 02:10+01:00" in text, text
        assert "  - superseded: Friday (2026-10-25 02:50+02:00 to 2026-10-25 02:10+01:00" in text
