"""Organization: the daily care of long-term memory (docs/lifecycle.md, "Organization").

- Access: contexts record which notes they used (`access.py`); those times become `last_accessed`.
- Decay: strength x `decay_per_day` for every day since the later of the last access, update,
  reinforcement and previous decay (`decayed`), so running twice on one day decays once and a
  strength a person typed is the new starting point. `status: pinned` never decays. One run
  applies at most `decay.MAX_DECAY_DAYS_PER_RUN` days after the time the previous run applied
  (kept in the job's record), so a clock or a `--now` months ahead cannot archive every note at
  once; the days a jump left out are applied by the next runs, that many at a time, and nothing
  is lost (decay.py).
- Forgetting: a note below `archive_below` moves to `memory/archive/notes/` with `status: archived`,
  never deleted. It keeps its file name, so [[links]] to it still resolve (every link brainiac
  writes names a file, as Obsidian resolves links: `names.link`), and it stays searchable.
- Duplicates: active notes answering to one name are merged into the one with most sources; the
  other keeps its own text and becomes a redirect stub (`status: merged`, `redirect: "[[…]]"`).
- Self-repair: facts stated in a note's sources are applied to its Facts (superseded values kept
  with their dates); a person's value stands.
- Links: a note whose sources name another note links it under Related.
- Index notes: `memory/indexes/` Topics, Entities and Timeline, generated whole (`generated: true`
  and a callout saying so; not indexed).
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import os
from collections import defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING

from brainiac.core.errors import BrainiacError, NoteParseError
from brainiac.formats import events as ev
from brainiac.formats import ltm, marks
from brainiac.formats import note as notes
from brainiac.language import facts, observe
from brainiac.lifecycle.jobs import consolidate, decay, edits
from brainiac.lifecycle.jobs.edits import Outcome, update
from brainiac.store import access, projects, safe_io
from brainiac.store.names import (
    Entry,
    link,
    link_key,
    link_target,
    normalise,
    only_project,
    whole_names,
)
from brainiac.store.vault import ARCHIVE_DIR, INDEXES_DIR, LONG_TERM_DIR, Vault

if TYPE_CHECKING:
    from brainiac.lifecycle.jobs import JobReport
    from brainiac.search.memory_protocol import MemoryLike

ARCHIVED_NOTES_DIR = f"{ARCHIVE_DIR}/notes"


def organize(memory: MemoryLike, now: dt.datetime, dry_run: bool) -> JobReport:
    from brainiac.lifecycle.jobs import JobReport

    cfg = memory.config
    vault = memory.vault
    outcome = Outcome()
    said: list[str] = []
    accessed = access.fold(memory.locations.state, dry_run)
    decay_now, bounded = decay.decay_clock(memory.locations.state, now)
    if bounded is not None:
        said.append(bounded)
    memory.names.refresh(vault, memory.config.private_folders)
    merged = _merge_duplicates(memory, now, outcome, dry_run, said)
    if merged:
        memory.names.refresh(vault, memory.config.private_folders)
    merged |= _fold_stubs(memory, now, outcome, dry_run, said, merged)
    if merged:
        memory.names.refresh(vault, memory.config.private_folders)
    unlink = memory.names.private_targets()  # generated links to them go (a note made private)
    clocks = decay.project_clocks(memory, decay_now)
    run = _Run(memory, now, decay_now, clocks, accessed, merged, unlink, outcome, dry_run, said)
    run.gone |= merged
    # The notes that fade go first, and the links of the rest are found among the notes still
    # active after them: a name the archived note answered to now leads to the next note
    # answering to it, and linking the archived one instead would have the next run (a fresh
    # process reads every note) add that link: one run reaches the fixed point.
    entries = sorted(memory.names.entries(), key=lambda e: e.rel)
    fading = [e for e in entries if decay.will_fade(e, accessed.get(e.rel), run.clock_of(e), cfg)]
    for entry in fading:
        _care(run, entry)
    if run.archived:
        if not dry_run:
            memory.names.refresh(vault, memory.config.private_folders)
        run.tables.clear()
    # A note settled by an earlier run of this process that links a note gone now is linked
    # again: a name it was linked by may lead to another note (a fresh process reads them all).
    relink = run.gone_links()
    done = {e.rel for e in fading}
    for entry in entries:
        if entry.rel not in done:
            _care(run, entry, relink)
    archived = run.archived
    if archived:
        shown = ", ".join(f"[[{t}]]" for t in archived[:10])
        more = f" and {len(archived) - 10} more" if len(archived) > 10 else ""
        said.append(f"archived {len(archived)} faded note(s): {shown}{more}")
    if not dry_run:
        from brainiac.lifecycle.jobs import keep_extra

        access.done(memory.locations.state)
        keep_extra(memory.locations.state, "organization", decay.DECAY_CLOCK, decay_now.isoformat())
    memory.names.refresh(vault, memory.config.private_folders)
    write_indexes(memory, now, outcome, dry_run)
    if accessed:
        said.append(f"{len(accessed)} note(s) accessed since the last run")
    changed = [
        c
        for c in outcome.changed
        if not c.startswith((INDEXES_DIR, ARCHIVED_NOTES_DIR))  # a move counts once, as its source
    ]
    said.insert(0, f"{len(changed)} note(s) updated")
    if outcome.skipped:
        said.append("skipped: " + "; ".join(outcome.skipped))
    prefix = "dry run: " if dry_run else ""
    return JobReport(
        "organization",
        not outcome.skipped,
        prefix + "; ".join(said),
        tuple(outcome.changed),
        dry_run,
    )


@dataclasses.dataclass
class _Run:
    """What every note's care in one organization run shares."""

    memory: MemoryLike
    now: dt.datetime
    decay_now: dt.datetime
    clocks: dict[str | None, dt.datetime]  # decay.project_clocks
    accessed: dict[str, dt.datetime]
    merged: set[str]
    unlink: set[str]
    outcome: Outcome
    dry_run: bool
    said: list[str]
    archived: list[str] = dataclasses.field(default_factory=list)  # their titles
    # The paths of the notes this run archived or merged into another: a name they answered to
    # leads elsewhere now (`gone_links`), or nowhere.
    gone: set[str] = dataclasses.field(default_factory=set)
    # Project (None: global) -> the active names a note of it may link to (names.open_to).
    tables: dict[str | None, dict[str, Entry]] = dataclasses.field(default_factory=dict)

    def clock_of(self, entry: Entry) -> dt.datetime:
        """The time `entry`'s decay counts up to: its project's clock (a note of one project
        fades with that project's sessions), else this run's. One rule for the guess of what
        fades, the skip of a note with nothing due, and the decay written."""
        return self.clocks.get(only_project(entry), self.decay_now)

    def table(self, project: str | None) -> dict[str, Entry]:
        """The active names a note of `project` links by (names.open_to), without the notes
        this run archived or merged: a dry run, which moves nothing, links as the run would."""
        if project not in self.tables:
            self.tables[project] = self.memory.names.active(project, without=self.gone)
        return self.tables[project]

    def gone_links(self) -> set[str]:
        """What a link to each note this run archived or merged names (`link_key`)."""
        return {link_key(link_target(rel)) for rel in self.gone}


