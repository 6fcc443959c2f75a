"""The `brainiac` command. The only module that prints for the user.

Errors: any BrainiacError becomes one line on stderr and exit status 2; `--debug` shows the
traceback instead. Data goes to stdout (as JSON with `--json`), messages and warnings to stderr.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import logging
import os
import shlex
import sys
import time
import tomllib
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from brainiac import __version__, clock, vault_choice
from brainiac.errors import BrainiacError, ConfigError, FutureTimeError, VaultError
from brainiac.lazy import lazy_module
from brainiac.lock import holder_of
from brainiac.vault import SHORT_TERM, WORKING_MEMORY, Vault

# Every call imports this module: a command loads the modules it uses when it first uses them
# (lazy.py), so `--version` or a hook does not pay for the checker, the jobs or systemd.
if TYPE_CHECKING:
    from brainiac import answers, stm, systemd
    from brainiac import config as config_mod
    from brainiac import jobs as jobs_mod
    from brainiac import memory as memory_mod
    from brainiac import projects as projects_mod
    from brainiac import working_memory as wm
    from brainiac.answers import Output
    from brainiac.jobs import table as job_table
    from brainiac.memory import Memory
else:
    answers = lazy_module("brainiac.answers")
    config_mod = lazy_module("brainiac.config")
    jobs_mod = lazy_module("brainiac.jobs")
    job_table = lazy_module("brainiac.jobs.table")
    memory_mod = lazy_module("brainiac.memory")
    projects_mod = lazy_module("brainiac.projects")
    stm = lazy_module("brainiac.stm")
    systemd = lazy_module("brainiac.systemd")
    wm = lazy_module("brainiac.working_memory")

EXIT_ERROR = 2
# The formats `import` reads (chatlogs.FORMATS; a test keeps the two equal). Spelled out here so
# that every command does not load the format parsers at start.
IMPORT_FORMATS = ("brainiac", "claude-code", "claude-ai", "chatgpt", "claude-export", "markdown")
EXIT_CONFLICTS = 1  # `check`: the response contradicts the memory
EXIT_HOOK_FAILED = 1  # `hook ...`: never 2, which Claude Code reads as "block the prompt"


def resolve_vault(flag: str | None) -> Path:
    """--vault, then $BRAINIAC_VAULT, then `vault` in ~/.config/brainiac/config.toml, then
    ~/brainiac (vault_choice.py: the entry point finds the daemon's socket with it too)."""
    try:
        return Path(vault_choice.chosen_vault(flag))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(
            f"{vault_choice.user_config_path()}: cannot be read ({exc}); fix it or delete it"
        ) from exc


# Commands after which the process ends with os._exit once stdout and stderr are flushed (see
# main): they write only through safe_io (written, fsynced and closed before they return) and
# start no thread or child. Skipping the interpreter's teardown, which frees every object of
# every module loaded (the index's too), is ~25 ms of a 10,000-note hook call.
_FAST_EXIT = {
    ("context",),
    ("search",),
    ("check",),
    ("status",),
    ("hook", "user-prompt-submit"),
}
_entered: list[str] = []  # the groups whose command started, outermost first
_finished: list[str] = []  # the commands that returned, innermost first


class _Group(click.Group):
    group_class = type  # subgroups (hook, jobs, service) are _Groups too

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name, command, rest = super().resolve_command(ctx, args)
        if _client(ctx) is not None:  # the daemon runs only the commands it answers
            path, parent = [name], ctx
            while parent.parent is not None:
                path.insert(0, parent.info_name)
                parent = parent.parent
            if tuple(path) not in ASKABLE:
                raise answers.RunHere(f"{' '.join(map(str, path))} is answered by the CLI")
        return name, command, rest

    def invoke(self, ctx: click.Context) -> Any:
        if _client(ctx) is not None:  # the daemon answering: no bookkeeping, errors go up
            return super().invoke(ctx)
        _entered.append(self.name or "")
        try:
            result = super().invoke(ctx)
            _finished.append(ctx.invoked_subcommand or "")
            return result
        except BrainiacError as exc:
            if ctx.find_root().params.get("debug"):
                raise
            click.echo(f"brainiac: {exc}", err=True)
            ctx.exit(EXIT_ERROR)


def _open(ctx: click.Context) -> Memory:
    if _client(ctx) is not None:  # (context --write): the daemon never opens another Memory
        raise answers.RunHere("this call opens the vault in the CLI's own process")
    memory = memory_mod.Memory(resolve_vault(ctx.obj["vault"]))
    ctx.call_on_close(memory.close)
    if sys.stdout.isatty() and sys.stderr.isatty():
        # Long work (a first index, a reindex, an import) shows a bar on the terminal; piped or
        # scripted output stays clean.
        bar = _ProgressBar()
        memory.on_progress = bar.update
        ctx.call_on_close(bar.close)
    return memory


class _ProgressBar:
    """A bar on stderr for work of known size, shown only when it is long enough to wait for."""

    MIN_ITEMS = 200

    def __init__(self) -> None:
        self._bar: Any = None
        self._label = ""
        self._done = 0

    def update(self, label: str, done: int, total: int) -> None:
        if total < self.MIN_ITEMS:
            return
        if self._bar is None or label != self._label:
            self.close()
            self._bar = click.progressbar(length=total, label=label, file=sys.stderr)
            self._bar.__enter__()
            self._label, self._done = label, 0
        self._bar.update(done - self._done)
        self._done = done
        if done >= total:
            self.close()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.__exit__(None, None, None)
            self._bar = None


def _json(data: Any) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, indent=2, default=str))


