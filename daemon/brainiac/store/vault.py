"""The vault on disk: its layout, `init` from the template, and guarded reads and writes.

Paths inside the vault are handled as POSIX relative strings (`memory/long_term/anna.md`), the
form they take in links, the index and messages. Reading checks what a hostile or broken file can
do: a symlink that leads outside the vault is not followed, a FIFO, socket or device named like a
note is never opened (it would block or fail every reader), a file over the size limit, binary or
not UTF-8 is skipped with a one-line reason. Writing goes through safe_io's compare-and-swap.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from brainiac.core.errors import (
    NoteParseError,
    NotRegularFileError,
    StaleWriteError,
    TooLargeError,
    VaultError,
)
from brainiac.store import safe_io

IDENTITY = "system/core_identity.md"
SHORT_TERM = "memory/short_term.md"
LONG_TERM_DIR = "memory/long_term"
ARCHIVE_DIR = "memory/archive"
INDEXES_DIR = "memory/indexes"  # generated index notes (topics, entities, timeline)
INBOX_DIR = "inbox"
ATTACHMENTS_DIR = "memory/attachments"  # the whole text of imported messages too large for an event
EXPORTS_DIR = "memory/archive/exports"  # raw chat exports, kept as imported (not indexed)
WORKING_MEMORY = "context/working_memory.md"
# The paths whose kind_of is their own, not their folder's (kind_in).
KIND_BY_NAME = frozenset({SHORT_TERM, IDENTITY})
CONFIG = ".brainiac/config.toml"
# One event may take at most this share of [vault] max_note_bytes: the short-term window of
# events (10 by default) then fills at most half of the short-term document, and a note can
# always take a few more events, so promotion never has an event it cannot place.
EVENT_SHARE = 20

# Copies that sync tools make when two devices changed a file; they end in .md like the note, and
# are reported, never indexed, merged or written (docs/foundations.md, section 1).
_CONFLICT_RE = re.compile(
    r"\.sync-conflict-\d{8}-\d{6}-[A-Z0-9]{7}"  # Syncthing
    r"|\(Conflicted copy[^)]*\)"  # Obsidian Sync, with or without device and time
    r"|conflicted copy",  # Dropbox: "name (Anna's conflicted copy 2026-11-20).md"
    re.IGNORECASE,
)


def is_conflict_copy(rel: str) -> bool:
    name = rel.rsplit("/", 1)[-1]
    # Every pattern holds "conflict": a reconcile asks this twice for each of 10,000 names, and
    # the substring test costs a third of the search it spares.
    return "onfl" in name.lower() and bool(_CONFLICT_RE.search(name))


# Files editors and sync tools keep beside a note while it is open or arriving (docs/
# foundations.md, section 1): never a person's text, and harmful to bring back (a restored swap file
# makes vim offer to recover a note nobody is editing). The watcher ignores them, as it does any
# name that is hidden or not `.md`; backups leave them out, as they do our own temp files.
_TEMP_RE = re.compile(
    r"\..*\.sw[a-p]"  # vim swap: .note.md.swp, then .swo, .swn, ...
    r"|.*~"  # vim, Emacs and gedit backups (note.md~), vim undo files (.note.md.un~)
    r"|\.#.*|#.*#"  # Emacs lock (a dangling symlink) and auto-save
    r"|\.syncthing\..*\.tmp|~syncthing~.*\.tmp"  # Syncthing downloads in progress
    r"|.*___jb_(?:tmp|old)___"  # JetBrains safe write
    r"|.*\.kate-swp|\.goutputstream-.*|\.~lock\..*#"  # Kate, GIO (gedit), LibreOffice
    r"|.*" + re.escape(safe_io.TMP_SUFFIX),  # brainiac's own write in flight
    re.DOTALL,
)


def is_temp_file(rel: str) -> bool:
    """Whether a vault path's file name is an editor's or sync tool's temp file (or ours)."""
    name = rel.rsplit("/", 1)[-1]
    if name.isdigit() and int(name) >= 4913 and (int(name) - 4913) % 123 == 0:
        return True  # vim's probe for "can I write here": 4913, else 5036, 5159, ...
    return _TEMP_RE.fullmatch(name) is not None


# Derived or foreign folders that are never read as memory.
_SKIPPED_TOP = {"context", "inbox"}


def template_dir() -> Path:
    """The vault template: inside the installed wheel, or beside `daemon/` in a source checkout."""
    from importlib import resources  # only `init` needs it; it loads tempfile and more

    packaged = Path(str(resources.files("brainiac"))) / "vault_template"
    if packaged.is_dir():
        return packaged
    source = Path(__file__).resolve().parents[3] / "vault_template"
    if source.is_dir():
        return source
    raise VaultError("the vault template is missing from this installation; reinstall brainiac")


# The files a vault cannot work without. `init` on an existing vault puts back only these (and
# the folders): the template's other files are examples, which a person may have deleted or the
# jobs archived, and which must not come back as duplicates.
CORE_FILES = (CONFIG, IDENTITY, SHORT_TERM)


