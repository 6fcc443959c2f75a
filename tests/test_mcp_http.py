"""`brainiac serve --http` (docs/remote.md): the real server as a subprocess on loopback, the
official SDK's streamable HTTP client, and the hooks of an agent on another machine
(BRAINIAC_URL), against the server and against one that is down."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from brainiac import Memory
from brainiac.api.hooks import HookInputError
from brainiac.search import sentence_model
from brainiac.search.vector_store import VectorStore
from brainiac.store.locations import Locations
from conftest import run_cli
from helpers import JOBS_OFF, run_daemon, wait_for
from llm_standin import StandIn
from test_hooks import SAMPLE, _event
from test_llm_check import RESPONSE, _answer, _grey_cat_id
from test_llm_check import _remember as _remember_miso
from test_mcp import TOOLS, _structured, needs_mcp
from test_semantic import BIKE, DECOYS, FILLER

pytestmark = needs_mcp

START_DEADLINE_S = 60.0  # the server imports the SDK and opens the index on shared, busy cores
_SERVING = re.compile(r"serving .* at (http://\S+)/mcp ")


@contextlib.contextmanager
def serving(vault: Path, tmp_path: Path, *options: str) -> Iterator[str]:
    """`brainiac serve --http --port 0 OPTIONS` until the block ends; its base URL."""
    log = tmp_path / "serve.stderr"
    command = [sys.executable, "-m", "brainiac", "--vault", str(vault), "serve", "--http"]
    with open(log, "w", encoding="utf-8") as err:
        proc = subprocess.Popen(
            [*command, "--port", "0", *options],
            stdout=subprocess.DEVNULL,
            stderr=err,
            text=True,
        )
    try:
        wait_for(
            lambda: _SERVING.search(log.read_text()) is not None or proc.poll() is not None,
            "the server to listen",
            START_DEADLINE_S,
        )
        found = _SERVING.search(log.read_text())
        assert found, f"the server did not start:\n{log.read_text()}"
        yield found.group(1)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0, log.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)


def vault_bytes(vault: Path) -> dict[str, bytes]:
    return {str(p.relative_to(vault)): p.read_bytes() for p in vault.rglob("*") if p.is_file()}


async def _client_session(url: str, token: str | None) -> dict[str, Any]:
    """The SDK's client over HTTP: list the tools, remember, search and get a context."""
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    headers = {"Authorization": f"Bearer {token}"} if token else None
    async with (
        create_mcp_http_client(headers=headers) as http,
        streamable_http_client(f"{url}/mcp", http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        init = await session.initialize()
        assert init.server_info.name == "brainiac"
        tools = {t.name for t in (await session.list_tools()).tools}
        said = "The Zephyr launch moved to Tuesday March 3rd."
        remembered = _structured(await session.call_tool("remember", {"text": said}))
        hits = _structured(await session.call_tool("search", {"query": "Zephyr launch"}))
        ctx = _structured(
            await session.call_tool("context", {"prompt": "When is the Zephyr launch?"})
        )
        return {"tools": tools, "id": remembered["event_id"], "hits": hits, "context": ctx}


def test_the_sdk_client_lists_remembers_searches_and_gets_a_context_over_http(
    vault: Path, tmp_path: Path
) -> None:
    token_file = tmp_path / "secret" / "token"
    with serving(vault, tmp_path, "--token-file", str(token_file)) as url:
        assert token_file.stat().st_mode & 0o777 == 0o600  # written for us, the owner's alone
        token = token_file.read_text().strip()
        got = anyio.run(_client_session, url, token)
    assert set(got["tools"]) >= TOOLS
    assert any(h["event_id"] == got["id"] for h in got["hits"]["hits"])
    assert "Zephyr launch moved to Tuesday" in got["context"]["text"]
    assert "Zephyr launch moved to Tuesday" in (vault / "memory/short_term.md").read_text()


def _post(url: str, body: bytes, token: str | None) -> int:
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    try:
        with urllib.request.urlopen(urllib.request.Request(url, body, headers), timeout=30) as r:
            return int(r.status)
    except urllib.error.HTTPError as exc:
        assert exc.read() == b""  # a refusal says nothing about the server
        return int(exc.code)


def test_no_token_or_a_wrong_one_gets_401_and_writes_nothing(vault: Path, tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    transcript = tmp_path / SAMPLE.name
    shutil.copyfile(SAMPLE, transcript)
    before = vault_bytes(vault)
    remember = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "remember", "arguments": {"text": "Intruders were here."}},
        }
    ).encode()
    stop = json.dumps(
        {"event": _event("Stop", transcript), "name": "t.jsonl", "transcript": "e30K"}
    ).encode()
    with serving(vault, tmp_path, "--token-file", str(token_file)) as url:
        for token in (None, "", "wrong", token_file.read_text().strip() + "x"):
            assert _post(f"{url}/mcp", remember, token) == 401
            assert _post(f"{url}/hooks/stop", stop, token) == 401
        from mcp import MCPError

        with pytest.raises(ExceptionGroup) as refused:  # the SDK's client cannot even start
            anyio.run(_client_session, url, "wrong")
        assert refused.group_contains(MCPError, match="error response")
        # the agent's hooks with a wrong token: no context, one line, nothing written
        (tmp_path / "wrong").write_text("wrong\n")
        (tmp_path / "wrong").chmod(0o600)
        env = {"BRAINIAC_URL": url, "BRAINIAC_TOKEN_FILE": str(tmp_path / "wrong")}
        event = _event("UserPromptSubmit", transcript, prompt="What is in the memory?")
        hook = run_cli("hook", "user-prompt-submit", input=event, env=env)
        assert (hook.returncode, hook.stdout) == (1, "")
        assert "refused the token (401)" in hook.stderr and hook.stderr.count("\n") == 1
        hook = run_cli("hook", "stop", input=_event("Stop", transcript), env=env)
        assert hook.returncode == 1 and hook.stderr.count("\n") == 1
    assert vault_bytes(vault) == before  # byte for byte
    assert not list((tmp_path / "xdg" / "state").rglob("remote-transcripts"))