def _parse_time(value: str | None, option: str) -> dt.datetime | None:
    if value is None:
        return None
    try:
        return clock.local(dt.datetime.fromisoformat(value))
    except ValueError:
        raise click.BadParameter(
            f"{value!r} is not an ISO-8601 time such as 2026-11-22T09:30", param_hint=option
        ) from None
    except OverflowError:  # an offset that moves it out of the years 1-9999
        raise ConfigError(
            f"{option} {value}: out of range; give a time in the years 1-9999"
        ) from None


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--vault",
    "vault",
    metavar="PATH",
    default=None,
    help="The vault folder (default: $BRAINIAC_VAULT, then `vault` in "
    "~/.config/brainiac/config.toml, then ~/brainiac).",
)
@click.option("--debug", is_flag=True, help="Show tracebacks and debug logging.")
@click.version_option(__version__, prog_name="brainiac")
@click.pass_context
def cli(ctx: click.Context, vault: str | None, debug: bool) -> None:
    """An AI agent's memory as a Markdown vault you can read and edit.

    brainiac keeps the memory in Markdown files, indexes them, and assembles the context an
    LLM reads: Core Identity, Short-Term Memory, Relevant Long-Term Memory, User Prompt.
    """
    if _client(ctx) is not None:
        if debug:  # --debug logs what happens in the CLI's process: it answers itself
            raise answers.RunHere("--debug")
        ctx.obj["vault"] = vault
        return
    logging.basicConfig(
        level=logging.DEBUG if debug else logging.WARNING,
        format="brainiac: %(levelname)s: %(message)s",
        stream=sys.stderr,
    )
    ctx.ensure_object(dict)
    ctx.obj["vault"] = vault


@cli.command()
@click.argument("path", required=False, metavar="[PATH]")
@click.option(
    "--force",
    is_flag=True,
    help="Make a vault in a folder that already holds other files (never overwrites them).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the vault and created files as JSON.")
@click.pass_context
def init(ctx: click.Context, path: str | None, force: bool, as_json: bool) -> None:
    """Create a vault from the template (never overwrites an existing file).

    In an existing vault, only adds what is missing from its structure (folders, config,
    core identity, short-term memory), never the example notes again. A folder that holds
    other files is refused without --force.
    """
    target = Path(path).expanduser() if path else resolve_vault(ctx.obj["vault"])
    created = memory_mod.Memory.init(target, force=force)
    if as_json:
        _json({"vault": str(target), "created": created})
        return
    click.echo(
        f"{target}: {len(created)} file(s) created"
        + ("" if created else " (everything was already there)"),
        err=True,
    )
    for rel in created:
        click.echo(rel)
    _next_steps(target)


