"""`brainiac mcp`: this vault's memory as a Model Context Protocol server over stdio.

Built on the official `mcp` SDK (2.x, `MCPServer`, which 1.x called FastMCP); the CLI imports this
module only for `brainiac mcp`, so the SDK stays an optional extra (`pip install 'brainiac[mcp]'`).
One `Memory` serves the whole session. Tools: remember, search, context, check, feedback, run_job,
list_notes, update_note, forget.
Resources: brainiac://working-memory, brainiac://identity and brainiac://note/{+path}.
This module is the SDK's one importer: the tools' signatures and result schemas, their errors,
the resources and the stdio plumbing; which notes a client may list, read and replace, and how a
note is replaced, are served_notes.py's, which knows nothing of the protocol.

stdout carries the protocol and nothing else: logging goes to stderr, and while the server runs
the SDK points fd 1 at stderr and writes the protocol to a private duplicate, so a stray print or
a child process cannot corrupt the stream (docs/mcp.md).
"""

from __future__ import annotations

import datetime as dt
import inspect
import logging
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, TypeVar

from mcp.server.mcpserver import MCPServer, ResourceSecurity
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError, ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

# pydantic (which turns the tools' signatures into schemas) refuses typing.TypedDict before 3.12.
from typing_extensions import TypedDict

from brainiac import __version__
from brainiac.api import job_table
from brainiac.api.memory import Memory
from brainiac.core.errors import BrainiacError
from brainiac.interfaces.memory_sharing import Access, Serial
from brainiac.interfaces.served_notes import note_text, public_long_term, write_long_term
from brainiac.store.lock import holder_of
from brainiac.store.vault import IDENTITY, WORKING_MEMORY

log = logging.getLogger(__name__)

NOTE_TEMPLATE = "brainiac://note/{+path}"  # `+`: the path keeps its slashes (RFC 6570)

INSTRUCTIONS = """\
brainiac is the user's long-term memory, kept as Markdown notes they can read and edit.
Before answering, call `context` with the user's message to get what the memory knows about it.
Call `remember` for anything worth keeping (decisions, facts, dates, preferences).
Before sending an answer that states facts, `check` it: a conflict means the memory knows better.
"""


# -- what the tools return (TypedDicts: the SDK publishes them as output schemas) ---------------
class Remembered(TypedDict):
    event_id: str
    at: str | None


class SearchHit(TypedDict):
    path: str
    kind: str
    title: str
    score: float
    excerpt: str
    event_id: str
    at: str | None
    projects: list[str]


class SearchResults(TypedDict):
    hits: list[SearchHit]


class AssembledContext(TypedDict):
    text: str
    tokens: int
    budget: int
    over_budget: bool
    sources: list[str]
    warnings: list[str]


class ConflictInfo(TypedDict):
    claim: str
    key: str
    stored: str
    since: str | None
    file: str
    line: int
    block: str | None
    kind: str
    old: str | None
    old_period: str | None
    entity: str | None
    confidence: float
    correction: str


class CheckOutcome(TypedDict):
    consistent: bool
    facts_known: int
    sentences_about_facts: int
    conflicts: list[ConflictInfo]


class FeedbackOutcome(TypedDict):
    changed: list[str]


class JobReportInfo(TypedDict):
    name: str
    ok: bool
    summary: str
    changed: list[str]
    dry_run: bool


class JobOutcome(TypedDict):
    reports: list[JobReportInfo]


class NoteInfo(TypedDict):
    path: str
    title: str
    status: str
    aliases: list[str]
    tags: list[str]
    sources: int
    strength: float


class NoteList(TypedDict):
    notes: list[NoteInfo]
    total: int


class NoteWritten(TypedDict):
    path: str
    created: bool
    bytes: int


class ForgetOutcome(TypedDict):
    done: bool
    message: str
    selection: str
    counts: dict[str, int]
    files: list[dict[str, Any]]
    events: list[str]
    left: list[str]
    skipped: list[str]


_JOB_NAMES = ", ".join([*job_table.JOBS, "all"])
_PROJECT_REMEMBER = (
    "The project this belongs to, such as the repository's folder name; omit for what holds "
    "in every project (the person's preferences are kept for every project anyway)."
)
_PROJECT_RECALL = (
    "The project you work in: its memories first, global ones too, another project's only "
    "when clearly relevant; omit to search everything."
)
_PROJECT_CHECK = (
    "The project the response is given in: checked against its memories and the global ones, "
    "another project's only where the response names it; omit to check against everything."
)
_F = TypeVar("_F", bound=Callable[..., Any])


