from __future__ import annotations

import datetime as dt

from hypothesis import given
from hypothesis import strategies as st

from brainiac.formats import events as ev
from brainiac.formats import stm
from brainiac.store.vault import template_dir

T = dt.datetime(2026, 11, 20, 9, 0)
TEMPLATE = (template_dir() / stm.RELPATH).read_text(encoding="utf-8")


def _event(i: int) -> ev.Event:
    return ev.make_event(f"message {i}", role="user", at=T + dt.timedelta(minutes=i))


def test_template_has_every_section_in_order_and_no_events() -> None:
    doc = stm.parse(TEMPLATE)
    titles = [s.title for s in doc.note.sections if s.level == 2]
    assert titles == list(stm.SECTIONS)
    assert doc.events == ()
    assert doc.section("Facts") == ""  # the hint comment is not content


def test_append_adds_at_the_end_of_the_event_log_and_skips_known_ids() -> None:
    text, added = stm.append_events(TEMPLATE, [_event(1), _event(2)])
    assert added == [_event(1), _event(2)]
    assert text.startswith(TEMPLATE.rstrip("\n"))
    again, added_again = stm.append_events(text, [_event(2), _event(3)])
    assert added_again == [_event(3)]
    assert [e.text for e in stm.parse(again).events] == ["message 1", "message 2", "message 3"]


def test_append_keeps_a_following_section_a_person_added() -> None:
    doc = TEMPLATE + "\n## My own notes\nkeep me\n"
    text, _ = stm.append_events(doc, [_event(1)])
    assert text.endswith("\n## My own notes\nkeep me\n")
    assert [e.text for e in stm.parse(text).events] == ["message 1"]
    assert "keep me" not in stm.parse(text).section("Event Log")


def test_append_recreates_a_deleted_event_log() -> None:
    text, _ = stm.append_events("# STM\n\n## Summary\nhi\n", [_event(1)])
    assert text.startswith("# STM\n\n## Summary\nhi\n")
    assert [e.text for e in stm.parse(text).events] == ["message 1"]


prose = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="#`~-"), max_size=200
)


@given(summary=prose, facts=prose, tail=prose)
def test_text_a_person_wrote_survives_byte_for_byte(summary: str, facts: str, tail: str) -> None:
    doc = (
        f"---\ntitle: x\n---\n## Summary\n{summary}\n## Facts\n{facts}\n"
        f"## Event Log\n\n## Mine\n{tail}"
    )
    text, added = stm.append_events(doc, [_event(1)])
    assert added
    rendered = ev.render(_event(1))
    assert text.replace(rendered, "", 1) == doc.replace("## Event Log\n", "## Event Log\n", 1)
