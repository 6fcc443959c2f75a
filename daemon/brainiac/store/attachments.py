"""Imported messages too large for an event: the whole text in a file of its own, the event cut.

An event may take at most `Vault.max_event_bytes` (a twentieth of `[vault] max_note_bytes`), so
that the short-term document and any note can always take it. An imported message over that (a
pasted log, a whole file in a transcript) is not refused: an import cannot ask anyone to shorten
it, and refusing the export would lose the rest of the conversation. Instead its whole text goes to
`memory/attachments/<event id>.txt`, beside the notes, and the event keeps the start of the text
and a link to the file:

    - 2026-11-20T09:12:00 **user** (ops): The start of the message ...   (ID: the event id)
      [cut at 3998 of 1280000 bytes; whole text in [[memory/attachments/ID.txt]]] ^ID

So nothing is lost, search finds the event by its start, and the event moves through promotion
like any other. The file is a `.txt`: it is no note (never indexed, never over the note limit's
reader) and Obsidian opens the link. Its name is the event's id, which comes from the message's
import key, so importing the same export again writes the same file once.
"""

from __future__ import annotations

import contextlib
import dataclasses
from dataclasses import dataclass

from brainiac.core.errors import StaleWriteError, VaultError
from brainiac.formats import events as ev
from brainiac.store import safe_io
from brainiac.store.vault import ATTACHMENTS_DIR, Vault

_HEAD_BYTES = 4000  # the start kept in the event: enough to find and recognise it


@dataclass(frozen=True)
class Attachment:
    rel: str  # memory/attachments/<event id>.txt
    text: str  # the whole message


def rel_for(event_id: str) -> str:
    return f"{ATTACHMENTS_DIR}/{event_id}.txt"


def cut(event: ev.Event, limit: int) -> tuple[ev.Event, Attachment | None]:
    """`event` as it can be stored: itself if its line is within `limit` bytes, else its start
    with a link to the attachment that holds the whole text (the id stays the same)."""
    size = len(ev.render(event).encode("utf-8"))
    if size <= limit:
        return event, None
    whole = event.text.encode("utf-8")
    attachment = Attachment(rel_for(event.id), event.text)
    head = _head(event.text, min(_HEAD_BYTES, limit // 2))
    kept = len(head.encode("utf-8"))
    # Worded so that reflection reads no fact into it ("the whole message is in ..." was one).
    note = f"[cut at {kept} of {len(whole)} bytes; whole text in [[{attachment.rel}]]]"
    return dataclasses.replace(event, text=f"{head}\n{note}" if head else note), attachment


def _head(text: str, max_bytes: int) -> str:
    """The start of `text` within `max_bytes`, ended at a space or line break when there is one
    in its second half (a word cut in two is not found by search)."""
    data = text.encode("utf-8")[:max_bytes]
    head = data.decode("utf-8", errors="ignore")  # a character cut in two is dropped
    space = max(head.rfind(" "), head.rfind("\n"))
    if space > len(head) // 2:
        head = head[:space]
    return ev.normalise_text(head)


def write(vault: Vault, attachment: Attachment) -> None:
    """Write the attachment unless it is there already (the same import again, or a crash after
    it was written). A file of that name is never replaced: if a person edited it, theirs wins."""
    path = vault.path(attachment.rel)
    if not vault.inside(path.parent):
        raise VaultError(f"{attachment.rel}: lies outside the vault; nothing written")
    if path.exists():
        return
    with contextlib.suppress(StaleWriteError):  # written meanwhile by an import of the same
        safe_io.write_bytes(path, attachment.text.encode("utf-8"), expected=None)