def _care(run: _Run, entry: Entry, relink: set[str] | frozenset[str] = frozenset()) -> None:
    """Access, decay, facts and Related links of one note, archived when it faded. `relink`:
    link keys (`link_key`) whose note went; a note linking one is read even when settled."""
    memory, vault, cfg = run.memory, run.memory.vault, run.memory.config
    settled, unlink = memory.names.organized, run.unlink
    rel = entry.rel
    if rel in run.merged or entry.status in ("merged", "archived") or entry.private:
        return  # a private note is its person's alone: brainiac does not write in it
    if (
        settled.get(rel) == entry.key
        and rel not in run.accessed
        and not decay.decay_due(entry, run.clock_of(entry), cfg.decay_per_day, cfg.archive_below)
        and not unlink.intersection(entry.links)
        and not relink.intersection(entry.links)
    ):
        return  # nothing new since the last run: skip the read (daily, 10,000 notes)
    try:
        text = vault.read(rel).text
    except (NoteParseError, FileNotFoundError):
        return
    note = ltm.parse(text, rel)
    if note.status in ("merged", "archived") or note.private:
        return  # (made private since the book read it)
    said_in = {projects.session_key(s) for s in note.sources if s.session}
    # A note of one project links the notes of its own and the global ones (names.open_to):
    # a link to another project's note would bring it into this one's contexts.
    only = _links_within(note.sources)
    decay_to = run.clock_of(entry)
    related = [
        link(e.rel, e.title)
        for e in memory.names.mentions(
            " ".join(s.text for s in note.sources), run.table(only), sessions=said_in
        )
        if e.rel != rel
    ]
    fact_notes: list[str] = []
    strength = [note.strength]  # after this run's decay, as the transform computes it

    def transform(text: str | None) -> str | None:
        if text is None:
            return None
        new = _touch_access(text, run.accessed.get(rel))
        new = decay.decayed(new, decay_to, cfg.decay_per_day, cfg.archive_below)
        parsed = ltm.parse(new, rel)
        strength[0] = parsed.strength
        new, changes = consolidate.apply_facts(new, parsed.sources)
        fact_notes[:] = [f"{c.key}: {c.old} → {c.new}" for c in changes if c.kind == "superseded"]
        new = consolidate.drop_related(new, unlink)
        return consolidate.add_related(new, related)

    update(vault, rel, transform, run.outcome, run.dry_run)
    if fact_notes:
        run.said.append(f"[[{note.title}]] facts changed: {', '.join(fact_notes)}")
    # The transform runs in a dry run too (only the write is skipped): the same decay rule.
    fading = strength[0] < cfg.archive_below and note.status not in decay.NEVER_DECAY
    if fading and _archive(vault, rel, run.now, run.outcome, run.dry_run):
        run.archived.append(note.title)
        run.gone.add(rel)
    elif not run.dry_run:
        with contextlib.suppress(OSError):
            st = os.stat(vault.path(rel))
            settled[rel] = (st.st_ino, st.st_size, st.st_mtime_ns)


