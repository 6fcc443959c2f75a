"""Importing chat exports: every message exactly once, however often an import runs or dies.

A message's key is the SHA-256 of where it stands and what it says: its conversation, its own id
(or its place in the conversation when the format gives none) and its text with white space
folded. So two identical "yes" in one conversation are two messages, while the same export
imported again, or a transcript that grew, adds only what is new. A message becomes an event in
the short-term Event Log, placed in time order (older history does not pose as the latest steps),
with the id `e-` + the key's first 10 hex digits, so from then on the lifecycle jobs treat it
like any other event and it can be counted wherever it lives.

What has been imported is kept in the state directory, under `imports/`:

    seen.txt           the key of every message imported, one per line (appended)
    sessions.json      per conversation, its watermark: messages imported, last position and time
    checkpoints.jsonl  one line per file imported: its SHA-256, format, what it added and the
                       damaged lines it left out and reported
    intent.json        the batch in flight (written ahead; present only during an import or after
                       a crash)

An import is written ahead: the batch goes to `intent.json`, then the raw export is kept under
`memory/archive/exports/` (once per content, or, for a file of one conversation such as a Claude
Code transcript, once per conversation and grown in place: `_archive_target`), then the events
join the Event Log in one compare-and-swap write, then the keys, watermarks and checkpoint are
recorded and the intent removed. Killed at any instant,
the next import finishes the batch first: it adds each of the batch's events that is found
nowhere in the vault (promotion may have moved some on meanwhile) and records the rest. If the
state directory is lost, the event ids in the vault stand in for the keys. A file that cannot be
parsed is rejected whole, with the file and the line or JSON path, and nothing of it is imported;
except a transcript read live (`live`, the Stop hook), whose damaged lines are left out, each
reported by the first import that meets it (its checkpoint lists them: `damaged_lines`).

One concept: the write-ahead import, whose steps and records must change together to stay
exactly-once; the formats it reads are chatlogs/, the events it writes events.py.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import logging
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from brainiac.core import clock, faults
from brainiac.core.errors import ImportFormatError, StaleWriteError
from brainiac.exchange import chatlogs
from brainiac.exchange.chatlogs import Message
from brainiac.formats import events as ev
from brainiac.lifecycle import journal
from brainiac.store import attachments, safe_io
from brainiac.store.vault import EXPORTS_DIR, INBOX_DIR

if TYPE_CHECKING:
    from brainiac.search.memory_protocol import MemoryLike

logger = logging.getLogger(__name__)

STATE_DIR = "imports"
SEEN_FILE = "seen.txt"
SESSIONS_FILE = "sessions.json"
CHECKPOINTS_FILE = "checkpoints.jsonl"
INTENT_FILE = "intent.json"
REJECTED_DIR = INBOX_DIR + "/rejected"
INBOX_SETTLE_S = 10.0  # a file still being copied into the inbox is left for the next turn
_KEY_RE = re.compile(r"^[0-9a-f]{64}$")
# A raw export kept per conversation (`_archive_target`), not per content.
_CONVERSATION_COPY_RE = re.compile(r"-s[0-9a-f]{7}(?:-\d{1,6})?(?:\.[^.]*)?$")
_LABEL_CHARS = 48


@dataclass
class FileReport:
    """What importing one file did (or, with `dry_run`, would do)."""

    path: str
    format: str = ""
    new: int = 0
    duplicate: int = 0
    skipped: int = 0
    archived: str | None = None  # the vault path of the raw export as kept
    error: str | None = None  # why the file was rejected (then nothing of it was imported)
    sessions: int = 0
    to_short_term: int = 0  # the newest, into the Event Log
    to_long_term: int = 0  # history, into long-term notes or the archive
    attached: int = 0  # too large for an event: cut, the whole text in memory/attachments/
    # Read live (the Stop hook): lines that cannot be read, left out, that no earlier import of
    # this file reported ("line 2: not valid JSON (...)"), so each is reported once.
    damaged: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass
class _Batch:
    """The write-ahead record of one file's import."""

    source: str
    sha256: str
    format: str
    archive_to: str
    lines: list[str]  # the new events, rendered
    keys: list[str]
    watermarks: dict[str, dict[str, object]]
    report: dict[str, object] = field(default_factory=dict)
    size: int = -1  # the bytes of the source read (a live transcript may have grown since)
    damaged: list[str] = field(default_factory=list)  # Damaged.key of each line left out


def message_key(message: Message) -> str:
    where = message.message_id or f"#{message.position}"
    text = " ".join(ev.normalise_text(message.text).split())
    return hashlib.sha256("\x1f".join((message.session, where, text)).encode("utf-8")).hexdigest()


