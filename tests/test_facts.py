from __future__ import annotations

import datetime as dt

from hypothesis import given, settings
from hypothesis import strategies as st

from brainiac.language import facts as fx
from brainiac.language.facts import Change, Fact, Superseded

FRIDAY = Fact("deadline", "Friday 2026-11-27", dt.datetime(2026, 10, 2, 9, 15), "e-1ed40f4a38")
MONDAY = Fact("deadline", "Monday 2026-11-30", dt.datetime(2026, 11, 18, 16, 40), "e-4e4c6739ca")

SECTION = """\
- owner: the user
- stakeholder: [[Anna Berg]]
<!-- a comment a person wrote -->
Some prose line a person wrote.

"""

ATLAS = """\
- owner: the user
- stakeholder: [[Anna Berg]]
- deadline: Monday 2026-11-30 (since 2026-11-18 16:40, e-4e4c6739ca)
  - superseded: Friday 2026-11-27 (2026-10-02 09:15 to 2026-11-18 16:40, e-1ed40f4a38)
<!-- a comment a person wrote -->
Some prose line a person wrote.

"""


def test_key_normalisation() -> None:
    assert fx.normalise_key("The  Deadline:") == "deadline"
    assert fx.normalise_key("my Sister's name") == "sister's name"
    assert fx.normalise_key("Our **Budget**.") == "budget"
    assert fx.normalise_key("a") == "a"
    assert Fact("The Deadline", " Friday \n next ").key == "deadline"
    assert Fact("x", " Friday \n next ").value == "Friday next"


def test_parse_time() -> None:
    assert fx.parse_time("2026-11-18") == dt.datetime(2026, 11, 18)
    assert fx.parse_time("2026-11-18 16:40") == dt.datetime(2026, 11, 18, 16, 40)
    assert fx.parse_time("2026-11-18T16:40:12") == dt.datetime(2026, 11, 18, 16, 40)
    assert fx.parse_time("2026-13-45") is None
    assert fx.parse_time("Friday") is None


def test_render() -> None:
    assert fx.render_fact(MONDAY) == (
        "- deadline: Monday 2026-11-30 (since 2026-11-18 16:40, e-4e4c6739ca)"
    )
    assert fx.render_fact(Fact("owner", "the user")) == "- owner: the user"
    assert fx.render_fact(Fact("k", "v", dt.datetime(2026, 11, 18))) == "- k: v (since 2026-11-18)"
    assert fx.render_fact(Fact("k", "v", source="e-0123456789")) == "- k: v (e-0123456789)"
    since, until = dt.datetime(2026, 10, 2, 9, 15), dt.datetime(2026, 11, 18)
    assert fx.render_superseded(Superseded("Fri", since, until, "e-1ed40f4a38")) == (
        "  - superseded: Fri (2026-10-02 09:15 to 2026-11-18, e-1ed40f4a38)"
    )
    assert fx.render_superseded(Superseded("Fri", None, until)) == (
        "  - superseded: Fri (to 2026-11-18)"
    )
    assert (
        fx.render_superseded(Superseded("Fri", since))
        == "  - superseded: Fri (from 2026-10-02 09:15)"
    )
    assert fx.render_superseded(Superseded("Fri")) == "  - superseded: Fri"


def test_parse_reads_facts_and_their_history() -> None:
    lines = fx.parse(ATLAS)
    assert [(fl.fact.key, fl.fact.value, fl.first, fl.last) for fl in lines] == [
        ("owner", "the user", 0, 0),
        ("stakeholder", "[[Anna Berg]]", 1, 1),
        ("deadline", "Monday 2026-11-30", 2, 3),
    ]
    deadline = lines[2]
    assert deadline.fact == MONDAY
    assert deadline.superseded == (
        Superseded(
            "Friday 2026-11-27",
            dt.datetime(2026, 10, 2, 9, 15),
            dt.datetime(2026, 11, 18, 16, 40),
            "e-1ed40f4a38",
        ),
    )


def test_parse_template_tails_with_dates_only() -> None:
    text = "- deadline: Monday 2026-11-30 (since 2026-11-18)\n"
    text += "  - superseded: Friday 2026-11-27 (2026-10-02 to 2026-11-18)\n"
    [line] = fx.parse(text)
    assert line.fact == Fact("deadline", "Monday 2026-11-30", dt.datetime(2026, 11, 18))
    assert line.superseded == (
        Superseded("Friday 2026-11-27", dt.datetime(2026, 10, 2), dt.datetime(2026, 11, 18)),
    )


