"""Importing chat exports: once per message, whatever is repeated, grown, killed or malformed.

Real files in a real vault, the real CLI as a subprocess where a process must die; the format
parsers themselves are tested in test_chatlogs.py.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from brainiac import Memory
from brainiac.exchange import importer
from brainiac.exchange.chatlogs import FORMATS, Message
from brainiac.formats import events as ev
from brainiac.formats import stm
from brainiac.interfaces.cli.exchange_commands import IMPORT_FORMATS
from brainiac.store.vault import EXPORTS_DIR, SHORT_TERM
from conftest import run_cli

NOW = dt.datetime(2026, 11, 22, 12, 0)
SAMPLES = Path(__file__).parent / "samples" / "imports"


def _jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _chat(n: int, session: str = "trip", start: int = 0) -> list[dict[str, object]]:
    return [
        {
            "text": f"message {i} about the Lisbon trip",
            "role": "user" if i % 2 == 0 else "assistant",
            "session": session,
            "at": f"2026-10-01T09:{i:02d}:00",
        }
        for i in range(start, start + n)
    ]


def _ids_in_vault(vault: Path) -> Counter[str]:
    """How often each event id is written across short-term, long-term and archive."""
    counts: Counter[str] = Counter()
    for path in (vault / "memory").rglob("*.md"):
        if EXPORTS_DIR in path.as_posix():
            continue
        counts.update(re.findall(r"\^(e-[0-9a-f]{6,32})\b", path.read_text(encoding="utf-8")))
    return counts


def _expected_ids(rows: list[dict[str, object]], session: str = "trip") -> list[str]:
    return [
        "e-" + importer.message_key(_message(session, i, str(r["text"])))[:10]
        for i, r in enumerate(rows)
    ]


def _message(session: str, position: int, text: str) -> Message:
    return Message(session, None, position, None, "user", text, None)


def test_the_cli_offers_exactly_the_formats_the_parsers_read() -> None:
    assert IMPORT_FORMATS == FORMATS


def test_importing_the_same_export_ten_times_adds_its_messages_once(
    memory: Memory, tmp_path: Path
) -> None:
    export = _jsonl(tmp_path / "trip.jsonl", _chat(6))
    first = memory.import_files([export], now=NOW)
    assert [(r.ok, r.format, r.new, r.duplicate) for r in first] == [(True, "brainiac", 6, 0)]
    for _ in range(9):
        (again,) = memory.import_files([export], now=NOW)
        assert (again.new, again.duplicate) == (0, 6)
    counts = _ids_in_vault(memory.vault.root)
    ids = _expected_ids(_chat(6))
    assert all(counts[i] == 1 for i in ids), counts
    # The raw export is kept once, byte for byte; every import has its checkpoint.
    kept = list((memory.vault.root / EXPORTS_DIR).iterdir())
    assert [p.read_bytes() for p in kept] == [export.read_bytes()]
    checkpoints = importer.read_checkpoints(memory)
    assert [c["new"] for c in checkpoints] == [6] + [0] * 9
    assert checkpoints[0]["sha256"] == importer.safe_io.sha256_hex(export.read_bytes())
    # ...and the archived export is not indexed as a note.
    assert all(hit.path == SHORT_TERM for hit in memory.search("Lisbon trip", limit=20))


def test_a_grown_transcript_adds_only_its_new_messages(memory: Memory, tmp_path: Path) -> None:
    export = tmp_path / "trip.jsonl"
    _jsonl(export, _chat(5))
    (first,) = memory.import_files([export], now=NOW)
    _jsonl(export, _chat(8))
    (second,) = memory.import_files([export], now=NOW)
    assert (first.new, second.new, second.duplicate) == (5, 3, 5)
    events = memory.short_term().events
    assert [e.text for e in events][-3:] == [
        f"message {i} about the Lisbon trip" for i in (5, 6, 7)
    ]
    sessions = json.loads(
        (memory.locations.state / "imports" / "sessions.json").read_text(encoding="utf-8")
    )
    assert sessions["trip"]["messages"] == 8 and sessions["trip"]["position"] == 7


def test_two_identical_messages_in_one_conversation_stay_two(
    memory: Memory, tmp_path: Path
) -> None:
    rows = [
        {"text": "Shall we book it?", "session": "s", "at": "2026-10-01T09:00:00"},
        {"text": "yes", "session": "s", "at": "2026-10-01T09:01:00"},
        {"text": "Both hotels?", "role": "assistant", "session": "s", "at": "2026-10-01T09:01:00"},
        {"text": "yes", "session": "s", "at": "2026-10-01T09:01:00"},
    ]
    (report,) = memory.import_files([_jsonl(tmp_path / "s.jsonl", rows)], now=NOW)
    assert report.new == 4
    assert [e.text for e in memory.short_term().events].count("yes") == 2


def test_imported_history_goes_before_newer_events_in_time_order(
    memory: Memory, tmp_path: Path
) -> None:
    live = memory.remember("today's note", at=dt.datetime(2026, 11, 20, 9, 0))
    rows = _chat(3)
    memory.import_files([_jsonl(tmp_path / "trip.jsonl", rows)], now=NOW)
    events = memory.short_term().events
    assert events[-1].id == live.id  # the latest step is still the latest
    assert [e.at for e in events] == sorted(e.at for e in events if e.at)


def test_a_malformed_file_is_rejected_whole_with_its_line(memory: Memory, tmp_path: Path) -> None:
    good = _jsonl(tmp_path / "good.jsonl", _chat(2))
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(_chat(1)[0]) + "\n{not json\n", encoding="utf-8")
    before = (memory.vault.root / SHORT_TERM).read_text(encoding="utf-8")
    reports = memory.import_files([bad, good], now=NOW)
    assert not reports[0].ok and "bad.jsonl" in (reports[0].error or "")
    assert "line 2" in (reports[0].error or "")
    assert reports[1].ok and reports[1].new == 2
    text = (memory.vault.root / SHORT_TERM).read_text(encoding="utf-8")
    assert text.count("message 0 about") == 1  # from good.jsonl only, none from bad.jsonl
    assert before != text
    assert len(list((memory.vault.root / EXPORTS_DIR).iterdir())) == 1


def test_dry_run_counts_and_changes_nothing(memory: Memory, tmp_path: Path) -> None:
    export = _jsonl(tmp_path / "trip.jsonl", _chat(4))
    before = (memory.vault.root / SHORT_TERM).read_bytes()
    (report,) = memory.import_files([export], now=NOW, dry_run=True)
    assert report.new == 4
    assert (memory.vault.root / SHORT_TERM).read_bytes() == before
    assert not (memory.vault.root / EXPORTS_DIR).exists()
    assert not (memory.locations.state / "imports" / "seen.txt").exists()


def test_with_the_state_lost_the_vault_still_knows_what_was_imported(
    memory: Memory, tmp_path: Path
) -> None:
    export = _jsonl(tmp_path / "trip.jsonl", _chat(12))
    memory.import_files([export], now=NOW)
    memory.run_job("promotion", now=NOW)  # most of them move on to long-term notes
    assert len(memory.short_term().events) < 12
    for path in (memory.locations.state / "imports").iterdir():
        path.unlink()
    (again,) = memory.import_files([export], now=NOW)
    assert (again.new, again.duplicate) == (0, 12)
    assert all(n == 1 for n in _ids_in_vault(memory.vault.root).values())


def _cli(vault: Path, *args: str, fault: str | None = None) -> subprocess.CompletedProcess[str]:
    return run_cli("--vault", str(vault), *args, env={"BRAINIAC_FAULT": fault} if fault else None)


@pytest.mark.parametrize(
    "fault",
    [
        "import.intent-written",
        "import.archived",
        "import.history-placed",
        "import.events-written",
        "import.recorded",
    ],
)
def test_an_import_killed_at_any_step_and_rerun_leaves_each_message_once(
    vault: Path, tmp_path: Path, fault: str
) -> None:
    rows = _chat(14)  # more than a short-term window: the oldest go straight to long-term
    export = _jsonl(tmp_path / "trip.jsonl", rows)
    killed = _cli(vault, "import", str(export), fault=fault)
    assert killed.returncode == -9, killed.stderr  # the process really died at that point
    # Promotion may run before anyone imports again (the daemon's schedule): it must not matter.
    assert _cli(vault, "jobs", "run", "promotion", "--now", NOW.isoformat()).returncode == 0
    rerun = _cli(vault, "import", str(export), "--json")
    assert rerun.returncode == 0, rerun.stderr
    counts = _ids_in_vault(vault)
    assert {i: counts[i] for i in _expected_ids(rows)} == dict.fromkeys(_expected_ids(rows), 1)
    assert not list((tmp_path / "xdg" / "state").rglob("intent.json"))
    again = json.loads(_cli(vault, "import", str(export), "--json").stdout)
    assert (again[0]["new"], again[0]["duplicate"]) == (0, 14)


def test_cli_import_reports_per_file_and_rejects_with_exit_status_2(
    vault: Path, tmp_path: Path
) -> None:
    export = _jsonl(tmp_path / "trip.jsonl", _chat(3))
    bad = tmp_path / "notes.json"
    bad.write_text('{"what": "not an export"}', encoding="utf-8")
    done = _cli(vault, "import", str(export), str(bad))
    assert done.returncode == 2
    assert "trip.jsonl (brainiac): imported 3 new, 0 duplicate, 0 skipped" in done.stdout
    assert "notes.json" in done.stderr and "expected" in done.stderr
    dry = _cli(vault, "import", "--dry-run", str(export))
    assert dry.returncode == 0 and "would import 0 new, 3 duplicate" in dry.stdout


def test_the_inbox_job_imports_dropped_files_and_sets_bad_ones_aside(memory: Memory) -> None:
    inbox = memory.vault.root / "inbox"
    inbox.mkdir(exist_ok=True)
    dropped = _jsonl(inbox / "trip.jsonl", _chat(3))
    broken = inbox / "broken.json"
    broken.write_text("[{", encoding="utf-8")
    later = dt.datetime.fromtimestamp(dropped.stat().st_mtime) + dt.timedelta(minutes=1)
    (report,) = memory.run_job("inbox", now=later)
    assert (
        not report.ok and "trip.jsonl: 3 new" in report.summary and "broken.json" in report.summary
    )
    assert not dropped.exists() and not broken.exists()
    kept = list((memory.vault.root / EXPORTS_DIR).iterdir())
    assert len(kept) == 1 and kept[0].name.endswith("-trip-" + kept[0].name[-14:-6] + ".jsonl")
    assert (inbox / "rejected" / "broken.json").read_text(encoding="utf-8") == "[{"
    assert "broken.json" in (inbox / "rejected" / "broken.json.error.txt").read_text("utf-8")
    assert len([e for e in memory.short_term().events if "Lisbon" in e.text]) == 3
    # A file still being written (modified within the last seconds) waits for the next turn.
    fresh = _jsonl(inbox / "fresh.jsonl", _chat(2, session="other"))
    just_now = dt.datetime.fromtimestamp(fresh.stat().st_mtime)
    (waiting,) = memory.run_job("inbox", now=just_now)
    assert fresh.exists() and "nothing waiting" in waiting.summary


def test_insert_events_keeps_every_existing_line_in_place() -> None:
    text = (
        "## Event Log\n"
        "- 2026-11-01T09:00:00 **user**: first ^e-0000000001\n"
        "- a line a person typed\n"
        "- 2026-11-03T09:00:00 **user**: third ^e-0000000003\n"
        "\n## After\nkept\n"
    )
    older = ev.make_event("second", at=dt.datetime(2026, 11, 2, 9, 0))
    newest = ev.make_event("fourth", at=dt.datetime(2026, 11, 4, 9, 0))
    out, added = stm.insert_events(text, [newest, older])
    assert added == [newest, older]
    lines = out.splitlines()
    assert lines[1].endswith("first ^e-0000000001")
    assert lines[2] == "- a line a person typed"
    assert "second" in lines[3] and "third" in lines[4] and "fourth" in lines[5]
    assert out.endswith("\n## After\nkept\n")


@pytest.mark.parametrize("sample", sorted(p.name for p in SAMPLES.iterdir()))
def test_every_real_shaped_sample_imports_once(memory: Memory, sample: str) -> None:
    from brainiac.exchange import chatlogs

    path = SAMPLES / sample
    expected = chatlogs.parse(path)
    (first,) = memory.import_files([path], now=NOW)
    assert first.ok, first.error
    assert (first.format, first.new, first.skipped) == (
        expected.format,
        len(expected.messages),
        len(expected.skipped),
    )
    (second,) = memory.import_files([path], now=NOW)
    assert (second.new, second.duplicate) == (0, len(expected.messages))
    counts = _ids_in_vault(memory.vault.root)
    for message in expected.messages:
        assert counts["e-" + importer.message_key(message)[:10]] == 1, message


def test_a_claude_code_session_that_grew_adds_only_its_new_turns(
    memory: Memory, tmp_path: Path
) -> None:
    full = (SAMPLES / "7f3c2a9e-1b4d-4e21-9a55-0c8d2e6f1b27.jsonl").read_text(encoding="utf-8")
    lines = full.splitlines(keepends=True)
    transcript = tmp_path / "7f3c2a9e-1b4d-4e21-9a55-0c8d2e6f1b27.jsonl"
    transcript.write_text("".join(lines[: len(lines) // 2]), encoding="utf-8")
    (early,) = memory.import_files([transcript], now=NOW)
    transcript.write_text(full, encoding="utf-8")
    (grown,) = memory.import_files([transcript], now=NOW)
    (whole,) = Memory(memory.vault.root).import_files(
        [SAMPLES / "7f3c2a9e-1b4d-4e21-9a55-0c8d2e6f1b27.jsonl"], now=NOW, dry_run=True
    )
    assert early.new > 0 and grown.duplicate == early.new
    assert early.new + grown.new == whole.new + whole.duplicate


def test_a_large_export_goes_to_long_term_and_only_its_newest_to_short_term(
    memory: Memory, tmp_path: Path
) -> None:
    rows = _chat(30, session="trip") + [
        {**r, "session": "work", "at": f"2026-10-02T10:{i:02d}:00"}
        for i, r in enumerate(_chat(30, session="work"))
    ]
    (report,) = memory.import_files([_jsonl(tmp_path / "all.jsonl", rows)], now=NOW)
    assert (report.new, report.to_short_term, report.to_long_term) == (60, 10, 50)
    events = memory.short_term().events
    assert len(events) == 10 and all(e.session == "work" for e in events)  # the newest ten
    counts = _ids_in_vault(memory.vault.root)
    ids = _expected_ids(rows[:30], "trip") + _expected_ids(rows[30:], "work")
    assert [counts[i] for i in ids] == [1] * 60
    notes = list((memory.vault.root / "memory/long_term").glob("*.md"))
    assert any("message 3 about the Lisbon trip" in p.read_text(encoding="utf-8") for p in notes)


def test_an_imported_conversation_keeps_its_title_as_its_note(memory: Memory) -> None:
    for i in range(10):  # the latest steps: the imported chats are older history
        memory.remember(f"today, step {i}", at=NOW + dt.timedelta(minutes=i))
    (report,) = memory.import_files([SAMPLES / "chatgpt-conversations.json"], now=NOW)
    assert report.to_long_term == report.new > 0
    stems = {p.stem for p in (memory.vault.root / "memory" / "long_term").glob("*.md")}
    assert "Sourdough starter smell (2024-05-29)" in stems, stems


def test_with_the_state_lost_every_file_of_one_import_is_checked_against_the_vault(
    memory: Memory, tmp_path: Path
) -> None:
    first = _jsonl(tmp_path / "trip.jsonl", _chat(12))
    second = _jsonl(tmp_path / "work.jsonl", _chat(12, session="work"))
    memory.import_files([first, second], now=NOW)
    memory.run_job("promotion", now=NOW)
    for path in (memory.locations.state / "imports").iterdir():
        path.unlink()
    reports = memory.import_files([first, second], now=NOW)
    assert [(r.new, r.duplicate) for r in reports] == [(0, 12), (0, 12)]
    assert all(n == 1 for n in _ids_in_vault(memory.vault.root).values())
