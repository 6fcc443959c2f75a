"""The commands about the daemon: `status` (is it running, what is indexed, what is wrong), `run`
(the daemon in the foreground) and `service` (its systemd user unit).

Not the daemon itself (service.py), nor its scheduled jobs (job_commands.py).
"""

from __future__ import annotations

import datetime as dt
import logging
import shlex
import sys
import time
from typing import TYPE_CHECKING, Any

import click

from brainiac.core.lazy import lazy_module
from brainiac.interfaces.cli.conventions import print_json, resolve_vault, vault_flag
from brainiac.interfaces.cli.group import Group
from brainiac.interfaces.cli.opening import open_memory
from brainiac.store.lock import holder_of
from brainiac.store.vault import SHORT_TERM, WORKING_MEMORY, Vault

if TYPE_CHECKING:
    from brainiac.formats import stm
    from brainiac.lifecycle import jobs as jobs_mod
    from brainiac.runtime import systemd
    from brainiac.store import config
    from brainiac.store import projects as projects_mod
else:
    jobs_mod = lazy_module("brainiac.lifecycle.jobs")
    config = lazy_module("brainiac.store.config")
    projects_mod = lazy_module("brainiac.store.projects")
    stm = lazy_module("brainiac.formats.stm")
    systemd = lazy_module("brainiac.runtime.systemd")


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
@click.pass_context
def status(ctx: click.Context, as_json: bool) -> None:
    """Show whether the daemon runs, what is indexed, conflicts, and notes skipped (and why)."""
    from brainiac.store.daemon_requests import read_status

    memory = open_memory(ctx)
    holder = holder_of(memory.locations.runtime)
    daemon = read_status(memory.locations.state) if holder else None
    if holder is None:
        memory.refresh(force=True)  # no daemon: bring the index up to date ourselves
    manifest = memory.indexer.manifest
    skipped = manifest.problems
    problems = dict(skipped)
    log_problem = stm.log_problem(memory.short_term())
    if log_problem is not None:
        problems.setdefault(SHORT_TERM, log_problem)
    info: dict[str, Any] = {
        "vault": str(memory.vault.root),
        "daemon": None
        if holder is None
        else {
            "pid": holder.pid,
            "uptime_s": round(time.time() - holder.started, 1),
            "last_reconcile": _when(daemon.get("last_reconcile")) if daemon else None,
            "pending_changes": daemon.get("pending_changes") if daemon else None,
            "watcher_alive": daemon.get("watcher_alive") if daemon else None,
            "watcher_polling": daemon.get("watcher_polling") if daemon else None,
            "troubles": daemon.get("troubles") if daemon else None,
            "meaning": daemon.get("meaning") if daemon else None,
        },
        "index": str(memory.locations.index_dir),
        "files_indexed": manifest.count() - len(skipped),
        "documents": memory.indexer.index.doc_count(),
        "short_term_events": len(memory.short_term().events),
        # documents per project (docs/projects.md); "(global)" counts what every project sees
        "projects": projects_mod.counts(memory.indexer.index.project_counts()),
        # Which device runs the memory jobs on a vault synced between devices ([jobs] device)
        "jobs_device": {
            "this_device": config.this_device(),
            "named": memory.config.jobs_device or None,
            "runs_here": config.runs_jobs(memory.config),
        },
        "jobs": {
            name: {"last_run": rec.last_run, "ok": rec.last_ok, "result": rec.last_summary}
            for name, rec in jobs_mod.load_records(memory.locations.state).items()
        },
        "conflicts": sorted(
            set(memory.indexer.conflicts)
            | set(_str_list(daemon.get("conflicts") if daemon else None))
        ),
        "problems": problems,
    }
    if as_json:
        print_json(info)
        return
    d = info["daemon"]
    click.echo(
        "daemon: "
        + (
            "not running"
            if d is None
            else f"running, pid {d['pid']}, up {_duration(d['uptime_s'])}, last reconcile "
            f"{d['last_reconcile'] or '-'}, {d['pending_changes'] or 0} change(s) pending"
        )
    )
    troubles = d.get("troubles") if d else None
    for message in troubles.values() if isinstance(troubles, dict) else ():
        click.echo(f"warning: {message}")  # what the daemon cannot write now (disk full, ...)
    if d and d.get("watcher_polling"):
        click.echo("warning: inotify's limits are reached; the daemon polls the vault (see log)")
    meaning = d.get("meaning") if d else None
    if isinstance(meaning, dict):
        events, pending = meaning.get("events", 0), meaning.get("pending", 0)
        click.echo(
            f"recall by meaning: {events - pending} of {events} events embedded"
            + (" (the daemon is making the rest)" if pending else "")
        )
    for key in ("vault", "index", "files_indexed", "documents", "short_term_events"):
        click.echo(f"{key}: {info[key]}")
    shown = ", ".join(f"{name} {n}" for name, n in info["projects"].items())
    click.echo(f"projects: {shown or '-'}")
    device = info["jobs_device"]
    if device["named"] is None:
        click.echo(
            f"memory jobs: run on every device ([jobs] device unset; this device is "
            f"{device['this_device']!r})"
        )
    elif device["runs_here"]:
        click.echo(f"memory jobs: run on this device ({device['this_device']!r}, [jobs] device)")
    else:
        click.echo(f"memory jobs: not here: {config.jobs_elsewhere(memory.config)}")
    for name, job in info["jobs"].items():
        click.echo(
            f"job {name}: {job['last_run']} {'ok' if job['ok'] else 'FAILED'}: {job['result']}"
        )
    click.echo(f"conflicts: {len(info['conflicts'])}")
    for rel in info["conflicts"]:
        click.echo(
            f"  {rel}: a sync-conflict copy; `brainiac jobs run conflicts` on the device that "
            "runs the jobs merges it (a copy it keeps holds your text: compare, then delete it)"
        )
    click.echo(f"problems: {len(problems)}")
    for problem in problems.values():
        click.echo(f"  {problem}")


