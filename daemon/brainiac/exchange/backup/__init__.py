"""Snapshots of a vault: compressed, verified, kept outside the vault, restorable into any folder.

A snapshot is one `brainiac-<vault name>-YYYYmmdd-HHMMSS.tar.gz` in `[backup] folder` (default:
`backups/` in the vault's state directory). It holds every file a person could not get back
otherwise, under `vault/`, and a `MANIFEST.json` that lists each one with its size, SHA-256, mode
and mtime. A name that ends in `.tar.gz` only ever holds a snapshot that verified, and a restore
checks all of a snapshot before it writes anything.

The package, one concept a module: `snapshots.py` (their names, the backups folder, listing,
retention), `contents.py` (which vault files go in), `archive.py` (the format: manifest entries,
and reading an archive back against its manifest), `creation.py` (writing one: a locked temp file,
read back, renamed into place), `restoring.py` (into an empty folder), `rewriting.py` (what
`brainiac forget` reads from snapshots and rewrites in them). Each name is imported from its own
module; this package re-exports nothing. See docs/backup.md.
"""
