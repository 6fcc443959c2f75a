"""Input larger than a note may be (`[vault] max_note_bytes`): refused in one line, or kept whole
in an attachment, and never written past the limit (past it brainiac could not read its own file:
every later `remember` failed, promotion stopped, and each run wrote another copy of the events).

Real files in a real vault and the real CLI; sizes are the defaults (1 MB) where the input is what
a person or transcript gives, and a smaller `max_note_bytes` where only the arithmetic matters.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections import Counter
from pathlib import Path

import pytest

from brainiac import Memory
from brainiac.core.errors import TooLargeError
from brainiac.formats import stm
from brainiac.store.vault import ATTACHMENTS_DIR, EXPORTS_DIR, LONG_TERM_DIR, SHORT_TERM
from conftest import run_cli

NOW = dt.datetime(2026, 11, 22, 12, 0)
SAMPLES = Path(__file__).parent / "samples" / "imports"
LIMIT = 1_000_000
_ID_RE = re.compile(r"\^(e-[0-9a-f]{6,32})\b")


def _big_text(size: int, start: str = "Zanzibar opening words of the pasted log.") -> str:
    words = (f"line{i} of the server log with some words" for i in range(size // 30 + 1))
    return (start + " " + "\n".join(words))[:size]


def _ids_in_memory(vault: Path) -> Counter[str]:
    counts: Counter[str] = Counter()
    for path in (vault / "memory").rglob("*.md"):
        if EXPORTS_DIR not in path.as_posix():
            counts.update(_ID_RE.findall(path.read_text(encoding="utf-8")))
    return counts


def _every_note_within_the_limit(vault: Path, limit: int = LIMIT) -> None:
    sizes = {p: p.stat().st_size for p in (vault / "memory").rglob("*.md")}
    over = {str(p): n for p, n in sizes.items() if n > limit and EXPORTS_DIR not in p.as_posix()}
    assert not over, over


def _cli(vault: Path, *args: str, input: str | None = None) -> tuple[int, str, str]:
    done = run_cli("--vault", str(vault), *args, input=input)
    return done.returncode, done.stdout, done.stderr


def _set_limit(vault: Path, limit: int, window: int | None = None) -> None:
    text = f"[vault]\nmax_note_bytes = {limit}\n"
    if window is not None:
        text += f"\n[lifecycle]\nshort_term_window = {window}\n"
    (vault / ".brainiac" / "config.toml").write_text(text, encoding="utf-8")


# -- remember --------------------------------------------------------------------------------


def test_cli_remember_refuses_a_1mb_text_in_one_line_and_the_next_remember_works(
    vault: Path,
) -> None:
    before = (vault / SHORT_TERM).read_bytes()
    for args, given in (
        (("remember", "-"), _big_text(LIMIT)),  # 1 MB from stdin
        (("remember", _big_text(120_000)), None),  # an argument can be at most 128 KiB
    ):
        code, out, err = _cli(vault, *args, input=given)
        assert code == 2, err
        assert out == ""
        assert len(err.strip().splitlines()) == 1, err
        assert err.startswith(f"brainiac: {SHORT_TERM}: an event of ")
        assert "over the 50000-byte limit for one event" in err
        assert "remember it in smaller parts" in err and "nothing was written" in err
        assert (vault / SHORT_TERM).read_bytes() == before
    code, out, err = _cli(vault, "remember", "The deadline moved to Monday.")
    assert code == 0, err
    code, out, _err = _cli(vault, "search", "deadline")
    assert "deadline moved to Monday" in out


def test_remember_never_takes_the_short_term_document_over_the_limit(vault: Path) -> None:
    """Near the limit, `remember` is refused and says that promotion is due; once promotion ran,
    it works again. With no event past the window to promote, it says what does make room."""
    _set_limit(vault, 20_000, window=3)
    texts = [f"Entry {i}: " + "the quarterly report draft is ready " * 25 for i in range(40)]
    refused = None
    with Memory(vault, refresh_interval_s=0) as memory:
        for i, text in enumerate(texts):
            try:
                memory.remember(text, session="notes", at=NOW + dt.timedelta(minutes=i))
            except TooLargeError as exc:
                refused = (i, str(exc))
                break
            assert (vault / SHORT_TERM).stat().st_size <= 20_000
    assert refused is not None, "the document never filled up"
    i, message = refused
    assert message.startswith(f"{SHORT_TERM}: would be ")
    assert "over the 20000-byte limit" in message
    assert "promotion is due: `brainiac jobs run promotion` moves the" in message
    assert "\n" not in message
    assert (vault / SHORT_TERM).stat().st_size <= 20_000
    code, _out, err = _cli(vault, "jobs", "run", "promotion", "--now", "2026-11-22T18:00")
    assert code == 0, err
    code, _out, err = _cli(
        vault, "remember", texts[i], "--session", "notes", "--at", "2026-11-22T18:01"
    )
    assert code == 0, err
    # A person's own text fills the document: promotion cannot help, and the error says so.
    code, _out, err = _cli(vault, "jobs", "run", "promotion", "--now", "2026-11-22T18:02")
    assert code == 0, err
    doc = (vault / SHORT_TERM).read_text(encoding="utf-8")
    room = 20_000 - len(doc.encode("utf-8")) - 300
    mine = doc.replace("## Goals", "## Goals\n" + "my own plans " * (room // 13), 1)
    (vault / SHORT_TERM).write_text(mine, encoding="utf-8")
    code, _out, err = _cli(vault, "remember", texts[-1], "--at", "2026-11-22T18:05")
    assert code == 2
    assert "its own text and the 3 event(s) of the short-term window fill it: move some" in err
    assert (vault / SHORT_TERM).read_text(encoding="utf-8") == mine


# -- import ----------------------------------------------------------------------------------


def _chatgpt_export_with(path: Path, text: str) -> Path:
    data = json.loads((SAMPLES / "chatgpt-conversations.json").read_text(encoding="utf-8"))
    conversation = data[0]
    for node in conversation["mapping"].values():
        message = node.get("message")
        if (
            message
            and message["author"]["role"] == "user"
            and message["content"].get("content_type") == "text"
            and any(message["content"]["parts"])
        ):
            message["content"]["parts"] = [text]
            break
    path.write_text(json.dumps([conversation]), encoding="utf-8")
    return path


@pytest.mark.parametrize("kind", ["jsonl", "chatgpt"])
def test_an_imported_1_28mb_message_is_kept_whole_in_an_attachment_and_nothing_jams(
    vault: Path, tmp_path: Path, kind: str
) -> None:
    big = _big_text(1_280_000)
    if kind == "jsonl":
        rows = [
            {"text": "Can you look at this log?", "role": "user", "session": "ops",
             "at": "2026-11-20T09:00:00"},
            {"text": big, "role": "user", "session": "ops", "at": "2026-11-20T09:01:00"},
            {"text": "The log shows a timeout.", "role": "assistant", "session": "ops",
             "at": "2026-11-20T09:02:00"},
        ]  # fmt: skip
        export = tmp_path / "ops.jsonl"
        export.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    else:
        export = _chatgpt_export_with(tmp_path / "conversations.json", big)
    code, out, err = _cli(vault, "import", str(export))
    assert code == 0, err
    assert "1 too large for an event: cut, the whole text in memory/attachments/" in out
    (attachment,) = (vault / ATTACHMENTS_DIR).iterdir()
    assert attachment.read_text(encoding="utf-8") == big  # nothing lost
    _every_note_within_the_limit(vault)
    holders = [
        p
        for p in (vault / "memory").rglob("*.md")
        if f"[[{ATTACHMENTS_DIR}/{attachment.name}]]" in p.read_text(encoding="utf-8")
    ]
    assert len(holders) == 1  # the event, cut, links to the whole text
    event_id = attachment.name[: -len(".txt")]
    assert f"^{event_id}" in holders[0].read_text(encoding="utf-8")
    code, out, err = _cli(vault, "search", "Zanzibar")  # found by its start
    assert code == 0 and "Zanzibar" in out, (out, err)
    # Later writes all work, and nothing is written twice however often the jobs run.
    code, _out, err = _cli(vault, "remember", "After the import.")
    assert code == 0, err
    for hour in (13, 14, 15):
        code, _out, err = _cli(vault, "jobs", "run", "all", "--now", f"2026-11-22T{hour}:00")
        assert code == 0, err
    facts = stm.parse((vault / SHORT_TERM).read_text(encoding="utf-8")).section("Facts")
    assert "attachments" not in facts  # the link to the whole text is no fact
    code, out, err = _cli(vault, "import", str(export))
    assert code == 0 and "imported 0 new" in out, (out, err)
    assert len(list((vault / ATTACHMENTS_DIR).iterdir())) == 1
    counts = _ids_in_memory(vault)
    assert counts[event_id] == 1
    assert all(n == 1 for n in counts.values()), counts
    _every_note_within_the_limit(vault)


# -- promotion -------------------------------------------------------------------------------


def test_promotion_into_a_full_note_goes_on_in_one_continuation_note_without_copies(
    vault: Path,
) -> None:
    """A person's Atlas note a little under the limit: the events about Atlas go on in "Project
    Atlas (continued)", one note however often promotion runs, each event in one place."""
    limit = 30_000
    _set_limit(vault, limit, window=2)
    atlas = vault / LONG_TERM_DIR / "project-atlas.md"
    mine = atlas.read_text(encoding="utf-8") + "\n## My log\n"
    mine += "".join(f"- {i}: checked the Atlas dashboards\n" for i in range(2000))
    mine = mine[: limit - 200] + "\n"
    atlas.write_text(mine, encoding="utf-8")
    ids: list[str] = []
    with Memory(vault, refresh_interval_s=0) as memory:
        for run in range(3):
            for i in range(6):
                at = NOW + dt.timedelta(hours=run, minutes=i)
                text = f"Atlas run {run} step {i}: the migration of table {i} is done " * 3
                ids.append(memory.remember(text, session=f"atlas-{run}", at=at).id)
            (report,) = memory.run_job("promotion", now=NOW + dt.timedelta(hours=run, minutes=30))
            assert report.ok, report.summary
            _every_note_within_the_limit(vault, limit)
    assert atlas.read_text(encoding="utf-8") == mine  # the person's note, untouched
    counts = _ids_in_memory(vault)
    assert all(counts[i] == 1 for i in ids), {i: counts[i] for i in ids if counts[i] != 1}
    atlas_notes = sorted(p.name for p in (vault / LONG_TERM_DIR).glob("*tlas*"))
    assert atlas_notes == ["Project Atlas (continued).md", "project-atlas.md"], atlas_notes
    continued = (vault / LONG_TERM_DIR / "Project Atlas (continued).md").read_text()
    assert "[[project-atlas|Project Atlas]]" in continued  # it says what it continues
    doc = stm.parse((vault / SHORT_TERM).read_text(encoding="utf-8"))
    assert [e.id for e in doc.events] == ids[-2:]


