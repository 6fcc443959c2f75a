"""The `jobs` commands: list the scheduled jobs, run one now (through the code the daemon uses),
and read the log of what they changed.

Not the jobs themselves (the jobs package), nor the daemon that schedules them (daemon_commands.py).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import click

from brainiac.core.lazy import lazy_module
from brainiac.interfaces.cli.conventions import EXIT_ERROR, parse_time, print_json
from brainiac.interfaces.cli.group import Group
from brainiac.interfaces.cli.opening import open_memory
from brainiac.store.lock import holder_of

if TYPE_CHECKING:
    from brainiac.api import job_table
    from brainiac.lifecycle import jobs as jobs_mod
    from brainiac.store import config as config_mod
else:
    config_mod = lazy_module("brainiac.store.config")
    jobs_mod = lazy_module("brainiac.lifecycle.jobs")
    job_table = lazy_module("brainiac.api.job_table")


@click.group(cls=Group)
def jobs() -> None:
    """List the scheduled jobs, or run one now."""


@jobs.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print the jobs as JSON.")
@click.pass_context
def jobs_list(ctx: click.Context, as_json: bool) -> None:
    """Show each job's schedule, last run, result and next run."""
    from brainiac.store.daemon_requests import read_status

    memory = open_memory(ctx)
    records = jobs_mod.load_records(memory.locations.state)
    daemon = read_status(memory.locations.state) if holder_of(memory.locations.runtime) else None
    next_runs = (daemon or {}).get("next_runs") or {}
    rows = []
    for name, job in job_table.JOBS.items():
        rec = records.get(name, jobs_mod.JobRecord())
        minutes = config_mod.job_interval_minutes(memory.config, name)
        rows.append(
            {
                "name": name,
                "every_minutes": minutes,
                "description": job.description,
                "last_run": rec.last_run,
                "ok": rec.last_ok,
                "result": rec.last_summary,
                "next_run": next_runs.get(name) if isinstance(next_runs, dict) else None,
            }
        )
    if as_json:
        print_json(rows)
        return
    for r in rows:
        every = f"every {r['every_minutes']:g} min" if r["every_minutes"] else "not scheduled"
        result = (
            "never run"
            if r["last_run"] is None
            else (f"last {r['last_run']} {'ok' if r['ok'] else 'FAILED'}: {r['result']}")
        )
        nxt = (
            f"; next {r['next_run']}"
            if r["next_run"]
            else ("" if daemon else "; next: when the daemon runs")
        )
        click.echo(f"{r['name']:<10} {every}; {result}{nxt}")


@jobs.command("run")
@click.argument("name")
@click.option(
    "--now",
    "now",
    default=None,
    metavar="ISO-8601",
    help="The time the job runs as (default: now).",
)
@click.option("--dry-run", is_flag=True, help="Report what the job would do; change nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the reports as JSON.")
@click.pass_context
def jobs_run(ctx: click.Context, name: str, now: str | None, dry_run: bool, as_json: bool) -> None:
    """Run one job now (or `all`: reflection, promotion, organization), through the same code
    the daemon uses."""

    if name != "all" and name not in job_table.JOBS:
        raise click.BadParameter(
            f"no job {name!r}; choose one of {', '.join(job_table.JOBS)} or all", param_hint="NAME"
        )
    memory = open_memory(ctx)
    reports = memory.run_job(name, now=parse_time(now, "--now"), dry_run=dry_run)
    if as_json:
        print_json([dataclasses.asdict(r) for r in reports])
    else:
        for report in reports:
            click.echo(f"{report.name}: {report.summary}")
    if not all(r.ok for r in reports):
        ctx.exit(EXIT_ERROR)


@jobs.command("log")
@click.option("-n", "limit", default=20, show_default=True, help="How many runs to show.")
@click.option("--job", "job", default=None, metavar="NAME", help="Only this job's runs.")
@click.option(
    "--diff", "show_diff", is_flag=True, help="Show what each run changed in each file (a diff)."
)
@click.option("--json", "as_json", is_flag=True, help="Print the runs as JSON.")
@click.pass_context
def jobs_log(
    ctx: click.Context, limit: int, job: str | None, show_diff: bool, as_json: bool
) -> None:
    """What the jobs changed: the newest runs that changed something or failed, newest first.

    With --diff, each file a run changed follows as a unified diff (kept up to 200 lines a
    file; runs recorded before brainiac kept diffs list their files only).
    """

    memory = open_memory(ctx)
    runs = jobs_mod.read_log(memory.locations.state, limit=limit, job=job)
    if not show_diff:
        for run in runs:
            run.pop("diffs", None)
    if as_json:
        print_json(runs)
        return
    if not runs:
        click.echo("no job has changed anything yet", err=True)
    for run in runs:
        status = "ok" if run.get("ok") else "FAILED"
        click.echo(f"{run.get('at')} {run.get('job')} {status}: {run.get('summary')}")
        changed = run.get("changed")
        diffs = run.get("diffs")
        for rel in changed if isinstance(changed, list) else []:
            click.echo(f"    {rel}")
        if not show_diff:
            continue
        if not isinstance(diffs, dict):
            if changed:
                click.echo("    (no diff: this run was recorded before brainiac kept diffs)")
            continue
        for rel in sorted(diffs):
            click.echo(str(diffs[rel]), nl=False)
