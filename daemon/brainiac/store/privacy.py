"""What is private: the one rule every reader of the vault applies, so private text never reaches
an index, a search, a context, an MCP client, a merge or a link in a public note.

A note is private when its frontmatter says `private: true` (`ltm.LongTermNote.private`, judged
on its text) or when it lies in a `[vault] private_folders` folder (judged on its path, here). A
symlink is judged by its own path and by the file it leads to: a link named like a public note is
as private as its target, and one that leads to a file brainiac never reads as memory
(`.brainiac/config.toml`, `.obsidian/`, `context/`, `inbox/`, outside the vault) is not read
through the link either. The indexer, the name book (routing, merging, links, index notes) and
the MCP server all ask `refusal`, so they cannot disagree.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from brainiac.store.vault import Vault, kind_of


def folder_name(folder: str) -> str:
    """A `private_folders` entry as a vault-relative folder path: `/journal`, `./journal/`,
    ` journal ` and `journal\\2026` all name what a person means (a folder inside the vault)."""
    parts = folder.strip().replace("\\", "/").split("/")
    return "/".join(p for p in parts if p not in ("", "."))


def folder_problem(folder: str) -> str | None:
    """What is wrong with a `private_folders` entry, or None: one that names no folder inside
    the vault would be ignored, leaving a person to believe their notes are private."""
    name = folder_name(folder)
    fix = 'give a folder path relative to the vault, such as "journal"'
    if not name:
        return f"names no folder; {fix}"
    if ".." in name.split("/"):
        return f"leads out of the vault; {fix}"
    return None


def private_folder(rel: str, folders: Iterable[str]) -> str | None:
    """The private folder that holds the vault path `rel`, or None. Compared ignoring case: on a
    case-insensitive disk (macOS, Windows) `journal` in the settings is the `Journal/` folder, and
    keeping one folder too many private is the safe mistake."""
    path = rel.casefold()
    for folder in folders:
        name = folder_name(folder)
        if name and (path == name.casefold() or path.startswith(name.casefold() + "/")):
            return name
    return None


def refusal(
    vault: Vault, rel: str, folders: Iterable[str], linked: bool | None = None
) -> str | None:
    """Why the file at vault path `rel` must not be read as memory, as the middle of a one-line
    message ("is in the private folder journal/ ([vault] private_folders)"), or None when it may
    be. The frontmatter's
    `private: true` is the caller's to check on the text it reads.

    `linked`: whether the path passes through a symlink, when the caller already knows (the
    indexer's lstat of a file the walk found; the walk never enters a linked folder), which saves
    a stat per folder on the way for every file of a 10,000-note reconcile."""
    folders = tuple(folders)
    reason = _path_refusal(rel, folders)
    if reason is not None:
        return reason
    if linked is None:
        linked = os.path.islink(vault.path(rel)) or _under_link(vault, rel)
    if not linked:
        return None  # the common case, before any Path is made (pathlib: half a reconcile)
    path = vault.path(rel)
    try:
        real = path.resolve(strict=True)
    except (OSError, RuntimeError):  # dangling, a loop, or unreadable: nothing to read
        return None
    if not vault.inside(real):
        return "leads outside the vault (through a symlink)"
    target = vault.rel(real)
    if target == rel:
        return None
    reason = _path_refusal(target, folders)
    if reason is not None:
        return f"is a symlink to {target}, which {reason}"
    if not real.is_file() or not target.endswith(".md"):
        return f"is a symlink to {target}, which is not a Markdown note"
    if kind_of(target) is None:
        return f"is a symlink to {target}, which brainiac does not read as memory"
    return None


def folder_refusal(folder: str, folders: Iterable[str]) -> str | None:
    """refusal's verdict by path on every file directly in `folder` (a vault folder path with a
    trailing slash, "" at the top): a hidden folder or a private one. None leaves it to each
    file: a dot name, a private_folders entry naming the file itself, a symlink's target."""
    return _path_refusal(folder, tuple(folders))


def _path_refusal(rel: str, folders: tuple[str, ...]) -> str | None:
    if rel.startswith(".") or "/." in rel:  # a part of the path starts with a dot
        # .brainiac/, .obsidian/, .git/: settings and tool data, never notes.
        return "is in a hidden folder or file, not a note"
    folder = private_folder(rel, folders)
    if folder is not None:
        return f"is in the private folder {folder}/ ([vault] private_folders)"
    return None


def _under_link(vault: Vault, rel: str) -> bool:
    """Whether a folder on the way to `rel` is a symlink (the walk never enters one, but a path
    named by a watcher event or an MCP client can pass through one)."""
    parts = rel.split("/")[:-1]
    return any(os.path.islink(vault.path("/".join(parts[: i + 1]))) for i in range(len(parts)))
