"""One rule for fenced code, the same in every scanner of Markdown lines (fences.py)."""

from __future__ import annotations

from pathlib import Path

from brainiac.exchange import chatlogs
from brainiac.formats import note
from brainiac.formats.fences import Fences
from brainiac.language import facts


def _code_lines(text: str) -> list[bool]:
    fences = Fences()
    return [fences.code(line) for line in text.split("\n")]


def test_a_fence_closes_only_on_its_own_character_at_least_as_long_and_bare() -> None:
    text = "\n".join(
        [
            "prose",
            "````python",  # opens (4 backticks)
            "```",  # shorter: still code
            "~~~~",  # the other character: still code
            "````python",  # text after the marker: still code
            "   `````  ",  # same character, longer, indented 3, spaces after: closes
            "after",
        ]
    )
    assert _code_lines(text) == [False, True, True, True, True, True, False]


def test_a_marker_indented_four_spaces_is_no_fence_and_an_unclosed_one_runs_to_the_end() -> None:
    assert _code_lines("    ```\nprose") == [False, False]
    assert _code_lines("~~~\n# not a heading\n- key: value") == [True, True, True]


def test_headings_and_facts_inside_a_fence_with_a_longer_marker_stay_text() -> None:
    body = "# Note\n\n````\n```python\n## Inside\n- pin: 1234\n````\n\n## Facts\n\n- city: Lyon\n"
    parsed = note.parse(body)
    assert [s.title for s in parsed.sections] == ["Note", "Facts"]
    # The inner "```python" line does not close the outer fence, so `pin` is not a fact.
    assert set(facts.current("````\n```python\n- pin: 1234\n````\n- city: Lyon\n")) == {"city"}


def test_a_chat_export_keeps_a_role_line_inside_code_as_message_text(tmp_path: Path) -> None:
    path = tmp_path / "chat.md"
    path.write_text(
        "**User:** show me a transcript\n\n**Assistant:** here:\n\n~~~~\n~~~ not closed\n"
        "User: inside the code\n~~~~\n\n**User:** thanks\n",
        encoding="utf-8",
    )
    messages = chatlogs.parse(path).messages
    assert [m.role for m in messages] == ["user", "assistant", "user"]
    assert "User: inside the code" in messages[1].text
