"""The guard's optional model path (llm_check.py) through the loopback stand-in server."""

from __future__ import annotations

import datetime as dt
import json
import logging
import re
import socket
from pathlib import Path
from typing import Any

import pytest

from brainiac import Memory
from conftest import run_cli
from llm_standin import StandIn

NOW = dt.datetime(2026, 11, 4, 12, 0)
RESPONSE = "Miso is black. Ailsa is visiting in March."


def _remember(vault: Path) -> None:
    with Memory(vault, refresh_interval_s=0) as memory:
        memory.remember(
            "I adopted a grey cat called Miso from the shelter in Leith.",
            at=dt.datetime(2026, 11, 2, 9, 0),
        )
        memory.remember("My sister Ailsa is visiting in March.", at=dt.datetime(2026, 11, 3, 9, 0))


def _configure(vault: Path, base_url: str) -> None:
    (vault / ".brainiac/config.toml").write_text(
        f'[llm]\nbase_url = "{base_url}"\nmodel = "stand-in"\ntimeout_s = 5.0\n'
    )


def _user(body: dict[str, Any]) -> str:
    content: str = body["messages"][1]["content"]
    return content


def _grey_cat_id(body: dict[str, Any]) -> str:
    m = re.search(r"^(E\d+): .*grey cat called Miso", _user(body), re.M)
    assert m, _user(body)
    return m.group(1)


def _answer(evidence_id: str) -> str:
    return (
        "```json\n"
        + json.dumps(
            [
                {
                    "claim": "C1",
                    "verdict": "conflict",
                    "evidence_id": evidence_id,
                    "correction": "Miso is grey.",
                }
            ]
        )
        + "\n```"
    )


def _offline(vault: Path) -> Any:
    with Memory(vault, refresh_interval_s=0) as memory:
        return memory.check(RESPONSE, now=NOW)


def test_the_model_turns_an_unverified_sentence_into_a_conflict_with_a_real_evidence_id(
    vault: Path,
) -> None:
    _remember(vault)
    offline = _offline(vault)
    assert [f.status for f in offline.findings] == ["unverified", "consistent"]
    with StandIn(lambda body: _answer(_grey_cat_id(body))) as server:
        _configure(vault, server.base_url)
        with Memory(vault, refresh_interval_s=0) as memory:
            result = memory.check(RESPONSE, now=NOW)
        done = run_cli("--vault", str(vault), "check", "--json", "--now", NOW.isoformat(), RESPONSE)
    black, ailsa = result.findings
    assert black.status == "conflict" and black.decided_by == "llm"
    assert black.source == "event" and black.stored.startswith("I adopted a grey cat")
    # where it lives comes from the offline data, not from the model
    line = (vault / black.file).read_text(encoding="utf-8").splitlines()[black.line - 1]
    assert black.block and f"^{black.block}" in line and "grey cat" in line
    assert "Miso is grey." in (black.correction or "")
    assert ailsa == offline.findings[1] and ailsa.decided_by == "offline"  # not asked again
    (conflict,) = result.conflicts
    assert conflict.decided_by == "llm" and conflict.block == black.block
    # only the unverified sentence and the evidence lines were sent
    sent = _user(server.requests[0].body)
    assert (
        "C1: Miso is black." in sent and "Ailsa is visiting in March." in sent.split("Evidence:")[1]
    )
    assert "C2:" not in sent
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    assert [f["decided_by"] for f in report["findings"]] == ["llm", "offline"]
    assert report["conflicts"][0]["decided_by"] == "llm"


def test_a_verdict_naming_an_evidence_id_that_was_not_sent_is_ignored(
    vault: Path, caplog: pytest.LogCaptureFixture
) -> None:
    _remember(vault)
    offline = _offline(vault)
    with StandIn(lambda body: _answer("E999")) as server:
        _configure(vault, server.base_url)
        with caplog.at_level(logging.WARNING), Memory(vault, refresh_interval_s=0) as memory:
            result = memory.check(RESPONSE, now=NOW)
    assert server.requests, "the model was asked"
    assert result == offline
    assert [r.getMessage() for r in caplog.records if "evidence" in r.getMessage()] == [
        "LLM claim check: ignored 1 verdict(s) naming no evidence sent"
    ]


