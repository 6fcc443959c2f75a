"""brainiac.model.llm and its endpoint (llm_endpoint.py) through a real HTTP round-trip to a
stand-in server (tests/llm_standin.py)."""

from __future__ import annotations

import logging
import socket
import threading
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

from brainiac.model.llm import LLM, clean_title, parse_facts, parse_observations
from brainiac.model.llm_endpoint import PAUSE_S, LLMError
from brainiac.store.config import Config
from llm_standin import Reply, StandIn, completion

KEY = "sk-test-0123456789"
SKIPPED = r"skipped: endpoint failed 3 times in a row, retrying after \d\d:\d\d"


def make(
    server: StandIn | None = None,
    *,
    url: str | None = None,
    key_env: str = "",
    environ: dict[str, str] | None = None,
    timeout: float = 5.0,
    clock: Any = None,
) -> LLM:
    base = url if url is not None else (server.base_url if server else "")
    cfg = Config(
        llm_base_url=base, llm_model="test-model", llm_api_key_env=key_env, llm_timeout_s=timeout
    )
    if clock is None:
        return LLM(cfg, environ or {})
    return LLM(cfg, environ or {}, clock=clock)


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def closed_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


# --- complete() ----------------------------------------------------------------------------------


def test_complete_sends_the_openai_request_and_returns_the_content() -> None:
    with StandIn(lambda body: "  the answer \n") as server:
        llm = make(server, key_env="TEST_LLM_KEY", environ={"TEST_LLM_KEY": KEY})
        assert llm.complete("be brief", "hello", max_tokens=50) == "the answer"
    [request] = server.requests
    assert request.path == "/v1/chat/completions"
    assert request.body == {
        "model": "test-model",
        "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "hello"},
        ],
        "max_tokens": 50,
        "temperature": 0,
    }
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert request.headers["content-type"] == "application/json"


def test_no_authorization_header_without_api_key_env() -> None:
    with StandIn(lambda body: "ok") as server:
        assert make(server, environ={"TEST_LLM_KEY": KEY}).complete("s", "u") == "ok"
    assert "authorization" not in server.requests[0].headers


def test_trailing_slash_in_base_url_is_ignored() -> None:
    with StandIn(lambda body: "ok") as server:
        assert make(url=server.base_url + "/").complete("s", "u") == "ok"
    assert server.requests[0].path == "/v1/chat/completions"


def test_missing_key_variable_is_reported_and_nothing_is_sent() -> None:
    with StandIn(lambda body: "ok") as server:
        llm = make(server, key_env="TEST_LLM_KEY", environ={"TEST_LLM_KEY": ""})
        with pytest.raises(LLMError) as err:
            llm.complete("s", "u")
    assert str(err.value) == (
        "environment variable TEST_LLM_KEY is not set; export it or clear [llm] api_key_env"
    )
    assert server.requests == []


def test_http_error_names_the_status_and_the_start_of_the_body_but_never_the_key() -> None:
    body = f"internal error, you sent {KEY} " + "x" * 500
    with StandIn(lambda b: (500, body)) as server:
        llm = make(server, key_env="K", environ={"K": KEY})
        with pytest.raises(LLMError) as err:
            llm.complete("s", "u")
    message = str(err.value)
    assert f"LLM endpoint {server.base_url} answered HTTP 500: internal error" in message
    assert KEY not in message and "***" in message
    assert "x" * 300 not in message
    assert "\n" not in message


def test_non_200_success_status_is_an_error() -> None:
    with (
        StandIn(lambda b: (202, completion("ok"))) as server,
        pytest.raises(LLMError, match="answered HTTP 202"),
    ):
        make(server).complete("s", "u")


