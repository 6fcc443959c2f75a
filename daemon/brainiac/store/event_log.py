"""Events written into the short-term document's Event Log, in the vault: one compare-and-swap
write for any number of events (re-read and re-applied when a person saved meanwhile), refused
whole, with nothing written, when an event or the document would be too large, with what makes
room.

The text edits are stm.py's (pure); the event journal, the index and the warnings about a
renamed log are `Memory.remember_many`'s, which calls this.
"""

from __future__ import annotations

from brainiac.core.errors import StaleWriteError, TooLargeError
from brainiac.formats import events as ev
from brainiac.formats import stm
from brainiac.store.vault import SHORT_TERM, Vault, template_dir

_WRITE_ATTEMPTS = 8


def append(
    vault: Vault, pending: list[ev.Event], in_time_order: bool, window: int
) -> list[ev.Event]:
    """Append `pending` in one write; returns those that were not already in the log.

    `in_time_order` (imported history): each goes before the first logged event later than
    it instead of at the end. TooLargeError, nothing written, for an event over
    `Vault.max_event_bytes` or when the document would go over `[vault] max_note_bytes`
    (past it the document could not be read again: every later `remember` failed); `window`
    (`[lifecycle] short_term_window`) says then whether promotion would make room."""
    for event in pending:
        _check_event_size(event, vault.max_event_bytes)
    added: list[ev.Event] = []
    for _attempt in range(_WRITE_ATTEMPTS):
        try:
            current = vault.read(SHORT_TERM)
            text, expected = current.text, current.fingerprint
        except FileNotFoundError:
            text = (template_dir() / SHORT_TERM).read_text(encoding="utf-8")
            expected = None
        add = stm.insert_events if in_time_order else stm.append_events
        new_text, added = add(text, pending)
        if not added:
            return []
        size = len(new_text.encode("utf-8"))
        if size > vault.max_note_bytes:
            raise TooLargeError(
                SHORT_TERM,
                f"would be {size} bytes with {len(added)} more event(s), over the "
                f"{vault.max_note_bytes}-byte limit ([vault] max_note_bytes)",
                _make_room_hint(text, window),
            )
        try:
            vault.write(SHORT_TERM, new_text, expected)
            break
        except StaleWriteError:
            continue  # someone saved meanwhile: re-read and re-apply to their version
    else:
        raise StaleWriteError(
            f"{SHORT_TERM}: kept changing while brainiac tried to append; "
            "nothing was written, try again"
        )
    return added


def _make_room_hint(text: str, window: int) -> str:
    """What frees the short-term document: promotion when events wait past the window,
    else only the person's own text can make room."""
    logged = len(stm.parse(text).events)
    waiting = max(logged - window, 0) if window else logged
    if waiting:
        return (
            f"promotion is due: `brainiac jobs run promotion` moves the {waiting} event(s) "
            "past the short-term window into long-term notes (a running daemon runs it every "
            "[jobs] promotion minutes), then remember again"
        )
    return (
        f"its own text and the {logged} event(s) of the short-term window fill it: move "
        "some of your text out of it into a note, or raise [vault] max_note_bytes in "
        ".brainiac/config.toml"
    )


def _check_event_size(event: ev.Event, limit: int) -> None:
    size = len(ev.render(event).encode("utf-8"))
    if size > limit:
        raise TooLargeError(
            SHORT_TERM,
            f"an event of {size} bytes is over the {limit}-byte limit for one event (a "
            "twentieth of [vault] max_note_bytes, so that any note can take it)",
            "save the text as a file in the vault and remember a line that names it, or "
            "remember it in smaller parts",
        )