# How the placeholder `brainiac forget` leaves in place of a kept export begins (docs/forget.md).
FORGOTTEN_HEAD = b"brainiac forget: "


def id_for_key(key: str) -> str:
    """The event id an imported message with this key is written under."""
    return "e-" + key[:10]


def import_paths(
    memory: MemoryLike,
    paths: Sequence[Path],
    format: str | None = None,
    now: dt.datetime | None = None,
    dry_run: bool = False,
    move: bool = False,
    project: str | None = None,
    live: bool = False,
) -> list[FileReport]:
    """Import each file as one all-or-nothing batch. The caller holds the vault's job lock.

    `move` (the inbox): the file itself goes to the archive instead of a copy. `project`: the
    new events belong to it (a message imported before keeps the project it was imported with).
    `live`: each file is a transcript still being written (chatlogs.parse): its damaged lines
    are left out and reported once, a last line being written is left for a later import, and
    what is archived is exactly what was read.
    """
    when = clock.local(now) if now is not None else clock.now()
    state = _State(memory.locations.state / STATE_DIR)
    if not dry_run:
        finish_interrupted(memory, state)
    reports = []
    for done, path in enumerate(paths):
        if memory.on_progress is not None:
            memory.on_progress("importing", done, len(paths))
        try:
            reports.append(
                _import_file(memory, state, path, format, when, dry_run, move, project, live)
            )
        except ImportFormatError as exc:
            reports.append(FileReport(str(path), format or "", error=str(exc)))
        except OSError as exc:
            reports.append(
                FileReport(
                    str(path),
                    format or "",
                    error=f"{path}: cannot read it ({exc.strerror or exc}); check the path",
                )
            )
    if memory.on_progress is not None:
        memory.on_progress("importing", len(paths), len(paths))
    return reports


def import_inbox(memory: MemoryLike, now: dt.datetime, dry_run: bool = False) -> list[FileReport]:
    """Import the files waiting in `inbox/` (the daemon's inbox job). An imported file moves to
    `memory/archive/exports/`; a rejected one to `inbox/rejected/`, with the reason beside it in
    `NAME.error.txt`, so it is neither lost nor retried forever."""
    inbox = memory.vault.path(INBOX_DIR)
    if not inbox.is_dir():
        return []
    settled = now.timestamp() - INBOX_SETTLE_S
    waiting = sorted(
        p
        for p in inbox.iterdir()
        if p.is_file()
        and not p.is_symlink()
        and not p.name.startswith(".")
        and not p.name.lower().startswith("readme")
        and p.stat().st_mtime <= settled
    )
    if not waiting:
        return []
    reports = import_paths(memory, waiting, now=now, dry_run=dry_run, move=True)
    if not dry_run:
        for path, report in zip(waiting, reports, strict=True):
            if not report.ok and path.exists():
                _reject(memory, path, report.error or "rejected")
    return reports


def _reject(memory: MemoryLike, path: Path, reason: str) -> None:
    rejected = memory.vault.path(REJECTED_DIR)
    rejected.mkdir(parents=True, exist_ok=True)
    target = _free_name(rejected / path.name)
    if safe_io.rename_noreplace(path, target):
        safe_io.replace_file(target.with_name(target.name + ".error.txt"), (reason + "\n").encode())


def _free_name(path: Path) -> Path:
    n = 1
    candidate = path
    while candidate.exists():
        n += 1
        candidate = path.with_name(f"{path.stem}-{n}{path.suffix}")
    return candidate


