"""Scrubbing a whole tree of files (the vault, or a backup snapshot): kept chat exports replaced by
a placeholder, attachments, and rounds until nothing more goes (an emptied note, a goal derived
from a forgotten event).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from brainiac.core.errors import ImportFormatError
from brainiac.exchange.forget.kinds import file_kind
from brainiac.exchange.forget.rules import Rules
from brainiac.exchange.forget.scrub import scrub
from brainiac.exchange.forget.selection import Removal, fold
from brainiac.exchange.importer import FORGOTTEN_HEAD
from brainiac.formats import events as ev
from brainiac.store import safe_io
from brainiac.store.vault import INBOX_DIR

_ROUNDS = 8  # what one removal uncovers (an emptied note, a derived goal) needs a few passes


@dataclass
class Result:
    rel: str
    action: str  # edit, delete, placeholder, reset
    new: bytes | None
    removed: list[Removal]
    old_sha: str


@dataclass
class Tree:
    results: dict[str, Result] = field(default_factory=dict)
    journal_ids: set[str] = field(default_factory=set)
    taken: set[str] = field(default_factory=set)  # ids of the events found and taken
    left: list[str] = field(default_factory=list)


class Exports:
    """Which events a kept chat export holds (by the importer's message keys), and its text."""

    def __init__(self) -> None:
        self._seen: dict[str, tuple[set[str], str]] = {}

    def read(self, rel: str, data: bytes) -> tuple[set[str], str]:
        sha = safe_io.sha256_hex(data)
        if sha not in self._seen:
            from brainiac.exchange import chatlogs
            from brainiac.exchange.importer import id_for_key, message_key

            raw = data.decode("utf-8", errors="replace")
            try:
                chat = chatlogs.parse(Path(rel), None, data)
                ids = {id_for_key(message_key(m)) for m in chat.messages}
                said = "\n".join(f"{m.title or ''}\n{m.text}" for m in chat.messages)
            except ImportFormatError:
                ids, said = set(), ""
            self._seen[sha] = (ids, fold(raw) + "\n" + fold(said))
        return self._seen[sha]


def placeholder_for(now: dt.datetime) -> bytes:
    said = (
        f"this chat export was removed on {now:%Y-%m-%d %H:%M} because it held something you "
        "asked brainiac to forget. The placeholder keeps its name, so importing the same "
        "export again keeps no new copy; the messages you forgot are not imported again either "
        "(docs/forget.md).\n"
    )
    return FORGOTTEN_HEAD + said.encode()


def _scrub_export(
    rel: str, data: bytes, rules: Rules, exports: Exports, placeholder: bytes
) -> Result | None:
    if data.startswith(FORGOTTEN_HEAD):
        return None
    kind = file_kind(rel)
    ids, text = exports.read(rel, data)
    held = ids & rules.ids
    if held:
        why = f"holds {len(held)} forgotten message(s)"
    elif any(n in text for n in rules.needles):
        why = "holds a match"
    else:
        return None
    sha = safe_io.sha256_hex(data)
    if kind == "export":
        reason = f"the kept chat export {why}; replaced by a placeholder"
        return Result(rel, "placeholder", placeholder, [Removal("export", 0, reason)], sha)
    reason = f"a chat export waiting to be imported {why}"
    return Result(rel, "delete", None, [Removal("file", 0, reason)], sha)


def _scrub_attachment(rel: str, data: bytes, rules: Rules) -> Result | None:
    """The whole text of an event too large for one (attachments.py) goes with its event; a match
    anywhere in it takes the event too, as a match in its line would."""
    event_id = rel.rsplit("/", 1)[-1].split(".", 1)[0]
    if event_id not in rules.ids and rules.any_needle(data.decode("utf-8", errors="replace")):
        rules.ids.add(event_id)
    if event_id not in rules.ids:
        return None
    why = Removal("file", 0, "the whole text of a forgotten event")
    return Result(rel, "delete", None, [why], safe_io.sha256_hex(data))


def scrub_tree(
    files: Mapping[str, bytes],
    rules: Rules,
    journalled: Mapping[str, ev.Event],
    exports: Exports,
    placeholder: bytes,
) -> Tree:
    """Every file of a tree scrubbed with `rules`, which grow until nothing new turns up."""
    tree = Tree()
    for _round in range(_ROUNDS):
        before = rules.size()
        tree = Tree()
        taken: list[ev.Event] = []
        gone: list[tuple[str, str]] = []
        for rel, data in sorted(files.items()):
            kind = file_kind(rel)
            if kind in ("export", "inbox"):
                result = _scrub_export(rel, data, rules, exports, placeholder)
                if result is not None:
                    tree.results[rel] = result
                continue
            if kind == "attachment":
                result = _scrub_attachment(rel, data, rules)
                if result is not None:
                    tree.results[rel] = result
                continue
            if kind in ("working", "index", "context", "other"):
                continue  # regenerated, or not the memory's
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                continue
            done = scrub(rel, text, rules)
            tree.left += done.left
            taken += done.events
            sha = safe_io.sha256_hex(data)
            if done.text is None:
                tree.results[rel] = Result(rel, "delete", None, done.removed, sha)
                gone.append((rel, done.title))
            elif done.removed:
                tree.results[rel] = Result(rel, "edit", done.text.encode(), done.removed, sha)
        mention = rules.fact_scope is not None
        for i, event in journalled.items():
            if rules.event_goes(event, ev.render(event), rules.entity_names, True, mention):
                tree.journal_ids.add(i)
                taken.append(event)
        for rel, result in tree.results.items():
            if result.action == "edit" and file_kind(rel) in ("note", "stm"):
                # Facts that went, for the job log's summaries ("fact deadline: Monday").
                for r in result.removed:
                    if r.what == "fact":
                        rules.texts.add(fold(r.text.lstrip("- ").split(" (", 1)[0]))
        rules.absorb(taken, gone)
        tree.taken = {e.id for e in taken}
        if rules.size() == before:
            break
    return tree


def scrub_everything(
    files: Mapping[str, bytes], identity: bool, placeholder: bytes, templates: Mapping[str, bytes]
) -> Tree:
    """--everything: memory/, context/ and inbox/ go; short-term memory (and, asked, the identity)
    start again from the template; kept exports become placeholders."""
    tree = Tree()
    for rel, data in sorted(files.items()):
        kind, sha = file_kind(rel), safe_io.sha256_hex(data)
        if rel in templates and (kind == "stm" or identity):
            if data != templates[rel]:
                what = Removal("file", 0, "replaced by the template's")
                tree.results[rel] = Result(rel, "reset", templates[rel], [what], sha)
        elif kind == "export":
            if not data.startswith(FORGOTTEN_HEAD):
                what = Removal("export", 0, "the kept chat export; replaced by a placeholder")
                tree.results[rel] = Result(rel, "placeholder", placeholder, [what], sha)
        elif rel.startswith(("memory/", "context/", INBOX_DIR + "/")):
            what = Removal("note" if kind == "note" else "file", 0, "everything")
            tree.results[rel] = Result(rel, "delete", None, [what], sha)
    return tree