def _next_steps(vault: Path) -> None:
    """What to do after `init` and at `run`: the README's two commands end here (on stderr)."""
    from brainiac.agent_setup import brainiac_command

    command = shlex.join([*brainiac_command(), *_vault_flag(vault)])
    click.echo(
        f"next: `{command} run` keeps the memory fresh (until Ctrl-C); connect an agent with "
        f"`{command} setup claude-code` (or claude-desktop, cursor; docs/setup.md); the working "
        f"memory file is {vault.absolute() / WORKING_MEMORY}",
        err=True,
    )


def _vault_flag(vault: Path) -> list[str]:
    """`--vault PATH`, unless PATH is the vault brainiac finds without it."""
    return [] if resolve_vault(None).absolute() == vault.absolute() else ["--vault", str(vault)]


@cli.command()
@click.argument("text")
@click.option("--role", default="user", show_default=True, help="Who said it.")
@click.option("--session", default=None, help="A session or conversation name.")
@click.option(
    "--at", "at", default=None, metavar="ISO-8601", help="When (default: now; not in the future)."
)
@click.option(
    "--project",
    default=None,
    metavar="NAME",
    help="The project it belongs to (default: none, global; docs/projects.md).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the event as JSON.")
@click.pass_context
def remember(
    ctx: click.Context,
    text: str,
    role: str,
    session: str | None,
    at: str | None,
    project: str | None,
    as_json: bool,
) -> None:
    """Append an event to the short-term Event Log (`-` reads the text from stdin)."""
    if text == "-":
        text = sys.stdin.read()
    when = _parse_time(at, "--at")
    if at is not None and when is not None and clock.too_far_ahead(when):
        # Refused rather than taken as now: the person is here to type it again, and a typo
        # remembered at another time than they meant is worse than a one-line error.
        raise FutureTimeError(SHORT_TERM, "--at", at, clock.now().isoformat(timespec="minutes"))
    memory = _open(ctx)
    event = memory.remember(text, role=role, session=session, at=when, project=project)
    if as_json:
        _json({**dataclasses.asdict(event), "file": SHORT_TERM})
        return
    click.echo(f"^{event.id}")
    click.echo(f"remembered in {SHORT_TERM}", err=True)


@cli.command()
@click.argument("query")
@click.option(
    "--limit",
    default=10,
    show_default=True,
    type=click.IntRange(1, 1000),
    help="Most results to show.",
)
@click.option(
    "--project",
    default=None,
    metavar="NAME",
    help="Search as from this project: its own and global memories first (docs/projects.md).",
)
@click.option("--json", "as_json", is_flag=True, help="Print results as JSON.")
@click.pass_context
def search(ctx: click.Context, query: str, limit: int, project: str | None, as_json: bool) -> None:
    """Search notes and events. Any text is a valid query."""
    args = {"query": query, "limit": limit, "json": as_json, "project": project}
    output = _ask_daemon(ctx, "search", args)
    if output is None:
        output = answers.search(_open(ctx), query, limit, as_json, project)
    _emit(ctx, output)


def _ask_daemon(ctx: click.Context, command: str, args: dict[str, Any]) -> Output | None:
    """The running daemon's answer over its socket, or None: answer in this process.

    Imports next to nothing (daemon_socket.py), so an answered command never loads the index,
    the parser or the rest. In the daemon (answer_client) the answer is made there and then."""
    client = _client(ctx)
    if client is not None:
        raise _Answered(client.answer(command, args))
    if ctx.obj.get("daemon_asked"):  # the entry point asked already (entry.py)
        return None
    from brainiac import daemon_socket
    from brainiac.answers import Output
    from brainiac.locations import Locations

    try:
        runtime = Locations.for_vault(resolve_vault(ctx.obj["vault"])).runtime
    except (BrainiacError, OSError, RuntimeError):  # said where the command says it (a hook: 1)
        return None
    reply = daemon_socket.ask(str(runtime), command, args)
    if "fallback" in reply:
        logging.getLogger(__name__).debug("%s: in this process: %s", command, reply["fallback"])
        return None
    try:
        output = Output.from_json(reply)
    except (KeyError, TypeError, ValueError):  # not what this version sends: answer here
        logging.getLogger(__name__).debug("%s: in this process: a garbled answer", command)
        return None
    logging.getLogger(__name__).debug("%s: answered by the daemon over its socket", command)
    return output


