"""The `brainiac` chat export format.

JSONL, one event a line: {"text": str (required), "role": str (default "user"),
"session": str|null (default: the file name's stem), "at": ISO-8601 str|null, "id":
str|null}. Blank lines are ignored. position = index among the lines of that session.
"""

from __future__ import annotations

from brainiac.exchange.chatlogs.records import (
    ROLE_NAMES,
    Node,
    Out,
    json_lines,
    role_of,
)


def parse_brainiac(file: str, stem: str, text: str, out: Out) -> None:
    places: dict[str, int] = {}
    for lineno, value in json_lines(file, text, out):
        node = Node(file, value, "", lineno)
        node.obj()
        said = node.req_str("text")
        role_name = node.opt_str("role")
        role = "user" if role_name is None else role_of(role_name)
        if role is None:
            node.child("role").fail(f"is {role_name!r}, not a role brainiac knows", ROLE_NAMES)
        session = node.opt_str("session") or stem
        at = node.iso_time("at")
        message_id = node.opt_str("id") or None
        position = places.get(session, 0)
        places[session] = position + 1
        out.message(session, None, position, message_id, role, said, at)