def test_parse_skips_what_is_not_a_fact() -> None:
    text = (
        "- [ ] call Anna: about the lease\n"
        "- [x] done: yes\n"
        "- 2026-11-20T09:12:00 **user**: hi ^e-3f2a1c9b0d\n"
        "- see https://example.com: a link\n"
        "- [[Anna Berg]]: stakeholder\n"
        "- this is a long sentence with far too many words: no\n"
        "- just a bullet\n"
        "- empty:\n"
        "not a bullet: at all\n"
        "```\n- in: code\n```\n"
        "<!--\n- in: a comment\n-->\n"
        "- owner: Anna (mostly)\n"
        "- note: see (e-12)\n"
    )
    assert [(f.key, f.value) for f in fx.current(text).values()] == [
        ("owner", "Anna (mostly)"),
        ("note", "see (e-12)"),
    ]


def test_atlas_example_from_the_template() -> None:
    step1, changes1 = fx.apply(SECTION, [FRIDAY])
    step2, changes2 = fx.apply(step1, [MONDAY])
    assert step2 == ATLAS
    assert changes1 == [
        Change("deadline", None, "Friday 2026-11-27", FRIDAY.since, FRIDAY.source, "added")
    ]
    assert changes2 == [
        Change(
            "deadline",
            "Friday 2026-11-27",
            "Monday 2026-11-30",
            MONDAY.since,
            MONDAY.source,
            "superseded",
        )
    ]
    # Given together and out of order, the facts are applied oldest first.
    assert fx.apply(SECTION, [MONDAY, FRIDAY])[0] == ATLAS
    assert fx.current(ATLAS)["deadline"] == MONDAY


def test_reapplying_changes_nothing() -> None:
    once, _ = fx.apply(SECTION, [FRIDAY, MONDAY])
    twice, changes = fx.apply(once, [FRIDAY, MONDAY])
    assert twice == once
    assert changes == []


def test_a_persons_hand_edit_is_not_reverted() -> None:
    edited = ATLAS.replace("Monday 2026-11-30 (since", "Tuesday 2026-12-01 (since")
    assert fx.apply(edited, [FRIDAY, MONDAY]) == (edited, [])
    assert fx.current(edited)["deadline"].value == "Tuesday 2026-12-01"


def test_same_value_is_not_a_change() -> None:
    text = "- Deadline: friday.\n"
    later = Fact("deadline", "Friday", dt.datetime(2026, 11, 1), "e-aaaaaaaaaa")
    assert fx.apply(text, [later]) == (text, [])


def test_a_late_older_fact_becomes_history() -> None:
    late = Fact("deadline", "Thursday", dt.datetime(2026, 11, 1), "e-aaaaaaaaaa")
    text, changes = fx.apply(ATLAS, [late])
    assert text == ATLAS.replace(
        "  - superseded: Friday",
        "  - superseded: Thursday (2026-11-01 to 2026-11-18 16:40, e-aaaaaaaaaa)\n"
        "  - superseded: Friday",
    )
    assert changes == [
        Change("deadline", "Monday 2026-11-30", "Thursday", late.since, late.source, "history")
    ]
    assert fx.current(text)["deadline"] == MONDAY
    assert fx.apply(text, [late]) == (text, [])
    # Older than every entry: it goes last, and holds until the next value we know of.
    oldest = Fact("deadline", "Sunday", dt.datetime(2026, 9, 1), "e-bbbbbbbbbb")
    text2, _ = fx.apply(text, [oldest])
    assert fx.parse(text2)[2].superseded[-1] == Superseded(
        "Sunday", dt.datetime(2026, 9, 1), dt.datetime(2026, 10, 2, 9, 15), "e-bbbbbbbbbb"
    )


def test_a_late_fact_already_in_the_history_is_skipped() -> None:
    again = Fact("deadline", "Friday 2026-11-27", dt.datetime(2026, 10, 5), "e-cccccccccc")
    assert fx.apply(ATLAS, [again]) == (ATLAS, [])


def test_superseding_a_persons_line_without_a_tail() -> None:
    text = "Intro.\n- The Owner: the user\n- other: x\n"
    anna = Fact("owner", "Anna", dt.datetime(2026, 11, 2), "e-dddddddddd")
    new, [change] = fx.apply(text, [anna])
    assert new == (
        "Intro.\n- The Owner: Anna (since 2026-11-02, e-dddddddddd)\n"
        "  - superseded: the user (to 2026-11-02)\n- other: x\n"
    )
    assert change.kind == "superseded" and change.old == "the user"


def test_an_undated_fact_counts_as_newest() -> None:
    text, [change] = fx.apply(ATLAS, [Fact("deadline", "Wednesday")])
    assert change.kind == "superseded"
    assert "- deadline: Wednesday\n  - superseded: Monday 2026-11-30 (from 2026-11-18 16:40" in text
    assert fx.apply(text, [Fact("deadline", "Wednesday")]) == (text, [])