def _read_stdin(ctx: click.Context) -> str:
    client = _client(ctx)
    if client is None:
        return sys.stdin.read()
    if client.stdin is None:
        raise answers.NeedsStdin
    return client.stdin


# -- the daemon answers a command line (entry.py sends it; answers.Answerer calls this) -------
# The commands the daemon runs for a client, as paths of names: one of these parses its
# arguments and asks (_ask_daemon), and the daemon's Memory answers there and then.
ASKABLE = {("context",), ("search",), ("check",), ("hook",), ("hook", "user-prompt-submit")}
# Options that act while they are parsed (help and version print; --prompt-file opens a file
# named relative to the client's folder): a command line with one is the CLI's own.
_ACTING_OPTIONS = ("-h", "--help", "--version", "--prompt-file")


class _Answered(Exception):
    def __init__(self, output: Output) -> None:
        super().__init__("answered")
        self.output = output


@dataclasses.dataclass(frozen=True)
class _Client:
    stdin: str | None  # what the client read from its standard input (None: not yet)
    answer: Callable[[str, dict[str, Any]], Output]  # (command, args) -> the output


def _client(ctx: click.Context) -> _Client | None:
    obj = ctx.find_root().obj
    client = obj.get("client") if isinstance(obj, dict) else None
    return client if isinstance(client, _Client) else None


def answer_client(
    argv: list[str], stdin: str | None, answer: Callable[[str, dict[str, Any]], Output]
) -> Output:
    """What `brainiac ARGV` prints, made in the daemon: the arguments parsed by the real
    commands above, the output made by `answer(command, args)`, which is what `_ask_daemon`
    would have sent over the socket. RunHere for anything the CLI's own process must do (a usage
    error, --help, another command, --write); NeedsStdin when the command reads standard input
    and `stdin` is None (both answers.py's)."""
    acting = [a for a in argv if a.split("=", 1)[0] in _ACTING_OPTIONS]
    if acting:
        raise answers.RunHere(f"{acting[0]} is the CLI's own")
    try:
        cli.main(
            args=list(argv),
            prog_name="brainiac",
            standalone_mode=False,
            obj={"client": _Client(stdin, answer)},
        )
    except _Answered as done:
        return done.output
    except (click.ClickException, click.Abort, BrainiacError) as exc:
        raise answers.RunHere(f"{type(exc).__name__}: {exc}") from exc
    raise answers.RunHere("the command did not ask the daemon")


def _emit(ctx: click.Context, output: Output) -> None:
    for to_stderr, text in output.parts:
        click.echo(text, nl=False, err=to_stderr)
    if output.exit:
        ctx.exit(output.exit)


@cli.command()
@click.option("--prompt", default=None, help="The user prompt the context is for.")
@click.option(
    "--prompt-file",
    type=click.File("r", encoding="utf-8"),
    default=None,
    help="Read the prompt from a file (`-` for stdin).",
)
@click.option(
    "--budget",
    type=int,
    default=None,
    help="Token budget (default: [context] budget in the vault's config, 2000).",
)
@click.option(
    "--now",
    "now",
    default=None,
    metavar="ISO-8601",
    help="The time to assemble for (default: now).",
)
@click.option(
    "--project",
    default=None,
    metavar="NAME",
    help="The project the prompt is asked in: its memories first (docs/projects.md).",
)
@click.option("--json", "as_json", is_flag=True, help="Print text, tokens and sources as JSON.")
@click.option("--write", is_flag=True, help=f"Also write {WORKING_MEMORY} (marked as generated).")
@click.pass_context
def context(
    ctx: click.Context,
    prompt: str | None,
    prompt_file: Any,
    budget: int | None,
    now: str | None,
    project: str | None,
    as_json: bool,
    write: bool,
) -> None:
    """Print the assembled working memory for a prompt, within a token budget."""
    if prompt is not None and prompt_file is not None:
        raise click.UsageError("give --prompt or --prompt-file, not both")
    if prompt_file is not None:
        try:
            prompt = prompt_file.read()
        except UnicodeDecodeError as exc:
            raise VaultError(
                f"{prompt_file.name}: is not UTF-8 text; re-save it as UTF-8 (--prompt-file)"
            ) from exc
    if not write:  # (the daemon writes the working memory itself; --write runs here)
        args = {"prompt": prompt, "budget": budget, "now": now, "json": as_json, "project": project}
        output = _ask_daemon(ctx, "context", args)
        if output is not None:
            _emit(ctx, output)
            return
    memory = _open(ctx)
    when = clock.local(_parse_time(now, "--now") or clock.now())
    output, result = answers.context(memory, prompt, budget, when, as_json, project)
    for to_stderr, text in output.parts:  # the warnings, before the file is written
        if to_stderr:
            click.echo(text, nl=False, err=True)
    if write:
        outcome = wm.write(memory.vault, memory.locations.state, result.text, when)
        if outcome.kept_aside:
            click.echo(
                f"brainiac: {WORKING_MEMORY} had been edited by hand; your version is "
                f"kept as {outcome.kept_aside}",
                err=True,
            )
    for to_stderr, text in output.parts:
        if not to_stderr:
            click.echo(text, nl=False)


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.pass_context
def reindex(ctx: click.Context, as_json: bool) -> None:
    """Rebuild the search index from the vault's files."""
    report = _open(ctx).reindex()
    if as_json:
        _json(asdict(report))
        return
    click.echo(
        f"indexed {report.docs_written} document(s) from {report.scanned} file(s) "
        f"in {report.seconds:.2f} s"
    )
    _print_problems(report.problems)


