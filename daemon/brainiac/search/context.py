"""Assembling the working memory under a token budget. Pure: text in, text out.

Order (docs/architecture.md, least to most volatile): `## Core Identity`, `## Short-Term Memory`,
`## Relevant Long-Term Memory`, `## User Prompt`. Under the budget, Core Identity and the prompt are
never cut; long-term memory is cut first, then the short-term summary and structured parts, and the
recent events last (oldest first). The result never exceeds the budget unless identity and prompt
alone do, in which case `over_budget` is set and only those two (with the headings) are kept.
A prompt of None (the prompt hook: the agent has the prompt already) has no User Prompt section,
and the whole budget goes to the memory.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace

from brainiac.core.errors import BudgetError
from brainiac.formats.events import Event, stored_lines

TokenCounter = Callable[[str], int]
RECENT_HEADER = "[CRITICAL_CONTEXT_LAST_10_STEPS]"
# The marker as memory text may show it: a transcript quoting it must not pose as the real block.
_RECENT_HEADER_INERT = "\\[CRITICAL_CONTEXT_LAST_10_STEPS\\]"
MAX_BUDGET = 10_000_000
_SMALLEST_ITEM = 8  # tokens: below this no rendered memory fits
_MISSES_BEFORE_STOP = 10


def approx_tokens(text: str) -> int:
    """The default token count: ceil(characters / 4), a fair estimate for English prose."""
    return math.ceil(len(text) / 4)


@dataclass(frozen=True)
class LongTermItem:
    """One retrieved memory, already rendered, with the vault keys it came from.

    An item with a `group` (an event: its day and session) is shown under that group's heading,
    once for all the group's items, in `order` (its time): a line then carries no date or session
    of its own, so more of what a prompt needs fits the budget, and the events of one conversation
    read together, in the order they were said. The heading is `brief` (the day without the
    session) unless another group shown shares that brief heading: a session label names which
    conversation of a day, and says nothing when the day names it already.
    """

    text: str
    sources: tuple[str, ...]
    group: str = ""
    order: str = ""
    brief: str = ""

    def with_text(self, change: Callable[[str], str]) -> LongTermItem:
        """This item with `change` made to its text; the item itself when that changes nothing
        (most items: no copy)."""
        text = change(self.text)
        return self if text == self.text else replace(self, text=text)


@dataclass(frozen=True)
class LazyItem:
    """A retrieved memory not rendered yet (a note's excerpt: its file read and parsed only when
    needed): `render` gives the item, or None when there is nothing to show after all; its text
    is at least `least` characters long. The assembler passes it over unrendered when that much
    does not fit the room left."""

    render: Callable[[], LongTermItem | None] = field(compare=False)
    least: int = 0

    def with_text(self, change: Callable[[str], str]) -> LazyItem:
        """This item with `change` made to its text when it is rendered."""
        return replace(self, render=functools.partial(_rendered_with, self.render, change))


@dataclass(frozen=True)
class RecentItem:
    """A recent event ranked among the long-term memories (when relevance comes first), by its
    id: packed at its rank, shown in the recent events, where it belongs."""

    event_id: str

    def with_text(self, change: Callable[[str], str]) -> RecentItem:
        """The item itself: it has no text; its event is changed where the recent events are."""
        return self


# What retrieval ranks for the assembler, best first.
RankedItem = LongTermItem | LazyItem | RecentItem


def _rendered_with(
    render: Callable[[], LongTermItem | None], change: Callable[[str], str]
) -> LongTermItem | None:
    item = render()
    return item.with_text(change) if item is not None else None


@dataclass(frozen=True)
class Inputs:
    identity: str | None
    prompt: str | None  # None: no User Prompt section (the prompt hook: the agent has it)
    short_term: Sequence[tuple[str, str]]  # (subsection title, text) in display order
    recent: Sequence[Event]  # oldest first
    long_term: Iterable[RankedItem]  # best first; may be lazy (consumed only while room lasts)


@dataclass(frozen=True)
class Assembled:
    text: str
    tokens: int
    budget: int
    sources: tuple[str, ...]
    over_budget: bool
    dropped_long_term: int
    dropped_events: int
    warnings: tuple[str, ...] = field(default=())


def render_recent_event(event: Event) -> str:
    """A recent event as a line under its `recent_group` heading: the time, speaker and text."""
    time = f"{event.at:%H:%M} " if event.at else ""
    return f"- {time}{event.role}: {_event_body(event)}"


def recent_group(event: Event) -> str:
    """The heading over a run of recent events of one day and session."""
    day = event.at.strftime("%Y-%m-%d") if event.at else "undated"
    session = f" ({event.session})" if event.session else ""
    return inert(f"#### {day}{session}")


def render_event(event: Event) -> str:
    """An event as a list item, its text escaped as in the vault: a line of it can't read as one
    of the context's own headings (`## User Prompt`), nor as the recent-events marker."""
    session = f" ({event.session})" if event.session else ""
    return f"- [{event.date_label}] {event.role}{session}: {_event_body(event)}"


