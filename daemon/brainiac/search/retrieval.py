"""Finding the long-term memories relevant to a prompt and rendering them as context excerpts.

Ranking is Whoosh's BM25F relevance, normalised to the best hit, scaled by what the memory knows
about each note: its strength (attractors strengthen with use and decay without it), its
reinforcement (feedback on answers) and its recency. Relevance always leads: the other signals can
reorder comparable hits, never lift an irrelevant one.

A note comes with excerpts, not just its title: its summary, the facts and the verbatim source
quotes that match the prompt. An event hit (from the short-term log beyond the recent window, the
archive, or a note's sources) comes as its verbatim line, grouped under its note when it has one.
"""

from __future__ import annotations

import datetime as dt
import functools
import math
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from brainiac.core.errors import NoteParseError
from brainiac.formats import ltm, marks
from brainiac.formats.events import Event
from brainiac.language import lexicon
from brainiac.search import corpus, excerpt_head
from brainiac.search.context import (
    LazyItem,
    LongTermItem,
    RankedItem,
    RecentItem,
    event_group,
    render_event,
    render_grouped_event,
)
from brainiac.search.index_documents import Hit
from brainiac.store import names
from brainiac.store.config import Config
from brainiac.store.safe_io import StatKey, stat_key
from brainiac.store.vault import Vault

# An order of ranked memories, given their texts ("" for a note) and scores (semantic.py).
Diversify = Callable[[Sequence[str], Sequence[float]], list[int]]

_FACTS_PER_NOTE = 6
_QUOTES_PER_NOTE = 4
_WORD_RE = re.compile(r"[^\W_]+")
# How much a turn said by another speaker weighs when the prompt names one (see named_speaker).
# Not less: a question that pins on one speaker what the other said (LoCoMo's adversarial
# category) must still find the turn that says who did it.
_OTHER_SPEAKER = 0.7
# How much an event gains from sharing a session with the best hits (see session_focus), and how
# many of the best events say which sessions the prompt is about: the evenest setting across
# the development conversations, not a fine tuning (docs/changelog.md, "History of the
# measurements").
_SESSION_WEIGHT = 1.0
_SESSION_HITS = 20


class ParsedNotes:
    """Long-term notes as last parsed, each parsed again only when its file's stat changes
    (inode, size, modification and change times, as Memory.short_term): parsing a note's
    frontmatter is most of what showing it costs, and the notes a conversation is about come
    back prompt after prompt. The `keep` most recently shown are kept: enough for a
    conversation's notes; unrelated prompts reuse few, so more would only cost memory."""

    def __init__(self, vault: Vault, keep: int = 64) -> None:
        self.vault = vault
        self.keep = keep
        self._parsed: OrderedDict[str, tuple[StatKey, ltm.LongTermNote]] = OrderedDict()
        self._lock = threading.Lock()  # the daemon's socket threads assemble contexts too

    def parse(self, rel: str) -> ltm.LongTermNote:
        """The note at `rel` as `ltm.parse(vault.read(rel).text, rel)` gives it, with its errors
        (NoteParseError, FileNotFoundError)."""
        if self.keep <= 0:
            return ltm.parse(self.vault.read(rel).text, rel)
        try:
            st = os.stat(self.vault.path(rel))
        except FileNotFoundError:
            raise
        except OSError:
            return ltm.parse(self.vault.read(rel).text, rel)  # which says what is wrong
        key = stat_key(st)
        with self._lock:
            known = self._parsed.get(rel)
            if known is not None and known[0] == key:
                self._parsed.move_to_end(rel)
                return known[1]
        # Stat first, then read: a change after the stat is read now and parsed again next time
        # (its stat no longer matches), never kept under the new stat with the old text.
        parsed = ltm.parse(self.vault.read(rel).text, rel)
        with self._lock:
            self._parsed[rel] = (key, parsed)
            self._parsed.move_to_end(rel)
            while len(self._parsed) > self.keep:
                self._parsed.popitem(last=False)
        return parsed


@dataclass(frozen=True)
class Ranked:
    hit: Hit
    score: float