def _print_problems(problems: dict[str, str]) -> None:
    for problem in problems.values():
        click.echo(f"skipped: {problem}", err=True)


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
@click.pass_context
def status(ctx: click.Context, as_json: bool) -> None:
    """Show whether the daemon runs, what is indexed, conflicts, and notes skipped (and why)."""
    from brainiac.daemon_requests import read_status

    memory = _open(ctx)
    holder = holder_of(memory.locations.runtime)
    daemon = read_status(memory.locations.state) if holder else None
    if holder is None:
        memory.refresh(force=True)  # no daemon: bring the index up to date ourselves
    manifest = memory.indexer.manifest
    problems = dict(manifest.problems)
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
        },
        "index": str(memory.locations.index_dir),
        "files_indexed": sum(1 for s in manifest.files.values() if not s.problem),
        "documents": memory.indexer.index.doc_count(),
        "short_term_events": len(memory.short_term().events),
        # documents per project (docs/projects.md); "(global)" counts what every project sees
        "projects": projects_mod.counts(memory.indexer.index.project_counts()),
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
        _json(info)
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
    for key in ("vault", "index", "files_indexed", "documents", "short_term_events"):
        click.echo(f"{key}: {info[key]}")
    shown = ", ".join(f"{name} {n}" for name, n in info["projects"].items())
    click.echo(f"projects: {shown or '-'}")
    for name, job in info["jobs"].items():
        click.echo(
            f"job {name}: {job['last_run']} {'ok' if job['ok'] else 'FAILED'}: {job['result']}"
        )
    click.echo(f"conflicts: {len(info['conflicts'])}")
    for rel in info["conflicts"]:
        click.echo(f"  {rel}: a sync-conflict copy; merge it by hand, then delete it")
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


@cli.command()
@click.pass_context
def run(ctx: click.Context) -> None:
    """Run the daemon in the foreground: watch the vault, keep index and working memory fresh.

    This is what the systemd user service runs. Stop it with SIGTERM or Ctrl-C; SIGHUP reloads
    the configuration. Logs go to stderr (the journal under systemd).
    """
    debug = ctx.find_root().params.get("debug")
    systemd.configure_logging(logging.DEBUG if debug else logging.INFO)
    from brainiac.service import Service

    vault = resolve_vault(ctx.obj["vault"])
    service = Service(vault, answer_client)
    service.install_signal_handlers()
    from brainiac.agent_setup import brainiac_command

    command = shlex.join([*brainiac_command(), *_vault_flag(vault)])
    service.on_ready = lambda: click.echo(
        f"brainiac: the working memory is {service.memory.vault.root / WORKING_MEMORY}; connect "
        f"an agent with `{command} setup claude-code` (or claude-desktop, cursor)",
        err=True,
    )
    ctx.exit(service.run())


@cli.group()
def service() -> None:
    """Install or remove the systemd user service that runs `brainiac run`."""