def test_promotion_fills_a_continuation_then_starts_the_next(vault: Path) -> None:
    limit = 8_000
    _set_limit(vault, limit, window=0)
    ids = []
    with Memory(vault, refresh_interval_s=0) as memory:
        for i in range(60):
            text = f"Atlas step {i}: the migration of table number {i} finished without errors " * 3
            ids.append(memory.remember(text, session="atlas", at=NOW + dt.timedelta(minutes=i)).id)
            if i % 15 == 14:
                (report,) = memory.run_job("promotion", now=NOW + dt.timedelta(hours=1))
                assert report.ok, report.summary
    _every_note_within_the_limit(vault, limit)
    counts = _ids_in_memory(vault)
    assert all(counts[i] == 1 for i in ids), {i: counts[i] for i in ids if counts[i] != 1}
    names = sorted(p.name for p in (vault / LONG_TERM_DIR).glob("Project Atlas (continued*"))
    assert names[:2] == ["Project Atlas (continued 2).md", "Project Atlas (continued).md"], names


def test_forget_takes_the_attachment_with_its_event(vault: Path, tmp_path: Path) -> None:
    """The whole text of a cut event is memory too: `forget` of the event, or of a text only its
    tail holds, takes the attachment with the event line."""
    tail = "the secret tail says Quokka"
    rows = [
        {"text": _big_text(80_000, "First pasted log.") + tail, "session": "a",
         "at": "2026-11-20T09:00:00"},
        {"text": _big_text(80_000, "Second pasted log."), "session": "b",
         "at": "2026-11-20T10:00:00"},
    ]  # fmt: skip
    export = tmp_path / "logs.jsonl"
    export.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    code, out, err = _cli(vault, "import", str(export))
    assert code == 0 and "2 too large for an event" in out, (out, err)
    first, second = sorted((vault / ATTACHMENTS_DIR).iterdir(), key=lambda p: p.read_text())
    code, out, err = _cli(vault, "forget", "--matching", "Quokka", "--yes")
    assert code == 0, err
    assert not first.exists()
    assert second.exists()
    counts = _ids_in_memory(vault)
    assert counts[first.stem] == 0 and counts[second.stem] == 1
    code, out, err = _cli(vault, "forget", "--event", second.stem, "--yes")
    assert code == 0, err
    assert not second.exists()