def build_server(memory: Memory, access: Access | None = None) -> MCPServer:
    """The MCP server for one open Memory (no I/O until it is run). `access`: which calls may use
    `memory` at once (memory_sharing.py), shared with its other callers in this process
    (mcp_http.py's hook routes); by default one call at a time."""
    # The SDK runs synchronous tools on worker threads, possibly several at once.
    served = Served(memory, access or Serial())
    server: MCPServer = MCPServer(
        "brainiac",
        version=__version__,
        instructions=INSTRUCTIONS,
        # The note template checks its path itself (below), so that a refused path gets a reason
        # instead of the SDK's bare "Unknown resource"; those checks are stricter than the SDK's.
        resource_security=ResourceSecurity(exempt_params=frozenset({"path"})),
    )
    for name, hints in _TOOLS.items():
        fn = getattr(served, name)
        # The SDK sends a docstring as it is, indentation and all; the model should read it clean.
        description = inspect.cleandoc(fn.__doc__ or "")
        server.add_tool(fn, description=description, annotations=hints)
    server.resource(
        "brainiac://working-memory",
        name="working-memory",
        title="Working memory",
        description="What the agent has in mind now: context/working_memory.md as the daemon "
        "keeps it, or, without it, a context assembled now without a prompt.",
        mime_type="text/markdown",
    )(served.working_memory)
    server.resource(
        "brainiac://identity",
        name="identity",
        title="Core identity",
        description="Who the agent is: system/core_identity.md.",
        mime_type="text/markdown",
    )(served.identity)
    server.resource(
        NOTE_TEMPLATE,
        name="note",
        title="Note",
        description="A Markdown note by its path in the vault, such as "
        "memory/long_term/project-atlas.md. Private notes are never served.",
        mime_type="text/markdown",
    )(served.note)
    return server


_TOOLS: dict[str, ToolAnnotations | None] = {}  # tool (a method of Served) -> its annotations


def _tool(annotations: ToolAnnotations | None = None) -> Callable[[_F], _F]:
    """Marks a method of `Served` as an MCP tool, registered in this order by `build_server`."""

    def mark(fn: _F) -> _F:
        _TOOLS[fn.__name__] = annotations
        return fn

    return mark


