"""`brainiac mcp` end to end: the real command in a subprocess, driven by the MCP SDK's own stdio
client, as Claude Desktop, Claude Code or Cursor would drive it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from conftest import run_cli

try:
    import mcp  # noqa: F401

    HAVE_MCP = True
except ImportError:
    HAVE_MCP = False

needs_mcp = pytest.mark.skipif(
    not HAVE_MCP, reason="the mcp SDK is missing; install the test extra: pip install -e '.[test]'"
)

TOOLS = {
    "remember",
    "search",
    "context",
    "check",
    "feedback",
    "run_job",
    "list_notes",
    "update_note",
    "forget",
}
MISSING_SDK = (
    "brainiac: the MCP server needs the mcp package; install it with pip install 'brainiac[mcp]'"
)


def _server_args(vault: Path, *extra: str) -> list[str]:
    return ["-m", "brainiac", *extra, "--vault", str(vault), "mcp"]


def _private_material(vault: Path, tmp_path: Path) -> None:
    """A note marked private, a private folder, and a symlink that leads out of the vault."""
    (vault / "memory/long_term/secret.md").write_text(
        "---\ntitle: Secret\nprivate: true\n---\nThe safe code is 4711.\n", encoding="utf-8"
    )
    config = vault / ".brainiac/config.toml"
    text = config.read_text(encoding="utf-8")
    assert "# private_folders = []" in text
    config.write_text(
        text.replace("# private_folders = []", 'private_folders = ["journal"]'), encoding="utf-8"
    )
    (vault / "journal").mkdir()
    (vault / "journal/diary.md").write_text("# Diary\nDear diary.\n", encoding="utf-8")
    outside = tmp_path / "outside.md"
    outside.write_text("# Outside\nNot part of the vault.\n", encoding="utf-8")
    (vault / "memory/long_term/escape.md").symlink_to(outside)
    # A symlink inside the vault into the private folder is private too.
    (vault / "memory/long_term/diary-link.md").symlink_to(vault / "journal/diary.md")
    (vault / "memory/long_term/settings.md").symlink_to(vault / ".brainiac/config.toml")
    # Whether a note with unreadable frontmatter is private cannot be told: it is refused.
    (vault / "memory/long_term/broken.md").write_text(
        "---\ntitle: [unclosed\nprivate: true\n---\nThe safe code is 4711.\n", encoding="utf-8"
    )


def _structured(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    data = result.structured_content
    assert isinstance(data, dict)
    # Clients without structured output read the same data as JSON text.
    assert json.loads(result.content[0].text) == data
    return data


async def _session(vault: Path, tmp_path: Path) -> None:
    from mcp import ClientSession, MCPError, StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable, args=_server_args(vault), env=dict(os.environ)
    )
    with (tmp_path / "server.stderr").open("w", encoding="utf-8") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            init = await session.initialize()
            assert init.server_info.name == "brainiac"
            assert init.instructions and "context" in init.instructions

            tools = {t.name: t for t in (await session.list_tools()).tools}
            assert set(tools) >= TOOLS
            assert tools["search"].input_schema["properties"]["query"]["description"]
            assert "\n    " not in (tools["remember"].description or "")  # docstrings cleaned

            # remember -> search -> context
            said = "The Zephyr launch moved to Tuesday March 3rd."
            remembered = _structured(await session.call_tool("remember", {"text": said}))
            assert remembered["event_id"] and remembered["at"]
            hits = _structured(await session.call_tool("search", {"query": "Zephyr launch"}))
            assert any(h["event_id"] == remembered["event_id"] for h in hits["hits"])
            fields = {"path", "kind", "title", "score", "excerpt", "event_id", "at", "projects"}
            assert all(set(h) == fields for h in hits["hits"])
            # a project (docs/projects.md): kept on the event, shown on the hit, scoping search
            scoped = {"text": "The Zephyr demo is in room 4.", "project": "zephyr"}
            await session.call_tool("remember", scoped)
            hits = _structured(
                await session.call_tool("search", {"query": "Zephyr demo", "project": "zephyr"})
            )
            assert hits["hits"][0]["projects"] == ["zephyr"]
            ctx = _structured(
                await session.call_tool("context", {"prompt": "When is the Zephyr launch?"})
            )
            assert said in ctx["text"]
            assert ctx["tokens"] > 0 and isinstance(ctx["sources"], list)

            # check: the template's Atlas deadline moved from Friday the 27th to Monday the 30th
            checked = _structured(
                await session.call_tool("check", {"text": "Atlas is due Friday the 27th."})
            )
            assert checked["consistent"] is False
            conflict = checked["conflicts"][0]
            assert conflict["kind"] == "superseded"
            assert conflict["key"] == "deadline"
            assert conflict["stored"] == "Monday 2026-11-30"
            assert conflict["file"] == "memory/long_term/project-atlas.md"
            assert "Monday 2026-11-30" in conflict["correction"]
            fine = _structured(
                await session.call_tool("check", {"text": "Atlas is due Monday the 30th."})
            )
            assert fine["consistent"] is True and fine["conflicts"] == []
            # in a project, the response is held to that project's memories (docs/projects.md)
            standup = {"text": "The standup is at 10:00.", "project": "zephyr"}
            await session.call_tool("remember", standup)
            said = {"text": "The standup is at 11:30.", "project": "zephyr"}
            there = _structured(await session.call_tool("check", said))
            assert [c["stored"] for c in there["conflicts"]] == ["10:00"], there
            elsewhere = _structured(
                await session.call_tool("check", {**said, "project": "website"})
            )
            assert elsewhere["conflicts"] == [], elsewhere

            # feedback applies to the notes of the last context for a prompt
            await session.call_tool("context", {"prompt": "When is the Atlas deadline?"})
            fed = _structured(await session.call_tool("feedback", {"delta": 1}))
            assert "memory/long_term/project-atlas.md" in fed["changed"]

            # run_job, dry run: reports, and nothing changes
            atlas = (vault / "memory/long_term/project-atlas.md").read_text(encoding="utf-8")
            jobs = _structured(await session.call_tool("run_job", {"name": "all", "dry_run": True}))
            assert [r["name"] for r in jobs["reports"]] == [
                "reflection",
                "promotion",
                "organization",
            ]
            assert all(r["ok"] and r["dry_run"] for r in jobs["reports"])
            assert (vault / "memory/long_term/project-atlas.md").read_text(
                encoding="utf-8"
            ) == atlas

            # a BrainiacError is a tool error with its one line, and the server carries on
            empty = await session.call_tool("remember", {"text": "  "})
            assert empty.is_error
            assert "nothing to remember: the text is empty" in empty.content[0].text
            unknown = await session.call_tool("run_job", {"name": "nap"})
            assert unknown.is_error and "no job 'nap'" in unknown.content[0].text
            bad = await session.call_tool("feedback", {"delta": 0})
            assert bad.is_error and "non-zero" in bad.content[0].text
            no_room = await session.call_tool("context", {"prompt": "Atlas", "budget": 0})
            assert no_room.is_error and "budget" in no_room.content[0].text

            # resources
            listed = {str(r.uri) for r in (await session.list_resources()).resources}
            assert listed >= {"brainiac://identity", "brainiac://working-memory"}
            templates = (await session.list_resource_templates()).resource_templates
            assert [t.uri_template for t in templates] == ["brainiac://note/{+path}"]

            async def read(uri: str) -> str:
                result = await session.read_resource(uri)
                text = result.contents[0].text  # type: ignore[union-attr]
                assert isinstance(text, str)
                return text

            identity = await read("brainiac://identity")
            assert identity == (vault / "system/core_identity.md").read_text(encoding="utf-8")
            working = await read("brainiac://working-memory")
            assert "## Core Identity" in working  # no working_memory.md yet: assembled now
            (vault / "context/working_memory.md").write_text("## kept by the daemon\n", "utf-8")
            assert await read("brainiac://working-memory") == "## kept by the daemon\n"
            note = await read("brainiac://note/memory/long_term/project-atlas.md")
            assert "deadline: Monday 2026-11-30" in note
            encoded = await read("brainiac://note/memory%2Flong_term%2Fanna-berg.md")
            assert "title: Anna Berg" in encoded

            refused = {
                "memory/long_term/secret.md": "private: true",
                "journal/diary.md": "private folder journal/",
                "memory/long_term/diary-link.md": "private folder journal/",
                "../outside.md": "only paths inside the vault",
                "memory/../../outside.md": "only paths inside the vault",
                "%2Fetc%2Fpasswd": "absolute path",
                "memory/long_term/escape.md": "leads outside the vault",
                ".brainiac/config.toml": "hidden",
                "memory/long_term/settings.md": "hidden",
                "memory/short_term.txt": "only Markdown notes",
                "memory/long_term/broken.md": "frontmatter is not valid YAML",
            }
            for path, reason in refused.items():
                with pytest.raises(MCPError) as caught:
                    await read(f"brainiac://note/{path}")
                assert reason in str(caught.value), (path, str(caught.value))
                assert "4711" not in str(caught.value)
            with pytest.raises(MCPError, match="no such file"):
                await read("brainiac://note/memory/long_term/nobody.md")

    stderr = (tmp_path / "server.stderr").read_text(encoding="utf-8")
    assert "Traceback" not in stderr, stderr


@needs_mcp
def test_mcp_session_through_the_sdk_client(vault: Path, tmp_path: Path) -> None:
    _private_material(vault, tmp_path)
    anyio.run(_session, vault, tmp_path)
    # The session really wrote the event into the vault.
    short_term = (vault / "memory/short_term.md").read_text(encoding="utf-8")
    assert "The Zephyr launch moved to Tuesday March 3rd." in short_term


def _rpc(id_: int, method: str, params: dict[str, Any] | None = None) -> str:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": id_, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message) + "\n"


@needs_mcp
def test_stdout_carries_only_protocol_messages(vault: Path) -> None:
    """With --debug (logging everything), stdout still holds nothing but JSON-RPC lines; the logs
    are on stderr."""
    proc = subprocess.Popen(
        [sys.executable, *_server_args(vault, "--debug")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
        env=dict(os.environ),
    )
    assert proc.stdin is not None and proc.stdout is not None
    requests = [
        _rpc(
            1,
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        ),
        None,  # the initialized notification, which has no answer
        _rpc(2, "tools/list"),
        _rpc(3, "tools/call", {"name": "remember", "arguments": {"text": "raw stdio test"}}),
        _rpc(4, "tools/call", {"name": "search", "arguments": {"query": "raw stdio"}}),
        _rpc(5, "tools/call", {"name": "remember", "arguments": {"text": ""}}),
        _rpc(6, "resources/read", {"uri": "brainiac://note/../x.md"}),
        _rpc(7, "resources/read", {"uri": "brainiac://identity"}),
    ]
    lines: list[str] = []
    try:
        for request in requests:
            if request is None:
                proc.stdin.write('{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
                proc.stdin.flush()
                continue
            proc.stdin.write(request)
            proc.stdin.flush()
            # One answer per request, read before the next: the server gets no EOF mid-request.
            lines.append(proc.stdout.readline())
        proc.stdin.close()
        lines += proc.stdout.read().splitlines(keepends=True)
        stderr = proc.stderr.read() if proc.stderr else ""
        assert proc.wait(timeout=20) == 0, stderr
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
    assert lines
    answered = set()
    for line in lines:
        message = json.loads(line)  # every stdout line is a JSON-RPC message, and only that
        assert message["jsonrpc"] == "2.0", line
        answered.add(message.get("id"))
    assert answered >= {1, 2, 3, 4, 5, 6, 7}
    assert "brainiac mcp: DEBUG" in stderr  # the logs went to stderr


def test_mcp_without_the_sdk_says_how_to_install_it(vault: Path) -> None:
    # `None` in sys.modules makes `import mcp` fail as it does when the package is not installed.
    code = (
        "import sys; sys.modules['mcp'] = None; "
        "from brainiac.interfaces.cli.root import main; main()"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, "--vault", str(vault), "mcp"],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=dict(os.environ),
        timeout=60,
    )
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.strip() == MISSING_SDK


@needs_mcp
def test_mcp_on_a_missing_vault_fails_with_one_line(tmp_path: Path) -> None:
    proc = run_cli("--vault", str(tmp_path / "nowhere"), "mcp")
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.startswith("brainiac: ") and "no such vault" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


async def _notes_and_forget(vault: Path, tmp_path: Path) -> None:
    from mcp import ClientSession, StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable, args=_server_args(vault), env=dict(os.environ)
    )
    atlas = "memory/long_term/project-atlas.md"
    with (tmp_path / "server.stderr").open("w", encoding="utf-8") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            tools = {t.name: t for t in (await session.list_tools()).tools}
            assert tools["forget"].annotations and tools["forget"].annotations.destructive_hint

            # list_notes: the public long-term notes, by path; private ones never
            listed = _structured(await session.call_tool("list_notes", {}))
            paths = [n["path"] for n in listed["notes"]]
            assert atlas in paths and "memory/long_term/anna-berg.md" in paths
            assert paths == sorted(paths) and listed["total"] == len(paths)
            assert "memory/long_term/secret.md" not in paths
            assert not any("diary" in p or "broken" in p for p in paths)
            entry = next(n for n in listed["notes"] if n["path"] == atlas)
            assert entry["title"] == "Project Atlas" and "Atlas" in entry["aliases"]
            only = _structured(await session.call_tool("list_notes", {"query": "atlas"}))
            assert [n["path"] for n in only["notes"]] == [atlas]

            # update_note: the whole text replaced, by compare-and-swap
            text = (vault / atlas).read_text(encoding="utf-8")
            new = text.replace("a data migration", "a data migration to the new cluster")
            assert new != text
            done = _structured(await session.call_tool("update_note", {"path": atlas, "text": new}))
            assert done == {"path": atlas, "created": False, "bytes": len(new.encode())}
            assert (vault / atlas).read_text(encoding="utf-8") == new
            hits = _structured(await session.call_tool("search", {"query": "new cluster"}))
            assert any(h["path"] == atlas for h in hits["hits"])
            fresh = "memory/long_term/garden.md"
            made = _structured(
                await session.call_tool(
                    "update_note",
                    {"path": fresh, "text": "---\ntitle: Garden\n---\nTomatoes.\n", "create": True},
                )
            )
            assert made["created"] is True and (vault / fresh).is_file()
            refusals = {
                ("memory/short_term.md", "x"): "only long-term notes",
                ("memory/long_term/nobody.md", "x"): "no such note; pass create=true",
                ("memory/long_term/secret.md", "x"): "private: true",
                ("memory/long_term/../../system/core_identity.md", "x"): "inside the vault",
                (atlas, "---\ntitle: [unclosed\n---\nx\n"): "frontmatter is not valid YAML",
            }
            for (path, body), reason in refusals.items():
                refused = await session.call_tool("update_note", {"path": path, "text": body})
                assert refused.is_error and reason in refused.content[0].text, (path, refused)
            assert (vault / atlas).read_text(encoding="utf-8") == new  # refused: untouched
            assert "4711" in (vault / "memory/long_term/secret.md").read_text(encoding="utf-8")

            # forget: a listing first (nothing goes), then with confirm=true for good
            said = "My locker code is 3141 at the Riverside gym."
            await session.call_tool("remember", {"text": said})
            listing = _structured(await session.call_tool("forget", {"matching": ["locker code"]}))
            assert listing["done"] is False and "confirm=true" in listing["message"]
            assert listing["counts"]["events"] == 1
            assert said in (vault / "memory/short_term.md").read_text(encoding="utf-8")
            gone = _structured(
                await session.call_tool("forget", {"matching": ["locker code"], "confirm": True})
            )
            assert gone["done"] is True and gone["counts"]["events"] == 1
            assert said not in (vault / "memory/short_term.md").read_text(encoding="utf-8")
            hits = _structured(await session.call_tool("search", {"query": "locker Riverside"}))
            assert not any("3141" in h["excerpt"] for h in hits["hits"])
            nothing = _structured(
                await session.call_tool("forget", {"matching": ["locker code"], "confirm": True})
            )
            assert nothing["done"] is False and nothing["message"].startswith("nothing matches")
            empty = await session.call_tool("forget", {})
            assert empty.is_error and "say what to forget" in empty.content[0].text

    stderr = (tmp_path / "server.stderr").read_text(encoding="utf-8")
    assert "Traceback" not in stderr, stderr


@needs_mcp
def test_mcp_lists_updates_and_forgets_notes(vault: Path, tmp_path: Path) -> None:
    _private_material(vault, tmp_path)
    anyio.run(_notes_and_forget, vault, tmp_path)


async def _forget_beside_the_daemon(vault: Path, tmp_path: Path) -> dict[str, Any]:
    from mcp import ClientSession, StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable, args=_server_args(vault), env=dict(os.environ)
    )
    with (tmp_path / "server.stderr").open("w", encoding="utf-8") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            return _structured(
                await session.call_tool("forget", {"matching": ["locker code"], "confirm": True})
            )


@needs_mcp
def test_mcp_forget_asks_the_running_daemon(tmp_path: Path) -> None:
    from brainiac.store import daemon_requests
    from brainiac.store.daemon_requests import STATUS_FILE
    from test_daemon import Notifications, _daemon, wait_for

    assert daemon_requests.STATUS_FILE == STATUS_FILE
    vault = tmp_path / "vault"
    run_cli("init", str(vault), check=True)
    said = "My locker code is 3141 at the Riverside gym."
    other = "The Riverside gym opens at six."
    for text in (said, other):
        run_cli("--vault", str(vault), "remember", text, check=True)
    ready = Notifications(tmp_path / "notify.sock")
    try:
        with _daemon(vault, ready) as proc:
            from brainiac import Memory

            with Memory(vault) as memory:
                state = memory.locations.state
            wait_for(
                lambda: daemon_requests.daemon_takes_requests(state, proc.pid),
                "the daemon to say it takes requests",
            )
            gone = anyio.run(_forget_beside_the_daemon, vault, tmp_path)
            assert gone["done"] is True and gone["counts"]["events"] == 1
            short_term = (vault / "memory/short_term.md").read_text(encoding="utf-8")
            assert said not in short_term and other in short_term
            # The daemon rebuilt its index: the event is not found, the other one is.
            found = run_cli("--vault", str(vault), "search", "Riverside gym", check=True).stdout
            assert "3141" not in found and "opens at six" in found
            # The CLI asks the daemon too, where it used to refuse while the daemon ran.
            cli = run_cli("--vault", str(vault), "forget", "--matching", "opens at six", "--yes")
            assert cli.returncode == 0, cli.stderr
            assert "removed: 1 event(s)" in cli.stdout
            assert other not in (vault / "memory/short_term.md").read_text(encoding="utf-8")
            assert not list((state / daemon_requests.REQUESTS_DIR).iterdir())  # all answered
    finally:
        ready.close()
