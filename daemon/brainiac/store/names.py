"""Which long-term note a name refers to: every note's title and aliases, looked up in text.

Promotion uses it to send an event to the note of the person, project or topic it mentions, and
organization to find duplicates (two notes answering to one name) and to link related notes. The
book is kept between job runs and re-reads only the notes whose stat changed, so a daily pass over
10,000 notes does not parse 10,000 files.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import stat
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from brainiac.core.errors import NoteParseError
from brainiac.formats import ltm
from brainiac.store import privacy, projects
from brainiac.store.vault import LONG_TERM_DIR, Vault, is_conflict_copy

_MAX_NAME_WORDS = 6
_WORD_RE = re.compile(r"[\w][\w'’.-]*")


def normalise(name: str) -> str:
    """Lowercase words, possessive and edge punctuation dropped: "Anna's" -> "anna"."""
    words = [w.strip(".-'’") for w in _WORD_RE.findall(name.lower())]
    words = [w[:-2] if w.endswith(("'s", "’s")) else w for w in words]
    return " ".join(w for w in words if w)


@dataclass(frozen=True)
class Entry:
    rel: str
    title: str
    names: tuple[str, ...]  # normalised title and aliases
    status: str
    sources: int  # how many events the note holds
    fact_keys: tuple[str, ...] = ()
    # What organization needs without re-reading the file:
    key: tuple[int, int, int] = (0, 0, 0)  # inode, size, mtime_ns when read
    strength: float = ltm.DEFAULT_STRENGTH
    decay_start: dt.datetime | None = None
    aliases: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    created: dt.datetime | None = None
    private: bool = False
    # The sessions its events come from, and the days of those said outside a session
    # (projects.group_key): what promotion adds to the note again.
    sessions: tuple[str, ...] = ()
    links: tuple[str, ...] = ()  # what its [[links]] name (link_key)
    # Of a note promotion made from a conversation (tagged `session`): the names its events
    # say mid-sentence (normalised), so a name said again in a later session finds the events
    # that said it before without reading every note (plan.py: a name in two sessions).
    said: tuple[str, ...] = ()


def projects_of(entry: Entry) -> set[str]:
    """The projects whose events the note holds (by the sessions and days they were said in)."""
    return {k.partition("\x1f")[2] for k in entry.sessions} - {""}


def only_project(entry: Entry) -> str | None:
    """The one project a note holds events of; None for a global note or one of several."""
    said_in = projects_of(entry)
    return next(iter(said_in)) if len(said_in) == 1 else None


def open_to(entry: Entry, project: str) -> bool:
    """Whether an event of `project` may be filed in the note: a global one (no source in a
    project: a person's note, the template's), or one that holds `project`'s events. Another
    project's note is its memory: an event filed there would bring it into this project's
    contexts (docs/projects.md), so a name another project's note is about is this project's
    own note's, as in a vault of its own."""
    said_in = projects_of(entry)
    return not said_in or project in said_in