def weight(hit: Hit, cfg: Config, now: dt.datetime) -> float:
    """How much a memory's own state boosts its relevance: 1.0 for a fresh, neutral memory."""
    # Strength earned by use lifts a memory; a memory that faded unused is not put below one
    # that never became a note: promotion and decay must not make an event harder to find than
    # it was in the log.
    strength = max(math.log1p(max(hit.strength, 0.0)) - math.log1p(ltm.DEFAULT_STRENGTH), 0.0)
    reinforcement = math.tanh(hit.reinforcement)
    recency = 0.0
    if hit.at is not None:
        age_days = max((now - hit.at).total_seconds() / 86400.0, 0.0)
        recency = 0.5 ** (age_days / cfg.recency_half_life_days)
    factor = (
        1.0
        + cfg.strength_weight * strength
        + cfg.reinforcement_weight * reinforcement
        + cfg.recency_weight * recency
    )
    # An archived (faded) memory is not weighted down further: its low strength already says it
    # faded, and forgetting in brainiac lowers rank, it never hides what the prompt is about.
    return max(factor, 0.05)


def rank(
    hits: Sequence[Hit],
    cfg: Config,
    now: dt.datetime,
    exclude_events: Iterable[str] = (),
    query: str = "",
) -> list[Ranked]:
    excluded = set(exclude_events)
    hits = [h for h in hits if not (h.kind == corpus.EVENT and h.event_id in excluded)]
    if not hits:
        return []
    best = max(h.score for h in hits) or 1.0
    speaker = named_speaker(query, hits)
    ranked = [
        Ranked(
            h,
            cfg.relevance_weight
            * (h.score / best)
            * weight(h, cfg, now)
            * (_OTHER_SPEAKER if speaker and h.role and h.role.casefold() != speaker else 1.0),
        )
        for h in hits
    ]
    ranked.sort(key=lambda r: (-r.score, r.hit.key))
    return session_focus(ranked)


def session_focus(ranked: list[Ranked]) -> list[Ranked]:
    """`ranked` with each event lifted by its session's share of the best events' score.

    Where a conversation was about the prompt, the message that answers it often shares none of
    its words but the speaker's name ("We came second anyway" after "How was the regatta?"), and
    ties with that speaker's messages everywhere else; the sessions the best hits come from say
    where to look. Relevance still leads: the best events are not moved, an event in no such
    session keeps its score, and one in the session of every best event at most doubles its own.
    """
    best = [r for r in ranked if r.hit.kind == corpus.EVENT and r.hit.session][:_SESSION_HITS]
    total = sum(r.score for r in best)
    if total <= 0:
        return ranked
    mass: dict[str, float] = {}
    for r in best:
        mass[r.hit.session] = mass.get(r.hit.session, 0.0) + r.score / total
    # The best events were found by the prompt's own words and keep their order (and their
    # place beside the notes they are quoted in); the lift is for the messages those words miss.
    found = {id(r) for r in best}
    out = [
        Ranked(r.hit, r.score * (1.0 + _SESSION_WEIGHT * mass.get(r.hit.session, 0.0)))
        if r.hit.kind == corpus.EVENT and id(r) not in found
        else r
        for r in ranked
    ]
    out.sort(key=lambda r: (-r.score, r.hit.key))
    return out


def named_speaker(query: str, hits: Sequence[Hit]) -> str:
    """The one speaker of the hits' events that `query` names (casefolded), or "".

    A question about someone is mostly answered by what they said themselves: on the LoCoMo
    development conversations, 494 of the 517 questions that name one of the two speakers have
    all their evidence in that speaker's own turns. Another speaker's turn that names them
    ("Thanks, Caroline!") matches the name as well, and is rarely the answer.
    """
    roles = {h.role.casefold() for h in hits if h.kind == corpus.EVENT and h.role}
    if len(roles) < 2:
        return ""
    named = roles & _words(query, min_len=1)
    return named.pop() if len(named) == 1 else ""


def about_prompt(section_text: str, prompt: str | None) -> str:
    """A short-term section for a context: every line a person wrote, and of the lines the jobs
    generated (a summary, a working-memory topic, tasks read from the log) those that share a
    word with the prompt. Without a prompt (the working-memory file) the whole section.

    Generated lines are the jobs' digest of the recent log, which the context shows anyway;
    beside a prompt they are worth the budget only where they are about it. A number
    is not what a line is about: the digest's lines are dated ("from 2023-08-13 15:20"), and a
    prompt naming a year shared it with all of them.
    """
    if not prompt:
        return section_text
    words = {w for w in _words(prompt) if not w.isdigit()}
    return "".join(
        line
        for line in section_text.splitlines(keepends=True)
        if not marks.is_generated(line) or _overlap(line, words)
    )


