from __future__ import annotations

import datetime as dt

from hypothesis import given
from hypothesis import strategies as st

from brainiac.formats import events as ev

T = dt.datetime(2026, 11, 20, 9, 12)


def test_render_and_parse_round_trip() -> None:
    e = ev.make_event("The deadline moved\nto Monday.", role="user", session="planning", at=T)
    text = ev.render(e)
    assert text == (
        f"- 2026-11-20T09:12:00 **user** (planning): The deadline moved\n  to Monday. ^{e.id}\n"
    )
    assert ev.parse_text(text) == [e]


def test_id_is_stable_and_depends_on_content() -> None:
    a = ev.make_event("hello", role="user", at=T)
    assert a.id == ev.make_event("hello", role="user", at=T).id
    assert a.id.startswith("e-") and len(a.id) == 12
    assert a.id != ev.make_event("hello", role="assistant", at=T).id
    assert a.id != ev.make_event("hello", role="user", at=T + dt.timedelta(seconds=1)).id
    assert a.id != ev.make_event("hello!", role="user", at=T).id


def test_aware_times_are_stored_in_utc() -> None:
    aware = dt.datetime(2026, 11, 20, 10, 12, tzinfo=dt.timezone(dt.timedelta(hours=1)))
    assert ev.make_event("x", at=aware).at == T


def test_a_line_a_person_typed_is_an_event_with_a_content_id() -> None:
    [e] = ev.parse_text("- called Anna about the lease\n")
    assert (e.at, e.role, e.text) == (None, "note", "called Anna about the lease")
    assert e.id == ev.parse_text("- called Anna about the lease\n")[0].id


def test_non_event_lines_are_ignored() -> None:
    text = "<!-- hint -->\nsome prose\n\n- 2026-11-20T09:12:00 **bob**: hi ^e-0123456789\n"
    [e] = ev.parse_text(text)
    assert (e.role, e.text, e.id) == ("bob", "hi", "e-0123456789")


roles = st.text(st.characters(categories=("L", "N")), min_size=1, max_size=12)
texts = st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=200)


@given(
    text=texts,
    role=roles,
    session=st.none() | roles,
    at=st.datetimes(min_value=dt.datetime(1970, 1, 2), max_value=dt.datetime(9999, 1, 1)),
)
def test_any_event_round_trips(text: str, role: str, session: str | None, at: dt.datetime) -> None:
    e = ev.make_event(text, role=role, session=session, at=at)
    if not e.text:
        return
    assert ev.parse_text(ev.render(e)) == [e]


def test_unusual_line_separators_stay_inside_the_text() -> None:
    e = ev.make_event("a\u2028b\x0cc\x85d", role="user", at=T)
    assert ev.parse_text(ev.render(e)) == [e]