def _links_within(sources: Sequence[ev.Event]) -> str | None:
    """The project whose notes a note may link besides the global ones: the one project its
    sources are all said in; None when some are global or of another project (the note is in
    each of their contexts, and links as a global one). Stricter than `only_project`, the
    project whose clock a note fades by, which leaves global sources out."""
    said_in = {s.project for s in sources}
    return next(iter(said_in)) if len(said_in) == 1 else None


def _touch_access(text: str, when: dt.datetime | None) -> str:
    if when is None:
        return text
    note = ltm.parse(text, "<note>")
    current = note.note.meta_time("last_accessed")
    if current is not None and current >= when:
        return text
    return notes.set_frontmatter_field(text, "last_accessed", when.isoformat(timespec="minutes"))


def _archive(vault: Vault, rel: str, now: dt.datetime, outcome: Outcome, dry_run: bool) -> bool:
    """Mark the note archived, then move it (one rename, never over an existing file)."""
    name = rel.rsplit("/", 1)[-1]
    target = f"{ARCHIVED_NOTES_DIR}/{name}"
    if dry_run:
        outcome.note(rel)
        return True

    def mark_archived(text: str | None) -> str | None:
        if text is None:
            return None
        text = notes.set_frontmatter_field(text, "status", "archived")
        return notes.set_frontmatter_field(text, "archived", now.date().isoformat())

    update(vault, rel, mark_archived, outcome, False)
    n = 2
    while vault.path(target).exists():
        stem = name[:-3]
        target = f"{ARCHIVED_NOTES_DIR}/{stem} ({n}).md"
        n += 1
    vault.path(ARCHIVED_NOTES_DIR).mkdir(mode=0o700, parents=True, exist_ok=True)
    if not safe_io.rename_noreplace(vault.path(rel), vault.path(target)):
        outcome.skipped.append(f"{rel}: could not move to {target}")
        return False
    with contextlib.suppress(OSError, BrainiacError):  # only for `jobs log --diff`
        moved = vault.read(target).text
        edits.record(rel, moved, None)
        edits.record(target, None, moved)
    outcome.note(target)
    return True


def _merge_duplicates(
    memory: MemoryLike, now: dt.datetime, outcome: Outcome, dry_run: bool, said: list[str]
) -> set[str]:
    """Merge active notes that answer to the same name; returns the paths turned into stubs."""
    # By name within a project: two projects' notes about a "Max" are each its project's memory,
    # as in a vault of its own; merged, one project's events would come into the other's
    # contexts. A global note, or one of several projects, is merged with its like.
    by_name: dict[tuple[str, str], list[Entry]] = defaultdict(list)
    for entry in memory.names.entries():
        # Never a private note, either way: merged into a public one its events would be
        # published; a public one merged into it would vanish from search and context.
        public = entry.status in ("active", "pinned", "") and not entry.private
        if public and entry.rel.startswith(LONG_TERM_DIR + "/"):
            for name in entry.names:
                by_name[name, only_project(entry) or ""].append(entry)
    stubs: set[str] = set()
    for (name, _project), entries in sorted(by_name.items()):
        live = [e for e in entries if e.rel not in stubs]
        if len(live) < 2:
            continue
        live.sort(key=lambda e: (-e.sources, e.rel))
        keep = live[0]
        for dup in live[1:]:
            if name not in whole_names(dup) or name not in whole_names(keep):
                # A first name alone tells no one person: a chat's Anna is not Anna Berg.
                said.append(
                    f"possible duplicates: [[{dup.title}]] and [[{keep.title}]] (both named "
                    f"{name!r}); left as they are because a first name alone is not one person"
                )
                continue
            if not _brainiacs_own(memory, dup.rel):
                said.append(
                    f"possible duplicates: [[{dup.title}]] and [[{keep.title}]] (both named "
                    f"{name!r}); left as they are because a person wrote in them"
                )
                continue
            if _merge(memory, dup, keep, now, outcome, dry_run):
                stubs.add(dup.rel)
                said.append(f"merged [[{dup.title}]] into [[{keep.title}]] (both named {name!r})")
    return stubs