def test_an_import_the_event_log_has_no_room_for_goes_into_notes(
    vault: Path, tmp_path: Path
) -> None:
    """The newest imported messages would join the Event Log; when it has no room for them they
    are placed like the history instead (into notes), and the import goes through."""
    _set_limit(vault, 20_000)
    doc = (vault / SHORT_TERM).read_text(encoding="utf-8")
    mine = doc.replace("## Goals", "## Goals\n" + "my own plans " * 1200, 1)
    (vault / SHORT_TERM).write_text(mine, encoding="utf-8")
    rows = [
        {"text": f"Step {i} of the Lisbon trip plan: " + "book the rooms and the train " * 25,
         "session": "trip", "at": f"2026-11-22T09:0{i}:00"}
        for i in range(5)
    ]  # fmt: skip
    export = tmp_path / "trip.jsonl"
    export.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    code, out, err = _cli(vault, "import", str(export), "--json")
    assert code == 0, err
    (report,) = json.loads(out)
    assert (report["new"], report["to_short_term"], report["to_long_term"]) == (5, 0, 5)
    assert (vault / SHORT_TERM).read_text(encoding="utf-8") == mine
    _every_note_within_the_limit(vault, 20_000)
    counts = _ids_in_memory(vault)
    assert len(counts) >= 5 and set(counts.values()) == {1}
    code, _out, err = _cli(vault, "remember", "Back home.")
    assert code == 0, err


