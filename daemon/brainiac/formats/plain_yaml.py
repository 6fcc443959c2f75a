"""Frontmatter in YAML's plainest form, read without a YAML parser: `key: value` lines, flow
lists (`tags: [a, b]`) and block lists (`tags:` then `- a` lines), every value a plain scalar.

Why: PyYAML's constructor runs in Python even under its C parser, and a context reads a dozen
notes or more: it is a large share of what showing a note costs, and this reads the same values
much faster (docs/benchmarks.md, "Speed"). The frontmatter brainiac writes, and
most that people write, is this plain form.

What it gives is what PyYAML's safe loader gives, or None when the text is anything else (a
comment, a quote, a nested mapping, a value on two lines, a tab, a carriage return, an alias,
a timestamp with a time, a number in another base...), and the caller loads it with YAML, which
also says what is wrong with a broken one. Each plain scalar is typed by PyYAML's own table of
implicit types, so a word is a string here exactly when it is one there; of the other types
only the plain spellings are taken (a decimal integer, a decimal fraction, a date, a boolean,
null). tests/test_plain_yaml.py compares the two on generated frontmatter.

One concept: the plain subset of frontmatter YAML, read.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from typing import Any

from yaml.resolver import Resolver

_TAG = "tag:yaml.org,2002:"
_KEY_LINE_RE = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*):(?: +(.*?))? *")
_ITEM_LINE_RE = re.compile(r"( *)- +(.*?) *")
_INTEGER_RE = re.compile(r"[-+]?(?:0|[1-9][0-9]*)")
_FRACTION_RE = re.compile(r"[-+]?[0-9]+\.[0-9]*")
_DATE_RE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")
_BOOLEANS = {"yes": True, "no": False, "true": True, "false": False, "on": True, "off": False}
# What may not start a plain scalar (YAML's indicators), and what a flow list's item may not
# hold. "-" and "+" start numbers and "." fractions, which the types below take.
_INDICATORS = frozenset("-?:,[]{}#&*!|>'\"%@`")
_FLOW_FORBIDDEN = frozenset(",[]{}:")


class _NotPlain(Exception):
    """The text is not in the plain subset: YAML must read it."""


def load(source: str) -> dict[str, Any] | None:
    """The mapping `source` holds, as PyYAML's safe loader gives it, or None when `source` is
    not in the plain subset (the caller then loads it with YAML)."""
    if "#" in source or "\t" in source or "\r" in source:
        return None  # comments, tabs and carriage returns follow rules not kept here
    out: dict[str, Any] = {}
    listing: list[Any] | None = None  # the block list the last key opened, if any
    opened = ""  # that key
    indent: int | None = None  # its items' indentation, from the first
    try:
        for line in source.split("\n"):
            if not line.strip(" "):
                continue
            item = _ITEM_LINE_RE.fullmatch(line)
            if item is not None:
                if listing is None or (indent is not None and len(item[1]) != indent):
                    return None
                indent = len(item[1])
                listing.append(_scalar(item[2], flow=False))
                continue
            pair = _KEY_LINE_RE.fullmatch(line)
            if pair is None:
                return None
            key = pair[1]
            if not _is_string(key):
                return None  # `on: ...` is a boolean key in YAML 1.1
            if listing is not None and not listing:
                out[opened] = None  # a key with neither a value nor items is null
            listing, indent = None, None
            value = pair[2] or ""
            if value:
                out[key] = _flow_list(value) if value.startswith("[") else _scalar(value, False)
            else:
                listing, opened = [], key
                out[key] = listing
    except _NotPlain:
        return None
    if listing is not None and not listing:
        out[opened] = None
    return out or None  # nothing but blank lines: YAML's None, not a mapping


def _flow_list(text: str) -> list[Any]:
    if not text.endswith("]"):
        raise _NotPlain
    inner = text[1:-1].strip(" ")
    if not inner:
        return []
    return [_scalar(part.strip(" "), flow=True) for part in inner.split(",")]


def _scalar(text: str, flow: bool) -> Any:
    """A plain scalar's value as YAML types it, or _NotPlain."""
    if (
        not text
        or not text.isprintable()
        or ": " in text
        or text.endswith(":")
        or (flow and not _FLOW_FORBIDDEN.isdisjoint(text))
    ):
        raise _NotPlain
    tag = _implicit_tag(text)
    if text[0] in _INDICATORS and tag not in ("int", "float"):
        raise _NotPlain
    if tag == "str":
        return text
    if tag == "bool":
        return _BOOLEANS[text.lower()]
    if tag == "null":
        return None
    if tag == "int" and _INTEGER_RE.fullmatch(text):
        return int(text)
    if tag == "float" and _FRACTION_RE.fullmatch(text):
        return float(text)
    if tag == "timestamp" and (date := _DATE_RE.fullmatch(text)):
        try:
            return dt.date(int(date[1]), int(date[2]), int(date[3]))
        except ValueError:
            raise _NotPlain from None  # YAML says what is wrong with 2026-02-30
    raise _NotPlain


@functools.lru_cache(maxsize=256)
def _is_string(key: str) -> bool:
    """Whether a key (a word, _KEY_LINE_RE's) reads as a string; kept, as a note has the same
    few keys as the next."""
    return _implicit_tag(key) == "str"


def _implicit_tag(text: str) -> str:
    """The type PyYAML's resolver gives a plain scalar: the first of its patterns for the first
    character, then of those for any character, that matches; "str" when none does."""
    table = Resolver.yaml_implicit_resolvers
    for first in (text[0], None):
        for tag, pattern in table.get(first, ()):
            if pattern.match(text):
                return str(tag).removeprefix(_TAG)
    return "str"
