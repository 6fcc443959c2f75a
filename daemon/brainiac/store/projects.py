"""Projects: one memory for every project an agent works in, with recall scoped to the current one.

An event belongs to a project when its line says so (`**user** (session) [atlas]: ...`,
events.py); a line without one is global, as every line written before projects existed. A
long-term note lists the projects of its sources in its frontmatter (`projects: [atlas]`,
jobs/consolidate.py), which Obsidian can filter on. Where an agent works is a folder (the hook
payload's `cwd`): `[projects] paths` maps folders to names, and otherwise the nearest git root's
folder name is the project (`for_directory`).

What a context or a search in project P may use (project_search.py, `in_scope`), with the reasons:

- P's own memories, and global ones (events and notes without a project, and the core
  identity, which is never in the index): global memory is what the person keeps for every
  project, so it is in every project, ranked as P's own, on the statistics of those memories
  alone (a project ranks as it would in a vault of its own).
- What is about the person, wherever it was said: a statement by the `user` role of what they
  prefer, like or are called (`about_person`) is indexed as global as well as P's, so a
  preference stated in one project reaches all of them. Other speakers' statements (a
  conversation's participants, the assistant) are not the person's.
- Another project's memories only when clearly relevant: when the prompt names that project,
  or when such a memory matches the prompt at least `CLEARLY` (1.5) times as well as the best of
  P's and the global ones (BM25, P's statistics for both searches), that is, the
  prompt is plainly about something only the other project knows. At most `MAX_OTHER` of them,
  ranked at `OTHER_WEIGHT` of their score, so P's own come first. With `[projects] isolate =
  true` never.

Without a project (the CLI without `--project`, a hook outside any git repository), recall is
what it always was: every memory, unscoped.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from brainiac.formats import events as ev
from brainiac.formats import marks

if TYPE_CHECKING:
    from brainiac.store.config import Config

GLOBAL = "*"  # the index's term for a memory every project sees (no project name can be "*")
PERSON_ROLE = "user"  # whose statements about themselves are global (the memory's owner)

# A statement of the person about themselves: what they prefer, like, dislike, are called.
_PERSONAL_RE = re.compile(
    r"\bI\s+(?:(?:really|always|usually|generally|much|strongly|do|also|still)\s+)*"
    r"(?:prefer|like|love|hate|dislike|enjoy|can't stand|cannot stand)\b"
    r"|\bI(?:'d| would) (?:rather|prefer)\b"
    r"|\bmy (?:name|pronouns|preferences?|favou?rite|birthday)\b"
    r"|\bcall me\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Scope:
    """Where a context or a search is asked from: a project (None: unscoped) and its rule."""

    project: str | None = None
    isolate: bool = False

    @classmethod
    def of(cls, project: str | None, cfg: Config) -> Scope:
        return cls(ev.clean_project(project), cfg.projects_isolate)


# -- which project -------------------------------------------------------------------------------
def for_directory(cwd: str | os.PathLike[str] | None, cfg: Config) -> str | None:
    """The project of a working folder: the deepest `[projects] paths` folder that holds it,
    else the name of the nearest folder above it with a `.git` (a repository or a worktree),
    else None (global)."""
    if not cwd:
        return None
    where = Path(os.path.abspath(os.path.expanduser(os.fspath(cwd))))
    configured = configured_project(where, cfg.project_paths)
    if configured is not None:
        return configured
    for folder in (where, *where.parents):
        if folder.parent == folder:
            break  # `/` itself is no project
        if (folder / ".git").exists():
            return ev.clean_project(folder.name)
    return None


def configured_project(where: Path, paths: Iterable[tuple[str, str]]) -> str | None:
    best: tuple[int, str] | None = None
    for folder, name in paths:
        root = Path(os.path.abspath(os.path.expanduser(folder)))
        if where == root or root in where.parents:
            depth = len(root.parts)
            if best is None or depth > best[0]:
                best = (depth, name)
    return ev.clean_project(best[1]) if best else None


# -- what a memory belongs to ------------------------------------------------------------------
def about_person(role: str, text: str) -> bool:
    return role.casefold() == PERSON_ROLE and _PERSONAL_RE.search(text) is not None


def event_terms(event: ev.Event) -> tuple[str, ...]:
    """The scopes an event is found in: its project (and GLOBAL too when it is about the
    person), or GLOBAL alone without a project."""
    if not event.project:
        return (GLOBAL,)
    if about_person(event.role, event.text):
        return (event.project, GLOBAL)
    return (event.project,)


def note_terms(projects: Sequence[str]) -> tuple[str, ...]:
    names = tuple(dict.fromkeys(p for p in (ev.clean_project(x) for x in projects) if p))
    return names or (GLOBAL,)


def named(terms: Iterable[str]) -> list[str]:
    """The project names among index terms (GLOBAL left out)."""
    return [t for t in terms if t and t != GLOBAL]


def session_key(event: ev.Event) -> str:
    """What tells a session apart (promotion keeps one together): its label, within its project
    (the label alone for a global event, as before projects)."""
    session = event.session or ""
    return f"{session}\x1f{event.project}" if session and event.project else session


def group_key(event: ev.Event) -> str:
    """What promotion keeps together in one note, run after run: a session (`session_key`), or,
    for an event said outside any session, its day within its project; "" for an undated line
    outside a session (it has no day to join). The day's key starts with a character no session
    label does (clean_session strips it as white space), so it never names a session."""
    key = session_key(event)
    if key or event.at is None:
        return key
    day = f"\x1eday {event.at.date().isoformat()}"
    return f"{day}\x1f{event.project}" if event.project else day


def merged(existing: Iterable[str], events: Iterable[ev.Event]) -> list[str]:
    """A note's `projects` after events were added: what it listed, then its new sources'."""
    names = [p for p in (ev.clean_project(x) for x in existing) if p]
    names += [e.project for e in events if e.project]
    return list(dict.fromkeys(names))


# -- recall --------------------------------------------------------------------------------------
def in_scope(event: ev.Event, scope: Scope) -> bool:
    """Whether a recent event of the log is shown in a context for `scope`: the recent window is
    chosen by time, not relevance, so another project's events have no claim on it."""
    if scope.project is None or not event.project or event.project == scope.project:
        return True
    return about_person(event.role, event.text)