def test_a_bind_beyond_loopback_needs_a_token_file_and_the_owners_alone(
    vault: Path, tmp_path: Path
) -> None:
    done = run_cli("--vault", str(vault), "serve", "--http", "--host", "0.0.0.0", "--port", "0")
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "--token-file" in done.stderr
    token_file = tmp_path / "token"
    token_file.write_text("a-token\n")
    token_file.chmod(0o644)
    done = run_cli(
        "--vault", str(vault), "serve", "--http", "--port", "0", "--token-file", str(token_file)
    )
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert str(token_file) in done.stderr and f"chmod 600 {token_file}" in done.stderr


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_the_hooks_against_a_remote_server_and_one_that_is_down(
    vault: Path, tmp_path: Path
) -> None:
    agent = tmp_path / "agent"  # the agent's machine: its transcript and its repository
    (agent / "shop" / ".git").mkdir(parents=True)
    transcript = agent / SAMPLE.name
    lines = SAMPLE.read_text(encoding="utf-8").splitlines(keepends=True)
    transcript.write_text("".join(lines[: len(lines) // 2]), encoding="utf-8")
    stop = json.loads(_event("Stop", transcript))
    stop["cwd"] = str(agent / "shop")
    prompt = _event("UserPromptSubmit", transcript, prompt="When is the Orion launch?")
    run_cli("--vault", str(vault), "remember", "The Orion launch moved to 3 March.", check=True)
    before = vault_bytes(vault)

    down = {"BRAINIAC_URL": f"http://127.0.0.1:{_free_port()}"}
    hook = run_cli("hook", "user-prompt-submit", input=prompt, env=down)
    assert (hook.returncode, hook.stdout) == (1, "")
    assert hook.stderr.count("\n") == 1 and "cannot be reached" in hook.stderr
    hook = run_cli("hook", "stop", input=json.dumps(stop), env=down)
    assert (hook.returncode, hook.stdout) == (1, "")
    assert hook.stderr.count("\n") == 1 and "a later Stop sends the transcript" in hook.stderr
    assert vault_bytes(vault) == before

    shutil.copyfile(SAMPLE, transcript)  # the session went on while the server was down
    with serving(vault, tmp_path) as url:  # loopback without a token file: no token needed
        up = {"BRAINIAC_URL": f"{url}/mcp"}  # the MCP endpoint's URL names the server too
        hook = run_cli("--vault", "/elsewhere", "hook", "user-prompt-submit", input=prompt, env=up)
        assert hook.returncode == 0, hook.stderr
        assert "The Orion launch moved to 3 March." in hook.stdout
        assert "When is the Orion launch?" not in hook.stdout
        first = run_cli("hook", "stop", input=json.dumps(stop), env=up)
        again = run_cli("hook", "session-end", input=json.dumps(stop), env=up)
    assert first.returncode == 0 and again.returncode == 0, first.stderr + again.stderr
    counts = [int(p.stderr.split()[1]) for p in (first, again)]
    whole = run_cli("--vault", str(vault), "import", "--dry-run", "--json", str(SAMPLE))
    report = json.loads(whole.stdout)[0]
    # nothing lost: the Stop missed while down is made up by the next; nothing doubled
    assert counts[0] > 0 and counts[1] == 0 and report["new"] == 0
    assert report["duplicate"] == counts[0]
    # the project is the agent's repository, found on the agent's machine
    assert any(" [shop]: " in text.decode() for text in vault_bytes(vault).values())


BESIDE_DEADLINE_S = 60.0  # shared, busy cores; a server of one call at a time never answers


async def _beside_a_waiting_check(
    url: str, asked: threading.Event, released: threading.Event
) -> dict[str, Any]:
    """One session's `check` waits on the model; meanwhile a second session gets a context,
    remembers and searches. Those must be answered while the check is still in flight."""
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async with contextlib.AsyncExitStack() as stack:
        sessions: list[ClientSession] = []
        for _ in range(2):
            http = await stack.enter_async_context(create_mcp_http_client())
            read, write = await stack.enter_async_context(
                streamable_http_client(f"{url}/mcp", http_client=http)
            )
            session = await stack.enter_async_context(ClientSession(read, write))
            await session.initialize()
            sessions.append(session)
        checking, other = sessions
        got: dict[str, Any] = {}

        async def check() -> None:
            got["check"] = _structured(await checking.call_tool("check", {"text": RESPONSE}))

        async with anyio.create_task_group() as tg:
            tg.start_soon(check)
            assert await anyio.to_thread.run_sync(asked.wait, BESIDE_DEADLINE_S)
            with anyio.fail_after(BESIDE_DEADLINE_S):
                prompt = {"prompt": "What colour is the cat Miso?"}
                got["context"] = _structured(await other.call_tool("context", prompt))
                said = {"text": "The Orion launch moved to 3 March."}
                got["id"] = _structured(await other.call_tool("remember", said))["event_id"]
                query = {"query": "Orion launch"}
                got["hits"] = _structured(await other.call_tool("search", query))["hits"]
            got["check_pending"] = "check" not in got
            released.set()
        return got


def test_reads_and_a_write_are_answered_while_a_check_waits_on_the_model(
    vault: Path, tmp_path: Path
) -> None:
    """A call that takes long (here a check waiting on a slow model) holds up no other agent:
    a context and a search run beside it, a remember too, and nothing is lost or mixed."""
    _remember_miso(vault)
    asked, released = threading.Event(), threading.Event()

    def slow_model(body: dict[str, Any]) -> str:
        asked.set()
        released.wait(BESIDE_DEADLINE_S)
        return _answer(_grey_cat_id(body))

    with StandIn(slow_model) as model:
        (vault / ".brainiac/config.toml").write_text(
            f'[llm]\nbase_url = "{model.base_url}"\nmodel = "stand-in"\ntimeout_s = 120.0\n'
        )
        try:
            with serving(vault, tmp_path) as url:
                got = anyio.run(_beside_a_waiting_check, url, asked, released)
        finally:
            released.set()
    assert got["check_pending"]  # the others were answered while the check was in flight
    assert "grey cat called Miso" in got["context"]["text"]
    assert any(h["event_id"] == got["id"] for h in got["hits"])
    [conflict] = got["check"]["conflicts"]  # the model's answer, to the call that asked it
    assert conflict["correction"].endswith("The model's reading: Miso is grey.")
    assert "The Orion launch moved to 3 March." in (vault / "memory/short_term.md").read_text()


async def _found_after_a_hand_edit(url: str, note: Path) -> tuple[bool, bool]:
    """Whether a search finds a word before, and then after, a note with it is saved by hand
    while the server is in use; searched again until found, at most `START_DEADLINE_S`."""
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async with (
        create_mcp_http_client() as http,
        streamable_http_client(f"{url}/mcp", http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()

        async def found() -> bool:
            got = _structured(await session.call_tool("search", {"query": "quokkaberry"}))
            return any(h["path"] == "memory/long_term/orchard.md" for h in got["hits"])

        before = await found()
        note.write_text("---\ntitle: Orchard\n---\nThe quokkaberry bush fruits in May.\n")
        with anyio.move_on_after(START_DEADLINE_S):
            while not await found():
                await anyio.sleep(0.1)  # the server's walk picks the file up within a second
            return before, True
        return before, False


def test_a_server_alone_sees_a_note_saved_by_hand_while_agents_call_it(
    vault: Path, tmp_path: Path
) -> None:
    """Alone, the server reconciles the index on a thread of its own, not in a call: a note a
    person saves meanwhile is still found, within about a second."""
    with serving(vault, tmp_path) as url:
        before, after = anyio.run(
            _found_after_a_hand_edit, url, vault / "memory/long_term/orchard.md"
        )
    assert (before, after) == (False, True)


@pytest.mark.parametrize("budget", ["--budget=300", "--budget 300"])
def test_the_fast_path_and_the_cli_ask_the_same_server(
    vault: Path, tmp_path: Path, budget: str
) -> None:
    """entry.py answers `hook user-prompt-submit --budget N` with the standard library; any
    other spelling (`--debug` first) goes through the CLI, which asks the same server."""
    prompt = _event("UserPromptSubmit", tmp_path / "t.jsonl", prompt="When is the Orion launch?")
    run_cli("--vault", str(vault), "remember", "The Orion launch moved to 3 March.", check=True)
    with serving(vault, tmp_path) as url:
        env = {"BRAINIAC_URL": url}
        fast = run_cli("hook", "user-prompt-submit", *budget.split(), input=prompt, env=env)
        slow = run_cli(
            "--debug", "hook", "user-prompt-submit", *budget.split(), input=prompt, env=env
        )
    assert fast.returncode == slow.returncode == 0, fast.stderr + slow.stderr
    assert fast.stdout == slow.stdout and "Orion launch moved" in fast.stdout


def test_a_remote_stop_without_a_transcript_path_is_told_what_the_event_lacks(
    memory: Memory,
) -> None:
    from brainiac.interfaces import hook_routes

    event = json.dumps({"session_id": "s", "hook_event_name": "Stop", "cwd": "/x"})
    with pytest.raises(HookInputError, match="the event has no transcript_path"):
        hook_routes.import_transcript(memory, {"event": event, "project": ""}, "stop")


LONG_TERM = "## Relevant Long-Term Memory"
VECTORS_DEADLINE_S = 120.0  # the daemon loads the model and embeds, on shared, busy cores


def _saved(folder: Path) -> int:
    """How many vectors the daemon has committed in `folder` (read as the server reads them)."""
    store = VectorStore(folder, sentence_model.MODEL_ID, sentence_model.DIMENSIONS, read_only=True)
    store.open()
    return store.count


SNEAKERS = "Our dog Biscuit chewed through the new sneakers"


async def _contexts(url: str, prompts: list[str], remember: list[str]) -> list[str]:
    """The long-term part of a context for each prompt, over one SDK session; then `remember`
    each text in turn."""
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async with (
        streamable_http_client(f"{url}/mcp") as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        found = []
        for prompt in prompts:
            args = {"prompt": prompt, "budget": 300}
            text = _structured(await session.call_tool("context", args))["text"]
            found.append(text.split(LONG_TERM, 1)[1] if LONG_TERM in text else "")
        for text in remember:
            await session.call_tool("remember", {"text": text})
        return found


def test_beside_a_daemon_the_server_answers_by_meaning_from_the_daemons_vectors(
    tmp_path: Path,
) -> None:
    """Beside a daemon the server reads the vectors the daemon made (never writes them): a prompt
    that shares no word with the memory that answers it finds it, as the daemon's own context
    does; an event remembered over HTTP is found by its meaning once the daemon embedded it."""
    vault = tmp_path / "vault"
    run_cli("init", str(vault), check=True)
    for text in [BIKE, *DECOYS, *FILLER]:
        run_cli("--vault", str(vault), "remember", text, check=True)
    folder = Locations.for_vault(vault).vectors_dir
    every = 1 + len(DECOYS) + len(FILLER)
    # The memory jobs off: on busy cores the first promotion (due a few seconds after the start)
    # would move these events into a note at a moment the test does not choose.
    with run_daemon(vault, tmp_path / "daemon.log", JOBS_OFF):
        wait_for(lambda: _saved(folder) >= every, "the daemon's vectors", VECTORS_DEADLINE_S)
        with serving(vault, tmp_path) as url:
            newer = [f"Memo {i}: the {w} invoice is paid" for i, w in enumerate("abcdefghijkl")]
            [bike] = anyio.run(
                _contexts, url, ["How did I get to work on my bicycle?"], [SNEAKERS, *newer]
            )
            assert BIKE in bike  # no word shared: found by its meaning
            wait_for(
                lambda: _saved(folder) >= every + 1 + len(newer),
                "the daemon's vectors of the new events",
                VECTORS_DEADLINE_S,
            )
            [shoes] = anyio.run(_contexts, url, ["Which pet ruined my footwear?"], [])
            assert SNEAKERS in shoes
        assert "vectors" not in (tmp_path / "serve.stderr").read_text()
        # `brainiac mcp` (stdio) beside the daemon is the same Memory: meaning too
        stdio = anyio.run(_stdio_context, vault, tmp_path, "How did I get to work on my bicycle?")
        assert BIKE in stdio.split(LONG_TERM, 1)[1]


async def _stdio_context(vault: Path, tmp_path: Path, prompt: str) -> str:
    from mcp import ClientSession, StdioServerParameters, stdio_client

    args = ["-m", "brainiac", "--vault", str(vault), "mcp"]
    params = StdioServerParameters(command=sys.executable, args=args, env=dict(os.environ))
    with (tmp_path / "stdio.stderr").open("w", encoding="utf-8") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            got = await session.call_tool("context", {"prompt": prompt, "budget": 300})
            return str(_structured(got)["text"])


async def _context_in_time(url: str, prompt: str) -> str:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async with (
        streamable_http_client(f"{url}/mcp") as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        with anyio.fail_after(BESIDE_DEADLINE_S):
            got = _structured(await session.call_tool("context", {"prompt": prompt}))
        return str(got["text"])


def test_a_stuck_state_disk_holds_up_no_agents_context(vault: Path, tmp_path: Path) -> None:
    """Which notes a context used is written after the answer, on a thread of its own, as the
    daemon does: a state folder that does not take the write (here the access log is a pipe
    nobody reads yet, as a stalled network disk would be) does not hold the answer, and the
    record is written once it can be, nothing lost."""
    note = vault / "memory/long_term/orchard.md"
    note.write_text("---\ntitle: Orchard\n---\nThe quokkaberry bush fruits in May.\n")
    state = Locations.for_vault(vault).state
    state.mkdir(parents=True, exist_ok=True)
    log = state / "access.jsonl"
    os.mkfifo(log)
    with serving(vault, tmp_path) as url:
        text = anyio.run(_context_in_time, url, "When does the quokkaberry bush fruit?")
        assert "The quokkaberry bush fruits in May." in text
        reader = os.open(log, os.O_RDONLY | os.O_NONBLOCK)  # the disk takes the write now
        written = bytearray()
        try:
            wait_for(lambda: b"\n" in _read_into(reader, written), "the record of the notes used")
        finally:
            os.close(reader)
    assert "memory/long_term/orchard.md" in json.loads(written)["paths"]


def _read_into(fd: int, into: bytearray) -> bytearray:
    with contextlib.suppress(BlockingIOError):
        into += os.read(fd, 4096)
    return into