def is_vault(path: Path) -> bool:
    """Whether `path` holds a vault: its core identity, its short-term memory or `.brainiac/`.

    The one rule for both opening a folder as a vault and `init` taking it as one: a `memory/`
    or `system/` folder alone is common in other projects, whose checkout must not be written.
    """
    return any((path / rel).exists() for rel in (IDENTITY, SHORT_TERM, CONFIG.split("/")[0]))


def init(path: Path, force: bool = False) -> list[str]:
    """Make `path` a vault from the template, never overwriting a file; return what it made.

    A new or empty folder gets the whole template; an existing vault only what is missing from
    its structure (folders and CORE_FILES). Any other folder is refused unless `force`: a `git
    clone` into the default ~/brainiac would otherwise become a vault unnoticed.
    """
    if path.exists() and not path.is_dir():
        raise VaultError(f"{path}: exists and is not a directory; choose another path")
    existing = path.is_dir() and is_vault(path)
    if path.is_dir() and not existing and not force:
        _refuse_foreign(path)
    created = []
    src_root = template_dir()
    for src in sorted(src_root.rglob("*")):
        rel = src.relative_to(src_root)
        if "__pycache__" in rel.parts:
            continue
        dest = path / rel
        if src.is_dir():
            dest.mkdir(mode=0o700, parents=True, exist_ok=True)
            continue
        if src.name == ".keep" or dest.exists():
            if src.name == ".keep":
                dest.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            continue
        if existing and rel.as_posix() not in CORE_FILES:
            continue  # an example note: deleted or archived by now, and so it stays
        dest.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        try:
            safe_io.write_bytes(dest, src.read_bytes(), expected=None)
        except StaleWriteError:
            continue  # someone created it meanwhile: theirs wins
        created.append(rel.as_posix())
    return created


def _refuse_foreign(path: Path) -> None:
    """Raise for a folder that holds files of its own (hidden ones aside: a fresh `git init` or an
    Obsidian vault's `.obsidian/` alone leave a folder empty enough)."""
    try:
        names = sorted(n for n in os.listdir(path) if not n.startswith("."))
    except OSError as exc:
        raise VaultError(
            f"{path}: cannot be listed ({exc.strerror}); check its permissions"
        ) from exc
    if not names:
        return
    shown = ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
    what = "a git checkout" if (path / ".git").exists() else "a folder"
    raise VaultError(
        f"{path}: is {what} of {len(names)} other file(s) ({shown}), not a brainiac vault; "
        "choose a new or empty folder (--vault or the PATH argument), or pass --force to add "
        "the vault's files beside them (nothing there is overwritten)"
    )


@dataclass(frozen=True)
class FileText:
    rel: str
    text: str
    fingerprint: safe_io.Fingerprint