@service.command("install")
@click.option(
    "--force", is_flag=True, help="Replace a brainiac.service that brainiac did not write."
)
@click.pass_context
def service_install(ctx: click.Context, force: bool) -> None:
    """Write ~/.config/systemd/user/brainiac.service for this vault."""
    vault = resolve_vault(ctx.obj["vault"])
    Vault.open(vault)
    path = systemd.install([sys.executable, "-m", "brainiac"], vault.resolve(), force=force)
    click.echo(f"wrote {path}; now run:", err=True)
    for step in systemd.next_steps(path):
        click.echo(f"  {step}")


@service.command("uninstall")
def service_uninstall() -> None:
    """Remove the user unit brainiac wrote.

    Disable it first: systemctl --user disable --now brainiac.
    """
    path = systemd.uninstall()
    click.echo(f"removed {path}" if path else "no brainiac.service to remove", err=True)


@cli.group()
def jobs() -> None:
    """List the scheduled jobs, or run one now."""


@jobs.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print the jobs as JSON.")
@click.pass_context
def jobs_list(ctx: click.Context, as_json: bool) -> None:
    """Show each job's schedule, last run, result and next run."""
    from brainiac.daemon_requests import read_status

    memory = _open(ctx)
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
        _json(rows)
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
    memory = _open(ctx)
    reports = memory.run_job(name, now=_parse_time(now, "--now"), dry_run=dry_run)
    if as_json:
        _json([dataclasses.asdict(r) for r in reports])
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

    memory = _open(ctx)
    runs = jobs_mod.read_log(memory.locations.state, limit=limit, job=job)
    if not show_diff:
        for run in runs:
            run.pop("diffs", None)
    if as_json:
        _json(runs)
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


@cli.command()
@click.argument("delta", type=float)
@click.option("--json", "as_json", is_flag=True, help="Print the notes changed as JSON.")
@click.pass_context
def feedback(ctx: click.Context, delta: float, as_json: bool) -> None:
    """Reinforce (+1) or weaken (-1) the notes of the last assembled context.

    Each note's reinforcement changes by DELTA x [lifecycle] learning_rate; retrieval ranks
    reinforced notes higher. Use `--` before a negative number: `brainiac feedback -- -1`.
    """
    memory = _open(ctx)
    changed = memory.feedback(delta)
    if as_json:
        _json({"delta": delta, "changed": changed})
        return
    for rel in changed:
        click.echo(rel)
    click.echo(f"feedback {delta:+g} applied to {len(changed)} note(s)", err=True)


@cli.command()
@click.argument("shell", type=click.Choice(["bash", "zsh", "fish"]))
def completion(shell: str) -> None:
    """Print the shell completion script for SHELL.

    bash: `eval "$(brainiac completion bash)"` in ~/.bashrc; zsh: the same with zsh in ~/.zshrc;
    fish: `brainiac completion fish > ~/.config/fish/completions/brainiac.fish`.
    """
    from click.shell_completion import get_completion_class

    completer = get_completion_class(shell)
    assert completer is not None  # the choice above lists only shells click supports
    click.echo(completer(cli, {}, "brainiac", "_BRAINIAC_COMPLETE").source())


@cli.group()
def hook() -> None:
    """Agent hooks: read the agent's event JSON on stdin (docs/hooks.md).

    A failure is one line on stderr and exit status 1, never 2: Claude Code takes status 2 from
    a UserPromptSubmit hook as "block this prompt".
    """


def _run_hook(ctx: click.Context, event: str, act: Any, stdin: str | None = None) -> None:
    from brainiac import hooks as hooks_mod

    try:
        payload = hooks_mod.Payload.parse(sys.stdin.read() if stdin is None else stdin, event)
        act(_open(ctx), payload)
    except BrainiacError as exc:
        if ctx.find_root().params.get("debug"):
            raise
        click.echo(f"brainiac: {exc}", err=True)
        ctx.exit(EXIT_HOOK_FAILED)


