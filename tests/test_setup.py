"""`brainiac setup`: real-shaped client configuration files, changed through the real CLI.

Each test gives the CLI its own HOME, holding the files the clients keep there with the other
settings a person has in them. What setup writes is then used as the client would use it: the
hook command is run through a shell with a real-shaped event, the MCP command is started by the
SDK's stdio client.
"""

from __future__ import annotations

import json
import os
import resource
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from conftest import run_cli

# What Claude Code keeps in ~/.claude.json besides servers: its whole state.
CLAUDE_JSON = {
    "numStartups": 41,
    "theme": "dark",
    "oauthAccount": {"emailAddress": "you@example.com", "organizationUuid": "0f1e"},
    "projects": {
        "/home/you/src/atlas": {
            "allowedTools": [],
            "mcpServers": {"local-db": {"type": "stdio", "command": "pg-mcp", "args": []}},
        }
    },
    "mcpServers": {
        "github": {
            "type": "stdio",
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-github"],
            "env": {"GITHUB_TOKEN": "ghp_x"},
        }
    },
}

# ~/.claude/settings.json with the person's own hooks, and brainiac's Stop hook as docs/hooks.md
# told people to copy it (another path, ~/brainiac): setup brings that one up to date in place.
SETTINGS = {
    "model": "opus",
    "permissions": {"allow": ["Bash(git diff:*)"], "deny": []},
    "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "audit-bash"}]}
        ],
        "Stop": [
            {
                "hooks": [
                    {"type": "command", "command": "notify-send done"},
                    {
                        "type": "command",
                        "command": "brainiac --vault ~/brainiac hook stop",
                        "timeout": 30,
                    },
                ]
            }
        ],
    },
}

DESKTOP = {
    "mcpServers": {"filesystem": {"command": "npx", "args": ["-y", "server-fs", "/tmp"]}},
    "globalShortcut": "Ctrl+Space",
}


def _home(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir(parents=True)
    return {"HOME": str(home)}


def _write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def _setup(vault: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli("--vault", str(vault), "setup", *args, env=env, in_process=True)


def _brainiac_exe() -> str:
    exe = Path(sys.executable).parent / "brainiac"
    assert exe.is_file(), "the test environment installs the brainiac script beside python"
    return str(exe)


def test_claude_code_keeps_every_other_setting_and_a_second_run_changes_nothing(
    vault: Path, tmp_path: Path
) -> None:
    env = _home(tmp_path)
    home = Path(env["HOME"])
    _write_json(home / ".claude.json", CLAUDE_JSON)
    _write_json(home / ".claude/settings.json", SETTINGS)

    first = _setup(vault, env, "claude-code")
    assert first.returncode == 0, first.stderr

    config = json.loads((home / ".claude.json").read_text(encoding="utf-8"))
    # Everything that was there is there, unchanged; brainiac is added beside it.
    for key in ("numStartups", "theme", "oauthAccount", "projects"):
        assert config[key] == CLAUDE_JSON[key]
    assert config["mcpServers"]["github"] == CLAUDE_JSON["mcpServers"]["github"]  # type: ignore[index]
    assert config["mcpServers"]["brainiac"] == {
        "type": "stdio",
        "command": _brainiac_exe(),
        "args": ["--vault", str(vault.resolve()), "mcp"],
        "env": {},
    }

    settings = json.loads((home / ".claude/settings.json").read_text(encoding="utf-8"))
    assert settings["model"] == "opus" and settings["permissions"] == SETTINGS["permissions"]
    assert settings["hooks"]["PreToolUse"] == SETTINGS["hooks"]["PreToolUse"]  # type: ignore[index]
    prefix = shlex.join([_brainiac_exe(), "--vault", str(vault.resolve()), "hook"])
    stop = settings["hooks"]["Stop"]
    # The copied hook was brought up to date where it stood (its timeout kept), not duplicated.
    assert stop == [
        {
            "hooks": [
                {"type": "command", "command": "notify-send done"},
                {"type": "command", "command": f"{prefix} stop", "timeout": 30},
            ]
        }
    ]
    assert settings["hooks"]["UserPromptSubmit"] == [
        {"hooks": [{"type": "command", "command": f"{prefix} user-prompt-submit --budget 1500"}]}
    ]
    assert settings["hooks"]["SessionEnd"] == [
        {"hooks": [{"type": "command", "command": f"{prefix} session-end"}]}
    ]

    # One backup of each changed file, holding exactly what was there before.
    backups = sorted(home.rglob("*.brainiac-backup-*"), key=lambda b: b.name)
    assert [b.name.split(".brainiac-backup-")[0] for b in backups] == [
        ".claude.json",
        "settings.json",
    ]
    assert json.loads(backups[0].read_text(encoding="utf-8")) == CLAUDE_JSON
    assert json.loads(backups[1].read_text(encoding="utf-8")) == SETTINGS
    assert all(b.stat().st_mode & 0o077 == 0 for b in backups)  # owner-only: account data

    before = _snapshot(home)
    second = _setup(vault, env, "claude-code")
    assert second.returncode == 0, second.stderr
    assert _snapshot(home) == before  # not a byte changed, no second backup
    assert second.stderr.count("already set up") == 2


def test_dry_run_prints_the_diff_and_writes_nothing(vault: Path, tmp_path: Path) -> None:
    env = _home(tmp_path)
    home = Path(env["HOME"])
    _write_json(home / ".claude.json", CLAUDE_JSON)
    before = _snapshot(home)

    proc = _setup(vault, env, "claude-code", "--dry-run")

    assert proc.returncode == 0, proc.stderr
    assert _snapshot(home) == before  # settings.json not created, no backup
    assert f"--- {home / '.claude.json'} (now)" in proc.stdout
    assert f'+      "command": "{_brainiac_exe()}",' in proc.stdout
    assert f"--- /dev/null\n+++ {home / '.claude/settings.json'}" in proc.stdout
    assert "hook user-prompt-submit" in proc.stdout
    assert "dry run: nothing was written" in proc.stderr


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('{"numStartups": 41, "mcpServers": {', "is not valid JSON"),
        ('["not", "an", "object"]', "holds a JSON list, not an object"),
        ('{"mcpServers": ["github"]}', "`mcpServers` is not an object"),
        # Python's json reads these; Node's JSON.parse (the client's own) does not.
        ('{"numStartups": NaN}', "is not valid JSON (`NaN` is not a JSON value"),
        ('{"mcpServers": {}, "limit": -Infinity}', "is not valid JSON (`-Infinity` is not"),
    ],
)
def test_a_malformed_file_is_refused_in_one_line_and_left_alone(
    vault: Path, tmp_path: Path, text: str, problem: str
) -> None:
    env = _home(tmp_path)
    home = Path(env["HOME"])
    (home / ".cursor").mkdir()
    (home / ".cursor/mcp.json").write_text(text, encoding="utf-8")
    before = _snapshot(home)

    proc = _setup(vault, env, "cursor")

    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"brainiac: {home / '.cursor/mcp.json'}: {problem}")
    assert "fix it" in lines[0] and "nothing was changed" in lines[0]
    assert _snapshot(home) == before  # not overwritten, no backup