def _closed_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


@pytest.mark.parametrize("failure", ["down", "garbage", "http 500"])
def test_a_failing_model_leaves_the_offline_result_with_one_logged_line(
    vault: Path, caplog: pytest.LogCaptureFixture, failure: str
) -> None:
    _remember(vault)
    offline = _offline(vault)
    replies: dict[str, Any] = {
        "garbage": "I think the first claim is wrong, the cat is grey.",
        "http 500": (500, "model not loaded"),
    }
    with StandIn(lambda body: replies[failure]) as server:
        url = f"http://127.0.0.1:{_closed_port()}/v1" if failure == "down" else server.base_url
        _configure(vault, url)
        with caplog.at_level(logging.WARNING), Memory(vault, refresh_interval_s=0) as memory:
            result = memory.check(RESPONSE, now=NOW)
    assert result == offline
    lines = [r.getMessage() for r in caplog.records if r.name.startswith("brainiac.model.llm")]
    assert len(lines) == 1 and lines[0].startswith("LLM claim check failed"), lines


def test_without_llm_settings_nothing_is_asked_and_the_result_is_the_offline_one(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _remember(vault)
    # the result with a model that judges nothing ([]) is the offline one: compare the two
    with StandIn(lambda body: "[]") as server:
        _configure(vault, server.base_url)
        with Memory(vault, refresh_interval_s=0) as memory:
            asked = memory.check(RESPONSE, now=NOW)
    assert len(server.requests) == 1
    from brainiac.guard import llm_check  # here: each test fails on its own on the code before it

    (vault / ".brainiac/config.toml").write_text("")

    def never(*args: object) -> None:
        raise AssertionError("the model path ran without [llm]")

    monkeypatch.setattr(llm_check, "with_model", never)
    with Memory(vault, refresh_interval_s=0) as memory:
        assert not memory.llm.available
        result = memory.check(RESPONSE, now=NOW)
    assert result == asked
    assert {f.decided_by for f in result.findings} == {"offline"}


def test_parse_verdicts_is_tolerant_of_fences_prose_and_bad_items() -> None:
    from brainiac.model.llm import Verdict, parse_verdicts

    answer = (
        "Sure, here it is:\n```json\n"
        '[{"claim": "C1", "verdict": "Conflict", "evidence_id": "E2", "correction": "grey"},'
        ' {"claim": 2, "verdict": "consistent", "evidence_id": 3},'
        ' {"claim": "C3", "verdict": "maybe"}, "junk", {"verdict": "conflict"}]\n```\nDone.'
    )
    assert parse_verdicts(answer) == [
        Verdict("C1", "conflict", "E2", "grey"),
        Verdict("2", "consistent", "3", None),
    ]
    assert parse_verdicts('{"verdicts": [{"claim": "C1", "verdict": "unverified"}]}') == [
        Verdict("C1", "unverified", None, None)
    ]
    assert parse_verdicts("the claims look fine") is None


@pytest.mark.parametrize("private", [False, True])
def test_a_private_note_is_never_sent_as_evidence(vault: Path, private: bool) -> None:
    _remember(vault)
    flag = "private: true\n" if private else ""
    (vault / "memory/long_term/miso-vet.md").write_text(
        f"---\ntitle: Miso vet\ntags: [pet]\naliases: [Miso]\n{flag}---\n## Summary\n"
        "Miso's vet visits.\n\n## Facts\n- miso microchip: 941000024680135\n"
    )
    with StandIn(lambda body: "[]") as server:
        _configure(vault, server.base_url)
        with Memory(vault, refresh_interval_s=0) as memory:
            memory.check("Miso is black and has a microchip.", now=NOW)
    sent = _user(server.requests[0].body)
    assert "C1: Miso is black and has a microchip." in sent
    # the control (the same note, public) shows the search does reach it
    assert ("941000024680135" in sent) is not private
