"""Snapshots of a vault: compressed, verified, kept outside the vault, restorable into any folder.

A snapshot is one `brainiac-<vault name>-YYYYmmdd-HHMMSS.tar.gz` in `[backup] folder` (default:
`backups/` in the vault's state directory). It holds every file a person could not get back
otherwise, under `vault/`, and a `MANIFEST.json` that lists each one with its size, SHA-256, mode
and mtime. Left out is what brainiac derives again (`context/`, `memory/indexes/`), temp files,
its own (`*.brainiac-tmp`) and editors' and sync tools' (`.note.md.swp`, `note.md~`, `.#note.md`,
`4913`, `.syncthing.*.tmp`: vault.is_temp_file), and dot-folders other than `.brainiac/`
(`.obsidian/`, `.git/`, `.trash/`).

Writing: temp file in the backups folder (flock'ed while it is written, so the next backup can tell
a crash's leftover from a backup in progress), fsync, read back and checked against the manifest,
then renamed to its final name: a name that ends in `.tar.gz` only ever holds a snapshot that
verified. Older snapshots beyond `[backup] keep` are deleted only after that.

Restoring: into an empty or missing folder only; the whole archive is read and checked against the
manifest first (paths, types, sizes, hashes, modes, links), so a damaged or doctored snapshot is
refused before anything is written.

The package, one concept a module: `snapshots.py` (their names, the backups folder, listing,
retention), `contents.py` (which vault files go in), `archive.py` (the format: manifest entries,
and reading an archive back against its manifest), `creation.py` (writing one: a locked temp file,
read back, renamed into place), `restoring.py` (into an empty folder), `rewriting.py` (what
`brainiac forget` reads from snapshots and rewrites in them). Each name is imported from its own
module; this package re-exports nothing. See docs/backup.md.
"""