class NameBook:
    def __init__(self) -> None:
        self._entries: dict[str, tuple[tuple[int, int, int], Entry]] = {}
        self._private_folders: tuple[str, ...] = ()
        self._refused: set[str] = set()  # paths privacy.refusal turned down at the last refresh
        # Organization's memory of the notes it has settled (their stat when it last looked),
        # so a daily run reads only the notes that changed, were used or are due to decay.
        self.organized: dict[str, tuple[int, int, int]] = {}

    def refresh(
        self, vault: Vault, private_folders: Iterable[str], under: str = LONG_TERM_DIR
    ) -> None:
        """Re-read the notes below `under` that changed. A note in a private folder, or a symlink
        that leads to one or to anything brainiac does not read (privacy.refusal), is not in the
        book at all: no event is routed to it, nothing merged with it or linked to it."""
        folders = tuple(private_folders)
        if folders != self._private_folders:
            self._entries.clear()  # the setting changed: which notes are private is decided again
            self._private_folders = folders
        base = vault.path(under)
        # The walk never enters a linked folder, so a note passes through a link only if it is
        # one or `under` itself is reached through one; saves a stat per folder per note.
        base_linked = os.path.realpath(base) != os.path.abspath(base)
        seen: set[str] = set()
        self._refused = set()
        # String paths and one lstat per note (a stat only through a link): pathlib's joins
        # would be most of a no-change refresh (benchmarks/agent_tools.py, list_notes).
        root = str(vault.root) + os.sep
        for rel in vault.markdown_files(under):
            if is_conflict_copy(rel):
                continue  # a sync tool's copy: reported by the daemon, never touched by a job
            full = root + rel
            try:
                st = os.lstat(full)
            except OSError:
                continue
            is_link = stat.S_ISLNK(st.st_mode)
            linked = base_linked or is_link
            if privacy.refusal(vault, rel, folders, linked) is not None:
                self._refused.add(rel)
                continue
            seen.add(rel)
            if is_link:
                try:
                    st = os.stat(full)
                except OSError:
                    continue
            key = (st.st_ino, st.st_size, st.st_mtime_ns)
            cached = self._entries.get(rel)
            if cached is not None and cached[0] == key:
                continue
            try:
                self.add(rel, vault.read(rel).text, key)
            except (NoteParseError, FileNotFoundError):
                self._entries.pop(rel, None)
        for rel in [r for r in self._entries if r not in seen]:
            del self._entries[rel]

    def add(self, rel: str, text: str, key: tuple[int, int, int] = (0, 0, 0)) -> Entry:
        # Here, not at import: retrieval links to notes with `link` on every context call, and
        # the fact parser's imports are for the jobs that read notes' names.
        from brainiac.language import facts

        note = ltm.parse(text, rel)
        names = [normalise(n) for n in [note.title, *note.aliases]]
        entry = Entry(
            rel,
            note.title,
            tuple(dict.fromkeys(n for n in names if n)),
            note.status,
            len(note.located_sources()),
            tuple(facts.current(note.section(ltm.FACTS))),
            key,
            note.strength,
            note.decay_start,
            tuple(note.aliases),
            tuple(note.tags),
            note.note.meta_time("created") or note.last_touched,
            note.private,
            tuple(k for k in dict.fromkeys(map(projects.group_key, note.sources)) if k),
            tuple(dict.fromkeys(link_key(t) for t in note.links)),
            _said(note) if "session" in note.tags else (),
        )
        self._entries[rel] = (key, entry)
        return entry

    def forget(self, rel: str) -> None:
        self._entries.pop(rel, None)

    def entries(self) -> list[Entry]:
        return [e for _, e in self._entries.values()]

    def get(self, rel: str) -> Entry | None:
        cached = self._entries.get(rel)
        return cached[1] if cached else None

    def active(self, project: str | None = None, without: Collection[str] = ()) -> dict[str, Entry]:
        """Normalised name -> the active note answering to it: the one titled so, else the one
        with most sources ("Anna" is the note titled Anna before Anna Berg's alias). With a
        `project`, among the notes an event of it may join (`open_to`). `without`: the paths
        of notes taken as gone (a dry run's archived and merged notes, still in the book).

        A private note answers to no name: an event naming its title or an alias must not be
        routed into it (it would vanish from search), nor a public note link it."""
        out: dict[str, Entry] = {}
        for entry in sorted(self.entries(), key=lambda e: (-e.sources, e.rel)):
            if entry.status not in ("active", "pinned", "") or entry.private:
                continue
            if entry.rel in without:
                continue
            if project is not None and not open_to(entry, project):
                continue
            for name in entry.names:
                held = out.get(name)
                if held is None or (name == entry.names[0] and held.names[0] != name):
                    out[name] = entry
        return out

    def private_targets(self) -> set[str]:
        """What a link to each private note names (`link_key`): the private notes of the book
        and the ones it leaves out (private folders). A name a public note has too is left out:
        that link may mean the public note."""
        private = {link_key(link_target(e.rel)) for e in self.entries() if e.private}
        private |= {link_key(link_target(rel)) for rel in self._refused}
        return private - {link_key(link_target(e.rel)) for e in self.entries() if not e.private}

    def mentions(
        self,
        text: str,
        table: dict[str, Entry] | None = None,
        sessions: Collection[str] = (),
    ) -> list[Entry]:
        """The notes whose names occur in `text` (whole words), longest name first, then by
        first occurrence.

        A note about a person named by their first name alone ("Anna" for the note Anna Berg)
        is one only when more than the first name matches: `text` also names a note it links
        to ("Anna moved the Atlas deadline"), or the note already holds events of one of
        `sessions` (the sessions `text` was said in). A chat's Anna, Deborah's neighbour, is not
        the template's Anna Berg."""
        table = self.active() if table is None else table
        words = normalise(text).split()
        found: dict[str, tuple[int, int, Entry]] = {}
        whole: set[str] = set()  # the notes named by more than a first name
        for i in range(len(words)):
            for n in range(min(_MAX_NAME_WORDS, len(words) - i), 0, -1):
                name = " ".join(words[i : i + n])
                entry = table.get(name)
                if entry is None:
                    continue
                if not _first_name_of(name, entry):
                    whole.add(entry.rel)
                if entry.rel not in found:
                    found[entry.rel] = (-n, i, entry)
        named = {link_key(link_target(rel)) for rel in whole}
        kept = [
            (length, at, entry)
            for length, at, entry in found.values()
            if entry.rel in whole
            or named.intersection(entry.links)
            or set(sessions).intersection(entry.sessions)
        ]
        return [e for _, _, e in sorted(kept, key=lambda t: (t[0], t[1]))]


