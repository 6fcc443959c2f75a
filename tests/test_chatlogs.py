"""Reading chat exports: every real format's sample, exactly; detection; and malformed files."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from brainiac.core.errors import BrainiacError, ImportFormatError
from brainiac.exchange import chatlogs
from brainiac.exchange.chatlogs import ChatFile, Message, Skipped

SAMPLES = Path(__file__).parent / "samples" / "imports"
CLAUDE_CODE = SAMPLES / "7f3c2a9e-1b4d-4e21-9a55-0c8d2e6f1b27.jsonl"
SID = "7f3c2a9e-1b4d-4e21-9a55-0c8d2e6f1b27"
CHATGPT = SAMPLES / "chatgpt-conversations.json"
CLAUDE_AI = SAMPLES / "claude-ai-conversations.json"
EXPORT_V1 = SAMPLES / "2025-10-29-the-login-test-fails-about-one-run-in-five.txt"
EXPORT_V2 = SAMPLES / "claude-export-v2.txt"
UTC = dt.UTC


def utc(
    year: int, month: int, day: int, hour: int = 0, minute: int = 0, sec: int = 0
) -> dt.datetime:
    return dt.datetime(year, month, day, hour, minute, sec, tzinfo=UTC)


def rows(chat: ChatFile) -> list[tuple[str, int, str | None, str, str, dt.datetime | None]]:
    return [(m.session, m.position, m.message_id, m.role, m.text, m.at) for m in chat.messages]


def skips(chat: ChatFile) -> list[tuple[str, int, str]]:
    return [(s.session, s.position, s.reason) for s in chat.skipped]


def load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def dumped(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode("utf-8")


def raises(path: Path | str, data: bytes, format: str | None = None) -> ImportFormatError:
    with pytest.raises(ImportFormatError) as info:
        chatlogs.parse(Path(path), format, data)
    return info.value


# ------------------------------------------------------------------------------ the samples


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("brainiac-events.jsonl", "brainiac"),
        ("7f3c2a9e-1b4d-4e21-9a55-0c8d2e6f1b27.jsonl", "claude-code"),
        ("claude-ai-conversations.json", "claude-ai"),
        ("chatgpt-conversations.json", "chatgpt"),
        ("2025-10-29-the-login-test-fails-about-one-run-in-five.txt", "claude-export"),
        ("claude-export-v2.txt", "claude-export"),
        ("markdown-headings.md", "markdown"),
        ("markdown-bold.md", "markdown"),
        ("markdown-plain.md", "markdown"),
    ],
)
def test_each_sample_is_detected_by_its_content(name: str, expected: str) -> None:
    data = (SAMPLES / name).read_bytes()
    assert chatlogs.detect(SAMPLES / name, data) == expected
    # the name does not decide: the same bytes under a neutral name are the same format
    assert chatlogs.detect(Path("export.txt"), data) == expected
    assert chatlogs.parse(SAMPLES / name).format == expected


def test_brainiac_events() -> None:
    chat = chatlogs.parse(SAMPLES / "brainiac-events.jsonl")
    assert chat.path == SAMPLES / "brainiac-events.jsonl"
    plus_one = dt.timezone(dt.timedelta(hours=1))
    assert rows(chat) == [
        ("planning", 0, "ev-1", "user", "I moved the deadline to Monday.",
         dt.datetime(2026, 11, 20, 9, 12)),
        ("planning", 1, None, "assistant", "Noted: the deadline is Monday.",
         dt.datetime(2026, 11, 20, 9, 12, 5, tzinfo=plus_one)),
        ("planning", 2, None, "user", "yes", utc(2026, 11, 20, 9, 13)),
        ("planning", 3, None, "user", "yes", None),
        ("brainiac-events", 0, None, "user", "Called Anna about the lease.", None),
        ("brainiac-events", 1, None, "system", "You are a helpful assistant.", None),
    ]  # fmt: skip
    assert skips(chat) == [("planning", 4, "empty")]  # "human" with only white space
    assert all(m.title is None for m in chat.messages)
    assert chat.messages[0].at is not None and chat.messages[0].at.tzinfo is None


def test_claude_code_transcript() -> None:
    chat = chatlogs.parse(CLAUDE_CODE)
    uid = "c0a80114-0000-4000-8000-0000000000{:02d}".format
    assert rows(chat) == [
        (SID, 3, uid(4), "user",
         "The login test fails about one run in five. Can you find out why?",
         dt.datetime(2025, 10, 29, 7, 35, 14, 293000, tzinfo=UTC)),
        (SID, 5, uid(6), "assistant", "I'll look at the test first.",
         dt.datetime(2025, 10, 29, 7, 35, 17, 512000, tzinfo=UTC)),
        (SID, 12, uid(13), "assistant",
         "The test waits a fixed 200 ms for the session cookie, and the shared CI runner is "
         "sometimes slower than that.\n\nI'd poll for the cookie instead of sleeping.",
         dt.datetime(2025, 10, 29, 7, 35, 35, 250000, tzinfo=UTC)),
        (SID, 13, uid(14), "user", "That matches what I see in the CI logs.",
         utc(2025, 10, 29, 7, 35, 40)),
        (SID, 14, uid(15), "user", "Here is the failure screenshot from CI.",
         utc(2025, 10, 29, 7, 36, 2)),
        (SID, 15, uid(16), "user", "yes", utc(2025, 10, 29, 7, 36, 10)),
        (SID, 17, uid(19), "user", "yes", utc(2025, 10, 29, 7, 40, 30)),
        (SID, 20, uid(22), "assistant", "Done: the test now polls for the cookie.",
         utc(2025, 10, 29, 7, 41, 2)),
    ]  # fmt: skip
    assert skips(chat) == [
        (SID, -1, "summary"),  # the summary line at the top: no place of its own
        (SID, 0, "meta"),  # the isMeta caveat
        (SID, 1, "command"),  # <command-name>/model</command-name>
        (SID, 2, "command"),  # <local-command-stdout>
        (SID, 4, "thinking"),  # a thinking-only line (same message.id as the next two)
        (SID, 6, "tool use"),
        (SID, 7, "tool result"),
        (SID, 8, "tool use"),  # the Task call
        (SID, 9, "sidechain"),  # the sub-agent's prompt
        (SID, 10, "sidechain"),  # and its answer
        (SID, 11, "tool result"),
        (SID, -1, "system"),  # the compact boundary
        (SID, 16, "summary"),  # the isCompactSummary user line
        (SID, 18, "interrupted"),
        (SID, 19, "api error"),
        (SID, 21, "empty"),  # an assistant line with no content blocks
    ]
    assert {m.title for m in chat.messages} == {"Fix flaky login test"}  # the ai-title line


def test_claude_code_positions_cover_every_user_and_assistant_line_once() -> None:
    chat = chatlogs.parse(CLAUDE_CODE)
    places = [m.position for m in chat.messages] + [s.position for s in chat.skipped]
    records = [
        json.loads(line)
        for line in CLAUDE_CODE.read_text(encoding="utf-8").splitlines()
        if json.loads(line)["type"] in ("user", "assistant")
    ]
    assert sorted(p for p in places if p >= 0) == list(range(len(records)))


def test_a_grown_claude_code_transcript_keeps_the_earlier_positions_and_ids() -> None:
    before = chatlogs.parse(CLAUDE_CODE)
    common = {"isSidechain": False, "userType": "external", "cwd": "/home/anna/src/shop",
              "sessionId": SID, "version": "2.0.28", "gitBranch": "main"}  # fmt: skip
    appended = [
        {**common, "parentUuid": "c0a80114-0000-4000-8000-000000000023", "type": "user",
         "message": {"role": "user", "content": "Can you also run the whole suite?"},
         "uuid": "c0a80114-0000-4000-8000-000000000024", "timestamp": "2025-10-29T07:45:00.000Z"},
        {**common, "parentUuid": "c0a80114-0000-4000-8000-000000000024", "type": "assistant",
         "message": {"id": "msg_01Nw", "type": "message", "role": "assistant", "model": "x",
                     "content": [{"type": "text", "text": "All 212 tests pass."}]},
         "uuid": "c0a80114-0000-4000-8000-000000000025", "timestamp": "2025-10-29T07:46:00.000Z"},
    ]  # fmt: skip
    grown = CLAUDE_CODE.read_bytes() + b"".join(dumped(x) + b"\n" for x in appended)
    after = chatlogs.parse(CLAUDE_CODE, data=grown)
    assert after.messages[: len(before.messages)] == before.messages
    assert after.skipped == before.skipped
    assert [(m.position, m.message_id, m.text) for m in after.messages[len(before.messages) :]] == [
        (22, "c0a80114-0000-4000-8000-000000000024", "Can you also run the whole suite?"),
        (23, "c0a80114-0000-4000-8000-000000000025", "All 212 tests pass."),
    ]


def test_two_identical_yes_in_one_conversation_stay_two_messages() -> None:
    for path in (CLAUDE_CODE, SAMPLES / "brainiac-events.jsonl", CLAUDE_AI, EXPORT_V1):
        chat = chatlogs.parse(path)
        yes = [m for m in chat.messages if m.text == "yes"]
        assert len(yes) == 2, path.name
        assert yes[0].session == yes[1].session
        assert yes[0].position < yes[1].position
        assert yes[0] != yes[1]


def test_claude_code_multiple_sessions_in_one_file_are_counted_apart() -> None:
    lines = [
        {"type": "user", "sessionId": "s-1", "uuid": "u1", "message": {"content": "first"}},
        {"type": "user", "sessionId": "s-2", "uuid": "u2", "message": {"content": "other"}},
        {"type": "assistant", "sessionId": "s-1", "uuid": "u3",
         "message": {"content": [{"type": "text", "text": "reply"}]}},
    ]  # fmt: skip
    chat = chatlogs.parse(Path("mixed.jsonl"), data=b"\n".join(dumped(x) for x in lines))
    assert [(m.session, m.position, m.text) for m in chat.messages] == [
        ("s-1", 0, "first"),
        ("s-1", 1, "reply"),
        ("s-2", 0, "other"),
    ]
    assert all(m.at is None and m.title is None for m in chat.messages)


def test_claude_ai_export() -> None:
    chat = chatlogs.parse(CLAUDE_AI)
    a, b = "1c9e8f2a-6b1d-4c3e-9f00-5a7b2d4e6f81", "5e2d7c1b-3a4f-4e6d-8c9b-0a1b2c3d4e5f"
    mid = "a1f0c2d3-0000-4000-8000-00000000000{}".format
    assert rows(chat) == [
        (a, 0, mid(1), "user", "Can you help me reply to my landlord about the lease renewal?",
         dt.datetime(2025, 3, 2, 10, 15, 0, 123456, tzinfo=UTC)),
        # the content's text block, not the "text" field with its tool placeholder
        (a, 1, mid(2), "assistant",
         "Here is a draft reply:\n\nDear Ms Berg, I would like to renew the lease for another "
         "year.", dt.datetime(2025, 3, 2, 10, 15, 9, 654321, tzinfo=UTC)),
        (a, 3, mid(4), "assistant", "The notice period in your lease is two months.",
         utc(2025, 3, 2, 10, 16, 6)),
        # an old export: no "content", only "text"
        (b, 0, "b2e1d3c4-0000-4000-8000-000000000001", "user", "yes", utc(2024, 6, 11, 8, 0)),
        (b, 1, "b2e1d3c4-0000-4000-8000-000000000002", "assistant",
         "Great, I'll keep the summary short.", utc(2024, 6, 11, 8, 0, 4)),
        (b, 2, "b2e1d3c4-0000-4000-8000-000000000003", "user", "yes", utc(2024, 6, 11, 8, 1)),
    ]  # fmt: skip
    assert skips(chat) == [(a, 2, "attachment"), (a, 4, "tool use")]
    assert [m.title for m in chat.messages] == ["Lease renewal letter"] * 3 + [None] * 3


def test_chatgpt_export_follows_current_node() -> None:
    chat = chatlogs.parse(CHATGPT)
    a, b = "67a1c0de-4b2f-8001-9c3d-2e1f0a9b8c7d", "5f0e9d8c-7b6a-4596-8473-625140393827"
    t = 1717000000
    assert rows(chat) == [
        (a, 3, "3b1c-u1", "user", "My sourdough starter smells like nail polish. Is it dead?",
         dt.datetime.fromtimestamp(t + 0.5, UTC)),
        # the regenerated answer on the current branch, not the first one
        (a, 4, "3b1c-a1b", "assistant",
         "No, it is hungry: the smell is acetone from a starved starter.",
         dt.datetime.fromtimestamp(t + 40, UTC)),
        # the image part is left out, the text part kept
        (a, 5, "3b1c-u2", "user", "Here is a photo of it after feeding.",
         dt.datetime.fromtimestamp(t + 100, UTC)),
        (a, 9, "3b1c-a2", "assistant",
         "The bubbles show it is active again.\n\nFeed it twice a day for three days.",
         dt.datetime.fromtimestamp(t + 110, UTC)),
        # no current_node: the first child from the root down
        (b, 1, "aaaa-u1", "user", "What is 7 × 8?", dt.datetime.fromtimestamp(1700000000, UTC)),
        (b, 2, "aaaa-a1", "assistant", "56.", None),
    ]  # fmt: skip
    assert skips(chat) == [
        (a, 0, "empty"),  # the root node, message null
        (a, 1, "hidden"),  # the hidden system message
        (a, 2, "hidden"),  # the custom instructions (user_editable_context)
        (a, 6, "tool use"),  # an assistant message to the web tool
        (a, 7, "tool result"),  # the tool's answer
        (a, 8, "thinking"),  # content_type "thoughts"
        (b, 0, "empty"),
        (b, 3, "empty"),  # parts [""]
    ]
    assert {m.title for m in chat.messages if m.session == a} == {"Sourdough starter smell"}
    assert all("throw it away" not in m.text for m in chat.messages)
    assert all(m.at is None or m.at.tzinfo is UTC for m in chat.messages)


def test_chatgpt_current_node_selects_the_branch() -> None:
    value = load(CHATGPT)
    value[0]["current_node"] = "3b1c-a1a"  # the first answer, before it was regenerated
    chat = chatlogs.parse(CHATGPT, data=dumped(value))
    first = [
        (m.position, m.message_id, m.text) for m in chat.messages if m.session.startswith("67")
    ]
    assert first == [
        (3, "3b1c-u1", "My sourdough starter smells like nail polish. Is it dead?"),
        (4, "3b1c-a1a", "Yes, throw it away and start again."),
    ]
    value[1]["current_node"] = "aaaa-a2"
    chat = chatlogs.parse(CHATGPT, data=dumped(value))
    second = [(m.position, m.text) for m in chat.messages if m.session.startswith("5f")]
    assert second == [(1, "What is 7 × 8?"), (2, "7 × 8 = 56.")]


def test_chatgpt_voice_transcriptions_and_string_times_are_read() -> None:
    conversation = {
        "id": "c-voice",
        "title": None,
        "mapping": {
            "r": {"id": "r", "message": None, "parent": None, "children": ["v"]},
            "v": {
                "id": "v",
                "parent": "r",
                "children": [],
                "message": {
                    "id": "v",
                    "author": {"role": "user"},
                    "create_time": "2024-02-01T08:00:00+00:00",
                    "content": {
                        "content_type": "multimodal_text",
                        "parts": [
                            {"content_type": "audio_transcription", "text": "Remind me at six."},
                            {"content_type": "audio_asset_pointer", "asset_pointer": "s://x"},
                        ],
                    },
                },
            },
        },
    }
    chat = chatlogs.parse(Path("c.json"), "chatgpt", dumped([conversation]))
    assert rows(chat) == [("c-voice", 1, "v", "user", "Remind me at six.", utc(2024, 2, 1, 8))]
    assert chat.messages[0].title is None


def test_claude_export_v1() -> None:
    chat = chatlogs.parse(EXPORT_V1)
    s = EXPORT_V1.stem
    assert rows(chat) == [
        (s, 1, None, "user", "The login test fails about one run in five. Can you find out\nwhy?",
         None),
        (s, 2, None, "assistant", "I'll look at the test first.", None),
        (s, 5, None, "assistant",
         "The test waits a fixed 200 ms for the session cookie, and the CI\n"
         "runner is sometimes slower than that.\n\nI'd poll for the cookie instead:\n\n"
         '    for _ in range(50):\n        if client.cookies.get("session"):\n'
         "            break", None),
        (s, 7, None, "user", "yes", None),
        (s, 9, None, "assistant", "Done: the test now polls for the cookie.", None),
        (s, 10, None, "user", "yes", None),
    ]  # fmt: skip
    assert skips(chat) == [
        (s, 0, "command"),  # > /model, with its ⎿ output
        (s, 3, "tool use"),  # Read(...)
        (s, 4, "thinking"),
        (s, 6, "tool use"),  # Update(...) with a diff
        (s, 8, "tool use"),  # Bash(...)
    ]
    assert all(m.title is None for m in chat.messages)


def test_claude_export_v2() -> None:
    chat = chatlogs.parse(EXPORT_V2)
    s = "claude-export-v2"
    assert rows(chat) == [
        (s, 0, None, "user",
         "Read src/cart.py and tell me why the total is off by one cent.\n"
         "Don't change anything yet.", None),
        # the collapsed "Read 2 files (ctrl+o to expand)" line is not text
        (s, 1, None, "assistant", "Reading the cart module before touching anything.", None),
        (s, 2, None, "assistant",
         "The total adds rounded line prices, so the rounding errors add up.\n"
         "Summing the exact prices and rounding once fixes it.", None),
        (s, 4, None, "user", "Go ahead.", None),
        (s, 6, None, "assistant", "Fixed: the cart now rounds once, at the end.", None),
    ]  # fmt: skip
    assert skips(chat) == [(s, 3, "command"), (s, 5, "tool use")]


def test_markdown_with_headings() -> None:
    chat = chatlogs.parse(SAMPLES / "markdown-headings.md")
    s = "markdown-headings"
    plus_two = dt.timezone(dt.timedelta(hours=2))
    assert rows(chat) == [
        (s, 0, None, "user", "Which vegetables grow well in shade?", dt.datetime(2024, 5, 1, 10)),
        (s, 1, None, "assistant",
         "Leafy greens do: lettuce, spinach and kale.\n\n```text\n"
         "User: this line is inside a code block\n```",
         dt.datetime(2024, 5, 1, 10, 0, 30, tzinfo=plus_two)),
        (s, 2, None, "user", "And herbs?", dt.datetime(2024, 5, 1, 10, 2)),
        (s, 3, None, "assistant", "Mint and parsley.", None),
    ]  # fmt: skip
    assert chat.skipped == []
    assert {m.title for m in chat.messages} == {"Planning the garden"}


def test_markdown_with_bold_and_plain_names() -> None:
    bold = chatlogs.parse(SAMPLES / "markdown-bold.md")
    assert [(m.position, m.role, m.text) for m in bold.messages] == [
        (0, "user", "What's the capital of Australia?"),
        (1, "assistant", "Canberra.\nIt was chosen as a compromise between Sydney and Melbourne."),
        (2, "user", "yes"),
        (4, "user", "yes"),
    ]
    assert skips(bold) == [("markdown-bold", 3, "empty")]
    assert all(m.title is None and m.at is None for m in bold.messages)
    plain = chatlogs.parse(SAMPLES / "markdown-plain.md")
    assert [(m.position, m.role, m.text, m.title) for m in plain.messages] == [
        (0, "user", "Write a haiku about autumn.", "Chat with Claude"),
        (1, "assistant", "Leaves drift on the wind,\nthe maple lets go its red,\nquiet afternoon.",
         "Chat with Claude"),
        (2, "system", "The conversation was archived.", "Chat with Claude"),
    ]  # fmt: skip


def test_markdown_names_are_case_insensitive_and_need_a_line_start() -> None:
    text = (
        "ASSISTANT: hello\n"
        "user:   hi there\n"
        "  User: indented, so part of the message\n"
        "A user: is not a message start\n"
        "ai: bye\n"
    )
    chat = chatlogs.parse(Path("chat.md"), data=text.encode())
    assert [(m.role, m.text) for m in chat.messages] == [
        ("assistant", "hello"),
        ("user", "hi there\n  User: indented, so part of the message\nA user: is not a message "
         "start"),
        ("assistant", "bye"),
    ]  # fmt: skip


# ------------------------------------------------------------------------------ well-formed edges


def test_empty_but_well_formed_files_have_no_messages() -> None:
    for name, data in (("conversations.json", b"[]"), ("s.jsonl", b""), ("s.jsonl", b"\n\n")):
        chat = chatlogs.parse(Path(name), data=data)
        assert chat.messages == [] and chat.skipped == []
    assert chatlogs.parse(Path("x.json"), "claude-ai", b"[]").messages == []


def test_unknown_keys_and_nulls_are_tolerated() -> None:
    line = {"type": "user", "sessionId": "s", "uuid": "u", "timestamp": None, "isMeta": None,
            "isSidechain": None, "brandNewField": {"a": 1},
            "message": {"role": "user", "content": "hi", "extra": []}}  # fmt: skip
    chat = chatlogs.parse(Path("s.jsonl"), data=dumped(line))
    assert rows(chat) == [("s", 0, "u", "user", "hi", None)]


def test_a_json_string_may_hold_a_line_separator() -> None:
    data = dumped({"text": "one\u2028two", "session": "s"}) + b"\n" + dumped({"text": "three"})
    chat = chatlogs.parse(Path("e.jsonl"), data=data)
    assert [m.text for m in chat.messages] == ["one\u2028two", "three"]


def test_a_lone_surrogate_becomes_a_replacement_character() -> None:
    chat = chatlogs.parse(Path("e.jsonl"), data=b'{"text": "broken \\ud83d emoji"}')
    assert chat.messages[0].text == "broken \ufffd emoji"
    chat.messages[0].text.encode("utf-8")


def test_a_byte_order_mark_is_not_part_of_the_text() -> None:
    chat = chatlogs.parse(Path("e.jsonl"), data=b"\xef\xbb\xbf" + dumped({"text": "hi"}))
    assert chat.format == "brainiac" and chat.messages[0].text == "hi"


def test_parse_reads_the_file_when_given_no_data(tmp_path: Path) -> None:
    path = tmp_path / "talk.md"
    path.write_text("User: hi\nAssistant: hello\n", encoding="utf-8")
    chat = chatlogs.parse(path)
    assert (chat.path, chat.format) == (path, "markdown")
    assert [(m.session, m.text) for m in chat.messages] == [("talk", "hi"), ("talk", "hello")]


# ------------------------------------------------------------------------------ malformed files


def test_a_bad_json_line_names_the_file_and_line() -> None:
    data = CLAUDE_CODE.read_bytes().replace(b"\n", b"\n{not json\n", 1)
    error = raises(CLAUDE_CODE, data)
    assert error.path == str(CLAUDE_CODE)
    assert error.where == "line 2"
    assert str(error).startswith(f"{CLAUDE_CODE}, line 2: not valid JSON (")
    assert "; expected one JSON object per line" in str(error)
    assert isinstance(error, BrainiacError)


def test_a_live_transcript_leaves_out_its_damaged_lines_and_the_line_being_written() -> None:
    lines = [dumped({"text": f"event {i}", "session": "s"}) + b"\n" for i in range(4)]
    data = b"".join(
        [lines[0], b'{"text": "cut by a cr\n', lines[1], b'{"text": "caf\xe9"}\n', lines[2]]
    )
    chat = chatlogs.parse(Path("e.jsonl"), "brainiac", data + lines[3][:9], live=True)
    assert [m.text for m in chat.messages] == ["event 0", "event 1", "event 2"]
    assert [m.position for m in chat.messages] == [0, 1, 2]  # a damaged line holds no place
    assert [d.line for d in chat.damaged] == [2, 4]
    assert chat.damaged[0].problem.startswith("not valid JSON (")
    assert chat.damaged[1].problem == "not UTF-8 text (byte 0xe9 at column 14)"
    assert chat.unread == 9  # still being written: neither read nor damaged
    whole = chatlogs.parse(Path("e.jsonl"), "brainiac", data + lines[3].rstrip(), live=True)
    assert whole.unread == 0 and whole.messages[-1].text == "event 3"  # whole JSON: complete
    assert chatlogs.parse(Path("e.jsonl"), "claude-code", b"", live=True).messages == []
    with pytest.raises(ImportFormatError, match="line 4: not UTF-8"):
        chatlogs.parse(Path("e.jsonl"), "brainiac", data)  # a file given whole is all or nothing


def test_a_bad_line_far_down_a_brainiac_file_rejects_the_whole_file() -> None:
    data = b"".join(dumped({"text": f"event {i}"}) + b"\n" for i in range(30)) + b'{"text": 5}\n'
    error = raises("events.jsonl", data)
    assert str(error) == 'events.jsonl, line 31: "text" is a number; expected a string'


def test_a_wrong_type_deep_in_chatgpt_json_names_its_json_path() -> None:
    value = load(CHATGPT)
    value[1]["mapping"]["aaaa-a1"]["message"]["author"]["role"] = 7
    error = raises(CHATGPT, dumped(value))
    assert error.where == "$[1].mapping.aaaa-a1.message.author.role"
    assert str(error) == (
        f"{CHATGPT}, $[1].mapping.aaaa-a1.message.author.role: is a number; expected a string"
    )


def test_a_wrong_type_off_the_current_branch_is_still_an_error() -> None:
    value = load(CHATGPT)
    value[0]["mapping"]["3b1c-a1a"]["message"]["content"]["parts"] = "not a list"
    error = raises(CHATGPT, dumped(value))
    assert error.where == "$[0].mapping.3b1c-a1a.message.content.parts"
    assert "expected a list or null" in str(error)


@pytest.mark.parametrize(
    ("change", "where", "problem"),
    [
        (lambda v: v[0].pop("mapping"), "$[0].mapping", "is missing"),
        (lambda v: v[0].update(current_node="gone"), "$[0].current_node", "names node 'gone'"),
        (lambda v: v[1].pop("id"), "$[1].conversation_id", "is missing (and so is id)"),
        (lambda v: v[0]["mapping"]["3b1c-u1"]["message"].update(create_time="soon"),
         "$[0].mapping.3b1c-u1.message.create_time", "'soon', not an ISO-8601 time"),
        (lambda v: v[0]["mapping"]["3b1c-u1"].update(children=[3]),
         "$[0].mapping.3b1c-u1.children[0]", "is a number"),
        (lambda v: v[0]["mapping"]["client-created-root"].update(parent="3b1c-a2"),
         "$[0].mapping.3b1c-a2.parent", "closes a cycle"),
    ],
)  # fmt: skip
def test_malformed_chatgpt_conversations(change: Any, where: str, problem: str) -> None:
    value = load(CHATGPT)
    change(value)
    error = raises(CHATGPT, dumped(value), "chatgpt")
    assert error.where == where
    assert problem in error.problem


@pytest.mark.parametrize(
    ("change", "where", "problem"),
    [
        (lambda v: v[1].pop("uuid"), "$[1].uuid", "is missing"),
        (lambda v: v[0]["chat_messages"][3].update(sender="robot"),
         "$[0].chat_messages[3].sender", "is 'robot'"),
        (lambda v: v[0]["chat_messages"][1]["content"][1].update(type=None),
         "$[0].chat_messages[1].content[1].type", "is null"),
        (lambda v: v[2].update(chat_messages={}), "$[2].chat_messages", "is an object"),
    ],
)  # fmt: skip
def test_malformed_claude_ai_conversations(change: Any, where: str, problem: str) -> None:
    value = load(CLAUDE_AI)
    change(value)
    error = raises(CLAUDE_AI, dumped(value))
    assert (error.where, error.problem) == (where, problem)


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ({"type": "user", "sessionId": "s", "message": {"content": 3}}, '"message.content" is a'),
        ({"type": "user", "sessionId": "s"}, '"message" is missing'),
        ({"sessionId": "s", "message": {"content": "x"}}, '"type" is missing'),
        ({"type": "user", "sessionId": "s", "timestamp": "yesterday", "message": {"content": "x"}},
         '"timestamp" is \'yesterday\', not an ISO-8601 time'),
        ({"type": "assistant", "sessionId": "s", "message": {"content": [{"text": "x"}]}},
         '"message.content[0].type" is missing'),
        ({"type": "user", "sessionId": "s", "isSidechain": "no", "message": {"content": "x"}},
         '"isSidechain" is a string'),
        ([1, 2], "the line is a list"),
    ],
)  # fmt: skip
def test_malformed_claude_code_lines(line: Any, problem: str) -> None:
    good = CLAUDE_CODE.read_bytes()
    error = raises(CLAUDE_CODE, good + dumped(line) + b"\n", "claude-code")
    lines = good.count(b"\n")
    assert error.where == f"line {lines + 1}"
    assert error.problem.startswith(problem)


def test_not_utf8_names_the_line() -> None:
    data = b'{"text": "fine"}\n{"text": "caf\xe9"}\n'
    error = raises("events.jsonl", data)
    assert error.where == "line 2"
    assert str(error) == (
        "events.jsonl, line 2: not UTF-8 text (byte 0xe9 at offset 30); expected a UTF-8 text file"
    )
    with pytest.raises(ImportFormatError, match="not UTF-8"):
        chatlogs.detect(Path("x.md"), b"\xff\xfeU\x00s\x00")


@pytest.mark.parametrize(
    ("name", "data", "where", "found"),
    [
        ("x.json", b'{\n "account": {},\n "projects": []\n}', "$", 'keys "account", "projects"'),
        ("x.json", b'[{"id": 1, "messages": []}]', "$[0]", 'keys "id", "messages"'),
        ("x.json", b'["a", "b"]', "$[0]", "is a string"),
        ("x.jsonl", b'{"role": "user", "content": "hi"}\n', None, '"role", "content"'),
        ("x.json", b"[1, 2,", "line 1, column 7", "not valid JSON"),
        ("notes.md", b"# Shopping\n\n- milk\n- bread\n", None, "no chat message found"),
        ("x.txt", b"   \n", None, "the file is empty"),
    ],
)
def test_unknown_shapes_say_what_was_found_and_what_is_expected(
    name: str, data: bytes, where: str | None, found: str
) -> None:
    with pytest.raises(ImportFormatError) as info:
        chatlogs.detect(Path(name), data)
    error = info.value
    assert error.where == where
    assert found in error.problem
    assert error.expected
    assert str(error).startswith(name + (f", {where}: " if where else ": "))
    with pytest.raises(ImportFormatError) as again:
        chatlogs.parse(Path(name), data=data)
    assert str(again.value) == str(error)


def test_the_markdown_error_names_the_expected_lines() -> None:
    error = raises("notes.md", b"Just some notes.\n")
    assert str(error) == (
        'notes.md: no chat message found; expected lines starting with "User:" / "**User:**" / '
        '"## User" (or Assistant, Human, AI, Claude, ChatGPT, System)'
    )


def test_a_format_given_by_the_caller_is_checked_against_the_content() -> None:
    error = raises(CHATGPT, CHATGPT.read_bytes(), "claude-ai")
    assert (error.where, error.problem) == ("$[0].uuid", "is missing")
    error = raises(CHATGPT, CHATGPT.read_bytes(), "brainiac")
    assert error.where == "line 1"
    error = raises(CHATGPT, b"[]", "nonsense")
    assert error.problem == "unknown format 'nonsense'"
    assert "brainiac, claude-code" in error.expected


def test_an_unreadable_file_is_an_import_format_error(tmp_path: Path) -> None:
    with pytest.raises(ImportFormatError, match="cannot be read"):
        chatlogs.parse(tmp_path / "missing.json")


def test_the_error_message_without_a_place() -> None:
    error = ImportFormatError("a.json", None, "is odd", "something else")
    assert str(error) == "a.json: is odd; expected something else"
    error = ImportFormatError("a.json", "$[0]", "is odd", "something else")
    assert str(error) == "a.json, $[0]: is odd; expected something else"


# ------------------------------------------------------------------------------ properties

_NAMES = st.sampled_from(["x.jsonl", "x.json", "x.md", "x.txt", "conversations.json"])


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(_NAMES, st.binary(max_size=400))
def test_any_bytes_parse_or_raise_import_format_error(name: str, data: bytes) -> None:
    try:
        chat = chatlogs.parse(Path(name), data=data)
    except ImportFormatError:
        return
    assert chat.format in chatlogs.FORMATS
    _check_invariants(chat)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(
        st.sampled_from(
            ["type", "text", "role", "message", "content", "sessionId", "mapping", "message",
             "parts", "author", "children", "parent", "current_node", "chat_messages", "sender",
             "uuid", "id", "content_type", "create_time", "timestamp", "isMeta", "at", "session"]
        ),
        inner,
        max_size=5,
    ),
    max_leaves=25,
)  # fmt: skip


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(chatlogs.FORMATS), st.lists(_JSON, min_size=1, max_size=3))
def test_any_json_parses_or_raises_import_format_error(format: str, values: list[Any]) -> None:
    """JSON shaped roughly like the real formats reaches the checks deep inside each parser."""
    as_lines = b"\n".join(json.dumps(v).encode() for v in values)
    for data in (as_lines, json.dumps(values).encode()):
        for chosen in (format, None):
            try:
                chat = chatlogs.parse(Path("x.json"), chosen, data)
            except ImportFormatError:
                continue
            _check_invariants(chat)


def _check_invariants(chat: ChatFile) -> None:
    for message in chat.messages:
        assert isinstance(message, Message)
        assert message.text and message.text == message.text.strip()
        assert message.role in ("user", "assistant", "system")
        assert message.position >= 0
        message.text.encode("utf-8")
    for skipped in chat.skipped:
        assert isinstance(skipped, Skipped)
        assert skipped.reason
