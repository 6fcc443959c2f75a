"""Assembly: order, budget, and what is cut first."""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest
from hypothesis import given
from hypothesis import strategies as st

from brainiac.core.errors import BudgetError
from brainiac.formats import events as ev
from brainiac.search import context as c

T = dt.datetime(2026, 11, 20, 9, 0)
HEADINGS = [
    "## Core Identity",
    "## Short-Term Memory",
    "## Relevant Long-Term Memory",
    "## User Prompt",
]


def _inputs(
    identity: str = "I am careful.",
    prompt: str = "What next?",
    n_events: int = 12,
    n_ltm: int = 5,
    stm_text: str = "- deadline: Monday",
) -> c.Inputs:
    events = [
        ev.make_event(f"event number {i} " + "x" * 40, at=T + dt.timedelta(minutes=i))
        for i in range(n_events)
    ]
    ltm = [
        c.LongTermItem(f"### Note {i}\n" + "y" * 200, (f"memory/long_term/n{i}.md",))
        for i in range(n_ltm)
    ]
    return c.Inputs(
        identity, prompt, [("Summary", "A summary."), ("Facts", stm_text)], events[-10:], ltm
    )


def _positions(text: str) -> list[int]:
    return [text.index(h) for h in HEADINGS]


def test_four_sections_in_order_with_everything_when_room() -> None:
    out = c.assemble(_inputs(), budget=5000)
    assert _positions(out.text) == sorted(_positions(out.text))
    assert c.RECENT_HEADER in out.text
    # One heading over the run of one day (and session), each line with its time of day.
    assert out.text.count("#### 2026-11-20") == 1
    assert out.text.count("event number") == 10 and "- 09:11 user: event number 11" in out.text
    assert out.sources == tuple(f"memory/long_term/n{i}.md" for i in range(5))
    assert not out.over_budget and out.tokens <= 5000


def test_long_term_is_cut_first_then_short_term_then_events_last() -> None:
    full = c.assemble(_inputs(), budget=5000)
    no_ltm_cost = full.tokens - sum(
        c.approx_tokens(f"### Note {i}\n" + "y" * 200 + "\n") for i in range(5)
    )
    out = c.assemble(_inputs(), budget=no_ltm_cost + 60)
    assert out.text.count("### Note") <= 1 and out.dropped_events == 0
    assert "A summary." in out.text and "- deadline: Monday" in out.text
    tight = c.assemble(_inputs(), budget=200)
    assert "### Note" not in tight.text and "A summary." not in tight.text
    assert 0 < tight.text.count("event number") < 10
    assert "event number 11" in tight.text  # the newest survive, the oldest go
    assert tight.tokens <= 200


def test_identity_and_prompt_are_never_cut_and_over_budget_is_reported() -> None:
    identity, prompt = "I " * 400, "Why? " * 100
    out = c.assemble(_inputs(identity=identity, prompt=prompt), budget=50)
    assert out.over_budget
    assert identity.strip() in out.text and prompt.strip() in out.text
    assert "event number" not in out.text and "### Note" not in out.text
    assert any("over the budget" in w for w in out.warnings)


def test_missing_identity_still_assembles_with_a_warning() -> None:
    out = c.assemble(_inputs(identity=None), budget=2000)
    assert _positions(out.text) == sorted(_positions(out.text))
    assert any("core_identity.md is missing" in w for w in out.warnings)


@pytest.mark.parametrize("budget", [0, -5, 10**9, True, 2.5, "300"])
def test_absurd_budgets_are_refused(budget: object) -> None:
    with pytest.raises(BudgetError, match="budget"):
        c.assemble(_inputs(), budget=budget)  # type: ignore[arg-type]


