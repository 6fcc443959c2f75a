"""The Python API: `Memory(path)` is one vault with its index, for programs and for the CLI.

    from brainiac import Memory
    with Memory("~/vault") as m:
        m.remember("The deadline moved to Monday.", role="user", session="planning")
        m.search("deadline")
        ctx = m.context("When is the deadline?", budget=2000)
        print(ctx.text, ctx.sources)

Without a daemon running, a Memory keeps the index up to date itself: a full reconcile when it
opens the index (cheap when nothing changed: only stats), again whenever `refresh_interval_s` has
passed, and at once for every file it writes.

One concept: this is the facade, one method for each thing a program asks of a vault, so it is
as long as that list. It owns the vault, the index and the caches a context call reads (the
short-term document and the Core Identity, parsed again only when their files change), and
hands each operation to its home: appending events to the Event Log (event_log.py), the
record of which notes a context used and feedback on them (feedback.py), jobs (job_table.py),
imports (importer.py), `forget` (forget/), the guard (check.py). Those modules see it as
`memory_protocol.MemoryLike`, never import it.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import logging
import os
import threading
import time
import weakref
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from brainiac.core import clock
from brainiac.core.errors import NoteParseError, VaultError
from brainiac.core.lazy import lazy_module
from brainiac.formats import events as ev
from brainiac.formats import marks, stm
from brainiac.formats.note import parse as parse_note
from brainiac.language import masking
from brainiac.lifecycle import feedback as feedback_mod
from brainiac.search import context as ctx_mod
from brainiac.search import project_search
from brainiac.search.index import Index
from brainiac.search.index_documents import Hit
from brainiac.search.indexer import Indexer, SyncReport
from brainiac.search.retrieval import ParsedNotes, about_prompt, candidate_limit, retrieve
from brainiac.store import config as config_mod
from brainiac.store import event_log, projects
from brainiac.store.config import Config
from brainiac.store.locations import Locations, daemon_locations
from brainiac.store.lock import holder_of
from brainiac.store.safe_io import StatKey, stat_key
from brainiac.store.vault import IDENTITY, SHORT_TERM, Vault, is_vault

if TYPE_CHECKING:
    from brainiac.api import job_table
    from brainiac.exchange.forget.selection import ForgetReport, Selection
    from brainiac.exchange.importer import FileReport
    from brainiac.guard import check as check_mod
    from brainiac.guard.check_facts.verdicts import CheckResult
    from brainiac.lifecycle import jobs as jobs_mod
    from brainiac.lifecycle import journal
    from brainiac.model.llm import LLM
    from brainiac.search import daemon_vectors
    from brainiac.search import semantic as semantic_mod
    from brainiac.store.names import NameBook
else:
    # Loaded when first used (lazy.py): a context or search call (the agent hook's path) needs
    # neither the checker, the model client (http, ssl), the journal nor the jobs.
    check_mod = lazy_module("brainiac.guard.check")
    jobs_mod = lazy_module("brainiac.lifecycle.jobs")
    job_table = lazy_module("brainiac.api.job_table")
    journal = lazy_module("brainiac.lifecycle.journal")
    # numpy and the sentence model: only a context with a prompt needs them (~0.2 s to load).
    semantic_mod = lazy_module("brainiac.search.semantic")
    daemon_vectors = lazy_module("brainiac.search.daemon_vectors")

log = logging.getLogger(__name__)

_QUERY_RECENT_EVENTS = 3
_IMPORT_LOCK_WAIT_S = 60.0
# The scopes whose short-term sections are kept for one version of the log and the index.
_SCOPES_KEPT = 16


@dataclass(frozen=True)
class SearchResult:
    path: str
    kind: str  # "note" or "event"
    title: str
    score: float
    excerpt: str
    event_id: str
    at: dt.datetime | None
    projects: tuple[str, ...] = ()  # its projects; () is global (docs/projects.md)
    about_person: bool = False  # in a project, but about the person: found in every project

    @classmethod
    def from_hit(cls, hit: Hit) -> SearchResult:
        excerpt = hit.text if hit.kind == "event" else ""
        named = tuple(projects.named(hit.projects))
        personal = bool(named) and projects.GLOBAL in hit.projects
        return cls(
            hit.path, hit.kind, hit.title, hit.score, excerpt, hit.event_id, hit.at, named, personal
        )


@dataclass(frozen=True)
class Context:
    text: str
    tokens: int
    budget: int
    sources: tuple[str, ...]
    over_budget: bool
    warnings: tuple[str, ...]


class Memory:
    """One vault: remembering events, searching, and assembling context."""

    def __init__(
        self,
        path: Path | str,
        *,
        config: Config | None = None,
        locations: Locations | None = None,
        refresh_interval_s: float = 1.0,
        index_writes: bool | None = None,
        meaning: bool | None = None,
    ) -> None:
        root = Path(path).expanduser()
        Vault.open(root)  # a missing path or a file: the error that says how to create a vault
        if not is_vault(root):
            raise VaultError(
                f"{root}: is not a brainiac vault (no {IDENTITY}, {SHORT_TERM} or .brainiac/); "
                f"create one with `brainiac init {root}`"
            )
        self.config = config if config is not None else config_mod.load(root)
        self.vault = Vault.open(root, self.config.max_note_bytes)
        self.locations = locations or Locations.for_vault(self.vault.root)
        self.refresh_interval_s = refresh_interval_s
        # Beside a running daemon, the daemon is the index's only writer: this Memory then reads
        # the index as it is and writes only vault files, which the daemon picks up.
        # The daemon may have reached the folder by another path (a bind mount): its folders.
        if index_writes is None:
            self.locations = locations or daemon_locations(self.vault.root, self.locations)
            index_writes = holder_of(self.locations.runtime) is None
        self.index_writes = index_writes
        # The daemon's writer loop, the one thread that syncs its index and manifest (neither is
        # thread-safe); what its job thread writes reaches the loop as every edit does (the
        # watcher, the job's report). None: the thread that writes syncs (a CLI process).
        self.index_thread: threading.Thread | None = None
        self._indexer: Indexer | None = None
        self._last_reconcile = -float("inf")
        self._stm_cache: tuple[StatKey, stm.ShortTerm] | None = None
        self._scoped_memo: (
            tuple[stm.ShortTerm, weakref.ref[object], dict[projects.Scope, dict[str, str]]] | None
        ) = None  # see _scoped_sections
        # The recent-events window of each (size, scope), for one parse of the short-term file.
        self._recent_windows: tuple[stm.ShortTerm, dict[tuple[int, projects.Scope], list[ev.Event]]]
        self._recent_windows = (stm.parse(""), {})
        self._identity_cache: tuple[StatKey, str] | None = None
        self._notes = ParsedNotes(self.vault)  # the notes contexts show, parsed while unchanged
        self._last_search: tuple[tuple[str, int, projects.Scope, bool], list[Hit]] | None = None
        self._names: NameBook | None = None
        # Where the record of which notes a context used is written: here and now, or, in the
        # daemon, after the answer has gone to the client (bookkeeping.py).
        self.record_later: Callable[[Callable[[], None]], None] | None = None
        self._llm: LLM | None = None
        # progress(label, done, total) of long work (indexing, importing): the CLI draws a bar
        self.on_progress: Callable[[str, int, int], None] | None = None
        # Recall by meaning (search/semantic.py): None follows `[retrieval] meaning`. The
        # vectors of new events are made before a context uses them (`fill_before_context`),
        # unless the owner makes them itself (the daemon, in the background).
        self._meaning = meaning
        self._semantic: semantic_mod.SemanticIndex | None = None
        self._daemon_vectors: daemon_vectors.DaemonVectors | None = None  # beside a daemon
        self.fill_before_context = True

    @property
    def names(self) -> NameBook:
        """The notes' names, kept between job runs: re-reads only changed notes. Made on first
        use: a context or search call (the agent hook's path) needs neither it nor facts.py, and
        a CLI call should not pay for their imports."""
        if self._names is None:
            from brainiac.store.names import NameBook

            self._names = NameBook()
        return self._names

    def reconfigure(self, cfg: Config) -> None:
        """Use a reloaded configuration (the daemon's SIGHUP)."""
        self.config = cfg
        self._llm = None  # the [llm] settings may have changed
        if self._indexer is not None:  # a folder made private leaves the index at the next sync
            self._indexer.private_folders = cfg.private_folders

    @property
    def llm(self) -> LLM:
        """The optional OpenAI-compatible endpoint of `[llm]` (`available` is False without one)."""
        if self._llm is None:
            from brainiac.model.llm import LLM

            self._llm = LLM(self.config)
        return self._llm

    # -- lifecycle ---------------------------------------------------------------------------
    @classmethod
    def init(cls, path: Path | str, force: bool = False) -> list[str]:
        """A vault from the template, or the rest of one (vault.init); returns what was created."""
        from brainiac.store.vault import init as init_vault

        return init_vault(Path(path).expanduser(), force)

    def __enter__(self) -> Memory:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        if self._semantic is not None:
            self._semantic.close()
        if self._indexer is not None:
            self._indexer.close()
            self._indexer = None

    @property
    def semantic(self) -> semantic_mod.SemanticIndex | None:
        """The events' vectors (search/semantic.py), or None when recall by meaning is off or its
        model is missing (logged once). Beside a daemon, the vectors it made, read-only
        (daemon_vectors.py)."""
        on = self.config.meaning if self._meaning is None else self._meaning
        if self._semantic is None and on:
            folder = self.locations.vectors_dir
            if self.index_writes:
                self._semantic = semantic_mod.attached(self.indexer, folder)
            else:
                reader = daemon_vectors.DaemonVectors.attached(self.indexer.index, folder)
                self._daemon_vectors = reader
                self._semantic = reader.semantic if reader is not None else None
            if self._semantic is None:
                self._meaning = on = False  # no model: words only from here on
        return self._semantic if on else None

    @property
    def semantic_if_open(self) -> semantic_mod.SemanticIndex | None:
        """`semantic` when this process has it open already (the daemon's embedder, a context
        asked before), else None: the jobs use meaning where the model is loaded, and never
        open the index for it (a jobs run only writes files)."""
        on = self.config.meaning if self._meaning is None else self._meaning
        return self._semantic if on else None

    @property
    def indexer(self) -> Indexer:
        if self._indexer is None:
            index = Index(self.locations.index_dir, writable=self.index_writes)
            self._indexer = Indexer(
                self.vault, index, self.locations.manifest_path, self.config.private_folders
            )
        return self._indexer

    def _syncs_here(self) -> bool:
        """Whether this thread indexes the files it has just written (see `index_thread`)."""
        return (
            self._indexer is not None
            and self.index_writes
            and self.index_thread in (None, threading.current_thread())
        )

    def refresh(self, force: bool = False) -> SyncReport | None:
        """Reconcile the index if it may be stale (or `force`); beside a daemon, its last commit."""
        if not self.index_writes:
            # A reader that lives on (the MCP server's) would otherwise answer from the index as
            # it was when it opened, and meet the files of segments the daemon merged away since.
            if self._indexer is not None:
                changed = self._indexer.index.catch_up()
                if self._daemon_vectors is not None:
                    self._daemon_vectors.catch_up(changed)
            return None
        now = time.monotonic()
        if not force and now - self._last_reconcile < self.refresh_interval_s:
            return None
        report = self.indexer.sync(progress=self._progress("indexing"))
        self._last_reconcile = time.monotonic()
        return report

    def _progress(self, label: str) -> Callable[[int, int], None] | None:
        report = self.on_progress
        if report is None:
            return None
        return lambda done, total: report(label, done, total)

    def _nearness(self, prompt: str, scope: projects.Scope) -> dict[str, float]:
        semantic = self.semantic
        if semantic is None:
            return {}
        if self.fill_before_context:
            semantic.fill()
        # In a project, nearness among its own and the global events, as the words' statistics
        # (project_search.py): the project's nearest are those it would have alone.
        among = project_search.own_event_keys(self.indexer.index, scope)
        return semantic.nearness(prompt, among=among)

    def reindex(self) -> SyncReport:
        """Throw the index away and build it again from the files."""
        if not self.index_writes:
            holder = holder_of(self.locations.runtime)
            raise VaultError(
                f"{self.vault.root}: the daemon (pid {holder.pid if holder else '?'}) "
                "owns the index; stop it, or delete the index and restart it"
            )
        self.indexer.manifest.index_id = ""  # names no index: the sync starts a fresh one
        report = self.indexer.sync(progress=self._progress("reindexing"))
        self.indexer.index.merge_segments(force=True)
        self._last_reconcile = time.monotonic()
        return report

    # -- events ------------------------------------------------------------------------------
    def remember(
        self,
        text: str,
        role: str = "user",
        session: str | None = None,
        at: dt.datetime | None = None,
        now: dt.datetime | None = None,
        project: str | None = None,
    ) -> ev.Event:
        """Append one event to the short-term Event Log (idempotent: same event, same id).
        `project` labels it (docs/projects.md); None leaves it global.

        An `at` more than `clock.FUTURE_TOLERANCE` after `now` (default: the clock) is a typo or
        a wrong clock: the event is kept, dated `now`, with a warning. Left as it was, it would
        be "the newest event" for years and send everything imported meanwhile to history.

        TooLargeError, nothing written, for a text over `Vault.max_event_bytes` or when the
        short-term document has no room left for it (the message says what makes room)."""
        if not text or not text.strip():
            raise VaultError("nothing to remember: the text is empty")
        if at is not None:
            reference = clock.local(now) if now is not None else clock.now()
            if clock.too_far_ahead(ev.normalise_time(at), reference):
                log.warning(
                    "%s: an event dated %s is in the future (it is %s now); it was clamped to "
                    "now; give the time it happened, no later than now",
                    SHORT_TERM,
                    ev.normalise_time(at).isoformat(),
                    reference.isoformat(),
                )
                at = reference
        event = ev.make_event(text, role=role, session=session, at=at, project=project)
        self.remember_many([event])
        return event

    def remember_many(
        self, new_events: Iterable[ev.Event], in_time_order: bool = False
    ) -> list[ev.Event]:
        """Append events in one write; returns those that were not already in the log.

        `in_time_order` (imported history): each goes before the first logged event later than
        it instead of at the end. TooLargeError, nothing written, for an event over
        `Vault.max_event_bytes` or when the document would go over `[vault] max_note_bytes`
        (past it the document could not be read again: every later `remember` failed)."""
        added = event_log.append(
            self.vault, list(new_events), in_time_order, self.config.short_term_window
        )
        if not added:
            return []
        journal.record(self.locations.state, added)
        if self._syncs_here():
            self.indexer.sync([SHORT_TERM])
        problem = stm.log_problem(self.short_term())
        if problem is not None:  # a renamed log, or events outside it: said on every write
            log.warning("%s", problem)
        return added

    def import_files(
        self,
        paths: Iterable[Path | str],
        format: str | None = None,
        now: dt.datetime | None = None,
        dry_run: bool = False,
        project: str | None = None,
        live: bool = False,
    ) -> list[FileReport]:
        """Import chat exports (docs/import.md): each message once, however often this runs;
        the new messages' events belong to `project` (None: global).

        A file that cannot be parsed is rejected whole and reported (`FileReport.error`).
        `live`: the files are JSONL transcripts still being written, in the named `format` (the
        Stop hook's): a damaged line is left out and reported once (`FileReport.damaged`), and a
        last line being written is read by a later import."""
        from brainiac.exchange import importer  # the format parsers load only when importing

        files = [Path(p).expanduser() for p in paths]
        with jobs_mod.job_lock(self.locations.state, wait_s=_IMPORT_LOCK_WAIT_S) as held:
            if not held:
                raise VaultError(
                    f"{self.vault.root}: a memory job has held the job lock for over "
                    f"{_IMPORT_LOCK_WAIT_S:g} s; try the import again in a minute"
                )
            return importer.import_paths(
                self, files, format, now, dry_run, project=ev.clean_project(project), live=live
            )

    def forget(
        self,
        what: Selection,
        now: dt.datetime | None = None,
        dry_run: bool = False,
        confirm: Callable[[ForgetReport], bool] | None = None,
    ) -> ForgetReport:
        """Remove what `what` selects for good, from memory/, context/, the index, the event
        journal and every backup snapshot (docs/forget.md): the one operation that deletes.
        `confirm(listing)` is asked once the listing is made; False leaves everything as it was.
        """
        from brainiac.exchange import forget as forget_mod

        return forget_mod.forget(self, what, now, dry_run, confirm)

    def check(
        self, text: str, now: dt.datetime | None = None, project: str | None = None
    ) -> CheckResult:
        """Compare a response with what the memory knows: its conflicts with current facts,
        and old values restated as current (docs/check.md). `now` dates "today", "tomorrow";
        in `project`, what a context there shows is what the response is held to: its own and
        the global memories, another project's when the response names it (docs/projects.md)."""
        when = clock.local(now) if now is not None else None
        scope = projects.Scope.of(project, self.config)
        if scope.project is None:
            return check_mod.check(self, text, when)
        from brainiac.guard.within import Within  # here: an unscoped check never loads it

        self.refresh()
        doc = self.short_term()
        others = projects.named(self.indexer.index.project_counts())
        names = [] if scope.isolate else project_search.named_in(text, others)
        within = Within(
            scope,
            self._event_in_scope(doc, scope),
            tuple(
                (p, self._event_in_scope(doc, dataclasses.replace(scope, project=p)))
                for p in names
                if p != scope.project
            ),
        )
        return check_mod.check(self, text, when, within)

    # -- reading -----------------------------------------------------------------------------
    def search(self, query: str, limit: int = 10, project: str | None = None) -> list[SearchResult]:
        """Notes and events matching `query`, best first; in `project`, scoped as a context is
        (projects.py): its own and the global first, another project's only when clearly
        relevant."""
        if limit < 1:
            raise VaultError(f"limit must be at least 1, got {limit}")
        self.refresh()
        scope = projects.Scope.of(project, self.config)
        hits = project_search.search(self.indexer.index, query, limit, scope)[:limit]
        return [SearchResult.from_hit(h) for h in hits]

    def short_term(self) -> stm.ShortTerm:
        """The parsed short-term document; re-read only when its stat changed (it is read on
        every context call and grows to thousands of lines between promotions)."""
        try:
            st = os.stat(self.vault.path(SHORT_TERM))
        except FileNotFoundError:
            return stm.parse("")
        key = stat_key(st)
        if self._stm_cache is None or self._stm_cache[0] != key:
            try:
                self._stm_cache = (key, stm.parse(self.vault.read(SHORT_TERM).text))
            except FileNotFoundError:
                return stm.parse("")
        return self._stm_cache[1]

    def _recent(self, doc: stm.ShortTerm, scope: projects.Scope) -> list[ev.Event]:
        """The recent-events window of a context (projects.recent), found once per parse of the
        short-term file and scope: it does not depend on the prompt, and in a project it is
        found by walking the log back past the other projects' newer events."""
        parsed, windows = self._recent_windows
        if parsed is not doc:
            windows = {}
            self._recent_windows = (doc, windows)
        key = (self.config.recent_events, scope)
        found = windows.get(key)
        if found is None:
            found = windows[key] = projects.recent(doc.events, key[0], scope)
        return list(found)

    def identity(self) -> str | None:
        """The Core Identity a context starts with; parsed again only when its file's stat
        changed (it is read on every context call and rarely edited)."""
        try:
            st = os.stat(self.vault.path(IDENTITY))
        except FileNotFoundError:
            return None
        except OSError:
            st = None  # reading it says what is wrong
        key = stat_key(st) if st else None
        cached = self._identity_cache
        if key is not None and cached is not None and cached[0] == key:
            return cached[1]
        try:
            note = parse_note(self.vault.read(IDENTITY).text, IDENTITY)
        except FileNotFoundError:
            return None
        except NoteParseError as exc:
            log.warning("%s", exc)  # not kept: warned again on every call until fixed
            return self.vault.read(IDENTITY).text
        identity = stm.strip_hints(note.body)
        if key is not None:
            self._identity_cache = (key, identity)
        return identity

    def context(
        self,
        prompt: str | None = None,
        budget: int | None = None,
        now: dt.datetime | None = None,
        reuse_ranking: bool = False,
        project: str | None = None,
        with_prompt: bool = True,
    ) -> Context:
        """The assembled working memory for `prompt` (shown in it only `with_prompt`), within
        `budget` tokens; in `project`, its memories first, the global ones too (docs/projects.md).

        `reuse_ranking` (the daemon, right after an edit): when the query is the same as last
        time, rank with the hits of that search instead of searching again. Excerpts are still
        read from the files, so an edited note shows at once; the daemon re-ranks when idle.
        """
        budget = ctx_mod.check_budget(self.config.budget if budget is None else budget)
        now = clock.local(now) if now is not None else clock.now()
        self.refresh()
        doc = self.short_term()
        scope = projects.Scope.of(project, self.config)
        recent = self._recent(doc, scope)
        query = prompt or self._implicit_query(doc, recent)
        limit = candidate_limit(self.config, budget, len(recent))
        # Feedback (words of the best hits added to the prompt's) finds memories said in other
        # words. Below `relevance_first_below` long-term memory is packed ahead of the recent
        # events, and the recent steps ranked with it at their rank (retrieve's
        # `recent_in_place`), so its guesses do not push out a recent step the prompt is about.
        feedback = bool(prompt)
        key = (query, limit, scope, feedback)
        last = self._last_search  # read once: the daemon's socket threads search too
        if reuse_ranking and last is not None and last[0] == key:
            hits = last[1]
        else:
            nearness = self._nearness(query, scope) if feedback else {}
            hits = (
                project_search.search(
                    self.indexer.index, query, limit, scope, feedback=feedback, nearness=nearness
                )
                if query.strip()
                else []
            )
            self._last_search = (key, hits)
        relevance_first = bool(prompt) and budget < self.config.relevance_first_below
        share = self.config.long_term_share if prompt else 0.0
        recent_ids = {e.id for e in recent}
        items = retrieve(
            self.vault,
            hits,
            query,
            self.config,
            now,
            exclude_events=recent_ids,
            budget=budget,
            notes=self._notes,
            recent_in_place=recent_ids if relevance_first else (),
            diversify=semantic.diversified if prompt and (semantic := self.semantic) else None,
        )
        identity = self.identity()
        scoped = self._scoped_sections(doc, scope)
        # Credentials a person wrote stay in their files but not in what goes to a model, the
        # working-memory file or an MCP client (masking.py); masked before packing, so the
        # budget counts what is shown.
        inputs = ctx_mod.Inputs(
            identity=_masked(identity) if identity is not None else None,
            prompt=_masked(prompt or "") if with_prompt else None,
            short_term=[
                (
                    title,
                    _masked(
                        marks.without_marks(
                            projects.without_shared_digest(
                                about_prompt(scoped[title], prompt), scope
                            )
                        )
                    ),
                )
                for title in stm.SECTIONS[:-1]
            ],
            recent=[_event_masked(e) for e in recent],
            long_term=(i.with_text(_masked) for i in items),
        )
        result = ctx_mod.assemble(
            inputs, budget, relevance_first=relevance_first, long_term_share=share
        )
        self._record_use(result.sources, now, for_prompt=bool(prompt))
        return Context(
            result.text, result.tokens, budget, result.sources, result.over_budget, result.warnings
        )

    def _scoped_sections(self, doc: stm.ShortTerm, scope: projects.Scope) -> dict[str, str]:
        """Each short-term section as a context in `scope` shows it (projects.scoped_digest),
        made once per scope while the document and the index's searcher stay the same: a
        context in a project would otherwise parse every fact line of every section each time,
        and a daemon asked from several projects (or from one and from no project) goes back
        and forth between scopes."""
        token = self.indexer.index.searcher_token()
        memo = self._scoped_memo  # read once: the daemon's socket threads ask contexts too
        fresh = memo is None or memo[0] is not doc or memo[1]() is not token
        by_scope = {} if memo is None or fresh else memo[2]
        sections = by_scope.get(scope)
        if sections is not None:
            return sections
        in_scope = self._event_in_scope(doc, scope)
        sections = {
            title: projects.scoped_digest(doc.section(title), scope, in_scope)
            for title in stm.SECTIONS[:-1]
        }
        # A new dict, never one another thread reads changed; in a vault of many projects the
        # scopes made first go. The searcher by a weak reference: an old one, closed, is not
        # kept alive by this.
        kept = [*by_scope.items()][-(_SCOPES_KEPT - 1) :]
        self._scoped_memo = (doc, weakref.ref(token), {**dict(kept), scope: sections})
        return sections

    def _event_in_scope(self, doc: stm.ShortTerm, scope: projects.Scope) -> Callable[[str], bool]:
        """Whether the event of an id is one a context in `scope` sees (projects.in_scope): by
        its line in the Event Log, else by the index (the events of the project and the global
        ones, read only when a short-term line names an event the log no longer holds)."""
        if scope.project is None:
            return lambda event_id: True  # unscoped, every event is seen (nothing is asked)
        logged = {e.id: e for e in doc.events}
        own: set[str] = set()
        read = False

        def check(event_id: str) -> bool:
            nonlocal read
            event = logged.get(event_id)
            if event is not None:
                return projects.in_scope(event, scope)
            if not read:
                keys = project_search.own_event_keys(self.indexer.index, scope) or ()
                own.update(k.rpartition("#")[2] for k in keys)
                read = True
            return event_id in own

        return check

    def _record_use(self, sources: Iterable[str], now: dt.datetime, for_prompt: bool) -> None:
        """Which notes the context used (feedback.py): here and now, or, in the daemon, after
        the answer has gone to the client (`record_later`)."""
        record = functools.partial(
            feedback_mod.record_use, self.locations.state, tuple(sources), now, for_prompt
        )

        if self.record_later is not None:
            self.record_later(record)
        else:
            record()

    # -- lifecycle jobs and feedback -----------------------------------------------------------
    def run_job(
        self, name: str, now: dt.datetime | None = None, dry_run: bool = False
    ) -> list[jobs_mod.JobReport]:
        """Run a job by name ("all": reflection, promotion, organization, in that order)."""
        names = list(job_table.LIFECYCLE) if name == "all" else [name]
        unknown = [n for n in names if n not in job_table.JOBS]
        if unknown:
            raise VaultError(
                f"no job {unknown[0]!r}; choose one of {', '.join(job_table.JOBS)} or all"
            )
        when = clock.local(now) if now is not None else clock.now()
        reports = []
        for n in names:
            job = job_table.JOBS[n]
            if job.needs_index_writer and not self.index_writes:
                holder = holder_of(self.locations.runtime)
                raise VaultError(
                    f"the daemon (pid {holder.pid if holder else '?'}) owns the index and runs "
                    f"`{n}` itself; stop it to run `{n}` by hand"
                )
            report = job_table.run(job, self, when, dry_run, self.locations.state)
            reports.append(report)
            if report.changed and not dry_run and self._syncs_here():
                self.indexer.sync(list(report.changed))
        return reports

    def feedback(self, delta: float, now: dt.datetime | None = None) -> list[str]:
        """Reinforce (+) or weaken (-) the notes of the last assembled context (docs/lifecycle.md):
        reinforcement += delta x learning_rate. Returns the notes changed."""
        when = clock.local(now) if now is not None else clock.now()
        changed = feedback_mod.reinforce(
            self.vault, self.locations.state, delta, self.config.learning_rate, when
        )
        if changed and self._syncs_here():
            self.indexer.sync(changed)
        return changed

    @staticmethod
    def _implicit_query(doc: stm.ShortTerm, recent: list[ev.Event]) -> str:
        """Without a prompt, what is on the agent's mind: working memory and the last events."""
        parts = [doc.section("Working Memory")]
        parts += [e.text for e in recent[-_QUERY_RECENT_EVENTS:]]
        return "\n".join(p for p in parts if p)


# Masking runs its patterns over every text a context shows; the identity, the short-term
# sections and the recent events are the same texts call after call, so each text's masked form
# is kept (masking depends on the text alone).
@functools.lru_cache(maxsize=1024)
def _masked(text: str) -> str:
    return masking.mask(text)[0]


def _event_masked(event: ev.Event) -> ev.Event:
    """`event` with its text masked; `event` itself when there was nothing to mask (a copy of
    each of a context's events and excerpts was a quarter of a millisecond; LongTermItem's
    `with_text` does the same for the excerpts)."""
    text = _masked(event.text)
    return event if text == event.text else dataclasses.replace(event, text=text)
