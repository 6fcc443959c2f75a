"""The requests the running daemon answers over its socket: one typed request per command.

A request names its op and carries the command's arguments as the CLI parsed them, each a field
of its own, never a command line for the daemon to parse:

    {"v": 2, "op": "context", "prompt": "When is the review?", "budget": 2000, "now": null,
     "json": false, "project": "atlas", "env": {...}}

(`v` is runtime/daemon_socket.py's PROTOCOL, `env` the variables the answer depends on; both are
the socket's, not the op's.) Two clients build them: the thin client (interfaces/fast_argv.py,
before click loads) and the CLI's own commands (cli/answering.py `ask_daemon`, after click
parsed them); the daemon reads one with `parse` and answers it with the functions the CLI's
commands call (answers.py, `Answerer`). A field left out takes the CLI's default, so the two
clients' requests for one command line are equal.

`parse` refuses, with one line naming the op, the field and what it must be, a request that is
not one of these: an unknown op, an unknown or missing field, a value of the wrong type. An
option the CLI adds to one of these commands is a field added here (tests/test_entry.py checks
that every option of the four commands is a field, or one the CLI keeps for itself).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

# The fields of a request that are the socket's, not the op's (daemon_socket.py adds them).
ENVELOPE = ("v", "op", "env")
MAX_LIMIT = 1000  # `search --limit`: click.IntRange(1, 1000) in cli/memory_commands.py


class BadRequest(ValueError):
    """A request that is not one the daemon answers; the message is one line saying why."""


@dataclass(frozen=True)
class SearchRequest:
    """`brainiac search QUERY [--limit N] [--project NAME] [--json]`."""

    OP: ClassVar[str] = "search"
    query: str
    limit: int = 10
    json: bool = False
    project: str | None = None

    def __post_init__(self) -> None:
        if not 1 <= self.limit <= MAX_LIMIT:
            raise BadRequest(f"search: limit {self.limit} is not in 1-{MAX_LIMIT}")


@dataclass(frozen=True)
class ContextRequest:
    """`brainiac context [--prompt TEXT] [--budget N] [--now ISO] [--project NAME] [--json]`;
    `now` as given on the command line: the daemon reads it as the CLI does."""

    OP: ClassVar[str] = "context"
    prompt: str | None = None
    budget: int | None = None
    now: str | None = None
    json: bool = False
    project: str | None = None


@dataclass(frozen=True)
class CheckRequest:
    """`brainiac check TEXT [--now ISO] [--project NAME] [--json]`, TEXT read from standard
    input already when the command line said `-` or nothing."""

    OP: ClassVar[str] = "check"
    text: str
    now: str | None = None
    json: bool = False
    project: str | None = None


@dataclass(frozen=True)
class PromptHookRequest:
    """`brainiac hook user-prompt-submit [--budget N]`, with the agent's event JSON as read
    from standard input."""

    OP: ClassVar[str] = "prompt-hook"
    stdin: str
    budget: int | None = None


Request = SearchRequest | ContextRequest | CheckRequest | PromptHookRequest
OPS: Mapping[str, type[Request]] = {
    cls.OP: cls for cls in (SearchRequest, ContextRequest, CheckRequest, PromptHookRequest)
}

# A field's annotation -> the JSON values it takes (a bool is not an int here, as in click).
_TAKES: Mapping[str, tuple[type, ...]] = {
    "str": (str,),
    "str | None": (str, type(None)),
    "int": (int,),
    "int | None": (int, type(None)),
    "bool": (bool,),
}
_SAID = {
    "str": "a string",
    "str | None": "a string or null",
    "int": "an integer",
    "int | None": "an integer or null",
    "bool": "true or false",
}


def parse(data: Mapping[str, object]) -> Request:
    """The typed request `data` is (the envelope's fields ignored); BadRequest, one line, when
    it is none."""
    op = data.get("op")
    cls = OPS.get(op) if isinstance(op, str) else None
    if cls is None:
        raise BadRequest(f"unknown op {op!r}; the daemon answers {', '.join(sorted(OPS))}")
    fields = {f.name: f for f in dataclasses.fields(cls)}
    given = {k: v for k, v in data.items() if k not in ENVELOPE}
    unknown = sorted(given.keys() - fields.keys())
    if unknown:
        raise BadRequest(f"{op}: unknown field {unknown[0]!r}; its fields are {', '.join(fields)}")
    for name, field in fields.items():
        if name not in given:
            if field.default is dataclasses.MISSING:
                raise BadRequest(f"{op}: the field {name!r} is missing")
            continue
        value, kind = given[name], str(field.type)
        wrong_bool = isinstance(value, bool) and bool not in _TAKES[kind]
        if wrong_bool or not isinstance(value, _TAKES[kind]):
            raise BadRequest(
                f"{op}: {name} must be {_SAID[kind]}, not {type(value).__name__} {value!r:.40}"
            )
    return cls(**given)  # type: ignore[arg-type]


def as_json(request: Request) -> dict[str, object]:
    """The request on the wire, but for the envelope (daemon_socket.ask adds it)."""
    return {"op": request.OP, **dataclasses.asdict(request)}
