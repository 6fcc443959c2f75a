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

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from brainiac.store.projects import GLOBAL, Scope

if TYPE_CHECKING:
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
        allowed = {GLOBAL, self.scope.project, *(n for n, _ in self.named)}
        return [h for h in hits if not h.projects or allowed.intersection(h.projects)]
