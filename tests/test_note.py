from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from brainiac.core.errors import NoteParseError
from brainiac.formats import note

SAMPLE = """---
title: Anna Berg
# a comment a person wrote
aliases: [Anna, "A. Berg"]
when: 2020-08-21T10:30:00
tags:
  - person
  - work
---
# Anna Berg

Met at [[Project Atlas|the kickoff]] and `[[not a link]]`. #friend #1984

```
## not a heading
[[NotALinkEither]]
```

## Facts
- role: head of data

## Notes
free text
"""


def test_parse_reads_frontmatter_sections_links_and_tags() -> None:
    n = note.parse(SAMPLE, "memory/long_term/anna.md")
    assert n.title == "Anna Berg"
    assert n.meta_list("aliases") == ["Anna", "A. Berg"]
    assert n.meta_list("tags") == ["person", "work"]
    assert [s.title for s in n.sections] == ["Anna Berg", "Facts", "Notes"]
    assert n.section_text("facts") == "- role: head of data\n\n"
    assert note.wikilinks(n.body) == ["Project Atlas"]
    assert note.inline_tags(n.body) == ["friend"]  # #1984 is not a tag (all digits)
    assert n.text == SAMPLE


def test_title_falls_back_to_heading_then_file_name() -> None:
    assert note.parse("# Heading\ntext\n", "x/y.md").title == "Heading"
    assert note.parse("just text\n", "x/my note.md").title == "my note"


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("---\ntitle: a\nbad: [unclosed\n---\nbody\n", None),
        ("---\ntitle: a\n  - nope: : :\n---\n", 3),
        ("---\ntitle: never closed\n", 1),
        ("---\n- a list\n---\n", 2),
    ],
)
def test_bad_frontmatter_raises_with_file_and_fix(text: str, line: int | None) -> None:
    with pytest.raises(NoteParseError) as info:
        note.parse(text, "memory/long_term/bad.md")
    message = str(info.value)
    assert message.startswith("memory/long_term/bad.md")
    assert "fix" in message or "add a closing" in message
    if line is not None:
        assert info.value.line == line


def test_replace_section_touches_only_that_section() -> None:
    out = note.replace_section(SAMPLE, "Facts", "- role: CTO\n")
    assert out == SAMPLE.replace("- role: head of data\n", "- role: CTO\n")


def test_replace_section_appends_missing_section() -> None:
    out = note.replace_section("# T\nbody", "Facts", "- a: b")
    assert out == "# T\nbody\n\n## Facts\n- a: b\n"


def test_set_frontmatter_field_edits_one_line_and_keeps_comments_and_order() -> None:
    out = note.set_frontmatter_field(SAMPLE, "strength", "1.5")
    assert out == SAMPLE.replace("---\n# Anna", "strength: 1.5\n---\n# Anna", 1)
    again = note.set_frontmatter_field(out, "strength", "0.9")
    assert again == SAMPLE.replace("---\n# Anna", "strength: 0.9\n---\n# Anna", 1)
    tags = note.set_frontmatter_field(SAMPLE, "tags", "[person]")
    assert "  - work" not in tags and "tags: [person]\n" in tags
    assert "# a comment a person wrote\n" in tags and "when: 2020-08-21T10:30:00\n" in tags


def test_set_frontmatter_field_adds_frontmatter_when_absent() -> None:
    assert note.set_frontmatter_field("body\n", "status", "active") == (
        "---\nstatus: active\n---\nbody\n"
    )


safe_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=300)


@given(before=safe_text, after=safe_text)
def test_replace_section_keeps_every_other_byte(before: str, after: str) -> None:
    before = before.replace("#", "").replace("`", "").replace("~", "").replace("-", "")
    after = after.replace("#", "").replace("`", "").replace("~", "").replace("-", "")
    before = before.replace("\r", "") + "\n" if before else ""
    after = after.replace("\r", "")
    text = f"{before}## Facts\nold\n## Other\n{after}"
    out = note.replace_section(text, "Facts", "new\n")
    assert out.startswith(before + "## Facts\n")
    assert out.endswith(f"## Other\n{after}")
    assert note.parse(out).section_text("Facts") in ("new\n", "new\n\n")


# Lines built from the pieces that matter to Markdown's block and inline structure, so that the
# examples reach headings, lists, quotes, code, HTML and reference definitions, not only prose.
_md_line = st.lists(
    st.sampled_from(
        [
            "[[Anna Berg]]",
            "![[plan|the plan]]",
            "[[a\\|b]]",
            "#tag",
            "#1984",
            "##x",
            "# ",
            "- ",
            "1. ",
            "> ",
            "    ",
            "  ",
            "\t",
            "`",
            "```",
            "~~~",
            "<div>",
            "<!-- ",
            " -->",
            "[ref]: ",
            "[x]",
            "text",
            " ",
            "---",
            "===",
            "\\",
            "&#35;",
            "|",
        ]
    ),
    max_size=8,
).map("".join)


@given(st.lists(_md_line, max_size=12).map("\n".join))
# Found by the search and kept: a definition in a list item or a quote, an escaped bracket in a
# label, a label over two lines.
@example("- [ref]: #tag")
@example("- [ref]: [[a\\|b]]")
@example("> [a\\]b]: #tag")
@example("[two\nlines]: #tag")
def test_the_prose_fast_path_finds_what_the_markdown_parse_finds(text: str) -> None:
    """prose_of skips the Markdown parse for text with no code, HTML or reference definition;
    the links and tags found must be those the parse would give."""
    slow = note.markdown_prose(text)
    fast = note.prose_of(text)
    assert [m.group(0) for m in note._WIKILINK_RE.finditer(fast)] == [
        m.group(0) for m in note._WIKILINK_RE.finditer(slow)
    ]
    assert note._TAG_RE.findall(fast) == note._TAG_RE.findall(slow)


@given(st.text(alphabet="#a1_/-&é \n.x", max_size=40))
def test_the_tag_pattern_is_obsidians_rule_with_hash_first(text: str) -> None:
    """_TAG_RE starts at "#" and checks the character before it afterwards (for speed); it must
    find what the rule as first written finds: a "#" not after a word character, "/", "&" or
    "#", then the tag."""
    import re

    written = re.compile(r"(?<![\w/&#])#([\w][\w/-]*)")
    assert note._TAG_RE.findall(text) == written.findall(text)


def test_text_with_code_takes_the_markdown_parse() -> None:
    text = "See [[Anna]].\n\n```\n[[NotALink]] #nottag\n```\n\n    [[Indented]]\n"
    assert note.wikilinks(text) == ["Anna"]
    assert note.inline_tags(text) == []
    assert note.prose_of("plain [[Anna]] #tag") == "plain [[Anna]] #tag"  # no parse needed
