"""The commands that move memory into or out of the vault: `import` (chat exports become events),
`forget` (the one command that deletes, docs/forget.md), `backup` and `restore` (verified
snapshots, docs/backup.md).

Not the work itself (importer.py and chatlogs/, forget/, backup/), which runs in the Memory;
these commands parse the options and print the reports.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Any

import click

from brainiac.core import clock
from brainiac.core.errors import BrainiacError
from brainiac.interfaces.cli.conventions import EXIT_CONFLICTS, EXIT_ERROR, parse_time, print_json
from brainiac.interfaces.cli.opening import open_memory

# The formats `import` reads (chatlogs.FORMATS; a test keeps the two equal). Spelled out here so
# that every command does not load the format parsers at start.
IMPORT_FORMATS = ("brainiac", "claude-code", "claude-ai", "chatgpt", "claude-export", "markdown")


@click.command("import")
@click.argument("paths", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(IMPORT_FORMATS),
    default=None,
    help="The export's format (default: recognised from the content).",
)
@click.option("--now", "now", default=None, metavar="ISO-8601", help="The import's time.")
@click.option(
    "--project",
    default=None,
    metavar="NAME",
    help="The project the new messages belong to (default: none, global).",
)
@click.option("--dry-run", is_flag=True, help="Count what would be imported; change nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the per-file reports as JSON.")
@click.pass_context
def import_(
    ctx: click.Context,
    paths: tuple[Path, ...],
    fmt: str | None,
    now: str | None,
    project: str | None,
    dry_run: bool,
    as_json: bool,
) -> None:
    """Import chat exports: each message becomes an event, once, however often you run it.

    Formats: brainiac's JSONL of events, Claude Code session transcripts (JSONL), the Claude.ai
    and ChatGPT data exports (conversations.json), Claude Code `/export` text, and a Markdown chat
    log (docs/import.md). Prints new, duplicate and skipped messages per file. A file that cannot
    be read is rejected whole (exit status 2) and nothing of it is imported.
    """
    memory = open_memory(ctx)
    reports = memory.import_files(
        paths, fmt, now=parse_time(now, "--now"), dry_run=dry_run, project=project
    )
    if as_json:
        print_json([{**dataclasses.asdict(r), "dry_run": dry_run} for r in reports])
    else:
        verb = "would import" if dry_run else "imported"
        for r in reports:
            if r.ok:
                attached = (
                    f" ({r.attached} too large for an event: cut, the whole text in "
                    "memory/attachments/)"
                    if r.attached
                    else ""
                )
                click.echo(
                    f"{r.path} ({r.format}): {verb} {r.new} new, {r.duplicate} duplicate, "
                    f"{r.skipped} skipped message(s) from {r.sessions} conversation(s)" + attached
                )
            else:
                click.echo(f"brainiac: rejected {r.error}", err=True)
    if not all(r.ok for r in reports):
        ctx.exit(EXIT_ERROR)


@click.command()
@click.option(
    "--note",
    "notes",
    multiple=True,
    metavar="PATH_OR_TITLE",
    help="A note: its file and the events in it (a path, title or alias).",
)
@click.option(
    "--fact",
    "facts",
    multiple=True,
    metavar="KEY",
    help="A fact: its lines with their history, and the events that state it.",
)
@click.option("--entity", default=None, metavar="NOTE", help="With --fact: only in this note.")
@click.option(
    "--event",
    "events",
    multiple=True,
    metavar="ID_OR_TEXT",
    help="An event by its id (e-3f2a1c9b0d), or every event whose text contains the text.",
)
@click.option(
    "--matching",
    multiple=True,
    metavar="TEXT",
    help="Every event, fact, line and kept chat export that contains TEXT (case and spacing "
    "ignored); a note whose title, aliases, tags or file name contain it goes whole.",
)
@click.option(
    "--project",
    "projects",
    multiple=True,
    metavar="NAME",
    help="Every event of this project, with what was derived from it (docs/projects.md).",
)
@click.option(
    "--everything",
    is_flag=True,
    help="All of memory/, context/ and inbox/: the memory starts again from the template.",
)
@click.option(
    "--identity", is_flag=True, help="With --everything: reset system/core_identity.md too."
)
@click.option("--dry-run", is_flag=True, help="List what would be removed; change nothing.")
@click.option("--yes", is_flag=True, help="Do not ask (needed when not on a terminal).")
@click.option("--json", "as_json", is_flag=True, help="Print what was removed as JSON.")
@click.pass_context
def forget(
    ctx: click.Context,
    notes: tuple[str, ...],
    facts: tuple[str, ...],
    entity: str | None,
    events: tuple[str, ...],
    matching: tuple[str, ...],
    projects: tuple[str, ...],
    everything: bool,
    identity: bool,
    dry_run: bool,
    yes: bool,
    as_json: bool,
) -> None:
    """Remove memories for good: the one command that deletes (docs/forget.md).

    What matches goes from memory/ (short-term memory, long-term notes, the archive, kept chat
    exports), context/, the search index, the event journal and every backup snapshot, with what
    was derived from it (facts, goals, summaries, links), and the command says exactly what it
    removed. It lists what will go and asks first; without a terminal, give --yes. A forgotten
    imported message does not come back when the export is imported again. While the daemon
    runs, it is asked to do the removal (it owns the index). Exit status: 0
    removed, 1 nothing matched or not confirmed, 2 an error or something left (run it again).
    """
    from brainiac.exchange.forget.selection import Selection

    selection = Selection(
        notes, facts, entity, events, matching, everything, identity, projects=projects
    )
    try:
        selection.check()
    except BrainiacError as exc:
        raise click.UsageError(str(exc)) from None
    if not dry_run and not yes and not sys.stdin.isatty():
        click.echo(
            "brainiac: forget deletes for good and asks first; run it on a terminal, or add "
            "--yes (see what would go with --dry-run)",
            err=True,
        )
        ctx.exit(EXIT_ERROR)
    memory = open_memory(ctx)

    def confirm(listing: Any) -> bool:
        _print_forget(listing, err=as_json)
        return click.confirm("Forget all of this for good?", default=False, err=True)

    report = memory.forget(selection, dry_run=dry_run, confirm=None if yes else confirm)
    if as_json:
        print_json(report.as_json())
    elif report.empty or report.done or dry_run:
        _print_forget(report, err=False)
    if report.empty:
        also = "; the matches above are left as they are" if report.left else ""
        click.echo(
            f"brainiac: nothing forget removes matches {report.selection}{also}; nothing was "
            "removed",
            err=True,
        )
        ctx.exit(EXIT_CONFLICTS)
    if dry_run:
        click.echo("dry run: nothing was removed", err=True)
    elif not report.done:
        click.echo("brainiac: not confirmed; nothing was removed", err=True)
        ctx.exit(EXIT_CONFLICTS)
    elif report.skipped:
        ctx.exit(EXIT_ERROR)


def _print_forget(report: Any, err: bool) -> None:
    """The listing (before) or the account (after) of a forget, one line per thing."""

    def say(text: str) -> None:
        click.echo(text, err=err)

    if report.empty:
        for item in report.left:
            say(f"not changed: {item}")
        return
    say(("removed" if report.done else "would remove") + f" ({report.selection}):")
    for change in report.files:
        whole = [r for r in change.removed if not r.line]
        lines = [r for r in change.removed if r.line]
        if change.action == "regenerate":
            say(f"{change.path}: regenerated from what is left")
        elif whole:
            say(f"{change.path}: {'; '.join(r.text for r in whole)}")
        else:
            say(f"{change.path}:")
        for r in lines:
            say(f"  line {r.line:<5} {r.what}: {r.text}")
    if report.journal:
        say(f"event journal: {report.journal} event(s)")
    if report.index:
        say(f"search index: {report.index}")
    for s in report.snapshots:
        verb = {
            "rewrite": "to be rewritten and verified",
            "rewritten": "rewritten and verified",
            "delete": "to be deleted",
            "deleted": "deleted",
        }[s.action]
        detail = f"{len(s.changed)} file(s) changed, {len(s.dropped)} left out"
        say(f"backup {s.path}: {verb} ({s.reason or detail})")
    for item in report.state:
        say(f"brainiac's records: {item}")
    for item in report.left:
        say(f"not changed: {item}")
    for item in report.skipped:
        click.echo(f"brainiac: could not remove: {item}", err=True)
    c = report.counts()
    parts = [f"{c['events']} event(s)"] + [
        f"{c[key]} {label}"
        for key, label in (
            ("facts", "fact line(s)"),
            ("lines", "other line(s)"),
            ("notes", "note(s)"),
            ("files", "other file(s)"),
            ("snapshots", "backup snapshot(s)"),
        )
        if c[key]
    ]
    exports = f" ({c['exports']} chat export(s) replaced by a placeholder)" if c["exports"] else ""
    say(f"{'removed' if report.done else 'would remove'}: {', '.join(parts)}{exports}")


@click.command()
@click.option(
    "--list", "list_", is_flag=True, help="List this vault's snapshots, oldest first; make none."
)
@click.option("--json", "as_json", is_flag=True, help="Print the snapshot (or the list) as JSON.")
@click.pass_context
def backup(ctx: click.Context, list_: bool, as_json: bool) -> None:
    """Write a verified snapshot of the vault now and print its path (docs/backup.md).

    Every file of the vault except derived ones (context/, memory/indexes/, dot-folders other
    than .brainiac/) goes into brainiac-<vault>-<time>.tar.gz in [backup] folder (default: the
    vault's state directory); it is read back and checked before the oldest beyond [backup] keep
    are deleted. The daemon's `backup` job does the same every [jobs] backup minutes.
    """
    from brainiac.exchange.backup.creation import create_by_hand
    from brainiac.exchange.backup.snapshots import backups_folder, human_size, list_snapshots

    memory = open_memory(ctx)
    if list_:
        snapshots = list_snapshots(memory)
        if as_json:
            print_json([s.as_json() for s in snapshots])
            return
        if not snapshots:
            click.echo(
                f"no snapshots yet in {backups_folder(memory)}; make one with `brainiac backup`",
                err=True,
            )
        for s in snapshots:
            click.echo(f"{s.path}  {s.created:%Y-%m-%d %H:%M:%S}  {human_size(s.size)}")
        return
    snap = create_by_hand(memory, clock.now())
    if as_json:
        print_json(snap.as_json())
        return
    for reason in snap.skipped:
        click.echo(f"brainiac: warning: not in the snapshot: {reason}", err=True)
    click.echo(str(snap.path))
    click.echo(
        f"{snap.files} file(s), {human_size(snap.size)}, verified; "
        f"{len(snap.removed)} old snapshot(s) removed",
        err=True,
    )


@click.command()
@click.argument("snapshot", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("target", type=click.Path(file_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the restored paths as JSON.")
def restore(snapshot: Path, target: Path, as_json: bool) -> None:
    """Restore SNAPSHOT (a .tar.gz from `brainiac backup`) into TARGET, an empty or new folder.

    Every file is checked against the snapshot's manifest (SHA-256, size, mode) before anything
    is written; a damaged snapshot is refused whole. Modes and modification times come back.
    Prints the restored paths. No vault is needed: this works on a fresh machine.
    """
    from brainiac.exchange.backup import restoring

    restored = restoring.restore(snapshot, target)
    if as_json:
        print_json({"snapshot": str(snapshot), "target": str(target), "restored": restored})
        return
    for rel in restored:
        click.echo(rel)
    click.echo(
        f"{target}: {len(restored)} file(s) restored from {snapshot.name}, each checked against "
        f"its manifest; use it with `brainiac --vault {target} status`",
        err=True,
    )