def _import_file(
    memory: MemoryLike,
    state: _State,
    path: Path,
    format: str | None,
    now: dt.datetime,
    dry_run: bool,
    move: bool,
    project: str | None = None,
    live: bool = False,
) -> FileReport:
    data, _ = safe_io.read_bytes(path)  # a regular file only: a FIFO would wait for ever
    chat = chatlogs.parse(path, format, data, live)
    data = data[: len(data) - chat.unread]
    digest = safe_io.sha256_hex(data)
    report = FileReport(str(path), chat.format, skipped=len(chat.skipped))
    reported = state.damage_reported(str(path)) if chat.damaged else set()
    report.damaged = [f"line {d.line}: {d.problem}" for d in chat.damaged if d.key not in reported]
    if live and not data:
        return report  # not one line written yet: nothing to keep (no copy named for no content)
    seen = state.seen_keys(memory)
    fallback_time = dt.datetime.fromtimestamp(path.stat().st_mtime)
    new_events: list[ev.Event] = []
    attached: list[attachments.Attachment] = []
    new_keys: list[str] = []
    watermarks: dict[str, dict[str, object]] = {}
    last_at: dict[str, dt.datetime] = {}
    future = 0
    for message in chat.messages:
        key = message_key(message)
        at = ev.normalise_time(message.at) if message.at is not None else None
        at = at or last_at.get(message.session) or ev.normalise_time(fallback_time)
        if clock.too_far_ahead(at, now):
            # A wrong clock or a typo: kept, as of now, so it cannot pose as the newest event
            # for years and send every later import to history (placement.place).
            future += 1
            at = now
        last_at[message.session] = at
        mark = watermarks.setdefault(message.session, {"messages": 0, "position": -1})
        mark["position"] = max(int(str(mark["position"])), message.position)
        mark["last_at"] = at.isoformat()
        if key in seen:
            report.duplicate += 1
            continue
        seen.add(key)
        mark["messages"] = int(str(mark["messages"])) + 1
        new_keys.append(key)
        event, attachment = attachments.cut(
            _event(message, key, at, project), memory.vault.max_event_bytes
        )
        new_events.append(event)
        if attachment is not None:
            attached.append(attachment)
    if future:
        logger.warning(
            "%s: %d message(s) dated in the future (after %s); imported as of then; "
            "check the clock of the machine that wrote it",
            path,
            future,
            now.isoformat(timespec="minutes"),
        )
    report.new = len(new_events)
    report.attached = len(attached)
    report.sessions = len(watermarks)
    archived = state.archived_as(digest)
    if archived is None or not memory.vault.path(archived).exists():
        archived = _archive_target(memory, chat, path, data, digest, now)
    report.archived = archived
    if dry_run:
        return report
    batch = _Batch(
        str(path),
        digest,
        chat.format,
        archived,
        [ev.render(e) for e in new_events],
        new_keys,
        watermarks,
        {k: v for k, v in asdict(report).items() if k != "path"},
        len(data),
        [d.key for d in chat.damaged],
    )
    # Before the intent: the events of a batch finished after a crash link to them.
    for attachment in attached:
        attachments.write(memory.vault, attachment)
    state.write_intent(batch)
    faults.point("import.intent-written")
    _archive(memory, path, archived, move, data)
    faults.point("import.archived")
    report.to_short_term, report.to_long_term = _add_events(memory, new_events, now)
    faults.point("import.events-written")
    state.record(batch, now)
    faults.point("import.recorded")
    state.clear_intent()
    return report


def _event(message: Message, key: str, at: dt.datetime, project: str | None = None) -> ev.Event:
    return ev.Event(
        at,
        ev.clean_role(message.role),
        ev.normalise_text(message.text),
        ev.clean_session(_session_label(message)),
        id_for_key(key),
        ev.clean_project(project),
    )


def _session_label(message: Message) -> str:
    """A readable session for the event line: the title with a short id (two chats may share a
    title, and promotion keeps a session together), or the conversation id as it is."""
    session = message.session
    short = session.replace("-", "")[:8] if len(session) > 12 else session
    title = " ".join((message.title or "").split())[:_LABEL_CHARS].strip()
    return f"{title} {short}" if title and title != session else session[:_LABEL_CHARS]


def _archive_name(path: Path, tag: str, now: dt.datetime) -> str:
    stem = re.sub(r"[^\w.-]+", "-", path.stem).strip("-.")[:60] or "export"
    return f"{EXPORTS_DIR}/{now:%Y-%m-%d}-{stem}-{tag}{path.suffix.lower()}"


def _archive_target(
    memory: MemoryLike,
    chat: chatlogs.ChatFile,
    path: Path,
    data: bytes,
    digest: str,
    now: dt.datetime,
) -> str:
    """Where the raw export is kept. A file of one conversation (a Claude Code transcript, which
    the Stop hook imports after every turn) has one copy, grown in place as the conversation
    grows: the copy keyed by its conversation whose bytes begin the file's, or that the file's
    begin. Any other file (several conversations, or one whose copy no longer matches: edited by
    a person, or rewritten) is kept per distinct content, so nothing is ever replaced by a file
    that does not hold all of it."""
    sessions = {(chat.format, m.session) for m in chat.messages}
    if len(sessions) != 1:
        return _archive_name(path, digest[:8], now)
    ((fmt, session),) = sessions
    # "s" + 7 hex digits: as long as a content digest's 8 hex digits, never mistaken for one.
    tag = "s" + hashlib.sha256(f"{fmt}\x1f{session}".encode()).hexdigest()[:7]
    suffix = path.suffix.lower()
    pattern = re.compile(rf"\d{{4}}-\d{{2}}-\d{{2}}-.*-{tag}(?:-(\d+))?{re.escape(suffix)}")
    folder = memory.vault.path(EXPORTS_DIR)
    copies: list[tuple[int, str]] = []
    with contextlib.suppress(FileNotFoundError):
        for entry in os.scandir(folder):
            m = pattern.fullmatch(entry.name)
            if m is not None and entry.is_file(follow_symlinks=False):
                copies.append((int(m.group(1) or 1), entry.name))
    for _n, name in sorted(copies):
        rel = f"{EXPORTS_DIR}/{name}"
        try:
            kept = memory.vault.path(rel).read_bytes()
        except FileNotFoundError:
            continue
        if _forgotten(kept) or data.startswith(kept) or kept.startswith(data):
            return rel
    rel = _archive_name(path, tag, now)
    if copies:
        rel = rel.removesuffix(suffix) + f"-{max(n for n, _ in copies) + 1}{suffix}"
    return rel