@given(
    budget=st.integers(1, 3000),
    identity=st.text(max_size=300),
    prompt=st.text(max_size=300),
    n_events=st.integers(0, 10),
    n_ltm=st.integers(0, 8),
)
def test_never_over_budget_unless_identity_and_prompt_alone_are(
    budget: int, identity: str, prompt: str, n_events: int, n_ltm: int
) -> None:
    out = c.assemble(_inputs(identity, prompt, n_events, n_ltm), budget)
    assert out.tokens == c.approx_tokens(out.text)
    if not out.over_budget:
        assert out.tokens <= budget
    assert identity.strip("\n") in out.text
    assert prompt.strip("\n") in out.text
    assert _positions(out.text) == sorted(_positions(out.text))


def test_relevance_first_packs_long_term_memory_before_short_term() -> None:
    out = c.assemble(_inputs(), budget=200, relevance_first=True)
    assert "### Note 0" in out.text  # the best long-term item is in
    assert out.tokens <= 200
    normal = c.assemble(_inputs(), budget=200)
    assert "### Note 0" not in normal.text and "event number 11" in normal.text


def test_a_long_term_share_comes_first_and_recent_events_get_what_it_leaves() -> None:
    # 5 long-term items of ~57 tokens and 10 events of ~17: at 260 tokens not all fit.
    normal = c.assemble(_inputs(), budget=260)
    shared = c.assemble(_inputs(), budget=260, long_term_share=0.8)
    assert "### Note 0" not in normal.text and "event number 11" in normal.text
    assert "### Note 0" in shared.text and "### Note 2" in shared.text
    assert "event number 11" in shared.text  # the newest steps still get the rest
    assert "event number 2 " not in shared.text
    assert shared.tokens <= 260
    # Nothing is lost between the two passes: an item passed over by the share, too big for
    # it, is tried again with the rest of the room.
    whole = c.assemble(_inputs(n_events=0), budget=5000, long_term_share=0.8)
    assert all(f"### Note {i}" in whole.text for i in range(5))
    assert whole.text.count("### Note 0") == 1


@given(
    budget=st.integers(1, 3000),
    n_events=st.integers(0, 10),
    n_ltm=st.integers(0, 8),
    share=st.sampled_from([0.0, 0.5, 0.8, 1.0]),
)
def test_a_long_term_share_never_exceeds_the_budget(
    budget: int, n_events: int, n_ltm: int, share: float
) -> None:
    out = c.assemble(_inputs(n_events=n_events, n_ltm=n_ltm), budget, long_term_share=share)
    if not out.over_budget:
        assert out.tokens <= budget
    assert _positions(out.text) == sorted(_positions(out.text))
    assert all(out.text.count(f"### Note {i}\n") <= 1 for i in range(n_ltm))


@given(
    budget=st.integers(1, 3000),
    n_events=st.integers(0, 10),
    n_ltm=st.integers(0, 8),
)
def test_relevance_first_never_exceeds_the_budget(budget: int, n_events: int, n_ltm: int) -> None:
    out = c.assemble(_inputs(n_events=n_events, n_ltm=n_ltm), budget, relevance_first=True)
    if not out.over_budget:
        assert out.tokens <= budget
    assert _positions(out.text) == sorted(_positions(out.text))


def _event_items(spec: list[tuple[str, int, str]]) -> list[c.LongTermItem]:
    """(session, minute, text) -> long-term event items, best first in the given order."""
    items = []
    for session, minute, text in spec:
        e = ev.make_event(text, at=T + dt.timedelta(minutes=minute), session=session, role="Ana")
        items.append(
            c.LongTermItem(
                c.render_grouped_event(e),
                (f"memory/short_term.md#{e.id}",),
                group=c.event_group(e),
                order=f"{e.at.isoformat()}#{e.id}",
                brief=c.event_group(e, with_session=False),
            )
        )
    return items


def _long_term_lines(out: c.Assembled) -> list[str]:
    ltm = out.text.split("## Relevant Long-Term Memory\n", 1)[1].split("\n## User Prompt", 1)[0]
    return ltm.strip("\n").split("\n")


