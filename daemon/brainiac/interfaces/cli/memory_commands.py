"""The commands that read and write the memory: remember, search, context, check, reindex,
feedback. `search`, `context` and `check` are answered by the running daemon when there is one
(answering.py); the output is made by answers.py either way.

Not the hooks an agent calls (hook_commands.py), nor what moves memory in or out of the vault
(exchange_commands.py: import, forget, backup, restore).
"""

from __future__ import annotations

import dataclasses
import sys
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

import click

from brainiac.core import clock
from brainiac.core.errors import FutureTimeError, VaultError
from brainiac.core.lazy import lazy_module
from brainiac.interfaces.cli.answering import ask_daemon, emit
from brainiac.interfaces.cli.conventions import parse_time, print_json
from brainiac.interfaces.cli.opening import note_words_only, open_memory
from brainiac.store.vault import SHORT_TERM, WORKING_MEMORY

if TYPE_CHECKING:
    from brainiac.api import answers, socket_requests
    from brainiac.store import working_memory as wm
else:
    answers = lazy_module("brainiac.api.answers")
    socket_requests = lazy_module("brainiac.api.socket_requests")
    wm = lazy_module("brainiac.store.working_memory")


@click.command()
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
    when = parse_time(at, "--at")
    if at is not None and when is not None and clock.too_far_ahead(when):
        # Refused rather than taken as now: the person is here to type it again, and a typo
        # remembered at another time than they meant is worse than a one-line error.
        raise FutureTimeError(SHORT_TERM, "--at", at, clock.now().isoformat(timespec="minutes"))
    memory = open_memory(ctx)
    event = memory.remember(text, role=role, session=session, at=when, project=project)
    if as_json:
        print_json({**dataclasses.asdict(event), "file": SHORT_TERM})
        return
    click.echo(f"^{event.id}")
    click.echo(f"remembered in {SHORT_TERM}", err=True)


@click.command()
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
    request = socket_requests.SearchRequest(query, limit, as_json, project)
    output = ask_daemon(ctx, request)
    if output is None:
        output = answers.search(open_memory(ctx), query, limit, as_json, project)
    emit(ctx, output)


@click.command()
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
        request = socket_requests.ContextRequest(prompt, budget, now, as_json, project)
        output = ask_daemon(ctx, request)
        if output is not None:
            emit(ctx, output)
            return
    memory = open_memory(ctx)
    when = clock.local(parse_time(now, "--now") or clock.now())
    output, result = answers.context(memory, prompt, budget, when, as_json, project)
    note_words_only(memory)
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


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.pass_context
def reindex(ctx: click.Context, as_json: bool) -> None:
    """Rebuild the search index from the vault's files."""
    report = open_memory(ctx).reindex()
    if as_json:
        print_json(asdict(report))
        return
    click.echo(
        f"indexed {report.docs_written} document(s) from {report.scanned} file(s) "
        f"in {report.seconds:.2f} s"
    )
    _print_problems(report.problems)


def _print_problems(problems: dict[str, str]) -> None:
    for problem in problems.values():
        click.echo(f"skipped: {problem}", err=True)


@click.command()
@click.argument("delta", type=float)
@click.option("--json", "as_json", is_flag=True, help="Print the notes changed as JSON.")
@click.pass_context
def feedback(ctx: click.Context, delta: float, as_json: bool) -> None:
    """Reinforce (+1) or weaken (-1) the notes of the last assembled context.

    Each note's reinforcement changes by DELTA x [lifecycle] learning_rate; retrieval ranks
    reinforced notes higher. Use `--` before a negative number: `brainiac feedback -- -1`.
    """
    memory = open_memory(ctx)
    changed = memory.feedback(delta)
    if as_json:
        print_json({"delta": delta, "changed": changed})
        return
    for rel in changed:
        click.echo(rel)
    click.echo(f"feedback {delta:+g} applied to {len(changed)} note(s)", err=True)


@click.command()
@click.argument("text", required=False)
@click.option(
    "--now", "now", default=None, metavar="ISO-8601", help="What 'today' means (default: now)."
)
@click.option(
    "--project",
    default=None,
    metavar="NAME",
    help="The project the response is given in: its memories and the global ones are what it "
    "is checked against, another project's only where it names that project (docs/projects.md).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.pass_context
def check(
    ctx: click.Context, text: str | None, now: str | None, project: str | None, as_json: bool
) -> None:
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
        text = sys.stdin.read()
    output = ask_daemon(ctx, socket_requests.CheckRequest(text, now, as_json, project))
    if output is None:
        memory = open_memory(ctx)
        output = answers.check(memory, text, parse_time(now, "--now"), as_json, project)
    emit(ctx, output)
