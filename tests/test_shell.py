"""Shell comfort: completion, --json where data is printed, progress only on a terminal."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
from pathlib import Path

import pytest

from brainiac import Memory
from conftest import run_cli


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_scripts_for_each_shell(shell: str) -> None:
    done = run_cli("completion", shell, in_process=True)
    assert done.returncode == 0
    assert "_BRAINIAC_COMPLETE" in done.stdout


def test_completion_completes_commands_and_options() -> None:
    env = {"_BRAINIAC_COMPLETE": "bash_complete", "COMP_WORDS": "brainiac jo", "COMP_CWORD": "1"}
    done = run_cli(env=env)
    assert "plain,jobs" in done.stdout.splitlines()
    env = {**env, "COMP_WORDS": "brainiac import --for", "COMP_CWORD": "2"}
    assert "plain,--format" in run_cli(env=env).stdout.splitlines()


def test_commands_that_print_data_take_json(vault: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    made = json.loads(run_cli("init", str(other), "--json", check=True, in_process=True).stdout)
    assert made["vault"] == str(other) and "memory/short_term.md" in made["created"]
    event = json.loads(
        run_cli(
            "--vault",
            str(vault),
            "remember",
            "Lunch with Anna",
            "--json",
            check=True,
            in_process=True,
        ).stdout
    )
    assert event["id"].startswith("e-") and event["text"] == "Lunch with Anna"
    run_cli(
        "--vault", str(vault), "context", "--prompt", "Atlas deadline", check=True, in_process=True
    )
    changed = json.loads(
        run_cli(
            "--vault", str(vault), "feedback", "1", "--json", check=True, in_process=True
        ).stdout
    )
    assert changed["delta"] == 1 and "memory/long_term/project-atlas.md" in changed["changed"]


def _notes(vault: Path, n: int) -> None:
    folder = vault / "memory" / "long_term" / "many"
    folder.mkdir(parents=True)
    for i in range(n):
        (folder / f"n{i}.md").write_text(f"# Note {i}\nabout topic {i}\n", encoding="utf-8")


def test_reindex_is_silent_when_not_on_a_terminal(vault: Path) -> None:
    _notes(vault, 250)
    done = run_cli("--vault", str(vault), "reindex", check=True, in_process=True)
    assert "reindexing" not in done.stderr and "%" not in done.stderr


def test_reindex_shows_progress_on_a_terminal(vault: Path) -> None:
    _notes(vault, 250)
    leader, follower = pty.openpty()  # stdout and stderr a terminal, as in a shell
    proc = subprocess.Popen(
        [sys.executable, "-m", "brainiac", "--vault", str(vault), "reindex"],
        stdout=follower,
        stderr=follower,
        env=dict(os.environ),
    )
    os.close(follower)
    seen = b""
    while True:
        ready, _, _ = select.select([leader], [], [], 60)
        if not ready:
            break
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the terminal closed when the process ended
            break
        if not chunk:
            break
        seen += chunk
    assert proc.wait(timeout=60) == 0
    os.close(leader)
    assert b"reindexing" in seen and b"100%" in seen


def test_what_brainiac_creates_is_private_and_existing_modes_are_kept(
    tmp_path: Path, xdg_dirs: dict[str, str]
) -> None:
    vault = tmp_path / "private-vault"
    run_cli("init", str(vault), check=True)
    note = vault / "memory" / "long_term" / "shared.md"
    note.write_text("# Shared\nA note the person made group-readable.\n", encoding="utf-8")
    note.chmod(0o640)
    run_cli("--vault", str(vault), "remember", "a private thought", check=True)
    run_cli("--vault", str(vault), "context", "--write", check=True)
    run_cli("--vault", str(vault), "jobs", "run", "all", check=True)
    checked = 0
    for base in (vault, Path(xdg_dirs["XDG_STATE_HOME"]), Path(xdg_dirs["XDG_CACHE_HOME"])):
        for path in [base, *base.rglob("*")]:
            if path == note or path.is_symlink():
                continue
            mode = path.stat().st_mode & 0o777
            if path.is_file() or (path.is_dir() and path != base):
                assert mode & 0o077 == 0, (path, oct(mode))
            checked += 1
    assert checked > 20
    assert note.stat().st_mode & 0o777 == 0o640


def test_a_large_import_reports_its_progress(memory: Memory, tmp_path: Path) -> None:
    rows = [
        {"text": f"note {i} about topic {i}", "session": f"chat {i}", "at": "2026-10-01T09:00:00"}
        for i in range(300)
    ]
    export = tmp_path / "many.jsonl"
    export.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    seen: list[tuple[str, int, int]] = []
    memory.on_progress = lambda label, done, total: seen.append((label, done, total))
    memory.import_files([export])
    notes = [s for s in seen if s[0] == "writing notes"]
    assert notes and notes[-1][1] == notes[-1][2] >= 200  # one note per chat, the last one done