def test_a_day_shown_once_is_headed_by_its_date_alone() -> None:
    # Two days, one session each: the session label would tell nothing the date does not.
    items = _event_items([("chat 9", 60 * 24 * 3, "the ferry leaves at nine"), ("chat 1", 5, "hi")])
    out = c.assemble(c.Inputs("I am careful.", "Where?", [], [], items), 2000)
    assert _long_term_lines(out) == [
        "### 2026-11-23",
        "- Ana: the ferry leaves at nine",
        "### 2026-11-20",
        "- Ana: hi",
    ]


def test_a_second_session_of_a_day_names_both_sessions_and_pays_for_it() -> None:
    items = _event_items([("chat 2", 50, "x" * 40), ("chat 1", 5, "y" * 40)])
    inputs = c.Inputs("I am careful.", "Where?", [], [], items)
    both = c.assemble(inputs, 2000, relevance_first=True)
    assert _long_term_lines(both) == [
        "### 2026-11-20 (chat 2)",
        "- Ana: " + "x" * 40,
        "### 2026-11-20 (chat 1)",
        "- Ana: " + "y" * 40,
    ]
    # Below that, either the first alone fits, under its date alone, or both with their
    # sessions: the first heading's label counts against the second item, never over budget.
    seen = set()
    for budget in range(both.tokens // 2, 2 * both.tokens):
        out = c.assemble(inputs, budget, relevance_first=True)
        assert out.tokens <= budget
        lines = _long_term_lines(out)
        assert lines in ([""], ["### 2026-11-20", "- Ana: " + "x" * 40], _long_term_lines(both))
        seen.add(len(lines))
    assert seen == {1, 2, 4}


def test_events_are_shown_under_one_heading_per_day_and_session_in_time_order() -> None:
    items = _event_items(
        [
            ("chat 2", 50, "the ferry leaves at nine"),
            ("chat 1", 5, "I moved to Porto"),
            ("chat 2", 40, "we booked the ferry"),
            ("chat 1", 1, "hello there"),
        ]
    )
    inputs = c.Inputs("I am careful.", "Where?", [], [], items)
    out = c.assemble(inputs, budget=2000, relevance_first=True)
    ltm = out.text.split("## Relevant Long-Term Memory\n", 1)[1].split("\n## User Prompt", 1)[0]
    # The best item's group comes first; each group holds its items in the order they were said.
    assert ltm.strip("\n").split("\n") == [
        "### 2026-11-20 (chat 2)",
        "- Ana: we booked the ferry",
        "- Ana: the ferry leaves at nine",
        "### 2026-11-20 (chat 1)",
        "- Ana: hello there",
        "- Ana: I moved to Porto",
    ]
    assert len(out.sources) == 4


@given(budget=st.integers(1, 400), n=st.integers(0, 12))
def test_group_headings_count_against_the_budget(budget: int, n: int) -> None:
    items = _event_items([(f"chat {i % 4}", i, f"event {i} " + "z" * 30) for i in range(n)])
    inputs = c.Inputs("I am careful.", "Where?", [], [], items)
    out = c.assemble(inputs, budget, relevance_first=True)
    if not out.over_budget:
        assert out.tokens <= budget
    # A heading is only there with at least one of its events under it.
    lines = out.text.split("\n")
    for i, line in enumerate(lines):
        if line.startswith("### 2026-11-20"):
            assert lines[i + 1].startswith("- Ana: event")


def _recent_block(out: c.Assembled) -> list[str]:
    if c.RECENT_HEADER not in out.text:
        return []
    block = out.text.split(c.RECENT_HEADER + "\n", 1)[1].split("\n## Relevant Long-Term", 1)[0]
    return block.strip("\n").split("\n")


def test_a_recent_step_ranked_with_long_term_memory_is_packed_at_its_rank() -> None:
    # Relevance first, 200 tokens: the five long-term items would leave no room for the recent
    # events; one ranked between them is packed at its rank and shown among the recent events.
    inputs = _inputs()
    asked = inputs.recent[2]  # "event number 4", an older recent step
    plain = c.assemble(inputs, budget=200, relevance_first=True)
    assert "event number 4 " not in plain.text and "### Note 1" in plain.text
    ranked = [*inputs.long_term]
    ranked.insert(1, c.RecentItem(asked.id))
    out = c.assemble(
        dataclasses.replace(inputs, long_term=ranked), budget=200, relevance_first=True
    )
    assert "### Note 0" in out.text and out.tokens <= 200
    assert out.text.count("event number 4 ") == 1
    lines = _recent_block(out)
    assert lines[0] == "#### 2026-11-20"
    assert "- 09:04 user: event number 4 " + "x" * 40 in lines
    # The rest of the room still goes to the newest steps, shown in time order with it.
    times = [line[2:7] for line in lines[1:]]
    assert times == sorted(times) and times[0] == "09:04"
    # Ranked below what fits, it is not packed ahead of anything.
    last = [*inputs.long_term, c.RecentItem(asked.id)]
    below = c.assemble(
        dataclasses.replace(inputs, long_term=last), budget=200, relevance_first=True
    )
    assert below.text == plain.text


@given(
    budget=st.integers(1, 1200),
    n_ltm=st.integers(0, 8),
    ranks=st.lists(st.tuples(st.integers(0, 9), st.integers(0, 8)), max_size=6),
    sessions=st.lists(st.sampled_from(["a", "b", ""]), min_size=10, max_size=10),
    relevance_first=st.booleans(),
)
def test_recent_steps_ranked_with_long_term_memory_never_exceed_the_budget(
    budget: int,
    n_ltm: int,
    ranks: list[tuple[int, int]],
    sessions: list[str],
    relevance_first: bool,
) -> None:
    # Runs of sessions that interleave (a, b, a) make a step packed at its rank split a run.
    base = _inputs(n_events=0, n_ltm=n_ltm)
    events = [
        ev.make_event(f"event {i} " + "x" * 30, at=T + dt.timedelta(minutes=i), session=s or None)
        for i, s in enumerate(sessions)
    ]
    ranked = [*base.long_term]
    for event, at in dict(ranks).items():  # each event at most once
        ranked.insert(min(at, len(ranked)), c.RecentItem(events[event].id))
    inputs = dataclasses.replace(base, recent=events, long_term=ranked)
    out = c.assemble(inputs, budget, relevance_first=relevance_first)
    if not out.over_budget:
        assert out.tokens <= budget
    lines = _recent_block(out)
    shown = [int(line.split("event ")[1].split(" ")[0]) for line in lines if "event " in line]
    assert shown == sorted(set(shown))
    # Every line sits under the heading of its own day and session, each run headed once.
    heading = ""
    for line in lines:
        if line.startswith("#### "):
            assert line != heading
            heading = line
        else:
            i = int(line.split("event ")[1].split(" ")[0])
            assert heading == c.recent_group(events[i])


def test_the_default_count_adds_up_characters_so_no_budget_is_lost_to_rounding() -> None:
    """With characters / 4 (the default) the parts are counted in characters: rounding each
    line up to a whole token (what any other counter gets) left part of the budget unused."""
    items = [
        c.LongTermItem(f"- memory {i:03d} " + "z" * 21, (f"memory/long_term/n{i}.md",))
        for i in range(200)
    ]
    inputs = dataclasses.replace(_inputs(n_events=0), long_term=items)
    exact = c.assemble(inputs, budget=600)
    rounded = c.assemble(inputs, budget=600, count=lambda text: c.approx_tokens(text))
    assert exact.tokens <= 600 and rounded.tokens <= 600
    assert len(exact.sources) > len(rounded.sources)
    assert 600 - exact.tokens < c.approx_tokens(items[0].text + "\n") <= 600 - rounded.tokens