def _strict_json(text: str) -> Any:
    """`text` parsed as Node's JSON.parse reads it: NaN and Infinity are not JSON."""

    def refuse(name: str) -> None:
        raise AssertionError(f"{name} is not JSON: JSON.parse rejects it")

    return json.loads(text, parse_constant=refuse)


def _node_reads(path: Path) -> None:
    """Node's own JSON.parse reads `path` (where node is installed; the check above stands in
    for it elsewhere)."""
    node = shutil.which("node")
    if node is not None:
        script = "JSON.parse(require('fs').readFileSync(process.argv[1], 'utf8'))"
        proc = subprocess.run([node, "-e", script, str(path)], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr


# ~/.claude.json as Node wrote it, with what Python's json would not write back as it is: a
# prompt cut mid-emoji (JSON.stringify escapes the lone surrogate), a number too big for a double
# (1e999: Python reads inf and writes `Infinity`, which JSON.parse rejects), a number's own
# spelling (1.50), an integer past 2**53, and text that is not ASCII.
NODE_WRITTEN = """{
  "numStartups": 41,
  "lastPrompt": "fix the bug in the parser \\ud83d",
  "cachedLimit": 1e999,
  "ratio": 1.50,
  "userID": 123456789012345678901234567890,
  "theme": "Zoë's dark 😀 — ok",
  "projects": {
    "/home/you/src/atlas": {
      "history": [
        {
          "display": "ship it \\ude00 \\\"quoted\\\"",
          "pastedContents": {}
        }
      ]
    }
  }
}
"""


def test_node_written_values_are_written_back_as_they_were(vault: Path, tmp_path: Path) -> None:
    env = _home(tmp_path)
    home = Path(env["HOME"])
    claude_json = home / ".claude.json"
    claude_json.write_text(NODE_WRITTEN, encoding="utf-8")

    dry = _setup(vault, env, "claude-code", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert claude_json.read_text(encoding="utf-8") == NODE_WRITTEN

    proc = _setup(vault, env, "claude-code")
    assert proc.returncode == 0, proc.stderr

    text = claude_json.read_text(encoding="utf-8")
    # Every line of the file is kept byte for byte; brainiac's server follows the last key.
    assert text.startswith(NODE_WRITTEN.removesuffix("\n}\n") + ',\n  "mcpServers": {'), text
    config = _strict_json(text)
    assert config["lastPrompt"] == "fix the bug in the parser \ud83d"
    assert config["mcpServers"]["brainiac"]["args"] == ["--vault", str(vault.resolve()), "mcp"]
    _node_reads(claude_json)
    backup = next(home.glob(".claude.json.brainiac-backup-*"))
    assert backup.read_text(encoding="utf-8") == NODE_WRITTEN

    before = _snapshot(home)
    assert _setup(vault, env, "claude-code").returncode == 0
    assert _snapshot(home) == before


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_text_setup_writes_is_what_json_stringify_writes() -> None:
    from brainiac.interfaces import node_json

    # Numbers as JSON.stringify writes them, so that its text and ours can be the same.
    node_shaped = NODE_WRITTEN.replace("1e999", "1e+300").replace("1.50", "1.5")
    others = '["", {"a": [null, true, false, -0.5, {}], "\\u0001\\t\\u2028": [[]]}]'
    stringify = "process.stdout.write(JSON.stringify(JSON.parse(fs.readFileSync(0)), null, 2))"
    for text in (node_shaped.replace("123456789012345678901234567890", "12345"), others):
        node = subprocess.run(
            ["node", "-e", f"const fs = require('fs'); {stringify}"],
            input=text,
            capture_output=True,
            text=True,
            encoding="utf-8",
            check=True,
        )
        assert node_json.dumps(node_json.loads(text)) == node.stdout


def test_a_linked_settings_file_is_written_through_its_link(vault: Path, tmp_path: Path) -> None:
    env = _home(tmp_path)
    home = Path(env["HOME"])
    # settings.json kept in a dotfiles repository, linked into ~/.claude (as stow links it).
    dotfiles = tmp_path / "dotfiles/claude"
    _write_json(dotfiles / "settings.json", SETTINGS)
    link = home / ".claude/settings.json"
    link.parent.mkdir()
    link.symlink_to(Path("../../dotfiles/claude/settings.json"))
    old = (dotfiles / "settings.json").read_text(encoding="utf-8")

    proc = _setup(vault, env, "claude-code")

    assert proc.returncode == 0, proc.stderr
    assert link.is_symlink() and os.readlink(link) == "../../dotfiles/claude/settings.json"
    settings = json.loads((dotfiles / "settings.json").read_text(encoding="utf-8"))
    assert settings["model"] == "opus" and "UserPromptSubmit" in settings["hooks"]
    # The backup is beside the link, where the person looks; the repository gets no new file.
    assert sorted(p.name for p in dotfiles.iterdir()) == ["settings.json"]
    (backup,) = link.parent.glob("settings.json.brainiac-backup-*")
    assert not backup.is_symlink() and backup.read_text(encoding="utf-8") == old

    before = _snapshot(tmp_path / "dotfiles")
    assert _setup(vault, env, "claude-code").returncode == 0
    assert _snapshot(tmp_path / "dotfiles") == before and link.is_symlink()


def test_a_link_to_nothing_is_refused_in_one_line(vault: Path, tmp_path: Path) -> None:
    env = _home(tmp_path)
    home = Path(env["HOME"])
    (home / ".cursor").mkdir()
    (home / ".cursor/mcp.json").symlink_to(tmp_path / "dotfiles/cursor/mcp.json")

    proc = _setup(vault, env, "cursor")

    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        f"brainiac: {home / '.cursor/mcp.json'}: is a link to "
        f"{tmp_path / 'dotfiles/cursor/mcp.json'}, which does not exist; restore that file (or "
        "remove the link), then run `brainiac setup cursor` again; nothing was changed"
    )
    assert not (tmp_path / "dotfiles").exists()
    assert [p.name for p in (home / ".cursor").iterdir()] == ["mcp.json"]


@pytest.mark.parametrize(
    "own",
    [
        "brainiac --vault ~/brainiac hook stop && notify-send done",
        "cd ~/notes; brainiac hook stop",
        "brainiac hook stop 2>>~/.brainiac-hook.log",
        "nice -n 10 brainiac --vault ~/brainiac hook stop",
    ],
)
def test_a_command_of_ones_own_around_the_hook_is_kept_whole(
    vault: Path, tmp_path: Path, own: str
) -> None:
    env = _home(tmp_path)
    home = Path(env["HOME"])
    stop = {"hooks": [{"type": "command", "command": own, "timeout": 30}]}
    _write_json(home / ".claude/settings.json", {"hooks": {"Stop": [stop]}})

    proc = _setup(vault, env, "claude-code")

    assert proc.returncode == 0, proc.stderr
    settings = json.loads((home / ".claude/settings.json").read_text(encoding="utf-8"))
    assert settings["hooks"]["Stop"] == [stop]  # whole, and no second Stop hook beside it
    assert "SessionEnd" in settings["hooks"] and "UserPromptSubmit" in settings["hooks"]
    notes = [line for line in proc.stderr.splitlines() if line.startswith("note: ")]
    assert notes == [
        f"note: {home / '.claude/settings.json'}: hooks.Stop: `{own}` runs brainiac's hook "
        "inside a command of your own; it is left as it is and no second Stop hook is added "
        f"(to update it, put `{_brainiac_exe()} --vault {vault.resolve()} hook stop` in place "
        "of its brainiac part)"
    ]


def test_a_file_that_cannot_be_written_keeps_no_backup(vault: Path, tmp_path: Path) -> None:
    env = _home(tmp_path)
    home = Path(env["HOME"])
    (home / ".cursor").mkdir()
    (home / ".cursor/mcp.json").write_text("{}\n", encoding="utf-8")
    before = _snapshot(home)

    def limit_file_size() -> None:  # the backup (3 bytes) fits, the new file does not
        resource.setrlimit(resource.RLIMIT_FSIZE, (64, 64))

    proc = subprocess.run(
        [sys.executable, "-m", "brainiac", "--vault", str(vault), "setup", "cursor"],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        preexec_fn=limit_file_size,
        timeout=120,
    )

    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"brainiac: {home / '.cursor/mcp.json'}: cannot be written, the file size limit is "
        "reached (File too large); raise it (`ulimit -f unlimited`, or LimitFSIZE= in the "
        "service unit); it was left as it was"
    ]
    assert _snapshot(home) == before  # no backup of a file that was not changed


