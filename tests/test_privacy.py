"""Privacy and access (issue 6, part 7): private notes stay out of every context and search,
nothing follows a symlink out of the vault, brainiac's files are the user's alone, and the modes
a person gave their notes are kept. `brainiac forget`: tests/test_forget.py; credentials masked
in the context: tests/test_masking.py; MCP: tests/test_mcp.py."""

from __future__ import annotations

import datetime as dt
import json
import os
import stat
from pathlib import Path

from conftest import run_cli

NOW = "2026-11-22T12:00:00"


def _cli(vault: Path, *args: str) -> str:
    return run_cli("--vault", str(vault), *args, check=True).stdout


def test_private_notes_and_folders_reach_no_context_and_no_search(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    _cli(vault, "init")
    (vault / ".brainiac").mkdir(exist_ok=True)
    (vault / ".brainiac/config.toml").write_text('[vault]\nprivate_folders = ["journal"]\n')
    lt = vault / "memory/long_term"
    (lt / "diary.md").write_text("---\ntitle: Quokka diary\nprivate: true\n---\nquokka secret A\n")
    (vault / "journal").mkdir()
    (vault / "journal/2026.md").write_text("---\ntitle: Journal\n---\nquokka secret B\n")
    outside = tmp_path / "outside.md"
    outside.write_text("---\ntitle: Outside\n---\nquokka secret C\n")
    os.symlink(outside, lt / "outside-link.md")
    (lt / "public.md").write_text("---\ntitle: Quokka facts\n---\nquokkas smile a lot\n")

    hits = json.loads(_cli(vault, "search", "quokka", "--json"))
    assert [h["path"] for h in hits] == ["memory/long_term/public.md"]
    context = _cli(vault, "context", "--prompt", "tell me about the quokka", "--now", NOW)
    _cli(vault, "context", "--write", "--prompt", "quokka", "--now", NOW)
    written = (vault / "context/working_memory.md").read_text()
    for text in (context, written):
        assert "quokkas smile a lot" in text
        assert "secret" not in text


def test_brainiac_files_are_private_and_a_persons_modes_are_kept(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    _cli(vault, "init")
    stm = vault / "memory/short_term.md"
    stm.chmod(0o644)  # the person wants it readable by their group and others
    _cli(vault, "remember", "the kiln reached 900 degrees", "--at", NOW)
    assert stat.S_IMODE(stm.stat().st_mode) == 0o644
    later = (dt.datetime.fromisoformat(NOW) + dt.timedelta(days=1)).isoformat()
    _cli(vault, "jobs", "run", "all", "--now", later)
    _cli(vault, "context", "--write", "--now", later)
    assert stat.S_IMODE(stm.stat().st_mode) == 0o644
    created = [vault / "context/working_memory.md"]
    created += [p for p in (tmp_path / "xdg").rglob("*") if p.is_file()]
    for path in created:
        assert stat.S_IMODE(path.stat().st_mode) & 0o077 == 0, path
    for folder in [p for p in (tmp_path / "xdg/state").rglob("*") if p.is_dir()]:
        assert stat.S_IMODE(folder.stat().st_mode) & 0o077 == 0, folder