def _words(text: str, min_len: int = 3) -> set[str]:
    return {w for w in _WORD_RE.findall(text.casefold()) if len(w) >= min_len}


def _overlap(text: str, query_words: set[str]) -> int:
    return len(_words(text) & query_words)


def max_items(cfg: Config, budget: int) -> int:
    """As many items as could fill the budget (an event line is ~30 tokens), capped by the config:
    a small budget does not pay for candidates it cannot use, a large one is not starved."""
    return min(cfg.max_ltm_items, max(10, budget // 30))


def candidate_limit(cfg: Config, budget: int, excluded: int) -> int:
    """How many search hits to rank: twice the items wanted (a note's event hits fold into its
    one excerpt, and the memory weights may reorder near-ties across the cut) plus the recent
    events excluded. Fetching more only costs time: reading stored fields dominates a search."""
    return 2 * max_items(cfg, budget) + excluded


def retrieve(
    vault: Vault,
    hits: Sequence[Hit],
    query: str,
    cfg: Config,
    now: dt.datetime,
    exclude_events: Iterable[str] = (),
    budget: int = 2000,
    notes: ParsedNotes | None = None,
    recent_in_place: Iterable[str] = (),
    diversify: Diversify | None = None,
) -> Iterator[RankedItem]:
    """The relevant long-term memories among `hits` (a search for `query`), rendered, best first.

    `diversify(texts, relevance)`: an order of the ranked hits that places fewer of those
    saying what an earlier one said (semantic.py `diversified`); None keeps the ranking's.

    `recent_in_place`: ids of recent events ranked with them, each given at its rank as an item
    that stands for it (a RecentItem): below `relevance_first_below` long-term memory is
    packed before the recent events, and a recent step the prompt asks about ("Where did I park
    the car?" right after saying so) must not be crowded out by older memories ranked below it,
    least of all by those the query feedback found in other words.

    A generator: a note is read and rendered only when the assembler asks for the next item, so
    the notes ranked below what fits the budget cost nothing. Notes are read from their files, so
    an excerpt is current even when the hits come from an earlier search (`notes` keeps them
    parsed while their files are unchanged).
    """
    limit = max_items(cfg, budget)
    if limit == 0 or not hits:
        return
    notes = notes if notes is not None else ParsedNotes(vault, keep=0)
    in_place = set(recent_in_place)
    exclude_events = set(exclude_events) - in_place
    ranked = rank(hits, cfg, now, exclude_events, query)
    if diversify is not None:
        order = diversify(
            [r.hit.text if r.hit.kind == corpus.EVENT else "" for r in ranked],
            [r.score for r in ranked],
        )
        ranked = [ranked[i] for i in order]
    query_words = _words(query)
    given = 0
    noted: set[str] = set()  # notes already given
    quoted: set[str] = set()  # event ids quoted in a given note's excerpt
    wanted_quotes: dict[str, list[str]] = {}  # note path -> event ids hit inside it
    for r in ranked:
        h = r.hit
        if h.kind == corpus.EVENT and h.title:
            wanted_quotes.setdefault(h.path, []).append(h.event_id)
    for r in ranked:
        if given >= limit:
            return
        h = r.hit
        if h.kind == corpus.NOTE:
            if h.path in noted:
                continue
            hit_ids = wanted_quotes.get(h.path, [])
            if h.excerpt_floor > 0:
                # Rendered when the assembler gets to it, and only if its head fits the room
                # left: a note that cannot fit is not read (excerpt_head.py). What its excerpt
                # quotes of the hits is known without reading it: its first event hits, taken
                # first (_note_item), while the file is as indexed.
                item: RankedItem = LazyItem(
                    functools.partial(_note_item, notes, h.path, query_words, hit_ids),
                    least=h.excerpt_floor,
                )
                quoted.update(hit_ids[:_QUOTES_PER_NOTE])
            else:
                rendered = _note_item(notes, h.path, query_words, hit_ids)
                if rendered is None:
                    continue
                item = rendered
                quoted.update(s.split("#", 1)[1] for s in item.sources if "#" in s)
            noted.add(h.path)
        elif h.event_id in quoted:
            continue  # already quoted in its note's excerpt
        elif h.kind == corpus.EVENT and h.event_id in in_place:
            item = RecentItem(h.event_id)
        else:
            event = Event(h.at, h.role, h.text, h.session or None, h.event_id)
            # A link Obsidian resolves (by file name) in context/working_memory.md too.
            origin = names.link(h.path, h.title) if h.title else ""
            item = LongTermItem(
                render_grouped_event(event),
                (h.key,),
                group=event_group(event, origin),
                brief=event_group(event, origin, with_session=False),
                order=f"{h.at.isoformat() if h.at else ''}#{h.event_id}",
            )
        given += 1
        yield item


def _note_item(
    notes: ParsedNotes, rel: str, query_words: set[str], hit_event_ids: list[str]
) -> LongTermItem | None:
    try:
        parsed = notes.parse(rel)
    except (NoteParseError, FileNotFoundError):
        return None  # changed or broken since indexed; the next sync catches up
    if excerpt_head.made_by_promotion(parsed):
        # Its events are the memory, each found and shown on its own; what the jobs wrote
        # around them is worth the budget only where it is about the prompt: the facts that
        # share its words in their key or value (its keyword summary never is).
        about = [f for f in _fact_blocks(parsed.section(ltm.FACTS)) if _fact_about(f, query_words)]
        if not about:
            return None
        text = "\n".join([excerpt_head.heading(parsed.title, rel), *about[:_FACTS_PER_NOTE]])
        return LongTermItem(text, (rel,))
    lines = [excerpt_head.heading(parsed.title, rel)]
    summary = excerpt_head.summary(parsed)  # a free-form note's opening prose stands in for one
    if summary:
        lines.append(summary)
    fact_lines = _fact_blocks(parsed.section(ltm.FACTS))
    fact_lines.sort(key=lambda f: -_overlap(f, query_words))  # stable: ties keep the note's order
    lines += fact_lines[:_FACTS_PER_NOTE]
    # Only the sources that can be quoted are parsed: those hit, and those holding a word of the
    # prompt (a word of an event's is in its text, lowercased); at 10,000 notes a context shows
    # ~15 notes, and parsing every source line was a sixth of showing one.
    hit_ids = set(hit_event_ids)

    def quotable(block: list[str]) -> bool:
        text = "\n".join(block)
        folded = text.casefold()
        return any(i in text for i in hit_ids) or any(w in folded for w in query_words)

    sources = [loc.event for loc in parsed.located_sources(quotable)]
    by_id = {e.id: e for e in sources}
    chosen = [by_id[i] for i in hit_event_ids if i in by_id]
    shared = {e.id: _overlap(e.text, query_words) for e in sources if e.id not in hit_ids}
    chosen += sorted(  # stable: ties keep the note's order
        (e for e in sources if shared.get(e.id, 0) > 0), key=lambda e: -shared[e.id]
    )
    quoted = chosen[:_QUOTES_PER_NOTE]
    for e in quoted:
        lines.append("> " + render_event(e)[2:].replace("\n", "\n> "))
    return LongTermItem("\n".join(lines), (rel, *(f"{rel}#{e.id}" for e in quoted)))


def _fact_about(block: str, query_words: set[str]) -> bool:
    """Whether a fact shares a word with the prompt in its key or value: a content word, not a
    name (a speaker's name is in most of the questions about them) and not the tail's date."""
    # Here, not at the top: only a note promotion made asks, and a CLI context call without the
    # daemon should not load the two.
    from brainiac.language import facts

    parsed = facts.parse(block.split("\n", 1)[0])
    if not parsed:
        return False
    fact = parsed[0].fact
    said = set(_WORD_RE.findall(f"{fact.key} {fact.value}"))
    names = {w.casefold() for w in _WORD_RE.findall(fact.value) if w[:1].isupper()}
    names |= {w.removesuffix("'s") for w in fact.key.split() if w.endswith("'s")}
    words = {w.casefold() for w in said} - lexicon.STOP_WORDS - names
    return bool(words & query_words)


def _fact_blocks(section: str) -> list[str]:
    """Top-level `- ` fact lines, each with its indented history lines."""
    blocks: list[str] = []
    for line in section.split("\n"):
        if line.startswith("- "):
            blocks.append(line)
        elif blocks and line.startswith((" ", "\t")) and line.strip():
            blocks[-1] += "\n" + line
    return blocks