def test_claude_desktop_and_cursor_get_the_server_and_keep_theirs(
    vault: Path, tmp_path: Path, xdg_dirs: dict[str, str]
) -> None:
    env = _home(tmp_path)
    home = Path(env["HOME"])
    # Linux: the Claude Desktop builds read $XDG_CONFIG_HOME/Claude (macOS and Windows: docs).
    desktop = Path(xdg_dirs["XDG_CONFIG_HOME"]) / "Claude/claude_desktop_config.json"
    _write_json(desktop, DESKTOP)
    # An existing brainiac entry with the person's env: the env stays, the command is updated.
    _write_json(
        home / ".cursor/mcp.json",
        {
            "mcpServers": {
                "brainiac": {
                    "command": "brainiac",
                    "args": ["mcp"],
                    "env": {"BRAINIAC_CONTEXT_BUDGET": "3000"},
                }
            }
        },
    )

    for client in ("claude-desktop", "cursor"):
        proc = _setup(vault, env, client)
        assert proc.returncode == 0, proc.stderr

    server = {"command": _brainiac_exe(), "args": ["--vault", str(vault.resolve()), "mcp"]}
    config = json.loads(desktop.read_text(encoding="utf-8"))
    assert config["globalShortcut"] == "Ctrl+Space"
    assert config["mcpServers"]["filesystem"] == DESKTOP["mcpServers"]["filesystem"]  # type: ignore[index]
    assert config["mcpServers"]["brainiac"] == {**server, "env": {}}
    cursor = json.loads((home / ".cursor/mcp.json").read_text(encoding="utf-8"))
    assert cursor["mcpServers"]["brainiac"] == {
        **server,
        "env": {"BRAINIAC_CONTEXT_BUDGET": "3000"},
    }
    assert len(list(desktop.parent.glob("*.brainiac-backup-*"))) == 1
    # A file that did not exist is created, and nothing is backed up for it.
    fresh = _home(tmp_path / "fresh")
    proc = _setup(vault, fresh, "cursor")
    assert proc.returncode == 0, proc.stderr
    created = Path(fresh["HOME"]) / ".cursor/mcp.json"
    assert json.loads(created.read_text(encoding="utf-8"))["mcpServers"]["brainiac"]
    assert not list(created.parent.glob("*.brainiac-backup-*"))