def event_group(event: Event, origin: str = "", with_session: bool = True) -> str:
    """The heading a long-term event is shown under: its day and session (and the note it is
    kept in, when that note has a title of its own to link). Without the session: the brief
    heading `LongTermItem.brief`."""
    day = event.at.strftime("%Y-%m-%d") if event.at else "undated"
    session = f" ({event.session})" if event.session and with_session else ""
    where = f", from {origin}" if origin else ""
    return f"### {day}{session}{where}"


def render_grouped_event(event: Event) -> str:
    """An event as a line under its `event_group` heading: the speaker and the text."""
    return f"- {event.role}: {_event_body(event)}"


def _event_body(event: Event) -> str:
    return inert("\n".join(stored_lines(event.text)))


def inert(text: str) -> str:
    """Memory text with brainiac's own context marker made plain text."""
    return text.replace(RECENT_HEADER, _RECENT_HEADER_INERT)


def check_budget(budget: int) -> int:
    if isinstance(budget, bool) or not isinstance(budget, int):
        raise BudgetError(f"budget must be a whole number of tokens, got {budget!r}")
    if budget < 1 or budget > MAX_BUDGET:
        raise BudgetError(
            f"budget {budget} is out of range; give a number of tokens from 1 to {MAX_BUDGET}"
        )
    return budget


def assemble(
    inputs: Inputs,
    budget: int,
    count: TokenCounter = approx_tokens,
    relevance_first: bool = False,
    long_term_share: float = 0.0,
) -> Assembled:
    check_budget(budget)
    return _Assembly(inputs, budget, count).run(relevance_first, long_term_share)