def _forgotten(kept: bytes) -> bool:
    """Whether a kept export is forget's placeholder: it stays one, or what was forgotten would
    be archived again from the transcript, which still holds it (docs/forget.md)."""
    return kept.startswith(FORGOTTEN_HEAD)


def _archive(memory: MemoryLike, source: Path, rel: str, move: bool, data: bytes) -> None:
    """Keep the raw export in the vault (once per distinct content, or grown in place: see
    `_archive_target`). `data` is the source's content as read: a transcript being written has
    grown since, and the copy holds what was imported, no more (its next import grows it)."""
    target = memory.vault.path(rel)
    if target.exists():
        if _CONVERSATION_COPY_RE.search(target.name):
            _grow(target, data)  # a copy per content keeps the content its name was made for
        same = source.exists() and source.resolve() == target.resolve()
        if move and source.exists() and not same and _holds(target, source):
            source.unlink()  # its bytes are archived already (or were forgotten)
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    if move and safe_io.rename_noreplace(source, target):
        return
    tmp = target.with_name(f".{target.name}{safe_io.TMP_SUFFIX}")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    if not safe_io.rename_noreplace(tmp, target):
        tmp.unlink()  # another import kept the same content meanwhile
    if move:
        source.unlink()


def _grow(target: Path, data: bytes) -> bool:
    """Replace the kept copy by the source's content that continues it (its bytes begin the
    source's), in one compare-and-swap: a copy a person edited meanwhile is theirs and is left as
    it is."""
    try:
        kept, fingerprint = safe_io.read_bytes(target)
    except FileNotFoundError:
        return False
    if len(data) <= len(kept) or not data.startswith(kept) or _forgotten(kept):
        return False
    try:
        safe_io.write_bytes(target, data, fingerprint)
    except StaleWriteError:
        logger.warning("%s: changed while it was being grown; left as it is", target)
        return False
    return True


def _holds(target: Path, source: Path) -> bool:
    """Whether the kept copy holds every byte of the source (or is forget's placeholder)."""
    kept = target.read_bytes()
    return kept.startswith(source.read_bytes()) or _forgotten(kept)


def _add_events(
    memory: MemoryLike, events: Iterable[ev.Event], now: dt.datetime
) -> tuple[int, int]:
    """The newest messages join the Event Log, the history goes into notes (placement.py)."""
    from brainiac.lifecycle.jobs import placement  # here: only an import that writes places events

    placed = placement.place(memory, events, now, lambda: faults.point("import.history-placed"))
    return placed.short_term, placed.long_term


def finish_interrupted(memory: MemoryLike, state: _State | None = None) -> bool:
    """Complete an import a crash cut short (its events first, then its records)."""
    state = state or _State(memory.locations.state / STATE_DIR)
    batch = state.read_intent()
    if batch is None:
        return False
    source = Path(batch.source)
    try:
        data: bytes | None = source.read_bytes()
    except FileNotFoundError:
        data = None
    if data is not None:
        if batch.size >= 0 and safe_io.sha256_hex(data[: batch.size]) == batch.sha256:
            data = data[: batch.size]  # what the batch read, not what was written since
        _archive(memory, source, batch.archive_to, False, data)
    from brainiac.lifecycle.jobs.moving import finish_interrupted as finish_promotion

    now = clock.now()
    finish_promotion(memory, now)  # history placed half-way is finished first
    present = journal.vault_event_ids(memory)
    missing = [e for line in batch.lines for e in ev.parse_text(line) if e.id not in present]
    _add_events(memory, missing, now)
    # Its damaged lines were never reported (the report comes after the record): the next
    # import of the file reports them.
    state.record(replace(batch, damaged=[]), now, note="finished after an interruption")
    state.clear_intent()
    return True


