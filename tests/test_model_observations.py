"""With a model configured, the model writes the observations and the session titles (issue 30,
item 5); without one, or when it fails, the rules do, and nothing is lost.

Real vaults in temporary directories, the real index, the jobs run with `now` passed in; the
model is the loopback stand-in (tests/llm_standin.py), answering each kind of request.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from brainiac import Memory
from brainiac.formats import events as ev
from brainiac.formats import note as notes
from brainiac.formats import observation_lines, stm
from brainiac.language import observe
from brainiac.lifecycle.jobs import model_observations
from brainiac.model.llm import LLM
from brainiac.store.config import Config
from brainiac.store.vault import LONG_TERM_DIR, SHORT_TERM
from llm_standin import Reply, StandIn
from test_lifecycle import event_places

T0 = dt.datetime(2023, 5, 8, 13, 56)
_ID_RE = re.compile(r"^(e-[0-9a-f]{10}) \| ([^|]+) \| ([^:]+):", re.MULTILINE)

CHAT = [  # (speaker, text): one session of a conversation
    ("Caroline", "I went to a LGBTQ support group yesterday and it was so powerful."),
    ("Melanie", "Wow, that's great! What did you learn there?"),
    ("Caroline", "The stories were inspiring. I also signed up for a pottery class with my mom."),
    ("Melanie", "I'm painting a sunrise over the lake for the town exhibition next month."),
    ("assistant", "Noted! I will remember the exhibition."),
    ("Melanie", "Haha yes, thanks."),
]


def _kind(body: dict[str, Any]) -> str:
    system = body["messages"][0]["content"]
    for kind, start in (
        ("observations", "You keep a personal memory notebook"),
        ("facts", "You extract lasting facts"),
        ("summary", "You summarise"),
        ("title", "You name the notes"),
    ):
        if system.startswith(start):
            return kind
    raise AssertionError(system)


def _sent(body: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(id, date, speaker) of each message an observation request sent."""
    found = _ID_RE.finditer(body["messages"][1]["content"])
    return [(m.group(1), m.group(2), m.group(3)) for m in found]


def _observing(answer: Callable[[list[tuple[str, str, str]]], Reply]) -> Callable[..., Reply]:
    """A stand-in handler: `answer` for observation requests, plain answers for the rest."""

    def handler(body: dict[str, Any]) -> Reply:
        kind = _kind(body)
        if kind == "observations":
            return answer(_sent(body))
        return {"facts": "[]", "summary": "Caroline and Melanie caught up.", "title": "x"}[kind]

    return handler


def _the_models_lines(sent: list[tuple[str, str, str]]) -> str:
    """A model's answer with one good line for two messages and every kind of bad one."""
    ids = [i for i, _, _ in sent]
    return json.dumps(
        [
            {  # kept, its "yesterday" made a date from the message's own time
                "id": ids[0],
                "observation": "Caroline went to an LGBTQ support group yesterday and found it "
                "powerful",
            },
            {"id": ids[0], "observation": "Caroline felt inspired."},  # a second line for one
            {"id": "e-0123456789", "observation": "Caroline owns a boat."},  # an invented id
            {"id": ids[1], "observation": "Melanie asked what Caroline learned?"},  # a question
            {"id": ids[2], "observation": "Caroline said the stories were inspiring."},
            {"id": ids[3], "observation": "She is painting a sunrise."},  # names no one
            {
                "id": ids[3],
                "observation": "Melanie is painting a sunrise over the lake for the town "
                "exhibition in June 2023.",
            },
            {"id": ids[4], "observation": "The assistant will remember the exhibition."},
            {"id": ids[5], "observation": "Thanks from Melanie."},  # a pleasantry, a fragment
            {"id": ids[5], "observation": "Melanie likes lakes.\nMelanie paints."},  # two lines
        ]
    )


def _with_llm(vault: Path, base_url: str, timeout: float = 5.0) -> Memory:
    (vault / ".brainiac/config.toml").write_text(
        f'[llm]\nbase_url = "{base_url}"\nmodel = "stand-in"\ntimeout_s = {timeout}\n'
    )
    return Memory(vault)


