"""What a check in a project may hold a response to (docs/check.md, docs/projects.md).

A response in project P is checked against what a context in P shows: P's memories and the
global ones (short-term facts whose event P sees, notes in P's scope, P's recent events), and
another project's only when the response names that project, as a context's prompt brings
them in. A fact of another project is no knowledge of P's: "the deadline is Monday" in alpha is
neither supported nor contradicted by beta's deadline. The rules are store/projects.py's; this
only applies them to the guard's witnesses. Without a project there is no `Within`, and the check
is what it always was.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from brainiac.guard.check_facts.knowledge import facts_of
from brainiac.store.projects import GLOBAL, Scope, scoped_digest

if TYPE_CHECKING:
    from brainiac.formats import events as ev
    from brainiac.guard.check_facts.verdicts import Known
    from brainiac.guard.evidence.alignment import EventLine
    from brainiac.search.index_documents import Hit


@dataclass(frozen=True)
class Within:
    """A check's project (`scope`), whether a context in it sees the event of an id (`own`: in
    the Event Log by projects.in_scope, else by the index), and the other projects the response
    names, each with the same test for a context in it (`named`; none when isolated)."""

    scope: Scope
    own: Callable[[str], bool]
    named: tuple[tuple[str, Callable[[str], bool]], ...] = ()

    def sees(self, event_id: str) -> bool:
        return self.own(event_id) or any(sees(event_id) for _, sees in self.named)

    def named_project(self, event_id: str) -> str | None:
        """The named project whose event this is (None: one the project itself sees)."""
        if self.own(event_id):
            return None
        return next((name for name, sees in self.named if sees(event_id)), None)

    def hits(self, hits: Sequence[Hit]) -> list[Hit]:
        """The hits of the project's own, the global ones and the named projects': another
        project's match, however close, is not P's knowledge (precision first)."""
        allowed = {GLOBAL, *(p for p in (self.scope.project,) if p), *(n for n, _ in self.named)}
        return [h for h in hits if not h.projects or allowed.intersection(h.projects)]

    def recent(self, events: Sequence[ev.Event], n: int) -> list[ev.Event]:
        """The newest `n` events of the log that a context in the project shows (another
        project's newer events, named or not, do not push them out nor override its facts)."""
        found = [e for e in reversed(events) if self.own(e.id)][:n]
        return found[::-1]

    def facts(self, section: str, found: Sequence[Known]) -> list[Known]:
        """The facts `found` in a short-term section (`section`, its text) that a context in the
        project shows, and those of the named projects' events, each of these as its project's
        (named by it, and judging only a sentence that names it, as a project's note would)."""
        shown = {_fact_id(k) for k in facts_of(scoped_digest(section, self.scope, self.sees))}
        out = []
        for k in found:
            if _fact_id(k) not in shown:
                continue
            name = self.named_project(k.block) if k.block else None
            if name is not None:
                k = dataclasses.replace(k, entity=name, mentions=(name.lower(),), named_only=True)
            out.append(k)
        return out

    def observations(self, lines: Sequence[EventLine]) -> list[EventLine]:
        """The observations read from an event the check sees, or from none (a person's)."""
        return [o for o in lines if not o.id or self.sees(o.id)]


def _fact_id(k: Known) -> tuple[str, str, dt.datetime | None, str | None]:
    return (k.key, k.value, k.since, k.block)