@hook.command("user-prompt-submit")
@click.option("--budget", type=int, default=None, help="Token budget (default: [context] budget).")
@click.pass_context
def hook_user_prompt_submit(ctx: click.Context, budget: int | None) -> None:
    """Print the memory relevant to the prompt; Claude Code adds it to the prompt's context."""
    stdin = _read_stdin(ctx)
    output = _ask_daemon(ctx, "hook-user-prompt-submit", {"stdin": stdin, "budget": budget})
    if output is not None:
        _emit(ctx, output)
        return
    from brainiac import hooks as hooks_mod

    def act(memory: Memory, payload: Any) -> None:
        click.echo(hooks_mod.prompt_context(memory, payload, budget), nl=False)

    _run_hook(ctx, "user-prompt-submit", act, stdin)


@hook.command("stop")
@click.pass_context
def hook_stop(ctx: click.Context) -> None:
    """Import the session's transcript (only new messages; safe after every turn)."""
    _import_from_hook(ctx, "stop")


@hook.command("session-end")
@click.pass_context
def hook_session_end(ctx: click.Context) -> None:
    """Import the session's transcript when the session ends."""
    _import_from_hook(ctx, "session-end")


def _import_from_hook(ctx: click.Context, event: str) -> None:
    from brainiac import hooks as hooks_mod

    def act(memory: Memory, payload: Any) -> None:
        report = hooks_mod.import_transcript(memory, payload)
        click.echo(f"brainiac: {report.new} new message(s) from {Path(report.path).name}", err=True)

    _run_hook(ctx, event, act)


@cli.command()
@click.argument("text", required=False)
@click.option(
    "--now", "now", default=None, metavar="ISO-8601", help="What 'today' means (default: now)."
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.pass_context
def check(ctx: click.Context, text: str | None, now: str | None, as_json: bool) -> None:
    """Check a response against the memory before it reaches a person.

    TEXT is the response (or `-`, or nothing: read it from stdin). Each sentence that states a
    fact the memory holds is compared with the current value; restating a superseded value is a
    conflict too; a sentence no fact judges is compared with the remembered events it is about.
    Each sentence is consistent, a conflict, or could not be verified. Exit status: 0 no
    conflict (consistent or unverified: the output says which), 1 conflicts found, 2 error.
    With [llm] configured, the sentences still unverified go to the model with the same evidence
    (docs/check.md); what it decided is marked (`decided_by` in --json).
    """
    if text is None or text == "-":
        text = _read_stdin(ctx)
    output = _ask_daemon(ctx, "check", {"text": text, "now": now, "json": as_json})
    if output is None:
        memory = _open(ctx)
        output = answers.check(memory, text, _parse_time(now, "--now"), as_json)
    _emit(ctx, output)


@cli.command("import")
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
    memory = _open(ctx)
    reports = memory.import_files(
        paths, fmt, now=_parse_time(now, "--now"), dry_run=dry_run, project=project
    )
    if as_json:
        _json([{**dataclasses.asdict(r), "dry_run": dry_run} for r in reports])
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


@cli.command()
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
    from brainiac.forget.selection import Selection

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
    memory = _open(ctx)

    def confirm(listing: Any) -> bool:
        _print_forget(listing, err=as_json)
        return click.confirm("Forget all of this for good?", default=False, err=True)

    report = memory.forget(selection, dry_run=dry_run, confirm=None if yes else confirm)
    if as_json:
        _json(report.as_json())
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


@cli.command()
@click.argument("client", type=click.Choice(["claude-code", "claude-desktop", "cursor"]))
@click.option("--dry-run", is_flag=True, help="Print the changes as a diff; write nothing.")
@click.pass_context
def setup(ctx: click.Context, client: str, dry_run: bool) -> None:
    """Connect an agent: write this vault's MCP server (and, for Claude Code, the hooks) into
    the client's own configuration files (docs/setup.md).

    claude-code: ~/.claude.json (mcpServers) and ~/.claude/settings.json (hooks); claude-desktop:
    claude_desktop_config.json in Claude's folder; cursor: ~/.cursor/mcp.json. Other settings
    stay; a changed file is first copied beside it (NAME.brainiac-backup-TIME); running it again
    changes nothing. A file that is not valid JSON is refused and left alone.
    """
    from brainiac import agent_setup

    vault = Vault.open(resolve_vault(ctx.obj["vault"]).absolute())
    changes = agent_setup.plan(client, vault.root)
    for change in changes:
        if not change.needed:
            click.echo(f"{change.path}: already set up; nothing to change", err=True)
        elif dry_run:
            click.echo(change.diff(), nl=False)
    if dry_run:
        click.echo("dry run: nothing was written", err=True)
        return
    for done in agent_setup.write(changes, clock.now()):
        kept = f" (the old file is kept as {done.backup})" if done.backup else " (created)"
        click.echo(f"wrote {done.path}{kept}", err=True)
    for step in agent_setup.next_steps(client):
        click.echo(f"next: {step}", err=True)
    click.echo(f"the working memory file: {vault.root / WORKING_MEMORY}", err=True)


@cli.command()
@click.pass_context
def mcp(ctx: click.Context) -> None:
    """Serve this vault's memory to MCP clients over stdio (Claude Desktop, Claude Code, Cursor);
    see docs/mcp.md.

    Runs until the client disconnects. stdout carries only the protocol; logs go to stderr.
    """
    try:
        from brainiac import mcp_server  # the SDK is an optional extra; only this command needs it
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] not in ("mcp", "mcp_types"):
            raise
        click.echo(
            "brainiac: the MCP server needs the mcp package; "
            "install it with pip install 'brainiac[mcp]'",
            err=True,
        )
        ctx.exit(EXIT_ERROR)
    mcp_server.serve(resolve_vault(ctx.obj["vault"]))