class _State:
    """The import records in the state directory (module docstring)."""

    def __init__(self, directory: Path) -> None:
        self.dir = directory
        self._seen: _SeenKeys | None = None

    def seen_keys(self, memory: MemoryLike) -> _SeenKeys:
        """Read once per import (every file of it shares them, and `record` adds to them)."""
        if self._seen is None:
            try:
                lines = (self.dir / SEEN_FILE).read_text(encoding="utf-8").split("\n")
                # A torn last line is skipped.
                self._seen = _SeenKeys({k for k in lines if _KEY_RE.match(k)}, set())
            except FileNotFoundError:
                # Never imported here, or the state was deleted: the vault's event ids tell.
                self._seen = _SeenKeys(set(), journal.vault_event_ids(memory))
        return self._seen

    def archived_as(self, digest: str) -> str | None:
        for record in self.checkpoints():
            if record.get("sha256") == digest and record.get("archived"):
                return str(record["archived"])
        return None

    def damage_reported(self, source: str) -> set[str]:
        """The damaged lines (Damaged.key) an earlier import of `source` met and reported."""
        reported: set[str] = set()
        for record in self.checkpoints():
            keys = record.get("damaged_lines")
            if record.get("source") == source and isinstance(keys, list):
                reported.update(str(key) for key in keys)
        return reported

    def checkpoints(self) -> list[dict[str, object]]:
        try:
            lines = (self.dir / CHECKPOINTS_FILE).read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return []
        out = []
        for line in lines:
            try:
                item = json.loads(line)
            except ValueError:
                continue  # a line torn by a crash
            if isinstance(item, dict):
                out.append(item)
        return out

    def write_intent(self, batch: _Batch) -> None:
        self.dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        safe_io.replace_file(self.dir / INTENT_FILE, json.dumps(asdict(batch)).encode("utf-8"))

    def read_intent(self) -> _Batch | None:
        try:
            raw = json.loads((self.dir / INTENT_FILE).read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        return _Batch(**raw)

    def clear_intent(self) -> None:
        (self.dir / INTENT_FILE).unlink(missing_ok=True)

    def record(self, batch: _Batch, now: dt.datetime, note: str = "") -> None:
        """Keys, watermarks and the checkpoint of a batch whose events are in the vault.
        Recording twice (a crash between these steps) only repeats lines; sets absorb them."""
        self.dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        _append(self.dir / SEEN_FILE, "".join(k + "\n" for k in batch.keys))
        if self._seen is not None:
            self._seen.keys.update(batch.keys)
        sessions = self.sessions()
        for session, mark in batch.watermarks.items():
            old = sessions.get(session, {})
            sessions[session] = {
                "messages": int(str(old.get("messages", 0))) + int(str(mark["messages"])),
                "position": max(int(str(old.get("position", -1))), int(str(mark["position"]))),
                "last_at": max(str(old.get("last_at", "")), str(mark.get("last_at", ""))),
            }
        safe_io.replace_file(self.dir / SESSIONS_FILE, json.dumps(sessions, indent=1).encode())
        record = {
            "at": now.isoformat(timespec="seconds"),
            "source": batch.source,
            "sha256": batch.sha256,
            **batch.report,
            "archived": batch.archive_to,
            "first_id": ev.parse_text(batch.lines[0])[0].id if batch.lines else None,
            "last_id": ev.parse_text(batch.lines[-1])[0].id if batch.lines else None,
        }
        if batch.damaged:
            record["damaged_lines"] = batch.damaged
        if note:
            record["note"] = note
        _append(self.dir / CHECKPOINTS_FILE, json.dumps(record) + "\n")

    def sessions(self) -> dict[str, dict[str, object]]:
        try:
            data = json.loads((self.dir / SESSIONS_FILE).read_text(encoding="utf-8"))
        except (FileNotFoundError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}


@dataclass
class _SeenKeys:
    """Keys seen before, and (after lost state) the vault's event ids standing in for them."""

    keys: set[str]
    vault_ids: set[str]

    def __contains__(self, key: object) -> bool:
        return key in self.keys or (
            isinstance(key, str) and bool(self.vault_ids) and id_for_key(key) in self.vault_ids
        )

    def add(self, key: str) -> None:
        self.keys.add(key)


def _append(path: Path, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, text.encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)


def read_checkpoints(memory: MemoryLike) -> list[dict[str, object]]:
    """What each import added, oldest first."""
    return _State(memory.locations.state / STATE_DIR).checkpoints()
