"""The consistency guard: does a response say something the memory knows to be otherwise?

`check` gathers what the memory knows about a response with one search and asks three witnesses
in turn, each only about the sentences the one before left unverified:

- the facts (check_facts/): the `- key: value` lines of the core identity, the short-term
  document and the notes the response is about, and facts stated in the last events;
- the events (evidence/): a sentence no fact judges, compared with the remembered events it
  is about;
- the optional model (llm_check.py, only with `[llm]` configured), given the evidence the
  offline paths gathered.

In a project (`within`, within.py) every witness holds the response to what a context in that
project shows: its own and the global memories, another project's only when the response names
it.

Deterministic without a model, and precision first (a false alarm costs the person's trust in the
guard). The labelled corpora in tests/check_corpus*/ measure it (docs/benchmarks.md, "The guard").
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

from brainiac.core import clock
from brainiac.core.errors import BrainiacError
from brainiac.guard import evidence
from brainiac.guard.check_facts import compare
from brainiac.guard.check_facts.knowledge import CANDIDATE_NOTES, knowledge
from brainiac.guard.check_facts.verdicts import CheckResult
from brainiac.search import project_search

if TYPE_CHECKING:
    from brainiac.guard.within import Within
    from brainiac.search.memory_protocol import MemoryLike

_CANDIDATE_HITS = 80  # notes and events: the events beyond the first 40 hits are evidence too


def check(
    memory: MemoryLike, text: str, now: dt.datetime | None = None, within: Within | None = None
) -> CheckResult:
    """Compare a response with what the memory knows (module docstring); `within`: the project
    it is checked in (None: every memory, unscoped; the caller refreshed the index then)."""
    if not text.strip():
        raise BrainiacError("nothing to check: the text is empty")
    # One search serves both witnesses: the notes whose facts are compared and the events.
    if within is None:
        memory.refresh()
        hits = memory.indexer.index.search(text, limit=_CANDIDATE_HITS)
    else:
        # ranked as a search in the project is (its statistics), then the other projects' hits
        # the response does not name left out
        index = memory.indexer.index
        hits = within.hits(project_search.search(index, text, _CANDIDATE_HITS, within.scope))
    known = knowledge(memory, text, hits[:CANDIDATE_NOTES], within)
    when = now if now is not None else clock.now()
    result = compare(text, known, when)
    events = [h for h in hits if h.kind == "event"]
    # the notes hit are read for their observations too (evidence/observations.py)
    result = evidence.with_events(memory, result, when, events, known, hits, within)
    if memory.llm.available:  # offline by default: without [llm] nothing below runs
        from brainiac.guard import llm_check  # here: it loads the model client (http, ssl)

        result = llm_check.with_model(memory, result, known, events)
    return result