@cli.command()
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
    from brainiac.backup.creation import create_by_hand
    from brainiac.backup.snapshots import backups_folder, human_size, list_snapshots

    memory = _open(ctx)
    if list_:
        snapshots = list_snapshots(memory)
        if as_json:
            _json([s.as_json() for s in snapshots])
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
        _json(snap.as_json())
        return
    for reason in snap.skipped:
        click.echo(f"brainiac: warning: not in the snapshot: {reason}", err=True)
    click.echo(str(snap.path))
    click.echo(
        f"{snap.files} file(s), {human_size(snap.size)}, verified; "
        f"{len(snap.removed)} old snapshot(s) removed",
        err=True,
    )


@cli.command()
@click.argument("snapshot", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("target", type=click.Path(file_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the restored paths as JSON.")
def restore(snapshot: Path, target: Path, as_json: bool) -> None:
    """Restore SNAPSHOT (a .tar.gz from `brainiac backup`) into TARGET, an empty or new folder.

    Every file is checked against the snapshot's manifest (SHA-256, size, mode) before anything
    is written; a damaged snapshot is refused whole. Modes and modification times come back.
    Prints the restored paths. No vault is needed: this works on a fresh machine.
    """
    from brainiac.backup import restoring

    restored = restoring.restore(snapshot, target)
    if as_json:
        _json({"snapshot": str(snapshot), "target": str(target), "restored": restored})
        return
    for rel in restored:
        click.echo(rel)
    click.echo(
        f"{target}: {len(restored)} file(s) restored from {snapshot.name}, each checked against "
        f"its manifest; use it with `brainiac --vault {target} status`",
        err=True,
    )


def main(daemon_asked: bool = False) -> None:
    """The whole CLI (entry.main calls it for what the daemon did not answer; `daemon_asked`:
    the daemon was asked already, and is not asked again)."""
    # What brainiac creates (the index and state hold the memory's text too) is the user's alone;
    # files that exist keep their modes (safe_io copies a replaced file's mode).
    os.umask(0o077)
    try:
        cli.main(prog_name="brainiac", obj={"daemon_asked": daemon_asked})
    except SystemExit as exc:
        code = exc.code if exc.code is not None else 0
        if isinstance(code, int) and _may_exit_now():
            _exit_now(code)
        raise


def _may_exit_now() -> bool:
    """Whether the command that ran is one of _FAST_EXIT and finished, or none ran at all
    (--version, --help, a usage error), and no other thread is running."""
    threading = sys.modules.get("threading")
    if threading is not None and threading.active_count() > 1:
        return False
    if not _entered:
        return True
    return len(_finished) == len(_entered) and tuple(reversed(_finished)) in _FAST_EXIT


def _exit_now(code: int) -> None:
    try:
        logging.shutdown()
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return  # a closed or broken pipe: the normal exit reports it as it always did
    os._exit(code)
