"""What kind of vault file a path is, as `brainiac forget` reads it: the short-term document, a
note, an archive month, a kept chat export, an attachment, a person's own file, and so on."""

from __future__ import annotations

import re

from brainiac.store.vault import (
    ARCHIVE_DIR,
    ATTACHMENTS_DIR,
    EXPORTS_DIR,
    IDENTITY,
    INBOX_DIR,
    INDEXES_DIR,
    SHORT_TERM,
    WORKING_MEMORY,
    is_conflict_copy,
)

# `2026-11 (2).md`: where a month's lines go on when `2026-11.md` is full (jobs/moving.py)
_MONTH_RE = re.compile(rf"{ARCHIVE_DIR}/\d{{4}}-\d{{2}}(?: \(\d+\))?\.md")


_COPY_RE = re.compile(r"context/working_memory\.edited-[^/]*\.md")


def file_kind(rel: str) -> str:
    if rel == SHORT_TERM:
        return "stm"
    if rel == IDENTITY:
        return "identity"
    if rel == WORKING_MEMORY:
        return "working"
    if _COPY_RE.fullmatch(rel):
        return "copy"
    if rel.startswith(EXPORTS_DIR + "/"):
        return "export"
    if rel.startswith(ATTACHMENTS_DIR + "/"):
        return "attachment"
    if rel.startswith(INBOX_DIR + "/"):
        return "inbox"
    if rel.startswith(INDEXES_DIR + "/"):
        return "index"
    if rel.startswith("context/"):
        return "context"
    if rel.endswith(".md") and is_conflict_copy(rel):
        return "conflict"
    if _MONTH_RE.fullmatch(rel):
        return "month"
    if rel.startswith("memory/") and rel.endswith(".md"):
        return "note"
    if rel.endswith(".md") and not rel.startswith(("system/", ".")):
        return "own"
    return "other"


def is_note(rel: str) -> bool:
    return file_kind(rel) in ("note", "own")