def test_redirects_are_not_followed() -> None:
    def redirect(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(307)
        handler.send_header("Location", "http://127.0.0.1:1/elsewhere")
        handler.send_header("Content-Length", "0")
        handler.end_headers()

    with StandIn(lambda b: redirect) as server, pytest.raises(LLMError, match="answered HTTP 307"):
        make(server, key_env="K", environ={"K": KEY}).complete("s", "u")
    assert len(server.requests) == 1


def test_non_json_answer() -> None:
    with (
        StandIn(lambda b: (200, "<html>gateway</html>")) as server,
        pytest.raises(LLMError, match=r"did not answer with JSON: <html>gateway</html>"),
    ):
        make(server).complete("s", "u")


@pytest.mark.parametrize(
    "answer",
    [
        '{"object": "list"}',
        '{"choices": []}',
        '{"choices": [{"message": {}}]}',
        '{"choices": [{"message": {"content": null}}]}',
        "[1, 2]",
    ],
)
def test_missing_fields(answer: str) -> None:
    with (
        StandIn(lambda b: (200, answer)) as server,
        pytest.raises(LLMError, match=r"without choices\[0\]\.message\.content"),
    ):
        make(server).complete("s", "u")


def test_empty_content_names_the_finish_reason() -> None:
    with (
        StandIn(lambda b: (200, completion("  ", "length"))) as server,
        pytest.raises(LLMError, match=r"empty answer \(finish_reason length\)"),
    ):
        make(server).complete("s", "u")


def test_reasoning_preamble_is_dropped() -> None:
    with StandIn(lambda b: "<think>\nhmm, let me see\n</think>\n\nParis") as server:
        assert make(server).complete("s", "u") == "Paris"


def test_timeout() -> None:
    gate = threading.Event()

    def slow(body: dict[str, Any]) -> str:
        gate.wait(10)
        return "too late"

    with StandIn(slow) as server:
        llm = make(server, timeout=0.3)
        try:
            with pytest.raises(LLMError, match=r"did not answer within 0\.3 s"):
                llm.complete("s", "u")
        finally:
            gate.set()


def test_connection_refused() -> None:
    llm = make(url=f"http://127.0.0.1:{closed_port()}/v1")
    with pytest.raises(LLMError, match="refused the connection; is the server running"):
        llm.complete("s", "u")


@pytest.mark.parametrize("url", ["ftp://example.org/v1", "file:///etc/passwd", "localhost:11434"])
def test_only_http_urls(url: str) -> None:
    with pytest.raises(LLMError, match="not an http:// or https:// URL"):
        make(url=url).complete("s", "u")


def test_credentials_in_the_url_are_not_shown() -> None:
    llm = make(url=f"http://user:secret@127.0.0.1:{closed_port()}/v1")
    assert "secret" not in llm.describe()
    with pytest.raises(LLMError) as err:
        llm.complete("s", "u")
    assert "secret" not in str(err.value)


def test_circuit_breaker_opens_after_three_failures_and_closes_after_ten_minutes() -> None:
    healthy = threading.Event()

    def flaky(body: dict[str, Any]) -> str | tuple[int, str]:
        return "back" if healthy.is_set() else (503, "overloaded")

    clock = FakeClock()
    with StandIn(flaky) as server:
        llm = make(server, clock=clock)
        for _ in range(3):
            with pytest.raises(LLMError, match="HTTP 503"):
                llm.complete("s", "u")
        with pytest.raises(LLMError, match=SKIPPED):
            llm.complete("s", "u")
        assert len(server.requests) == 3

        clock.now += PAUSE_S - 1
        with pytest.raises(LLMError, match="skipped"):
            llm.complete("s", "u")
        assert len(server.requests) == 3

        clock.now += 2  # half open: one try, and a failure pauses again at once
        with pytest.raises(LLMError, match="HTTP 503"):
            llm.complete("s", "u")
        with pytest.raises(LLMError, match="skipped"):
            llm.complete("s", "u")
        assert len(server.requests) == 4

        clock.now += PAUSE_S + 1
        healthy.set()
        assert llm.complete("s", "u") == "back"
        healthy.clear()
        with pytest.raises(LLMError, match="HTTP 503"):  # a success resets the count
            llm.complete("s", "u")
        with pytest.raises(LLMError, match="HTTP 503"):
            llm.complete("s", "u")
        assert len(server.requests) == 7


def test_a_success_between_failures_keeps_the_breaker_closed() -> None:
    replies: list[Reply] = [(500, "a"), (500, "b"), "ok", (500, "c"), (500, "d"), "ok again"]
    answers = iter(replies)
    with StandIn(lambda b: next(answers)) as server:
        llm = make(server, clock=FakeClock())
        results = []
        for _ in range(6):
            try:
                results.append(llm.complete("s", "u"))
            except LLMError:
                results.append("error")
    assert results == ["error", "error", "ok", "error", "error", "ok again"]
    assert len(server.requests) == 6


# --- availability --------------------------------------------------------------------------------


def test_not_available_without_base_url_and_nothing_is_asked() -> None:
    llm = LLM(Config(llm_model="m"), {})
    assert not llm.available
    assert "offline" in llm.describe()
    with pytest.raises(LLMError, match="no LLM is configured"):
        llm.complete("s", "u")
    assert llm.summarise(["hello"]) is None
    assert llm.extract_facts("I use Neovim") is None
    assert llm.title(["hello"]) is None
    assert llm.last_error is not None


def test_not_available_without_model() -> None:
    assert not LLM(Config(llm_base_url="http://localhost:11434/v1"), {}).available


def test_available_and_describe() -> None:
    cfg = Config(llm_base_url="http://localhost:11434/v1/", llm_model="llama3.2")
    llm = LLM.from_config(cfg)
    assert llm.available
    assert llm.describe() == "model llama3.2 at http://localhost:11434/v1"


# --- helpers -------------------------------------------------------------------------------------


def test_summarise_strips_preamble_and_sends_the_messages() -> None:
    with StandIn(lambda b: "Here is a summary:\n\nAlice and Bob planned\nthe trip.") as server:
        llm = make(server)
        assert llm.summarise(["Alice: shall we go?", "Bob: yes, Friday"]) == (
            "Alice and Bob planned the trip."
        )
    assert llm.last_error is None
    user = server.requests[0].body["messages"][1]["content"]
    assert user.index("Alice: shall we go?") < user.index("Bob: yes, Friday")
    assert "80 words" in server.requests[0].body["messages"][0]["content"]


def test_summarise_keeps_the_newest_messages_within_the_limit() -> None:
    texts = [f"message {i:03d} " + "w" * 990 for i in range(40)]
    with StandIn(lambda b: "A long talk.") as server:
        assert make(server).summarise(texts) == "A long talk."
    user = server.requests[0].body["messages"][1]["content"]
    assert 11_000 < len(user) < 12_200
    assert "message 039" in user and "message 000" not in user
    assert "Older messages were left out" in user


def test_summarise_caps_the_words() -> None:
    answer = "One two three. " + " ".join(["word"] * 100)
    with StandIn(lambda b: answer) as server:
        summary = make(server).summarise(["x"], max_words=10)
    assert summary is not None
    assert len(summary.split()) <= 10


def test_summarise_falls_back_and_logs_one_line(caplog: pytest.LogCaptureFixture) -> None:
    with StandIn(lambda b: (500, "down")) as server:
        llm = make(server)
        with caplog.at_level(logging.WARNING, logger="brainiac.model.llm"):
            assert llm.summarise(["hello"]) is None
    assert llm.last_error is not None and "HTTP 500" in llm.last_error
    [record] = caplog.records
    assert "deterministic" in record.getMessage() and "\n" not in record.getMessage()


def test_summarise_of_nothing_asks_nothing() -> None:
    with StandIn(lambda b: "x") as server:
        assert make(server).summarise(["", "  "]) is None
    assert server.requests == []


def test_extract_facts_parses_a_fenced_json_answer() -> None:
    answer = (
        "Sure! Here they are:\n```json\n"
        '[{"key": "Preferred  Editor", "value": "Neovim"},'
        ' {"key": "port", "value": 8080},'
        ' {"key": 3, "value": "x"}, {"value": "no key"}, "junk", {"key": "empty", "value": ""},'
        ' {"key": "nested", "value": {"a": 1}},'
        ' {"key": "preferred editor", "value": "Neovim"}]\n```'
    )
    with StandIn(lambda b: answer) as server:
        llm = make(server)
        facts = llm.extract_facts("I use Neovim; the server is on port 8080.")
    assert facts == [("preferred editor", "Neovim"), ("port", "8080")]
    assert server.requests[0].body["messages"][1]["content"].startswith("I use Neovim")


def test_extract_facts_empty_array() -> None:
    with StandIn(lambda b: "[]") as server:
        assert make(server).extract_facts("nothing here") == []


def test_extract_facts_unparsable_is_none() -> None:
    with StandIn(lambda b: "I could not find any facts, sorry.") as server:
        llm = make(server)
        assert llm.extract_facts("text") is None
    assert llm.last_error is not None and "not a JSON array" in llm.last_error


@pytest.mark.parametrize(
    ("answer", "facts"),
    [
        ('[{"key": "A", "value": "b"}]', [("a", "b")]),
        ('Facts: [{"key": "A", "value": "b"}] done', [("a", "b")]),
        ('{"facts": [{"key": "A", "value": true}]}', [("a", "true")]),
        ("```\n[]\n```", []),
        ('{"key": "A", "value": "b"}', None),
        ("[not json]", None),
        ("", None),
    ],
)
def test_parse_facts(answer: str, facts: list[tuple[str, str]] | None) -> None:
    assert parse_facts(answer) == facts


def test_title_is_sanitised() -> None:
    with StandIn(lambda b: '"Trip: Plan / Budget?"\n\nThis title reflects...') as server:
        assert make(server).title(["we planned the trip"]) == "Trip Plan Budget"


@pytest.mark.parametrize(
    ("answer", "title"),
    [
        ("Title: **Weekly sync notes.**", "Weekly sync notes"),
        ("# Alice's [[garden]] #plans", "Alice's garden plans"),
        ("'Quoted title'", "Quoted title"),
        ("“Smart quotes”!", "Smart quotes"),
        (
            "one two three four five six seven eight nine ten",
            "one two three four five six seven eight",
        ),
        ("a*b?c<d>e|f^g", "a b c d e f g"),
        ("...hidden", "hidden"),
        ('"?!"', None),
        ("", None),
    ],
)
def test_clean_title(answer: str, title: str | None) -> None:
    assert clean_title(answer) == title


def test_title_with_nothing_usable_is_none() -> None:
    with StandIn(lambda b: "???") as server:
        llm = make(server)
        assert llm.title(["text"]) is None
    assert llm.last_error is not None and "no usable title" in llm.last_error


@pytest.mark.parametrize("answer", ["Conversation", "Catching up", "Chat summary", "Untitled"])
def test_a_title_of_only_generic_words_is_none(answer: str) -> None:
    with StandIn(lambda b: answer) as server:
        llm = make(server)
        assert llm.title(["Caroline: I adopted a dog named Buddy."]) is None
    assert llm.last_error is not None and "no usable title" in llm.last_error


def test_observe_sends_the_messages_in_one_request_and_parses_the_answer() -> None:
    answer = '```json\n[{"id": "e-0123456789", "observation": "Caroline adopted Buddy."}]\n```'
    with StandIn(lambda b: answer) as server:
        messages = [
            "e-0123456789 | 2023-05-08 13:56 | Caroline: I adopted a dog, Buddy!",
            "e-abcdefabcd | 2023-05-08 13:57 | Melanie: Congrats!",
        ]
        assert make(server).observe(messages) == [("e-0123456789", "Caroline adopted Buddy.")]
    (sent,) = server.requests
    assert sent.body["messages"][1]["content"].endswith("\n".join(messages))
    assert sent.body["max_tokens"] == 120 + 60 * 2  # bounded by the number of messages


@pytest.mark.parametrize(
    ("answer", "found"),
    [
        ('[{"id": "e-1", "observation": " A x. "}]', [("e-1", "A x.")]),
        ('{"observations": [{"id": "e-1", "text": "A x."}]}', [("e-1", "A x.")]),
        ('[{"id": "e-1"}, {"observation": "A x."}, "A x.", {"id": "e-2", "text": 3}]', []),
        ("Caroline adopted Buddy.", None),
    ],
)
def test_parse_observations(answer: str, found: list[tuple[str, str]] | None) -> None:
    assert parse_observations(answer) == found


def test_helpers_during_an_open_breaker_do_not_ask() -> None:
    with StandIn(lambda b: (500, "down")) as server:
        llm = make(server, clock=FakeClock())
        for _ in range(3):
            assert llm.title(["x"]) is None
        assert llm.extract_facts("x") is None
    assert llm.last_error is not None and "skipped" in llm.last_error
    assert len(server.requests) == 3
