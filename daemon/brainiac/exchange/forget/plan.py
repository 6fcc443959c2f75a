"""A forget's plan: the vault's files read, the selection resolved into rules, each file's and each
snapshot's scrubbed version; made once for the listing, again for the removal.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from brainiac.core.errors import NoteParseError, StaleWriteError, VaultError
from brainiac.exchange.backup.rewriting import read_files
from brainiac.exchange.backup.snapshots import list_snapshots
from brainiac.exchange.forget.kinds import file_kind
from brainiac.exchange.forget.rules import Rules
from brainiac.exchange.forget.selection import (
    FileChange,
    ForgetReport,
    Selection,
    SnapshotChange,
    fold,
)
from brainiac.exchange.forget.tree import (
    Exports,
    Tree,
    placeholder_for,
    scrub_everything,
    scrub_tree,
)
from brainiac.formats import events as ev
from brainiac.formats import ltm
from brainiac.language import facts
from brainiac.lifecycle import journal
from brainiac.lifecycle.jobs import consolidate
from brainiac.store import safe_io
from brainiac.store.names import link_target, normalise
from brainiac.store.vault import (
    ARCHIVE_DIR,
    ATTACHMENTS_DIR,
    EXPORTS_DIR,
    IDENTITY,
    INBOX_DIR,
    LONG_TERM_DIR,
    SHORT_TERM,
    WORKING_MEMORY,
    template_dir,
)

if TYPE_CHECKING:
    from brainiac.search.memory_protocol import MemoryLike


_ID_RE = re.compile(rf"^\^?({ev.ID})$")


_ARCHIVED_NOTES = f"{ARCHIVE_DIR}/notes"


def vault_files(memory: MemoryLike, everything: bool) -> tuple[dict[str, bytes], list[str]]:
    """Every file a forget may change, as bytes, and the ones that could not be read."""
    vault = memory.vault
    files: dict[str, bytes] = {}
    problems: list[str] = []
    wanted = set(vault.markdown_files())
    tops = (EXPORTS_DIR, ATTACHMENTS_DIR, "context", INBOX_DIR)
    for top in (*tops, *(["memory"] if everything else [])):
        base = vault.path(top)
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = [d for d in dirnames if not d.startswith(".")]
            for fname in filenames:
                path = Path(dirpath, fname)
                if fname.startswith(".") or path.is_symlink():
                    continue
                wanted.add(vault.rel(path))
    for rel in sorted(wanted):
        if file_kind(rel) == "other" and not (everything and rel.startswith("memory/")):
            continue
        try:
            files[rel] = safe_io.read_bytes(vault.path(rel))[0]
        except FileNotFoundError:
            continue
        except (OSError, StaleWriteError) as exc:
            problems.append(f"{rel}: could not be read ({exc}); it was not checked")
    return files, problems


def template_files() -> dict[str, bytes]:
    root = template_dir()
    return {rel: (root / rel).read_bytes() for rel in (SHORT_TERM, IDENTITY)}


@dataclass
class Plan:
    selection: Selection
    rules: Rules
    working_memory: bool  # context/working_memory.md exists: it is written again
    tree: Tree
    journal_ids: set[str]
    snapshots: list[tuple[Path, SnapshotChange, dict[str, tuple[str, bytes | None]]]]
    found: set[str]  # ids of the events found, in the vault, the journal or a snapshot
    left: list[str]
    placeholder: bytes

    def report(self, dry_run: bool) -> ForgetReport:
        out = ForgetReport(self.selection.describe(), dry_run)
        for rel, result in sorted(self.tree.results.items()):
            out.files.append(FileChange(rel, result.action, result.removed))
        if self.tree.results and self.working_memory:
            out.files.append(FileChange(WORKING_MEMORY, "regenerate"))
        out.events = sorted(self.found)
        out.journal = len(self.journal_ids)
        out.snapshots = [change for _path, change, _changes in self.snapshots]
        out.left = list(dict.fromkeys(self.left))
        if out.files:
            out.index = "rebuilt from the files"
        return out


def _resolve_note(memory: MemoryLike, spec: str) -> str:
    """A note's vault path from its path (with or without .md, absolute or in the vault) or its
    title, alias or file name."""
    vault = memory.vault
    raw = spec.strip()
    candidates = [raw, raw + ".md", f"{LONG_TERM_DIR}/{raw}", f"{LONG_TERM_DIR}/{raw}.md"]
    candidates += [f"{_ARCHIVED_NOTES}/{raw}", f"{_ARCHIVED_NOTES}/{raw}.md"]
    with contextlib.suppress(ValueError, OSError):
        candidates.insert(0, vault.rel(Path(raw).expanduser().resolve()))
    for rel in candidates:
        path = vault.path(rel)
        if path.is_file() and vault.inside(path) and file_kind(rel) in ("note", "own"):
            return vault.rel(path.resolve()) if not path.is_symlink() else rel
    wanted = normalise(raw.removesuffix(".md"))
    found: list[str] = []
    for rel in vault.markdown_files("memory"):
        if file_kind(rel) != "note":
            continue
        try:
            note = ltm.parse(vault.read(rel).text, rel)
        except (NoteParseError, FileNotFoundError):
            continue
        known = {normalise(n) for n in (note.title, *note.aliases, link_target(rel))}
        if wanted in known:
            found.append(rel)
    if len(found) == 1:
        return found[0]
    if found:
        raise VaultError(
            f"{len(found)} notes answer to {spec!r}: {', '.join(found)}; give the path of the one "
            "to forget"
        )
    raise VaultError(
        f"no note at or named {spec!r} under memory/; `brainiac search {spec!r}` shows where it is"
    )


def _rules(memory: MemoryLike, selection: Selection) -> Rules:
    rules = Rules(everything=selection.everything, identity=selection.identity)
    for spec in selection.notes:
        rel = _resolve_note(memory, spec)
        rules.gone_paths.add(rel)
        rules.gone.add(link_target(rel).casefold())
    for spec in selection.events:
        m = _ID_RE.match(spec.strip())
        if m:
            rules.ids.add(m.group(1))
        else:
            rules.event_needles.append(fold(spec))
    rules.needles = [fold(t) for t in selection.matching]
    rules.projects = frozenset(p.strip() for p in selection.projects)
    rules.fact_keys = {facts.normalise_key(k) for k in selection.facts}
    if selection.entity is not None:
        rel = _resolve_note(memory, selection.entity)
        rules.fact_scope = rel.rsplit("/", 1)[-1].casefold()
        try:
            note = ltm.parse(memory.vault.read(rel).text, rel)
            rules.entity_names = tuple(consolidate.note_names(note))
        except (NoteParseError, FileNotFoundError):
            rules.entity_names = (normalise(link_target(rel)),)
    return rules


def _for_snapshot(rules: Rules) -> Rules:
    """A note may have moved between long_term/ and archive/notes/ since a snapshot was made."""
    out = rules.copy()
    for rel in rules.gone_paths:
        if rel.startswith((LONG_TERM_DIR + "/", _ARCHIVED_NOTES + "/")):
            name = rel.rsplit("/", 1)[-1]
            out.gone_paths |= {f"{LONG_TERM_DIR}/{name}", f"{_ARCHIVED_NOTES}/{name}"}
    return out


def _snapshot_wanted(everything: bool) -> Callable[[str], bool]:
    def wanted(rel: str) -> bool:
        if everything:
            return rel.startswith(("memory/", "context/", INBOX_DIR + "/")) or rel == IDENTITY
        return file_kind(rel) not in ("other", "index", "working", "context")

    return wanted


def plan_snapshot(
    path: Path, rules: Rules, plan_exports: Exports, placeholder: bytes, found: set[str]
) -> tuple[SnapshotChange, dict[str, tuple[str, bytes | None]]] | None:
    try:
        members = read_files(path, _snapshot_wanted(rules.everything))
    except (VaultError, OSError) as exc:
        reason = f"it cannot be read, so it cannot be rewritten: {exc}"
        return SnapshotChange(str(path), "delete", reason=reason), {}
    if rules.everything:
        tree = scrub_everything(members, rules.identity, placeholder, template_files())
    else:
        tree = scrub_tree(members, _for_snapshot(rules), {}, plan_exports, placeholder)
    found |= tree.taken
    if not tree.results:
        return None
    change = SnapshotChange(str(path), "rewrite")
    changes: dict[str, tuple[str, bytes | None]] = {}
    for rel, result in sorted(tree.results.items()):
        changes[rel] = (result.old_sha, result.new)
        (change.dropped if result.new is None else change.changed).append(rel)
        change.removed += sum(1 for r in result.removed if r.line)
    return change, changes


def make_plan(memory: MemoryLike, selection: Selection, now: dt.datetime) -> Plan:
    rules = _rules(memory, selection)
    files, problems = vault_files(memory, selection.everything)
    placeholder = placeholder_for(now)
    exports = Exports()
    journalled = journal.read(memory.locations.state)
    if selection.everything:
        tree = scrub_everything(files, selection.identity, placeholder, template_files())
        journal_ids = set(journalled)
        found = journal_ids | journal.vault_event_ids(memory)
    else:
        tree = scrub_tree(files, rules, journalled, exports, placeholder)
        journal_ids = tree.journal_ids
        found = set(tree.taken)
    snapshots = []
    for snap in list_snapshots(memory):
        planned = plan_snapshot(snap.path, rules, exports, placeholder, found)
        if planned is not None:
            snapshots.append((snap.path, *planned))
    left = [*problems, *tree.left]
    for name in (
        "promotion.intent.json",
        "imports/intent.json",
    ):
        if (memory.locations.state / name).exists():
            left.append(f"an interrupted run's plan ({name}) is finished before anything goes")
    return Plan(
        selection,
        rules,
        WORKING_MEMORY in files,
        tree,
        journal_ids,
        snapshots,
        found,
        left,
        placeholder,
    )
