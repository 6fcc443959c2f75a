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
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from brainiac.core.errors import BrainiacError, NoteParseError, StaleWriteError
from brainiac.formats import events as ev
from brainiac.store import safe_io
from brainiac.store.lock import lock_file
from brainiac.store.vault import kind_of

if TYPE_CHECKING:
    from brainiac.search.memory_protocol import MemoryLike


JOURNAL_FILE = "events.journal.jsonl"
_LOCK_FILE = "events.journal.lock"
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
    return _invert({rel: _ids_of(memory, rel) for rel in _memory_files(memory)})


def _invert(held: dict[str, set[str]]) -> dict[str, set[str]]:
    """file -> the event ids it holds, as event id -> the files that hold it (and back)."""
    out: dict[str, set[str]] = {}
    for key, values in held.items():
        for value in values:
            out.setdefault(value, set()).add(key)
    return out


def _ids_of(memory: MemoryLike, rel: str) -> set[str]:
    read = _read_ids(memory, rel)
    return read[0] if read is not None else set()


def _memory_files(memory: MemoryLike) -> list[str]:
    return [rel for rel in memory.vault.markdown_files() if kind_of(rel) is not None]


def _read_ids(memory: MemoryLike, rel: str) -> tuple[set[str], safe_io.Fingerprint | None] | None:
    """The event ids written in a file, with the fingerprint of the bytes read (None when there
    is none to compare with; a file that cannot be read holds none); None when it kept changing
    while it was read."""
    fingerprint: safe_io.Fingerprint | None
    try:
        try:
            file = memory.vault.read(rel)
            text, fingerprint = file.text, file.fingerprint
        except NoteParseError:
            # A note that cannot be read as one (a person's, over [vault] max_note_bytes, say)
            # still holds its events: counted as lost, they were put back as copies.
            text, fingerprint = _raw_text(memory, rel)
    except StaleWriteError:
        return None
    except (OSError, BrainiacError):
        return set(), None
    return {m.group("id") for m in ev.BLOCK_IDS_RE.finditer(text)}, fingerprint


def _raw_text(memory: MemoryLike, rel: str) -> tuple[str, safe_io.Fingerprint | None]:
    """The text of a file that is no readable note, for its event ids: not through a symlink,
    and not of a file so large that reading it would be the problem (`status` reports it)."""
    path = memory.vault.path(rel)
    try:
        if (
            path.is_symlink()
            or path.stat().st_size > _RAW_READ_FACTOR * memory.vault.max_note_bytes
        ):
            return "", None
        data, fingerprint = safe_io.read_bytes(path)  # a FIFO is refused here, never waited on
        return data.decode("utf-8", errors="replace"), fingerprint
    except OSError:
        return "", None


def vault_event_ids(memory: MemoryLike) -> set[str]:
    """Every event id written in the Event Log, the archive and the notes."""
    return set(event_locations(memory))


# A survey that finds events missing waits this long, at most, for the in-place saves under way
# to close (as long as a write waits for a file to go quiet, safe_io).
SETTLE_WAIT_S = 5.0
_POLL_S = 0.01
# A file whose change time is this close to the survey's start may have been read mid-save: the
# change time comes from the kernel's coarse clock, some milliseconds behind time.time().
_CHANGED_MARGIN_NS = 1_000_000_000


@dataclass(frozen=True)
class Survey:
    """The journal and where its events are, read in the one order that cannot mistake an event
    being remembered for a lost one (see `survey`)."""

    journalled: dict[str, ev.Event]
    where: dict[str, set[str]]  # event id -> the vault files it is written in
    # Files a person's editor was still saving in place when the survey stopped waiting: what
    # they hold cannot be read yet.
    unsettled: tuple[str, ...] = ()

    @property
    def unseen(self) -> list[ev.Event]:
        """The journalled events the survey found in no file."""
        return [e for i, e in self.journalled.items() if i not in self.where]

    @property
    def missing(self) -> list[ev.Event]:
        """The events a save took away: those unseen, unless a file was still being saved (an
        unseen event may be in it, and put back elsewhere it would be there twice once the save
        is written; the next survey looks again)."""
        return [] if self.unsettled else self.unseen


def survey(memory: MemoryLike, wait_s: float = SETTLE_WAIT_S) -> Survey:
    """The journal first, then the vault. An event is written to the vault before it is
    journalled, so every event in this journal read was in the vault before the vault read
    began, and is missing from it only if a save took it away. Read the other way round, an
    event remembered between the two reads is journalled but not yet seen in the vault: it
    would be taken for missing and placed a second time, out of the recent window.

    A file read in the middle of a person's in-place save (open with O_TRUNC, then write) reads
    empty or cut short, and its events look missing: put back elsewhere, they would be in two
    places once the save's write lands (benchmarks/concurrent_edits.py finds it). So when some
    are unseen, the files that changed since the survey began or are open for writing now are
    read again once no save is under way on them (`_second_look`, at most `wait_s`)."""
    journalled = read(memory.locations.state)
    began_ns = time.time_ns() - _CHANGED_MARGIN_NS
    where = event_locations(memory)
    if all(i in where for i in journalled):
        return Survey(journalled, where)
    where, unsettled = _second_look(memory, where, began_ns, time.monotonic() + wait_s)
    return Survey(journalled, where, unsettled)


def _second_look(
    memory: MemoryLike, where: dict[str, set[str]], began_ns: int, until: float
) -> tuple[dict[str, set[str]], tuple[str, ...]]:
    """`where` with the files a first read may have caught mid-save read again: those changed
    since `began_ns` (written, moved, or new) or open for writing now; a file gone since holds
    nothing. Returns it, and the files still being saved at `until` (their first read kept)."""
    listed = _memory_files(memory)
    still_listed = set(listed)
    held = {rel: ids for rel, ids in _invert(where).items() if rel in still_listed}
    unsettled: list[str] = []
    for rel in listed:
        path = memory.vault.path(rel)
        try:
            changed = os.stat(path).st_ctime_ns >= began_ns
        except OSError:
            held.pop(rel, None)
            continue
        if not changed and not safe_io.being_written(path):
            continue  # unchanged since before the survey began, and no save under way
        ids = _settled_ids(memory, rel, until)
        if ids is None:
            unsettled.append(rel)
        else:
            held[rel] = ids
    return _invert(held), tuple(unsettled)


def _settled_ids(memory: MemoryLike, rel: str, until: float) -> set[str] | None:
    """The event ids of a file read while no save was under way on it: nobody had it open for
    writing before or after the read, and it is still what was read. None if that never came
    by `until`."""
    path = memory.vault.path(rel)
    while True:
        read = None if safe_io.being_written(path) else _read_ids(memory, rel)
        if read is not None and not safe_io.being_written(path) and _still(path, read[1]):
            return read[0]
        if time.monotonic() >= until:
            return None
        time.sleep(_POLL_S)


def _still(path: Path, fingerprint: safe_io.Fingerprint | None) -> bool:
    """Whether the file at `path` is still the one read (nothing to compare with: yes)."""
    if fingerprint is None or not os.path.lexists(path):
        return True  # gone after a whole read: what it held was read
    return safe_io.same_file_still(path, fingerprint)
