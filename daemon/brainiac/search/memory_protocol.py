"""What the modules under `Memory` need of it: the vault, its settings and its index, as a protocol.

The jobs, the guard, imports, backups, the journal and `forget` are handed the `Memory` that runs
them, and `Memory` (memory.py) imports them to offer them as its API. Typed against the facade
itself they would import it back, a cycle; typed against this protocol they depend only on what
lies below both. `Memory` satisfies it (mypy checks each call site where one is passed down).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from brainiac.formats import events as ev
    from brainiac.formats.stm import ShortTerm
    from brainiac.model.llm import LLM
    from brainiac.search.indexer import Indexer, SyncReport
    from brainiac.store.config import Config
    from brainiac.store.locations import Locations
    from brainiac.store.names import NameBook
    from brainiac.store.vault import Vault


class Assembled(Protocol):
    """An assembled context: its text is what the working-memory file holds."""

    @property
    def text(self) -> str: ...


class MemoryLike(Protocol):
    vault: Vault
    config: Config
    locations: Locations
    index_writes: bool  # False beside a running daemon, which owns the index
    on_progress: Callable[[str, int, int], None] | None

    @property
    def names(self) -> NameBook:  # long-term notes' titles and aliases, kept between job runs
        ...

    @property
    def llm(self) -> LLM: ...

    @property
    def indexer(self) -> Indexer: ...

    def short_term(self) -> ShortTerm: ...

    def refresh(self, force: bool = False) -> SyncReport | None: ...

    def reindex(self) -> SyncReport: ...

    def remember_many(
        self, new_events: Iterable[ev.Event], in_time_order: bool = False
    ) -> list[ev.Event]: ...

    def context(
        self,
        prompt: str | None = None,
        budget: int | None = None,
        now: dt.datetime | None = None,
        reuse_ranking: bool = False,
        project: str | None = None,
    ) -> Assembled: ...