def _first_name_of(name: str, entry: Entry) -> bool:
    """Whether `name` is only the first word of the note's title ("anna" of Anna Berg)."""
    title = entry.names[0].split() if entry.names else []
    return len(title) > 1 and name == title[0]


def whole_names(entry: Entry) -> tuple[str, ...]:
    """The names a note answers to on their own: its title and aliases, less a first name."""
    return tuple(n for n in entry.names if not _first_name_of(n, entry))


def filename_for(title: str, taken: Iterable[str]) -> str:
    """A note file name from its title, unique among `taken` (compared ignoring case).

    Obsidian resolves `[[name]]` by file name anywhere in the vault, so `taken` should hold every
    Markdown file name in the vault (`markdown_names`), not only the long-term folder's: a new
    note named like an archived one would make links to either ambiguous.
    """
    base = re.sub(r'[\\/:*?"<>|#^\[\]]', " ", title)
    base = " ".join(base.split()).strip(". ") or "Untitled"
    base = base[:80]
    taken_lower = {t.lower() for t in taken}
    name, n = f"{base}.md", 2
    while name.lower() in taken_lower:
        name, n = f"{base} ({n}).md", n + 1
    return name


def markdown_names(vault: Vault) -> set[str]:
    """Every Markdown file name in the vault (lowercase), generated and excluded folders included:
    Obsidian links by file name across all of them, whatever brainiac reads."""
    names: set[str] = set()
    stack = [str(vault.root)]
    while stack:
        try:
            with os.scandir(stack.pop()) as it:
                entries = list(it)
        except OSError:
            continue
        for entry in entries:
            if entry.name.startswith("."):
                continue  # .obsidian/, .trash/, .git/: Obsidian does not link into them either
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                    continue
            except OSError:
                continue
            if entry.name.endswith(".md"):
                names.add(entry.name.lower())
    return names


def link(rel: str, title: str) -> str:
    """A [[wikilink]] to the note at `rel` that Obsidian resolves: its file name without `.md`
    (Obsidian does not resolve links through `title` or `aliases`), showing the title when the
    two differ: `[[anna-berg|Anna Berg]]`, `[[Marco]]`.

    Links name the file, not its folder, so they keep resolving when organization moves a faded
    note to the archive under the same name.
    """
    target = link_target(rel)
    # A title cannot close the link or start a second alias inside the shown text.
    shown = " ".join(title.replace("[", "(").replace("]", ")").replace("|", "-").split())
    return f"[[{target}]]" if not shown or shown == target else f"[[{target}|{shown}]]"


def link_key(target: str) -> str:
    """A link target as Obsidian matches it: by its last part (a path link too), ignoring case."""
    return target.rsplit("/", 1)[-1].casefold().strip()


def link_target(rel: str) -> str:
    """What a wikilink names for the file at `rel`: its file name without `.md`."""
    name = rel.rsplit("/", 1)[-1]
    return name[:-3] if name.endswith(".md") else name


def _said(note: ltm.LongTermNote) -> tuple[str, ...]:
    """The names a note's events say mid-sentence, normalised (mentions.confirmed_names)."""
    from brainiac.language import mentions

    return tuple(sorted(mentions.confirmed_names([e.text for e in note.sources], normalise)))