def test_a_note_a_person_took_over_the_limit_keeps_its_events_and_gets_no_copies(
    vault: Path,
) -> None:
    """A person pastes a large log into the Atlas note that holds promoted events: the note can
    no longer be read as one, but its events are still there, so promotion puts none of them
    back as copies, however often it runs."""
    limit = 20_000
    _set_limit(vault, limit, window=0)
    ids = []
    with Memory(vault, refresh_interval_s=0) as memory:
        for i in range(3):
            text = f"Atlas step {i}: the migration of table {i} is done"
            ids.append(memory.remember(text, session="atlas", at=NOW + dt.timedelta(minutes=i)).id)
        (report,) = memory.run_job("promotion", now=NOW + dt.timedelta(hours=1))
        assert report.ok, report.summary
    atlas = vault / LONG_TERM_DIR / "project-atlas.md"
    assert all(f"^{i}" in atlas.read_text(encoding="utf-8") for i in ids)
    pasted = atlas.read_text(encoding="utf-8") + "\n## Pasted log\n" + _big_text(limit + 5000)
    atlas.write_text(pasted, encoding="utf-8")
    for run in range(3):
        code, _out, err = _cli(vault, "jobs", "run", "all", "--now", f"2026-11-22T1{3 + run}:00")
        assert code == 0, err
    assert atlas.read_text(encoding="utf-8") == pasted
    counts = _ids_in_memory(vault)
    assert all(counts[i] == 1 for i in ids), {i: counts[i] for i in ids}
    assert sorted(p.name for p in (vault / LONG_TERM_DIR).glob("*tlas*")) == ["project-atlas.md"]


def test_a_full_month_file_goes_on_in_the_next_without_jamming_promotion(vault: Path) -> None:
    limit = 3000
    _set_limit(vault, limit, window=0)
    ids = []
    with Memory(vault, refresh_interval_s=0) as memory:
        for run in range(3):
            for i in range(30):
                at = NOW + dt.timedelta(hours=run, minutes=i)
                ids.append(memory.remember("ok", session=f"chat{run}", at=at).id)
            (report,) = memory.run_job("promotion", now=NOW + dt.timedelta(hours=run, minutes=59))
            assert report.ok, report.summary
    _every_note_within_the_limit(vault, limit)
    counts = _ids_in_memory(vault)
    assert all(counts[i] == 1 for i in ids), {i: counts[i] for i in ids if counts[i] != 1}
    months = sorted(p.name for p in (vault / "memory" / "archive").glob("2026-11*.md"))
    assert months == ["2026-11 (2).md", "2026-11.md"], months
    second = (vault / "memory" / "archive" / "2026-11 (2).md").read_text(encoding="utf-8")
    gone = next(i for i in ids if f"^{i}" in second)
    code, _out, err = _cli(vault, "forget", "--event", gone, "--yes")
    assert code == 0, err
    assert gone not in _ids_in_memory(vault)
    assert gone not in (vault / "memory" / "archive" / "2026-11 (2).md").read_text()
