"""The `brainiac` command's entry point (entry.py): with a daemon running, `context`, `search`,
`check` and the prompt hook are answered before click loads, the command line read into a typed
request (fast_argv.py, socket_requests.py) that the daemon answers with the functions the CLI's
commands call; whatever the daemon does not answer (wrong arguments, --help, another command, no
daemon, a daemon of another version, a daemon that dies mid-request) comes out of the CLI exactly
as it always did: the same stdout, stderr and exit status."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import click
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brainiac.api import socket_requests
from brainiac.api.answers import Answerer
from brainiac.api.memory import Memory
from brainiac.interfaces import fast_argv
from brainiac.interfaces.cli.root import cli
from brainiac.runtime import daemon_socket
from brainiac.runtime.bookkeeping import Bookkeeper
from brainiac.store.locations import Locations
from conftest import run_cli
from helpers import DEADLINE_S, wait_for
from test_socket import (
    CALLS,
    HOOK_EVENT,
    NOW,
    _answers,
    _cli,
    _serving,
    _socket_path,
    _stats,
    quiet_vault,
)


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    return quiet_vault(tmp_path)


# (arguments, stdin): command lines the daemon must leave to the CLI, each with what the CLI says.
WRONG: list[tuple[tuple[str, ...], str | None]] = [
    (("search",), None),  # a missing argument: usage error, status 2
    (("search", "deadline", "--limit", "0"), None),  # out of range
    (("search", "deadline", "--limit"), None),  # an option without its value
    (("context", "--bogus"), None),
    (("context", "--prompt", "a", "--prompt-file", "-"), "b"),  # both: the command says so
    (("context", "--now", "yesterday"), None),  # not ISO-8601
    (("context", "--budget", "-5", "--now", NOW), None),  # a BrainiacError: one line, status 2
    (("check", "The deadline is Friday.", "--now", "not a time"), None),
    (("hook", "user-prompt-submit"), "not json"),  # a hook's error: status 1, never 2
    (("hook", "user-prompt-submit"), json.dumps({"hook_event_name": "UserPromptSubmit"})),
    (("hook", "user-prompt-submit", "--budget", "many"), HOOK_EVENT),
    (("search", "--help"), None),
    (("hook", "user-prompt-submit", "-h"), HOOK_EVENT),
    (("hook", "nonsense"), None),
]
# A command line the CLI answers right (status 0) although the daemon runs: --write writes the
# working memory in this process.
ANSWERED_HERE: list[tuple[tuple[str, ...], str | None]] = [
    (("context", "--prompt", "Atlas", "--now", NOW, "--write"), None),
]
# --prompt-file names a file relative to the caller's folder: the thin client leaves it to click,
# and the CLI's command reads the file and asks the daemon with the prompt it holds.
ASKED_BY_THE_CLI = (("context", "--prompt-file", "-", "--now", NOW), "When is the Atlas deadline?")


def test_wrong_arguments_come_out_as_the_cli_says_them(vault: Path, tmp_path: Path) -> None:
    with _serving(vault, tmp_path):
        for args, stdin in WRONG + ANSWERED_HERE:
            before = _stats(vault)["stats"]
            via_entry = _cli(vault, args, stdin)
            after = _stats(vault)["stats"]
            assert after["answered"] == before["answered"], args  # the daemon left it
            assert after["failed"] == 0, args
            assert via_entry == _cli(vault, args, stdin, BRAINIAC_SOCKET="off"), args
            assert via_entry[1] or via_entry[0], args
        codes = [_cli(vault, args, stdin)[2] for args, stdin in WRONG]
        assert codes == [2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 2, 0, 0, 2]
        assert all(_cli(vault, a, s)[2] == 0 for a, s in ANSWERED_HERE)
        before = _stats(vault)["stats"]["answered"]
        via_cli = _cli(vault, *ASKED_BY_THE_CLI)
        assert _stats(vault)["stats"]["answered"] == before + 1
        assert via_cli == _cli(vault, *ASKED_BY_THE_CLI, BRAINIAC_SOCKET="off")
        assert via_cli[2] == 0 and "Atlas" in via_cli[0]


def test_standard_input_reaches_the_daemon_as_the_cli_reads_it(vault: Path, tmp_path: Path) -> None:
    """Carriage returns, a byte that is not UTF-8: read as sys.stdin reads them (its encoding
    and its error handler), whichever process answers."""
    text = "The Atlas deadline is on Friday 4 December.\r\nAnna said so.\rSo did Ben.\r\n"
    args = ("check", "-", "--json", "--now", NOW)
    with _serving(vault, tmp_path):
        before = _stats(vault)["stats"]["answered"]
        via_daemon = _cli(vault, args, text)
        assert _stats(vault)["stats"]["answered"] == before + 1
        assert via_daemon == _cli(vault, args, text, BRAINIAC_SOCKET="off")
        raw = [sys.executable, "-m", "brainiac", "--vault", str(vault), *args]
        done = [
            subprocess.run(raw, input=b"Anna \xff said so.\n", capture_output=True, env=env)
            for env in (os.environ, {**os.environ, "BRAINIAC_SOCKET": "off"})
        ]
    assert (done[0].stdout, done[0].stderr, done[0].returncode) == (
        done[1].stdout,
        done[1].stderr,
        done[1].returncode,
    )


def test_the_entry_point_reads_standard_input_as_sys_stdin_does_and_hands_it_on() -> None:
    data = b"one\r\ntwo\rthree \xff\n\n"
    plain = subprocess.run(
        [sys.executable, "-c", "import sys; print(ascii(sys.stdin.read()))"],
        input=data,
        capture_output=True,
        check=True,
    ).stdout
    read_twice = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from brainiac.interfaces import entry; "
            "print(ascii(entry._read_stdin())); print(ascii(sys.stdin.read()))",
        ],
        input=data,
        capture_output=True,
        check=True,
    ).stdout
    assert read_twice == plain + plain  # what the daemon gets, then what the CLI would read
    assert b"\\r" in plain


def test_without_a_daemon_the_entry_point_hands_everything_to_the_cli(vault: Path) -> None:
    for args, stdin in [*CALLS[::3], *WRONG[::4], ASKED_BY_THE_CLI]:
        assert _cli(vault, args, stdin) == _cli(vault, args, stdin, BRAINIAC_SOCKET="off"), args


def test_the_vault_is_found_as_the_cli_finds_it(
    vault: Path, tmp_path: Path, xdg_dirs: dict[str, str]
) -> None:
    """--vault PATH, --vault=PATH, a relative path, $BRAINIAC_VAULT and `vault` in the user's
    config.toml all reach the daemon of that vault."""
    args = ("search", "deadline")
    expected = _cli(vault, args, None, BRAINIAC_SOCKET="off")
    config = Path(xdg_dirs["XDG_CONFIG_HOME"]) / "brainiac" / "config.toml"
    with _serving(vault, tmp_path):
        for argv, env, cwd in (
            (["--vault", str(vault)], {}, None),
            ([f"--vault={vault}"], {}, None),
            (["--vault", "vault"], {}, tmp_path),
            ([], {"BRAINIAC_VAULT": str(vault)}, None),
            ([], {}, None),  # from config.toml, written below
        ):
            if not argv and not env:
                config.parent.mkdir(parents=True)
                config.write_text(f'vault = "{vault}"\n', encoding="utf-8")
            before = _stats(vault)["stats"]["answered"]
            done = subprocess.run(
                [sys.executable, "-m", "brainiac", *argv, *args],
                capture_output=True,
                text=True,
                env={**os.environ, **env},
                cwd=cwd,
                timeout=60,
            )
            assert (done.stdout, done.stderr, done.returncode) == expected, argv
            assert _stats(vault)["stats"]["answered"] == before + 1, (argv, env)


def test_a_daemon_dying_mid_request_leaves_the_answer_to_the_cli(
    vault: Path, tmp_path: Path
) -> None:
    """The daemon is killed (SIGKILL, as a crash) after the hook's standard input reached it and
    before it answered: the CLI answers with the same input, and says what it always says."""
    log = (tmp_path / "daemon.log").open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "brainiac", "--vault", str(vault), "run"],
        env={**os.environ, "BRAINIAC_FAULT": "socket.answering"},
        stdout=subprocess.DEVNULL,
        stderr=log,
    )
    try:
        wait_for(lambda: _answers(vault), "the daemon's socket")
        args, stdin = CALLS[8]  # the prompt hook: its stdin is read before the daemon dies
        died = _cli(vault, args, stdin)
        assert proc.wait(timeout=DEADLINE_S) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        log.close()
    assert died == _cli(vault, args, stdin, BRAINIAC_SOCKET="off")
    assert died[2] == 0 and "Atlas" in died[0]
    # the socket file is left behind; the next call passes over it the same way
    checked = _cli(vault, *CALLS[7])
    assert checked == _cli(vault, *CALLS[7], BRAINIAC_SOCKET="off")


def test_the_daemon_records_the_notes_a_context_used_after_answering(
    vault: Path, tmp_path: Path
) -> None:
    last = Locations.for_vault(vault).state / "last_context.json"
    with _serving(vault, tmp_path):
        before = _stats(vault)["stats"]["answered"]
        out, _, code = _cli(vault, ("context", "--prompt", "Anna Atlas review"), None)
        assert code == 0 and "Atlas" in out
        assert _stats(vault)["stats"]["answered"] == before + 1
        wait_for(last.exists, "last_context.json")
        record = json.loads(last.read_text(encoding="utf-8"))
    assert record["notes"] and all(n.startswith("memory/long_term/") for n in record["notes"])
    # `feedback` finds it, as after a context made in the CLI's own process
    done = run_cli("--vault", str(vault), "feedback", "1")
    assert done.returncode == 0, done.stderr


def test_the_bookkeeper_finishes_what_it_holds_and_then_works_inline() -> None:
    keeper = Bookkeeper()
    keeper.start()
    release = threading.Event()
    done: list[str] = []

    def first() -> None:
        release.wait(DEADLINE_S)
        done.append("first")

    keeper.later(first)
    keeper.later(lambda: done.append("second"))
    keeper.later(lambda: 1 / 0)  # a failure is logged; the rest still runs
    keeper.later(lambda: done.append("third"))
    assert done == []  # held: the first waits
    release.set()
    keeper.stop()
    assert done == ["first", "second", "third"]
    keeper.later(lambda: done.append("after stop"))
    assert done[-1] == "after stop"  # no thread any more: done by the caller


def test_other_commands_never_ask_the_daemon(vault: Path, tmp_path: Path) -> None:
    with _serving(vault, tmp_path):
        before = _stats(vault)["stats"]
        for args in (("--version",), ("--help",), ("status", "--json"), ("--debug", "search", "x")):
            done = run_cli("--vault", str(vault), *args)
            assert done.returncode == 0, done.stderr
        after = _stats(vault)["stats"]
    # --debug: the CLI's own process asks, over the request it parsed itself (one answer)
    assert after == {**before, "answered": before["answered"] + 1}


def test_the_daemon_reads_typed_requests_and_never_a_command_line(
    vault: Path, tmp_path: Path
) -> None:
    """A command line sent as such (the first protocol's `argv`, or with this one's version) is
    refused with one line and nothing runs, as is an op the daemon does not answer, a field it
    does not know, or a value of the wrong type; a client of another version is logged once."""
    short_term = vault / "memory" / "short_term.md"
    before_text = short_term.read_text(encoding="utf-8")
    v = daemon_socket.PROTOCOL
    refused: list[tuple[dict[str, object], str]] = [
        ({"v": 1, "argv": ["search", "Atlas"], "stdin": None}, f"protocol 1 is not {v}"),
        ({"v": 1, "argv": ["remember", "must not be written"], "stdin": "x"}, "protocol 1"),
        ({"v": v, "argv": ["search", "Atlas"]}, "unknown op None; the daemon answers check, "),
        ({"v": v, "op": "remember", "text": "must not be written"}, "unknown op 'remember'"),
        ({"v": v, "op": "init", "path": str(tmp_path / "elsewhere")}, "unknown op 'init'"),
        ({"v": v, "op": "search", "argv": ["x"]}, "search: unknown field 'argv'; its fields"),
        ({"v": v, "op": "context", "write": True}, "context: unknown field 'write'"),
        ({"v": v, "op": "search"}, "search: the field 'query' is missing"),
        ({"v": v, "op": "search", "query": "x", "limit": 0}, "search: limit 0 is not in 1-1000"),
        ({"v": v, "op": "search", "query": "x", "limit": True}, "limit must be an integer, "),
        ({"v": v, "op": "context", "budget": "400"}, "budget must be an integer or null, not"),
        ({"v": v, "op": "check", "text": None}, "check: text must be a string, not NoneType"),
        ({"v": v, "op": "prompt-hook", "stdin": ["x"]}, "stdin must be a string, not list"),
    ]
    with _serving(vault, tmp_path):
        path = _socket_path(vault)
        for request, says in refused:
            answer = daemon_socket.exchange(path, {"env": daemon_socket.relevant_env(), **request})
            assert says in answer.get("error", ""), (request, answer)
            assert len(answer["error"].splitlines()) == 1 and "parts" not in answer
        stats = _stats(vault)["stats"]
    assert stats["answered"] == 0 and stats["failed"] == 0
    assert stats["malformed"] == len(refused)
    assert short_term.read_text(encoding="utf-8") == before_text
    assert not (tmp_path / "elsewhere").exists()
    log = (tmp_path / "daemon.log").read_text(encoding="utf-8")
    assert log.count("a client asked in protocol 1, and this daemon speaks 2") == 1, log


def test_beside_a_daemon_of_another_protocol_the_cli_answers_and_says_why(
    vault: Path, tmp_path: Path
) -> None:
    """A daemon of another version (here: one that answers every request as a daemon of the
    first protocol does) is not taken at its word: the CLI answers, byte for byte as without a
    daemon, and --debug names both versions."""
    path = _socket_path(vault)
    Path(path).parent.mkdir(parents=True, mode=0o700, exist_ok=True)
    address, fd = daemon_socket.connectable(path)
    old = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old.bind(address)
    old.listen(8)
    if fd is not None:
        os.close(fd)
    old.settimeout(0.1)  # so that the thread sees `done` between two calls
    seen: list[dict[str, object]] = []
    done = threading.Event()

    def answer_as_protocol_1() -> None:
        while not done.is_set():
            with contextlib.suppress(TimeoutError):
                conn, _ = old.accept()
                conn.settimeout(DEADLINE_S)
                with conn:
                    line = daemon_socket.read_line(conn, 1 << 20, time.monotonic() + DEADLINE_S)
                    assert isinstance(line, bytes)
                    seen.append(json.loads(line))
                    conn.sendall(b'{"v": 1, "error": "protocol 2 is not 1"}\n')

    server = threading.Thread(target=answer_as_protocol_1, daemon=True)
    server.start()
    try:
        for args, stdin in (CALLS[0], CALLS[8]):
            expected = _cli(vault, args, stdin, BRAINIAC_SOCKET="off")
            assert _cli(vault, args, stdin) == expected, args
        debug = run_cli("--debug", "--vault", str(vault), *CALLS[3][0])
    finally:
        done.set()
        server.join(timeout=DEADLINE_S)
        old.close()
    assert "search: in this process: the daemon speaks protocol 1, not 2" in debug.stderr
    assert [r["op"] for r in seen] == ["context", "prompt-hook", "search"]
    assert all(r["v"] == daemon_socket.PROTOCOL for r in seen)


# Runs the entry point as the console script does, and says on stderr, as the process ends,
# whether the cycle collector was on (the fast exit skips atexit, so os._exit is wrapped).
_GC_PROBE = (
    "import gc, os, sys\n"
    "end = os._exit\n"
    "def probe(code):\n"
    "    sys.stderr.write(f'gc-enabled={gc.isenabled()}\\n'); sys.stderr.flush(); end(code)\n"
    "os._exit = probe\n"
    "sys.argv[0] = 'brainiac'\n"
    "from brainiac.interfaces.entry import main\n"
    "main()\n"
)


def test_the_agents_calls_run_without_the_cycle_collector_and_others_keep_it(vault: Path) -> None:
    def probe(*args: str) -> tuple[str, str]:
        done = subprocess.run(
            [sys.executable, "-c", _GC_PROBE, "--vault", str(vault), *args],
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "BRAINIAC_SOCKET": "off"},
        )
        assert done.returncode == 0, done.stderr
        return done.stdout, done.stderr.strip().splitlines()[-1]

    out, gc_state = probe("context", "--prompt", "Anna Berg", "--budget", "800")
    assert "## User Prompt" in out and gc_state == "gc-enabled=False"
    out, gc_state = probe("search", "Anna")
    assert "anna-berg" in out and gc_state == "gc-enabled=False"
    out, gc_state = probe("status")
    assert gc_state == "gc-enabled=True"


# The commands the thin client reads, by their paths in the `brainiac` group.
ANSWERED = [("search",), ("context",), ("check",), ("hook", "user-prompt-submit")]


def _command(path: tuple[str, ...]) -> click.Command:
    command: click.Command = cli
    for name in path:
        assert isinstance(command, click.Group)
        found = command.commands[name]
        command = found
    return command


def _clicks_request(args: list[str]) -> socket_requests.Request | None:
    """The request the CLI's command sends for `args` once click has parsed them (standard
    input standing as "<stdin>"), or None: click refuses them, or the command keeps them."""
    path = next((p for p in ANSWERED if tuple(args[: len(p)]) == p), None)
    if path is None:
        return None
    try:
        p = _command(path).make_context("brainiac", list(args[len(path) :])).params
    except (click.ClickException, click.exceptions.Exit):
        return None
    if path == ("search",):
        return socket_requests.SearchRequest(p["query"], p["limit"], p["as_json"], p["project"])
    if path == ("context",):
        if p["prompt_file"] is not None or p["write"]:
            return None
        return socket_requests.ContextRequest(
            p["prompt"], p["budget"], p["now"], p["as_json"], p["project"]
        )
    if path == ("check",):
        text = "<stdin>" if p["text"] in (None, "-") else p["text"]
        return socket_requests.CheckRequest(text, p["now"], p["as_json"], p["project"])
    return socket_requests.PromptHookRequest("<stdin>", p["budget"])


def _thin_clients_request(args: list[str]) -> socket_requests.Request | None:
    read = fast_argv.request_for(args)
    if read is None:
        return None
    request, stdin_field = read
    if stdin_field is not None:
        request = {**request, stdin_field: "<stdin>"}
    return socket_requests.parse(request)


COMMAND_LINES = [
    *(list(args) for args, _ in CALLS),
    ["search", "--limit=3", "x"],
    ["search", "x", "--limit", " 7 "],
    ["search", "x", "--limit", "+5"],
    ["search", "x", "--limit", "1_0"],
    ["search", "x", "--limit", "\u0663"],  # an Arabic-Indic three: int() and click take it
    ["search", "x", "--limit", "0"],
    ["search", "x", "--limit", "1001"],
    ["search", "x", "--limit", "2.5"],
    ["search", "x", "--limit"],
    ["search", "-x"],
    ["search", "--", "-x"],
    ["search", "-"],
    ["search", "x", "y"],
    ["search"],
    ["search", "x", "--json", "--json"],
    ["search", "x", "--json=1"],
    ["search", "x", "--project", "a", "--project", "b"],
    ["search", "x", "--proj", "a"],
    ["search", "x", "-h"],
    ["context", "--prompt", "--json"],
    ["context", "--prompt=", "--budget", "-5"],
    ["context", "--prompt", "-"],
    ["context", "--prompt", "a=b", "--now=2026-11-24T10:00"],
    ["context", "extra"],
    ["context", "--budget", "1.5"],
    ["context", "--write"],
    ["context", "--prompt-file", "notes.txt"],
    ["context", "--help"],
    ["check"],
    ["check", "-"],
    ["check", "a", "b"],
    ["check", "--now", "not a time", "The deadline is Friday."],
    ["check", "-", "--json"],
    ["check", "--json", "--", "-"],
    ["check", "--project=", "-"],
    ["check", "x", "--project", "a", "--project", "b"],
    ["hook", "user-prompt-submit", "--budget", "5"],
    ["hook", "user-prompt-submit", "--budget"],
    ["hook", "user-prompt-submit", "x"],
    ["hook", "user-prompt-submit", "-h"],
    ["hook", "stop"],
    ["remember", "x"],
    ["--debug", "search", "x"],
]


def test_the_thin_client_reads_a_command_line_as_click_reads_it() -> None:
    """Wherever the thin client makes a request of a command line, it is the request the CLI's
    command makes once click has parsed the same line; every line of CALLS is read."""
    read = 0
    for args in COMMAND_LINES:
        thin = _thin_clients_request(args)
        if thin is not None:
            assert thin == _clicks_request(args), args
            read += 1
    assert read >= len(CALLS) + 12
    assert all(_thin_clients_request(list(args)) is not None for args, _ in CALLS)


def test_every_option_of_the_answered_commands_is_a_field_or_the_clis_own() -> None:
    """An option added to one of these commands must reach the daemon (a field of its request,
    read by the thin client) or be one the CLI keeps; and a field left out of a request means
    what the option's default means."""
    for path, op in zip(ANSWERED, ("search", "context", "check", "prompt-hook"), strict=True):
        fields = {f.name: f for f in dataclasses.fields(socket_requests.OPS[op])}
        read, kept = fast_argv.options(path), fast_argv.CLI_OWN[path]
        options = [p for p in _command(path).params if isinstance(p, click.Option)]
        every = {name for p in options for name in p.opts} | {"-h", "--help"}
        assert set(read) | set(kept) == every, path
        bare = ["x"] if path == ("search",) else []
        defaults = _command(path).make_context("brainiac", bare).params
        for option in options:
            if option.opts[0] in read:
                field = fields[read[option.opts[0]][0]]
                assert field.default == defaults[option.name or ""], (path, option.opts)


