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

import pytest

from brainiac import Memory
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


# -- issue 14, item 11: one rule for private folders, applied to where a symlink leads too


def _private_folder_config(vault: Path, *folders: str) -> None:
    listed = ", ".join(json.dumps(f) for f in folders)
    (vault / ".brainiac/config.toml").write_text(
        f"# quokka secret in the settings\n[vault]\nprivate_folders = [{listed}]\n"
    )


def test_a_symlink_is_judged_by_where_it_leads(vault: Path) -> None:
    from brainiac.errors import VaultError
    from brainiac.mcp_server import note_text

    _private_folder_config(vault, "journal")
    (vault / "journal").mkdir()
    (vault / "journal/2026.md").write_text("---\ntitle: Journal\n---\nquokka secret B\n")
    (vault / "inbox/chat.md").write_text("# Chat\nquokka secret D\n")
    (vault / "notes").mkdir()
    (vault / "notes/zoo.md").write_text("---\ntitle: Zoo\n---\nquokkas smile a lot\n")
    lt = vault / "memory/long_term"
    leads_to = {
        "diary-link.md": vault / "journal/2026.md",  # into a private folder
        "journal-dir.md": vault / "journal",  # a folder, not a note
        "settings.md": vault / ".brainiac/config.toml",  # brainiac's settings
        "inbox-link.md": vault / "inbox/chat.md",  # a folder brainiac never reads as memory
    }
    for name, target in leads_to.items():
        (lt / name).symlink_to(target)
    (lt / "zoo-link.md").symlink_to(vault / "notes/zoo.md")  # a public note: still indexed

    with Memory(vault, refresh_interval_s=0) as memory:
        hits = memory.search("quokka", limit=50)
        assert {h.path for h in hits} == {"notes/zoo.md", "memory/long_term/zoo-link.md"}
        context = memory.context("quokka", now=dt.datetime.fromisoformat(NOW)).text
        assert "secret" not in context and "quokkas smile a lot" in context
        # The MCP server's note resource applies the same rule.
        for name in leads_to:
            with pytest.raises(VaultError):
                note_text(memory, f"memory/long_term/{name}")
        assert "quokkas smile" in note_text(memory, "memory/long_term/zoo-link.md")


@pytest.mark.parametrize("spelled", ["/journal", "journal/", "./journal", "Journal", " journal "])
def test_the_indexer_and_the_mcp_server_agree_on_a_private_folder(
    vault: Path, spelled: str
) -> None:
    from brainiac.errors import VaultError
    from brainiac.mcp_server import note_text

    _private_folder_config(vault, spelled)
    (vault / "journal").mkdir()
    (vault / "journal/2026.md").write_text("---\ntitle: Journal\n---\nquokka secret B\n")
    with Memory(vault, refresh_interval_s=0) as memory:
        assert memory.search("quokka") == []
        with pytest.raises(VaultError, match="private folder"):
            note_text(memory, "journal/2026.md")


def test_a_folder_made_private_leaves_the_index(vault: Path) -> None:
    (vault / "journal").mkdir()
    (vault / "journal/2026.md").write_text("---\ntitle: Journal\n---\nquokka secret B\n")
    with Memory(vault, refresh_interval_s=0) as memory:
        assert [h.path for h in memory.search("quokka")] == ["journal/2026.md"]
    _private_folder_config(vault, "journal")
    with Memory(vault, refresh_interval_s=0) as memory:
        assert memory.search("quokka") == []


@pytest.mark.parametrize(
    ("written", "private"),
    [
        *[("true", True), ('"true"', True), ("'yes'", True), ("Yes", True), ("1", True)],
        *[("false", False), ('"no"', False), ("2026-01-01", False)],
    ],
)
def test_private_typed_as_text_is_private(
    memory: Memory, vault: Path, written: str, private: bool
) -> None:
    (vault / "memory/long_term/diary.md").write_text(
        f"---\ntitle: Diary\nprivate: {written}\n---\nmy quokka thoughts\n"
    )
    assert bool(memory.search("quokka")) is not private