def _say(
    memory: Memory, chat: list[tuple[str, str]], session: str, start: dt.datetime
) -> list[str]:
    return [
        memory.remember(text, role=role, session=session, at=start + dt.timedelta(minutes=i)).id
        for i, (role, text) in enumerate(chat)
    ]


def _observations(vault: Path, rel: str = SHORT_TERM) -> str:
    return notes.parse((vault / rel).read_text()).section_text(observation_lines.SECTION) or ""


def _offline(tmp_path: Path) -> tuple[str, list[str]]:
    """The short-term Observations the rules write for CHAT in a vault with no model."""
    vault = tmp_path / "offline"
    Memory.init(vault)
    memory = Memory(vault)
    ids = _say(memory, CHAT, "s1", T0)
    memory.run_job("reflection", now=T0 + dt.timedelta(minutes=10))
    memory.close()
    return _observations(vault), ids


def test_the_models_observations_land_with_their_event_ids_and_go_with_them(vault: Path) -> None:
    with StandIn(_observing(_the_models_lines)) as server:
        memory = _with_llm(vault, server.base_url)
        ids = _say(memory, CHAT, "s1", T0)
        report = memory.run_job("reflection", now=T0 + dt.timedelta(minutes=10))[0]
        assert report.ok and "LLM unavailable" not in report.summary, report.summary
        asked = [r for r in server.requests if _kind(r.body) == "observations"]
        # One request for the session's six messages, each sent with its id, time and speaker.
        assert len(asked) == 1
        assert _sent(asked[0].body)[0] == (ids[0], "2023-05-08 13:56", "Caroline")
        assert [i for i, _, _ in _sent(asked[0].body)] == ids
        observed = _observations(vault)
        assert observed.strip().split("\n") == [
            "- Caroline went to an LGBTQ support group on 2023-05-07 and found it powerful. "
            f"(2023-05-08, {ids[0]})",
            "- Melanie is painting a sunrise over the lake for the town exhibition in June 2023. "
            f"(2023-05-08, {ids[3]})",
        ]
        # A message the model wrote nothing for has no line, though the rules would write one.
        assert "pottery" not in observed

        # A second run asks about nothing: the messages are no longer new.
        memory.run_job("reflection", now=T0 + dt.timedelta(minutes=20))
        assert len([r for r in server.requests if _kind(r.body) == "observations"]) == 1

        # Promotion takes each line with its event to the note, as it is.
        later = T0 + dt.timedelta(hours=3)
        _say(memory, [("user", f"Unrelated {i}: the tulips are up.") for i in range(10)], "", later)
        promoted = memory.run_job("promotion", now=later + dt.timedelta(hours=1))[0]
        memory.close()
    assert promoted.ok, promoted.summary
    # Not asked again about the events it wrote nothing for: reflection looked at them.
    assert len([r for r in server.requests if _kind(r.body) == "observations"]) == 1
    (note,) = [p for p in (vault / LONG_TERM_DIR).rglob("*.md") if ids[0] in p.read_text()]
    in_note = _observations(vault, str(note.relative_to(vault)))
    assert f"found it powerful. (2023-05-08, {ids[0]})" in in_note
    assert f"in June 2023. (2023-05-08, {ids[3]})" in in_note
    assert ids[0] not in _observations(vault)  # the short-term line went with its event
    places = event_places(vault)
    assert all(places[i] == 1 for i in ids)


def _timing_out(gate: threading.Event) -> Callable[[list[tuple[str, str, str]]], Reply]:
    def answer(sent: list[tuple[str, str, str]]) -> Reply:
        gate.wait(10)
        return "[]"

    return answer


