"""The `brainiac` command's entry point: a running daemon answers before the CLI loads.

`context`, `search`, `check` and `hook user-prompt-submit` are what agents call on every prompt.
For those, this module reads the command line into the command's typed request (fast_argv.py:
`{"op": "context", "prompt": ..., "budget": ..., ...}`) with only the standard library loaded,
sends it to the daemon's socket (daemon_socket.py), and prints the daemon's answer, which the
daemon makes with the functions the CLI's commands call (answers.py). Everything else, and every
call the daemon does not answer (none runs, it is another configuration, a command line
fast_argv.py leaves to click, `--help`, the daemon dies mid-request), goes to the full CLI
(cli.root.main) in this process, which then gives the output, errors and exit status it always
gave.

With BRAINIAC_URL set, a hook asks a remote `brainiac serve --http` instead (remote_hook.py,
docs/remote.md), before any daemon is asked.

What this module reads itself is what it needs to find the socket: a leading `--vault PATH`
(or `--vault=PATH`), $BRAINIAC_VAULT, `vault` in ~/.config/brainiac/config.toml. Standard input
is read only for a command that reads it (`hook`, `check -`), and handed on to the CLI if the
CLI answers after all.
"""

from __future__ import annotations

import gc
import io
import os
import sys

from brainiac.interfaces import fast_argv
from brainiac.store.vault_choice import chosen_vault


def main() -> None:
    one_matrix_thread()
    argv = sys.argv[1:]
    _remote_hook(argv)
    flag, rest = _vault_option(argv)
    asked = fast_argv.request_for(rest)
    if asked is not None:
        # An agent's call, answered within a second, daemon or not. The cycle collector runs
        # often in one without the daemon (the imports, a stat of every file, the search) and
        # finds next to nothing to free; even a first index build inside such a call leaves
        # under a hundred cyclic objects and the same peak memory. Other commands (`run`,
        # `import`, the jobs) keep it.
        gc.disable()
        output = _ask(*asked, flag)
        if output is not None:
            _print(output)
    from brainiac.interfaces.cli import root

    root.main(daemon_asked=asked is not None)


def one_matrix_thread() -> None:
    """numpy's OpenBLAS starts a thread per core, which spin between the sentence model's matrix
    products (search/sentence_model.py): with two, a context takes the same wall time as with
    one and twice the CPU, on the core that the daemon's writer loop and its other answers need.
    To be called before anything imports numpy; a value the person
    set is kept."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def _remote_hook(argv: list[str]) -> None:
    """With BRAINIAC_URL set, `hook EVENT [--budget N]` asks that server (remote_hook.py) with
    the standard library alone, and exits. Any other command line goes on: the CLI asks the
    server too for a hook it parses (hook_commands.py), and says what is wrong with the rest."""
    if not os.environ.get("BRAINIAC_URL", "").strip():
        return  # before the import: urllib costs every other command line milliseconds
    from brainiac.interfaces import remote_hook

    url = remote_hook.configured()
    if url is None:
        return
    rest = _vault_option(argv)[1]  # the remote server serves its own vault
    if len(rest) < 2 or rest[0] != "hook" or rest[1] not in remote_hook.EVENTS:
        return
    event, options = rest[1], rest[2:]
    budget: int | None = None
    if event == "user-prompt-submit" and options[:1] == ["--budget"] and len(options) == 2:
        options, value = [], options[1]
    elif event == "user-prompt-submit" and len(options) == 1 and options[0][:9] == "--budget=":
        options, value = [], options[0][9:]
    else:
        value = ""
    if value:
        if not value.isdigit():
            return  # the CLI's to refuse, with its usual message
        budget = int(value)
    if options:
        return
    stdin = sys.stdin.read() if sys.stdin is not None else ""
    code = remote_hook.run(url, event, stdin, budget)
    os._exit(code)  # nothing else ran: the interpreter's teardown has nothing to do


def _vault_option(argv: list[str]) -> tuple[str | None, list[str]]:
    """A leading --vault's value (None: none) and the command line after it; any other global
    option stays in it, and makes it the CLI's to read."""
    if argv[:1] == ["--vault"] and len(argv) > 1:
        return argv[1], argv[2:]
    if argv[:1] and argv[0].startswith("--vault="):
        return argv[0].removeprefix("--vault="), argv[1:]
    return None, argv


def _ask(
    request: dict[str, object], stdin_field: str | None, flag: str | None
) -> tuple[list[list[object]], int] | None:
    """The daemon's answer (parts, exit status), or None: the CLI answers."""
    from brainiac.runtime import daemon_socket  # here: `--version` and the rest do not ask
    from brainiac.store import vault_key  # here: `--version` and the rest do not ask

    if request["op"] == "prompt-hook" and os.environ.get("BRAINIAC_URL", "").strip():
        return None  # a hook _remote_hook left: the CLI's, which asks that server
    try:
        vault = os.path.abspath(chosen_vault(flag))
        runtime = vault_key.runtime_folder(vault_key.vault_key(vault), os.environ)
    except (OSError, ValueError):  # a bad config.toml (TOMLDecodeError is a ValueError) ...
        return None  # ... is the CLI's to report
    if stdin_field is not None:
        stdin = _read_stdin()
        if stdin is None:
            return None
        request[stdin_field] = stdin
    answer = daemon_socket.ask(runtime, request)
    if "fallback" in answer:
        return None
    parts, code = answer.get("parts"), answer.get("exit")
    if not isinstance(parts, list) or not isinstance(code, int):
        return None
    if not all(_is_part(p) for p in parts):
        return None
    return parts, code


def _is_part(part: object) -> bool:
    return (
        isinstance(part, list)
        and len(part) == 2
        and isinstance(part[0], bool)
        and isinstance(part[1], str)
    )


def _read_stdin() -> str | None:
    """All of standard input, decoded as sys.stdin decodes it; sys.stdin is then a copy that
    reads it again, for the CLI should it answer after all. None when it cannot be read here."""
    stream = sys.stdin
    if stream is None or not hasattr(stream, "buffer"):
        return None
    copy = io.TextIOWrapper(
        io.BytesIO(stream.buffer.read()),
        encoding=stream.encoding,
        errors=stream.errors,
        # as Python makes sys.stdin: lines end at "\n", and "\r\n" is read as it is (POSIX)
        newline=None if os.name == "nt" else "\n",
    )
    sys.stdin = copy
    try:
        text = copy.read()
    except UnicodeDecodeError:  # the CLI meets the same bytes and says so its own way
        copy.seek(0)
        return None
    copy.seek(0)
    return text


def _print(output: tuple[list[list[object]], int]) -> None:
    """Write the answer as the CLI writes it (click.echo: each part flushed), and exit."""
    parts, code = output
    try:
        for to_stderr, text in parts:
            stream = sys.stderr if to_stderr else sys.stdout
            stream.write(str(text))
            stream.flush()
    except BrokenPipeError:  # the reader left: click's main exits 1 without a word, as here
        os._exit(1)
    # Nothing else ran: the interpreter's teardown has nothing to do but cost milliseconds.
    os._exit(code)