def _fold_stubs(
    memory: MemoryLike,
    now: dt.datetime,
    outcome: Outcome,
    dry_run: bool,
    said: list[str],
    merged: set[str],
) -> set[str]:
    """Entity notes of brainiac's own holding fewer events than a new one is founded with (an
    older version founded them on two mentions): their events go back to the note holding most
    of their session, where what was said around them is; the stub redirects there."""
    from brainiac.lifecycle.jobs.plan import MIN_EVENTS_FOR_NEW_ENTITY

    entries = [
        e
        for e in memory.names.entries()
        if e.rel not in merged
        and e.status in ("active", "")
        and not e.private
        and e.rel.startswith(LONG_TERM_DIR + "/")
    ]
    folded: set[str] = set()
    for stub in sorted(entries, key=lambda e: e.rel):
        if "entity" not in stub.tags or not 0 < stub.sources < MIN_EVENTS_FOR_NEW_ENTITY:
            continue
        homes = [
            e
            for e in entries
            if e.rel != stub.rel
            and e.rel not in folded
            and "entity" not in e.tags
            and set(stub.sessions) & set(e.sessions)
        ]
        if not homes or not _brainiacs_own(memory, stub.rel):
            continue
        keep = max(homes, key=lambda e: (len(set(stub.sessions) & set(e.sessions)), e.sources))
        if _merge(memory, stub, keep, now, outcome, dry_run, alias=False):
            folded.add(stub.rel)
            said.append(f"folded [[{stub.title}]] ({stub.sources} event(s)) into [[{keep.title}]]")
    return folded


def _brainiacs_own(memory: MemoryLike, rel: str) -> bool:
    """Whether a note holds only what brainiac wrote (events, facts from events, generated
    lines), so merging it away loses no person's words. A person's note is never merged."""
    try:
        note = ltm.parse(memory.vault.read(rel).text, rel)
    except (NoteParseError, FileNotFoundError):
        return False
    lines = note.note.lines
    sources = note.note.section(ltm.SOURCES)
    source_lines = range(sources.heading_line, sources.end_line) if sources else range(0)
    fact_lines: set[int] = set()
    facts_section = note.note.section(ltm.FACTS)
    if facts_section is not None:
        for fl in facts.parse(note.note.section_text(ltm.FACTS) or ""):
            if fl.fact.source:
                fact_lines.update(
                    range(
                        facts_section.heading_line + 1 + fl.first,
                        facts_section.heading_line + 2 + fl.last,
                    )
                )
    # An observation naming one of the note's events goes with it on a merge, as it is.
    said = note.note.section(observe.SECTION)
    held = ev.ids(note.sources)
    said_lines = {
        i
        for i in (range(said.heading_line + 1, said.end_line) if said else range(0))
        if observe.sources(lines[i]) & held
    }
    for i in range(note.note.body_line, len(lines)):
        line = lines[i].strip()
        if not line or line.startswith("#") or i in source_lines or i in fact_lines:
            continue
        if i in said_lines:
            continue
        if not marks.is_generated(line):
            return False
    return bool(note.sources)