@pytest.mark.parametrize(
    "failure",
    ["garbage", "only unusable lines", "HTTP 500", "timeout"],
)
def test_a_failing_model_leaves_the_rules_observations_and_loses_nothing(
    failure: str, tmp_path: Path, vault: Path, caplog: pytest.LogCaptureFixture
) -> None:
    expected, offline_ids = _offline(tmp_path)
    assert expected.strip(), "the rules write observations for this chat"
    gate = threading.Event()
    answers: dict[str, Callable[[list[tuple[str, str, str]]], Reply]] = {
        "garbage": lambda sent: "Sure! Here are some observations: Caroline is great.",
        "only unusable lines": lambda sent: json.dumps(
            [{"id": "e-0123456789", "observation": "Caroline owns a boat."}]
        ),
        "HTTP 500": lambda sent: (500, "model not loaded"),
        "timeout": _timing_out(gate),
    }
    try:
        with StandIn(_observing(answers[failure])) as server:
            memory = _with_llm(vault, server.base_url, 0.3 if failure == "timeout" else 5.0)
            ids = _say(memory, CHAT, "s1", T0)
            report = memory.run_job("reflection", now=T0 + dt.timedelta(minutes=10))[0]
            memory.close()
    finally:
        gate.set()
    assert report.ok, report.summary
    # The rules' lines, byte for byte (an event's id is made from what it is: the same here).
    assert ids == offline_ids
    assert _observations(vault) == expected
    assert all(event_places(vault)[i] == 1 for i in ids)  # every event still in the Event Log
    failed = [r for r in caplog.records if "LLM observations failed" in r.getMessage()]
    assert len(failed) == 1, [r.getMessage() for r in caplog.records]


def test_promotion_asks_the_model_for_events_that_bring_no_line(vault: Path) -> None:
    """Events that reach promotion with no observation line (imported history, or no
    reflection run since they were said) are asked about once per session's batch."""

    def answer(sent: list[tuple[str, str, str]]) -> Reply:
        return json.dumps(
            [
                {"id": i, "observation": f"{who} went to the pottery fair on {day[:10]}."}
                for i, day, who in sent
                if who == "Caroline"
            ]
        )

    with StandIn(_observing(answer)) as server:
        memory = _with_llm(vault, server.base_url)
        ids = _say(memory, CHAT, "s1", T0)
        later = T0 + dt.timedelta(hours=3)
        _say(memory, [("user", f"Unrelated {i}: the tulips are up.") for i in range(10)], "", later)
        promoted = memory.run_job("promotion", now=later + dt.timedelta(hours=1))[0]
        memory.close()
    assert promoted.ok, promoted.summary
    asked = [r for r in server.requests if _kind(r.body) == "observations"]
    # One request for the session (its small talk, "Haha yes, thanks.", goes to the archive).
    assert len(asked) == 1 and [i for i, _, _ in _sent(asked[0].body)] == ids[:5]
    text = "".join(p.read_text() for p in (vault / LONG_TERM_DIR).rglob("*.md"))
    for i in (ids[0], ids[2]):
        assert f"- Caroline went to the pottery fair on 2023-05-08. (2023-05-08, {i})" in text
    assert "Melanie is painting" not in text  # the model wrote nothing for it: no rules' line
    assert all(event_places(vault)[i] == 1 for i in ids)


def test_with_a_model_the_session_note_is_titled_by_it_with_who_said_what(vault: Path) -> None:
    def handler(body: dict[str, Any]) -> Reply:
        kind = _kind(body)
        if kind == "title":
            return "Caroline's support group and Melanie's painting"
        return {"observations": "[]", "facts": "[]", "summary": "A catch-up."}[kind]

    with StandIn(handler) as server:
        memory = _with_llm(vault, server.base_url)
        _say(memory, CHAT, "s1", T0)
        later = T0 + dt.timedelta(hours=3)
        _say(memory, [("user", f"Unrelated {i}: the tulips are up.") for i in range(10)], "", later)
        memory.run_job("promotion", now=later + dt.timedelta(hours=1))
        memory.close()
    (asked,) = [r for r in server.requests if _kind(r.body) == "title"]
    assert "Caroline: I went to a LGBTQ support group" in asked.body["messages"][1]["content"]
    names = {p.name for p in (vault / LONG_TERM_DIR).rglob("*.md")}
    assert "Caroline's support group and Melanie's painting.md" in names, names


