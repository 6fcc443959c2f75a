"""Plain frontmatter read without YAML: what PyYAML's safe loader gives, or left to YAML."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st

from brainiac.formats import note, plain_yaml

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _yaml(source: str) -> Any:
    try:
        return yaml.load(source, Loader=_LOADER)
    except yaml.YAMLError:
        return "<error>"


def _typed(value: Any) -> Any:
    """`value` with each scalar's type beside it: True == 1 and 1.0 == 1 must not pass."""
    if isinstance(value, dict):
        return {_typed(k): _typed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_typed(v) for v in value]
    return (type(value).__name__, value)


def _same_as_yaml(source: str) -> dict[str, Any] | None:
    plain = plain_yaml.load(source)
    if plain is not None:
        assert _typed(plain) == _typed(_yaml(source)), source
    return plain


def test_what_brainiac_writes_is_read_without_yaml() -> None:
    source = (
        "title: Session 11 - melanie, chatting (2023-08-14)\n"
        "tags: [project, photography]\n"
        "aliases: [Atlas, 1904]\n"
        "strength: 1.37\n"
        "reinforcement: -0.01\n"
        "created: 2026-10-15\n"
        "reinforced: 2026-11-28T10:00\n"
        "status: active\n"
        "source: https://example.org/a?b=c\n"
        "empty:\n"
        "people:\n"
        "  - Anna Berg\n"
        "  - Bo\n"
    )
    plain = _same_as_yaml(source)
    assert plain == {
        "title": "Session 11 - melanie, chatting (2023-08-14)",
        "tags": ["project", "photography"],
        "aliases": ["Atlas", 1904],
        "strength": 1.37,
        "reinforcement": -0.01,
        "created": dt.date(2026, 10, 15),
        "reinforced": "2026-11-28T10:00",  # no seconds: not a YAML 1.1 timestamp
        "status": "active",
        "source": "https://example.org/a?b=c",
        "empty": None,
        "people": ["Anna Berg", "Bo"],
    }


@pytest.mark.parametrize(
    "source",
    [
        "title: a # comment\n",
        "title: 'quoted'\n",
        'title: "quoted"\n',
        "title: a: b\n",
        "title:\n  first: 1\n",
        "title: >\n  folded\n",
        "anchor: &a x\nalias: *a\n",
        "when: 2020-08-21T10:30:00\n",
        "n: 0x1F\n",
        "n: 012\n",
        "n: 1_000\n",
        "n: 190:20:30\n",
        "f: .inf\n",
        "on: yes\n",
        "date: 2026-02-30\n",
        "tags: [a, [b]]\n",
        "tags: [a,\n  b]\n",
        "tags:\n  - a\n - b\n",
        "title: a\n  continued\n",
        "title:\ta\n",
        "title: a\r\n",
        "- a\n- b\n",
        "just text\n",
        "title: =\n",
        "key: !tag x\n",
        "%YAML 1.1\n",
    ],
)
def test_anything_else_is_left_to_yaml(source: str) -> None:
    assert plain_yaml.load(source) is None


_WORDS = st.sampled_from(
    [
        "a", "Anna Berg", "yes", "No", "on", "OFF", "null", "~", "true", "1", "-3", "+4", "0",
        "012", "1.5", "-0.01", "1.", ".5", "1e5", "1_000", "0x1F", "2026-10-15", "2026-1-5",
        "2026-10-15T10:00", "2026-10-15 10:00:00", "190:20:30", "a:b", "a: b", "a:", ":a", "-a",
        "- a", "?", "a #b", "a#b", "'q'", '"q"', "[x]", "{x}", "&x", "*x", "!x", "|", ">", "%",
        "@x", "`x`", "=", "<<", "é", "a, b", "a]", "http://x.org/?a=b", "",
    ]
)  # fmt: skip
_KEYS = st.sampled_from(["title", "tags", "on", "Null", "y", "n", "key-2", "_k", "True"])


@st.composite
def _frontmatter(draw: st.DrawFn) -> str:
    lines = []
    for _ in range(draw(st.integers(0, 5))):
        key = draw(_KEYS)
        shape = draw(st.sampled_from(["scalar", "flow", "block", "empty"]))
        if shape == "scalar":
            lines.append(f"{key}: {draw(_WORDS)}")
        elif shape == "flow":
            items = draw(st.lists(_WORDS, max_size=3))
            lines.append(f"{key}: [{draw(st.sampled_from([', ', ',', ' , '])).join(items)}]")
        elif shape == "block":
            lines.append(f"{key}:")
            indent = draw(st.sampled_from(["", "  "]))
            lines += [f"{indent}- {w}" for w in draw(st.lists(_WORDS, max_size=3))]
        else:
            lines.append(f"{key}:" + draw(st.sampled_from(["", " ", "  "])))
        if draw(st.booleans()):
            lines.append(draw(st.sampled_from(["", "  ", "# c", "...", "---", "  x"])))
    return "\n".join(lines) + "\n"


@settings(max_examples=1500, deadline=None)
@given(_frontmatter())
@example("tags:\n- a\n\n- b\nnext: 1\n")
@example("k:\nk: 2\n")
def test_generated_frontmatter_reads_as_yaml_reads_it(source: str) -> None:
    _same_as_yaml(source)


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="ab :-[],#'\"\n\t\r.1~é", max_size=40))
def test_any_text_reads_as_yaml_reads_it_or_is_left_to_it(source: str) -> None:
    _same_as_yaml(source)


def test_the_template_vault_is_read_as_yaml_reads_it() -> None:
    root = Path(__file__).resolve().parent.parent / "vault_template"
    read = 0
    for path in root.rglob("*.md"):
        text = path.read_text(encoding="utf-8")
        parsed = note.parse(text, str(path))
        if parsed.frontmatter_lines is None:
            continue
        first, close = parsed.frontmatter_lines
        source = "".join(parsed.lines[first:close])
        assert _typed(dict(parsed.meta)) == _typed(_yaml(source) or {}), path
        read += plain_yaml.load(source) is not None
    assert read > 0  # the template's own frontmatter takes the plain path