class Served:
    """One open Memory as the MCP server serves it, and the access its callers share. Each method
    marked `_tool` is one tool: its name, parameters (their descriptions), docstring and answer
    are what a client sees."""

    def __init__(self, memory: Memory, access: Access) -> None:
        self.memory = memory
        self.reading, self.writing = access.reading, access.writing

    @_tool()
    def remember(
        self,
        text: Annotated[str, Field(description="What happened or was said, in plain words.")],
        role: Annotated[
            str, Field(description="Who said it: user, assistant, or another name.")
        ] = "user",
        session: Annotated[
            str | None, Field(description="A conversation or session name to group events.")
        ] = None,
        project: Annotated[str | None, Field(description=_PROJECT_REMEMBER)] = None,
    ) -> Remembered:
        """Append an event to the short-term Event Log of the memory (the same event twice is
        kept once). Returns its id and time."""
        with self.writing(), _as_tool_error():
            event = self.memory.remember(text, role=role, session=session, project=project)
        return {"event_id": event.id, "at": _iso(event.at)}

    @_tool(ToolAnnotations(read_only_hint=True))
    def search(
        self,
        query: Annotated[str, Field(description="Words to look for; any text is a valid query.")],
        limit: Annotated[int, Field(ge=1, le=1000, description="Most results to return.")] = 10,
        project: Annotated[str | None, Field(description=_PROJECT_RECALL)] = None,
    ) -> SearchResults:
        """Search the long-term notes and the events, best match first."""
        with self.reading(), _as_tool_error():
            results = self.memory.search(query, limit=limit, project=project)
        return {
            "hits": [
                {
                    "path": r.path,
                    "kind": r.kind,
                    "title": r.title,
                    "score": r.score,
                    "excerpt": r.excerpt,
                    "event_id": r.event_id,
                    "at": _iso(r.at),
                    "projects": list(r.projects),
                }
                for r in results
            ]
        }

    @_tool()
    def context(
        self,
        prompt: Annotated[
            str | None,
            Field(description="The user's message; without one, the current working memory."),
        ] = None,
        budget: Annotated[
            int | None,
            Field(description="Token budget (default: the vault's [context] budget, 2000)."),
        ] = None,
        project: Annotated[str | None, Field(description=_PROJECT_RECALL)] = None,
    ) -> AssembledContext:
        """Assemble what the memory knows for a prompt, within a token budget: Core Identity,
        Short-Term Memory, Relevant Long-Term Memory, then the prompt. `feedback` then applies to
        the notes it used."""
        with self.reading(), _as_tool_error():
            result = self.memory.context(prompt, budget=budget, project=project)
        return {
            "text": result.text,
            "tokens": result.tokens,
            "budget": result.budget,
            "over_budget": result.over_budget,
            "sources": list(result.sources),
            "warnings": list(result.warnings),
        }

    @_tool(ToolAnnotations(read_only_hint=True))
    def check(
        self,
        text: Annotated[str, Field(description="The response to check, before it is sent.")],
        project: Annotated[str | None, Field(description=_PROJECT_CHECK)] = None,
    ) -> CheckOutcome:
        """Check a response against the memory: each statement about a fact the memory holds is
        compared with the current value, and restating a superseded value is a conflict too.
        Each conflict carries a `correction` to act on."""
        with self.reading(), _as_tool_error():
            result = self.memory.check(text, project=project)
        conflicts: list[ConflictInfo] = [
            {
                "claim": c.claim,
                "key": c.key,
                "stored": c.stored,
                "since": c.since,
                "file": c.file,
                "line": c.line,
                "block": c.block,
                "kind": c.kind,
                "old": c.old,
                "old_period": c.old_period,
                "entity": c.entity,
                "confidence": c.confidence,
                "correction": c.correction,
            }
            for c in result.conflicts
        ]
        return {
            "consistent": result.consistent,
            "facts_known": result.facts_known,
            "sentences_about_facts": result.sentences_about_facts,
            "conflicts": conflicts,
        }

    @_tool()
    def feedback(
        self,
        delta: Annotated[
            float,
            Field(description="+1 when the last context helped, -1 when it misled (-10 to 10)."),
        ],
    ) -> FeedbackOutcome:
        """Reinforce or weaken the long-term notes of the last context assembled for a prompt;
        retrieval ranks reinforced notes higher. Returns the notes changed."""
        with self.writing(), _as_tool_error():
            changed = self.memory.feedback(delta)
        return {"changed": list(changed)}

    @_tool()
    def run_job(
        self,
        name: Annotated[str, Field(description=f"The job: one of {_JOB_NAMES}.")],
        dry_run: Annotated[
            bool, Field(description="Report what the job would change; change nothing.")
        ] = False,
    ) -> JobOutcome:
        """Run a memory job now (reflection, promotion, organization, or all three), through the
        same code the daemon runs on its schedule."""
        with self.writing(), _as_tool_error():
            reports = self.memory.run_job(name, dry_run=dry_run)
        return {
            "reports": [
                {
                    "name": r.name,
                    "ok": r.ok,
                    "summary": r.summary,
                    "changed": list(r.changed),
                    "dry_run": r.dry_run,
                }
                for r in reports
            ]
        }

    @_tool(ToolAnnotations(read_only_hint=True))
    def list_notes(
        self,
        query: Annotated[
            str | None,
            Field(description="Only notes whose title, alias, tag or path contains this text."),
        ] = None,
        include_archived: Annotated[
            bool, Field(description="Also the notes organization archived as faded.")
        ] = False,
        limit: Annotated[int, Field(ge=1, le=10000, description="Most notes to return.")] = 200,
    ) -> NoteList:
        """List the long-term notes (memory/long_term/), by path: title, status, aliases, tags,
        how many events each holds, and its strength. Private notes are never listed. Read one
        with the brainiac://note/{path} resource; change one with `update_note`."""
        with self.reading(), _as_tool_error():
            found = list_long_term(self.memory, query, include_archived)
        return {"notes": found[:limit], "total": len(found)}

    @_tool(ToolAnnotations(destructive_hint=True, idempotent_hint=True))
    def update_note(
        self,
        path: Annotated[
            str,
            Field(description="The note's path, such as memory/long_term/project-atlas.md."),
        ],
        text: Annotated[
            str,
            Field(description="The note's whole new Markdown text, frontmatter included."),
        ],
        create: Annotated[
            bool, Field(description="Make the note if it does not exist yet.")
        ] = False,
    ) -> NoteWritten:
        """Replace a long-term note's text (read it first from brainiac://note/{path} and keep
        what should stay: its frontmatter, Sources and Facts). Only notes in memory/long_term/;
        for what happened, use `remember`. A note a person saved meanwhile is not overwritten:
        read it again and redo the change."""
        with self.writing(), _as_tool_error():
            created = write_long_term(self.memory, path, text, create)
        return {"path": path, "created": created, "bytes": len(text.encode("utf-8"))}

    @_tool(ToolAnnotations(destructive_hint=True))
    def forget(
        self,
        notes: Annotated[
            list[str] | None, Field(description="Notes to forget whole: a path, title or alias.")
        ] = None,
        facts: Annotated[
            list[str] | None, Field(description="Fact keys: their lines, history and events.")
        ] = None,
        entity: Annotated[
            str | None, Field(description="With facts: only in this note (a title or path).")
        ] = None,
        events: Annotated[
            list[str] | None,
            Field(description="Events: an id (e-3f2a1c9b0d), or a text the events contain."),
        ] = None,
        matching: Annotated[
            list[str] | None,
            Field(description="Every event, fact and line containing the text (3+ characters)."),
        ] = None,
        confirm: Annotated[
            bool,
            Field(
                description="False (the default): only list what would go. True: remove it "
                "for good, after the person agreed to the listing."
            ),
        ] = False,
    ) -> ForgetOutcome:
        """Remove memories for good, with what was derived from them, from the notes, the index,
        the event journal and every backup (docs/forget.md). Call it first without `confirm` to
        see what would go, show that to the person, and only with their agreement call it again
        with confirm=true. While the daemon runs, it carries the removal out."""
        from brainiac.exchange.forget.selection import Selection

        selection = Selection(
            tuple(notes or ()),
            tuple(facts or ()),
            entity,
            tuple(events or ()),
            tuple(matching or ()),
        )
        with self.writing(), _as_tool_error():
            report = forget_with(self.memory, selection, confirm)
        data = report.as_json()
        if report.empty:
            message = "nothing matches; nothing was removed"
        elif report.done:
            message = "removed for good" + (
                "; some could not be: see skipped" if report.skipped else ""
            )
        else:
            message = "nothing removed yet: this is what would go; call again with confirm=true"
        return {
            "done": report.done,
            "message": message,
            "selection": report.selection,
            "counts": data["counts"],
            "files": data["files"],
            "events": data["events"],
            "left": data["left"],
            "skipped": data["skipped"],
        }

    # -- resources (registered by `build_server`) --------------------------------------------
    def working_memory(self) -> str:
        with self.reading(), _as_resource_error(WORKING_MEMORY):
            try:
                return self.memory.vault.read(WORKING_MEMORY).text
            except FileNotFoundError:
                return self.memory.context().text

    def identity(self) -> str:
        with self.reading(), _as_resource_error(IDENTITY):
            return self.memory.vault.read(IDENTITY).text

    def note(self, path: str) -> str:
        with self.reading(), _as_resource_error(path):
            return note_text(self.memory, path)


