"""The conflicts job: merge the sync-conflict copies of memory files back into them.

A sync engine (Syncthing, Dropbox, Obsidian Sync) leaves a conflict copy when two devices changed
one file before either saw the other's change (docs/multi-device.md). For the short-term document,
a note or an archive file, the copy is merged into its original (formats/sync_merge.py: events by
id, the person's text kept) and then deleted, since everything it held is in the original. When a
person changed their own text differently on both sides, the copy stays beside the original with
its events merged, and `status` lists it until the person has compared the two and deleted it.
Copies of other files (the core identity) are only reported.

Only the device that runs the memory jobs runs this one (`[jobs] device`): the other devices see
the copy arrive and leave it to that device, so two devices never write two merges of one file.
Its merge also needs to know which events promotion has placed in notes, which that device is the
first to know.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from brainiac.core.errors import BrainiacError
from brainiac.formats import sync_merge
from brainiac.lifecycle import journal
from brainiac.lifecycle.jobs import JobReport
from brainiac.lifecycle.jobs.edits import Outcome, update
from brainiac.store import safe_io
from brainiac.store.vault import is_conflict_copy, kind_of

if TYPE_CHECKING:
    from brainiac.search.memory_protocol import MemoryLike


def copies(memory: MemoryLike) -> list[str]:
    """The sync-conflict copies in the vault, oldest name first."""
    return sorted(rel for rel in memory.vault.markdown_files() if is_conflict_copy(rel))


def merge_conflicts(memory: MemoryLike, now: dt.datetime, dry_run: bool) -> JobReport:
    found = copies(memory)
    if not found:
        return JobReport("conflicts", True, "no sync-conflict copy in the vault", dry_run=dry_run)
    where = journal.event_locations(memory)
    outcome = Outcome()
    merged: list[str] = []
    kept: list[str] = []
    added_total = 0
    again = False
    for rel in found:
        original = sync_merge.original_of(rel)
        if original is None or kind_of(original) is None:
            kept.append(f"{rel}: a copy of no memory file; compare it by hand and delete it")
            continue
        result = _merge_one(memory, rel, original, where, outcome, dry_run)
        if isinstance(result, _Left):
            kept.append(result.why)
            again = again or result.later
            continue
        added, keep_copy = result
        added_total += added
        if keep_copy:
            kept.append(
                f"{rel}: its events are in {original}, but its own text differs from the "
                f"note's on both sides; compare the two, keep what you want in {original}, "
                "and delete the copy"
            )
        else:
            merged.append(rel)
    verb = "would merge" if dry_run else "merged"
    parts = [f"{verb} {len(merged)} copy(ies), {added_total} event(s) brought in"]
    parts += kept
    changed = tuple(outcome.changed) + (() if dry_run else tuple(merged))
    return JobReport("conflicts", True, "; ".join(parts), changed, dry_run, again and not dry_run)


@dataclass(frozen=True)
class _Left:
    """A copy not merged by this run: why, and whether a run soon after may merge it (its
    original busy or still arriving), rather than a person having to look."""

    why: str
    later: bool = False


def _merge_one(
    memory: MemoryLike,
    rel: str,
    original: str,
    where: dict[str, set[str]],
    outcome: Outcome,
    dry_run: bool,
) -> tuple[int, bool] | _Left:
    """Merge one copy: (events brought in, whether the copy stays), or why nothing was done."""
    path = memory.vault.path(rel)
    try:
        data, _ = safe_io.read_bytes(path)
        copy_text = data.decode("utf-8")
    except FileNotFoundError:
        return _Left(f"{rel}: gone before it could be merged")
    except (OSError, UnicodeDecodeError) as exc:
        return _Left(f"{rel}: cannot be read ({exc}); compare it by hand and delete it")
    # Events held by any other memory file: placed there by a job, not to be brought back here.
    elsewhere = {i for i, files in where.items() if files - {original}}
    result: list[sync_merge.Merged] = []

    def transform(text: str | None) -> str | None:
        result.clear()
        if text is None:
            return None
        merged = sync_merge.merge(text, copy_text, original, elsewhere)
        result.append(merged)
        return merged.text

    if not memory.vault.path(original).exists():
        return _Left(f"{rel}: {original} is missing (still arriving?); merged on a later run", True)
    skipped = len(outcome.skipped)
    try:
        update(memory.vault, original, transform, outcome, dry_run)
    except BrainiacError as exc:
        return _Left(f"{rel}: not merged ({exc}); compare it by hand and delete it")
    if len(outcome.skipped) > skipped:
        # The original kept changing (a sync tool delivering it) or no longer parses: the merge
        # was not written, so the copy, which may hold the only line of some events, stays.
        return _Left(f"{rel}: {outcome.skipped[-1]}; merged on a later run", True)
    if not result:
        return _Left(f"{rel}: {original} could not be read; merged on a later run", True)
    merged = result[0]
    if not dry_run:
        journal.record(memory.locations.state, merged.added)
        if not merged.keep_copy:
            _delete_if_unchanged(path, data)
    return len(merged.added), merged.keep_copy


def _delete_if_unchanged(path: Path, data: bytes) -> None:
    """Delete the merged copy, unless the sync tool replaced it meanwhile (then the next run
    merges the new one)."""
    with contextlib.suppress(OSError):
        now, _ = safe_io.read_bytes(path)
        if now == data:
            os.unlink(path)
