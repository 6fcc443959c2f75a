"""The guard's optional third witness: a language model reading the same evidence.

Claims extracted from a response by a model and verified against stored facts (docs/check.md),
kept behind the deterministic guard. When `[llm]` is configured, `check` (check.py) first judges
every sentence offline (the facts, then the events: evidence/); the sentences still
unverified are then sent to the model with the evidence the offline path already gathered, each
line with an id (`F1`: a `- key: value` fact line, `E1`: a remembered event). The rule:

- the model judges only what the offline path left unverified: an offline conflict stays a
  conflict and an offline agreement stays one;
- a model verdict counts only when it names an evidence id that was sent; an invented id, a
  missing one or an unknown claim id is ignored (the finding stays unverified);
- the file, line, block and time of a model-decided finding come from the offline data the id
  stands for, never from the model's text;
- on any failure (endpoint down, timeout, an answer that is not a JSON array) the offline
  result stands; llm.py logs one line.

Each finding and conflict says which path decided it (`decided_by`: "offline" or "llm").

What is sent: the unverified sentences of the response and the evidence lines (facts and event
texts the search found); private notes are never indexed nor read for facts (privacy.py), so they
are never sent.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from brainiac.guard.check_facts.verdicts import (
    CONFLICT,
    CONSISTENT,
    UNVERIFIED,
    CheckResult,
    Conflict,
    Finding,
    Known,
)
from brainiac.guard.evidence.alignment import EventLine, event_lines, line_of
from brainiac.language import facts
from brainiac.model.llm import Verdict

if TYPE_CHECKING:
    from brainiac.search.index_documents import Hit
    from brainiac.search.memory_protocol import MemoryLike

log = logging.getLogger(__name__)

LLM = "llm"
_CONFIDENCE = 0.5  # a model's conflict: below the deterministic ones (0.5 to 0.9)


@dataclass(frozen=True)
class _Evidence:
    """One line sent to the model, and where it lives in the vault."""

    text: str  # as sent
    source: str  # "fact" or "event"
    about: str  # the fact's key, or "" for an event
    stored: str  # the fact's value, or the event's text
    file: str
    line: int | None
    block: str | None
    at: str | None
    entity: str | None
    event: EventLine | None = None  # its line is looked up only when a verdict cites it


def with_model(
    memory: MemoryLike, result: CheckResult, known: Sequence[Known], hits: Sequence[Hit]
) -> CheckResult:
    """`result` with the model's verdicts on its unverified sentences (module docstring)."""
    open_ = [f for f in result.findings if f.status == UNVERIFIED]
    if not open_:
        return result  # nothing to ask: no call, no cost
    sent = _evidence(known, hits)
    if not sent:
        return result
    claims = {f"C{i}": f.claim for i, f in enumerate(open_, 1)}
    verdicts = memory.llm.verify_claims(
        list(claims.items()), [(eid, e.text) for eid, e in sent.items()]
    )
    if verdicts is None:
        return result  # the endpoint failed or answered nonsense: llm.py logged why
    chosen: dict[str, Verdict] = {}
    invented = 0
    for v in verdicts:
        if v.claim not in claims or v.claim in chosen or v.verdict == UNVERIFIED:
            continue
        if v.evidence_id not in sent:
            invented += 1  # never trust an id that was not sent: the verdict rests on nothing
            continue
        chosen[v.claim] = v
    if invented:
        log.warning("LLM claim check: ignored %d verdict(s) naming no evidence sent", invented)
    by_claim = {claim: cid for cid, claim in claims.items()}
    findings: list[Finding] = []
    conflicts: list[Conflict] = list(result.conflicts)
    for f in result.findings:
        decided = chosen.get(by_claim.get(f.claim, "")) if f.status == UNVERIFIED else None
        if decided is None or decided.evidence_id is None:
            findings.append(f)
            continue
        finding, conflict = _decided(memory, f.claim, decided, sent[decided.evidence_id])
        findings.append(finding)
        if conflict is not None:
            conflicts.append(conflict)
    return dataclasses.replace(result, conflicts=tuple(conflicts), findings=tuple(findings))


def _evidence(known: Sequence[Known], hits: Sequence[Hit]) -> dict[str, _Evidence]:
    """The lines to send, best first: the facts the offline path compared, then the events the
    search found for the response (the ones evidence/ aligns sentences with)."""
    out: dict[str, _Evidence] = {}
    for i, k in enumerate(known, 1):
        since = facts.render_time(k.since) if k.since else None
        about = f"{k.entity}: " if k.entity else ""
        text = f"{about}{k.key}: {k.value}" + (f" (since {since})" if since else "")
        out[f"F{i}"] = _Evidence(
            text, "fact", k.key, k.value, k.file, k.line, k.block, since, k.entity
        )
    for i, e in enumerate(event_lines(hits), 1):
        at = e.at.strftime("%Y-%m-%d %H:%M") if e.at else None
        who = e.role or "someone"
        text = f"{who}" + (f" on {at}" if at else "") + f" said: {e.text}"
        out[f"E{i}"] = _Evidence(text, "event", "", e.text, e.path, None, e.id, at, None, e)
    return out


def _decided(
    memory: MemoryLike, claim: str, v: Verdict, e: _Evidence
) -> tuple[Finding, Conflict | None]:
    line = e.line if e.event is None else line_of(memory, e.event)
    status = CONFLICT if v.verdict == CONFLICT else CONSISTENT
    correction = None
    if status == CONFLICT:
        where = f"{e.file}:{line or 0}" + (f" ^{e.block}" if e.block else "")
        correction = f'You said "{claim}", but memory has: "{e.stored}" ({where}).'
        if v.correction:
            correction += f" The model's reading: {v.correction}"
    finding = Finding(
        claim=claim,
        status=status,
        source=e.source,
        about=e.about or None,
        stored=e.stored,
        file=e.file,
        line=line,
        block=e.block,
        at=e.at,
        correction=correction,
        decided_by=LLM,
    )
    if correction is None:
        return finding, None
    conflict = Conflict(
        claim=claim,
        key=e.about,
        stored=e.stored,
        since=e.at,
        file=e.file,
        line=line or 0,
        block=e.block,
        kind="current",
        old=None,
        old_period=None,
        entity=e.entity,
        confidence=_CONFIDENCE,
        correction=correction,
        decided_by=LLM,
    )
    return finding, conflict