def test_setup_refuses_a_folder_that_is_not_a_vault(tmp_path: Path) -> None:
    env = _home(tmp_path)
    proc = run_cli(
        "--vault", str(tmp_path / "nowhere"), "setup", "cursor", env=env, in_process=True
    )
    assert proc.returncode == 2
    assert "no such vault; create it with `brainiac init" in proc.stderr
    assert not (Path(env["HOME"]) / ".cursor").exists()


def test_the_hook_setup_wrote_runs_as_claude_code_runs_it(vault: Path, tmp_path: Path) -> None:
    env = _home(tmp_path)
    home = Path(env["HOME"])
    assert _setup(vault, env, "claude-code").returncode == 0
    run_cli(
        "--vault",
        str(vault),
        "remember",
        "the Atlas deadline moved to Monday",
        check=True,
        in_process=True,
    )
    settings = json.loads((home / ".claude/settings.json").read_text(encoding="utf-8"))
    command = settings["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
    event = {
        "session_id": "abc123",
        "transcript_path": str(tmp_path / "t.jsonl"),
        "cwd": str(tmp_path),
        "hook_event_name": "UserPromptSubmit",
        "prompt": "When is the Atlas deadline?",
    }
    # Claude Code runs a hook command through a shell, with no PATH entry for brainiac.
    proc = subprocess.run(
        ["/bin/sh", "-c", command],
        input=json.dumps(event),
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": "/usr/bin:/bin"},
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "the Atlas deadline moved to Monday" in proc.stdout
    assert "When is the Atlas deadline?" not in proc.stdout  # the agent has the prompt already


def test_the_mcp_server_setup_wrote_starts_and_lists_the_tools(vault: Path, tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    from mcp import ClientSession, StdioServerParameters, stdio_client

    env = _home(tmp_path)
    assert _setup(vault, env, "cursor").returncode == 0
    config = json.loads((Path(env["HOME"]) / ".cursor/mcp.json").read_text(encoding="utf-8"))
    entry = config["mcpServers"]["brainiac"]

    async def tools() -> set[str]:
        params = StdioServerParameters(
            command=entry["command"],
            args=entry["args"],
            env={**os.environ, "PATH": "/usr/bin:/bin", **entry["env"]},
        )
        with (tmp_path / "server.stderr").open("w", encoding="utf-8") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                return {t.name for t in (await session.list_tools()).tools}

    names = anyio.run(tools)
    assert {"remember", "context", "search", "list_notes", "update_note", "forget"} <= names


def test_init_and_run_say_how_to_connect_an_agent(tmp_path: Path) -> None:
    target = tmp_path / "fresh-vault"
    proc = run_cli("init", str(target), check=True, in_process=True)
    exe = _brainiac_exe()
    assert f"`{exe} --vault {target} setup claude-code`" in proc.stderr
    assert f"{target / 'context/working_memory.md'}" in proc.stderr
    assert f"`{exe} --vault {target} run`" in proc.stderr


def test_run_says_where_the_working_memory_is_and_how_to_connect_an_agent(
    tmp_path: Path,
) -> None:
    vault = tmp_path / "vault"
    run_cli("init", str(vault), check=True, in_process=True)
    proc = subprocess.Popen(
        [sys.executable, "-m", "brainiac", "--vault", str(vault), "run"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    said = ""
    try:
        assert proc.stderr is not None
        for _ in range(20):  # said once the daemon is up, after a few lines of its log
            line = proc.stderr.readline()
            if not line or "connect an agent" in line:
                said = line
                break
    finally:
        proc.terminate()
        proc.communicate(timeout=30)
    working = vault.resolve() / "context/working_memory.md"
    assert f"the working memory is {working}" in said
    assert f"`{_brainiac_exe()} --vault {vault} setup claude-code`" in said


def test_each_client_file_is_where_that_client_reads_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from brainiac.interfaces import agent_setup

    home = tmp_path / "home"
    assert agent_setup.config_files("claude-code", home) == [
        home / ".claude.json",
        home / ".claude/settings.json",
    ]
    assert agent_setup.config_files("cursor", home) == [home / ".cursor/mcp.json"]
    monkeypatch.setattr(sys, "platform", "darwin")
    assert agent_setup.config_files("claude-desktop", home) == [
        home / "Library/Application Support/Claude/claude_desktop_config.json"
    ]
    monkeypatch.setattr(sys, "platform", "win32")
    monkeypatch.setenv("APPDATA", str(tmp_path / "AppData/Roaming"))
    assert agent_setup.config_files("claude-desktop", home) == [
        tmp_path / "AppData/Roaming/Claude/claude_desktop_config.json"
    ]