def test_first_of_duplicated_keys_is_acted_on() -> None:
    text = "- deadline: Friday\n- the deadline: Monday\n"
    new, _ = fx.apply(text, [Fact("deadline", "Sunday", source="e-eeeeeeeeee")])
    assert new == (
        "- deadline: Sunday (e-eeeeeeeeee)\n  - superseded: Friday\n- the deadline: Monday\n"
    )


def test_appending_keeps_every_other_line() -> None:
    text, changes = fx.apply(SECTION, [Fact("budget", "40k", source="e-ffffffffff")])
    assert text == SECTION.replace(
        "[[Anna Berg]]\n", "[[Anna Berg]]\n- budget: 40k (e-ffffffffff)\n"
    )
    assert [c.kind for c in changes] == ["added"]


def test_appending_without_fact_lines_goes_before_trailing_blanks() -> None:
    comment = "<!-- One `- key: value` line per fact. -->\n\n\n"
    text, _ = fx.apply(comment, [Fact("a", "1"), Fact("b", "2")])
    assert text == "<!-- One `- key: value` line per fact. -->\n- a: 1\n- b: 2\n\n\n"
    assert fx.apply("", [Fact("a", "1")])[0] == "- a: 1\n"
    assert fx.apply("\n", [Fact("a", "1")])[0] == "- a: 1\n\n"


def test_a_section_without_final_newline_stays_so() -> None:
    assert fx.apply("- a: 1", [Fact("b", "2")])[0] == "- a: 1\n- b: 2"
    assert fx.apply("prose", [Fact("b", "2")])[0] == "prose\n- b: 2"
    assert fx.apply("- a: 1", [Fact("a", "2")])[0] == "- a: 2\n  - superseded: 1"


def test_crlf_lines_are_kept_and_followed() -> None:
    text = "- a: 1\r\nprose\r\n"
    new, _ = fx.apply(text, [Fact("a", "2")])
    assert new == "- a: 2\r\n  - superseded: 1\r\nprose\r\n"
    assert fx.apply(text, [Fact("b", "3")])[0] == "- a: 1\r\n- b: 3\r\nprose\r\n"


def test_unwritable_facts_are_ignored() -> None:
    assert fx.apply("x\n", [Fact("", "v"), Fact("k", "  ")]) == ("x\n", [])


# --- properties --------------------------------------------------------------------------------

_KEYS = st.sampled_from(["deadline", "The Deadline", "owner", "budget", "my sister's name"])
_VALUES = st.sampled_from(["Friday", "friday.", "Monday", "the user", "[[Anna Berg]]", "40k"])
_TIMES = st.one_of(
    st.none(),
    st.datetimes(dt.datetime(2026, 1, 1), dt.datetime(2026, 12, 31)),
)
_SOURCES = st.one_of(st.none(), st.sampled_from(["e-0000000001", "e-0000000002", "e-00000000aa"]))
_FACTS = st.lists(st.builds(Fact, _KEYS, _VALUES, _TIMES, _SOURCES), max_size=6)
_LINES = st.lists(
    st.one_of(
        st.sampled_from(
            [
                "",
                "Some prose.",
                "<!-- comment -->",
                "- a bullet",
                "- [ ] task: box",
                "- owner: the user",
                "- deadline: Friday (since 2026-05-01, e-0000000003)",
                "  - superseded: Thursday (2026-01-01 to 2026-05-01)",
                "  - a person's sub-note",
                "- budget: 10k",
            ]
        ),
        st.text(
            st.characters(blacklist_categories=("Cs",), blacklist_characters="\n"), max_size=20
        ),
    ),
    max_size=8,
)


def _is_subsequence(small: list[str], big: list[str]) -> bool:
    it = iter(big)
    return all(any(line == other for other in it) for line in small)


@settings(max_examples=300, deadline=None)
@given(_LINES, st.booleans(), _FACTS)
def test_apply_is_idempotent_and_keeps_other_lines(
    lines: list[str], newline: bool, new: list[Fact]
) -> None:
    text = "\n".join(lines) + ("\n" if newline and lines else "")
    once, _ = fx.apply(text, new)
    twice, changes = fx.apply(once, new)
    assert twice == once
    assert changes == []
    fact_lines = {i for fl in fx.parse(text) for i in (fl.first,)}
    kept = [line for i, line in enumerate(text.split("\n")) if i not in fact_lines]
    assert _is_subsequence(kept, once.split("\n"))
    # Every key given ends up with a line.
    assert {f.key for f in new if f.key and f.value} <= set(fx.current(once))


def test_a_less_precise_restatement_is_not_a_change() -> None:
    section = "- deadline: Monday 2026-11-30 (since 2026-11-18)\n"
    later = Fact("deadline", "Monday", dt.datetime(2026, 11, 19, 9, 0), "e-0000000001")
    text, changes = fx.apply(section, [later])
    assert text == section and changes == []