class _Assembly:
    """One assembly's state: the room left, the recent events and long-term items kept so far,
    and the sources shown. The packing steps are its methods, called in priority order by `run`.

    Every part is a block of lines; blocks are joined with "\\n". Counting each block with its
    separator and summing over-estimates the whole for ceil-based counters, so the sum is safe.
    The default counter is characters / 4: then the parts are counted in characters, which add
    up exactly (rounding each block up left a turn or two of a 4,000-token budget unused).
    """

    def __init__(self, inputs: Inputs, budget: int, count: TokenCounter) -> None:
        self.inputs = inputs
        self.budget = budget
        self.count = count
        self.warnings: list[str] = []
        identity = inputs.identity
        if identity is None:
            self.warnings.append(
                "system/core_identity.md is missing; the context has no core identity"
            )
            identity = ""
        self.with_prompt = inputs.prompt is not None
        prompt = (inputs.prompt or "").strip("\n")
        self.exact = count is approx_tokens
        self.unit = 4 if self.exact else 1  # what one token of the budget is in `cost`'s measure

        self.head_identity = "## Core Identity\n" + identity.strip("\n")
        self.head_stm = "\n## Short-Term Memory"
        self.head_ltm = "\n## Relevant Long-Term Memory"
        self.head_prompt = "\n## User Prompt\n" + prompt
        self.fixed = self.cost(self.head_identity) + self.cost(self.head_stm)
        self.fixed += self.cost(self.head_ltm)
        self.fixed += self.cost(self.head_prompt) if self.with_prompt else 0
        self.room = budget * self.unit - self.fixed

        self.events = list(inputs.recent)
        self.events_header = f"\n### Recent Events\n{RECENT_HEADER}"
        self.kept_events: dict[int, str] = {}  # position in `events` -> its run heading
        self.kept_order: list[int] = []  # the same positions, sorted
        self.position = {e.id: i for i, e in enumerate(self.events)}

        self.pending = iter(inputs.long_term)  # rendered lazily, each at most once
        self.passed_over: list[RankedItem] = []  # too big for an earlier, smaller room
        self.chosen: list[tuple[LongTermItem, str]] = []  # what fits and its block, best first
        self.headings = _Headings(self.cost)
        self.sources: list[str] = []

    def cost(self, block: str) -> int:
        return len(block) + 1 if self.exact else self.count(block + "\n")

    def run(self, relevance_first: bool, long_term_share: float) -> Assembled:
        # Priority: recent events, then the short-term sections, then long-term memory; a part
        # that had to be cut is never replaced by one of lower priority. With `relevance_first`
        # (a small budget and a prompt) long-term memory relevant to the prompt comes first and
        # short-term memory gets what it leaves.
        stm_blocks: list[str] = []
        dropped_ltm = 0
        if relevance_first:
            # A recent step ranked among the long-term memories (a RecentItem) is packed
            # at its rank, and shown among the recent events.
            used, dropped_ltm = self.pack_long_term(self.room)
            self.room -= used
        elif long_term_share > 0:
            # A prompt's own share first: what it is about must not be crowded out by recent
            # steps.
            used, dropped_ltm = self.pack_long_term(int(self.room * long_term_share))
            self.room -= used
        self.room -= self.pack_events(self.room)
        events_cut = len(self.kept_events) < len(self.inputs.recent)
        if not events_cut:
            stm_blocks, used, stm_cut = self.pack_short_term(self.room)
            self.room -= used
            if not stm_cut and not relevance_first:
                used, dropped_ltm = self.pack_long_term(self.room)
                self.room -= used
        ltm_blocks = self.long_term_blocks()
        dropped_events = len(self.inputs.recent) - len(self.kept_events)

        parts = [self.head_identity, self.head_stm, *stm_blocks]
        parts += self.events_block()
        parts += [self.head_ltm, *ltm_blocks] + ([self.head_prompt] if self.with_prompt else [])
        text = "\n".join(parts) + "\n"
        over = self.fixed > self.budget * self.unit
        if over:
            tokens = f"{math.ceil(self.fixed / self.unit)} tokens, over the budget of {self.budget}"
            what, kept = ("core identity and prompt alone take", "they are")
            if not self.with_prompt:
                what, kept = ("core identity alone takes", "it is")
            self.warnings.append(f"{what} {tokens}; {kept} kept whole and nothing else is included")
        return Assembled(
            text,
            self.count(text),
            self.budget,
            tuple(self.sources),
            over,
            dropped_ltm,
            dropped_events,
            tuple(self.warnings),
        )

    def add_event(self, i: int, room: int) -> int | None:
        """Recent event `i` into `kept_events` if it fits in `room`: the tokens it adds (with the
        block's header for the first), or None. Shown in chronological order, each run of one
        day and session under one heading: a line carries only its time and speaker (the date
        and session on every line were a fifth of the block)."""
        line, heading = render_recent_event(self.events[i]), recent_group(self.events[i])
        # A line joining the run of the event kept next to it in time costs no heading; one
        # that starts a run pays for its heading, and for the heading of the event after it
        # when it splits that event's run in two.
        kept_events, kept_order = self.kept_events, self.kept_order
        at = bisect.bisect(kept_order, i)
        before = kept_events[kept_order[at - 1]] if at > 0 else None
        after = kept_events[kept_order[at]] if at < len(kept_order) else None
        spent = self.cost(line) + (0 if kept_events else self.cost(self.events_header))
        if heading not in (before, after):
            spent += self.cost(heading)
            if before is not None and before == after:
                spent += self.cost(after)
        if spent > room:
            return None
        kept_events[i] = heading
        bisect.insort(kept_order, i)
        return spent

    def pack_events(self, room: int) -> int:
        """The newest recent events not kept yet, newest first, up to the first that does not
        fit in `room`; the tokens spent."""
        used = 0
        for i in range(len(self.events) - 1, -1, -1):
            if i in self.kept_events:
                continue
            spent = self.add_event(i, room - used)
            if spent is None:
                break
            used += spent
        return used

    def events_block(self) -> list[str]:
        if not self.kept_events:
            return []
        block = [self.events_header]
        previous = None
        for i in self.kept_order:
            if self.kept_events[i] != previous:
                block.append(self.kept_events[i])
                previous = self.kept_events[i]
            block.append(render_recent_event(self.events[i]))
        return block

    def pack_short_term(self, room: int) -> tuple[list[str], int, bool]:
        """The short-term sections in display order, cut line by line if need be."""
        cost = self.cost
        blocks: list[str] = []
        used = 0
        for title, text in self.inputs.short_term:
            text = inert(text.strip("\n"))
            if not text:
                continue
            header = f"\n### {title}"
            if room - used <= cost(header):
                return blocks, used, True
            kept_lines = []
            spent = cost(header)
            all_lines = text.split("\n")
            for line in all_lines:
                if used + spent + cost(line) > room:
                    break
                kept_lines.append(line)
                spent += cost(line)
            if kept_lines:
                blocks.append("\n".join([header, *kept_lines]))
                used += spent
            if len(kept_lines) < len(all_lines):
                return blocks, used, True
        return blocks, used, False

    def pack_long_term(self, room: int) -> tuple[int, int]:
        """Long-term memory best first, skipping what no longer fits, until the room is used up
        (or enough items in a row did not fit): items render lazily, so stopping saves work.
        A second call (the rest of the budget) continues where the first stopped, trying again
        the items the first had to pass over. The first item of a group pays for its heading."""
        passed_over, sources = self.passed_over, self.sources
        used = dropped = misses = 0
        retry, passed_over[:] = list(passed_over), []
        for item in itertools.chain(retry, self.pending):
            if room - used < _SMALLEST_ITEM * self.unit or misses >= _MISSES_BEFORE_STOP:
                passed_over.append(item)
                break
            if isinstance(item, RecentItem):
                at = self.position.get(item.event_id)
                if at is None or at in self.kept_events:
                    continue  # not a recent event, or shown already
                placed = self.add_event(at, room - used)
                if placed is None:
                    misses += 1
                else:
                    used += placed
                    misses = 0
                continue
            if isinstance(item, LazyItem):
                # `least` characters cost least + 1 with the default counter; another counter
                # is asked of the text itself.
                if self.exact and item.least + 1 > room - used:
                    passed_over.append(item)
                    dropped += 1
                    misses += 1
                    continue
                rendered = item.render()
                if rendered is None:
                    continue
                item = rendered
            block = inert(item.text.strip("\n"))
            spent = self.cost(block) + self.headings.cost_of(item)
            if used + spent <= room:
                self.chosen.append((item, block))
                self.headings.open(item)
                sources.extend(s for s in item.sources if s not in sources)
                used += spent
                misses = 0
            else:
                passed_over.append(item)
                dropped += 1
                misses += 1
        return used, dropped

    def long_term_blocks(self) -> list[str]:
        """The chosen items in the order they ranked, a group at the place of its best item,
        holding all of the group's items in time order."""
        grouped: dict[str, list[tuple[LongTermItem, str]]] = {}
        for item, block in self.chosen:
            if item.group:
                grouped.setdefault(item.group, []).append((item, block))
        blocks: list[str] = []
        for item, block in self.chosen:
            if not item.group:
                blocks.append(block)
            elif item.group in grouped:
                members = sorted(grouped.pop(item.group), key=lambda m: m[0].order)
                blocks.append(inert(self.headings.shown(item.group)))
                blocks += [b for _, b in members]
        return blocks


