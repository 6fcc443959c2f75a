"""Which notes a context used, and feedback on them: `record_use` writes each context's notes to
the access log (access.py, which decay counts from) and, for a context assembled for a prompt,
to `last_context.json` in the state directory; `reinforce` then raises or lowers the
reinforcement of the notes that file names (docs/lifecycle.md, "Feedback"), which retrieval
ranks by.

Only a context for a prompt is remembered as "the last": the daemon's own working-memory
refreshes have no prompt and must not redirect the feedback an agent gives on its answer.
`Memory.context` and `Memory.feedback` call these; the `Memory` facade holds no state of its own
for them.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
from collections.abc import Iterable
from pathlib import Path

from brainiac.core.errors import VaultError
from brainiac.formats import ltm
from brainiac.formats.note import set_frontmatter_field
from brainiac.store import access, safe_io
from brainiac.store.vault import LONG_TERM_DIR, Vault

log = logging.getLogger(__name__)

_LAST_CONTEXT = "last_context.json"
_MAX_REINFORCEMENT = 5.0


def record_use(state: Path, sources: Iterable[str], now: dt.datetime, for_prompt: bool) -> None:
    """Being retrieved counts as access (decay counts from it); `feedback` needs to know
    which notes the last context for a prompt held (the daemon's own working-memory
    refreshes, which have no prompt, must not redirect it)."""
    notes_used = sorted({s.split("#", 1)[0] for s in sources if s.startswith(LONG_TERM_DIR)})
    try:
        access.record(state, notes_used, now)
        if for_prompt:
            data = {"at": now.isoformat(timespec="seconds"), "notes": notes_used}
            # Not synced: an fsync was half a millisecond of every in-process context, and a
            # record lost in a power cut only makes the next `feedback` say there is none.
            record = json.dumps(data).encode("utf-8")
            safe_io.replace_file(state / _LAST_CONTEXT, record, durable=False)
    except OSError as exc:  # bookkeeping must never cost the caller their context
        log.warning("could not record which notes were used (%s)", exc.strerror)


def reinforce(
    vault: Vault, state: Path, delta: float, learning_rate: float, when: dt.datetime
) -> list[str]:
    """Reinforce (+) or weaken (-) the notes of the last assembled context (docs/lifecycle.md):
    reinforcement += delta x learning_rate. Returns the notes changed."""
    # Loaded here, not at the top: a context call (which records use) needs no job machinery.
    from brainiac.lifecycle.jobs import edits

    if not -10 <= delta <= 10 or delta == 0:
        raise VaultError(f"feedback must be a non-zero number from -10 to 10, got {delta}")
    try:
        last = json.loads((state / _LAST_CONTEXT).read_text(encoding="utf-8"))
        used = [str(p) for p in last["notes"]]
    except (OSError, ValueError, KeyError, TypeError):
        raise VaultError(
            "no context has been assembled yet, so there is nothing to give feedback on; "
            "run `brainiac context` first"
        ) from None
    step = delta * learning_rate
    outcome = edits.Outcome()
    for rel in used:

        def transform(text: str | None, rel: str = rel) -> str | None:
            if text is None:
                return None
            value = ltm.parse(text, rel).reinforcement + step
            value = max(-_MAX_REINFORCEMENT, min(_MAX_REINFORCEMENT, value))
            text = set_frontmatter_field(text, "reinforcement", f"{round(value, 4):g}")
            if step < 0:
                return text  # weakening is not a use: decay keeps counting
            return set_frontmatter_field(text, "reinforced", when.isoformat(timespec="minutes"))

        edits.update(vault, rel, transform, outcome, dry_run=False)
    return outcome.changed
