"""The long-term notes a client outside brainiac lists, reads and replaces (the MCP server's
`list_notes`, `update_note` and `brainiac://note/{+path}`): which notes it may see, under the
privacy rule the indexer applies (privacy.py), read now so that a folder made private while a
client is connected stops being served at once; which paths name a note inside the vault; and a
replacement by compare-and-swap, never over a save made meanwhile.

No protocol here: mcp_server.py owns the MCP SDK and turns these answers into its tools' results
and errors.
"""

from __future__ import annotations

from pathlib import PurePosixPath, PureWindowsPath
from typing import TYPE_CHECKING

from brainiac.core.errors import StaleWriteError, VaultError
from brainiac.formats import ltm
from brainiac.store import config as config_mod
from brainiac.store import privacy
from brainiac.store.vault import LONG_TERM_DIR, FileText

if TYPE_CHECKING:
    from brainiac.search.index_documents import NoteRecord
    from brainiac.search.memory_protocol import MemoryLike


def public_long_term(
    memory: MemoryLike, query: str | None, include_archived: bool
) -> list[NoteRecord]:
    """The public long-term notes, by path, as the index holds them: no note is read.

    The index keeps each note's title, status, aliases, tags, count of events and strength
    (index.NoteRecord); reading every note instead would make a session's first call on a large
    vault take many seconds. It has no private note (the indexer leaves them out); a folder made
    private since the last sync is left out here too, by its path."""
    private = config_mod.load(memory.vault.root).private_folders  # read now, as note_text does
    memory.refresh()  # without a daemon: an edit made since the last call is indexed first
    needle = " ".join((query or "").casefold().split())
    out: list[NoteRecord] = []
    for note in memory.indexer.index.notes():
        if not note.path.startswith(LONG_TERM_DIR + "/"):
            continue
        if privacy.private_folder(note.path, private) is not None:
            continue
        if note.status == "archived" and not include_archived:
            continue
        words = " ".join([note.path, note.title, *note.aliases, *note.tags]).casefold()
        if needle and needle not in " ".join(words.split()):
            continue
        out.append(note)
    return out


def write_long_term(memory: MemoryLike, rel: str, text: str, create: bool) -> bool:
    """Replace (or, with `create`, make) the long-term note at `rel` by compare-and-swap; True
    when it was created. VaultError, nothing written, for anything else."""
    if not rel.startswith(LONG_TERM_DIR + "/"):
        raise VaultError(
            f"{rel or '(empty path)'}: only long-term notes ({LONG_TERM_DIR}/...) are updated "
            "here; add what happened with `remember`"
        )
    try:
        current: FileText | None = _served_note(memory, rel)
    except FileNotFoundError:
        if not create:
            raise VaultError(
                f"{rel}: no such note; pass create=true to make it, or list_notes for the "
                "notes there are"
            ) from None
        current = None
    ltm.parse(text, rel)  # a note whose frontmatter cannot be read would be skipped: refused
    expected = current.fingerprint if current is not None else None
    try:
        memory.vault.write(rel, text, expected)
    except StaleWriteError:
        raise VaultError(
            f"{rel}: was saved by someone else a moment ago; read it again and redo the change"
        ) from None
    if memory.index_writes:  # beside the daemon, its watcher indexes the note
        # At once: a search right after must find the new text, whenever the last
        # reconcile ran (Memory.refresh reconciles at most once a second).
        memory.indexer.sync([rel])
    return current is None


def note_text(memory: MemoryLike, rel: str) -> str:
    """The text of the note at vault-relative `rel`; VaultError (saying why) for anything that is
    not a Markdown note inside the vault, or that is private, FileNotFoundError when missing."""
    return _served_note(memory, rel).text


def _served_note(memory: MemoryLike, rel: str) -> FileText:
    """The note at `rel` as read (its text and fingerprint), under note_text's rules."""
    where = rel or "(empty path)"
    if not rel or "\x00" in rel or "\\" in rel:
        raise VaultError(
            f"{where!r}: not a note path; give a vault-relative path with forward "
            "slashes, such as memory/long_term/project-atlas.md"
        )
    if PurePosixPath(rel).is_absolute() or PureWindowsPath(rel).drive:
        raise VaultError(f"{rel}: is an absolute path; give it relative to the vault")
    if any(p in ("", ".", "..") for p in rel.split("/")):
        raise VaultError(f"{rel}: contains an empty, . or .. part; only paths inside the vault")
    path = memory.vault.path(rel)
    if not memory.vault.inside(path):
        raise VaultError(f"{rel}: leads outside the vault (through a symlink); it is not served")
    # The rule the indexer applies (privacy.py), the link's path and what it leads to alike. The
    # setting is read now rather than at start: a folder made private while a client is
    # connected must stop being served at once.
    private = config_mod.load(memory.vault.root).private_folders
    refused = privacy.refusal(memory.vault, rel, private)
    if refused is not None:
        raise VaultError(f"{rel}: {refused}; it is not served")
    if not rel.endswith(".md"):
        raise VaultError(f"{rel}: only Markdown notes (.md) are served")
    if not path.is_file():
        raise FileNotFoundError(rel)
    read = memory.vault.read(rel)
    # A note whose frontmatter cannot be read raises here: whether it is private is unknown.
    if ltm.parse(read.text, rel).private:
        raise VaultError(f"{rel}: is marked `private: true`; private notes are not served")
    return read
