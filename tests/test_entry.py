"""The `brainiac` command's entry point (entry.py): with a daemon running, `context`, `search`,
`check` and the prompt hook are answered before click loads, by the daemon parsing the command
line with the real click commands; whatever the daemon does not answer (wrong arguments, --help,
another command, no daemon, a daemon that dies mid-request) comes out of the CLI exactly as it
always did: the same stdout, stderr and exit status."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

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
# Command lines the CLI answers right (status 0) although the daemon runs: --prompt-file names a
# file relative to the caller's folder, --write writes the working memory in this process.
ANSWERED_HERE: list[tuple[tuple[str, ...], str | None]] = [
    (("context", "--prompt-file", "-", "--now", NOW), "When is the Atlas deadline?"),
    (("context", "--prompt", "Atlas", "--now", NOW, "--write"), None),
]


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
    for args, stdin in [*CALLS[::3], *WRONG[::4], *ANSWERED_HERE[:1]]:
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


def test_the_daemon_runs_no_other_command_and_reads_no_malformed_command_line(
    vault: Path, tmp_path: Path
) -> None:
    """Only the four commands run in the daemon: a command line for any other (which would write,
    or start something) is left to the client, and nothing changes."""
    short_term = vault / "memory" / "short_term.md"
    before_text = short_term.read_text(encoding="utf-8")
    with _serving(vault, tmp_path):
        path = _socket_path(vault)
        for argv in (
            ["--vault", str(vault), "remember", "the daemon must not write this"],
            ["remember", "the daemon must not write this"],
            ["init", str(tmp_path / "elsewhere")],
            ["hook", "stop"],
            ["run"],
            ["context", "--prompt", "x", "--write"],
        ):
            answer = daemon_socket.exchange(
                path, {"v": 1, "argv": argv, "stdin": "x", "env": daemon_socket.relevant_env()}
            )
            assert "fallback" in answer and "parts" not in answer, (argv, answer)
        for request, says in (
            ({"argv": "search x"}, "argv must be a list of strings"),
            ({"argv": ["search", 3]}, "argv must be a list of strings"),
            ({"argv": ["search", "x"], "stdin": 3}, "stdin must be a string or null"),
            ({"argv": ["search", "x"], "env": []}, "env must be a JSON object"),
        ):
            answer = daemon_socket.exchange(path, {"v": 1, "env": {}, **request})
            assert says in answer.get("error", ""), (request, answer)
        stats = _stats(vault)["stats"]
    assert stats["answered"] == 0 and stats["failed"] == 0 and stats["malformed"] == 4
    assert short_term.read_text(encoding="utf-8") == before_text
    assert not (tmp_path / "elsewhere").exists()


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
