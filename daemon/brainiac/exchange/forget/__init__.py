"""`brainiac forget`: the one operation that deletes (docs/forget.md).

A `Selection` says what goes: notes (the file and the events in it), facts (the fact lines with
their history, and the events that state them, or the jobs would learn them again), events (by
id, or every event whose text contains a text), every line that contains a text, or everything.
What was derived from it goes too: an event's ledger lines, the facts it set, the goals and tasks
reflection took from it, the short-term summary and working memory (rewritten by the next
reflection), a note left with nothing but generated lines, generated links to a note that went,
a kept chat export that holds it (replaced by a placeholder, so a re-import keeps no new copy),
the event journal (so promotion does not put it back), the job log's summaries, the search index
(rebuilt) and every backup snapshot (rewritten and verified, or deleted when that is impossible).
The import records keep the forgotten messages' keys, so importing the same export again does not
bring them back.

One set of pure rules (`Rules`, `scrub`) lists what would go and then removes it. Every vault
write is a compare-and-swap that re-applies the removal to a version a person saved meanwhile, so
their edit is kept; a file to be deleted whole that changed since the listing is left alone and
reported. It runs under the job lock, after finishing an interrupted promotion or import (their
plans hold event text). Beside a running daemon, which owns the index, the listing is made here
and the removal is asked of the daemon (daemon_requests.py), which carries it out the same way.
See docs/forget.md.

The package: `selection` (what is asked and the report), `rules`, `scrub` (one file), `tree` (a
vault or snapshot), `plan`; `forget` here carries a plan out.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from brainiac.core import clock
from brainiac.core.errors import StaleWriteError, VaultError
from brainiac.exchange.backup.rewriting import rewrite
from brainiac.exchange.forget.plan import (
    Plan,
    make_plan,
    plan_snapshot,
    template_files,
    vault_files,
)
from brainiac.exchange.forget.rules import Rules
from brainiac.exchange.forget.scrub import Scrubbed, scrub
from brainiac.exchange.forget.selection import FileChange, ForgetReport, Selection, SnapshotChange
from brainiac.exchange.forget.tree import Exports, Result, scrub_everything, scrub_tree
from brainiac.lifecycle import jobs as jobs_mod
from brainiac.lifecycle import journal
from brainiac.lifecycle.jobs import reflection
from brainiac.lifecycle.jobs.edits import Outcome, update
from brainiac.store import daemon_requests, safe_io
from brainiac.store import working_memory as wm
from brainiac.store.lock import holder_of
from brainiac.store.names import link_target
from brainiac.store.vault import INDEXES_DIR, WORKING_MEMORY

if TYPE_CHECKING:
    from brainiac.search.memory_protocol import MemoryLike


_LOCK_WAIT_S = 60.0


_DAEMON_WAIT_S = 600.0  # a forget asked of the daemon: it rewrites every backup snapshot


def forget(
    memory: MemoryLike,
    selection: Selection,
    now: dt.datetime | None = None,
    dry_run: bool = False,
    confirm: Callable[[ForgetReport], bool] | None = None,
) -> ForgetReport:
    """List what `selection` takes and, unless `dry_run` or `confirm(listing)` says no, remove
    it for good. Returns the listing, or what was removed (`done`)."""
    selection.check()
    when = clock.local(now) if now is not None else clock.now()
    if dry_run:
        return make_plan(memory, selection, when).report(dry_run=True)
    holder = holder_of(memory.locations.runtime)
    by_daemon = holder is not None and holder.pid == os.getpid()  # asked of it (service.py)
    if (
        holder is not None
        and not by_daemon
        and not selection.everything
        and daemon_requests.daemon_takes_requests(memory.locations.state, holder.pid)
    ):
        return _ask_daemon(memory, selection, when, holder.pid, confirm)
    if (holder is not None and not by_daemon) or not memory.index_writes:
        raise VaultError(
            f"the daemon (pid {holder.pid if holder else '?'}) is running and owns the index; "
            "stop it (systemctl --user stop brainiac), forget, then start it again"
        )
    with jobs_mod.job_lock(memory.locations.state, wait_s=_LOCK_WAIT_S) as held:
        if not held:
            raise VaultError(
                f"{memory.vault.root}: a memory job has held the job lock for over "
                f"{_LOCK_WAIT_S:g} s; try again in a minute"
            )
        _finish_interrupted(memory, when)
        plan = make_plan(memory, selection, when)
        listing = plan.report(dry_run=False)
        if not _go_ahead(listing, confirm):
            return listing
        return _carry_out(memory, plan, when, listing.confirmed)


def _go_ahead(listing: ForgetReport, confirm: Callable[[ForgetReport], bool] | None) -> bool:
    """Whether to remove what `listing` lists: something does match, and `confirm` (if given)
    says yes; its answer is recorded on the listing."""
    if listing.empty:
        return False
    if confirm is None:
        return True
    listing.confirmed = bool(confirm(listing))
    return listing.confirmed


def _ask_daemon(
    memory: MemoryLike,
    selection: Selection,
    now: dt.datetime,
    pid: int,
    confirm: Callable[[ForgetReport], bool] | None,
) -> ForgetReport:
    """Beside a running daemon, which owns the index: list here, then ask the daemon to remove
    (daemon_requests.py). It lists again under the job lock and removes what matches then."""
    listing = make_plan(memory, selection, now).report(dry_run=False)
    if not _go_ahead(listing, confirm):
        return listing
    result = daemon_requests.ask(
        memory.locations.state, pid, "forget", selection.as_args(), _DAEMON_WAIT_S
    )
    report = ForgetReport.from_json(result)
    report.confirmed = listing.confirmed
    return report


def _finish_interrupted(memory: MemoryLike, now: dt.datetime) -> None:
    """A plan a crash left behind holds event text; carried out first, it is then forgotten."""
    from brainiac.exchange import importer
    from brainiac.lifecycle.jobs.moving import finish_interrupted

    finish_interrupted(memory, now)
    importer.finish_interrupted(memory)


def _carry_out(
    memory: MemoryLike, plan: Plan, now: dt.datetime, confirmed: bool | None
) -> ForgetReport:
    out = ForgetReport(plan.selection.describe(), False, done=True, confirmed=confirmed)
    out.left = list(dict.fromkeys(plan.left))
    rules = plan.rules
    # The journal first: were the run cut short after the vault was changed, promotion would
    # otherwise put the events back. (Cut short here, running the same command again finishes.)
    ids = set(plan.journal_ids)
    if not plan.selection.everything:
        ids |= rules.ids
    out.journal = journal.forget(memory.locations.state, ids)
    changed: list[str] = []
    for rel, result in sorted(plan.tree.results.items()):
        change = _apply(memory, rel, result, plan, out.skipped)
        if change is not None:
            out.files.append(change)
            changed.append(rel)
    out.events = sorted(plan.found)
    if not plan.selection.everything:
        out.journal += journal.forget(memory.locations.state, rules.ids - ids)  # found meanwhile
    if changed:
        # The index first: the working memory is assembled from it.
        report = memory.reindex()
        out.index = f"rebuilt from the files ({report.docs_written} document(s))"
        _regenerate(memory, plan, now, out)
    out.state = _scrub_state(memory, rules, plan.selection.everything)
    out.snapshots = _rewrite_snapshots(plan, now, memory)
    rest = _still_there(memory, plan)
    if rest:
        out.skipped.append(f"still there after the run: {', '.join(rest)}; run it again")
    return out


def _still_there(memory: MemoryLike, plan: Plan) -> list[str]:
    """The vault read again: what the rules would still take (only a concurrent save can leave
    something; it is reported, never silently kept)."""
    files, _problems = vault_files(memory, plan.selection.everything)
    if plan.selection.everything:
        tree = scrub_everything(files, plan.selection.identity, plan.placeholder, template_files())
    else:
        journalled = journal.read(memory.locations.state)
        tree = scrub_tree(files, plan.rules.copy(), journalled, Exports(), plan.placeholder)
        if tree.journal_ids:
            return [*sorted(tree.results), "the event journal"]
    return sorted(tree.results)


def _apply(
    memory: MemoryLike, rel: str, result: Result, plan: Plan, skipped: list[str]
) -> FileChange | None:
    """One file's change, by compare-and-swap: an edit is re-applied to a version saved since
    the listing; a file that goes whole (or is replaced) must still be what was listed."""
    vault = memory.vault
    if result.action == "edit":
        final: list[Scrubbed] = []

        def transform(text: str | None) -> str | None:
            if text is None:
                return None
            done = scrub(rel, text, plan.rules)
            final[:] = [done]
            if done.text is None:
                return None  # it would now go whole: only what was listed goes (below)
            return done.text

        outcome = Outcome()
        update(vault, rel, transform, outcome, dry_run=False)
        skipped += outcome.skipped
        if final and final[0].text is None:
            skipped.append(f"{rel}: changed since it was listed; left as it is, run it again")
            return None
        if not outcome.changed:
            return None
        plan.rules.absorb(final[0].events, [])
        return FileChange(rel, "edit", final[0].removed)
    path = vault.path(rel)
    try:
        data, fingerprint = safe_io.read_bytes(path)
    except FileNotFoundError:
        return None
    if safe_io.sha256_hex(data) != result.old_sha:
        skipped.append(f"{rel}: changed since it was listed; left as it is, run it again")
        return None
    try:
        if result.new is None:
            _delete_if_unchanged(path, fingerprint)
        else:
            safe_io.write_bytes(path, result.new, fingerprint)
    except StaleWriteError:
        skipped.append(f"{rel}: saved by someone else just now; left as it is, run it again")
        return None
    return FileChange(rel, result.action, result.removed)


def _delete_if_unchanged(path: Path, expected: safe_io.Fingerprint) -> None:
    """Delete `path` if it is still what `expected` describes (StaleWriteError otherwise): moved
    aside first, checked, then unlinked; a save that landed in between is moved back."""
    aside = path.with_name(f".{path.name}.forget{safe_io.TMP_SUFFIX}")
    os.rename(path, aside)
    try:
        data, fp = safe_io.read_bytes(aside)
    except FileNotFoundError:
        return
    if (fp.ino, safe_io.sha256_hex(data)) != (expected.ino, expected.sha256):
        if not safe_io.rename_noreplace(aside, path):
            raise StaleWriteError(f"{path}: saved meanwhile; the saved copy is kept as {aside}")
        raise StaleWriteError(f"{path}: saved by someone else meanwhile; kept theirs")
    aside.unlink()


def _regenerate(memory: MemoryLike, plan: Plan, now: dt.datetime, out: ForgetReport) -> None:
    """The index notes and the working memory are made from the notes: made again."""
    vault = memory.vault
    index_dir = vault.path(INDEXES_DIR)
    if index_dir.is_dir() and any(index_dir.glob("*.md")):
        from brainiac.lifecycle.jobs.organization import write_indexes

        memory.names.refresh(vault, memory.config.private_folders)
        outcome = Outcome()
        write_indexes(memory, now, outcome, False)
        out.files += [FileChange(rel, "regenerate") for rel in outcome.changed]
    if not vault.path(WORKING_MEMORY).exists():
        return
    text = memory.context(None, now=now).text
    written = wm.write(vault, memory.locations.state, text, now)
    out.files.append(FileChange(WORKING_MEMORY, "regenerate"))
    if written.kept_aside:  # a hand edit, moved aside: it is scrubbed like any edited copy
        aside = written.kept_aside
        current = vault.read(aside)
        done = scrub(aside, current.text, plan.rules)
        if done.text is not None and done.removed:
            vault.write(aside, done.text, current.fingerprint)
            out.files.append(FileChange(aside, "edit", done.removed))


def _scrub_state(memory: MemoryLike, rules: Rules, everything: bool) -> list[str]:
    """brainiac's own records outside the vault that quote memory: the job log's summaries
    ("fact passport number: …") and diffs, and which notes were used (paths of notes that
    went)."""
    state = memory.locations.state
    said: list[str] = []

    def quotes(text: str) -> bool:
        return everything or rules.any_text(text)

    log_path = state / jobs_mod.LOG_FILE
    with contextlib.suppress(FileNotFoundError):
        lines = log_path.read_text(encoding="utf-8").splitlines(keepends=True)
        kept = [
            line for line in lines if not quotes(line) and not quotes(jobs_mod.entry_text(line))
        ]
        if len(kept) != len(lines):
            safe_io.replace_file(log_path, "".join(kept).encode("utf-8"))
            said.append(f"{jobs_mod.LOG_FILE}: {len(lines) - len(kept)} run(s) removed")
    records = jobs_mod.load_records(state)
    touched = [name for name, rec in records.items() if quotes(rec.last_summary)]
    for name in touched:
        records[name].last_summary = "(removed by brainiac forget)"
    if touched:
        jobs_mod.save_records(state, records)
        said.append(f"jobs.json: the last result of {', '.join(touched)} removed")
    if everything:  # goals are taken from events after this time: a new start takes all
        with contextlib.suppress(FileNotFoundError):
            (state / "reflection.json").unlink()
            said.append("reflection.json: removed")
    else:
        dropped = reflection.forget_fact_projects(state, rules.ids, rules.projects)
        if dropped:
            said.append(f"reflection.json: the project of {dropped} fact(s) removed")
    gone_paths = {link_target(p).casefold() for p in rules.gone_paths} | rules.gone
    for name in ("access.jsonl", "last_context.json"):
        path = state / name
        with contextlib.suppress(FileNotFoundError):
            lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
            kept = [
                line
                for line in lines
                if not everything and not any(g and g in line.casefold() for g in gone_paths)
            ]
            if len(kept) != len(lines):
                if kept:
                    safe_io.replace_file(path, "".join(kept).encode("utf-8"))
                else:
                    path.unlink()
                said.append(f"{name}: {len(lines) - len(kept)} line(s) removed")
    return said


def _rewrite_snapshots(plan: Plan, now: dt.datetime, memory: MemoryLike) -> list[SnapshotChange]:
    done: list[SnapshotChange] = []
    for path, change, changes in plan.snapshots:
        if change.action == "rewrite":
            try:
                rewrite(memory, path, changes, now)
                again = plan_snapshot(path, plan.rules, Exports(), plan.placeholder, set())
                if again is not None:
                    raise VaultError("it still held what was forgotten after the rewrite")
                done.append(dataclasses.replace(change, action="rewritten"))
                continue
            except (VaultError, OSError) as exc:
                change = dataclasses.replace(
                    change, reason=f"could not be rewritten ({exc}); deleted instead"
                )
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        done.append(dataclasses.replace(change, action="deleted"))
    return done