class _Headings:
    """The group headings long-term memory shows, and what they cost as groups are opened.

    A group is headed by its brief heading (the day) while no other group shown has the same
    brief heading; once two do, both show their full heading (day and session), and the one
    opened first pays the difference then.
    """

    def __init__(self, cost: Callable[[str], int]) -> None:
        self._cost = cost
        self._full: dict[str, bool] = {}  # group -> shown with its full heading
        self._brief: dict[str, str] = {}  # group -> its brief heading
        self._by_brief: dict[str, list[LongTermItem]] = {}  # brief -> first item of each group

    def cost_of(self, item: LongTermItem) -> int:
        """The tokens opening `item`'s group adds (0 when it is open or has none)."""
        if not item.group or item.group in self._full:
            return 0
        brief = item.brief or item.group
        sharing = self._by_brief.get(brief, [])
        if not sharing:
            return self._cost(inert(brief))
        upgrade = sum(
            self._cost(inert(o.group)) - self._cost(inert(brief))
            for o in sharing
            if not self._full[o.group]
        )
        return self._cost(inert(item.group)) + upgrade

    def open(self, item: LongTermItem) -> None:
        if not item.group or item.group in self._full:
            return
        brief = item.brief or item.group
        sharing = self._by_brief.setdefault(brief, [])
        for o in sharing:
            self._full[o.group] = True
        self._full[item.group] = bool(sharing)
        self._brief[item.group] = brief
        sharing.append(item)

    def shown(self, group: str) -> str:
        return group if self._full[group] else self._brief[group]
