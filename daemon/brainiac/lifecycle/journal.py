"""The event journal: every event brainiac has written, so that no save can make one disappear.

The vault is edited by people and rewritten by sync tools while brainiac writes it. An editor that
saves an older copy of `memory/short_term.md` (vim after "file changed since reading it", a sync
client replaying a stale version) removes the events brainiac appended since that copy; a note
saved from an older copy loses the Sources lines promotion put there. A person's save always wins
over the daemon's, so those lines are not fought over: brainiac only notices, later, that an
event it wrote is nowhere in the vault (`survey`), and puts it back where it belongs
(`jobs.placement.recover`). Nowhere means in no file the indexer reads as memory
(`vault.kind_of`): a note a person moved out of `memory/` into a folder of their own still holds
its events.

The journal is one JSON line per event in the state directory (outside the vault), appended after
the event's first successful write. The one way to take an event out of the memory for good is
`brainiac forget`, which also takes it out of the journal (`forget`). Appends and that rewrite
hold an flock on `events.journal.lock`, so a rewrite never drops a line appended meanwhile.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from brainiac.core.errors import BrainiacError, NoteParseError
from brainiac.store import safe_io
from brainiac.store.lock import lock_file
from brainiac.store.vault import kind_of
from brainiac.text import events as ev

if TYPE_CHECKING:
    from brainiac.search.memory_protocol import MemoryLike


JOURNAL_FILE = "events.journal.jsonl"
_LOCK_FILE = "events.journal.lock"
# An event id anywhere in a line: the Event Log, a note's Sources, an archive month file.
# (Not after a backslash: event text stores a quoted id as `\^e-...`, events.py.)
_VAULT_ID_RE = re.compile(rf"(?<!\\)\^({ev.ID})\b")
_RAW_READ_FACTOR = 16  # a note up to 16 times the size limit is still searched for event ids


def record(state_dir: Path, events: Iterable[ev.Event]) -> None:
    """Append events to the journal (one O_APPEND write; duplicates are harmless)."""
    lines = "".join(
        json.dumps({"id": e.id, "event": ev.render(e)}, ensure_ascii=False) + "\n" for e in events
    )
    if not lines:
        return
    with lock_file(state_dir / _LOCK_FILE):
        fd = os.open(state_dir / JOURNAL_FILE, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, lines.encode("utf-8"))
        finally:
            os.close(fd)


def read(state_dir: Path) -> dict[str, ev.Event]:
    """Every journalled event by id (a line torn by a crash is skipped)."""
    try:
        raw = (state_dir / JOURNAL_FILE).read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    found: dict[str, ev.Event] = {}
    for line in raw.splitlines():
        try:
            item = json.loads(line)
            parsed = ev.parse_text(str(item["event"]))
        except (ValueError, KeyError, TypeError):
            continue
        for event in parsed:
            found[event.id] = event
    return found


def ids_since(state_dir: Path, offset: int) -> tuple[set[str], int]:
    """The ids journalled after byte `offset`, and the offset to ask from next time (a line still
    being appended is left for then; a journal rewritten by `forget` is read from the start)."""
    try:
        with open(state_dir / JOURNAL_FILE, "rb") as f:
            if os.fstat(f.fileno()).st_size < offset:
                offset = 0
            f.seek(offset)
            data = f.read()
    except FileNotFoundError:
        return set(), 0
    complete = data[: data.rfind(b"\n") + 1]
    ids: set[str] = set()
    for line in complete.decode("utf-8", "replace").splitlines():
        try:
            ids.add(str(json.loads(line)["id"]))
        except (ValueError, KeyError, TypeError):
            continue
    return ids, offset + len(complete)


def forget(state_dir: Path, ids: set[str]) -> int:
    """Take events out of the journal for good; returns how many lines went."""
    if not ids:
        return 0
    path = state_dir / JOURNAL_FILE
    with lock_file(state_dir / _LOCK_FILE):
        try:
            lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        except FileNotFoundError:
            return 0
        kept = []
        for line in lines:
            try:
                drop = json.loads(line).get("id") in ids
            except (ValueError, AttributeError):
                drop = False  # a torn line is left for `read` to skip
            if not drop:
                kept.append(line)
        if len(kept) != len(lines):
            safe_io.replace_file(path, "".join(kept).encode("utf-8"))
        return len(lines) - len(kept)


def event_locations(memory: MemoryLike) -> dict[str, set[str]]:
    """The vault files each event id is written in: the Event Log, the archive and every note,
    wherever a person keeps it. The indexer's rule says which files those are (kind_of), so a
    kept raw export, a generated index note or the working memory, which only quote events,
    never count as an event's home."""
    found: dict[str, set[str]] = {}
    for rel in memory.vault.markdown_files():
        if kind_of(rel) is None:
            continue
        try:
            text = memory.vault.read(rel).text
        except NoteParseError:
            # A note that cannot be read as one (a person's, over [vault] max_note_bytes, say)
            # still holds its events: counted as lost, they were put back as copies.
            text = _raw_text(memory, rel)
        except (OSError, BrainiacError):
            continue
        for event_id in _VAULT_ID_RE.findall(text):
            found.setdefault(event_id, set()).add(rel)
    return found


def _raw_text(memory: MemoryLike, rel: str) -> str:
    """The text of a file that is no readable note, for its event ids: not through a symlink,
    and not of a file so large that reading it would be the problem (`status` reports it)."""
    path = memory.vault.path(rel)
    try:
        if (
            path.is_symlink()
            or path.stat().st_size > _RAW_READ_FACTOR * memory.vault.max_note_bytes
        ):
            return ""
        data, _ = safe_io.read_bytes(path)  # a FIFO is refused here, never waited on
        return data.decode("utf-8", errors="replace")
    except OSError:
        return ""


def vault_event_ids(memory: MemoryLike) -> set[str]:
    """Every event id written in the Event Log, the archive and the notes."""
    return set(event_locations(memory))


@dataclass(frozen=True)
class Survey:
    """The journal and where its events are, read in the one order that cannot mistake an event
    being remembered for a lost one (see `survey`)."""

    journalled: dict[str, ev.Event]
    where: dict[str, set[str]]  # event id -> the vault files it is written in

    @property
    def missing(self) -> list[ev.Event]:
        return [e for i, e in self.journalled.items() if i not in self.where]


def survey(memory: MemoryLike) -> Survey:
    """The journal first, then the vault. An event is written to the vault before it is
    journalled, so every event in this journal read was in the vault before the vault read
    began, and is missing from it only if a save took it away. Read the other way round, an
    event remembered between the two reads is journalled but not yet seen in the vault: it
    would be taken for missing and placed a second time, out of the recent window."""
    journalled = read(memory.locations.state)
    return Survey(journalled, event_locations(memory))