def _merge(
    memory: MemoryLike,
    dup: Entry,
    keep: Entry,
    now: dt.datetime,
    outcome: Outcome,
    dry_run: bool,
    alias: bool = True,
) -> bool:
    """Moves `dup`'s events into `keep`, which answers to `dup`'s names too when `alias`, and
    leaves `dup` a stub redirecting there."""
    vault = memory.vault
    try:
        dup_note = ltm.parse(vault.read(dup.rel).text, dup.rel)
    except (NoteParseError, FileNotFoundError):
        return False
    moving = dup_note.sources
    aliases = [dup_note.title, *dup_note.aliases]

    def into_keep(text: str | None) -> str | None:
        if text is None:
            return None
        # The duplicate's observations go with its events, a person's edits of them kept.
        observed = observe.by_source(dup_note.section(observe.SECTION))
        new, _ = consolidate.add_events(text, moving, now, 0.0, observed=observed)
        note = ltm.parse(new, keep.rel)
        have = {normalise(a) for a in [note.title, *note.aliases]}
        extra = [a for a in aliases if normalise(a) not in have] if alias else []
        if extra:
            items = ", ".join(consolidate.yaml_item(a) for a in [*note.aliases, *extra])
            new = notes.set_frontmatter_field(new, "aliases", f"[{items}]")
        strength = max(note.strength, dup_note.strength)
        return notes.set_frontmatter_field(new, "strength", notes.yaml_number(strength, 4))

    skipped_before = len(outcome.skipped)
    update(vault, keep.rel, into_keep, outcome, dry_run)
    if len(outcome.skipped) > skipped_before:
        return False  # the events stay where they are; the next run tries again
    moved_ids = ev.ids(moving)
    to_keep = link(keep.rel, keep.title)

    def into_stub(text: str | None) -> str | None:
        if text is None:
            return None
        new = _without_sources(text, moved_ids)
        said = notes.parse(new, dup.rel).section_text(observe.SECTION)
        if said is not None and observe.sources(said) & moved_ids:
            new = notes.replace_section(new, observe.SECTION, observe.without(said, moved_ids))
        new = notes.set_frontmatter_field(new, "status", "merged")
        # A text property holding a quoted [[link]]: Obsidian shows and follows it as a link.
        new = notes.set_frontmatter_field(new, "redirect", consolidate.yaml_item(to_keep))
        line = marks.mark(f"Merged into {to_keep} on {now.date().isoformat()}.")
        body = notes.parse(new, dup.rel).section_text(ltm.SUMMARY) or ""
        if line not in body:
            new = notes.replace_section(new, ltm.SUMMARY, line + "\n" + body.lstrip("\n"))
        return new

    update(vault, dup.rel, into_stub, outcome, dry_run)
    return True


def _without_sources(text: str, remove: set[str]) -> str:
    note = ltm.parse(text, "<note>")
    lines = note.note.lines
    drop: set[int] = set()
    for loc in note.located_sources():
        if loc.event.id in remove:
            drop.update(range(loc.first_line, loc.last_line + 1))
    return "".join(line for i, line in enumerate(lines) if i not in drop)


# -- index notes (topics, entities, timeline) ----------------------------------------------------

_CALLOUT = (
    "> [!info] Generated by brainiac\n"
    "> The organization job replaces this page whole on every run, so edits here are lost. Edit "
    "the notes it lists, in memory/long_term/, instead.\n"
)


def write_indexes(memory: MemoryLike, now: dt.datetime, outcome: Outcome, dry_run: bool) -> None:
    vault = memory.vault
    # (sort key, line) pairs: pages list notes by title, which a [[stem|Title]] link shows.
    topics: dict[str, list[tuple[str, str]]] = defaultdict(list)
    entities: list[tuple[str, str]] = []
    timeline: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for entry in memory.names.entries():
        if entry.status == "merged" or entry.private:
            continue
        to_note = link(entry.rel, entry.title)
        by_title = entry.title.casefold()
        for tag in entry.tags or ("untagged",):
            topics[tag].append((by_title, to_note))
        if "entity" in entry.tags or entry.aliases:
            also = f" (also: {', '.join(entry.aliases)})" if entry.aliases else ""
            entities.append((by_title, to_note + also))
        if entry.created is not None:
            day = f"{entry.created:%Y-%m-%d}"
            timeline[f"{entry.created:%Y-%m}"].append((day + by_title, f"{day} {to_note}"))
    pages = {
        "Topics": "\n".join(f"## {tag}\n" + _list(items) for tag, items in sorted(topics.items())),
        "Entities": _list(entities),
        "Timeline": "\n".join(
            f"## {month}\n" + _list(items)
            for month, items in sorted(timeline.items(), reverse=True)
        ),
    }
    for title, body in pages.items():
        text = f"---\ntitle: {title}\ngenerated: true\ntags: [index]\n---\n{_CALLOUT}\n{body}"
        rel = f"{INDEXES_DIR}/{title}.md"

        def replace(current: str | None, text: str = text) -> str | None:
            return None if current == text else text

        if not dry_run:
            # A generated page: a hand edit is not kept aside (the callout says so), but a
            # concurrent save is still never overwritten mid-flight (compare-and-swap).
            update(vault, rel, replace, outcome, False)


def _list(items: list[tuple[str, str]]) -> str:
    return "".join(f"- {line}\n" for _, line in sorted(items))