@pytest.mark.parametrize(
    ("said", "kept"),
    [
        ("Caroline adopted a dog named Buddy", "Caroline adopted a dog named Buddy."),
        ("- Caroline moved to Boston last month.", "Caroline moved to Boston in April 2023."),
        ("Caroline's sister J.K. visits often.", "Caroline's sister J.K. visits often."),
        ("Caroline went hiking. (2023-05-08, e-0123456789)", "Caroline went hiking."),
        ("Caroline said she went hiking.", None),
        ("Caroline mentioned that she went hiking.", None),
        ("Did Caroline go hiking?", None),
        ("Thanks, Caroline is happy.", None),
        ("She went hiking with her dog.", None),
        ("Caroline hiked. Caroline swam.", None),
        ("Caroline hiked ^e-0123456789", None),
        ("Caroline hiked with [[Melanie]]", None),
        ("Caroline hiked.\nShe swam.", None),
        ("Caroline", None),
        ("Caroline " + "walked far and " * 20 + "rested.", None),
    ],
)
def test_checked(said: str, kept: str | None) -> None:
    event = ev.make_event("...", role="Caroline", at=T0)
    assert model_observations.checked(said, "Caroline", event) == kept


def test_the_user_is_named_as_the_rules_name_them() -> None:
    event = ev.make_event("...", role="user", at=T0)
    assert model_observations.checked("The user runs every morning", "the user", event) == (
        "The user runs every morning."
    )
    assert model_observations.checked("Runs every morning", "the user", event) is None


def test_batches_are_sessions_within_their_limits() -> None:
    events = [
        ev.make_event(f"message {i}", role="a", session=f"s{i % 2}", at=T0) for i in range(90)
    ]
    sizes = [(b[0].session, len(b)) for b in model_observations.batches(events)]
    assert sizes == [("s0", 40), ("s0", 5), ("s1", 40), ("s1", 5)]


def test_an_empty_answer_means_nothing_worth_noting_and_is_no_failure() -> None:
    with StandIn(lambda body: "[]") as server:
        llm = LLM(Config(llm_base_url=server.base_url, llm_model="m"), {})
        batch = [ev.make_event("I adopted a dog named Buddy.", role="Caroline", at=T0)]
        assert model_observations.observations(llm, batch) == {batch[0].id: []}
        assert llm.last_error is None


def test_without_a_model_the_rules_write_every_line_and_nothing_is_asked(vault: Path) -> None:
    """No `[llm]`: reflection and promotion write exactly the rules' lines (observe.py), in the
    short-term document and then in the note, as before the model could write them."""
    memory = Memory(vault)
    assert not memory.llm.available
    ids = _say(memory, CHAT, "s1", T0)
    memory.run_job("reflection", now=T0 + dt.timedelta(minutes=10))
    events = [e for e in stm.parse((vault / SHORT_TERM).read_text()).events if e.id in ids]
    rules = [observe.render(o) for e in events for o in observe.observations(e)]
    assert rules and _observations(vault).strip().split("\n") == rules
    later = T0 + dt.timedelta(hours=3)
    _say(memory, [("user", f"Unrelated {i}: the tulips are up.") for i in range(10)], "", later)
    memory.run_job("promotion", now=later + dt.timedelta(hours=1))
    memory.close()
    (note,) = [p for p in (vault / LONG_TERM_DIR).rglob("*.md") if ids[0] in p.read_text()]
    assert _observations(vault, str(note.relative_to(vault))).strip().split("\n") == rules


def test_a_batch_the_model_did_not_answer_gets_the_rules_lines_read_with_the_turn_before() -> None:
    asked = ev.Event(T0, "Jon", "My show is next Friday at the club, you should come!", "s1", "e-a")
    reply = ev.Event(
        T0 + dt.timedelta(seconds=30),
        "Gina",
        "I'm definitely in for the show, I bought tickets already!",
        "s1",
        "e-b",
    )
    with StandIn(lambda body: "no JSON here") as server:
        llm = LLM(Config(llm_base_url=server.base_url, llm_model="m"), {})
        write = model_observations.observer(llm, [asked, reply], before={reply.id: asked})
        assert [o.text for o in write(reply)] == [
            "Gina is definitely in for Jon's show, they bought tickets already."
        ]