def test_a_typed_request_of_each_op_is_answered_as_the_cli_answers_in_process(
    vault: Path,
) -> None:
    """The daemon's answer to each command line of CALLS, made in this process from its typed
    request by the daemon's Answerer, is the CLI's own output, byte for byte."""
    with Memory(vault, meaning=False) as memory:
        answerer = Answerer(memory)
        for args, stdin in CALLS:
            request, stdin_field = fast_argv.request_for(list(args)) or ({}, None)
            if stdin_field is not None:
                request[stdin_field] = stdin
            output = answerer.answer(socket_requests.parse(request))
            said = tuple("".join(t for err, t in output.parts if err == e) for e in (False, True))
            done = run_cli(
                "--vault",
                str(vault),
                *args,
                input=stdin,
                env={"BRAINIAC_SOCKET": "off"},
                in_process=True,
            )
            assert (*said, output.exit) == (done.stdout, done.stderr, done.returncode), args


_TOKENS = [
    *("--limit", "--limit=7", "--project", "--project=", "--json", "--json=", "--prompt"),
    *("--prompt=a b", "--budget", "--budget=-5", "--now", "--now=x", "--write", "--prompt-file"),
    *("-h", "--help", "--", "-", "-x", "x", "", "7", " 7", "0", "1001", "2.5", "=", "a=b"),
]


@settings(max_examples=400, deadline=None)
@given(
    st.sampled_from([["search"], ["context"], ["check"], ["hook", "user-prompt-submit"]]),
    st.lists(st.sampled_from(_TOKENS), max_size=6),
)
def test_any_command_line_is_read_by_the_thin_client_as_click_reads_it_or_left_to_it(
    path: list[str], rest: list[str]
) -> None:
    thin = _thin_clients_request([*path, *rest])
    assert thin is None or thin == _clicks_request([*path, *rest]), rest
