"""The thin client's reading of the four command lines the daemon answers, before click loads.

`context`, `search`, `check` and `hook user-prompt-submit` become the typed requests of
api/socket_requests.py (`{"op": "context", "prompt": ..., "budget": ..., ...}`), read here with
the standard library alone, as click reads them: options anywhere among the arguments, `--name
VALUE` or `--name=VALUE`, the value of an option whatever it looks like, the last of a repeated
option, a flag without a value, integers as `int()` reads them. A command line this does not
read that way (an unknown or acting option such as --help, --prompt-file or --write, `--`, a
value out of range, an argument too many or missing) is no request: the CLI answers it, with
its own output, errors and exit status. tests/test_entry.py checks that wherever this reads a
command line, click reads the same arguments.

Only the standard library: every agent hook imports this module (entry.py).
"""

from __future__ import annotations

# An option's kind: what follows it on the command line.
_TEXT = "text"
_INT = "int"
_FLAG = "flag"
# (command path) -> (op, positional fields in order, how many of them are required,
# {option: (field, kind)}, the field standard input fills when the positional is `-` or absent).
_COMMANDS: dict[
    tuple[str, ...], tuple[str, tuple[str, ...], int, dict[str, tuple[str, str]], str | None]
] = {
    ("search",): (
        "search",
        ("query",),
        1,
        {"--limit": ("limit", _INT), "--project": ("project", _TEXT), "--json": ("json", _FLAG)},
        None,
    ),
    ("context",): (
        "context",
        (),
        0,
        {
            "--prompt": ("prompt", _TEXT),
            "--budget": ("budget", _INT),
            "--now": ("now", _TEXT),
            "--project": ("project", _TEXT),
            "--json": ("json", _FLAG),
        },
        None,
    ),
    ("check",): (
        "check",
        ("text",),
        0,
        {"--now": ("now", _TEXT), "--project": ("project", _TEXT), "--json": ("json", _FLAG)},
        "text",
    ),
    ("hook", "user-prompt-submit"): (
        "prompt-hook",
        (),
        0,
        {"--budget": ("budget", _INT)},
        "stdin",
    ),
}
# A value the request refuses (socket_requests.SearchRequest): the CLI says so, its own way.
_RANGES = {("search", "limit"): (1, 1000)}

# The options each command has that the daemon never answers: they act while they are read
# (help prints, --prompt-file opens a file relative to the caller's folder) or write in the
# caller's process (--write). tests/test_entry.py checks these and the fields above are every
# option the CLI's commands have.
CLI_OWN = {
    ("search",): ("--help", "-h"),
    ("context",): ("--help", "-h", "--prompt-file", "--write"),
    ("check",): ("--help", "-h"),
    ("hook", "user-prompt-submit"): ("--help", "-h"),
}


def options(path: tuple[str, ...]) -> dict[str, tuple[str, str]]:
    """The options read for the command at `path`: {option: (field, kind)}."""
    return dict(_COMMANDS[path][3])


def request_for(args: list[str]) -> tuple[dict[str, object], str | None] | None:
    """The request for `args` (the command line after the global options), and the field that
    standard input fills (None: none); None when the CLI answers it."""
    path = tuple(args[:2]) if args[:1] == ["hook"] else tuple(args[:1])
    spec = _COMMANDS.get(path)
    if spec is None:
        return None
    op, positional, required, known, stdin_field = spec
    request: dict[str, object] = {"op": op}
    given: list[str] = []
    rest = args[len(path) :]
    i = 0
    while i < len(rest):
        arg = rest[i]
        i += 1
        if arg[:1] != "-" or arg == "-":
            given.append(arg)
            continue
        name, has_value, value = arg.partition("=")
        if name not in known:  # a short option, --help, --, or one the CLI keeps: the CLI's
            return None
        field, kind = known[name]
        if kind == _FLAG:
            if has_value:
                return None  # click: "Option '--json' does not take a value"
            request[field] = True
            continue
        if not has_value:
            if i >= len(rest):
                return None  # click: "Option '--budget' requires an argument"
            value = rest[i]
            i += 1
        parsed = _value(op, field, kind, value)
        if parsed is None:
            return None
        request[field] = parsed
    if not required <= len(given) <= len(positional):
        return None
    request.update(zip(positional, given, strict=False))
    if stdin_field is not None and request.get(stdin_field, "-") == "-":
        return request, stdin_field
    return request, None


def _value(op: str, field: str, kind: str, value: str) -> object:
    """An option's value as click converts it; None when click refuses it."""
    if kind == _TEXT:
        return value
    try:
        number = int(value)
    except ValueError:
        return None
    low, high = _RANGES.get((op, field), (number, number))
    return number if low <= number <= high else None