def list_long_term(memory: Memory, query: str | None, include_archived: bool) -> list[NoteInfo]:
    """The `list_notes` tool's answer: the notes `served_notes.public_long_term` lists."""
    return [
        {
            "path": note.path,
            "title": note.title,
            "status": note.status or "active",
            "aliases": list(note.aliases),
            "tags": list(note.tags),
            "sources": note.sources,
            "strength": note.strength,
        }
        for note in public_long_term(memory, query, include_archived)
    ]


def forget_with(memory: Memory, selection: Any, confirm: bool) -> Any:
    """`forget` for a client: a listing unless `confirm`; beside a daemon, asked of it."""
    if not confirm:
        return memory.forget(selection, dry_run=True)
    if memory.index_writes or holder_of(memory.locations.runtime) is not None:
        return memory.forget(selection)
    # The daemon that owned the index when this server started has stopped: this process may
    # now write the index itself, through a Memory opened for it.
    with Memory(memory.vault.root) as fresh:
        return fresh.forget(selection)


def _iso(at: dt.datetime | None) -> str | None:
    return at.isoformat(timespec="seconds") if at is not None else None


@contextmanager
def _as_tool_error() -> Iterator[None]:
    """A BrainiacError is the caller's to fix: the model reads its one line as the tool's error.
    Anything else is a bug: the SDK logs it (stderr) and the model sees only that the tool
    failed."""
    try:
        yield
    except BrainiacError as exc:
        raise ToolError(str(exc)) from exc


@contextmanager
def _as_resource_error(rel: str) -> Iterator[None]:
    try:
        yield
    except FileNotFoundError:
        raise ResourceNotFoundError(f"{rel}: no such file in the vault") from None
    except BrainiacError as exc:
        raise ResourceError(str(exc)) from exc


def serve(vault: Path) -> None:
    """Serve `vault` over stdin/stdout until the client closes the connection."""
    root = logging.getLogger()
    # stdout is the protocol: every log record goes to stderr (which MCP clients keep as the
    # server's log), at the level the CLI chose (--debug or warnings only).
    logging.basicConfig(
        level=root.level or logging.WARNING,
        format="brainiac mcp: %(levelname)s: %(name)s: %(message)s",
        stream=sys.stderr,
        force=True,
    )
    sys.stdout.flush()  # nothing may be pending for the protocol's descriptor when it is claimed
    memory = Memory(vault)  # a missing or wrong vault fails here, before the client waits on it
    try:
        server = build_server(memory)
        log.info("serving %s over stdio", memory.vault.root)
        server.run("stdio")
    finally:
        memory.close()