def _str_list(value: object) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else []


def _when(epoch: Any) -> str | None:
    if not isinstance(epoch, int | float):
        return None
    return dt.datetime.fromtimestamp(epoch).isoformat(timespec="seconds")


def _duration(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s"


@click.command()
@click.pass_context
def run(ctx: click.Context) -> None:
    """Run the daemon in the foreground: watch the vault, keep index and working memory fresh.

    This is what the systemd user service runs. Stop it with SIGTERM or Ctrl-C; SIGHUP reloads
    the configuration. Logs go to stderr (the journal under systemd).
    """
    debug = ctx.find_root().params.get("debug")
    systemd.configure_logging(logging.DEBUG if debug else logging.INFO)
    from brainiac.runtime.service import Service

    vault = resolve_vault(ctx.obj["vault"])
    service = Service(vault)
    service.install_signal_handlers()
    from brainiac.interfaces.agent_setup import brainiac_command

    command = shlex.join([*brainiac_command(), *vault_flag(vault)])
    service.on_ready = lambda: click.echo(
        f"brainiac: the working memory is {service.memory.vault.root / WORKING_MEMORY}; connect "
        f"an agent with `{command} setup claude-code` (or claude-desktop, cursor)",
        err=True,
    )
    ctx.exit(service.run())


@click.group(cls=Group)
def service() -> None:
    """Install or remove the systemd user service (and its socket) that runs `brainiac run`."""


@service.command("install")
@click.option(
    "--force",
    is_flag=True,
    help="Replace a brainiac.service or .socket that brainiac did not write.",
)
@click.pass_context
def service_install(ctx: click.Context, force: bool) -> None:
    """Write brainiac.service and brainiac.socket for this vault.

    Both go to ~/.config/systemd/user; the socket starts the daemon at the first CLI call.
    """
    vault = resolve_vault(ctx.obj["vault"])
    Vault.open(vault)
    paths = systemd.install([sys.executable, "-m", "brainiac"], vault.resolve(), force=force)
    click.echo(f"wrote {' and '.join(map(str, paths))}; now run:", err=True)
    for step in systemd.next_steps(paths):
        click.echo(f"  {step}")


@service.command("uninstall")
def service_uninstall() -> None:
    """Remove the user units brainiac wrote.

    Disable them first: systemctl --user disable --now brainiac.socket brainiac.service.
    """
    paths = systemd.uninstall()
    click.echo(
        f"removed {' and '.join(map(str, paths))}" if paths else "no brainiac unit to remove",
        err=True,
    )