def recent(events: Sequence[ev.Event], n: int, scope: Scope) -> list[ev.Event]:
    """The recent-events window of a context: the newest `n` events of the log, or in a project
    the newest `n` of those `in_scope` (another project's newer events do not push them out)."""
    if not n:
        return []
    if scope.project is None:
        return list(events[-n:])
    found: list[ev.Event] = []
    for e in reversed(events):  # from the newest: a long log is not read past the window
        if in_scope(e, scope):
            found.append(e)
            if len(found) == n:
                break
    return found[::-1]


def past_window(events: Sequence[ev.Event], window: int) -> list[ev.Event]:
    """The events promotion takes out of the log: each project keeps its newest `window` events
    as its short-term memory, and the global events theirs (a vault without projects: the newest
    `window` of the log, as always). So a project's last steps are still in its recent window
    when the agent comes back to it after working in another."""
    if not window:
        return list(events)
    kept: set[str] = set()
    seen: dict[str | None, int] = {}
    for e in reversed(events):
        if seen.get(e.project, 0) < window:
            seen[e.project] = seen.get(e.project, 0) + 1
            kept.add(e.id)
    return [e for e in events if e.id not in kept]


def without_shared_digest(section_text: str, scope: Scope) -> str:
    """A short-term section in an isolated project: the lines a person wrote. The generated ones
    (reflection's summary, goals and tasks) digest the whole log, every project's events in it,
    so isolation cannot keep them."""
    if scope.project is None or not scope.isolate:
        return section_text
    return "".join(
        line for line in section_text.splitlines(keepends=True) if not marks.is_generated(line)
    )


# The project a generated short-term line digests, after its text: `- 12 recent events ... [atlas]`.
_TAG_RE = re.compile(r"\s\[(?P<project>[^\[\]\s]+)\]$")


def digest_groups(events: Sequence[ev.Event]) -> dict[str | None, list[ev.Event]]:
    """The events each short-term digest (reflection's summary, working memory, goals, tasks) is
    made of: in a log without projects, every event, as always (None); else each project's own
    events with the global ones (what a context in it sees), and the global events alone (None).
    A project's digest is then the one it would have in a vault of its own."""
    names = list(dict.fromkeys(e.project for e in events if e.project))
    if not names:
        return {None: list(events)} if events else {}
    groups: dict[str | None, list[ev.Event]] = {}
    global_only = [e for e in events if not e.project]
    if global_only:
        groups[None] = global_only
    for name in sorted(names):
        groups[name] = [e for e in events if e.project in (name, None)]
    return groups


def tagged(line: str, project: str | None) -> str:
    """A generated short-term line of `project`'s digest: the name after it, in brackets (a
    line of the global digest, or of a vault without projects, has none)."""
    return f"{line} [{project}]" if project else line


def tag_of(line: str) -> tuple[str, str | None]:
    """A generated line's text without its project, and the project (None: global)."""
    m = _TAG_RE.search(line)
    return (line[: m.start()], m.group("project")) if m else (line, None)


def scoped_digest(section_text: str, scope: Scope, event_in_scope: Callable[[str], bool]) -> str:
    """A short-term section for a context in `scope`: another project's digest lines and the
    facts another project's events stated left out (they are its memories, which come in only
    when the prompt is plainly about them, by search), the project's own digest lines as a vault
    of its own would have them (without the name, still marked as generated). Unscoped, all."""
    if scope.project is None:
        return section_text
    # Here, not at the top: a context without a project (the hook's) never loads the parser.
    from brainiac.language import facts

    lines = section_text.split("\n")
    dropped: set[int] = set()
    for fl in facts.parse(section_text):
        source = fl.fact.source
        if source and not event_in_scope(source):
            dropped.update(range(fl.first, fl.last + 1))
    out = []
    for i, line in enumerate(lines):
        if i in dropped:
            continue
        if marks.is_generated(line):
            text, project = tag_of(marks.unmark(line))
            if project is not None:
                if project != scope.project:
                    continue
                line = marks.mark(text)
        out.append(line)
    return "\n".join(out)


def counts(terms: Mapping[str, int]) -> dict[str, int]:
    """Documents per project name (the index's term counts), global under "(global)"."""
    out = {("(global)" if t == GLOBAL else t): n for t, n in terms.items()}
    return dict(sorted(out.items()))