@dataclass(frozen=True)
class Vault:
    root: Path
    max_note_bytes: int = 1_000_000

    @classmethod
    def open(cls, path: Path | str, max_note_bytes: int = 1_000_000) -> Vault:
        root = Path(path).expanduser()
        if not root.exists():
            raise VaultError(f"{root}: no such vault; create it with `brainiac init {root}`")
        if not root.is_dir():
            raise VaultError(f"{root}: is not a directory; pass the vault's folder")
        return cls(root.resolve(), max_note_bytes)

    @property
    def max_event_bytes(self) -> int:
        """The most one event line may take (`EVENT_SHARE`)."""
        return self.max_note_bytes // EVENT_SHARE

    def path(self, rel: str) -> Path:
        return self.root / rel

    def rel(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()

    def inside(self, path: Path) -> bool:
        """Whether `path`, with every symlink resolved, stays inside the vault."""
        try:
            path.resolve().relative_to(self.root)
        except (ValueError, OSError):
            return False
        return True

    def read(self, rel: str) -> FileText:
        """A vault file's text; NoteParseError (file untouched) when it cannot be used as a note."""
        path = self.path(rel)
        if path.is_symlink() and not self.inside(path):
            raise NoteParseError(rel, "is a symlink to outside the vault; it is not followed")
        try:
            size = path.stat().st_size
        except FileNotFoundError:
            raise
        except OSError as exc:
            raise NoteParseError(rel, f"cannot be read ({exc.strerror})") from exc
        if size > self.max_note_bytes:
            raise NoteParseError(
                rel,
                f"is {size} bytes, over the {self.max_note_bytes}-byte limit; split it or raise "
                "[vault] max_note_bytes in .brainiac/config.toml",
            )
        try:
            data, fp = safe_io.read_bytes(path)
        except NotRegularFileError as exc:
            # A FIFO would block every reader and a socket cannot be opened: listed like a
            # note (its name ends in .md), reported like one that cannot be read.
            raise NoteParseError(
                rel,
                f"is not a regular file but {exc.kind}; it is skipped, remove it or move "
                "it out of the vault",
            ) from exc
        if b"\x00" in data[:8192]:
            raise NoteParseError(rel, "looks binary (contains NUL bytes); it is skipped")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = data[: exc.start].count(b"\n") + 1
            raise NoteParseError(
                rel, "is not UTF-8 text; re-save it as UTF-8, it is skipped until then", line
            ) from exc
        return FileText(rel, text, fp)

    def write(
        self, rel: str, text: str, expected: safe_io.Fingerprint | None
    ) -> safe_io.Fingerprint:
        """Compare-and-swap `text` into a vault file (StaleWriteError if it changed since read;
        TooLargeError, nothing written, if it would be over `max_note_bytes`: `read` would refuse
        the file from then on, and a job or `remember` could never read it again)."""
        data = text.encode("utf-8")
        if len(data) > self.max_note_bytes:
            raise TooLargeError(
                rel,
                f"would be {len(data)} bytes, over the {self.max_note_bytes}-byte limit",
                "make room in it (or raise [vault] max_note_bytes in .brainiac/config.toml)",
            )
        path = self.path(rel)
        if path.is_symlink() or (path.exists() and path.stat().st_nlink > 1):
            # Replacing would turn the link into a plain file and detach the other name.
            raise VaultError(f"{rel}: is a symlink or has hard links; brainiac does not replace it")
        if not self.inside(path.parent):
            raise VaultError(f"{rel}: lies outside the vault; nothing written")
        if not self.root.is_dir():
            # Moved away or deleted while running: writing would create a stray folder in its
            # place, and the one moved back would land inside it.
            raise VaultError(f"{self.root}: the vault folder is gone; {rel} was not written")
        return safe_io.write_bytes(path, data, expected)

    def markdown_files(self, under: str = "") -> Iterator[str]:
        """Relative paths of the notes below `under`: `.md` files, skipping dot-paths, the
        generated and inbox folders, and symlinks that lead outside the vault."""
        for _, rels in self.markdown_folders(under):
            yield from rels

    def markdown_folders(self, under: str = "") -> Iterator[tuple[str, list[str]]]:
        """markdown_files folder by folder, in the same order: (the folder's path with a
        trailing slash, "" at the top; its notes' paths, sorted). A reconcile decides what
        depends on the folder (kind_of's rules by place, a private folder) once per folder."""
        base = self.path(under) if under else self.root
        if not base.is_dir():
            return
        # Performance: os.scandir with string paths instead of os.walk + pathlib.
        # DirEntry.is_symlink() comes from readdir's d_type (no syscall), and the relative path
        # is built by string concatenation; pathlib's per-file joins, relative_to() and an lstat
        # per file would be most of a no-change reconcile. The files of a folder sorted, then
        # its sub-folders sorted; symlinked folders are listed but never walked into.
        prefix = "" if base == self.root else self.rel(base) + "/"
        yield from self._walk_markdown(str(base), prefix)

    def _walk_markdown(self, dirpath: str, prefix: str) -> Iterator[tuple[str, list[str]]]:
        try:
            with os.scandir(dirpath) as it:
                # A dot file or folder is neither listed nor walked into.
                entries = [entry for entry in it if not entry.name.startswith(".")]
        except OSError:
            return  # os.walk ignores unreadable folders too
        files: list[str] = []
        dirs: list[os.DirEntry[str]] = []
        for entry in entries:
            try:
                is_dir = entry.is_dir()  # follows symlinks, as os.walk does when sorting
            except OSError:
                is_dir = False
            if is_dir:
                dirs.append(entry)
            elif entry.name.endswith(".md") and not (
                entry.is_symlink() and not self.inside(Path(entry.path))
            ):
                files.append(prefix + entry.name)
        del entries  # not held while the caller works on the folder's files
        if files:
            files.sort()
            yield prefix, files
        for entry in sorted(dirs, key=_entry_name):
            d = entry.name
            if d.startswith("__") or (not prefix and d in _SKIPPED_TOP):
                continue
            if entry.is_symlink():
                continue  # followlinks=False: not walked into
            if prefix + d == EXPORTS_DIR:
                continue  # a Markdown chat log kept as imported is not a note
            yield from self._walk_markdown(entry.path, prefix + d + "/")


def _entry_name(entry: os.DirEntry[str]) -> str:
    return entry.name


def kind_of(rel: str) -> str | None:
    """How a vault path is indexed: 'stm', 'note', 'archive', or None (not indexed)."""
    if rel == SHORT_TERM:
        return "stm"
    if is_conflict_copy(rel) or rel == IDENTITY:
        return None
    return kind_in(rel[: rel.rfind("/") + 1])


def kind_in(folder: str) -> str | None:
    """kind_of of a note directly in `folder` (a vault folder path with a trailing slash, "" at
    the top) that is neither SHORT_TERM, IDENTITY nor a conflict copy: the rules by place,
    which depend on the folder alone (each prefix below ends in a slash, and a name has none)."""
    if folder.startswith(("system/", "context/", "inbox/", INDEXES_DIR + "/", EXPORTS_DIR + "/")):
        return None
    if folder.startswith(ARCHIVE_DIR + "/"):
        return "archive"
    return "note"
