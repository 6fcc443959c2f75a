"""JSON files that Node programs own, read and written back so that Node can still read them and
every value stays as it was written.

Claude Code, Claude Desktop and Cursor read their settings with JSON.parse and write them with
JSON.stringify. Python's json module, left to itself, parts from those in three ways that break
a file written back:
- it turns a number into an int or a float and writes that: `1e999` comes back as `Infinity`,
  which JSON.parse rejects (the client can no longer read its own state), and `1.50` as `1.5`.
  Here a number keeps its text (Number) and is written back as it was read;
- it reads `NaN`, `Infinity` and `-Infinity`, which JSON.parse rejects: refused here as well;
- it reads the escape of a lone surrogate (`\\ud83d`: JSON.stringify writes one for a string cut
  in the middle of an emoji) into a str that UTF-8 cannot encode. It is written back as the same
  escape.
Everything else is written as JSON.stringify(value, null, 2) writes it: other text as it is
(UTF-8, not escaped), an indent of two spaces.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Number:
    """A JSON number as its text in the file: written back as it was read, whatever its size."""

    text: str


class NotNodeJson(ValueError):
    """Text that Python's json reads but Node's JSON.parse does not."""


_SURROGATE = re.compile("[\ud800-\udfff]")


def _no_constant(name: str) -> object:
    raise NotNodeJson(f"`{name}` is not a JSON value (JSON.parse rejects it)")


def loads(text: str) -> object:
    """The value of `text`, its numbers as Number. ValueError (json.JSONDecodeError for a
    syntax error) for text that JSON.parse would reject; RecursionError if it nests too deep."""
    return json.loads(text, parse_int=Number, parse_float=Number, parse_constant=_no_constant)


def kind(value: object) -> str:
    """What JSON calls the type of `value` (as loads returns it), for a message."""
    if isinstance(value, Number):
        return "number"
    if value is None or isinstance(value, bool):
        return "null" if value is None else "boolean"
    names = {str: "string", list: "list", dict: "object"}
    return next((name for t, name in names.items() if isinstance(value, t)), "value")


def _string(text: str) -> str:
    quoted = json.dumps(text, ensure_ascii=False)
    # Only a lone surrogate is left unescaped by ensure_ascii=False (a pair was read as one
    # character); JSON.stringify escapes it the same way, and UTF-8 has no bytes for it.
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", quoted)


def dumps(value: object) -> str:
    """`value` as JSON text (indented by two, no final newline). ValueError for a value that
    JSON.parse could not read back (a float that is not finite); RecursionError if too deep."""
    out: list[str] = []
    _write(value, 0, out)
    return "".join(out)


def _write(value: object, level: int, out: list[str]) -> None:
    if isinstance(value, Number):
        out.append(value.text)
    elif isinstance(value, str):
        out.append(_string(value))
    elif value is None or isinstance(value, bool):
        out.append({None: "null", True: "true", False: "false"}[value])
    elif isinstance(value, int):
        out.append(int.__repr__(value))
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{value!r} is not a JSON number")
        out.append(float.__repr__(value))
    elif isinstance(value, dict | list):
        _write_container(value, level, out)
    else:
        raise TypeError(f"{type(value).__name__} is not a JSON value")


def _write_container(
    value: dict[object, object] | list[object], level: int, out: list[str]
) -> None:
    opening, closing = ("{", "}") if isinstance(value, dict) else ("[", "]")
    if not value:
        out.append(opening + closing)
        return
    indent = "\n" + "  " * (level + 1)
    out.append(opening)
    items = value.items() if isinstance(value, dict) else enumerate(value)
    for n, (key, item) in enumerate(items):
        out.append(("," if n else "") + indent)
        if isinstance(value, dict):
            if not isinstance(key, str):
                raise TypeError(f"{type(key).__name__} is not a JSON key")
            out.append(_string(key) + ": ")
        _write(item, level + 1, out)
    out.append("\n" + "  " * level + closing)
